//! The games that rate a run and the names its players have in its tables: every
//! finished rating and anchor match under `matches/`, model players named by their file
//! (`gen-0003`). Shared by the loop (`src/run/rating.rs`) and `loazero ratings RUN`.

use crate::layout::RunDir;
use anyhow::Result;
use eval::arena::{read_marker, read_results, GameResult};
use eval::elo::Tally;
use eval::ratings::{fit, RatedGame, RatingTable};
use eval::PlayerSpec;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The marker of a finished match.
pub const DONE: &str = "done.json";

/// What `done.json` records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatchDone {
    /// Player A's spec.
    pub a: String,
    /// Player B's spec.
    pub b: String,
    /// A's wins, draws, losses.
    pub tally: Tally,
}

/// The name a player has in the run's tables: a model player is called by its file
/// (`gen-0003`), an alpha-beta player with a learned evaluation by its evaluation's file
/// (`nnue-0002`), anything else by its spec.
pub fn display_name(spec_text: &str) -> String {
    let file = |spec: &PlayerSpec, key: &str| {
        spec.file(key)
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
    };
    match PlayerSpec::parse(spec_text) {
        Ok(spec) if spec.kind().name == eval::player::model::KIND.name => {
            file(&spec, "path").unwrap_or_else(|| spec_text.to_string())
        }
        Ok(spec) if spec.kind().name == eval::player::alphabeta::KIND.name => {
            file(&spec, "eval").unwrap_or_else(|| spec_text.to_string())
        }
        _ => spec_text.to_string(),
    }
}

/// The recorded result of a finished match in `dir`, if any.
pub fn read_done(dir: &Path) -> Result<Option<MatchDone>> {
    read_marker(dir, DONE)
}

/// The finished rating and anchor matches of a run.
pub fn finished_rating_matches(run: &RunDir) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for name in crate::layout::list_names(&run.matches())? {
        if !(name.starts_with("rate-") || name.starts_with("anchors-")) {
            continue;
        }
        let dir = run.matches().join(&name);
        if read_done(&dir)?.is_some() {
            out.push(dir);
        }
    }
    Ok(out)
}

/// Bradley–Terry ratings over every finished rating and anchor match.
pub fn fit_run(run: &RunDir) -> Result<RatingTable> {
    fit(&rated_games(run)?, 0.5)
}

fn rated_game(r: &GameResult) -> RatedGame {
    let (first, second) = r.first_and_second();
    RatedGame {
        first: display_name(first),
        second: display_name(second),
        score_first: r.score_first(),
    }
}

/// The games of the run's finished rating and anchor matches, players named as in its
/// tables ([`display_name`]).
pub fn rated_games(run: &RunDir) -> Result<Vec<RatedGame>> {
    let mut games = Vec::new();
    for dir in finished_rating_matches(run)? {
        games.extend(read_games(&dir)?.iter().map(rated_game));
    }
    Ok(games)
}

/// The game results under `dir` ([`read_results`]), each truncated last line it skipped
/// reported on stderr as a warning.
pub fn read_games(dir: &Path) -> Result<Vec<GameResult>> {
    let read = read_results(dir)?;
    for line in &read.skipped {
        eprintln!("warning: skipping truncated last line: {line}");
    }
    Ok(read.games)
}
