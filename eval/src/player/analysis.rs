//! Analysis, the engine protocol's `go infinite` (`eval/PROTOCOL.md`): a player searches
//! one position until it is told to stop ([`Analysis::stop`]), reporting every principal
//! variation it completes ([`super::Player::analyse`]); the protocol prints the reports as
//! `info` lines and answers the best move at `stop`.

use super::{Player, SearchInfo};
use anyhow::Result;
use loa::{Game, Move};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// What an analysis asks of a player, shared between the thread that searches and the
/// one that stops it.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Raised to end the analysis (`stop`).
    pub stop: Arc<AtomicBool>,
    /// How many principal variations to report at every depth (at least 1): the best
    /// move's, then the best among the moves not yet reported, and so on.
    pub multipv: u32,
    /// Nodes searched so far (what the player counts: alpha-beta nodes), brought up to date
    /// while it searches, for progress reports between completed depths.
    pub nodes: Arc<AtomicU64>,
}

impl Analysis {
    /// An analysis reporting `multipv` principal variations (0 counts as 1), not stopped.
    pub fn new(multipv: u32) -> Analysis {
        Analysis {
            stop: Arc::new(AtomicBool::new(false)),
            multipv: multipv.max(1),
            nodes: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Whether the analysis was told to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// The analysis of a player without one of its own, or of a position the root check
/// settles: one search as [`Player::choose_move`] does, its report passed to `report`.
pub fn search_once<P: Player + ?Sized>(
    player: &mut P,
    game: &Game,
    report: &mut dyn FnMut(SearchInfo),
) -> Result<Move> {
    let mv = player.choose_move(game)?;
    if let Some(info) = player.last_info() {
        report(info);
    }
    Ok(mv)
}
