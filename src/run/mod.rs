//! The training loop behind `loazero run` (and `loazero selfplay --dir`): it wires the
//! `selfplay`, `train` and `eval` crates over a run directory.
//!
//! * [`config`]: [`RunConfig`](config::RunConfig), merged over the embedded default.
//! * [`algorithm`]: AlphaZero or Descent self-play (`run.algorithm`).
//! * [`layout`]: the run directory ([`RunDir`](layout::RunDir)), its lock and crash clean-up.
//! * [`state`]: the saved position of the loop ([`LoopState`](state::LoopState)).
//! * [`net_schedule`]: the network that grows as the run goes on (`run.net_schedule`).
//! * [`shards`]: naming and counting the loop's own self-play shards.
//! * [`rating`]: resumable matches against fixed anchors, Bradley–Terry ratings.
//! * [`learned_stage`]: the learned alpha-beta evaluation trained at the end of a run.
//! * [`driver`]: the loop itself; [`join`]: extra self-play processes.
//! * [`remote`]: a run kept in a store (`--store`), its trainer's side; [`worker`]: the
//!   workers of such a run; [`bundle`]: a shard with its game records as one object;
//!   [`store_copy`]: local copies of such a run, kept in step incrementally (the trainer's
//!   working copy, and the read-only views of [`store_view`] for `serve`, `plot`, `ratings`
//!   and `replay`);
//!   [`patient`]: the trainer's store, waiting out outages.
//! * [`display`]: progress bars and summary lines (the learning curves are drawn by
//!   [`crate::plot`]).

pub mod algorithm;
pub mod bundle;
pub mod config;
pub mod display;
pub mod driver;
pub mod join;
pub mod layout;
pub mod learned_stage;
pub mod net_schedule;
pub mod patient;
pub mod rated_games;
pub mod rating;
pub mod remote;
pub mod shards;
pub mod state;
pub mod store_copy;
pub mod store_view;
pub mod worker;
