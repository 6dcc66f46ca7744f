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
    /// `parachute`: an opponent's piece from the mover's reserve is dropped on an empty
    /// cell (`@e5`), the second half of a compound turn.
    Drop = 3,
    /// `gemma`: a piece of the mover that has no normal move is taken off the board and its
    /// cell vanishes (`~e5`); a whole turn.
    Remove = 4,
}

/// Set in the moves of the hexagonal board, so that a move names its cells correctly
/// without knowing its position (bit 15 of [`Move::to_bits`]).
pub const HEX_FLAG: u16 = 0x8000;

/// A move in 16 bits: from-square (6 bits), to-square (6 bits), kind (3 bits) and the
/// board flag ([`HEX_FLAG`]). `Copy`, `Eq` and `Hash` are by value. Drops and removals
/// store their one cell as both from- and to-square.
///
/// A normal move is determined by its from-square and direction; the to-square is stored
/// so that making a move needs no table look-up.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move(u16);

impl Move {
    /// The forced pass.
    pub const PASS: Move = Move((MoveKind::Pass as u16) << 12);

    /// A quiet move or capture on a square board (see [`Move::new_on`] for any board).
    #[inline]
    pub const fn new(from: Square, to: Square, capture: bool) -> Move {
        Move((from as u16) | ((to as u16) << 6) | ((capture as u16) << 12))
    }

    /// A quiet move or capture on a board whose moves carry `flag`
    /// ([`crate::Geometry::move_flag`]).
    #[inline]
    pub const fn new_on(from: Square, to: Square, capture: bool, flag: u16) -> Move {
        Move(Move::new(from, to, capture).0 | flag)
    }

    /// A drop of an opponent's piece on `sq` (`parachute`).
    #[inline]
    pub const fn drop(sq: Square, flag: u16) -> Move {
        Move((sq as u16) | ((sq as u16) << 6) | ((MoveKind::Drop as u16) << 12) | flag)
    }

    /// The removal of the mover's stuck piece on `sq` (`gemma`).
    #[inline]
    pub const fn remove(sq: Square, flag: u16) -> Move {
        Move((sq as u16) | ((sq as u16) << 6) | ((MoveKind::Remove as u16) << 12) | flag)
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
        match (self.0 >> 12) & 7 {
            0 => MoveKind::Quiet,
            1 => MoveKind::Capture,
            3 => MoveKind::Drop,
            4 => MoveKind::Remove,
            _ => MoveKind::Pass,
        }
    }

    /// Whether the move captures.
    #[inline]
    pub const fn is_capture(self) -> bool {
        (self.0 >> 12) & 7 == MoveKind::Capture as u16
    }

    /// Whether the move is a pass.
    #[inline]
    pub const fn is_pass(self) -> bool {
        (self.0 >> 12) & 7 == MoveKind::Pass as u16
    }

    /// Whether the move is a drop (`parachute`). A drop is always made by the player who
    /// made the move before it: searches must not flip the value's sign across it.
    #[inline]
    pub const fn is_drop(self) -> bool {
        (self.0 >> 12) & 7 == MoveKind::Drop as u16
    }

    /// Whether the move is a removal (`gemma`).
    #[inline]
    pub const fn is_remove(self) -> bool {
        (self.0 >> 12) & 7 == MoveKind::Remove as u16
    }

    /// Whether the move is a piece moving along a line (quiet or capture).
    #[inline]
    pub const fn is_step(self) -> bool {
        (self.0 >> 12) & 7 <= MoveKind::Capture as u16
    }

    /// Whether the move's cells are named on the hexagonal board.
    #[inline]
    pub const fn is_hex(self) -> bool {
        self.0 & HEX_FLAG != 0
    }

    /// The cell of a drop or removal (equal to both [`Move::from`] and [`Move::to`]).
    #[inline]
    pub const fn square(self) -> Square {
        self.to()
    }

    /// The raw 16-bit encoding (stable across versions; used by data formats).
    #[inline]
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// Inverse of [`Move::to_bits`]; `None` for encodings no move has.
    pub const fn from_bits(bits: u16) -> Option<Move> {
        match (bits >> 12) & 7 {
            0 | 1 => Some(Move(bits)),
            2 if bits & 0x8FFF == 0 => Some(Move(bits)),
            3 | 4 if bits & 63 == (bits >> 6) & 63 => Some(Move(bits)),
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
    /// Writes the move in its board's notation (`b1-d3`, `b1xd3`, `pass`, `@e5`, `~e5`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |sq| crate::notation::cell_name(sq, self.is_hex());
        match self.kind() {
            MoveKind::Pass => f.write_str("pass"),
            MoveKind::Drop => write!(f, "@{}", name(self.square())),
            MoveKind::Remove => write!(f, "~{}", name(self.square())),
            MoveKind::Quiet | MoveKind::Capture => {
                let sep = if self.is_capture() { 'x' } else { '-' };
                write!(f, "{}{}{}", name(self.from()), sep, name(self.to()))
            }
        }
    }
}

/// Maximum number of moves in a position of any supported variant (a `parachute` drop may
/// go to any of at most 64 empty cells; normal moves are at most 8 per piece).
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
