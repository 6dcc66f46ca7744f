//! `selfplay`: MCTS with a solver, the batched [`Evaluator`] trait, self-play workers and
//! game data. No torch: any model reaches search through [`Evaluator`].
//!
//! * [`evaluator`]: the batched evaluator interface; [`evaluators`]: uniform and heuristic.
//! * [`search`]: one batched MCTS ([`Search`]); [`player`]: [`MctsPlayer`] for matches.
//! * [`data`]: training samples and shard files.
//! * [`config`]: [`MctsConfig`], [`SelfplayConfig`].

pub mod config;
pub mod data;
pub mod evaluator;
pub mod evaluators;
mod gumbel;
pub mod player;
pub mod search;
mod tree;

pub use config::{MctsConfig, SelfplayConfig};
pub use data::{read_shard, write_shard, DataError, Sample};
pub use evaluator::{EvalBatch, EvalError, Evaluator};
pub use evaluators::{HeuristicEvaluator, UniformEvaluator};
pub use player::MctsPlayer;
pub use search::{RootMove, Search, SearchStats};
