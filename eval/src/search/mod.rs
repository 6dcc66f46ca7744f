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
//! An [`AlphaBeta`] is used by one thread at a time; with `threads` above 1 in its config,
//! each search runs that many threads over one shared transposition table (Lazy SMP:
//! [`AlphaBeta::search_position`]). With one thread the search is deterministic.

mod limits;
mod ordering;
mod score;

pub use limits::{Iteration, SearchLimits, SearchMonitor, SearchResult};
pub use score::{score_text, WIN, WIN_THRESHOLD};

use crate::config::AlphaBetaConfig;
use crate::evaluation::static_evaluation;
use crate::learned::{check_supported, LearnedEval};
use crate::tt::{Bound, TranspositionTable};
use anyhow::{bail, Result};
use loa::rules::{NoMove, Repetition};
use loa::tactics::has_connecting_move;
use loa::{Game, Move, MoveList, Position, Rules};
use ordering::{centrality_bonus, history_index, irreversible, DropOrder};
use score::{outcome_score, score_from_tt, score_to_tt, INFINITY, MAX_PLY};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The alpha-beta searcher (see the module docs).
pub struct AlphaBeta {
    config: AlphaBetaConfig,
    rules: Rules,
    /// Shared with the helpers.
    tt: Arc<TranspositionTable>,
    /// Raised by the main thread when a multi-threaded search ends (shared with the
    /// helpers; never raised in a search on one thread).
    stop_flag: Arc<AtomicBool>,
    /// The helper searchers of a multi-threaded search (made on first use, kept with their
    /// history between searches).
    helpers: Vec<AlphaBeta>,
    killers: Vec<[Option<Move>; 2]>,
    /// History scores, `[colour][from][to]`.
    history: Vec<i32>,
    /// Hashes of the game before the root, the root, then the current search path.
    stack: Vec<u64>,
    /// Index of the root in `stack`.
    root_index: usize,
    nodes: u64,
    stop: bool,
    deadline: Option<Instant>,
    node_limit: Option<u64>,
    /// Threat extensions happen only at plies below this (set per iteration).
    extension_ply_limit: usize,
    /// Root moves the current search leaves out (see [`AlphaBeta::search_game_excluding`]).
    excluded: Vec<Move>,
    /// The learned evaluation the leaves are valued with, if any (else the hand-written
    /// [`static_evaluation`] with `config.weights`).
    learned: Option<Arc<LearnedEval>>,
    /// Watches the searches from another thread, if set ([`AlphaBeta::set_monitor`]).
    monitor: Option<SearchMonitor>,
    /// This thread's nodes already added to the monitor's count.
    nodes_counted: u64,
}

impl AlphaBeta {
    /// A searcher with its tables allocated (`config.tt_mib`).
    pub fn new(config: AlphaBetaConfig) -> AlphaBeta {
        let tt = Arc::new(TranspositionTable::new(config.tt_mib));
        AlphaBeta::helper(&config, &tt, &Arc::new(AtomicBool::new(false)), None)
    }

    /// A searcher valuing its leaves with the learned evaluation `learned` instead of the
    /// hand-written one (its `config.weights` then go unused). Searches of variants the
    /// learned evaluation does not cover are refused.
    pub fn with_learned(config: AlphaBetaConfig, learned: Arc<LearnedEval>) -> AlphaBeta {
        let mut search = AlphaBeta::new(config);
        search.learned = Some(learned);
        search
    }

    /// The learned evaluation, if the leaves are valued by one.
    pub fn learned(&self) -> Option<&Arc<LearnedEval>> {
        self.learned.as_ref()
    }

    /// The static value of `pos` for the side to move: the learned evaluation's or the
    /// hand-written one.
    #[inline]
    fn evaluate(&self, pos: &Position) -> i32 {
        match &self.learned {
            Some(net) => net.evaluate(pos),
            None => static_evaluation(pos, &self.config.weights),
        }
    }

    /// A searcher with its own killers and history over the table `tt` and the stop flag
    /// `stop_flag` of another.
    fn helper(
        config: &AlphaBetaConfig,
        tt: &Arc<TranspositionTable>,
        stop_flag: &Arc<AtomicBool>,
        learned: Option<Arc<LearnedEval>>,
    ) -> AlphaBeta {
        AlphaBeta {
            learned,
            tt: tt.clone(),
            stop_flag: stop_flag.clone(),
            helpers: Vec::new(),
            config: config.clone(),
            rules: Rules::classic(),
            killers: vec![[None; 2]; MAX_PLY + 2],
            history: vec![0; 2 * 64 * 64],
            stack: Vec::with_capacity(1024),
            root_index: 0,
            nodes: 0,
            stop: false,
            deadline: None,
            node_limit: None,
            extension_ply_limit: 0,
            excluded: Vec::new(),
            monitor: None,
            nodes_counted: 0,
        }
    }

    /// Lets the next searches be stopped and their nodes counted from another thread
    /// ([`SearchMonitor`]); `None` removes the monitor.
    pub fn set_monitor(&mut self, monitor: Option<SearchMonitor>) {
        self.monitor = monitor;
    }

    /// Adds this thread's nodes not yet counted to the monitor's count.
    fn count_nodes(&mut self) {
        if let Some(m) = &self.monitor {
            m.nodes
                .fetch_add(self.nodes - self.nodes_counted, Ordering::Relaxed);
            self.nodes_counted = self.nodes;
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AlphaBetaConfig {
        &self.config
    }

    /// Forgets everything learnt (transposition table, killers, history).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.history.fill(0);
        self.killers.fill([None; 2]);
        self.helpers.clear();
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
        self.prepare(rules, history, root, limits, start);

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
        if let Some((mv, plies)) = self.winning_move(root) {
            return Ok(done(mv, WIN - plies));
        }
        let threads = self.config.threads.max(1);
        if threads == 1 {
            return Ok(self.iterate(root, &legal, limits, start, None));
        }
        Ok(self.search_threads(root, &legal, history, limits, start, threads))
    }

    /// Resets the per-search state of this thread's searcher for a search of `root` (whose
    /// game history is `history`) under `rules` within `limits`, started at `start`.
    fn prepare(
        &mut self,
        rules: Rules,
        history: &[u64],
        root: &Position,
        limits: SearchLimits,
        start: Instant,
    ) {
        self.rules = rules;
        self.nodes = 0;
        self.nodes_counted = 0;
        self.stop = false;
        self.stop_flag.store(false, Ordering::Relaxed);
        self.deadline = limits.time.map(|t| start + t);
        self.node_limit = limits.nodes;
        for h in self.history.iter_mut() {
            *h /= 8;
        }
        self.killers.fill([None; 2]);
        self.stack.clear();
        self.stack.extend_from_slice(history);
        if self.stack.last() != Some(&root.hash()) {
            self.stack.push(root.hash());
        }
        self.root_index = self.stack.len() - 1;
    }

    /// Lazy SMP: this searcher (the main thread) and `threads - 1` helpers search the same
    /// root at once over the shared table, each with its own killers, history and path.
    /// Helper `i` skips some depths of its iterative deepening ([`skips_depth`]) so that
    /// the threads spread over neighbouring depths and fill the table ahead of the main
    /// thread. The main thread keeps the clock (its time rule decides when the search
    /// ends); when it stops, it raises the shared stop flag and every helper stops at its
    /// next node. The result is that of the thread with the deepest completed iteration
    /// (the main thread on ties), with the nodes of all threads; a node limit is shared
    /// out evenly between the threads.
    fn search_threads(
        &mut self,
        root: &Position,
        legal: &MoveList,
        history: &[u64],
        limits: SearchLimits,
        start: Instant,
        threads: usize,
    ) -> SearchResult {
        let each = SearchLimits {
            nodes: limits.nodes.map(|n| n.div_ceil(threads as u64)),
            ..limits
        };
        self.node_limit = each.nodes;
        self.helpers.truncate(threads - 1);
        while self.helpers.len() < threads - 1 {
            let helper = AlphaBeta::helper(
                &self.config,
                &self.tt,
                &self.stop_flag,
                self.learned.clone(),
            );
            self.helpers.push(helper);
        }
        let mut helpers = std::mem::take(&mut self.helpers);
        for h in helpers.iter_mut() {
            h.monitor = self.monitor.clone();
            h.prepare(self.rules, history, root, each, start);
        }
        let (main, others) = std::thread::scope(|s| {
            let handles: Vec<_> = helpers
                .iter_mut()
                .enumerate()
                .map(|(i, h)| s.spawn(move || h.iterate(root, legal, each, start, Some(i))))
                .collect();
            let main = self.iterate(root, legal, each, start, None);
            self.stop_flag.store(true, Ordering::Relaxed);
            let others: Vec<SearchResult> = handles
                .into_iter()
                .map(|h| h.join().expect("a helper search thread panicked"))
                .collect();
            (main, others)
        });
        self.helpers = helpers;
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

    /// Iterative deepening from `root` over the root moves `legal` (more than one), for
    /// this thread: the main thread (`helper` None) or helper `helper` of a Lazy SMP
    /// search, which skips some depths ([`skips_depth`]) and ignores the time rule that
    /// keeps the main thread from starting an iteration late.
    fn iterate(
        &mut self,
        root: &Position,
        legal: &MoveList,
        limits: SearchLimits,
        start: Instant,
        helper: Option<usize>,
    ) -> SearchResult {
        // Root moves with the score of the last iteration (for ordering).
        let mut root_moves: Vec<(Move, i32)> = legal.iter().map(|&m| (m, 0)).collect();
        self.order_root(root, &mut root_moves);
        let max_depth = limits.depth.unwrap_or(64).clamp(1, MAX_PLY as u32 - 8);
        let mut best: (Move, i32) = (root_moves[0].0, 0);
        let mut iterations = Vec::new();
        for depth in 1..=max_depth {
            if helper.is_some_and(|i| depth < max_depth && skips_depth(i, depth)) {
                continue;
            }
            let previous = best.1;
            let (mut lo, mut hi) = (-INFINITY, INFINITY);
            let window = self.config.aspiration;
            if depth >= 4 && window > 0 && previous.abs() < WIN_THRESHOLD {
                lo = previous - window;
                hi = previous + window;
            }
            let mut result;
            loop {
                result = self.search_root(root, &mut root_moves, depth as i32, lo, hi);
                if self.stop {
                    break;
                }
                let score = result.1;
                if score <= lo && lo > -INFINITY {
                    lo = -INFINITY;
                } else if score >= hi && hi < INFINITY {
                    hi = INFINITY;
                } else {
                    break;
                }
            }
            if self.stop {
                // An interrupted iteration is trusted only if its first (best-ordered) move
                // was finished and then beaten, or if there is no completed iteration yet.
                if iterations.is_empty() {
                    if let Some(partial) = result.0 {
                        best = (partial, result.1);
                    }
                }
                break;
            }
            let mv = result.0.expect("a completed iteration has a best move");
            best = (mv, result.1);
            iterations.push(Iteration {
                depth,
                score: result.1,
                nodes: self.nodes,
                elapsed: start.elapsed(),
                pv: self.principal_variation(root, mv, depth as usize),
            });
            if result.1.abs() > WIN_THRESHOLD && (WIN - result.1.abs()) as u32 <= depth {
                break;
            }
            if let Some(t) = limits.time.filter(|_| helper.is_none()) {
                // The next iteration costs several times this one: do not start it late.
                if start.elapsed() * 2 > t {
                    break;
                }
            }
        }
        self.count_nodes();
        SearchResult {
            best_move: best.0,
            score: best.1,
            depth: iterations.last().map_or(0, |i| i.depth),
            nodes: self.nodes,
            elapsed: start.elapsed(),
            iterations,
        }
    }

    fn order_root(&self, root: &Position, moves: &mut [(Move, i32)]) {
        let tt_move = self.tt.probe(root.hash()).and_then(|e| e.mv);
        let drops = DropOrder::new(root);
        for m in moves.iter_mut() {
            m.1 = self.move_order_score(root, m.0, tt_move, 0, drops.as_ref());
        }
        moves.sort_by_key(|m| std::cmp::Reverse(m.1));
    }

    /// One iteration at the root. Returns the best move (None if stopped before any move
    /// finished) and its score; reorders `moves` best first for the next iteration.
    #[allow(clippy::needless_range_loop)]
    fn search_root(
        &mut self,
        root: &Position,
        moves: &mut [(Move, i32)],
        depth: i32,
        alpha0: i32,
        beta: i32,
    ) -> (Option<Move>, i32) {
        self.extension_ply_limit = (2 * depth + 2) as usize;
        let mut alpha = alpha0;
        let mut best: Option<Move> = None;
        let mut best_score = -INFINITY;
        for i in 0..moves.len() {
            let mv = moves[i].0;
            let score = self.child_score(root, mv, depth, alpha, beta, 0, i, true);
            if self.stop {
                break;
            }
            moves[i].1 = score;
            if score > best_score {
                best_score = score;
                best = Some(mv);
                if score > alpha {
                    alpha = score;
                }
                if score >= beta {
                    break;
                }
            }
        }
        if !self.stop {
            if let Some(mv) = best {
                let bound = Bound::of_search(best_score, alpha0, beta);
                self.tt
                    .store(root.hash(), Some(mv), best_score, depth, bound);
            }
            // Stable sort: the best move first, then the others by their (bound) scores.
            moves
                .sort_by_key(|m| std::cmp::Reverse(if Some(m.0) == best { INFINITY } else { m.1 }));
        }
        (best, best_score)
    }

    /// Plays `mv` from `pos` (at `ply`) and returns its score for the side to move at `pos`,
    /// with PVS and late move reductions. `index` is the move's rank in the ordering.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn child_score(
        &mut self,
        pos: &Position,
        mv: Move,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
        index: usize,
        pv_node: bool,
    ) -> i32 {
        let child = pos.after(mv);
        if let Some(o) = child.connection_outcome_after(mv, &self.rules) {
            self.nodes += 1;
            return outcome_score(o, pos.to_move(), ply + 1);
        }
        let same = child.to_move() == pos.to_move();
        self.stack.push(child.hash());
        let reversible = !irreversible(pos, mv);
        let score = if index == 0 {
            self.value(
                &child,
                same,
                depth - 1,
                alpha,
                beta,
                ply + 1,
                reversible,
                pv_node,
            )
        } else {
            let quiet = !mv.is_capture() && !self.is_killer(mv, ply);
            let reduction = if self.config.late_move_reductions && depth >= 3 && index >= 3 && quiet
            {
                1 + (depth >= 6 && index >= 8) as i32
            } else {
                0
            };
            let null = alpha + 1;
            let mut s = self.value(
                &child,
                same,
                depth - 1 - reduction,
                alpha,
                null,
                ply + 1,
                reversible,
                false,
            );
            if s > alpha && reduction > 0 && !self.stop {
                s = self.value(
                    &child,
                    same,
                    depth - 1,
                    alpha,
                    null,
                    ply + 1,
                    reversible,
                    false,
                );
            }
            if s > alpha && s < beta && pv_node && !self.stop {
                s = self.value(
                    &child,
                    same,
                    depth - 1,
                    alpha,
                    beta,
                    ply + 1,
                    reversible,
                    true,
                );
            }
            s
        };
        self.stack.pop();
        score
    }

    /// The value of `child` (on top of the stack) for the side to move at its parent, with
    /// the window `(alpha, beta)` of the parent: searched as it is when the same side moves
    /// again (`same`: the drop of a compound turn), negated with a negated window otherwise.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn value(
        &mut self,
        child: &Position,
        same: bool,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
        reversible: bool,
        pv_node: bool,
    ) -> i32 {
        if same {
            self.search(child, depth, alpha, beta, ply, reversible, pv_node)
        } else {
            -self.search(child, depth, -beta, -alpha, ply, reversible, pv_node)
        }
    }

    #[inline]
    fn is_killer(&self, mv: Move, ply: usize) -> bool {
        let k = &self.killers[ply];
        k[0] == Some(mv) || k[1] == Some(mv)
    }

    fn check_limits(&mut self) {
        if let Some(limit) = self.node_limit {
            if self.nodes >= limit {
                self.stop = true;
            }
        }
        if self.stop_flag.load(Ordering::Relaxed) {
            self.stop = true;
        }
        if self.nodes & 1023 == 0 {
            if let Some(deadline) = self.deadline {
                if Instant::now() >= deadline {
                    self.stop = true;
                }
            }
            if self.monitor.is_some() {
                self.count_nodes();
                if self
                    .monitor
                    .as_ref()
                    .is_some_and(|m| m.stop.load(Ordering::Relaxed))
                {
                    self.stop = true;
                }
            }
        }
    }

    /// Whether the position on top of the stack is a repetition draw. `reversible`: the move
    /// that led here can be undone by later moves (see [`irreversible`]). Only positions an
    /// even number of plies back are compared: equal hashes mean the same side to move (and
    /// seat) and the same reserves, so no drop lies between them and the sides alternated
    /// strictly, an even number of times.
    fn is_repetition(&self, reversible: bool) -> bool {
        if self.rules.repetition == Repetition::Off || !reversible {
            return false;
        }
        let n = self.stack.len();
        let h = self.stack[n - 1];
        let mut before_root = 0;
        let mut i = n as isize - 3;
        while i >= 0 {
            if self.stack[i as usize] == h {
                if i as usize >= self.root_index {
                    return true;
                }
                before_root += 1;
                if before_root == 2 {
                    return true;
                }
            }
            i -= 2;
        }
        false
    }

    /// Negamax score of `pos` (whose hash is on top of the stack and which is not over by
    /// connection) for its side to move.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &mut self,
        pos: &Position,
        depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        reversible: bool,
        pv_node: bool,
    ) -> i32 {
        self.nodes += 1;
        self.check_limits();
        if self.stop {
            return 0;
        }
        if self.is_repetition(reversible) {
            return 0;
        }
        if let Some(limit) = self.rules.ply_limit {
            // The ply limit ends a game only between turns (as `Position::outcome`).
            if pos.ply() >= limit && !pos.drop_pending() {
                return 0;
            }
        }
        let us = pos.to_move();
        if !pos.has_move(us) {
            match self.rules.no_move {
                NoMove::Loss => return -(WIN - ply as i32),
                NoMove::Pass if pos.nobody_can_move() => return 0,
                NoMove::Pass => {
                    if depth <= 0 || ply >= MAX_PLY {
                        return self.leaf(pos, ply);
                    }
                    return self.child_score(pos, Move::PASS, depth, alpha, beta, ply, 0, pv_node);
                }
            }
        }
        let mut depth = depth;
        if ply >= MAX_PLY {
            return self.evaluate(pos);
        }
        if depth <= 0 {
            if self.config.leaf_win_check {
                if let Some((_, plies)) = self.winning_move(pos) {
                    return WIN - ply as i32 - plies;
                }
            }
            // Threat extension: the opponent threatens to connect next move, so the static
            // value means little; look one ply further (bounded along the path). Not in the
            // middle of a compound turn (the opponent does not move next).
            if self.config.threat_extension
                && ply < self.extension_ply_limit
                && !pos.drop_pending()
                && has_connecting_move(pos, us.opponent())
            {
                depth = 1;
            } else {
                return self.evaluate(pos);
            }
        }

        // Mate-distance pruning.
        alpha = alpha.max(-(WIN - ply as i32));
        beta = beta.min(WIN - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }

        let key = pos.hash();
        let mut tt_move = None;
        if let Some(e) = self.tt.probe(key) {
            tt_move = e.mv;
            if e.depth >= depth && !pv_node {
                let s = score_from_tt(e.score, ply);
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => s >= beta,
                    Bound::Upper => s <= alpha,
                };
                if cut {
                    return s;
                }
            }
        }

        if let Some((mv, plies)) = self.winning_move(pos) {
            let s = WIN - ply as i32 - plies;
            self.tt
                .store(key, Some(mv), score_to_tt(s, ply), depth, Bound::Exact);
            return s;
        }

        let mut list = MoveList::new();
        pos.generate_moves(&mut list);
        let mut scores = [0i32; loa::moves::MAX_MOVES];
        let drops = DropOrder::new(pos);
        for (i, &mv) in list.iter().enumerate() {
            scores[i] = self.move_order_score(pos, mv, tt_move, ply, drops.as_ref());
        }
        let n = list.len();
        let moves = list.as_mut_slice();

        let alpha0 = alpha;
        let mut best_score = -INFINITY;
        let mut best_move = None;
        for i in 0..n {
            // Selection sort step: bring the best remaining move to position i.
            let mut bi = i;
            for j in i + 1..n {
                if scores[j] > scores[bi] {
                    bi = j;
                }
            }
            moves.swap(i, bi);
            scores.swap(i, bi);
            let mv = moves[i];
            let s = self.child_score(pos, mv, depth, alpha, beta, ply, i, pv_node);
            if self.stop {
                return 0;
            }
            if s > best_score {
                best_score = s;
                best_move = Some(mv);
                if s > alpha {
                    alpha = s;
                    if s >= beta {
                        if !mv.is_capture() {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(mv) {
                                k[1] = k[0];
                                k[0] = Some(mv);
                            }
                            let h = &mut self.history[history_index(us.index(), mv)];
                            *h = (*h + depth * depth).min(1 << 20);
                        }
                        break;
                    }
                }
            }
        }
        let bound = Bound::of_search(best_score, alpha0, beta);
        self.tt
            .store(key, best_move, score_to_tt(best_score, ply), depth, bound);
        best_score
    }

    /// Static value of a leaf that is not over, with the one-move win check.
    #[inline]
    fn leaf(&mut self, pos: &Position, ply: usize) -> i32 {
        if self.config.leaf_win_check {
            if let Some((_, plies)) = self.winning_move(pos) {
                return WIN - ply as i32 - plies;
            }
        }
        self.evaluate(pos)
    }

    /// A move of the side to move that wins by connection within its turn, if there is one,
    /// with the plies to the win ([`loa::tactics::winning_move`]).
    fn winning_move(&self, pos: &Position) -> Option<(Move, i32)> {
        loa::tactics::winning_move(pos, &self.rules)
    }

    #[inline]
    fn move_order_score(
        &self,
        pos: &Position,
        mv: Move,
        tt_move: Option<Move>,
        ply: usize,
        drops: Option<&DropOrder>,
    ) -> i32 {
        if Some(mv) == tt_move {
            return 1 << 30;
        }
        if mv.is_capture() {
            return (1 << 26) + centrality_bonus(pos, mv);
        }
        let k = &self.killers[ply];
        if k[0] == Some(mv) {
            return 1 << 25;
        }
        if k[1] == Some(mv) {
            return (1 << 25) - 1;
        }
        let heuristic = match drops {
            Some(d) if mv.is_drop() => d.score(mv.square()),
            _ => centrality_bonus(pos, mv),
        };
        self.history[history_index(pos.to_move().index(), mv)] + heuristic
    }

    fn principal_variation(&self, root: &Position, first: Move, max_len: usize) -> Vec<Move> {
        let mut pv = vec![first];
        let mut pos = root.after(first);
        let mut seen = vec![root.hash(), pos.hash()];
        while pv.len() < max_len {
            if pos.outcome(&self.rules).is_some() {
                break;
            }
            let Some(mv) = self.tt.probe(pos.hash()).and_then(|e| e.mv) else {
                break;
            };
            if !pos.is_legal(mv, &self.rules) {
                break;
            }
            pos.play(mv);
            if seen.contains(&pos.hash()) {
                break;
            }
            seen.push(pos.hash());
            pv.push(mv);
        }
        pv
    }
}

/// Whether helper `helper` (0-based) of a Lazy SMP search skips the iteration of `depth`:
/// helpers are spread over the depths in growing groups (one of size 1 per parity, then
/// groups that skip in runs of 2, 3, 4 with staggered phases, the pattern Stockfish used),
/// so that some thread is usually one iteration ahead of the main thread.
fn skips_depth(helper: usize, depth: u32) -> bool {
    const SIZE: [u32; 20] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
    const PHASE: [u32; 20] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7];
    let i = helper % SIZE.len();
    ((depth + PHASE[i]) / SIZE[i]) % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Color, ExtraState, Outcome, Variant};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::time::Duration;

    fn searcher() -> AlphaBeta {
        AlphaBeta::new(AlphaBetaConfig {
            tt_mib: 2,
            ..Default::default()
        })
    }

    /// Random games from every variant's start; calls `f` on each position that is not over
    /// (drops pending included).
    fn random_positions(count: usize, seed: u64, rules: Rules, mut f: impl FnMut(&Game)) {
        for game in loa::testing::random_games(&Variant::ALL, rules, count, 60, seed) {
            f(&game);
        }
    }

    /// A sparse random position of `variant` with `pieces` pieces a side at most and random
    /// extra state (vanished cells, partners and seat, reserves and a pending drop), or
    /// `None` if the draw was not a valid position.
    fn sparse_position(variant: Variant, pieces: u32, rng: &mut SmallRng) -> Option<Position> {
        let g = variant.geometry();
        let pick = |n: u32, rng: &mut SmallRng| {
            (0..n)
                .map(|_| 1u64 << g.sparse[rng.random_range(0..g.num_cells as usize)])
                .fold(0, |a, b| a | b)
        };
        let (nb, nw) = (rng.random_range(2..=pieces), rng.random_range(2..=pieces));
        let white = pick(nw, rng);
        let black = pick(nb, rng) & !white;
        let mut extra = ExtraState::default();
        if variant.has_vanishing() {
            let k = rng.random_range(0..12);
            extra.vanished = pick(k, rng) & !(black | white);
        }
        if variant == Variant::Ambiloa {
            extra.partners = (black | white) & pick(20, rng);
            extra.seat = rng.random_range(0..2);
        }
        let to_move = if rng.random_bool(0.5) {
            Color::Black
        } else {
            Color::White
        };
        if variant.has_drops() {
            extra.reserve = [rng.random_range(0..3), rng.random_range(0..3)];
            extra.drop_pending = extra.reserve[to_move.index()] > 0 && rng.random_bool(0.3);
        }
        Position::with_extra(variant, black, white, to_move, extra).ok()
    }

    /// Brute force: the plies to the first win by connection the side to move can force
    /// within its turn (a move, or a move and the drop of a compound turn), per first move.
    fn turn_wins(pos: &Position, rules: &Rules) -> Vec<(Move, i32)> {
        let us = pos.to_move();
        let mut wins = Vec::new();
        for &mv in pos.legal_moves(rules).iter() {
            let child = pos.after(mv);
            if child.connection_outcome_after(mv, rules) == Some(Outcome::Win(us)) {
                wins.push((mv, 1));
            } else if child.drop_pending() {
                let drop_wins = child.legal_moves(rules).iter().any(|&d| {
                    child.after(d).connection_outcome_after(d, rules) == Some(Outcome::Win(us))
                });
                if drop_wins {
                    wins.push((mv, 2));
                }
            }
        }
        wins
    }

    /// Brute force: whether the opponent of the side to move, at its next turn, has a move
    /// (drops aside) after which its pieces are connected.
    fn opponent_can_connect(pos: &Position) -> bool {
        let them = pos.to_move().opponent();
        let mut extra = pos.extra();
        extra.reserve = [0, 0];
        extra.drop_pending = false;
        if let Some(p) = pos.player() {
            // Order S, W, N, E.
            extra.seat = if them == Color::White {
                p.seat()
            } else {
                p.seat() ^ 1
            };
        }
        let next = Position::with_extra(
            pos.variant(),
            pos.pieces(Color::Black),
            pos.pieces(Color::White),
            them,
            extra,
        )
        .unwrap();
        let mut moves = MoveList::new();
        next.generate_moves(&mut moves);
        moves.iter().any(|&m| next.after(m).is_connected(them))
    }

    #[test]
    fn immediate_wins_are_found_exactly_when_they_exist() {
        let mut rng = SmallRng::seed_from_u64(11);
        for rules in [Rules::classic(), Rules::icga()] {
            for variant in Variant::ALL {
                let mut s = searcher();
                s.rules = rules;
                let (mut wins, mut total) = (0, 0);
                while total < 700 {
                    // Sparse random positions: few pieces make connecting moves common.
                    let Some(pos) = sparse_position(variant, 6, &mut rng) else {
                        continue;
                    };
                    if pos.outcome(&rules).is_some() {
                        continue;
                    }
                    total += 1;
                    let found = s.winning_move(&pos);
                    let brute = turn_wins(&pos, &rules);
                    let text = pos.to_text();
                    assert_eq!(
                        has_connecting_move(&pos, pos.to_move().opponent()),
                        opponent_can_connect(&pos),
                        "{variant} {text}"
                    );
                    assert_eq!(found.is_some(), !brute.is_empty(), "{variant} {text}");
                    let Some((mv, plies)) = found else {
                        continue;
                    };
                    wins += 1;
                    assert!(brute.contains(&(mv, plies)), "{variant} {text}: {mv}");
                    let r = searcher()
                        .search_position(&pos, rules, &[], SearchLimits::depth(2))
                        .unwrap();
                    assert_eq!(r.score, WIN - plies, "{variant} {text}");
                    assert!(brute.contains(&(r.best_move, plies)), "{variant} {text}");
                }
                assert!(wins > 20, "{variant}: only {wins} positions with a win");
            }
        }
    }

    /// Plays the searcher's moves from `text` until the turn of the side to move is over and
    /// checks that it won, in `plies` plies, with the first search scoring `WIN - plies`.
    fn assert_wins_at_once(variant: Variant, pos: Position, rules: Rules, plies: i32) {
        let us = pos.to_move();
        let mut game = Game::from_position(pos, rules);
        let mut s = searcher();
        let first = s.search_game(&game, SearchLimits::depth(3)).unwrap();
        assert_eq!(first.score, WIN - plies, "{variant} {}", pos.to_text());
        game.play(first.best_move).unwrap();
        for _ in 1..plies {
            let r = s.search_game(&game, SearchLimits::depth(3)).unwrap();
            assert_eq!(r.score, WIN - 1, "{variant}");
            game.play(r.best_move).unwrap();
        }
        assert_eq!(game.outcome(), Some(Outcome::Win(us)), "{variant}");
    }

    #[test]
    fn hand_made_wins_in_one_turn_are_found_in_every_new_variant() {
        let classic = Rules::classic();
        // Parachute: g2-e4 connects Black, then any drop away from a1 and h8 wins.
        let p = Position::from_text("7w/8/8/3b4/3b4/8/6b1/w7 b 1:1", Variant::Parachute).unwrap();
        assert_wins_at_once(Variant::Parachute, p, classic, 2);
        assert_wins_at_once(Variant::Parachute, p, Rules::icga(), 2);
        // Parachute, drop pending with Black connected: under ICGA rules a drop on a2 or b2
        // would connect White too (a draw); the search drops elsewhere.
        let p = Position::from_text("8/8/8/3b4/3b4/w7/8/w7 b@ 1:1", Variant::Parachute).unwrap();
        let r = searcher()
            .search_position(&p, Rules::icga(), &[], SearchLimits::depth(3))
            .unwrap();
        assert_eq!(r.score, WIN - 1);
        assert!(!["@a2", "@b2"].contains(&r.best_move.to_string().as_str()));
        assert_wins_at_once(Variant::Parachute, p, Rules::icga(), 1);
        // Gemma: a1 is stuck (a2, b1, b2 vanished); removing it leaves Black connected.
        let p = Position::from_text("7w/5w2/8/3b4/3b4/8/xx6/bx6 b", Variant::Gemma).unwrap();
        let r = searcher()
            .search_position(&p, classic, &[], SearchLimits::depth(2))
            .unwrap();
        assert_eq!(r.best_move.to_string(), "~a1");
        assert_wins_at_once(Variant::Gemma, p, classic, 1);
        // Ambiloa: South's b1 joins North's c3-c4 (b1-b2 or b1-c2).
        let p = Position::from_text("w7/8/8/8/2n5/2n5/8/1s5e s", Variant::Ambiloa).unwrap();
        assert_wins_at_once(Variant::Ambiloa, p, classic, 1);
        // Ambiloa: West to move cannot connect nor stop North's c3-c2 or c3-b2 next.
        let p = Position::from_text("w7/8/8/8/8/2n5/8/1s5e w", Variant::Ambiloa).unwrap();
        for depth in [1, 2, 3] {
            let r = searcher()
                .search_position(&p, classic, &[], SearchLimits::depth(depth))
                .unwrap();
            assert_eq!(r.score, -(WIN - 2), "depth {depth}");
        }
        // Alveole: the piece on col 4, row 1 moves two cells up its line to join the
        // centre pair.
        let g = Variant::Alveole.geometry();
        let at = |c: u8, r: u8| 1u64 << g.square_at(c, r).unwrap();
        let p = Position::new(
            Variant::Alveole,
            at(4, 4) | at(5, 4) | at(4, 1),
            at(0, 0) | at(8, 8),
            Color::Black,
        )
        .unwrap();
        assert_wins_at_once(Variant::Alveole, p, classic, 1);
    }

    #[test]
    fn always_returns_a_legal_move_under_every_rule_set() {
        for (i, spec) in [
            "classic",
            "icga",
            "no-move=loss,repetition=off",
            "ply-limit=30,first=white",
        ]
        .iter()
        .enumerate()
        {
            let rules = Rules::parse(spec).unwrap();
            let mut s = searcher();
            random_positions(280, i as u64, rules, |game| {
                let limits = SearchLimits {
                    depth: Some(3),
                    nodes: Some(3000),
                    time: None,
                };
                let r = s.search_game(game, limits).unwrap();
                assert!(
                    game.position().is_legal(r.best_move, &rules),
                    "{} {spec}: {}",
                    game.position().to_text(),
                    r.best_move
                );
                for mv in r.pv() {
                    assert_eq!(mv.is_hex(), game.position().geometry().move_flag != 0);
                }
            });
        }
    }

    /// Plain minimax over connection outcomes only (no pruning, no tables): the exact score
    /// if the game is decided within `depth` plies, else None. The sign flips only when the
    /// side to move changes.
    fn minimax(pos: &Position, rules: &Rules, depth: u32, ply: i32) -> Option<i32> {
        if depth == 0 {
            return None;
        }
        let mut best: Option<i32> = None;
        let mut undecided = false;
        for &mv in pos.legal_moves(rules).iter() {
            let child = pos.after(mv);
            let s = match child.connection_outcome_after(mv, rules) {
                Some(o) => Some(outcome_score(o, pos.to_move(), (ply + 1) as usize)),
                None if child.to_move() == pos.to_move() => {
                    minimax(&child, rules, depth - 1, ply + 1)
                }
                None => minimax(&child, rules, depth - 1, ply + 1).map(|s| -s),
            };
            match s {
                Some(v) => best = Some(best.map_or(v, |b: i32| b.max(v))),
                None => undecided = true,
            }
        }
        match best {
            Some(b) if b > WIN_THRESHOLD => Some(b),
            _ if undecided => None,
            b => b,
        }
    }

    #[test]
    fn win_scores_are_exact_and_agree_with_a_plain_minimax() {
        // Plain minimax (depth 3) on endings with few pieces must agree with the searcher
        // about forced wins.
        let rules = Rules::parse("repetition=off").unwrap();
        let mut rng = SmallRng::seed_from_u64(5);
        let mut s = AlphaBeta::new(AlphaBetaConfig {
            tt_mib: 2,
            late_move_reductions: false,
            ..Default::default()
        });
        for variant in Variant::ALL {
            let mut checked = 0;
            let mut decided = 0;
            // Until a few positions were decided within the horizon (wins are rarer on the
            // larger boards).
            while decided < 8 && checked < 500 {
                let Some(pos) = sparse_position(variant, 4, &mut rng) else {
                    continue;
                };
                // A forced move is played without a search (its score is not a result).
                if pos.outcome(&rules).is_some() || pos.legal_moves(&rules).len() == 1 {
                    continue;
                }
                let truth = minimax(&pos, &rules, 3, 0);
                let r = s
                    .search_position(&pos, rules, &[], SearchLimits::depth(3))
                    .unwrap();
                if let Some(t) = truth {
                    decided += 1;
                    if t > WIN_THRESHOLD {
                        assert_eq!(r.score, t, "{variant} {}", pos.to_text());
                    }
                }
                if r.score > WIN_THRESHOLD && (WIN - r.score) <= 3 {
                    assert_eq!(truth, Some(r.score), "{variant} {}", pos.to_text());
                }
                checked += 1;
            }
            assert!(decided >= 8, "{variant}: {decided} decided in {checked}");
        }
    }

    /// Fixed-depth negamax without pruning or tables that follows the searcher's own rules
    /// (one-turn win check at interior nodes and leaves, static evaluation, pass when
    /// stuck), flipping the sign only when the side to move changes.
    fn reference(s: &AlphaBeta, pos: &Position, depth: i32, ply: usize) -> i32 {
        let rules = s.rules;
        if !pos.has_move(pos.to_move()) {
            if pos.nobody_can_move() {
                return 0;
            }
            if depth <= 0 {
                return match s.winning_move(pos) {
                    Some((_, k)) => WIN - ply as i32 - k,
                    None => s.evaluate(pos),
                };
            }
        } else {
            if let Some((_, k)) = s.winning_move(pos) {
                return WIN - ply as i32 - k;
            }
            if depth <= 0 {
                return s.evaluate(pos);
            }
        }
        let mut best = -INFINITY;
        for &mv in pos.legal_moves(&rules).iter() {
            let child = pos.after(mv);
            let v = match child.connection_outcome_after(mv, &rules) {
                Some(o) => outcome_score(o, pos.to_move(), ply + 1),
                None if child.to_move() == pos.to_move() => {
                    reference(s, &child, depth - 1, ply + 1)
                }
                None => -reference(s, &child, depth - 1, ply + 1),
            };
            best = best.max(v);
        }
        best
    }

    #[test]
    fn search_values_equal_a_plain_negamax_in_every_variant() {
        // Positions from random games, so that parachute compound turns (and roots with a
        // pending drop) are common; repetition off so that values do not depend on paths.
        let rules = Rules::parse("repetition=off").unwrap();
        let mut s = AlphaBeta::new(AlphaBetaConfig {
            tt_mib: 4,
            late_move_reductions: false,
            threat_extension: false,
            ..Default::default()
        });
        s.rules = rules;
        let mut rng = SmallRng::seed_from_u64(21);
        let mut pending = 0;
        for variant in Variant::ALL {
            let mut checked = 0;
            while checked < 6 {
                let mut game = Game::new(variant, rules);
                for _ in 0..rng.random_range(0..14) {
                    if game.is_over() {
                        break;
                    }
                    let moves = game.legal_moves();
                    game.play(moves[rng.random_range(0..moves.len())]).unwrap();
                }
                if game.is_over() {
                    continue;
                }
                let pos = *game.position();
                pending += pos.drop_pending() as u32;
                let depth = if variant.has_drops() { 3 } else { 2 };
                s.clear();
                s.stack = vec![pos.hash()];
                s.root_index = 0;
                s.extension_ply_limit = 0;
                let value = s.search(&pos, depth, -INFINITY, INFINITY, 0, false, true);
                assert_eq!(
                    value,
                    reference(&s, &pos, depth, 0),
                    "{variant} {}",
                    pos.to_text()
                );
                checked += 1;
            }
        }
        assert!(pending > 0);
    }

    #[test]
    fn respects_node_and_time_limits() {
        let rules = Rules::classic();
        for variant in Variant::ALL {
            let game = Game::new(variant, rules);
            let mut s = searcher();
            let r = s.search_game(&game, SearchLimits::nodes(5_000)).unwrap();
            assert!(r.nodes <= 5_001, "{variant}: {}", r.nodes);
            let r = s
                .search_game(&game, SearchLimits::time(Duration::from_millis(60)))
                .unwrap();
            assert!(
                r.elapsed < Duration::from_millis(500),
                "{variant}: {:?}",
                r.elapsed
            );
            assert!(r.depth >= 2, "{variant}: depth {}", r.depth);
        }
    }

    #[test]
    fn no_move_loss_is_scored() {
        // Black to move without any move loses at once under no-move=loss: found by random
        // search for a lone black piece boxed in on the 6x6 board.
        let rules = Rules::parse("no-move=loss").unwrap();
        let mut s = searcher();
        s.rules = rules;
        s.stack = vec![0];
        s.root_index = 0;
        let mut rng = SmallRng::seed_from_u64(9);
        let g = Variant::Six.geometry();
        for _ in 0..200_000 {
            let black = 1u64 << g.sparse[rng.random_range(0..36)];
            let white: u64 = (0..6)
                .map(|_| 1u64 << g.sparse[rng.random_range(0..36)])
                .fold(0, |a, b| a | b)
                & !black;
            let Ok(pos) = Position::new(Variant::Six, black, white, Color::Black) else {
                continue;
            };
            if pos.has_move(Color::Black) || g.is_connected(white) {
                continue;
            }
            let score = s.search(&pos, 2, -INFINITY, INFINITY, 0, false, true);
            assert_eq!(score, -WIN);
            return;
        }
        panic!("no blocked position found");
    }

    fn threaded(threads: usize) -> AlphaBeta {
        AlphaBeta::new(AlphaBetaConfig {
            tt_mib: 2,
            threads,
            ..Default::default()
        })
    }

    #[test]
    fn lazy_smp_helpers_spread_over_neighbouring_depths() {
        // The first helper searches the depths the main thread skips… none; the first two
        // helpers search opposite parities, and every depth is searched by some helper.
        let searched = |h: usize| (1..=12).filter(|&d| !skips_depth(h, d)).collect::<Vec<_>>();
        assert_eq!(searched(0), vec![2, 4, 6, 8, 10, 12]);
        assert_eq!(searched(1), vec![1, 3, 5, 7, 9, 11]);
        assert_eq!(searched(2), vec![1, 4, 5, 8, 9, 12]);
        for d in 1..=40 {
            assert!((0..20).any(|h| !skips_depth(h, d)), "depth {d}");
        }
    }

    /// Several threads: every move legal under every rule set and variant, the depth limit
    /// kept, the node limit shared out (the total stays within a few nodes a thread of it).
    #[test]
    fn several_threads_play_legal_moves_within_the_limits() {
        for (i, spec) in ["classic", "icga", "no-move=loss,repetition=off"]
            .iter()
            .enumerate()
        {
            let rules = Rules::parse(spec).unwrap();
            let mut s = threaded(3);
            random_positions(60, 40 + i as u64, rules, |game| {
                let r = s.search_game(game, SearchLimits::depth(3)).unwrap();
                assert!(game.position().is_legal(r.best_move, &rules), "{spec}");
                assert!(r.depth <= 3);
                let r = s.search_game(game, SearchLimits::nodes(3_000)).unwrap();
                assert!(game.position().is_legal(r.best_move, &rules), "{spec}");
                assert!(r.nodes <= 3_000 + 3, "{spec}: {} nodes", r.nodes);
                for mv in r.pv() {
                    assert_eq!(mv.is_hex(), game.position().geometry().move_flag != 0);
                }
            });
        }
    }

    /// What one thread proves at a fixed depth, several threads prove too, and they play a
    /// winning move.
    #[test]
    fn several_threads_find_the_wins_one_thread_finds() {
        let rules = Rules::parse("repetition=off").unwrap();
        let mut rng = SmallRng::seed_from_u64(77);
        let (mut one, mut four) = (threaded(1), threaded(4));
        let mut wins = 0;
        for variant in Variant::ALL {
            let mut checked = 0;
            while checked < 40 {
                let Some(pos) = sparse_position(variant, 5, &mut rng) else {
                    continue;
                };
                if pos.outcome(&rules).is_some() || pos.legal_moves(&rules).len() == 1 {
                    continue;
                }
                checked += 1;
                let a = one
                    .search_position(&pos, rules, &[], SearchLimits::depth(3))
                    .unwrap();
                let b = four
                    .search_position(&pos, rules, &[], SearchLimits::depth(3))
                    .unwrap();
                assert!(pos.is_legal(b.best_move, &rules));
                if a.score > WIN_THRESHOLD {
                    wins += 1;
                    assert!(b.score > WIN_THRESHOLD, "{variant} {}", pos.to_text());
                    // The move keeps the win: it connects, or one thread proves the
                    // position after it won for the mover.
                    let child = pos.after(b.best_move);
                    match child.connection_outcome_after(b.best_move, &rules) {
                        Some(o) => assert_eq!(o, Outcome::Win(pos.to_move()), "{variant}"),
                        None if child.outcome(&rules).is_some() => {
                            assert_eq!(child.outcome(&rules), Some(Outcome::Win(pos.to_move())));
                        }
                        // A forced reply is played without a search (score 0).
                        None if child.legal_moves(&rules).len() == 1 => {}
                        None => {
                            let c = one
                                .search_position(&child, rules, &[], SearchLimits::depth(3))
                                .unwrap();
                            let mover = if child.to_move() == pos.to_move() {
                                c.score
                            } else {
                                -c.score
                            };
                            assert!(
                                mover > WIN_THRESHOLD,
                                "{variant} {}: one thread {} {}, four {} {} {}, then {} {}",
                                pos.to_text(),
                                a.best_move,
                                a.score,
                                b.best_move,
                                b.score,
                                b.depth,
                                c.best_move,
                                c.score
                            );
                        }
                    }
                }
            }
        }
        assert!(wins > 10, "{wins}");
    }

    /// A search on one thread is deterministic: the same searcher state and position give
    /// the same move, score, depth and node count, twice (the reproducibility contract of
    /// `threads=1`).
    #[test]
    fn one_thread_searches_deterministically() {
        let rules = Rules::classic();
        let mut results = Vec::new();
        for _ in 0..2 {
            let mut s = threaded(1);
            let mut r = Vec::new();
            random_positions(20, 3, rules, |game| {
                let x = s.search_game(game, SearchLimits::nodes(20_000)).unwrap();
                r.push((x.best_move, x.score, x.depth, x.nodes));
            });
            results.push(r);
        }
        assert_eq!(results[0], results[1]);
    }
}
