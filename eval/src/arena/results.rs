//! The results file of a match: one [`GameResult`] per line of `results.jsonl`.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
    pub first: String,
    /// The variant's name.
    pub variant: String,
    /// The rules (their spec).
    pub rules: String,
    /// The opening moves (space separated).
    pub opening: String,
    /// `black`, `white` or `draw`.
    pub result: String,
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
        let first_is_a = (self.first == "black") == (self.black == self.a);
        if first_is_a {
            self.score_a
        } else {
            1.0 - self.score_a
        }
    }
    /// The name of the player who moved first and of the other one.
    pub fn first_and_second(&self) -> (&str, &str) {
        if self.first == "black" {
            (&self.black, &self.white)
        } else {
            (&self.white, &self.black)
        }
    }
}

/// Reads every `*.jsonl` results file under `dir` (recursively). A malformed line is an
/// error naming the file and line, except a truncated last line (a crash while appending),
/// which is skipped with a warning on stderr.
pub fn read_results(dir: &Path) -> Result<Vec<GameResult>> {
    let mut files = Vec::new();
    collect_jsonl(dir, &mut files)?;
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<GameResult>(line) {
                Ok(r) => out.push(r),
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {
                    eprintln!(
                        "warning: {}: skipping truncated last line {}",
                        f.display(),
                        i + 1
                    );
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
