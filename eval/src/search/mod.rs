//! The alpha-beta searcher: iterative deepening, principal-variation search with a
//! transposition table, move ordering (TT move, immediate wins, captures, killers, history),
//! late move reductions, aspiration windows, and limits by depth, nodes or time.
//!
//! Every rule option of [`loa::Rules`] is honoured inside the tree: connection (with the
//! simultaneous-connection option, via [`Position::connection_outcome_after`]), no-move as
//! pass or loss, the ply limit, and repetition (a position repeated on the search path is
//! scored as a draw; one that occurred twice before the root is a real three-fold draw).
//!
//! Every variant is searched. The side to move does not alternate every ply in `parachute`
//! (the drop that ends a compound turn is made by the side that made the move before it), so
//! a child's value is negated, with its window, only when the side to move changes; every
//! ply (a drop included) costs one ply of depth. In `ambiloa` a colour is a team: the teams
//! alternate every ply, the player to move moves only its own pieces, and a connection of
//! the team wins. Drops and `gemma` removals are ordinary moves of the move list.
//!
//! An [`AlphaBeta`] is the handle a player holds: its configuration, the transposition
//! table and the thread pool. It is used by one thread at a time; with `threads` above 1 in
//! its config, each search runs that many threads over the shared table (Lazy SMP: the pool
//! in `threads.rs`, each thread's search in `worker.rs`). With one thread the search is
//! deterministic.

mod limits;
mod ordering;
mod score;
mod threads;
mod worker;

pub use limits::{Iteration, SearchLimits, SearchMonitor, SearchResult};
pub use score::{score_text, WIN, WIN_THRESHOLD};

use crate::config::AlphaBetaConfig;
use crate::learned::{check_supported, LearnedEval};
use crate::tt::TranspositionTable;
use anyhow::{bail, Result};
use loa::{Game, Move, MoveList, Position, Rules};
use ordering::irreversible;
use std::sync::Arc;
use std::time::Instant;
use threads::ThreadPool;

/// The alpha-beta searcher a player holds (see the module docs).
pub struct AlphaBeta {
    config: AlphaBetaConfig,
    /// Shared with every worker of the pool.
    tt: Arc<TranspositionTable>,
    /// The workers that search (one, or a Lazy SMP pool).
    pool: ThreadPool,
    /// Root moves the current search leaves out (see [`AlphaBeta::search_game_excluding`]).
    excluded: Vec<Move>,
    /// The learned evaluation the leaves are valued with, if any (else the hand-written
    /// static evaluation with `config.weights`).
    learned: Option<Arc<LearnedEval>>,
}

impl AlphaBeta {
    /// A searcher with its tables allocated (`config.tt_mib`).
    pub fn new(config: AlphaBetaConfig) -> AlphaBeta {
        AlphaBeta::with_evaluation(config, None)
    }

    /// A searcher valuing its leaves with the learned evaluation `learned` instead of the
    /// hand-written one (its `config.weights` then go unused). Searches of variants the
    /// learned evaluation does not cover are refused.
    pub fn with_learned(config: AlphaBetaConfig, learned: Arc<LearnedEval>) -> AlphaBeta {
        AlphaBeta::with_evaluation(config, Some(learned))
    }

    /// A searcher valuing its leaves with `learned`, else the hand-written evaluation.
    fn with_evaluation(config: AlphaBetaConfig, learned: Option<Arc<LearnedEval>>) -> AlphaBeta {
        let tt = Arc::new(TranspositionTable::new(config.tt_mib));
        AlphaBeta {
            pool: ThreadPool::new(&config, &tt, learned.clone()),
            config,
            tt,
            excluded: Vec::new(),
            learned,
        }
    }

    /// The learned evaluation, if the leaves are valued by one.
    pub fn learned(&self) -> Option<&Arc<LearnedEval>> {
        self.learned.as_ref()
    }

    /// Lets the next searches be stopped and their nodes counted from another thread
    /// ([`SearchMonitor`]); `None` removes the monitor.
    pub fn set_monitor(&mut self, monitor: Option<SearchMonitor>) {
        self.pool.set_monitor(monitor);
    }

    /// The configuration.
    pub fn config(&self) -> &AlphaBetaConfig {
        &self.config
    }

    /// Forgets everything learnt (transposition table, killers, history).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.pool.clear();
    }

    /// Searches the current position of `game` (with its repetition history) and returns
    /// the best move found within `limits`. Errors if the game is over.
    pub fn search_game(&mut self, game: &Game, limits: SearchLimits) -> Result<SearchResult> {
        if let Some(o) = game.outcome() {
            bail!(
                "the game is over ({}); there is no move to search",
                o.name()
            );
        }
        let mut history = Vec::with_capacity(game.moves().len() + 1);
        let mut pos = *game.start();
        let mut reversible_from = 0;
        history.push(pos.hash());
        for &mv in game.moves() {
            let irreversible = irreversible(&pos, mv);
            pos.play(mv);
            history.push(pos.hash());
            if irreversible {
                reversible_from = history.len() - 1;
            }
        }
        let history = &history[reversible_from..];
        self.search_position(game.position(), *game.rules(), history, limits)
    }

    /// Like [`AlphaBeta::search_game`], but the root moves of `excluded` are not searched
    /// (unless every legal move is excluded): the players leave out the moves that
    /// [`selfplay::RootCheck`] refutes.
    pub fn search_game_excluding(
        &mut self,
        game: &Game,
        limits: SearchLimits,
        excluded: &[Move],
    ) -> Result<SearchResult> {
        self.excluded = excluded.to_vec();
        let result = self.search_game(game, limits);
        self.excluded.clear();
        result
    }

    /// Searches `root` under `rules`. `history` holds the hashes of the earlier positions of
    /// the game since the last capture (or other irreversible move), ending with the root's
    /// own hash (may be empty when unknown). Errors if the root is a finished game.
    pub fn search_position(
        &mut self,
        root: &Position,
        rules: Rules,
        history: &[u64],
        limits: SearchLimits,
    ) -> Result<SearchResult> {
        if let Some(o) = root.outcome(&rules) {
            bail!(
                "the game is over in position {} ({}); there is no move to search",
                root.to_text(),
                o.name()
            );
        }
        if self.learned.is_some() {
            check_supported(root)?;
        }
        let start = Instant::now();
        self.tt.new_search();
        self.pool.prepare(rules, history, root, limits, start);

        let mut legal = root.legal_moves(&rules);
        if legal.iter().any(|m| !self.excluded.contains(m)) {
            let mut kept = MoveList::new();
            for &m in legal.iter().filter(|m| !self.excluded.contains(m)) {
                kept.push(m);
            }
            legal = kept;
        }
        let done = |mv: Move, score: i32| SearchResult {
            best_move: mv,
            score,
            depth: 0,
            nodes: 0,
            elapsed: start.elapsed(),
            iterations: Vec::new(),
        };
        if legal.len() == 1 {
            return Ok(done(legal[0], 0));
        }
        if let Some((mv, plies)) = loa::tactics::winning_move(root, &rules) {
            return Ok(done(mv, WIN - plies));
        }
        Ok(self.pool.search(root, &legal, history, limits, start))
    }
}

#[cfg(test)]
mod tests;
