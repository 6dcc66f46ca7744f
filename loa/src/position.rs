//! The position: pieces, side to move, hash; legal moves, making moves, game end.

use crate::geometry::{Geometry, Square};
use crate::movegen;
use crate::moves::{Move, MoveList};
use crate::rules::{NoMove, Rules, SimultaneousConnection};
use crate::zobrist::ZOBRIST;
use crate::{Color, Variant};

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The given side won.
    Win(Color),
    /// Drawn (simultaneous connection under `icga`, repetition, ply limit, no moves at all).
    Draw,
}

impl Outcome {
    /// The winner, if any.
    pub fn winner(self) -> Option<Color> {
        match self {
            Outcome::Win(c) => Some(c),
            Outcome::Draw => None,
        }
    }

    /// +1 for a win of `color`, −1 for a loss, 0 for a draw.
    pub fn score_for(self, color: Color) -> f32 {
        match self {
            Outcome::Win(c) if c == color => 1.0,
            Outcome::Win(_) => -1.0,
            Outcome::Draw => 0.0,
        }
    }

    /// `black`, `white` or `draw`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Win(c) => c.name(),
            Outcome::Draw => "draw",
        }
    }
}

/// A position: the pieces of both sides, the side to move and the number of plies played.
///
/// `Copy` and small (40 bytes), so searches copy positions instead of undoing moves.
/// Equality and hashing compare the pieces, side to move and variant, not the ply counter.
/// The repetition history lives in [`crate::Game`], not here.
#[derive(Clone, Copy, Debug)]
pub struct Position {
    pieces: [u64; 2],
    hash: u64,
    ply: u32,
    to_move: Color,
    variant: Variant,
}

impl PartialEq for Position {
    fn eq(&self, other: &Self) -> bool {
        self.pieces == other.pieces
            && self.to_move == other.to_move
            && self.variant == other.variant
    }
}
impl Eq for Position {}

impl std::hash::Hash for Position {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// Why a set of pieces does not make a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidPosition(pub String);

impl std::fmt::Display for InvalidPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for InvalidPosition {}

impl Position {
    /// The start position of `variant`, with `rules.first_player` to move.
    pub fn start(variant: Variant, rules: &Rules) -> Position {
        let mut pieces = [0u64; 2];
        for color in Color::ALL {
            for name in variant.start_squares(color) {
                let sq = crate::notation::parse_square(name, variant.geometry())
                    .expect("start squares are valid");
                pieces[color.index()] |= 1u64 << sq;
            }
        }
        Position::new(variant, pieces[0], pieces[1], rules.first_player)
            .expect("start positions are valid")
    }

    /// A position from piece bitboards. Checks that every piece is on a board cell, that no
    /// cell holds two pieces and that each side has at least one piece.
    pub fn new(
        variant: Variant,
        black: u64,
        white: u64,
        to_move: Color,
    ) -> Result<Position, InvalidPosition> {
        let g = variant.geometry();
        if (black | white) & !g.cells != 0 {
            return Err(InvalidPosition(format!(
                "pieces outside the {} board",
                g.name
            )));
        }
        if black & white != 0 {
            return Err(InvalidPosition("a square holds two pieces".into()));
        }
        if black == 0 || white == 0 {
            return Err(InvalidPosition("each side needs at least one piece".into()));
        }
        let mut pos = Position {
            pieces: [black, white],
            hash: 0,
            ply: 0,
            to_move,
            variant,
        };
        pos.hash = pos.compute_hash();
        Ok(pos)
    }

    fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for c in Color::ALL {
            let mut bits = self.pieces[c.index()];
            while bits != 0 {
                h ^= ZOBRIST.pieces[c.index()][bits.trailing_zeros() as usize];
                bits &= bits - 1;
            }
        }
        if self.to_move == Color::White {
            h ^= ZOBRIST.white_to_move;
        }
        h
    }

    /// The pieces of `color`.
    #[inline]
    pub fn pieces(&self, color: Color) -> u64 {
        self.pieces[color.index()]
    }

    /// Every piece on the board.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.pieces[0] | self.pieces[1]
    }

    /// The side to move.
    #[inline]
    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// The variant.
    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The board geometry.
    #[inline]
    pub fn geometry(&self) -> &'static Geometry {
        self.variant.geometry()
    }

    /// Zobrist hash of pieces and side to move.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Plies played since the position was set up.
    #[inline]
    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// Sets the ply counter (used by the ply-limit rule).
    pub fn set_ply(&mut self, ply: u32) {
        self.ply = ply;
    }

    /// The colour on `sq`, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Color> {
        let bit = 1u64 << sq;
        Color::ALL
            .into_iter()
            .find(|c| self.pieces[c.index()] & bit != 0)
    }

    /// Calls `f(from, direction, to, capture)` for every normal (non-pass) move of the side
    /// to move.
    #[inline(always)]
    pub fn for_each_move(&self, f: impl FnMut(Square, u8, Square, bool)) {
        let own = self.pieces[self.to_move.index()];
        let enemy = self.pieces[self.to_move.opponent().index()];
        movegen::for_each_move(self.geometry(), own, own | enemy, enemy, own, f);
    }

    /// Appends the normal (non-pass) moves of the side to move to `list`.
    #[inline]
    pub fn generate_moves(&self, list: &mut MoveList) {
        let own = self.pieces[self.to_move.index()];
        let enemy = self.pieces[self.to_move.opponent().index()];
        movegen::generate(self.geometry(), own, own | enemy, enemy, own, list);
    }

    /// Number of normal (non-pass) moves of the side to move.
    #[inline]
    pub fn count_moves(&self) -> u32 {
        let own = self.pieces[self.to_move.index()];
        let enemy = self.pieces[self.to_move.opponent().index()];
        let g = self.geometry();
        match crate::linecount::line_counter(g) {
            Some(counter) => counter.count(own, enemy),
            None => movegen::count_moves(g, own, own | enemy, enemy, own),
        }
    }

    /// Whether `color` has a normal move in this placement of the pieces.
    pub fn has_move(&self, color: Color) -> bool {
        let own = self.pieces[color.index()];
        let enemy = self.pieces[color.opponent().index()];
        movegen::has_move(self.geometry(), own, own | enemy, enemy, own)
    }

    /// The legal moves under `rules` of a position whose game is not over: the normal
    /// moves, or `[pass]` if there are none and the rules say pass. (Under `no-move=loss`
    /// a position without moves is lost, see [`Position::outcome`].)
    pub fn legal_moves(&self, rules: &Rules) -> MoveList {
        let mut list = MoveList::new();
        self.generate_moves(&mut list);
        if list.is_empty() && rules.no_move == NoMove::Pass {
            list.push(Move::PASS);
        }
        list
    }

    /// Whether `mv` is legal here under `rules` (for a position whose game is not over).
    pub fn is_legal(&self, mv: Move, rules: &Rules) -> bool {
        self.legal_moves(rules).contains(&mv)
    }

    /// Plays `mv`, which must be legal (see [`Position::is_legal`]); an illegal move
    /// leaves an unspecified but memory-safe position.
    #[inline]
    pub fn play(&mut self, mv: Move) {
        let us = self.to_move.index();
        if !mv.is_pass() {
            let from = 1u64 << mv.from();
            let to = 1u64 << mv.to();
            self.pieces[us] ^= from | to;
            let keys = &ZOBRIST.pieces[us];
            self.hash ^= keys[mv.from() as usize] ^ keys[mv.to() as usize];
            if mv.is_capture() {
                self.pieces[us ^ 1] &= !to;
                self.hash ^= ZOBRIST.pieces[us ^ 1][mv.to() as usize];
            }
        }
        self.to_move = self.to_move.opponent();
        self.hash ^= ZOBRIST.white_to_move;
        self.ply += 1;
    }

    /// The position after `mv` (see [`Position::play`]).
    #[inline]
    pub fn after(&self, mv: Move) -> Position {
        let mut p = *self;
        p.play(mv);
        p
    }

    /// Whether all pieces of `color` form one connected group.
    #[inline]
    pub fn is_connected(&self, color: Color) -> bool {
        self.geometry().is_connected(self.pieces[color.index()])
    }

    /// The result of the connection rule alone: scored as if the side *not* to move has just
    /// moved (which is how positions arise in play).
    #[inline]
    pub fn connection_outcome(&self, rules: &Rules) -> Option<Outcome> {
        let mover = self.to_move.opponent();
        let mover_connected = self.is_connected(mover);
        let other_connected = self.is_connected(self.to_move);
        match (mover_connected, other_connected) {
            (true, true) => Some(match rules.simultaneous_connection {
                SimultaneousConnection::MoverWins => Outcome::Win(mover),
                SimultaneousConnection::Draw => Outcome::Draw,
            }),
            (true, false) => Some(Outcome::Win(mover)),
            (false, true) => Some(Outcome::Win(self.to_move)),
            (false, false) => None,
        }
    }

    /// Connection check after `mv` was played from the parent position: a quiet move can
    /// only change the mover's connection, so the opponent is re-checked only after a
    /// capture. `self` must be the position after `mv`, whose parent was not over.
    #[inline]
    pub fn connection_outcome_after(&self, mv: Move, rules: &Rules) -> Option<Outcome> {
        if mv.is_capture() {
            return self.connection_outcome(rules);
        }
        let mover = self.to_move.opponent();
        if !mv.is_pass() && self.is_connected(mover) {
            Some(Outcome::Win(mover))
        } else {
            None
        }
    }

    /// Whether the game is over in this position, ignoring repetition (which needs the
    /// history, see [`crate::Game`]): connection, ply limit, and a side to move without moves
    /// (`no-move=loss`: it loses; `pass`: a draw when neither side can move).
    pub fn outcome(&self, rules: &Rules) -> Option<Outcome> {
        if let Some(o) = self.connection_outcome(rules) {
            return Some(o);
        }
        self.non_connection_outcome(rules)
    }

    /// The parts of [`Position::outcome`] other than connection.
    #[inline]
    pub fn non_connection_outcome(&self, rules: &Rules) -> Option<Outcome> {
        if let Some(limit) = rules.ply_limit {
            if self.ply >= limit {
                return Some(Outcome::Draw);
            }
        }
        if !self.has_move(self.to_move) {
            return match rules.no_move {
                NoMove::Loss => Some(Outcome::Win(self.to_move.opponent())),
                NoMove::Pass if !self.has_move(self.to_move.opponent()) => Some(Outcome::Draw),
                NoMove::Pass => None,
            };
        }
        None
    }

    /// The direction of a normal move (index into the geometry's direction tables).
    pub fn move_direction(&self, mv: Move) -> Option<u8> {
        if mv.is_pass() {
            return None;
        }
        self.geometry().direction_between(mv.from(), mv.to())
    }

    /// The position mapped by board symmetry `s` (`0..geometry.num_symmetries`). The ply
    /// counter is kept.
    pub fn transformed(&self, s: usize) -> Position {
        let g = self.geometry();
        let mut p = Position {
            pieces: [
                g.map_bitboard(s, self.pieces[0]),
                g.map_bitboard(s, self.pieces[1]),
            ],
            ..*self
        };
        p.hash = p.compute_hash();
        p
    }

    /// `mv` mapped by board symmetry `s`.
    pub fn transform_move(&self, mv: Move, s: usize) -> Move {
        if mv.is_pass() {
            return mv;
        }
        let map = &self.geometry().symmetry_square[s];
        Move::new(
            map[mv.from() as usize],
            map[mv.to() as usize],
            mv.is_capture(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position() {
        let p = Position::start(Variant::Standard, &Rules::classic());
        assert_eq!(p.pieces(Color::Black).count_ones(), 12);
        assert_eq!(p.pieces(Color::White).count_ones(), 12);
        assert_eq!(p.to_move(), Color::Black);
        assert_eq!(p.legal_moves(&Rules::classic()).len(), 36);
        assert_eq!(p.outcome(&Rules::classic()), None);
        let p = Position::start(Variant::Six, &Rules::parse("first=white").unwrap());
        assert_eq!(p.to_move(), Color::White);
        assert_eq!(p.pieces(Color::Black).count_ones(), 8);
    }

    #[test]
    fn hash_is_incremental() {
        let rules = Rules::classic();
        let mut p = Position::start(Variant::Standard, &rules);
        for i in 0..40 {
            if p.outcome(&rules).is_some() {
                break;
            }
            let moves = p.legal_moves(&rules);
            let mv = moves[(i * 7) % moves.len()];
            p.play(mv);
            assert_eq!(p.hash(), p.compute_hash());
        }
    }

    #[test]
    fn invalid_positions_are_rejected() {
        assert!(Position::new(Variant::Standard, 1, 1, Color::Black).is_err());
        assert!(Position::new(Variant::Standard, 1, 0, Color::Black).is_err());
        assert!(Position::new(Variant::Six, 1 << 7, 1, Color::Black).is_err());
    }
}
