//! The Lazy SMP thread pool: the workers of one searcher and how a search is shared out
//! between them. With one thread the main worker searches alone (deterministically); with
//! more, every worker searches the same root at once over the shared transposition table,
//! and the main worker's result stands unless a helper completed a deeper iteration.

use super::limits::{SearchLimits, SearchResult};
use super::worker::Worker;
use crate::config::AlphaBetaConfig;
use crate::learned::LearnedEval;
use crate::tt::TranspositionTable;
use loa::{MoveList, Position, Rules};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The workers of one searcher: the main worker (which keeps the clock) and the helpers
/// of a multi-threaded search (made on first use, kept with their history between
/// searches).
pub(super) struct ThreadPool {
    /// How many workers a search runs on (`config.threads`, at least 1).
    threads: usize,
    main: Worker,
    helpers: Vec<Worker>,
    /// Raised by the main worker when a multi-threaded search ends (shared with every
    /// worker; never raised in a search on one thread).
    stop_flag: Arc<AtomicBool>,
}

impl ThreadPool {
    /// A pool of `config.threads` workers over the table `tt`, valuing leaves with
    /// `learned` (else the hand-written evaluation); only the main worker is made now.
    pub(super) fn new(
        config: &AlphaBetaConfig,
        tt: &Arc<TranspositionTable>,
        learned: Option<Arc<LearnedEval>>,
    ) -> ThreadPool {
        let stop_flag = Arc::new(AtomicBool::new(false));
        ThreadPool {
            threads: config.threads.max(1),
            main: Worker::new(config, tt, &stop_flag, learned),
            helpers: Vec::new(),
            stop_flag,
        }
    }

    /// Lets the next searches be stopped and their nodes counted from another thread.
    pub(super) fn set_monitor(&mut self, monitor: Option<super::limits::SearchMonitor>) {
        self.main.monitor = monitor;
    }

    /// Forgets the workers' move-ordering heuristics (the helpers are dropped).
    pub(super) fn clear(&mut self) {
        self.main.clear_heuristics();
        self.helpers.clear();
    }

    /// Resets the main worker for a search of `root` (see [`Worker::prepare`]); done
    /// before the searcher looks for a move that needs no search.
    pub(super) fn prepare(
        &mut self,
        rules: Rules,
        history: &[u64],
        root: &Position,
        limits: SearchLimits,
        start: Instant,
    ) {
        self.main.prepare(rules, history, root, limits, start);
    }

    /// Searches `root` (prepared with [`ThreadPool::prepare`]) over the root moves `legal`
    /// (more than one) on every worker: iterative deepening on the main worker alone, or
    /// Lazy SMP ([`ThreadPool::search_threads`]).
    pub(super) fn search(
        &mut self,
        root: &Position,
        legal: &MoveList,
        history: &[u64],
        limits: SearchLimits,
        start: Instant,
    ) -> SearchResult {
        if self.threads == 1 {
            return self.main.iterate(root, legal, limits, start, None);
        }
        self.search_threads(root, legal, history, limits, start)
    }

    /// Lazy SMP: the main worker and `threads - 1` helpers search the same root at once
    /// over the shared table, each with its own killers, history and path. Helper `i`
    /// skips some depths of its iterative deepening ([`skips_depth`]) so that the threads
    /// spread over neighbouring depths and fill the table ahead of the main thread. The
    /// main thread keeps the clock (its time rule decides when the search ends); when it
    /// stops, it raises the shared stop flag and every helper stops at its next node. The
    /// result is that of the thread with the deepest completed iteration (the main thread
    /// on ties), with the nodes of all threads; a node limit is shared out evenly between
    /// the threads.
    fn search_threads(
        &mut self,
        root: &Position,
        legal: &MoveList,
        history: &[u64],
        limits: SearchLimits,
        start: Instant,
    ) -> SearchResult {
        let threads = self.threads;
        let each = SearchLimits {
            nodes: limits.nodes.map(|n| n.div_ceil(threads as u64)),
            ..limits
        };
        self.main.node_limit = each.nodes;
        self.helpers.truncate(threads - 1);
        while self.helpers.len() < threads - 1 {
            let helper = self.main.helper();
            self.helpers.push(helper);
        }
        let rules = self.main.rules;
        for h in self.helpers.iter_mut() {
            h.monitor = self.main.monitor.clone();
            h.prepare(rules, history, root, each, start);
        }
        let main = &mut self.main;
        let helpers = &mut self.helpers;
        let stop_flag = &self.stop_flag;
        let (main, others) = std::thread::scope(|s| {
            let handles: Vec<_> = helpers
                .iter_mut()
                .enumerate()
                .map(|(i, h)| s.spawn(move || h.iterate(root, legal, each, start, Some(i))))
                .collect();
            let main = main.iterate(root, legal, each, start, None);
            stop_flag.store(true, Ordering::Relaxed);
            let others: Vec<SearchResult> = handles
                .into_iter()
                .map(|h| h.join().expect("a helper search thread panicked"))
                .collect();
            (main, others)
        });
        let nodes = main.nodes + others.iter().map(|r| r.nodes).sum::<u64>();
        let mut best = main;
        for r in others {
            if r.depth > best.depth {
                best = r;
            }
        }
        SearchResult {
            nodes,
            elapsed: start.elapsed(),
            ..best
        }
    }
}

/// Whether helper `helper` (0-based) of a Lazy SMP search skips the iteration of `depth`:
/// helpers are spread over the depths in growing groups (one of size 1 per parity, then
/// groups that skip in runs of 2, 3, 4 with staggered phases, the pattern Stockfish used),
/// so that some thread is usually one iteration ahead of the main thread.
pub(super) fn skips_depth(helper: usize, depth: u32) -> bool {
    const SIZE: [u32; 20] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
    const PHASE: [u32; 20] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7];
    let i = helper % SIZE.len();
    ((depth + PHASE[i]) / SIZE[i]) % 2 == 1
}
