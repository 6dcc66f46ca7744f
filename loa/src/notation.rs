//! Text forms: square names, moves (`b1-d3`, `b1xd3`, `pass`) and position text
//! (`1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b`). Every parser returns a
//! [`Error`] naming the offending text; none panics on any input.

use crate::geometry::{Geometry, Shape, Square};
use crate::moves::Move;
use crate::position::{ExtraState, Player};
use crate::rules::Rules;
use crate::{Color, Error, Position, Variant};

/// The name of a square-board square, e.g. `a1`.
pub fn square_name(sq: Square) -> String {
    let file = (b'a' + sq % 8) as char;
    format!("{file}{}", sq / 8 + 1)
}

/// The name of a cell: a square-board name, or on the hexagonal board (`hex`) the row
/// letter (`a` bottom … `i` top) and the cell's number in its row from the left, e.g. `e5`.
pub fn cell_name(sq: Square, hex: bool) -> String {
    if !hex {
        return square_name(sq);
    }
    let g = &crate::geometry::HEX5;
    if !g.contains(sq) {
        return format!("?{sq}");
    }
    let (col, row) = g.coords(sq);
    let first = (0..col)
        .find(|&c| g.square_at(c, row).is_some())
        .unwrap_or(col);
    format!("{}{}", (b'a' + row) as char, col - first + 1)
}

/// The name of cell `sq` of board `g` (see [`cell_name`]).
pub fn name_on(sq: Square, g: &Geometry) -> String {
    cell_name(sq, g.shape == Shape::Hex)
}

/// Parses a cell name (`e4`, case-insensitive) on board `g` (see [`cell_name`]).
pub fn parse_square(text: &str, g: &Geometry) -> Result<Square, Error> {
    let bytes = text.as_bytes();
    let bad = || Error::new(format!("'{text}' is not a square of the {} board", g.name));
    if bytes.len() != 2 {
        return Err(bad());
    }
    let letter = bytes[0].to_ascii_lowercase().wrapping_sub(b'a');
    let number = bytes[1].wrapping_sub(b'1');
    match g.shape {
        Shape::Square => g.square_at(letter, number).ok_or_else(bad),
        Shape::Hex => {
            let row = letter;
            if row >= g.size {
                return Err(bad());
            }
            let first = (0..g.size)
                .find(|&c| g.square_at(c, row).is_some())
                .ok_or_else(bad)?;
            g.square_at(first.saturating_add(number), row)
                .ok_or_else(bad)
        }
    }
}

/// A move as written, before it is matched against a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveText {
    /// `pass`.
    Pass,
    /// `from-to` or `fromxto` (`:` is accepted for `x`).
    Step {
        /// The square the piece leaves.
        from: Square,
        /// The square it lands on.
        to: Square,
        /// Whether the text marks a capture (`x` or `:`).
        capture: bool,
    },
    /// `@e5`: a drop (`parachute`).
    Drop(Square),
    /// `~e5`: a removal (`gemma`).
    Remove(Square),
}

/// Parses the syntax of a move (no legality check).
pub fn parse_move_text(text: &str, g: &Geometry) -> Result<MoveText, Error> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("pass") {
        return Ok(MoveText::Pass);
    }
    let in_move = |e: Error| Error::new(format!("in move '{t}': {e}"));
    if let Some(cell) = t.strip_prefix('@') {
        return Ok(MoveText::Drop(parse_square(cell, g).map_err(in_move)?));
    }
    if let Some(cell) = t.strip_prefix('~') {
        return Ok(MoveText::Remove(parse_square(cell, g).map_err(in_move)?));
    }
    let sep = t.find(['-', 'x', 'X', ':']).ok_or_else(|| {
        Error::new(format!(
            "'{t}' is not a move (expected e.g. b1-d3, b1xd3, @e5, ~e5 or pass)"
        ))
    })?;
    let (from, rest) = t.split_at(sep);
    let capture = !rest.starts_with('-');
    let to = &rest[1..];
    let from = parse_square(from, g).map_err(in_move)?;
    let to = parse_square(to, g).map_err(in_move)?;
    Ok(MoveText::Step { from, to, capture })
}

/// The rows of a board as written in position text: top row first, each row's cells left
/// to right.
fn text_rows(g: &Geometry) -> Vec<Vec<Square>> {
    (0..g.size)
        .rev()
        .map(|row| {
            (0..g.size)
                .filter_map(|col| g.square_at(col, row))
                .collect()
        })
        .collect()
}

/// `moves` in move notation, one space apart (the legal moves an error lists, a match's
/// opening in its results file).
pub fn moves_text(moves: &[Move]) -> String {
    moves
        .iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The name of row `i` of [`text_rows`] in error messages.
fn row_name(g: &Geometry, row: usize) -> String {
    match g.shape {
        Shape::Square => format!("rank {}", g.size as usize - row),
        Shape::Hex => format!("row {}", (b'a' + g.size - 1 - row as u8) as char),
    }
}

impl Position {
    /// Parses `text` as a legal move of this position under `rules`. A capture may be
    /// written with `-`; a non-capture written with `x` is an error.
    pub fn parse_move(&self, text: &str, rules: &Rules) -> Result<Move, Error> {
        let parsed = parse_move_text(text, self.geometry())?;
        let legal = self.legal_moves(rules);
        let found = match parsed {
            MoveText::Pass => legal.iter().copied().find(|m| m.is_pass()),
            MoveText::Drop(sq) => legal
                .iter()
                .copied()
                .find(|m| m.is_drop() && m.square() == sq),
            MoveText::Remove(sq) => legal
                .iter()
                .copied()
                .find(|m| m.is_remove() && m.square() == sq),
            MoveText::Step { from, to, capture } => {
                let m = legal
                    .iter()
                    .copied()
                    .find(|m| m.is_step() && m.from() == from && m.to() == to);
                if let Some(m) = m {
                    if capture && !m.is_capture() {
                        return Err(Error::new(format!(
                            "'{}' is written as a capture but {} is empty",
                            text.trim(),
                            name_on(to, self.geometry())
                        )));
                    }
                }
                m
            }
        };
        found.ok_or_else(|| {
            Error::new(format!(
                "'{}' is not legal in position {} (legal: {})",
                text.trim(),
                self.to_text(),
                moves_text(&legal)
            ))
        })
    }

    /// The letter of the cell `sq` in position text, `None` for an empty cell.
    fn cell_letter(&self, sq: Square) -> Option<char> {
        let bit = 1u64 << sq;
        if self.vanished() & bit != 0 {
            return Some('x');
        }
        let color = self.piece_at(sq)?;
        if self.variant() == Variant::Ambiloa {
            let seat = (self.extra().partners & bit != 0) as u8;
            return Some(Player::of(color, seat).letter());
        }
        Some(color.letter())
    }

    /// Position text: rows from the top down separated by `/` (each row's cells from the
    /// left; on the hexagonal board rows `i` … `a`), digit runs for empty cells, then a space
    /// and the side to move. Cell letters: `b`/`w` for pieces, `x` for a vanished cell
    /// (`gemma`); in `ambiloa` `s`, `w`, `n`, `e` for the four players' pieces, and the
    /// player to move. `parachute` adds the reserves `B:W` and marks a pending drop with `@`
    /// after the side: `8/b6w/w6b/b6w/w6b/b6w/w6b/8 b 6:6`, `… b@ 5:6`.
    pub fn to_text(&self) -> String {
        let g = self.geometry();
        let rows = text_rows(g);
        let mut s = String::new();
        for (i, row) in rows.iter().enumerate() {
            let mut empty = 0;
            for &sq in row {
                match self.cell_letter(sq) {
                    None => empty += 1,
                    Some(c) => {
                        if empty > 0 {
                            s.push_str(&empty.to_string());
                            empty = 0;
                        }
                        s.push(c);
                    }
                }
            }
            if empty > 0 {
                s.push_str(&empty.to_string());
            }
            if i + 1 < rows.len() {
                s.push('/');
            }
        }
        s.push(' ');
        match self.player() {
            Some(p) => s.push(p.letter()),
            None => s.push(self.to_move().letter()),
        }
        if self.variant().has_drops() {
            if self.drop_pending() {
                s.push('@');
            }
            s.push_str(&format!(
                " {}:{}",
                self.reserve(Color::Black),
                self.reserve(Color::White)
            ));
        }
        s
    }

    /// Parses position text (see [`Position::to_text`]) for `variant`. The ply counter is 0.
    pub fn from_text(text: &str, variant: Variant) -> Result<Position, Error> {
        let g = variant.geometry();
        let text = text.trim();
        let mut fields = text.split_whitespace();
        let board = fields.next().unwrap_or("");
        let Some(side_text) = fields.next() else {
            return Err(Error::new(format!(
                "position '{text}' lacks the side to move (add ' b' or ' w')"
            )));
        };
        let mut extra = ExtraState::default();
        let (side_letter, pending) = match side_text.strip_suffix('@') {
            Some(s) if variant.has_drops() => (s, true),
            _ => (side_text, false),
        };
        extra.drop_pending = pending;
        let to_move = if variant == Variant::Ambiloa {
            let player = Player::ALL
                .into_iter()
                .find(|p| side_letter.eq_ignore_ascii_case(&p.letter().to_string()))
                .ok_or_else(|| {
                    Error::new(format!(
                        "bad player to move '{side_letter}' in position '{text}' (expected s, w, n or e)"
                    ))
                })?;
            extra.seat = player.seat();
            player.team()
        } else {
            match side_letter {
                "b" | "B" => Color::Black,
                "w" | "W" => Color::White,
                other => {
                    return Err(Error::new(format!(
                        "bad side to move '{other}' in position '{text}' (expected b or w)"
                    )))
                }
            }
        };
        if variant.has_drops() {
            let reserves = fields.next().ok_or_else(|| {
                Error::new(format!(
                    "position '{text}' lacks the reserves (add e.g. ' 6:6')"
                ))
            })?;
            let parsed = reserves
                .split_once(':')
                .and_then(|(b, w)| Some([b.parse::<u8>().ok()?, w.parse::<u8>().ok()?]));
            extra.reserve = parsed.ok_or_else(|| {
                Error::new(format!(
                    "bad reserves '{reserves}' in position '{text}' (expected e.g. 6:6)"
                ))
            })?;
        }
        if let Some(extra_field) = fields.next() {
            return Err(Error::new(format!(
                "unexpected '{extra_field}' after the side to move in position '{text}'"
            )));
        }
        let rows = text_rows(g);
        let board_rows: Vec<&str> = board.split('/').collect();
        if board_rows.len() != rows.len() {
            return Err(Error::new(format!(
                "position '{text}' has {} rows; the {} board needs {}",
                board_rows.len(),
                variant,
                rows.len()
            )));
        }
        let mut pieces = [0u64; 2];
        for (i, (row_text, cells)) in board_rows.iter().zip(&rows).enumerate() {
            let n = cells.len();
            let name = row_name(g, i);
            let mut col = 0usize;
            let mut chars = row_text.char_indices().peekable();
            while let Some((at, ch)) = chars.next() {
                if col >= n && !ch.is_ascii_digit() {
                    return Err(Error::new(format!(
                        "{name} ('{row_text}') is longer than {n} cells"
                    )));
                }
                let lower = ch.to_ascii_lowercase();
                let placed: Option<(Option<Color>, bool)> = match (variant, lower) {
                    (Variant::Ambiloa, 's') => Some((Some(Color::Black), false)),
                    (Variant::Ambiloa, 'n') => Some((Some(Color::Black), true)),
                    (Variant::Ambiloa, 'w') => Some((Some(Color::White), false)),
                    (Variant::Ambiloa, 'e') => Some((Some(Color::White), true)),
                    (Variant::Ambiloa, _) => None,
                    (_, 'b') => Some((Some(Color::Black), false)),
                    (_, 'w') => Some((Some(Color::White), false)),
                    (Variant::Gemma, 'x') => Some((None, false)),
                    _ => None,
                };
                if let Some((color, partner)) = placed {
                    let bit = 1u64 << cells[col];
                    match color {
                        Some(c) => pieces[c.index()] |= bit,
                        None => extra.vanished |= bit,
                    }
                    if partner {
                        extra.partners |= bit;
                    }
                    col += 1;
                    continue;
                }
                match ch {
                    '1'..='9' => {
                        let mut run = ch as usize - '0' as usize;
                        while let Some(&(_, d)) = chars.peek() {
                            if let Some(v) = d.to_digit(10) {
                                run = run.saturating_mul(10).saturating_add(v as usize);
                                chars.next();
                            } else {
                                break;
                            }
                        }
                        col = col.saturating_add(run);
                        if col > n {
                            return Err(Error::new(format!(
                                "{name} ('{row_text}') is longer than {n} cells"
                            )));
                        }
                    }
                    _ => {
                        return Err(Error::new(format!(
                            "unexpected '{ch}' at character {} of {name} ('{row_text}')",
                            at + 1
                        )))
                    }
                }
            }
            if col != n {
                return Err(Error::new(format!(
                    "{name} ('{row_text}') has {col} cells; expected {n}"
                )));
            }
        }
        Position::with_extra(variant, pieces[0], pieces[1], to_move, extra)
            .map_err(|e| Error::new(format!("position '{text}': {e}")))
    }

    /// The board drawn for a human, rows and columns labelled: `x` Black, `o` White
    /// (`S`/`N` and `W`/`E` for the `ambiloa` players), `#` a vanished cell, `.` empty.
    /// The hexagonal board is drawn with its rows offset, cell numbers on the right.
    pub fn to_diagram(&self) -> String {
        let g = self.geometry();
        let n = g.size;
        let glyph = |sq: Square| match self.cell_letter(sq) {
            None => '.',
            Some('x') => '#',
            Some('b') => 'x',
            Some('w') if self.variant() != Variant::Ambiloa => 'o',
            Some(c) => c.to_ascii_uppercase(),
        };
        let mut s = String::new();
        match g.shape {
            Shape::Square => {
                let files: String = (0..n).map(|c| format!(" {}", (b'a' + c) as char)).collect();
                s.push_str(&format!("  {files}\n"));
                for row in (0..n).rev() {
                    s.push_str(&format!("{} ", row + 1));
                    for col in 0..n {
                        let sq = g.square_at(col, row).expect("in range");
                        s.push(' ');
                        s.push(glyph(sq));
                    }
                    s.push_str(&format!("  {}\n", row + 1));
                }
                s.push_str(&format!("  {files}\n"));
            }
            Shape::Hex => {
                for (i, cells) in text_rows(g).iter().enumerate() {
                    let row = n - 1 - i as u8;
                    let indent = 9 - cells.len();
                    s.push_str(&format!("{} {}", (b'a' + row) as char, " ".repeat(indent)));
                    for &sq in cells {
                        s.push(' ');
                        s.push(glyph(sq));
                    }
                    s.push_str(&format!("   1-{}\n", cells.len()));
                }
            }
        }
        let mover = match self.player() {
            Some(p) => format!("{} ({})", p.name(), self.to_move()),
            None => self.to_move().to_string(),
        };
        s.push_str(&format!("{mover} to move"));
        if self.variant().has_drops() {
            s.push_str(&format!(
                "{}; reserves black {} white {}",
                if self.drop_pending() { ", to drop" } else { "" },
                self.reserve(Color::Black),
                self.reserve(Color::White)
            ));
        }
        s.push_str(match self.variant() {
            Variant::Ambiloa => " (S/N = black team, W/E = white team)",
            Variant::Gemma => " (x = black, o = white, # = vanished)",
            _ => " (x = black, o = white)",
        });
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b";

    #[test]
    fn start_text_round_trips() {
        let p = Position::start(Variant::Standard, &Rules::classic());
        assert_eq!(p.to_text(), START);
        assert_eq!(Position::from_text(START, Variant::Standard).unwrap(), p);
        let six = Position::start(Variant::Six, &Rules::classic());
        assert_eq!(
            Position::from_text(&six.to_text(), Variant::Six).unwrap(),
            six
        );
    }

    #[test]
    fn moves_parse_and_print() {
        let rules = Rules::classic();
        let p = Position::start(Variant::Standard, &rules);
        for mv in p.legal_moves(&rules).iter() {
            assert_eq!(p.parse_move(&mv.to_string(), &rules).unwrap(), *mv);
            assert_eq!(
                p.parse_move(&mv.to_string().to_uppercase(), &rules)
                    .unwrap(),
                *mv
            );
        }
        let err = p.parse_move("b1-b4", &rules).unwrap_err();
        assert!(err.message.contains("b1-b4"), "{err}");
        assert!(p
            .parse_move("z9-a1", &rules)
            .unwrap_err()
            .message
            .contains("z9"));
        assert!(p
            .parse_move("b1xb3", &rules)
            .unwrap_err()
            .message
            .contains("capture"));
    }

    #[test]
    fn bad_positions_name_the_problem() {
        let e = |t: &str| {
            Position::from_text(t, Variant::Standard)
                .unwrap_err()
                .message
        };
        assert!(e("1bbbbbb1/w6w b").contains("2 rows"));
        assert!(e("1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1").contains("side to move"));
        assert!(e("1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 x").contains("'x'"));
        assert!(e("1bbbqbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b").contains("'q'"));
        assert!(e("1bbbbbb1/w7w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b").contains("rank 7"));
        assert!(e("1bbbbbb/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b").contains("rank 8"));
        assert!(e("8/8/8/8/8/8/8/8 b").contains("at least one"));
        assert!(e("99999999999999999999/8/8/8/8/8/8/8 b").contains("rank 8"));
    }

    #[test]
    fn garbage_never_panics() {
        let mut rng = crate::testing::XorShift::new(0x1234_5678);
        let alphabet = b"bwBW0123456789/ -x:pasabcdefgh\n\t";
        let p = Position::start(Variant::Standard, &Rules::classic());
        for len in 0..2000usize {
            let mut s = String::new();
            for _ in 0..(len % 70) {
                let state = rng.next_u64();
                let c = if state.is_multiple_of(17) {
                    char::from_u32((state >> 20) as u32 % 0x3000).unwrap_or('?')
                } else {
                    alphabet[(state >> 8) as usize % alphabet.len()] as char
                };
                s.push(c);
            }
            for v in Variant::ALL {
                let _ = Position::from_text(&s, v);
            }
            let _ = p.parse_move(&s, &Rules::classic());
            let _ = crate::record::GameRecord::parse(&s);
        }
    }
}
