//! Game records: numbered move pairs, e.g. `1. c8-c6 h4-f2 2. g8-g6 h2-e2`. Drops
//! (`@e5`) and removals (`~e5`) are moves of their own, so a `parachute` compound turn
//! takes two tokens.
//!
//! Parsing is purely syntactic: move numbers (`12.`, `12...`) are skipped, a trailing
//! result (`1-0`, `0-1`, `1/2-1/2`, `*`) is kept, `#`/`;` start comments to the end of the
//! line. Moves are matched against positions by [`crate::Game::play_text`].

use crate::notation::NotationError;
use crate::Move;

/// A move list read from text.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GameRecord {
    /// The move tokens in order, as written.
    pub moves: Vec<String>,
    /// The result token, if the record has one.
    pub result: Option<String>,
}

const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

impl GameRecord {
    /// Splits a record into move tokens. Errors name the token and its line.
    pub fn parse(text: &str) -> Result<GameRecord, NotationError> {
        let mut record = GameRecord::default();
        for (line_no, line) in text.lines().enumerate() {
            let line = line.split(['#', ';']).next().unwrap_or("");
            for raw in line.split_whitespace() {
                // "12." / "12..." alone, or glued to the move as in "12.c8-c6".
                let token = raw.trim_start_matches(|c: char| c.is_ascii_digit());
                let token = if token.len() < raw.len() && token.starts_with('.') {
                    token.trim_start_matches('.')
                } else {
                    raw
                };
                if token.is_empty() {
                    continue;
                }
                if RESULTS.contains(&token) {
                    if record.result.is_some() {
                        return Err(NotationError::new(format!(
                            "second result '{token}' on line {}",
                            line_no + 1
                        )));
                    }
                    record.result = Some(token.to_string());
                    continue;
                }
                if record.result.is_some() {
                    return Err(NotationError::new(format!(
                        "move '{token}' after the result on line {}",
                        line_no + 1
                    )));
                }
                let b = token.as_bytes();
                let plausible = token.eq_ignore_ascii_case("pass")
                    || (b.len() == 3
                        && (b[0] == b'@' || b[0] == b'~')
                        && b[1].is_ascii_alphabetic()
                        && b[2].is_ascii_digit())
                    || (b.len() >= 5
                        && b.len() <= 7
                        && b[0].is_ascii_alphabetic()
                        && b[1].is_ascii_digit()
                        && b[2..].iter().any(|c| b"-xX:".contains(c))
                        && b.iter()
                            .all(|c| c.is_ascii_alphanumeric() || b"-:".contains(c)));
                if !plausible {
                    return Err(NotationError::new(format!(
                        "'{raw}' on line {} is neither a move number, a move nor a result",
                        line_no + 1
                    )));
                }
                record.moves.push(token.to_string());
            }
        }
        Ok(record)
    }

    /// Writes moves as numbered pairs, one pair per line, with an optional result.
    pub fn format(moves: &[Move], result: Option<&str>) -> String {
        let mut s = String::new();
        for (i, pair) in moves.chunks(2).enumerate() {
            s.push_str(&format!("{}.", i + 1));
            for mv in pair {
                s.push(' ');
                s.push_str(&mv.to_string());
            }
            s.push('\n');
        }
        if let Some(r) = result {
            s.push_str(r);
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Game, Rules, Variant};

    #[test]
    fn parses_numbered_pairs() {
        let r = GameRecord::parse("1. c8-c6 h4-f2\n2. g8-g6 h2-e2 # comment\n3.b1-e4 1-0").unwrap();
        assert_eq!(r.moves, ["c8-c6", "h4-f2", "g8-g6", "h2-e2", "b1-e4"]);
        assert_eq!(r.result.as_deref(), Some("1-0"));
    }

    #[test]
    fn errors_name_token_and_line() {
        let e = GameRecord::parse("1. c8-c6\n2. hello").unwrap_err();
        assert!(
            e.message.contains("hello") && e.message.contains("line 2"),
            "{e}"
        );
        assert!(GameRecord::parse("1. c8-c6 1-0 d1-d3").is_err());
    }

    #[test]
    fn format_round_trips() {
        let rules = Rules::classic();
        let mut g = Game::new(Variant::Standard, rules);
        for i in 0..15 {
            if g.is_over() {
                break;
            }
            let moves = g.legal_moves();
            g.play(moves[(i * 5) % moves.len()]).unwrap();
        }
        let text = GameRecord::format(g.moves(), Some("*"));
        let parsed = GameRecord::parse(&text).unwrap();
        let mut h = Game::new(Variant::Standard, rules);
        for m in &parsed.moves {
            h.play_text(m).unwrap();
        }
        assert_eq!(h.moves(), g.moves());
    }
}
