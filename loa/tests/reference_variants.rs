//! An independent, deliberately slow reference implementation of the rules of every
//! variant (plain LOA on the square boards, `parachute`, `gemma`, `ambiloa`, `alveole`),
//! written from `docs/rules.md` and checked against the engine.
//!
//! The reference shares nothing with the bitboard code: boards are arrays of rows (row 0 at
//! the bottom, cells numbered from the left), coordinates and direction vectors are its own
//! (the hexagon in "doubled" coordinates: a cell's neighbours are 2 columns away in its row
//! and 1 column away in the rows above and below), connection is a flood fill, and turn
//! order, compound turns, reserves, vanished cells and partners are plain fields. It meets
//! the engine only at the boundary: position text (`to_text`/`from_text`, its own writer
//! and reader on this side), move names, outcomes and perft counts.

use loa::perft::perft;
use loa::rules::{NoMove, SimultaneousConnection};
use loa::{Color, Move, Outcome, Position, Rules, Variant};
use std::collections::HashMap;

// ---------------------------------------------------------------------------------------
// The reference.
// ---------------------------------------------------------------------------------------

/// A cell as (row from the bottom, index in its row from the left).
type Cell = (usize, usize);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Content {
    Empty,
    /// `gemma`: the cell vanished.
    Gone,
    /// A piece of a player: 0 Black / 1 White, or in `ambiloa` 0 South, 1 West, 2 North,
    /// 3 East. The team (colour) of a player is `player % 2`.
    Man(u8),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Plain,
    Parachute,
    Gemma,
    Ambiloa,
}

fn kind_of(v: Variant) -> Kind {
    match v {
        Variant::Parachute => Kind::Parachute,
        Variant::Gemma => Kind::Gemma,
        Variant::Ambiloa => Kind::Ambiloa,
        _ => Kind::Plain,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Board {
    /// An n×n board: cell (row, k) is file k, rank row.
    Square(usize),
    /// The side-5 hexagon: rows a (0, 5 cells) … e (4, 9 cells) … i (8, 5 cells).
    Hex,
}

/// King steps: the 8 directions and the 8 neighbours of a square board.
const KING: [(i32, i32); 8] = [
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
];

/// The 6 directions and neighbours of the hexagon in doubled coordinates.
const HEX_STEPS: [(i32, i32); 6] = [(2, 0), (1, 1), (-1, 1), (-2, 0), (-1, -1), (1, -1)];

impl Board {
    fn of(v: Variant) -> Board {
        match v {
            Variant::Six => Board::Square(6),
            Variant::Alveole => Board::Hex,
            _ => Board::Square(8),
        }
    }

    fn rows(self) -> usize {
        match self {
            Board::Square(n) => n,
            Board::Hex => 9,
        }
    }

    fn row_len(self, row: usize) -> usize {
        match self {
            Board::Square(n) => n,
            Board::Hex => 9 - (row as i32 - 4).unsigned_abs() as usize,
        }
    }

    /// (x, y) of a cell; on the hexagon x is in half-cell units, rows centred.
    fn xy(self, (row, k): Cell) -> (i32, i32) {
        match self {
            Board::Square(_) => (k as i32, row as i32),
            Board::Hex => ((9 - self.row_len(row) as i32) + 2 * k as i32, row as i32),
        }
    }

    fn at(self, x: i32, y: i32) -> Option<Cell> {
        if y < 0 || y >= self.rows() as i32 {
            return None;
        }
        let row = y as usize;
        let len = self.row_len(row) as i32;
        let (rel, scale) = match self {
            Board::Square(_) => (x, 1),
            Board::Hex => (x - (9 - len), 2),
        };
        if rel < 0 || rel % scale != 0 || rel / scale >= len {
            return None;
        }
        Some((row, (rel / scale) as usize))
    }

    fn steps(self) -> &'static [(i32, i32)] {
        match self {
            Board::Square(_) => &KING,
            Board::Hex => &HEX_STEPS,
        }
    }

    fn cells(self) -> Vec<Cell> {
        (0..self.rows())
            .flat_map(|r| (0..self.row_len(r)).map(move |k| (r, k)))
            .collect()
    }

    fn name(self, (row, k): Cell) -> String {
        match self {
            Board::Square(_) => format!("{}{}", (b'a' + k as u8) as char, row + 1),
            Board::Hex => format!("{}{}", (b'a' + row as u8) as char, k + 1),
        }
    }

    fn parse(self, name: &str) -> Cell {
        let b = name.as_bytes();
        let letter = (b[0] - b'a') as usize;
        let number = (b[1] - b'1') as usize;
        let cell = match self {
            Board::Square(_) => (number, letter),
            Board::Hex => (letter, number),
        };
        assert!(
            cell.0 < self.rows() && cell.1 < self.row_len(cell.0),
            "{name}"
        );
        cell
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum RMove {
    Step { from: Cell, to: Cell, capture: bool },
    Drop(Cell),
    Remove(Cell),
    Pass,
}

#[derive(Clone, PartialEq, Eq, Debug)]
struct RPos {
    kind: Kind,
    board: Board,
    /// `cells[row][k]`.
    cells: [[Content; 9]; 9],
    /// The player to move (a colour index, or an `ambiloa` player).
    mover: u8,
    /// `parachute`: opponent's pieces Black and White still hold.
    reserve: [u8; 2],
    /// `parachute`: the mover has made the move of its turn and owes the drop.
    pending: bool,
}

fn team(player: u8) -> usize {
    (player % 2) as usize
}

fn color(team: usize) -> Color {
    if team == 0 {
        Color::Black
    } else {
        Color::White
    }
}

/// Start squares from the rule text, per player (ambiloa: S, W, N, E).
fn start_squares(v: Variant) -> Vec<Vec<&'static str>> {
    let standard = || {
        vec![
            vec![
                "b1", "c1", "d1", "e1", "f1", "g1", "b8", "c8", "d8", "e8", "f8", "g8",
            ],
            vec![
                "a2", "a3", "a4", "a5", "a6", "a7", "h2", "h3", "h4", "h5", "h6", "h7",
            ],
        ]
    };
    match v {
        Variant::Standard | Variant::Gemma => standard(),
        Variant::ScrambledEggs => vec![
            vec![
                "b1", "d1", "f1", "c8", "e8", "g8", "a3", "a5", "a7", "h2", "h4", "h6",
            ],
            vec![
                "c1", "e1", "g1", "b8", "d8", "f8", "a2", "a4", "a6", "h3", "h5", "h7",
            ],
        ],
        Variant::Six => vec![
            vec!["b1", "c1", "d1", "e1", "b6", "c6", "d6", "e6"],
            vec!["a2", "a3", "a4", "a5", "f2", "f3", "f4", "f5"],
        ],
        Variant::Parachute => vec![
            vec!["a3", "a5", "a7", "h2", "h4", "h6"],
            vec!["a2", "a4", "a6", "h3", "h5", "h7"],
        ],
        Variant::Ambiloa => vec![
            vec!["b1", "c1", "d1", "e1", "f1", "g1"],
            vec!["a2", "a3", "a4", "a5", "a6", "a7"],
            vec!["b8", "c8", "d8", "e8", "f8", "g8"],
            vec!["h2", "h3", "h4", "h5", "h6", "h7"],
        ],
        Variant::Alveole => vec![
            vec!["a2", "a5", "b1", "d8", "e1", "f8", "h1", "i2", "i5"],
            vec!["a1", "a4", "b6", "d1", "e9", "f1", "h6", "i1", "i4"],
        ],
    }
}

impl RPos {
    fn empty(v: Variant) -> RPos {
        let board = Board::of(v);
        RPos {
            kind: kind_of(v),
            board,
            cells: [[Content::Empty; 9]; 9],
            mover: 0,
            reserve: [0, 0],
            pending: false,
        }
    }

    fn start(v: Variant, first: Color) -> RPos {
        let mut p = RPos::empty(v);
        for (player, squares) in start_squares(v).iter().enumerate() {
            for s in squares {
                let c = p.board.parse(s);
                p.set(c, Content::Man(player as u8));
            }
        }
        p.mover = if first == Color::White { 1 } else { 0 };
        if p.kind == Kind::Parachute {
            p.reserve = [6, 6];
        }
        p
    }

    fn players(&self) -> u8 {
        if self.kind == Kind::Ambiloa {
            4
        } else {
            2
        }
    }

    fn get(&self, (r, k): Cell) -> Content {
        self.cells[r][k]
    }

    fn set(&mut self, (r, k): Cell, c: Content) {
        self.cells[r][k] = c;
    }

    fn team_at(&self, c: Cell) -> Option<usize> {
        match self.get(c) {
            Content::Man(p) => Some(team(p)),
            _ => None,
        }
    }

    /// Pieces of any colour on the whole line through `c` along `step`, `c` included.
    fn line_count(&self, c: Cell, (dx, dy): (i32, i32)) -> i32 {
        let (x, y) = self.board.xy(c);
        let mut n = 0;
        for sign in [1, -1] {
            let mut i = 1;
            while let Some(t) = self.board.at(x + sign * dx * i, y + sign * dy * i) {
                if matches!(self.get(t), Content::Man(_)) {
                    n += 1;
                }
                i += 1;
            }
        }
        n + 1
    }

    /// The normal moves of the piece on `c` (whoever owns it).
    fn piece_moves(&self, c: Cell) -> Vec<RMove> {
        let Some(own) = self.team_at(c) else {
            return Vec::new();
        };
        let (x, y) = self.board.xy(c);
        let mut out = Vec::new();
        for &(dx, dy) in self.board.steps() {
            let n = self.line_count(c, (dx, dy));
            let Some(to) = self.board.at(x + dx * n, y + dy * n) else {
                continue;
            };
            let capture = match self.get(to) {
                Content::Gone => continue,
                Content::Man(q) if team(q) == own => continue,
                Content::Man(_) => true,
                Content::Empty => false,
            };
            let blocked = (1..n).any(|i| {
                let between = self.board.at(x + dx * i, y + dy * i).expect("on the line");
                matches!(self.team_at(between), Some(t) if t != own)
            });
            if !blocked {
                out.push(RMove::Step {
                    from: c,
                    to,
                    capture,
                });
            }
        }
        out
    }

    fn pieces_of(&self, player: u8) -> impl Iterator<Item = Cell> + '_ {
        let board = self.board;
        (0..board.rows())
            .flat_map(move |r| (0..board.row_len(r)).map(move |k| (r, k)))
            .filter(move |&c| self.get(c) == Content::Man(player))
    }

    /// Every move of `player` other than a pass and a drop: normal moves, and in `gemma` the
    /// removal of each piece without a normal move.
    fn actions(&self, player: u8) -> Vec<RMove> {
        let mut out = Vec::new();
        for c in self.pieces_of(player) {
            let moves = self.piece_moves(c);
            if moves.is_empty() && self.kind == Kind::Gemma {
                out.push(RMove::Remove(c));
            }
            out.extend(moves);
        }
        out
    }

    /// The moves of the player to move other than a pass.
    fn own_moves(&self) -> Vec<RMove> {
        if self.pending {
            return self
                .board
                .cells()
                .into_iter()
                .filter(|&c| self.get(c) == Content::Empty)
                .map(RMove::Drop)
                .collect();
        }
        self.actions(self.mover)
    }

    fn legal(&self, rules: &Rules) -> Vec<RMove> {
        let mut moves = self.own_moves();
        if moves.is_empty() && rules.no_move == NoMove::Pass {
            moves.push(RMove::Pass);
        }
        moves
    }

    fn next_player(&self) -> u8 {
        (self.mover + 1) % self.players()
    }

    fn after(&self, m: RMove) -> RPos {
        let mut p = self.clone();
        let side = team(p.mover);
        match m {
            RMove::Step { from, to, .. } => {
                let piece = p.get(from);
                p.set(to, piece);
                let left = if p.kind == Kind::Gemma {
                    Content::Gone
                } else {
                    Content::Empty
                };
                p.set(from, left);
            }
            RMove::Remove(c) => p.set(c, Content::Gone),
            RMove::Pass => {}
            RMove::Drop(c) => {
                p.set(c, Content::Man(1 - side as u8));
                p.reserve[side] -= 1;
                p.pending = false;
                p.mover = p.next_player();
                return p;
            }
        }
        if p.kind == Kind::Parachute && p.reserve[side] > 0 {
            p.pending = true;
        } else {
            p.mover = p.next_player();
        }
        p
    }

    /// Flood fill over the pieces of `t` with the board's neighbour steps.
    fn connected(&self, t: usize) -> bool {
        let mut pieces = (0..self.players())
            .filter(|&p| team(p) == t)
            .flat_map(|p| self.pieces_of(p));
        let Some(first) = pieces.next() else {
            return false;
        };
        let total = 1 + pieces.count();
        let mut seen = [[false; 9]; 9];
        seen[first.0][first.1] = true;
        let mut reached = 1;
        let mut stack = vec![first];
        while let Some(c) = stack.pop() {
            let (x, y) = self.board.xy(c);
            for &(dx, dy) in self.board.steps() {
                if let Some(nb) = self.board.at(x + dx, y + dy) {
                    if self.team_at(nb) == Some(t) && !seen[nb.0][nb.1] {
                        seen[nb.0][nb.1] = true;
                        reached += 1;
                        stack.push(nb);
                    }
                }
            }
        }
        reached == total
    }

    /// The connection rule at the end of the turn of the team not to move.
    fn connection_outcome(&self, rules: &Rules) -> Option<Outcome> {
        if self.pending {
            return None;
        }
        let us = team(self.mover);
        let them = 1 - us;
        match (self.connected(them), self.connected(us)) {
            (true, true) => Some(match rules.simultaneous_connection {
                SimultaneousConnection::MoverWins => Outcome::Win(color(them)),
                SimultaneousConnection::Draw => Outcome::Draw,
            }),
            (true, false) => Some(Outcome::Win(color(them))),
            (false, true) => Some(Outcome::Win(color(us))),
            (false, false) => None,
        }
    }

    /// Whether `player` would have anything to do at its turn: a normal move, a removal,
    /// or (holding a reserve) the drop that follows its forced pass.
    fn can_act(&self, player: u8) -> bool {
        !self.actions(player).is_empty()
            || (self.kind == Kind::Parachute && self.reserve[team(player)] > 0)
    }

    fn nobody_can_act(&self) -> bool {
        !self.pending && (0..self.players()).all(|p| !self.can_act(p))
    }

    /// The engine's `has_move(colour)`: whether the player of team `t` whose turn is
    /// current or next has a move other than a pass.
    fn has_move(&self, t: usize) -> bool {
        if t == team(self.mover) {
            self.pending || !self.actions(self.mover).is_empty()
        } else {
            !self.actions(self.next_player()).is_empty()
        }
    }

    fn outcome(&self, rules: &Rules) -> Option<Outcome> {
        if self.pending {
            return None;
        }
        if let Some(o) = self.connection_outcome(rules) {
            return Some(o);
        }
        if self.actions(self.mover).is_empty() {
            return match rules.no_move {
                NoMove::Loss => Some(Outcome::Win(color(1 - team(self.mover)))),
                NoMove::Pass if self.nobody_can_act() => Some(Outcome::Draw),
                NoMove::Pass => None,
            };
        }
        None
    }

    fn letter(&self, player: u8) -> char {
        if self.kind == Kind::Ambiloa {
            ['s', 'w', 'n', 'e'][player as usize]
        } else {
            ['b', 'w'][player as usize]
        }
    }

    fn to_text(&self) -> String {
        let mut rows = Vec::new();
        for r in (0..self.board.rows()).rev() {
            let mut s = String::new();
            let mut run = 0;
            for k in 0..self.board.row_len(r) {
                let ch = match self.cells[r][k] {
                    Content::Empty => {
                        run += 1;
                        continue;
                    }
                    Content::Gone => 'x',
                    Content::Man(p) => self.letter(p),
                };
                if run > 0 {
                    s += &run.to_string();
                    run = 0;
                }
                s.push(ch);
            }
            if run > 0 {
                s += &run.to_string();
            }
            rows.push(s);
        }
        let mut s = format!("{} {}", rows.join("/"), self.letter(self.mover));
        if self.kind == Kind::Parachute {
            if self.pending {
                s.push('@');
            }
            s += &format!(" {}:{}", self.reserve[0], self.reserve[1]);
        }
        s
    }

    /// Reads text in the format of [`RPos::to_text`] (well-formed input only).
    fn from_text(text: &str, v: Variant) -> RPos {
        let mut p = RPos::empty(v);
        let fields: Vec<&str> = text.split_whitespace().collect();
        let rows: Vec<&str> = fields[0].split('/').collect();
        assert_eq!(rows.len(), p.board.rows(), "{text}");
        for (i, row_text) in rows.iter().enumerate() {
            let r = p.board.rows() - 1 - i;
            let mut k = 0;
            for ch in row_text.chars() {
                if let Some(d) = ch.to_digit(10) {
                    k += d as usize;
                    continue;
                }
                let content = match ch {
                    'x' => Content::Gone,
                    _ => Content::Man(
                        (0..p.players())
                            .find(|&q| p.letter(q) == ch)
                            .unwrap_or_else(|| panic!("letter {ch} in {text}")),
                    ),
                };
                p.cells[r][k] = content;
                k += 1;
            }
            assert_eq!(k, p.board.row_len(r), "{text}");
        }
        let side = fields[1].trim_end_matches('@');
        p.pending = fields[1].ends_with('@');
        p.mover = (0..p.players())
            .find(|&q| p.letter(q).to_string() == side)
            .unwrap_or_else(|| panic!("side {side} in {text}"));
        if p.kind == Kind::Parachute {
            let (b, w) = fields[2].split_once(':').expect("reserves");
            p.reserve = [b.parse().unwrap(), w.parse().unwrap()];
        }
        p
    }

    /// Whether the placement is a position of its variant: in `parachute` the reserves must
    /// fit on the empty cells (play keeps that: a move never fills a cell, a drop fills one
    /// per reserve piece).
    fn valid(&self) -> bool {
        let empty = self
            .board
            .cells()
            .into_iter()
            .filter(|&c| self.get(c) == Content::Empty)
            .count();
        (self.reserve[0] + self.reserve[1]) as usize <= empty
    }

    fn move_name(&self, m: RMove) -> String {
        let n = |c| self.board.name(c);
        match m {
            RMove::Step { from, to, capture } => {
                format!("{}{}{}", n(from), if capture { 'x' } else { '-' }, n(to))
            }
            RMove::Drop(c) => format!("@{}", n(c)),
            RMove::Remove(c) => format!("~{}", n(c)),
            RMove::Pass => "pass".to_string(),
        }
    }
}

/// Leaves of the game tree of depth `depth`; a finished game has no children. (Repetition
/// cannot end a game within 4 plies: a position recurs at the earliest 4 plies later.)
fn reference_perft(p: &RPos, rules: &Rules, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if p.outcome(rules).is_some() {
        return 0;
    }
    p.legal(rules)
        .into_iter()
        .map(|m| reference_perft(&p.after(m), rules, depth - 1))
        .sum()
}

// ---------------------------------------------------------------------------------------
// Comparison with the engine.
// ---------------------------------------------------------------------------------------

use loa::testing::XorShift as Rng;

fn rule_sets() -> [Rules; 3] {
    [
        Rules::classic(),
        Rules::icga(),
        Rules::parse("no-move=loss").unwrap(),
    ]
}

fn sorted_names(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = names.into_iter().collect();
    v.sort();
    v
}

/// What one comparison covered.
#[derive(Default, Debug)]
struct Tally {
    positions: usize,
    successors: usize,
    passes: usize,
    /// Passes in the move part of a compound turn (`parachute`), followed by a drop.
    passes_then_drop: usize,
    drops: usize,
    removals: usize,
    finished: usize,
}

/// Checks the engine's position against the reference's: text, hash, outcomes under each
/// rule set, legal moves, move count, and (with `successors`) every successor.
fn compare(e: &Position, r: &RPos, successors: bool, tally: &mut Tally) {
    let v = e.variant();
    let text = e.to_text();
    assert_eq!(text, r.to_text(), "{v}");
    let rebuilt = Position::from_text(&text, v).unwrap_or_else(|err| panic!("{text}: {err}"));
    assert_eq!(rebuilt, *e, "{text}");
    assert_eq!(rebuilt.hash(), e.hash(), "{text}");
    assert_eq!(e.drop_pending(), r.pending, "{text}");
    assert_eq!(
        e.previous_mover(),
        color(if r.pending {
            team(r.mover)
        } else {
            1 - team(r.mover)
        })
    );
    assert_eq!(e.nobody_can_move(), r.nobody_can_act(), "{text}");
    for t in 0..2 {
        assert_eq!(e.has_move(color(t)), r.has_move(t), "{text} has_move {t}");
    }
    let own = r.own_moves();
    assert_eq!(e.count_moves() as usize, own.len(), "{text}");
    tally.positions += 1;
    for rules in rule_sets() {
        let outcome = e.outcome(&rules);
        assert_eq!(outcome, r.outcome(&rules), "{rules}: {text}");
        assert_eq!(
            e.connection_outcome(&rules),
            r.connection_outcome(&rules),
            "{rules}: {text}"
        );
        if outcome.is_some() {
            continue;
        }
        let engine = sorted_names(e.legal_moves(&rules).iter().map(|m| m.to_string()));
        let reference = sorted_names(r.legal(&rules).into_iter().map(|m| r.move_name(m)));
        assert_eq!(engine, reference, "{rules}: {text}");
    }
    let classic = Rules::classic();
    if e.outcome(&classic).is_some() {
        tally.finished += 1;
        return;
    }
    if !successors {
        return;
    }
    let engine_moves: HashMap<String, Move> = e
        .legal_moves(&classic)
        .iter()
        .map(|&m| (m.to_string(), m))
        .collect();
    for m in r.legal(&classic) {
        let name = r.move_name(m);
        match m {
            RMove::Pass => tally.passes += 1,
            RMove::Drop(_) => tally.drops += 1,
            RMove::Remove(_) => tally.removals += 1,
            RMove::Step { .. } => {}
        }
        let mv = engine_moves[&name];
        let ec = e.after(mv);
        let rc = r.after(m);
        if m == RMove::Pass && rc.pending {
            tally.passes_then_drop += 1;
        }
        let child_text = ec.to_text();
        assert_eq!(child_text, rc.to_text(), "{text} {name}");
        let rebuilt = Position::from_text(&child_text, v).unwrap();
        assert_eq!(ec.hash(), rebuilt.hash(), "{text} {name}: hash");
        assert_eq!(ec, rebuilt, "{text} {name}");
        for rules in &rule_sets()[..2] {
            assert_eq!(
                ec.connection_outcome_after(mv, rules),
                rc.connection_outcome(rules),
                "{rules}: {text} {name}"
            );
        }
        tally.successors += 1;
    }
}

/// Complete random games (at most 500 plies each) from the start of `v` (first player
/// `first`) until at least `min_positions` positions have been reached; with a tally, every
/// position is compared with the reference on the way. Returns the unfinished positions.
fn playouts(
    v: Variant,
    first: Color,
    min_positions: usize,
    rng: &mut Rng,
    mut tally: Option<&mut Tally>,
) -> Vec<Position> {
    let rules = Rules::classic();
    let engine_rules = Rules {
        first_player: first,
        ..rules
    };
    let mut seen = Vec::new();
    while seen.len() < min_positions {
        let mut e = Position::start(v, &engine_rules);
        let mut r = RPos::start(v, first);
        for _ in 0..500 {
            if let Some(t) = tally.as_deref_mut() {
                compare(&e, &r, true, t);
            }
            if r.outcome(&rules).is_some() {
                break;
            }
            seen.push(e);
            let moves = r.legal(&rules);
            let m = moves[rng.below(moves.len())];
            let name = r.move_name(m);
            let mv = e.parse_move(&name, &rules).unwrap();
            e.play(mv);
            r = r.after(m);
        }
    }
    seen
}

/// A random placement of `v`: random pieces (of random density, from nearly empty to
/// full, each side at least one), random side or player to move, and the variant's random
/// extra state (a pending drop only with an empty cell; the reserves may exceed the empty
/// cells, see [`RPos::valid`]).
fn random_placement(v: Variant, rng: &mut Rng) -> RPos {
    loop {
        let mut p = RPos::empty(v);
        let density = [3, 10, 25, 45, 70, 90, 100][rng.below(7)];
        let gone = if p.kind == Kind::Gemma {
            [0, 10, 30][rng.below(3)]
        } else {
            0
        };
        for c in p.board.cells() {
            if rng.below(100) < gone {
                p.set(c, Content::Gone);
            } else if rng.below(100) < density {
                p.set(c, Content::Man(rng.below(p.players() as usize) as u8));
            }
        }
        if !(0..2).all(|t| p.board.cells().iter().any(|&c| p.team_at(c) == Some(t))) {
            continue;
        }
        p.mover = rng.below(p.players() as usize) as u8;
        if p.kind == Kind::Parachute {
            p.reserve = [rng.below(7) as u8, rng.below(7) as u8];
            if rng.below(3) == 0 {
                p.reserve[rng.below(2)] = 0;
            }
            p.pending = p.reserve[team(p.mover)] > 0
                && p.board.cells().iter().any(|&c| p.get(c) == Content::Empty)
                && rng.below(3) == 0;
        }
        return p;
    }
}

const SPECIAL: [Variant; 4] = [
    Variant::Parachute,
    Variant::Gemma,
    Variant::Ambiloa,
    Variant::Alveole,
];

#[test]
fn start_positions_match_the_rule_text() {
    for v in Variant::ALL {
        for first in Color::ALL {
            let rules = Rules {
                first_player: first,
                ..Rules::classic()
            };
            let e = Position::start(v, &rules);
            let r = RPos::start(v, first);
            assert_eq!(e.to_text(), r.to_text(), "{v} first={first}");
            compare(&e, &r, true, &mut Tally::default());
        }
    }
}

#[test]
fn random_games_match_the_reference() {
    let mut rng = Rng::new(0x005E_ED0F_10AD);
    for v in Variant::ALL {
        let mut tally = Tally::default();
        let firsts: &[Color] = if v == Variant::Ambiloa {
            &[Color::Black, Color::White]
        } else {
            &[Color::Black]
        };
        for &first in firsts {
            playouts(v, first, 700 / firsts.len(), &mut rng, Some(&mut tally));
        }
        eprintln!("{v}: {tally:?}");
        assert!(tally.positions >= 700, "{v}: {tally:?}");
        assert!(tally.finished >= 1, "{v}: {tally:?}");
        match v {
            Variant::Parachute => assert!(tally.drops > 1500, "{tally:?}"),
            Variant::Gemma => assert!(tally.removals > 0, "{tally:?}"),
            _ => {}
        }
    }
}

#[test]
fn random_placements_match_the_reference() {
    let mut rng = Rng::new(0x0123_4567_89AB_CDEF);
    for v in Variant::ALL {
        let mut tally = Tally::default();
        let mut pending = 0;
        let n = if SPECIAL.contains(&v) { 1500 } else { 400 };
        let mut invalid = 0;
        for _ in 0..n {
            let r = random_placement(v, &mut rng);
            let text = r.to_text();
            if !r.valid() {
                let err = Position::from_text(&text, v).unwrap_err();
                assert!(err.message.contains("empty cells"), "{text}: {err}");
                invalid += 1;
                continue;
            }
            let e = Position::from_text(&text, v).unwrap_or_else(|err| panic!("{text}: {err}"));
            pending += r.pending as usize;
            compare(&e, &r, true, &mut tally);
        }
        eprintln!("{v}: {tally:?}, pending drops {pending}, invalid {invalid}");
        assert!(tally.finished > 0 && tally.finished < n, "{v}: {tally:?}");
        if v == Variant::Gemma {
            // A side with pieces always has a move: a stuck piece can be removed.
            assert_eq!(tally.passes, 0, "{tally:?}");
        } else {
            assert!(tally.passes > 0, "{v}: {tally:?}");
        }
        if v == Variant::Parachute {
            assert!(pending > 100 && invalid > 10, "{pending} {invalid}");
            assert!(tally.passes_then_drop > 0, "{tally:?}");
        }
        if v == Variant::Gemma {
            assert!(tally.removals > 100, "{tally:?}");
        }
    }
}

#[test]
fn perft_from_random_positions_matches_the_reference() {
    let mut rng = Rng::new(0xFEED_BEEF);
    let rules = Rules::classic();
    for v in Variant::ALL {
        let positions = playouts(v, Color::Black, 160, &mut rng, None);
        let mut checked = 0;
        for (i, e) in positions.iter().enumerate().step_by(7) {
            let r = RPos::from_text(&e.to_text(), v);
            let depth = if i % 3 == 0 { 3 } else { 2 };
            assert_eq!(
                perft(e, &rules, depth),
                reference_perft(&r, &rules, depth),
                "{v} depth {depth}: {}",
                e.to_text()
            );
            checked += 1;
        }
        for _ in 0..40 {
            let r = random_placement(v, &mut rng);
            if !r.valid() {
                continue;
            }
            let e = Position::from_text(&r.to_text(), v).unwrap();
            for rules in rule_sets() {
                assert_eq!(
                    perft(&e, &rules, 2),
                    reference_perft(&r, &rules, 2),
                    "{v} {rules}: {}",
                    e.to_text()
                );
            }
        }
        assert!(checked >= 20, "{v}: {checked}");
    }
}

/// Perft of each variant's start position (default rules; `ambiloa` also with West
/// first), depths 1–4, by the engine and by the reference. Sources: standard's four
/// figures and the first three of scrambled-eggs and 6x6 are those of the rules note
/// (`docs/rules.md`, "Perft"); every other figure (the fourth of scrambled-eggs
/// and 6x6, parachute, gemma, ambiloa, alveole) has no outside source and is this file's
/// reference implementation's count, written from the rules note alone, which the loop
/// checks the engine against. In `parachute` the move and the drop of a compound turn are
/// a ply each (18 moves × 52 drops = 936).
#[test]
fn start_perft_figures() {
    let table: [(Variant, Color, [u64; 4]); 8] = [
        (Variant::Standard, Color::Black, [36, 1244, 44952, 1563208]),
        (
            Variant::ScrambledEggs,
            Color::Black,
            [32, 992, 32000, 1002260],
        ),
        (Variant::Six, Color::Black, [24, 524, 11440, 234560]),
        (Variant::Parachute, Color::Black, [18, 936, 20726, 1057326]),
        (Variant::Gemma, Color::Black, [36, 1232, 42916, 1419964]),
        (Variant::Ambiloa, Color::Black, [18, 311, 5363, 88547]),
        (Variant::Ambiloa, Color::White, [18, 311, 5363, 88547]),
        (Variant::Alveole, Color::Black, [15, 219, 3936, 69492]),
    ];
    for (v, first, expected) in table {
        let rules = Rules {
            first_player: first,
            ..Rules::classic()
        };
        let e = Position::start(v, &rules);
        let r = RPos::start(v, first);
        for (depth, &n) in (1..).zip(&expected) {
            assert_eq!(
                perft(&e, &rules, depth),
                n,
                "{v} first={first} depth {depth}"
            );
            assert_eq!(
                reference_perft(&r, &rules, depth),
                n,
                "reference: {v} first={first} depth {depth}"
            );
        }
    }
}
