//! `selfplay`: MCTS with a solver, the batched [`Evaluator`] trait, self-play workers and
//! game data. No torch: any model reaches search through [`Evaluator`].
//!
//! * [`evaluator`]: the batched evaluator interface; [`evaluators`]: uniform and heuristic.
//! * [`search`]: one batched MCTS ([`Search`]); [`player`]: [`MctsPlayer`] for matches.
//! * [`ubfm`]: Unbounded Best-First Minimax with completion ([`Ubfm`]), a value-only
//!   search over a transposition table, and its Descent mode.
//! * [`descent`]: Descent self-play with tree learning ([`run_descent_selfplay`]).
//! * [`root_tactics`]: [`RootCheck`], the exact tactical check every searching player
//!   makes at the root (forced wins within three turns, losses by distance).
//! * [`data`]: training samples and shard files.
//! * [`worker`]: parallel self-play ([`run_selfplay`], reporting [`Progress`] numbers;
//!   the binary draws them); [`output`]: shards and game records; [`bench`](mod@bench):
//!   search speed.
//! * [`config`]: [`MctsConfig`], [`DescentConfig`], [`SelfplayConfig`]; [`device`]: where and
//!   in what precision a network runs ([`Device`], [`Precision`]: names, no torch here).
//! * [`encoding`]: positions → the network's `u8` input planes (side-to-move view), per
//!   variant, versioned; [`policy`]: move ⇄ policy index of the network's output. The one
//!   encoder: the trainer (`train`) and the Python wheel use it.
//! * [`cancel`]: [`Cancel`], the stop request that self-play and matches poll.

pub mod atomic_file;
pub mod bench;
pub mod cancel;
pub mod config;
pub mod data;
pub mod descent;
pub mod device;
pub mod encoding;
mod error;
pub mod evaluator;
pub mod evaluators;
mod gumbel;
pub mod output;
pub mod player;
pub mod policy;
pub mod root_tactics;
pub mod search;
mod tree;
pub mod ubfm;
pub mod worker;

pub use cancel::{is_cancelled, Cancel};
pub use config::{DescentConfig, Exploration, MctsConfig, SelfplayConfig};
pub use data::{read_shard, write_shard, Sample};
pub use descent::run_descent_selfplay;
pub use device::{Device, Precision};
pub use error::Error;
pub use evaluator::{EvalBatch, Evaluator};
pub use evaluators::{HeuristicEvaluator, UniformEvaluator};
pub use output::{game_sgf_text, GameWriter};
pub use player::MctsPlayer;
pub use root_tactics::RootCheck;
pub use search::{InFlight, RootMove, Search, SearchStats};
pub use tree::Proof;
pub use ubfm::{Resolution, Ubfm, UbfmConfig, UbfmLimits, UbfmStats};
pub use worker::{run_selfplay, FinishedGame, ParkedGames, Progress, Schedule};
