//! MCTS players: the selfplay crate's search behind the [`Player`] interface.

use crate::player::Player;
use anyhow::{bail, Result};
use selfplay::Evaluator;
use std::sync::Arc;

/// The built-in evaluator called `name` (`heuristic` or `uniform`).
pub fn builtin_evaluator(name: &str) -> Result<Arc<dyn Evaluator>> {
    bail!("mcts:evaluator={name}: the selfplay crate does not provide its evaluators yet")
}

/// An MCTS player named `name` running `sims` simulations per move with `evaluator`.
pub fn build(
    name: String,
    _evaluator: Arc<dyn Evaluator>,
    _sims: u32,
    _seed: u64,
) -> Result<Box<dyn Player>> {
    bail!("player '{name}': the selfplay crate does not provide its MCTS player yet")
}
