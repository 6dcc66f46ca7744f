//! The move type and a fixed-capacity move list.

use crate::geometry::Square;
use std::fmt;

/// What kind of move a [`Move`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// A piece moves to an empty cell.
    Quiet = 0,
    /// A piece moves onto an enemy piece and captures it.
    Capture = 1,
    /// The side to move has no legal move and passes (rule option `no-move=pass`).
    Pass = 2,
}

/// A move in 16 bits: from-square (6 bits), to-square (6 bits), kind (3 bits, room for
/// drop and removal moves of later variants). `Copy`, `Eq` and `Hash` are by value.
///
/// A normal move is determined by its from-square and direction; the to-square is stored
/// so that making a move needs no table look-up.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move(u16);

impl Move {
    /// The forced pass.
    pub const PASS: Move = Move((MoveKind::Pass as u16) << 12);

    /// A quiet move or capture.
    #[inline]
    pub const fn new(from: Square, to: Square, capture: bool) -> Move {
        Move((from as u16) | ((to as u16) << 6) | ((capture as u16) << 12))
    }

    /// The square the piece leaves.
    #[inline]
    pub const fn from(self) -> Square {
        (self.0 & 63) as Square
    }

    /// The square the piece lands on.
    #[inline]
    pub const fn to(self) -> Square {
        ((self.0 >> 6) & 63) as Square
    }

    /// The kind of move.
    #[inline]
    pub const fn kind(self) -> MoveKind {
        match self.0 >> 12 {
            0 => MoveKind::Quiet,
            1 => MoveKind::Capture,
            _ => MoveKind::Pass,
        }
    }

    /// Whether the move captures.
    #[inline]
    pub const fn is_capture(self) -> bool {
        self.0 >> 12 == MoveKind::Capture as u16
    }

    /// Whether the move is a pass.
    #[inline]
    pub const fn is_pass(self) -> bool {
        self.0 >> 12 == MoveKind::Pass as u16
    }

    /// The raw 16-bit encoding (stable across versions; used by data formats).
    #[inline]
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// Inverse of [`Move::to_bits`]; `None` for encodings no move has.
    pub const fn from_bits(bits: u16) -> Option<Move> {
        match bits >> 12 {
            0 | 1 => Some(Move(bits)),
            2 if bits & 0x0FFF == 0 => Some(Move(bits)),
            _ => None,
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Move {
    /// Writes the move in square-board notation (`b1-d3`, `b1xd3`, `pass`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_pass() {
            return f.write_str("pass");
        }
        let sep = if self.is_capture() { 'x' } else { '-' };
        write!(
            f,
            "{}{}{}",
            crate::notation::square_name(self.from()),
            sep,
            crate::notation::square_name(self.to())
        )
    }
}

/// Maximum number of moves in a position of any supported variant.
pub const MAX_MOVES: usize = 256;

/// A stack-allocated list of moves. Cheap to create; no heap allocation.
#[derive(Clone)]
pub struct MoveList {
    /// One spare slot past `MAX_MOVES` lets [`MoveList::push_if`] write unconditionally.
    moves: [Move; MAX_MOVES + 1],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        Self::new()
    }
}

impl MoveList {
    /// An empty list.
    #[inline]
    pub const fn new() -> MoveList {
        MoveList {
            moves: [Move::PASS; MAX_MOVES + 1],
            len: 0,
        }
    }

    /// Appends a move. The capacity is never exceeded by legal move generation.
    #[inline]
    pub fn push(&mut self, mv: Move) {
        self.moves[self.len] = mv;
        self.len += 1;
    }

    /// Appends `mv` if `keep` holds, without a branch (for generators). Moves beyond
    /// [`MAX_MOVES`] are dropped (no position of a supported variant has that many).
    #[inline(always)]
    pub fn push_if(&mut self, mv: Move, keep: bool) {
        self.moves[self.len] = mv;
        self.len = (self.len + keep as usize).min(MAX_MOVES);
    }

    /// Removes every move.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// The moves as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }

    /// The moves as a mutable slice (for ordering).
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    #[inline]
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}
