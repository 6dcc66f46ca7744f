//! The results file of a match: one [`GameResult`] per line of `results.jsonl`.

use anyhow::{bail, Context, Result};
use loa::{Color, Outcome, Rules, Variant};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// [`loa::Color`] as results files name it (`black`, `white`).
#[derive(Serialize, Deserialize)]
#[serde(remote = "Color", rename_all = "lowercase")]
enum ColorName {
    Black,
    White,
}

/// A value written as its text form ([`fmt::Display`]) and read back with [`FromStr`]
/// (`variant` as `standard`, `rules` as their spec `classic,repetition=off`); a text
/// that does not parse is an error naming it.
mod text_form {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::fmt::Display;
    use std::str::FromStr;

    pub fn serialize<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(value)
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|e| D::Error::custom(format!("'{text}': {e}")))
    }
}

/// How a game ended, as results files name it (`black`, `white`: that colour won; `draw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameOutcome {
    /// Black won.
    Black,
    /// White won.
    White,
    /// A draw (by the rules or adjudicated).
    Draw,
}

impl GameOutcome {
    /// The outcome of a game that ended with `outcome` (`None`: stopped, a draw).
    pub fn of(outcome: Option<Outcome>) -> GameOutcome {
        match outcome {
            Some(Outcome::Win(Color::Black)) => GameOutcome::Black,
            Some(Outcome::Win(Color::White)) => GameOutcome::White,
            Some(Outcome::Draw) | None => GameOutcome::Draw,
        }
    }

    /// `black`, `white` or `draw`.
    pub fn name(self) -> &'static str {
        match self {
            GameOutcome::Black => "black",
            GameOutcome::White => "white",
            GameOutcome::Draw => "draw",
        }
    }
}

impl fmt::Display for GameOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One finished game, as written to `results.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// Game number in the match (from 0).
    pub game: usize,
    /// Name of player A and B (their specs).
    pub a: String,
    /// Name of player B.
    pub b: String,
    /// Names of the players with Black and White (Black moves first unless the rules say
    /// otherwise: see `first`).
    pub black: String,
    /// Name of the player with White.
    pub white: String,
    /// The colour that moved first.
    #[serde(with = "ColorName")]
    pub first: Color,
    /// The variant (written as its name).
    #[serde(with = "text_form")]
    pub variant: Variant,
    /// The rules (written as their spec).
    #[serde(with = "text_form")]
    pub rules: Rules,
    /// The opening moves (space separated).
    pub opening: String,
    /// Who won: `black`, `white` or `draw`.
    pub result: GameOutcome,
    /// Score of player A (1, 0.5, 0).
    pub score_a: f64,
    /// Plies played (opening included).
    pub plies: u32,
    /// Whether the game was stopped by `max_plies` and scored a draw.
    pub adjudicated: bool,
    /// Wall time of the game and mean thinking time per move of A and B, in seconds.
    pub seconds: f64,
    /// Mean thinking time per move of A, in seconds.
    pub a_seconds_per_move: f64,
    /// Mean thinking time per move of B, in seconds.
    pub b_seconds_per_move: f64,
    /// The game record file, relative to the output directory.
    pub record: Option<String>,
}

impl GameResult {
    /// Score of the player who moved first.
    pub fn score_first(&self) -> f64 {
        let first_is_a = (self.first == Color::Black) == (self.black == self.a);
        if first_is_a {
            self.score_a
        } else {
            1.0 - self.score_a
        }
    }
    /// The name of the player who moved first and of the other one.
    pub fn first_and_second(&self) -> (&str, &str) {
        if self.first == Color::Black {
            (&self.black, &self.white)
        } else {
            (&self.white, &self.black)
        }
    }
}

/// The game results under a folder ([`read_results`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultsRead {
    /// Every game, by file (in path order), then line.
    pub games: Vec<GameResult>,
    /// The truncated last lines skipped (a crash while appending), each as `FILE line N`:
    /// the caller reports them.
    pub skipped: Vec<String>,
}

/// Reads every `*.jsonl` results file under `dir` (recursively). A malformed line is an
/// error naming the file and line, except a truncated last line (a crash while appending),
/// which is skipped and named in [`ResultsRead::skipped`].
pub fn read_results(dir: &Path) -> Result<ResultsRead> {
    let mut files = Vec::new();
    collect_jsonl(dir, &mut files)?;
    files.sort();
    let mut out = ResultsRead::default();
    for f in files {
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<GameResult>(line) {
                Ok(r) => out.games.push(r),
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {
                    out.skipped.push(format!("{} line {}", f.display(), i + 1));
                }
                Err(e) => bail!("{} line {}: not a game result: {e}", f.display(), i + 1),
            }
        }
    }
    Ok(out)
}

fn collect_jsonl(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory {}", dir.display()))?
    {
        let path = entry?.path();
        if path.is_dir() {
            collect_jsonl(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line as results files have always written it: it reads into the typed fields
    /// and writes back the same text; an unknown colour is an error.
    #[test]
    fn colours_read_and_write_as_their_names() {
        let line = r#"{"game":3,"a":"random","b":"alphabeta:depth=1","black":"alphabeta:depth=1","white":"random","first":"white","variant":"standard","rules":"first=black,simultaneous=mover-wins,no-move=pass,repetition=3-fold,ply-limit=off","opening":"b1-b3 a2-c2","result":"draw","score_a":0.5,"plies":40,"adjudicated":true,"seconds":0.5,"a_seconds_per_move":0.0,"b_seconds_per_move":0.001,"record":null}"#;
        let r: GameResult = serde_json::from_str(line).unwrap();
        assert_eq!((r.first, r.result), (Color::White, GameOutcome::Draw));
        assert_eq!(serde_json::to_string(&r).unwrap(), line);
        assert_eq!(r.rules, Rules::classic());
        // White moved first and is player A here ("random").
        assert_eq!(r.first_and_second(), ("random", "alphabeta:depth=1"));
        assert_eq!(r.score_first(), 0.5);
        let won = line.replace(r#""result":"draw""#, r#""result":"black""#);
        let r: GameResult = serde_json::from_str(&won).unwrap();
        assert_eq!(r.result.to_string(), "black");
        assert_eq!(
            GameOutcome::of(Some(Outcome::Win(Color::White))),
            GameOutcome::White
        );
        assert_eq!(GameOutcome::of(None), GameOutcome::Draw);
        let bad = line.replace(r#""first":"white""#, r#""first":"green""#);
        assert!(serde_json::from_str::<GameResult>(&bad).is_err());
    }

    /// The variant and rules read into their types and write back as the same text; a
    /// variant or rules text that does not parse is an error quoting it.
    #[test]
    fn variant_and_rules_read_as_types() {
        let line = r#"{"game":0,"a":"random","b":"random","black":"random","white":"random","first":"black","variant":"6x6","rules":"first=black,simultaneous=mover-wins,no-move=pass,repetition=off,ply-limit=off","opening":"","result":"white","score_a":0.0,"plies":9,"adjudicated":false,"seconds":0.1,"a_seconds_per_move":0.0,"b_seconds_per_move":0.0,"record":"games/00000.txt"}"#;
        let r: GameResult = serde_json::from_str(line).unwrap();
        assert_eq!(r.variant, Variant::Six);
        assert_eq!(r.rules, "classic,repetition=off".parse::<Rules>().unwrap());
        assert_ne!(r.rules, Rules::classic());
        assert_eq!(serde_json::to_string(&r).unwrap(), line);
        // A preset with overrides, as a hand-written file may give it, reads the same.
        let short = line.replace(
            "first=black,simultaneous=mover-wins,no-move=pass,repetition=off,ply-limit=off",
            "classic,repetition=off",
        );
        assert_eq!(serde_json::from_str::<GameResult>(&short).unwrap(), r);
        let bad = line.replace(r#""variant":"6x6""#, r#""variant":"7x7""#);
        let e = serde_json::from_str::<GameResult>(&bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("7x7"), "{e}");
        let bad = line.replace("repetition=off", "repetition=sometimes");
        let e = serde_json::from_str::<GameResult>(&bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("repetition=sometimes"), "{e}");
    }

    /// A truncated last line is skipped and named for the caller to report; a malformed
    /// line elsewhere is an error naming its file and line.
    #[test]
    fn a_truncated_last_line_is_skipped_and_named() {
        let line = r#"{"game":0,"a":"random","b":"alphabeta:depth=1","black":"alphabeta:depth=1","white":"random","first":"white","variant":"standard","rules":"classic","opening":"","result":"draw","score_a":0.5,"plies":40,"adjudicated":true,"seconds":0.5,"a_seconds_per_move":0.0,"b_seconds_per_move":0.001,"record":null}"#;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("results.jsonl");
        std::fs::write(&file, format!("{line}\n{line}\n{{\"game\": 2, \"a")).unwrap();
        let read = read_results(dir.path()).unwrap();
        assert_eq!(read.games.len(), 2);
        assert_eq!(read.skipped, [format!("{} line 3", file.display())]);
        std::fs::write(&file, format!("{line}\n{{\"game\"\n{line}\n")).unwrap();
        let err = read_results(dir.path()).unwrap_err().to_string();
        assert!(err.contains("results.jsonl line 2"), "{err}");
    }
}
