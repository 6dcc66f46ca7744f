//! The self-play algorithm of a run (`run.algorithm`): AlphaZero's MCTS or Descent, and
//! [`play`], which plays a round of self-play games with it for the loop, its
//! background self-play and joined `selfplay --dir` processes alike.

use selfplay::{Cancel, Evaluator, FinishedGame, ParkedGames, Progress, SelfplayConfig};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How self-play searches and what it records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// MCTS with the network's policy and value (`[selfplay]`, `[selfplay.mcts]`): one
    /// sample per move played, with its search's policy target.
    #[default]
    Alphazero,
    /// Descent (`[selfplay.descent]`, `selfplay::descent`): minimax over the network's
    /// values, each iteration down to the end of the game; tree learning records every
    /// state the search valued. Self-play is lockstep (`run.continuous_selfplay` does
    /// not apply).
    Descent,
}

/// Plays `games` self-play games with `algorithm` (see [`Algorithm`]): deterministic
/// (`run.deterministic`), continuous with `parked` games carried between calls
/// (AlphaZero with `run.continuous_selfplay`), or lockstep. `cancel` stops it within
/// about half a second, even in the middle of a game (see [`selfplay::cancel`]): the
/// finished games are handed to `sink`, the games under way dropped (parked with
/// `parked`), and the call fails with [`selfplay::Error::Cancelled`].
#[allow(clippy::too_many_arguments)]
pub fn play(
    algorithm: Algorithm,
    sp: &SelfplayConfig,
    evaluator: Arc<dyn Evaluator>,
    games: u64,
    deterministic: bool,
    parked: Option<&mut ParkedGames>,
    cancel: &Cancel,
    sink: impl FnMut(FinishedGame) -> Result<(), String>,
    progress: impl FnMut(&Progress),
) -> Result<Progress, selfplay::Error> {
    match (algorithm, deterministic, parked) {
        (Algorithm::Descent, _, _) => selfplay::run_descent_selfplay(
            sp,
            evaluator,
            games,
            deterministic,
            cancel,
            sink,
            progress,
        ),
        (Algorithm::Alphazero, deterministic, parked) => {
            let schedule = match (deterministic, parked) {
                (true, _) => selfplay::Schedule::Deterministic,
                (false, Some(parked)) => selfplay::Schedule::Continuous(parked),
                (false, None) => selfplay::Schedule::RunOut,
            };
            selfplay::run_selfplay(sp, evaluator, games, schedule, cancel, sink, progress)
        }
    }
}

/// Games one worker thread of `algorithm` advances in lockstep.
pub fn games_per_worker(algorithm: Algorithm, sp: &SelfplayConfig) -> usize {
    match algorithm {
        Algorithm::Alphazero => sp.games_per_worker,
        Algorithm::Descent => sp.descent.games_per_worker,
    }
}
