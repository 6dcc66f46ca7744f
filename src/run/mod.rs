//! The training loop behind `loazero run` (and `loazero selfplay --dir`): it wires the
//! `selfplay`, `train` and `eval` crates over a run directory (the `rundir` crate: its
//! layout, state, shards, rated games and store copies, free of torch).
//!
//! * [`config`]: [`RunConfig`](config::RunConfig), merged over the embedded default.
//! * [`algorithm`]: AlphaZero or Descent self-play (`run.algorithm`).
//! * [`net_schedule`]: the network that grows as the run goes on (`run.net_schedule`).
//! * [`rating`]: resumable matches against fixed anchors, Bradley–Terry ratings.
//! * [`learned_stage`]: the learned alpha-beta evaluation trained at the end of a run.
//! * [`driver`]: the loop itself; [`joined_selfplay`]: extra self-play processes of a
//!   local run (`selfplay --dir`) and the loop's background self-play.
//! * [`store_trainer`]: a run kept in a store (`--store`), its trainer's side (its store
//!   waits out outages: `store::Patient`); [`store_worker`]: the self-play worker processes
//!   of such a run (`selfplay --store`).
//! * [`display`]: progress bars and summary lines (the learning curves are drawn by
//!   [`crate::plot`]).

pub mod algorithm;
pub mod config;
pub mod display;
pub mod driver;
pub mod joined_selfplay;
pub mod learned_stage;
pub mod net_schedule;
pub mod rating;
pub mod store_trainer;
pub mod store_worker;
