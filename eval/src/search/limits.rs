//! What bounds a search ([`SearchLimits`]) and what it reports ([`SearchResult`]).

use loa::Move;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

/// A search watched from another thread (the engine's analysis, `go infinite`): raising
/// `stop` ends the search as if its time were up (checked every 1024 nodes, by every
/// thread), and `nodes` counts the nodes of every thread as they are searched (brought up
/// to date every 1024 nodes and when a thread's search ends, so exact once it has ended).
/// Set with [`crate::search::AlphaBeta::set_monitor`].
#[derive(Clone, Debug, Default)]
pub struct SearchMonitor {
    /// Raised from outside to stop the search.
    pub stop: Arc<AtomicBool>,
    /// Nodes searched under this monitor so far, every search and thread together.
    pub nodes: Arc<AtomicU64>,
}

/// When a search stops. Unset limits do not apply; with none set the search runs to
/// depth 64 (so set at least one for a bounded search).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// Deepest iteration (plies).
    pub depth: Option<u32>,
    /// Node budget (checked at every node; the last completed iteration's move is played).
    pub nodes: Option<u64>,
    /// Time budget per move.
    pub time: Option<Duration>,
}

impl SearchLimits {
    /// A fixed-depth search.
    pub fn depth(d: u32) -> SearchLimits {
        SearchLimits {
            depth: Some(d),
            ..Default::default()
        }
    }
    /// A fixed-time search.
    pub fn time(t: Duration) -> SearchLimits {
        SearchLimits {
            time: Some(t),
            ..Default::default()
        }
    }
    /// A fixed-node search.
    pub fn nodes(n: u64) -> SearchLimits {
        SearchLimits {
            nodes: Some(n),
            ..Default::default()
        }
    }
}

/// One completed iteration of iterative deepening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// Depth in plies.
    pub depth: u32,
    /// Score for the side to move at the root (see [`crate::search::score::WIN`]).
    pub score: i32,
    /// Nodes searched so far in this search.
    pub nodes: u64,
    /// Time since the search started.
    pub elapsed: Duration,
    /// Principal variation (from the transposition table).
    pub pv: Vec<Move>,
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The move to play (always legal in the root position).
    pub best_move: Move,
    /// Its score for the side to move.
    pub score: i32,
    /// Depth of the last completed iteration (0 when the move was forced or an immediate
    /// win).
    pub depth: u32,
    /// Nodes visited.
    pub nodes: u64,
    /// Wall time used.
    pub elapsed: Duration,
    /// Every completed iteration.
    pub iterations: Vec<Iteration>,
}

impl SearchResult {
    /// The principal variation of the last iteration (just the move if none was searched).
    pub fn pv(&self) -> Vec<Move> {
        self.iterations
            .last()
            .map_or_else(|| vec![self.best_move], |i| i.pv.clone())
    }
}
