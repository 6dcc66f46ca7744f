//! `eval`: the alpha-beta baseline, players, arena, Elo ratings and gating of loazero.
//!
//! * [`search::AlphaBeta`]: a MIA-style alpha-beta searcher; [`evaluation`] its features
//!   and hand-written static evaluation; [`tt`] its transposition table;
//!   [`config::AlphaBetaConfig`] / [`config::EvalWeights`] its tunables.
//! * [`player`]: the [`Player`] trait, text specs ([`PlayerSpec`]), the players (one module
//!   per kind, listed in `player::KINDS`) and the [`PlayerFactory`] (with a hook for
//!   the network loader of the players that need one, supplied by the binary:
//!   `train::players`).
//! * [`learned`]: the learned evaluation of the alpha-beta player (`alphabeta:eval=FILE`),
//!   its features, incremental accumulator, SIMD network and file format;
//!   [`scored_games`] the alpha-beta self-play games whose searches label its training
//!   positions.
//! * [`arena`]: matches between two players from balanced openings, in parallel, with
//!   records and results files; [`elo`]: Elo from a score with its interval.
//! * [`ratings`]: Bradley–Terry maximum-likelihood Elo over many players.
//! * [`mod@gate`]: candidate vs best with SPRT or a win-rate threshold.
//! * [`bench`]: the `loazero bench alphabeta` speed workload (`bench` is speed,
//!   `benchmark` strength).
//! * [`protocol`]: the `loazero engine` line protocol (spec in eval/PROTOCOL.md).
//! * [`strength`]: `loazero benchmark`, a player against alpha-beta at equal time per move
//!   and at fixed depths.

pub mod arena;
pub mod bench;
pub mod config;
pub mod elo;
pub mod evaluation;
pub mod gate;
pub mod learned;
pub mod player;
pub mod protocol;
pub mod ratings;
pub mod scored_file;
pub mod scored_games;
pub mod search;
pub mod strength;
pub mod tt;

pub use arena::{play_match, GameResult, MatchConfig, MatchReport, Openings};
pub use config::{AlphaBetaConfig, EvalWeights, Feature, PerFeature};
pub use gate::{gate, Decision, GateConfig, GateMethod, GateReport};
pub use player::{Player, PlayerFactory, PlayerSpec};
pub use search::{AlphaBeta, SearchLimits, SearchResult};
