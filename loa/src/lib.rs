//! `loa`: the Lines of Action rules engine of loazero.
//!
//! * [`Position`]: a `Copy` bitboard position with an incremental Zobrist hash; legal moves,
//!   making moves, game end ([`Position::outcome`]).
//! * [`Game`]: a position with its move list and repetition history.
//! * [`Rules`]: every rule option on which the sources disagree, with presets.
//! * [`Variant`]: start position and board ([`Geometry`]).
//! * [`notation`], [`record`] and [`sgf`]: text forms and game files; [`perft`]: tree counts.
//! * [`features`]: centre of mass, board distances, tightest packing (the evaluations).
//! * [`tactics`]: connecting moves and wins within a turn, shared by the searches.
//! * [`forced`]: the exact shallow solver: forced wins within three turns, losses by
//!   distance (the players' root check).
//! * [`forced_set`]: tactical test positions found by a brute-force minimax.
//! * [`testing`]: seeded pseudo-random play for the tests and benchmarks of every crate.
//!
//! All types are plain data: `Send + Sync`, no interior mutability, no global state
//! beyond compile-time tables.

mod color;
mod error;
pub mod features;
pub mod forced;
pub mod forced_set;
pub mod game;
pub mod geometry;
pub mod linecount;
pub mod movegen;
pub mod moves;
pub mod notation;
pub mod perft;
pub mod position;
pub mod record;
pub mod rules;
pub mod sgf;
pub mod tactics;
pub mod testing;
pub mod variant;
pub mod zobrist;

pub use color::Color;
pub use error::Error;
pub use game::Game;
pub use geometry::{Geometry, Square};
pub use moves::{Move, MoveKind, MoveList};
pub use position::{ExtraState, Outcome, Player, Position};
pub use record::{GameRecord, RecordHeader};
pub use rules::Rules;
pub use sgf::{GameInfo, SgfGame};
pub use variant::Variant;
