//! The position: pieces, side to move, hash; legal moves, making moves, game end.

use crate::geometry::{Geometry, Square};
use crate::movegen;
use crate::moves::{Move, MoveKind, MoveList};
use crate::rules::{NoMove, Rules, SimultaneousConnection};
use crate::variant::PARACHUTE_RESERVE;
use crate::zobrist::ZOBRIST;
use crate::{Color, Error, Variant};

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

/// A position: the pieces of both sides, the side to move, the number of plies played,
/// and the extra state of the special variants:
///
/// * `gemma`: the vanished cells;
/// * `parachute`: each side's reserve (opponent's pieces still to drop) and whether the
///   side to move has made the move of its compound turn and owes the drop;
/// * `ambiloa`: which pieces of each team belong to its second player (North, East), and
///   which player of the team to move has the turn.
///
/// Colours are teams in `ambiloa`, so [`Position::pieces`] and [`Position::to_move`] are
/// per team there, and outcomes are per team.
///
/// `Copy` and small (64 bytes), so searches copy positions instead of undoing moves.
/// Equality and hashing compare everything but the ply counter.
/// The repetition history lives in [`crate::Game`], not here.
#[derive(Clone, Copy, Debug)]
pub struct Position {
    pieces: [u64; 2],
    /// `gemma`: cells that vanished.
    vanished: u64,
    /// `ambiloa`: pieces of each team's second player (North's and East's).
    partners: u64,
    hash: u64,
    ply: u32,
    to_move: Color,
    /// `ambiloa`: 0 when the team's first player (South, West) moves, 1 for the second.
    seat: u8,
    /// `parachute`: opponent's pieces each side still has to drop.
    reserve: [u8; 2],
    /// `parachute`: the side to move has moved and now drops.
    drop_pending: bool,
    variant: Variant,
}

impl PartialEq for Position {
    fn eq(&self, other: &Self) -> bool {
        self.pieces == other.pieces
            && self.to_move == other.to_move
            && self.variant == other.variant
            && self.vanished == other.vanished
            && self.partners == other.partners
            && self.seat == other.seat
            && self.reserve == other.reserve
            && self.drop_pending == other.drop_pending
    }
}
impl Eq for Position {}

impl std::hash::Hash for Position {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The variants' extra state of a position, for [`Position::with_extra`] and data formats.
/// Every field is zero/false for variants that do not use it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExtraState {
    /// `gemma`: vanished cells.
    pub vanished: u64,
    /// `ambiloa`: pieces of each team's second player (North, East).
    pub partners: u64,
    /// `ambiloa`: 1 when the second player of the team to move has the turn.
    pub seat: u8,
    /// `parachute`: reserves of Black and White.
    pub reserve: [u8; 2],
    /// `parachute`: the side to move owes the drop of its turn.
    pub drop_pending: bool,
}

/// One of the four `ambiloa` players, in turn order from South.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Player {
    /// Moves first; South and North form one team.
    South = 0,
    /// Moves second; West and East form the other team.
    West = 1,
    /// Moves third, South's partner.
    North = 2,
    /// Moves fourth, West's partner.
    East = 3,
}

impl Player {
    /// The players in turn order.
    pub const ALL: [Player; 4] = [Player::South, Player::West, Player::North, Player::East];

    /// The player's team (Black: South and North; White: West and East).
    pub const fn team(self) -> Color {
        match self {
            Player::South | Player::North => Color::Black,
            Player::West | Player::East => Color::White,
        }
    }

    /// 0 for a team's first player (South, West), 1 for its second (North, East).
    pub const fn seat(self) -> u8 {
        (self as u8) / 2
    }

    /// The player of `team` in `seat`.
    pub const fn of(team: Color, seat: u8) -> Player {
        Player::ALL[(seat as usize & 1) * 2 + team as usize]
    }

    /// One-letter code in position text: `s`, `w`, `n`, `e`.
    pub const fn letter(self) -> char {
        match self {
            Player::South => 's',
            Player::West => 'w',
            Player::North => 'n',
            Player::East => 'e',
        }
    }

    /// Lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Player::South => "south",
            Player::West => "west",
            Player::North => "north",
            Player::East => "east",
        }
    }
}

impl Position {
    /// The start position of `variant`, with `rules.first_player` to move (in `ambiloa`:
    /// South when Black is first, West when White is).
    pub fn start(variant: Variant, rules: &Rules) -> Position {
        let g = variant.geometry();
        let squares = |names: &[&str]| {
            names.iter().fold(0u64, |acc, name| {
                acc | 1u64
                    << crate::notation::parse_square(name, g).expect("start squares are valid")
            })
        };
        let black = squares(variant.start_squares(Color::Black));
        let white = squares(variant.start_squares(Color::White));
        let extra = ExtraState {
            partners: squares(variant.partner_squares(Color::Black))
                | squares(variant.partner_squares(Color::White)),
            reserve: [variant.start_reserve(); 2],
            ..ExtraState::default()
        };
        Position::with_extra(variant, black, white, rules.first_player, extra)
            .expect("start positions are valid")
    }

    /// A position from piece bitboards, with no extra state (no vanished cells, full
    /// reserves in `parachute`, in `ambiloa` every piece its team's first player's and the
    /// first player to move). Checks as [`Position::with_extra`].
    pub fn new(
        variant: Variant,
        black: u64,
        white: u64,
        to_move: Color,
    ) -> Result<Position, Error> {
        let extra = ExtraState {
            reserve: [variant.start_reserve(); 2],
            ..ExtraState::default()
        };
        Position::with_extra(variant, black, white, to_move, extra)
    }

    /// A position from piece bitboards and the variant's extra state. Checks that every
    /// piece is on a board cell, that no cell holds two pieces or a piece and a vanished
    /// cell, that each side has at least one piece, and that the extra state fits the
    /// variant (state a variant does not use must be zero).
    pub fn with_extra(
        variant: Variant,
        black: u64,
        white: u64,
        to_move: Color,
        extra: ExtraState,
    ) -> Result<Position, Error> {
        let g = variant.geometry();
        let bad = |m: String| Err(Error::new(m));
        if (black | white | extra.vanished) & !g.cells != 0 {
            return bad(format!("pieces outside the {} board", g.name));
        }
        if black & white != 0 {
            return bad("a square holds two pieces".into());
        }
        if black == 0 || white == 0 {
            return bad("each side needs at least one piece".into());
        }
        if extra.vanished != 0 && !variant.has_vanishing() {
            return bad(format!("{variant} has no vanished cells"));
        }
        if extra.vanished & (black | white) != 0 {
            return bad("a piece stands on a vanished cell".into());
        }
        if variant == Variant::Ambiloa {
            if extra.partners & !(black | white) != 0 {
                return bad("a partner mark on an empty cell".into());
            }
            if extra.seat > 1 {
                return bad(format!("bad seat {}", extra.seat));
            }
        } else if extra.partners != 0 || extra.seat != 0 {
            return bad(format!("{variant} has no partners"));
        }
        if variant.has_drops() {
            if extra.reserve.iter().any(|&r| r > PARACHUTE_RESERVE) {
                return bad(format!(
                    "a reserve above {PARACHUTE_RESERVE} pieces: {:?}",
                    extra.reserve
                ));
            }
            if extra.drop_pending && extra.reserve[to_move.index()] == 0 {
                return bad("a drop is pending but the side to move holds no pieces".into());
            }
            // Every reserve piece must find an empty cell: a move never fills a cell and a
            // drop fills one per piece, so play keeps this, and a drop is always possible.
            let empty = (g.cells & !(black | white)).count_ones();
            let owed = extra.reserve[0] as u32 + extra.reserve[1] as u32;
            if owed > empty {
                return bad(format!(
                    "reserves {}:{} exceed the {empty} empty cells",
                    extra.reserve[0], extra.reserve[1]
                ));
            }
        } else if extra.reserve != [0, 0] || extra.drop_pending {
            return bad(format!("{variant} has no reserves"));
        }
        let mut pos = Position {
            pieces: [black, white],
            vanished: extra.vanished,
            partners: extra.partners,
            hash: 0,
            ply: 0,
            to_move,
            seat: extra.seat,
            reserve: extra.reserve,
            drop_pending: extra.drop_pending,
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
            let r = self.reserve[c.index()];
            if r > 0 {
                h ^= ZOBRIST.reserve[c.index()][r as usize];
            }
        }
        for (set, keys) in [
            (self.vanished, &ZOBRIST.vanished),
            (self.partners, &ZOBRIST.partner),
        ] {
            let mut bits = set;
            while bits != 0 {
                h ^= keys[bits.trailing_zeros() as usize];
                bits &= bits - 1;
            }
        }
        if self.to_move == Color::White {
            h ^= ZOBRIST.white_to_move;
        }
        if self.seat == 1 {
            h ^= ZOBRIST.second_seat;
        }
        if self.drop_pending {
            h ^= ZOBRIST.drop_pending;
        }
        h
    }

    /// The pieces of `color` (of its team in `ambiloa`).
    #[inline]
    pub fn pieces(&self, color: Color) -> u64 {
        self.pieces[color.index()]
    }

    /// Every piece on the board.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.pieces[0] | self.pieces[1]
    }

    /// The side (team) to move.
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

    /// Zobrist hash of everything but the ply counter.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Plies played since the position was set up (a drop is a ply of its own).
    #[inline]
    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// Sets the ply counter (used by the ply-limit rule).
    pub fn set_ply(&mut self, ply: u32) {
        self.ply = ply;
    }

    /// The variant's extra state (see [`ExtraState`]).
    pub fn extra(&self) -> ExtraState {
        ExtraState {
            vanished: self.vanished,
            partners: self.partners,
            seat: self.seat,
            reserve: self.reserve,
            drop_pending: self.drop_pending,
        }
    }

    /// `gemma`: the vanished cells (0 elsewhere).
    #[inline]
    pub fn vanished(&self) -> u64 {
        self.vanished
    }

    /// `parachute`: the opponent's pieces `color` still holds (0 elsewhere).
    #[inline]
    pub fn reserve(&self, color: Color) -> u8 {
        self.reserve[color.index()]
    }

    /// `parachute`: whether the side to move has made the move of its compound turn and
    /// must now drop. The connection rule waits until the drop.
    #[inline]
    pub fn drop_pending(&self) -> bool {
        self.drop_pending
    }

    /// `ambiloa`: the player to move (`None` in other variants).
    pub fn player(&self) -> Option<Player> {
        (self.variant == Variant::Ambiloa).then(|| Player::of(self.to_move, self.seat))
    }

    /// `ambiloa`: the pieces of `player` (0 in other variants).
    pub fn player_pieces(&self, player: Player) -> u64 {
        if self.variant != Variant::Ambiloa {
            return 0;
        }
        let team = self.pieces[player.team().index()];
        if player.seat() == 1 {
            team & self.partners
        } else {
            team & !self.partners
        }
    }

    /// The side that made the move leading to this position: the side to move itself
    /// while a drop is pending, otherwise the other side.
    #[inline]
    pub fn previous_mover(&self) -> Color {
        if self.drop_pending {
            self.to_move
        } else {
            self.to_move.opponent()
        }
    }

    /// The colour on `sq`, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Color> {
        let bit = 1u64 << sq;
        Color::ALL
            .into_iter()
            .find(|c| self.pieces[c.index()] & bit != 0)
    }

    /// The movegen masks of the player to move (`seat` in `ambiloa`) of `color`:
    /// (movers, enemy, forbidden landing cells).
    #[inline(always)]
    fn masks(&self, color: Color, seat: u8) -> (u64, u64, u64) {
        let own = self.pieces[color.index()];
        let enemy = self.pieces[color.opponent().index()];
        let movers = if self.variant == Variant::Ambiloa {
            if seat == 1 {
                own & self.partners
            } else {
                own & !self.partners
            }
        } else {
            own
        };
        (movers, enemy, own | self.vanished)
    }

    /// Calls `f(from, direction, to, capture)` for every normal move (a piece moving along
    /// a line) of the player to move; no drops, removals or passes. During a pending drop
    /// there are none.
    #[inline(always)]
    pub fn for_each_move(&self, f: impl FnMut(Square, u8, Square, bool)) {
        if self.drop_pending {
            return;
        }
        let (movers, enemy, forbidden) = self.masks(self.to_move, self.seat);
        movegen::for_each_move(
            self.geometry(),
            movers,
            self.occupied(),
            enemy,
            forbidden,
            f,
        );
    }

    /// Appends every legal move of the player to move except the pass: normal moves, and
    /// the variant's drops (pending drop in `parachute`) or removals (`gemma`).
    #[inline]
    pub fn generate_moves(&self, list: &mut MoveList) {
        let g = self.geometry();
        if self.drop_pending {
            let flag = g.move_flag;
            let mut empty = g.cells & !self.occupied() & !self.vanished;
            while empty != 0 {
                list.push(Move::drop(empty.trailing_zeros() as Square, flag));
                empty &= empty - 1;
            }
            return;
        }
        let (movers, enemy, forbidden) = self.masks(self.to_move, self.seat);
        let occupied = self.occupied();
        movegen::generate(g, movers, occupied, enemy, forbidden, list);
        if self.variant.has_vanishing() {
            self.push_removals(movers, enemy, forbidden, list);
        }
    }

    /// `gemma`: appends a removal for every mover without a normal move.
    fn push_removals(&self, movers: u64, enemy: u64, forbidden: u64, list: &mut MoveList) {
        let g = self.geometry();
        let occupied = self.occupied();
        let mut bits = movers;
        while bits != 0 {
            let piece = bits & bits.wrapping_neg();
            bits &= bits - 1;
            if movegen::count_moves(g, piece, occupied, enemy, forbidden) == 0 {
                list.push(Move::remove(piece.trailing_zeros() as Square, g.move_flag));
            }
        }
    }

    /// Number of moves [`Position::generate_moves`] yields.
    #[inline]
    pub fn count_moves(&self) -> u32 {
        let g = self.geometry();
        if self.variant.is_plain() {
            let own = self.pieces[self.to_move.index()];
            let enemy = self.pieces[self.to_move.opponent().index()];
            return match crate::linecount::line_counter(g) {
                Some(counter) => counter.count(own, enemy),
                None => movegen::count_moves(g, own, own | enemy, enemy, own),
            };
        }
        if self.drop_pending {
            return (g.cells & !self.occupied() & !self.vanished).count_ones();
        }
        let (movers, enemy, forbidden) = self.masks(self.to_move, self.seat);
        let occupied = self.occupied();
        if !self.variant.has_vanishing() {
            return movegen::count_moves(g, movers, occupied, enemy, forbidden);
        }
        let mut total = 0;
        let mut bits = movers;
        while bits != 0 {
            let piece = bits & bits.wrapping_neg();
            bits &= bits - 1;
            // A stuck piece has exactly one move: its removal.
            total += movegen::count_moves(g, piece, occupied, enemy, forbidden).max(1);
        }
        total
    }

    /// Whether `color` (in `ambiloa`: the player of that team whose turn it is, or would
    /// be next for the other team) would have a move other than a pass at its turn in this
    /// placement: a normal move, a removal (`gemma`: any piece), or the drop the side to
    /// move owes (`parachute`, while a drop is pending). A `parachute` side that holds a
    /// reserve but has no normal move has none: it passes, then drops (so this is not the
    /// draw test; see [`Position::nobody_can_move`]).
    pub fn has_move(&self, color: Color) -> bool {
        let seat = if self.variant == Variant::Ambiloa {
            // The other team moves next with the seat that follows the turn order: after
            // South comes West (same seat), after East comes South (the other seat).
            if color == self.to_move || color == Color::White {
                self.seat
            } else {
                self.seat ^ 1
            }
        } else {
            0
        };
        self.seat_has_move(color, seat)
    }

    fn seat_has_move(&self, color: Color, seat: u8) -> bool {
        if color == self.to_move && self.drop_pending {
            return true;
        }
        let (movers, enemy, forbidden) = self.masks(color, seat);
        if self.variant.has_vanishing() && movers != 0 {
            return true;
        }
        movegen::has_move(self.geometry(), movers, self.occupied(), enemy, forbidden)
    }

    /// Whether no player at all could make a move other than a pass (all four in
    /// `ambiloa`) and no reserve is left to drop: under `no-move=pass` the game is drawn.
    pub fn nobody_can_move(&self) -> bool {
        if self.drop_pending || self.reserve != [0, 0] {
            return false;
        }
        let seats: &[u8] = if self.variant == Variant::Ambiloa {
            &[0, 1]
        } else {
            &[0]
        };
        !Color::ALL
            .iter()
            .any(|&c| seats.iter().any(|&s| self.seat_has_move(c, s)))
    }

    /// The legal moves under `rules` of a position whose game is not over: the moves of
    /// [`Position::generate_moves`], or `[pass]` if there are none and the rules say pass.
    /// (Under `no-move=loss` a position without moves is lost, see [`Position::outcome`].)
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
        match mv.kind() {
            MoveKind::Quiet | MoveKind::Capture => {
                let from = 1u64 << mv.from();
                let to = 1u64 << mv.to();
                self.pieces[us] ^= from | to;
                let keys = &ZOBRIST.pieces[us];
                self.hash ^= keys[mv.from() as usize] ^ keys[mv.to() as usize];
                if mv.is_capture() {
                    self.pieces[us ^ 1] &= !to;
                    self.hash ^= ZOBRIST.pieces[us ^ 1][mv.to() as usize];
                    if self.partners & to != 0 {
                        self.partners &= !to;
                        self.hash ^= ZOBRIST.partner[mv.to() as usize];
                    }
                }
                if self.seat == 1 {
                    self.partners ^= from | to;
                    self.hash ^=
                        ZOBRIST.partner[mv.from() as usize] ^ ZOBRIST.partner[mv.to() as usize];
                }
                if self.variant.has_vanishing() {
                    self.vanished |= from;
                    self.hash ^= ZOBRIST.vanished[mv.from() as usize];
                }
            }
            MoveKind::Pass => {}
            MoveKind::Drop => {
                let sq = mv.square() as usize;
                self.pieces[us ^ 1] |= 1u64 << sq;
                self.hash ^= ZOBRIST.pieces[us ^ 1][sq];
                let r = self.reserve[us] as usize;
                self.hash ^= ZOBRIST.reserve[us][r];
                if r > 1 {
                    self.hash ^= ZOBRIST.reserve[us][r - 1];
                }
                self.reserve[us] = r.saturating_sub(1) as u8;
                self.drop_pending = false;
                self.hash ^= ZOBRIST.drop_pending;
                self.pass_turn();
                self.ply += 1;
                return;
            }
            MoveKind::Remove => {
                let sq = mv.square() as usize;
                self.pieces[us] &= !(1u64 << sq);
                self.hash ^= ZOBRIST.pieces[us][sq] ^ ZOBRIST.vanished[sq];
                self.vanished |= 1u64 << sq;
            }
        }
        if self.reserve[us] > 0 {
            // Compound turn (parachute): the drop follows, same side.
            self.drop_pending = true;
            self.hash ^= ZOBRIST.drop_pending;
        } else {
            self.pass_turn();
        }
        self.ply += 1;
    }

    /// Hands the turn to the next player: the other team, and in `ambiloa` the next seat
    /// after White's turn (order South, West, North, East).
    #[inline]
    fn pass_turn(&mut self) {
        if self.variant == Variant::Ambiloa && self.to_move == Color::White {
            self.seat ^= 1;
            self.hash ^= ZOBRIST.second_seat;
        }
        self.to_move = self.to_move.opponent();
        self.hash ^= ZOBRIST.white_to_move;
    }

    /// The position after `mv` (see [`Position::play`]).
    #[inline]
    pub fn after(&self, mv: Move) -> Position {
        let mut p = *self;
        p.play(mv);
        p
    }

    /// Whether all pieces of `color` (of its team in `ambiloa`) form one connected group.
    #[inline]
    pub fn is_connected(&self, color: Color) -> bool {
        self.geometry().is_connected(self.pieces[color.index()])
    }

    /// The result of the connection rule alone: scored as if the side *not* to move has just
    /// completed its turn (which is how positions arise in play). `None` while a drop is
    /// pending (the turn is not complete).
    #[inline]
    pub fn connection_outcome(&self, rules: &Rules) -> Option<Outcome> {
        if self.drop_pending {
            return None;
        }
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

    /// Connection check after `mv` was played from the parent position: a quiet move or a
    /// removal can only change the mover's connection, so the opponent is re-checked only
    /// after a capture or a drop (which ends a compound turn, so both sides are checked).
    /// `self` must be the position after `mv`, whose parent was not over.
    #[inline]
    pub fn connection_outcome_after(&self, mv: Move, rules: &Rules) -> Option<Outcome> {
        if self.drop_pending {
            return None;
        }
        if mv.is_capture() || mv.is_drop() {
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
    /// history, see [`crate::Game`]): connection, ply limit, and a player to move without
    /// moves (`no-move=loss`: its side loses; `pass`: a draw when nobody can move).
    pub fn outcome(&self, rules: &Rules) -> Option<Outcome> {
        if let Some(o) = self.connection_outcome(rules) {
            return Some(o);
        }
        self.non_connection_outcome(rules)
    }

    /// The parts of [`Position::outcome`] other than connection. `None` while a drop is
    /// pending.
    #[inline]
    pub fn non_connection_outcome(&self, rules: &Rules) -> Option<Outcome> {
        if self.drop_pending {
            return None;
        }
        if let Some(limit) = rules.ply_limit {
            if self.ply >= limit {
                return Some(Outcome::Draw);
            }
        }
        if !self.seat_has_move(self.to_move, self.seat) {
            return match rules.no_move {
                NoMove::Loss => Some(Outcome::Win(self.to_move.opponent())),
                NoMove::Pass if self.nobody_can_move() => Some(Outcome::Draw),
                NoMove::Pass => None,
            };
        }
        None
    }

    /// The direction of a normal move (index into the geometry's direction tables);
    /// `None` for passes, drops and removals.
    pub fn move_direction(&self, mv: Move) -> Option<u8> {
        if !mv.is_step() {
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
            vanished: g.map_bitboard(s, self.vanished),
            partners: g.map_bitboard(s, self.partners),
            ..*self
        };
        p.hash = p.compute_hash();
        p
    }

    /// `mv` mapped by board symmetry `s`.
    pub fn transform_move(&self, mv: Move, s: usize) -> Move {
        let g = self.geometry();
        let map = &g.symmetry_square[s];
        match mv.kind() {
            MoveKind::Pass => mv,
            MoveKind::Drop => Move::drop(map[mv.square() as usize], g.move_flag),
            MoveKind::Remove => Move::remove(map[mv.square() as usize], g.move_flag),
            MoveKind::Quiet | MoveKind::Capture => Move::new_on(
                map[mv.from() as usize],
                map[mv.to() as usize],
                mv.is_capture(),
                g.move_flag,
            ),
        }
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
