//! MCTS players: the selfplay crate's [`selfplay::MctsPlayer`] behind the [`Player`]
//! interface.

use super::{Player, NO_SIM_CAP};
use anyhow::{bail, Result};
use loa::{Game, Move};
use selfplay::{Evaluator, HeuristicEvaluator, MctsConfig, MctsPlayer, UniformEvaluator};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The built-in evaluator called `name` (`heuristic` or `uniform`).
pub fn builtin_evaluator(name: &str) -> Result<Arc<dyn Evaluator>> {
    Ok(match name {
        "heuristic" => Arc::new(HeuristicEvaluator::new()),
        "uniform" => Arc::new(UniformEvaluator::new()),
        other => bail!("unknown built-in evaluator '{other}' (expected heuristic or uniform)"),
    })
}

/// An MCTS player named `name` with `evaluator` and the search settings `config` (players
/// use no root noise and play the most-visited move). Without `ms` it runs `sims` simulations per move; with `ms` it
/// searches for `ms` milliseconds per move (the clock starts when the move is asked for),
/// stopping early at `sims` simulations unless `sims` is [`NO_SIM_CAP`].
pub fn build(
    name: String,
    evaluator: Arc<dyn Evaluator>,
    config: MctsConfig,
    sims: u32,
    ms: Option<u64>,
    _seed: u64,
) -> Result<Box<dyn Player>> {
    Ok(Box::new(MctsMatchPlayer {
        name,
        sims,
        time: ms.map(Duration::from_millis),
        player: MctsPlayer::new(config, sims, evaluator),
    }))
}

struct MctsMatchPlayer {
    name: String,
    sims: u32,
    time: Option<Duration>,
    player: MctsPlayer,
}

impl Player for MctsMatchPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        match self.time {
            Some(t) => Ok(self
                .player
                .choose_move_until(game, Instant::now() + t, self.sims)?),
            None => Ok(self.player.choose_move(game)?),
        }
    }
    fn choose_move_within(&mut self, game: &Game, budget: Duration) -> Result<Move> {
        let cap = if self.time.is_some() {
            self.sims
        } else {
            NO_SIM_CAP
        };
        Ok(self
            .player
            .choose_move_until(game, Instant::now() + budget, cap)?)
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn last_info(&self) -> Option<String> {
        Some(format!("{:?}", self.player.last_stats()))
    }
}
