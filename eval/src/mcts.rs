//! MCTS players: the selfplay crate's [`selfplay::MctsPlayer`] behind the [`Player`]
//! interface.

use crate::player::Player;
use anyhow::{bail, Result};
use loa::{Game, Move};
use selfplay::{Evaluator, HeuristicEvaluator, MctsConfig, MctsPlayer, UniformEvaluator};
use std::sync::Arc;

/// The built-in evaluator called `name` (`heuristic` or `uniform`).
pub fn builtin_evaluator(name: &str) -> Result<Arc<dyn Evaluator>> {
    Ok(match name {
        "heuristic" => Arc::new(HeuristicEvaluator::new()),
        "uniform" => Arc::new(UniformEvaluator::new()),
        other => bail!("unknown built-in evaluator '{other}' (expected heuristic or uniform)"),
    })
}

/// An MCTS player named `name` running `sims` simulations per move with `evaluator`
/// (default [`MctsConfig`]: no root noise, most-visited move).
pub fn build(
    name: String,
    evaluator: Arc<dyn Evaluator>,
    sims: u32,
    _seed: u64,
) -> Result<Box<dyn Player>> {
    Ok(Box::new(MctsMatchPlayer {
        name,
        player: MctsPlayer::new(MctsConfig::default(), sims, evaluator),
    }))
}

struct MctsMatchPlayer {
    name: String,
    player: MctsPlayer,
}

impl Player for MctsMatchPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        Ok(self.player.choose_move(game)?)
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn last_info(&self) -> Option<String> {
        Some(format!("{:?}", self.player.last_stats()))
    }
}
