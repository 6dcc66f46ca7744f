//! One search thread's worker: its killers, history, search path, node count and limits,
//! and the search itself (iterative deepening, principal-variation search with the shared
//! transposition table, move ordering, late move reductions, aspiration windows, the
//! threat extension). A [`Worker`] is the whole search on one thread; the
//! [`ThreadPool`](super::threads::ThreadPool) runs several over one table (Lazy SMP).

use super::limits::{Iteration, SearchLimits, SearchMonitor, SearchResult};
use super::ordering::{centrality_bonus, history_index, irreversible, DropOrder};
use super::score::{
    outcome_score, score_from_tt, score_to_tt, INFINITY, MAX_PLY, WIN, WIN_THRESHOLD,
};
use super::threads::skips_depth;
use crate::config::AlphaBetaConfig;
use crate::evaluation::static_evaluation;
use crate::learned::LearnedEval;
use crate::tt::{Bound, TranspositionTable};
use loa::rules::{NoMove, Repetition};
use loa::tactics::has_connecting_move;
use loa::{Move, MoveList, Position, Rules};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// One search thread's state over a shared transposition table (see the module docs).
pub(super) struct Worker {
    config: AlphaBetaConfig,
    /// The rules of the current search.
    pub(super) rules: Rules,
    /// Shared with the other workers of the pool.
    tt: Arc<TranspositionTable>,
    /// Raised by the main thread when a multi-threaded search ends (shared with the
    /// other workers; never raised in a search on one thread).
    stop_flag: Arc<AtomicBool>,
    killers: Vec<[Option<Move>; 2]>,
    /// History scores, `[colour][from][to]`.
    history: Vec<i32>,
    /// Hashes of the game before the root, the root, then the current search path.
    pub(super) stack: Vec<u64>,
    /// Index of the root in `stack`.
    pub(super) root_index: usize,
    nodes: u64,
    stop: bool,
    deadline: Option<Instant>,
    pub(super) node_limit: Option<u64>,
    /// Threat extensions happen only at plies below this (set per iteration).
    pub(super) extension_ply_limit: usize,
    /// The learned evaluation the leaves are valued with, if any (else the hand-written
    /// [`static_evaluation`] with `config.weights`).
    learned: Option<Arc<LearnedEval>>,
    /// Watches the searches from another thread, if set (the pool's
    /// [`SearchMonitor`], copied to every worker of a search).
    pub(super) monitor: Option<SearchMonitor>,
    /// This worker's nodes already added to the monitor's count.
    nodes_counted: u64,
}

impl Worker {
    /// A worker with empty killers and history over the table `tt` and the stop flag
    /// `stop_flag`, valuing its leaves with `learned` (else the hand-written evaluation).
    pub(super) fn new(
        config: &AlphaBetaConfig,
        tt: &Arc<TranspositionTable>,
        stop_flag: &Arc<AtomicBool>,
        learned: Option<Arc<LearnedEval>>,
    ) -> Worker {
        Worker {
            learned,
            tt: tt.clone(),
            stop_flag: stop_flag.clone(),
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
            monitor: None,
            nodes_counted: 0,
        }
    }

    /// A worker with empty killers and history over this one's table, stop flag,
    /// configuration and evaluation: a helper of a Lazy SMP search.
    pub(super) fn helper(&self) -> Worker {
        Worker::new(
            &self.config,
            &self.tt,
            &self.stop_flag,
            self.learned.clone(),
        )
    }

    /// Adds this worker's nodes not yet counted to the monitor's count.
    fn count_nodes(&mut self) {
        if let Some(m) = &self.monitor {
            m.nodes
                .fetch_add(self.nodes - self.nodes_counted, Ordering::Relaxed);
            self.nodes_counted = self.nodes;
        }
    }

    /// Forgets the move-ordering heuristics (killers, history); the table is the pool's.
    pub(super) fn clear_heuristics(&mut self) {
        self.history.fill(0);
        self.killers.fill([None; 2]);
    }

    /// The static value of `pos` for the side to move: the learned evaluation's or the
    /// hand-written one.
    #[inline]
    pub(super) fn evaluate(&self, pos: &Position) -> i32 {
        match &self.learned {
            Some(net) => net.evaluate(pos),
            None => static_evaluation(pos, &self.config.weights),
        }
    }

    /// Resets the per-search state of this worker for a search of `root` (whose game
    /// history is `history`) under `rules` within `limits`, started at `start`.
    pub(super) fn prepare(
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

    /// Iterative deepening from `root` over the root moves `legal` (more than one), for
    /// this thread: the main thread (`helper` None) or helper `helper` of a Lazy SMP
    /// search, which skips some depths ([`skips_depth`]) and ignores the time rule that
    /// keeps the main thread from starting an iteration late.
    pub(super) fn iterate(
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
    pub(super) fn search(
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
    pub(super) fn winning_move(&self, pos: &Position) -> Option<(Move, i32)> {
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
