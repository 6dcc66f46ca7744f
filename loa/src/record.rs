//! Game records: numbered move pairs, e.g. `1. c8-c6 h4-f2 2. g8-g6 h2-e2`. Drops
//! (`@e5`) and removals (`~e5`) are moves of their own, so a `parachute` compound turn
//! takes two tokens.
//!
//! Parsing is purely syntactic: move numbers (`12.`, `12...`) are skipped, a trailing
//! result (`1-0`, `0-1`, `1/2-1/2`, `*`) is kept, `#`/`;` start comments to the end of the
//! line. Moves are matched against positions by [`crate::Game::play_text`].
//!
//! Header lines say how to replay the moves: a line `# variant NAME`, `# rules SPEC` or
//! `# start POSITION` (at most one of each, anywhere in the record) is kept as text in
//! [`GameRecord::header`]; loazero writes them at the top of every record, and
//! `loazero replay` uses them unless told otherwise. A line `# end OUTCOME (HOW)` says how
//! a game ended that its moves do not end (`# end white (black resigned)`, `# end draw
//! (adjudicated a draw at the ply cap)`); self-play records carry it. Other comment lines
//! are ignored.

use crate::Error;
use crate::Move;
use crate::{Color, Outcome};

/// A move list read from text.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GameRecord {
    /// The move tokens in order, as written.
    pub moves: Vec<String>,
    /// The result token, if the record has one.
    pub result: Option<String>,
    /// The header lines, as written.
    pub header: RecordHeader,
}

/// The header lines of a record (see the [module docs](self)), each as written after its
/// key.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RecordHeader {
    /// `# variant NAME`.
    pub variant: Option<String>,
    /// `# rules SPEC`.
    pub rules: Option<String>,
    /// `# start POSITION`.
    pub start: Option<String>,
    /// `# end OUTCOME (HOW)`: how the game ended, e.g. `white (black resigned)` (see
    /// [`RecordHeader::end_outcome`]).
    pub end: Option<String>,
}

impl RecordHeader {
    /// The header lines of these values, one `# key value` line each (none when empty).
    pub fn format(&self) -> String {
        let mut s = String::new();
        for (key, value) in [
            ("variant", &self.variant),
            ("rules", &self.rules),
            ("start", &self.start),
            ("end", &self.end),
        ] {
            if let Some(v) = value {
                s.push_str(&format!("# {key} {v}\n"));
            }
        }
        s
    }

    /// Takes `line` if it is a header line; errors on a second line of the same key.
    fn take(&mut self, line: &str, line_no: usize) -> Result<(), Error> {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            return Ok(());
        };
        let rest = rest.trim();
        let (key, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let slot = match key {
            "variant" => &mut self.variant,
            "rules" => &mut self.rules,
            "start" => &mut self.start,
            "end" => &mut self.end,
            _ => return Ok(()),
        };
        let value = value.trim();
        if value.is_empty() {
            return Ok(());
        }
        if slot.is_some() {
            return Err(Error::new(format!(
                "second '# {key}' header on line {}",
                line_no + 1
            )));
        }
        *slot = Some(value.to_string());
        Ok(())
    }
}

impl RecordHeader {
    /// The outcome an `# end` line names by its first word (`black`, `white` or `draw`),
    /// with the rest of the line (what is in its parentheses, e.g. `black resigned`).
    /// Errors on an `# end` line whose first word is none of these.
    pub fn end_outcome(&self) -> Result<Option<(Outcome, String)>, Error> {
        let Some(end) = &self.end else {
            return Ok(None);
        };
        let (word, rest) = end.split_once(char::is_whitespace).unwrap_or((end, ""));
        let outcome = match word {
            "black" => Outcome::Win(Color::Black),
            "white" => Outcome::Win(Color::White),
            "draw" => Outcome::Draw,
            other => {
                return Err(Error::new(format!(
                    "'# end {end}': '{other}' is not an outcome (black, white or draw)"
                )))
            }
        };
        let how = rest.trim().trim_start_matches('(').trim_end_matches(')');
        Ok(Some((outcome, how.trim().to_string())))
    }
}

const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

impl GameRecord {
    /// Splits a record into move tokens. Errors name the token and its line.
    pub fn parse(text: &str) -> Result<GameRecord, Error> {
        let mut record = GameRecord::default();
        for (line_no, line) in text.lines().enumerate() {
            record.header.take(line, line_no)?;
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
                        return Err(Error::new(format!(
                            "second result '{token}' on line {}",
                            line_no + 1
                        )));
                    }
                    record.result = Some(token.to_string());
                    continue;
                }
                if record.result.is_some() {
                    return Err(Error::new(format!(
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
                    return Err(Error::new(format!(
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
    fn header_lines_are_kept() {
        let text = "# game 3: black a vs white b\n# variant parachute\n# rules icga\n\
                    # start 1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 2:2\n1. b1-b3 *\n";
        let r = GameRecord::parse(text).unwrap();
        let want = RecordHeader {
            variant: Some("parachute".into()),
            rules: Some("icga".into()),
            start: Some("1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 2:2".into()),
            end: None,
        };
        assert_eq!(r.header, want);
        assert_eq!(r.moves, ["b1-b3"]);
        assert_eq!(GameRecord::parse(&want.format()).unwrap().header, want);
        let e = GameRecord::parse("# variant gemma\n# variant 6x6\n").unwrap_err();
        assert!(e.message.contains("line 2"), "{e}");
        assert_eq!(
            GameRecord::parse("#variants\n").unwrap().header,
            RecordHeader::default()
        );
    }

    #[test]
    fn an_end_line_names_how_the_game_ended() {
        let text = "# variant standard\n# end white (black resigned)\n1. b1-b3 h2-f2 *\n";
        let r = GameRecord::parse(text).unwrap();
        assert_eq!(r.header.end.as_deref(), Some("white (black resigned)"));
        assert_eq!(
            r.header.end_outcome().unwrap(),
            Some((Outcome::Win(Color::White), "black resigned".to_string()))
        );
        assert_eq!(
            GameRecord::parse(&r.header.format()).unwrap().header,
            r.header
        );
        let draw = RecordHeader {
            end: Some("draw (adjudicated a draw at the ply cap)".into()),
            ..RecordHeader::default()
        };
        assert_eq!(
            draw.end_outcome().unwrap(),
            Some((
                Outcome::Draw,
                "adjudicated a draw at the ply cap".to_string()
            ))
        );
        assert_eq!(RecordHeader::default().end_outcome().unwrap(), None);
        let bad = RecordHeader {
            end: Some("blue (red resigned)".into()),
            ..RecordHeader::default()
        };
        let e = bad.end_outcome().unwrap_err();
        assert!(e.message.contains("'blue'"), "{e}");
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
