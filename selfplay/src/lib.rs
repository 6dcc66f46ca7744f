//! `selfplay`: MCTS with a solver, the batched [`Evaluator`] trait, self-play workers and
//! game data. No torch: any model reaches search through [`Evaluator`].

pub mod evaluator;

pub use evaluator::{EvalBatch, EvalError, Evaluator};
