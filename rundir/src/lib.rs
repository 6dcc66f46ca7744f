//! A run directory and its copy in a store, free of torch: everything the torch-free
//! `loazero` binary and the training loop of `loazero-torch` both read and write about a run.
//!
//! * [`layout`]: where each file of a run lives ([`RunDir`](layout::RunDir)), its lock,
//!   atomic writes and the clean-up of what a crash leaves behind.
//! * [`state`]: the loop's saved position ([`LoopState`](state::LoopState)).
//! * [`shards`]: naming and counting the loop's own self-play shards.
//! * [`bundle`]: a shard with its game records as one object, as workers commit it.
//! * [`rated_games`]: the games that rate a run and the names of its players.
//! * [`levels`]: a run's rated players as strength levels (the web app's Play screen, the
//!   engine's `level` command); [`shipped`]: the shipped run compiled into the binaries.
//! * [`store_copy`]: local copies of a run kept in a store, kept in step incrementally (the
//!   key layout of the store's `loop/` and `shards/`), for the trainer's working copy and
//!   for [`store_view`]: the read-only views of `serve`, `plot`, `ratings` and `replay`.
//! * `testing` (feature `testing`): helpers for tests of a run kept in a store.
//!
//! The training loop itself (self-play, training, gates, ratings, the learned evaluation's
//! stage) lives in the binary crate's `src/run/`, which links torch.

pub mod bundle;
pub mod layout;
pub mod levels;
pub mod rated_games;
pub mod shards;
pub mod shipped;
pub mod state;
pub mod store_copy;
pub mod store_view;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
