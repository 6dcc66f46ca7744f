//! Text forms: square names, moves (`b1-d3`, `b1xd3`, `pass`) and position text
//! (`1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b`). Every parser returns a
//! [`NotationError`] naming the offending text; none panics on any input.

use crate::geometry::{Geometry, Shape, Square};
use crate::moves::Move;
use crate::rules::Rules;
use crate::{Color, Position, Variant};
use std::fmt;

/// A parse failure: what was wrong and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotationError {
    /// Human-readable description naming the bad token.
    pub message: String,
}

impl NotationError {
    pub(crate) fn new(message: impl Into<String>) -> NotationError {
        NotationError {
            message: message.into(),
        }
    }
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for NotationError {}

/// The name of a square-board square, e.g. `a1`.
pub fn square_name(sq: Square) -> String {
    let file = (b'a' + sq % 8) as char;
    format!("{file}{}", sq / 8 + 1)
}

/// Parses a square name (`e4`, case-insensitive) on board `g`.
pub fn parse_square(text: &str, g: &Geometry) -> Result<Square, NotationError> {
    let bytes = text.as_bytes();
    let bad = || NotationError::new(format!("'{text}' is not a square of the {} board", g.name));
    match g.shape {
        Shape::Square => {
            if bytes.len() != 2 {
                return Err(bad());
            }
            let file = bytes[0].to_ascii_lowercase().wrapping_sub(b'a');
            let rank = bytes[1].wrapping_sub(b'1');
            g.square_at(file, rank).ok_or_else(bad)
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
        from: Square,
        to: Square,
        capture: bool,
    },
}

/// Parses the syntax of a move (no legality check).
pub fn parse_move_text(text: &str, g: &Geometry) -> Result<MoveText, NotationError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("pass") {
        return Ok(MoveText::Pass);
    }
    let sep = t.find(['-', 'x', 'X', ':']).ok_or_else(|| {
        NotationError::new(format!(
            "'{t}' is not a move (expected e.g. b1-d3, b1xd3 or pass)"
        ))
    })?;
    let (from, rest) = t.split_at(sep);
    let capture = !rest.starts_with('-');
    let to = &rest[1..];
    let from =
        parse_square(from, g).map_err(|e| NotationError::new(format!("in move '{t}': {e}")))?;
    let to = parse_square(to, g).map_err(|e| NotationError::new(format!("in move '{t}': {e}")))?;
    Ok(MoveText::Step { from, to, capture })
}

impl Position {
    /// Parses `text` as a legal move of this position under `rules`. A capture may be
    /// written with `-`; a non-capture written with `x` is an error.
    pub fn parse_move(&self, text: &str, rules: &Rules) -> Result<Move, NotationError> {
        let parsed = parse_move_text(text, self.geometry())?;
        let legal = self.legal_moves(rules);
        let found = match parsed {
            MoveText::Pass => legal.iter().copied().find(|m| m.is_pass()),
            MoveText::Step { from, to, capture } => {
                let m = legal
                    .iter()
                    .copied()
                    .find(|m| !m.is_pass() && m.from() == from && m.to() == to);
                if let Some(m) = m {
                    if capture && !m.is_capture() {
                        return Err(NotationError::new(format!(
                            "'{}' is written as a capture but {} is empty",
                            text.trim(),
                            square_name(to)
                        )));
                    }
                }
                m
            }
        };
        found.ok_or_else(|| {
            NotationError::new(format!(
                "'{}' is not legal in position {} (legal: {})",
                text.trim(),
                self.to_text(),
                legal
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
        })
    }

    /// Position text: ranks from the top down separated by `/`, `b`/`w` for pieces, digit
    /// runs for empty squares, then a space and the side to move.
    pub fn to_text(&self) -> String {
        let g = self.geometry();
        let n = g.size;
        let mut s = String::new();
        for row in (0..n).rev() {
            let mut empty = 0;
            for col in 0..n {
                let sq = g.square_at(col, row).expect("in range");
                match self.piece_at(sq) {
                    None => empty += 1,
                    Some(c) => {
                        if empty > 0 {
                            s.push_str(&empty.to_string());
                            empty = 0;
                        }
                        s.push(c.letter());
                    }
                }
            }
            if empty > 0 {
                s.push_str(&empty.to_string());
            }
            if row > 0 {
                s.push('/');
            }
        }
        s.push(' ');
        s.push(self.to_move().letter());
        s
    }

    /// Parses position text (see [`Position::to_text`]) for `variant`. The ply counter is 0.
    pub fn from_text(text: &str, variant: Variant) -> Result<Position, NotationError> {
        let g = variant.geometry();
        let n = g.size as usize;
        let text = text.trim();
        let (board, side) = match text.split_once(char::is_whitespace) {
            Some((b, s)) => (b, s.trim()),
            None => {
                return Err(NotationError::new(format!(
                    "position '{text}' lacks the side to move (add ' b' or ' w')"
                )))
            }
        };
        let to_move = match side {
            "b" | "B" => Color::Black,
            "w" | "W" => Color::White,
            other => {
                return Err(NotationError::new(format!(
                    "bad side to move '{other}' in position '{text}' (expected b or w)"
                )))
            }
        };
        let rows: Vec<&str> = board.split('/').collect();
        if rows.len() != n {
            return Err(NotationError::new(format!(
                "position '{text}' has {} ranks; the {} board needs {n}",
                rows.len(),
                variant
            )));
        }
        let mut pieces = [0u64; 2];
        for (i, row_text) in rows.iter().enumerate() {
            let rank_name = n - i;
            let row = (n - 1 - i) as u8;
            let mut col = 0usize;
            let mut chars = row_text.char_indices().peekable();
            while let Some((at, ch)) = chars.next() {
                if col >= n {
                    return Err(NotationError::new(format!(
                        "rank {rank_name} ('{row_text}') is longer than {n} squares"
                    )));
                }
                match ch {
                    'b' | 'B' | 'w' | 'W' => {
                        let color = if ch.eq_ignore_ascii_case(&'b') {
                            Color::Black
                        } else {
                            Color::White
                        };
                        let sq = g.square_at(col as u8, row).expect("col checked");
                        pieces[color.index()] |= 1u64 << sq;
                        col += 1;
                    }
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
                            return Err(NotationError::new(format!(
                                "rank {rank_name} ('{row_text}') is longer than {n} squares"
                            )));
                        }
                    }
                    _ => {
                        return Err(NotationError::new(format!(
                            "unexpected '{ch}' at character {} of rank {rank_name} ('{row_text}')",
                            at + 1
                        )))
                    }
                }
            }
            if col != n {
                return Err(NotationError::new(format!(
                    "rank {rank_name} ('{row_text}') has {col} squares; expected {n}"
                )));
            }
        }
        Position::new(variant, pieces[0], pieces[1], to_move)
            .map_err(|e| NotationError::new(format!("position '{text}': {e}")))
    }

    /// The board drawn for a human: ranks and files labelled, `●` Black, `○` White.
    pub fn to_diagram(&self) -> String {
        let g = self.geometry();
        let n = g.size;
        let files: String = (0..n).map(|c| format!(" {}", (b'a' + c) as char)).collect();
        let mut s = format!("  {files}\n");
        for row in (0..n).rev() {
            s.push_str(&format!("{} ", row + 1));
            for col in 0..n {
                let sq = g.square_at(col, row).expect("in range");
                s.push(' ');
                s.push(match self.piece_at(sq) {
                    Some(Color::Black) => 'x',
                    Some(Color::White) => 'o',
                    None => '.',
                });
            }
            s.push_str(&format!("  {}\n", row + 1));
        }
        s.push_str(&format!("  {files}\n"));
        s.push_str(&format!(
            "{} to move (x = black, o = white)",
            self.to_move()
        ));
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
        assert!(e("1bbbbbb1/w6w b").contains("2 ranks"));
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
        let mut state = 0x1234_5678_u64;
        let alphabet = b"bwBW0123456789/ -x:pasabcdefgh\n\t";
        let p = Position::start(Variant::Standard, &Rules::classic());
        for len in 0..2000usize {
            let mut s = String::new();
            for _ in 0..(len % 70) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
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
