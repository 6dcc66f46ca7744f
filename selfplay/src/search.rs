//! One batched MCTS: PUCT with first-play urgency, virtual loss for several leaves per
//! evaluator call, Dirichlet root noise, MCTS-Solver, repetition and ply-limit handling,
//! tree reuse, optional Gumbel root.
//!
//! A [`Search`] is driven from outside so that many searches can share one evaluator
//! call: [`Search::gather`] appends leaves to a batch, the caller evaluates the batch,
//! [`Search::absorb`] expands the leaves and backs their values up. [`Search::run`] does
//! the loop for a single search. A `Search` is `Send` but not shared between threads.

use crate::config::MctsConfig;
use crate::evaluator::{EvalBatch, Evaluator};
use crate::gumbel::GumbelRoot;
use crate::tree::{q_for_children, Edge, EdgeState, Proof, Tree};
use crate::Error;
use loa::rules::{NoMove, Repetition};
use loa::{Game, Move, MoveList, Outcome, Position, Rules};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma};

/// Counters of one search (reset by [`Search::begin`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Simulations completed (each ends at a new leaf or a terminal/proven node).
    pub simulations: u32,
    /// Leaves sent to the evaluator (root expansion included).
    pub evaluations: u32,
    /// Descents that met a leaf already waiting for the evaluator.
    pub collisions: u32,
    /// Simulations that ended at a terminal or proven node.
    pub terminal: u32,
    /// The deepest node a simulation reached, in moves from the root (a GUI's
    /// `seldepth`).
    pub max_depth: u32,
}

/// One root move after a search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMove {
    /// The move.
    pub mv: Move,
    /// Visits through it (this search and reused ones).
    pub visits: u32,
    /// Mean value for the side to move at the root.
    pub q: f32,
    /// Prior (after root noise, if any).
    pub prior: f32,
    /// Proven result for the side to move (`None`: not proven).
    pub proof: Option<Proof>,
}

/// A batched Monte-Carlo tree search over one game.
pub struct Search {
    config: MctsConfig,
    rules: Rules,
    tree: Tree,
    rng: StdRng,
    /// Game start and moves at the current root (for tree reuse).
    start: Option<Position>,
    root_moves: Vec<Move>,
    root_pos: Position,
    /// Hashes of every game position up to and including the root.
    history: Vec<u64>,
    /// 4096-bit filter over `history` (repetition checks skip most scans).
    bloom: Box<[u64; 64]>,
    budget: u32,
    started: u32,
    noise_pending: bool,
    gumbel: Option<GumbelRoot>,
    stats: SearchStats,
    // Leaves in the batch: (edge, start in `pending_paths`, path length).
    pending: Vec<(u32, u32, u32)>,
    pending_paths: Vec<u32>,
    batch_base: usize,
    path: Vec<u32>,
    path_hashes: Vec<u64>,
    moves: MoveList,
}

impl Search {
    /// A search with no root yet (call [`Search::set_root`]).
    pub fn new(config: MctsConfig, rules: Rules, seed: u64) -> Search {
        let start = Position::start(loa::Variant::Standard, &rules);
        Search {
            config,
            rules,
            tree: Tree::new(),
            rng: StdRng::seed_from_u64(seed),
            start: None,
            root_moves: Vec::new(),
            root_pos: start,
            history: Vec::new(),
            bloom: Box::new([0; 64]),
            budget: 0,
            started: 0,
            noise_pending: false,
            gumbel: None,
            stats: SearchStats::default(),
            pending: Vec::new(),
            pending_paths: Vec::new(),
            batch_base: 0,
            path: Vec::new(),
            path_hashes: Vec::new(),
            moves: MoveList::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// The rules searched under.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The root position.
    pub fn root_position(&self) -> &Position {
        &self.root_pos
    }

    /// Counters of the current search.
    pub fn stats(&self) -> SearchStats {
        self.stats
    }

    /// Number of edges in the tree (memory use is about 24 bytes each).
    pub fn tree_size(&self) -> usize {
        self.tree.len()
    }

    /// Points the search at the current position of `game`. If the game continued from
    /// the previous root (same start and rules, moves extending the previous ones), the
    /// subtree of the moves played since is kept; otherwise the tree is cleared.
    /// Must not be called while leaves are pending.
    pub fn set_root(&mut self, game: &Game) {
        debug_assert!(self.pending.is_empty());
        let moves = game.moves();
        let same_game = *game.rules() == self.rules
            && self
                .start
                .is_some_and(|s| s == *game.start() && s.ply() == game.start().ply())
            && moves.len() >= self.root_moves.len()
            && moves[..self.root_moves.len()] == self.root_moves[..];
        let mut reused = false;
        if same_game {
            let mut node = self.tree.root;
            let mut ok = true;
            for &mv in &moves[self.root_moves.len()..] {
                match self.tree.find_child(node, mv) {
                    Some(c) => node = c,
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                if node != self.tree.root {
                    self.tree.reroot(node);
                }
                reused = true;
            }
        }
        if !reused {
            self.tree.clear();
        }
        self.rules = *game.rules();
        self.start = Some(*game.start());
        self.root_moves.clear();
        self.root_moves.extend_from_slice(moves);
        self.root_pos = *game.position();
        self.history.clear();
        self.bloom.fill(0);
        let mut p = *game.start();
        self.push_history(p.hash());
        for &mv in moves {
            p.play(mv);
            self.push_history(p.hash());
        }
    }

    /// Plays `mv` at the root, keeping its subtree (self-play's cheap form of
    /// [`Search::set_root`]). `mv` must be legal at the root.
    pub fn advance(&mut self, mv: Move) {
        debug_assert!(self.pending.is_empty());
        match self.tree.find_child(self.tree.root, mv) {
            Some(c) => self.tree.reroot(c),
            None => self.tree.clear(),
        }
        self.root_moves.push(mv);
        self.root_pos.play(mv);
        self.push_history(self.root_pos.hash());
    }

    fn push_history(&mut self, h: u64) {
        self.history.push(h);
        let bit = (h >> 52) as usize; // 12 bits
        self.bloom[bit >> 6] |= 1 << (bit & 63);
    }

    /// Starts a search of `simulations` new simulations from the root (reused visits do
    /// not count). With `noise`, Dirichlet noise is mixed into the root priors (PUCT root)
    /// or Gumbel noise drawn (Gumbel root).
    pub fn begin(&mut self, simulations: u32, noise: bool) {
        debug_assert!(self.pending.is_empty());
        self.budget = simulations;
        self.started = 0;
        self.stats = SearchStats::default();
        let root = self.tree.root as usize;
        self.gumbel = None;
        self.noise_pending = noise;
        if self.tree.edges[root].state == EdgeState::Expanded {
            self.prepare_root(true);
        }
    }

    /// Seeds the search's random generator (noise, Gumbel draws).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
    }

    /// Whether the search is over: the budget is spent, the root is proven or has a
    /// single legal move, and no leaf is pending.
    pub fn is_finished(&self) -> bool {
        let root = &self.tree.edges[self.tree.root as usize];
        self.pending.is_empty()
            && root.state == EdgeState::Expanded
            && (self.started >= self.budget
                || root.num_children == 1
                || (self.config.solver && root.proof.is_some())
                || self.gumbel.as_ref().is_some_and(|g| g.is_finished()))
    }

    /// Runs the search to the end with `evaluator`, one batch of up to
    /// `leaves_per_batch` leaves per call.
    pub fn run(&mut self, evaluator: &dyn Evaluator, batch: &mut EvalBatch) -> Result<(), Error> {
        while !self.is_finished() {
            self.step(evaluator, batch)?;
        }
        Ok(())
    }

    /// One round of the search: gathers up to `leaves_per_batch` leaves, evaluates them in
    /// one evaluator call (none when every leaf was terminal or cached), backs them up.
    #[inline]
    fn step(&mut self, evaluator: &dyn Evaluator, batch: &mut EvalBatch) -> Result<(), Error> {
        batch.clear();
        self.gather(batch);
        if !batch.is_empty() {
            evaluator.evaluate(batch)?;
        }
        self.absorb(batch)
    }

    /// Runs the search begun by [`Search::begin`] (whose simulation count is the cap) until
    /// it finishes or `deadline` passes, whichever comes first. The clock is read between
    /// evaluator calls, so the search overshoots `deadline` by at most one batch; the root
    /// is always expanded (so that [`Search::best_move`] has an answer), even past the
    /// deadline. With a Gumbel root, stopping early leaves the last halving phase unfinished.
    pub fn run_until(
        &mut self,
        evaluator: &dyn Evaluator,
        batch: &mut EvalBatch,
        deadline: std::time::Instant,
    ) -> Result<(), Error> {
        while !self.is_finished() {
            let root_expanded =
                self.tree.edges[self.tree.root as usize].state == EdgeState::Expanded;
            if root_expanded && std::time::Instant::now() >= deadline {
                break;
            }
            self.step(evaluator, batch)?;
        }
        Ok(())
    }

    /// Appends up to `leaves_per_batch` leaves to `batch` (positions are appended
    /// contiguously; the batch may hold other searches' leaves before them). Simulations
    /// ending at terminal or proven nodes are completed at once. Returns the number of
    /// positions added. Call [`Search::absorb`] with the evaluated batch before the next
    /// `gather`.
    pub fn gather(&mut self, batch: &mut EvalBatch) -> usize {
        debug_assert!(self.pending.is_empty());
        self.batch_base = batch.len();
        let root = self.tree.root;
        let root_state = self.tree.edges[root as usize].state;
        if root_state != EdgeState::Expanded {
            if root_state == EdgeState::Unexpanded {
                let pos = self.root_pos;
                self.moves.clear();
                pos.generate_moves(&mut self.moves);
                if self.moves.is_empty() {
                    self.moves.push(Move::PASS);
                }
                self.tree.edges[root as usize].state = EdgeState::Pending;
                self.tree.edges[root as usize].in_flight += 1;
                self.pending
                    .push((root, self.pending_paths.len() as u32, 1));
                self.pending_paths.push(root);
                batch.push(pos, &self.moves);
                self.stats.evaluations += 1;
                return 1;
            }
            return 0;
        }
        if self.gumbel.is_some() {
            self.gumbel_step();
        }
        let max_leaves = self.config.leaves_per_batch;
        let mut pushed = 0u32;
        let mut collisions = 0u32;
        while pushed < max_leaves
            && self.started < self.budget
            && collisions < max_leaves
            && !(self.config.solver && self.tree.edges[root as usize].proof.is_some())
        {
            let forced = match &mut self.gumbel {
                Some(g) => match g.next_child() {
                    Some(c) => Some(c),
                    None => break,
                },
                None => None,
            };
            match self.descend(forced, batch) {
                Descent::Leaf => pushed += 1,
                Descent::Done => {}
                Descent::Collision => {
                    collisions += 1;
                    if let (Some(g), Some(c)) = (&mut self.gumbel, forced) {
                        g.give_back(c);
                        break;
                    }
                }
            }
        }
        self.stats.collisions += collisions;
        pushed as usize
    }

    /// One simulation from the root, stopping at a new leaf (queued in `batch`), a
    /// terminal or proven node (backed up at once) or a pending leaf (undone).
    fn descend(&mut self, forced_root_child: Option<u32>, batch: &mut EvalBatch) -> Descent {
        let solver = self.config.solver;
        self.path.clear();
        self.path_hashes.clear();
        let mut pos = self.root_pos;
        let mut e = self.tree.root;
        let mut first = true;
        loop {
            self.path.push(e);
            self.stats.max_depth = self.stats.max_depth.max(self.path.len() as u32 - 1);
            let edge = &mut self.tree.edges[e as usize];
            edge.in_flight += 1;
            match edge.state {
                EdgeState::Expanded if !(solver && edge.proof.is_some()) => {
                    let c = match (first, forced_root_child) {
                        (true, Some(c)) => c,
                        _ => self.select_child(e, first),
                    };
                    first = false;
                    pos.play(self.tree.edges[c as usize].mv);
                    self.path_hashes.push(pos.hash());
                    e = c;
                }
                EdgeState::Expanded | EdgeState::Terminal => {
                    let v = edge.proof.map_or(0.0, Proof::value);
                    self.started += 1;
                    self.stats.simulations += 1;
                    self.stats.terminal += 1;
                    backup(&mut self.tree.edges, &self.path, v, solver, false);
                    return Descent::Done;
                }
                EdgeState::Pending => {
                    for &p in &self.path {
                        self.tree.edges[p as usize].in_flight -= 1;
                    }
                    return Descent::Collision;
                }
                _ => {
                    let mv = edge.mv;
                    match self.classify_leaf(&pos, mv) {
                        Some(proof) => {
                            let edge = &mut self.tree.edges[e as usize];
                            edge.state = EdgeState::Terminal;
                            edge.proof = Some(proof);
                            self.started += 1;
                            self.stats.simulations += 1;
                            self.stats.terminal += 1;
                            backup(
                                &mut self.tree.edges,
                                &self.path,
                                proof.value(),
                                solver,
                                true,
                            );
                            return Descent::Done;
                        }
                        None => {
                            self.tree.edges[e as usize].state = EdgeState::Pending;
                            self.started += 1;
                            let start = self.pending_paths.len() as u32;
                            self.pending_paths.extend_from_slice(&self.path);
                            self.pending.push((e, start, self.path.len() as u32));
                            batch.push(pos, &self.moves);
                            self.stats.evaluations += 1;
                            return Descent::Leaf;
                        }
                    }
                }
            }
        }
    }

    /// The proven result, for the mover of `mv` (`pos.previous_mover()`), of the new
    /// leaf `pos` reached by `mv`, or `None` if it needs an evaluation (its moves are
    /// then in `self.moves`). Follows `Game`'s order: connection, ply limit, no move
    /// (none of which applies while a drop is pending), repetition; then (solver) an
    /// immediate win for the side to move.
    fn classify_leaf(&mut self, pos: &Position, mv: Move) -> Option<Proof> {
        let rules = &self.rules;
        let mover = pos.previous_mover();
        if let Some(o) = pos.connection_outcome_after(mv, rules) {
            return Some(Proof::of(o, mover));
        }
        let pending = pos.drop_pending();
        if !pending && rules.ply_limit.is_some_and(|l| pos.ply() >= l) {
            return Some(Proof::Draw);
        }
        self.moves.clear();
        pos.generate_moves(&mut self.moves);
        if self.moves.is_empty() {
            match rules.no_move {
                NoMove::Loss if !pending => {
                    return Some(Proof::of(Outcome::Win(pos.to_move().opponent()), mover))
                }
                NoMove::Pass if !pending && pos.nobody_can_move() => return Some(Proof::Draw),
                _ => self.moves.push(Move::PASS),
            }
        }
        if rules.repetition == Repetition::ThreeFold && self.repetitions(pos.hash()) >= 3 {
            return Some(Proof::Draw);
        }
        if self.config.solver && self.has_immediate_win(pos) {
            // `has_immediate_win` is false while a drop is pending, so the mover of `mv`
            // is the side to move's opponent.
            return Some(Proof::Loss);
        }
        None
    }

    /// Whether the side to move at `pos` can connect and win at once with one move
    /// ([`loa::tactics::winning_move`]). Never true when it is wrong; false while a drop is
    /// pending and when the side to move still holds a reserve (its move is only the first
    /// part of a compound turn, whose connection is checked after the drop).
    fn has_immediate_win(&self, pos: &Position) -> bool {
        !pos.drop_pending()
            && pos.reserve(pos.to_move()) == 0
            && loa::tactics::winning_move(pos, &self.rules).is_some()
    }

    /// Occurrences of `hash` in the game history and along the current path (the
    /// position itself included, as the path's last hash).
    fn repetitions(&self, hash: u64) -> usize {
        let mut n = self.path_hashes.iter().filter(|&&h| h == hash).count();
        let bit = (hash >> 52) as usize;
        if self.bloom[bit >> 6] & (1 << (bit & 63)) != 0 {
            n += self.history.iter().filter(|&&h| h == hash).count();
        }
        n
    }

    /// PUCT choice among the children of expanded edge `p`.
    ///
    /// Children are stored in decreasing prior order and an unvisited child is only ever
    /// chosen as the first unvisited one, so visited children form a prefix: the scan
    /// stops at the first unvisited, unproven child, which stands for all of them (they
    /// share the first-play-urgency value and have no higher prior).
    #[inline]
    fn select_child(&self, p: u32, at_root: bool) -> u32 {
        let edges = &self.tree.edges;
        let parent = &edges[p as usize];
        let n_parent = parent.visits + parent.in_flight as u32;
        let cu = self.config.cpuct * (n_parent.max(1) as f32).sqrt();
        let vl = self.config.virtual_loss;
        let solver = self.config.solver;
        let mut visited_mass = 0.0f32;
        let mut best = u32::MAX;
        let mut best_score = f32::NEG_INFINITY;
        let range = parent.child_range();
        let start = range.start as u32;
        let parent_q = q_for_children(edges, parent);
        for (k, e) in edges[range].iter().enumerate() {
            let inflight = e.in_flight as u32;
            let n = e.visits + inflight;
            let q = if let Some(p) = e.proof {
                if solver && p == Proof::Loss {
                    continue;
                }
                p.value()
            } else if n == 0 {
                let reduction = if at_root {
                    self.config.fpu_reduction_root
                } else {
                    self.config.fpu_reduction
                };
                let fpu = parent_q - reduction * visited_mass.sqrt();
                if fpu + cu * e.prior > best_score {
                    best = k as u32;
                }
                break;
            } else if inflight == 0 {
                e.q
            } else {
                (e.q * e.visits as f32 - vl * inflight as f32) / n as f32
            };
            visited_mass += e.prior;
            let score = q + cu * e.prior / (1 + n) as f32;
            if score > best_score {
                best_score = score;
                best = k as u32;
            }
        }
        if best == u32::MAX {
            // Every child is a proven loss (the node is proven; only reached when the
            // solver is off at this node): take the first.
            best = 0;
        }
        start + best
    }

    /// Expands the leaves of the last [`Search::gather`] from the evaluated `batch` and
    /// backs their values up. Fails if the evaluator returned non-finite numbers.
    pub fn absorb(&mut self, batch: &EvalBatch) -> Result<(), Error> {
        let solver = self.config.solver;
        let mut result = Ok(());
        let needed = self.batch_base + self.pending.len();
        if batch.values.len() < needed
            || batch.priors.len() != batch.moves.len()
            || batch.len() < needed
        {
            // Leave the tree consistent: the pending leaves become unexpanded again.
            for k in 0..self.pending.len() {
                let (e, start, len) = self.pending[k];
                self.tree.edges[e as usize].state = EdgeState::Unexpanded;
                for &p in &self.pending_paths[start as usize..(start + len) as usize] {
                    let edge = &mut self.tree.edges[p as usize];
                    edge.in_flight = edge.in_flight.saturating_sub(1);
                }
            }
            let root = self.tree.root;
            self.started -= self.pending.iter().filter(|p| p.0 != root).count() as u32;
            self.pending.clear();
            self.pending_paths.clear();
            return Err(Error::Eval(format!(
                "evaluator returned {} values and {} priors for {} positions and {} moves",
                batch.values.len(),
                batch.priors.len(),
                batch.len(),
                batch.moves.len()
            )));
        }
        for k in 0..self.pending.len() {
            let (e, start, len) = self.pending[k];
            let i = self.batch_base + k;
            let mut value = batch.values[i];
            if !value.is_finite() {
                result = Err(Error::Eval(format!(
                    "non-finite value {value} for position {}",
                    batch.positions[i].to_text()
                )));
                value = 0.0;
            }
            let range = batch.range(i);
            let first = self.tree.edges.len();
            let n = range.len();
            self.tree.edges.extend(
                batch.moves[range.clone()]
                    .iter()
                    .zip(&batch.priors[range])
                    .map(|(&mv, &p)| {
                        Edge::new(mv, if p.is_finite() && p >= 0.0 { p } else { 0.0 })
                    }),
            );
            // Children in decreasing prior order: unvisited children are then a suffix
            // and selection stops scanning at the first one (see `select_child`).
            let children = &mut self.tree.edges[first..];
            if !children.is_sorted_by(|a, b| a.prior >= b.prior) {
                children.sort_unstable_by(|a, b| b.prior.total_cmp(&a.prior));
            }
            let first = first as u32;
            let edge = &mut self.tree.edges[e as usize];
            edge.children = first;
            edge.num_children = n as u16;
            edge.state = EdgeState::Expanded;
            let path = &self.pending_paths[start as usize..(start + len) as usize];
            // `value` is for the leaf's side to move; the edge's mover is the leaf's
            // previous mover: the same side while a drop is pending.
            let value = if batch.positions[i].drop_pending() {
                value
            } else {
                -value
            };
            backup(&mut self.tree.edges, path, value, solver, false);
            if e == self.tree.root {
                self.prepare_root(false);
            } else {
                self.stats.simulations += 1;
            }
        }
        self.pending.clear();
        self.pending_paths.clear();
        result
    }

    /// Once the root is expanded: marks root moves that end the game by connection
    /// (solver), applies pending root noise and sets up the Gumbel root.
    fn prepare_root(&mut self, already_expanded: bool) {
        let root = self.tree.root as usize;
        if self.config.solver && !already_expanded {
            let us = self.root_pos.to_move();
            for c in self.tree.edges[root].child_range() {
                let mv = self.tree.edges[c].mv;
                let child = self.root_pos.after(mv);
                if let Some(o) = child.connection_outcome_after(mv, &self.rules) {
                    let e = &mut self.tree.edges[c];
                    e.state = EdgeState::Terminal;
                    e.proof = Some(Proof::of(o, us));
                }
            }
            update_proof(&mut self.tree.edges, root as u32);
        }
        if self.config.gumbel {
            let noise = std::mem::take(&mut self.noise_pending);
            let rng = &mut self.rng;
            self.gumbel = Some(GumbelRoot::new(
                &self.config,
                &self.tree.edges,
                root,
                self.budget.saturating_sub(self.started),
                noise.then_some(rng),
            ));
            return;
        }
        if std::mem::take(&mut self.noise_pending) && self.config.dirichlet_epsilon > 0.0 {
            let range = self.tree.edges[root].child_range();
            if range.len() > 1 {
                let gamma =
                    Gamma::new(self.config.dirichlet_alpha, 1.0).expect("alpha validated > 0");
                let mut noise: Vec<f32> =
                    range.clone().map(|_| gamma.sample(&mut self.rng)).collect();
                let total: f32 = noise.iter().sum();
                if total > 0.0 {
                    noise.iter_mut().for_each(|x| *x /= total);
                    let eps = self.config.dirichlet_epsilon;
                    for (c, x) in range.zip(noise) {
                        let e = &mut self.tree.edges[c];
                        e.prior = (1.0 - eps) * e.prior + eps * x;
                    }
                }
            }
        }
    }

    /// Between Gumbel phases: halves the candidates once a phase's visits are done.
    fn gumbel_step(&mut self) {
        let root = self.tree.root as usize;
        if let Some(g) = &mut self.gumbel {
            g.maybe_halve(&self.tree.edges, root);
        }
    }

    /// The root's moves with their statistics, in decreasing prior order (the order of
    /// [`Search::policy_target`]).
    pub fn root_moves(&self) -> Vec<RootMove> {
        let edges = &self.tree.edges;
        let root = &edges[self.tree.root as usize];
        if root.state != EdgeState::Expanded {
            return Vec::new();
        }
        edges[root.child_range()]
            .iter()
            .map(|e| RootMove {
                mv: e.mv,
                visits: e.visits,
                q: e.q,
                prior: e.prior,
                proof: e.proof,
            })
            .collect()
    }

    /// The principal variation beginning with the root move `first`: `first`, then from
    /// each position the most visited child (ties: the higher value for its mover) while
    /// one has been visited; it ends at a leaf, a terminal or proven node, or a position
    /// whose children are unvisited. Just `[first]` when `first` is not a root move of the
    /// tree (e.g. the root check chose it without a search of this root).
    pub fn principal_variation(&self, first: Move) -> Vec<Move> {
        let edges = &self.tree.edges;
        let mut pv = vec![first];
        let Some(mut e) = self.tree.find_child(self.tree.root, first) else {
            return pv;
        };
        loop {
            let edge = &edges[e as usize];
            if edge.state != EdgeState::Expanded || edge.proof.is_some() {
                return pv;
            }
            let best = edge
                .child_range()
                .filter(|&c| edges[c].visits > 0)
                .max_by(|&a, &b| {
                    (edges[a].visits, edges[a].q)
                        .partial_cmp(&(edges[b].visits, edges[b].q))
                        .unwrap_or(std::cmp::Ordering::Equal)
                });
            match best {
                Some(c) => {
                    pv.push(edges[c].mv);
                    e = c as u32;
                }
                None => return pv,
            }
        }
    }

    /// Whether the root edge's statistics (those of the side that made the move leading
    /// to the root, see [`Position::previous_mover`]) are also the side to move's (a drop
    /// is pending at the root).
    fn root_edge_is_ours(&self) -> bool {
        self.root_pos.drop_pending()
    }

    /// Value of the root for its side to move: the proven result, or the mean of the
    /// backed-up values.
    pub fn root_value(&self) -> f32 {
        let root = &self.tree.edges[self.tree.root as usize];
        let v = root.proof.map_or(root.q, Proof::value);
        if self.root_edge_is_ours() {
            v
        } else {
            -v
        }
    }

    /// The proven result of the root for its side to move, if it is proven.
    pub fn root_proof(&self) -> Option<Proof> {
        let root = &self.tree.edges[self.tree.root as usize];
        root.proof.map(|p| {
            if self.root_edge_is_ours() {
                p
            } else {
                p.flipped()
            }
        })
    }

    /// Simulations completed through the root's children over this search (`begin`).
    pub fn simulations_done(&self) -> u32 {
        self.stats.simulations
    }

    /// The move to play without randomness: a proven win at once; else (Gumbel root) the
    /// Gumbel choice; else the most visited move that is not a proven loss (ties: higher
    /// value). `None` before the root is expanded.
    pub fn best_move(&self) -> Option<Move> {
        let moves = self.root_moves();
        if let Some(m) = moves.iter().find(|m| m.proof == Some(Proof::Win)) {
            return Some(m.mv);
        }
        if let Some(g) = &self.gumbel {
            if let Some(c) = g.choice(&self.tree.edges, self.tree.root as usize) {
                return Some(self.tree.edges[c as usize].mv);
            }
        }
        let candidates = moves.iter().filter(|m| m.proof != Some(Proof::Loss));
        let pick = |it: &mut dyn Iterator<Item = &RootMove>| {
            it.max_by(|a, b| {
                a.visits
                    .cmp(&b.visits)
                    .then(a.q.partial_cmp(&b.q).unwrap_or(std::cmp::Ordering::Equal))
                    .then(
                        a.prior
                            .partial_cmp(&b.prior)
                            .unwrap_or(std::cmp::Ordering::Equal),
                    )
            })
            .map(|m| m.mv)
        };
        pick(&mut candidates.clone()).or_else(|| pick(&mut moves.iter()))
    }

    /// A move drawn with probability ∝ visits^(1/temperature) among the moves that are
    /// not proven losses; a proven win is played at once; temperature 0 (or a Gumbel
    /// root, whose choice is already random) gives [`Search::best_move`].
    pub fn sample_move(&mut self, temperature: f32) -> Option<Move> {
        if temperature <= 0.0 || self.gumbel.is_some() {
            return self.best_move();
        }
        let moves = self.root_moves();
        if moves.iter().any(|m| m.proof == Some(Proof::Win)) {
            return self.best_move();
        }
        let allowed: Vec<&RootMove> = moves
            .iter()
            .filter(|m| m.proof != Some(Proof::Loss))
            .collect();
        let allowed = if allowed.iter().any(|m| m.visits > 0) {
            allowed
        } else {
            return self.best_move();
        };
        let max_visits = allowed.iter().map(|m| m.visits).max().unwrap_or(1) as f64;
        let weights: Vec<f64> = allowed
            .iter()
            .map(|m| (m.visits as f64 / max_visits).powf(1.0 / temperature as f64))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut x = self.rng.random::<f64>() * total;
        for (m, w) in allowed.iter().zip(&weights) {
            if x < *w {
                return Some(m.mv);
            }
            x -= w;
        }
        allowed.last().map(|m| m.mv)
    }

    /// The policy target over [`Search::root_moves`]' order: one-hot on a proven win;
    /// the Gumbel improved policy (Gumbel root); else the visit distribution.
    pub fn policy_target(&self) -> Vec<f32> {
        let moves = self.root_moves();
        if let Some(k) = moves.iter().position(|m| m.proof == Some(Proof::Win)) {
            let mut p = vec![0.0; moves.len()];
            p[k] = 1.0;
            return p;
        }
        if let Some(g) = &self.gumbel {
            return g.improved_policy(&self.tree.edges, self.tree.root as usize);
        }
        let total: u32 = moves.iter().map(|m| m.visits).sum();
        if total == 0 {
            return moves.iter().map(|m| m.prior).collect();
        }
        moves
            .iter()
            .map(|m| m.visits as f32 / total as f32)
            .collect()
    }
}

enum Descent {
    Leaf,
    Done,
    Collision,
}

/// Backs `v` (the value for the mover of the path's last edge) up `path`, removing the
/// virtual loss. Going from an edge to its parent edge the sign flips, except across a
/// drop (made by the same side as the move before it). With the solver, proofs are
/// re-derived upwards while they change (`changed`: the last edge was just proven), and a
/// proven edge backs up its proven value.
#[inline]
fn backup(edges: &mut [Edge], path: &[u32], mut v: f32, solver: bool, mut changed: bool) {
    for k in (0..path.len()).rev() {
        let idx = path[k] as usize;
        if solver && changed && k + 1 < path.len() {
            changed = update_proof(edges, idx as u32);
        }
        let e = &mut edges[idx];
        if let (true, Some(p)) = (solver, e.proof) {
            v = p.value();
        }
        e.in_flight = e.in_flight.saturating_sub(1);
        e.visits += 1;
        e.q += (v - e.q) / e.visits as f32;
        if !e.mv.is_drop() {
            v = -v;
        }
    }
}

/// Derives the proof of expanded edge `p` (for its mover) from its children's (for
/// theirs, the side to move below `p`). When that side is `p`'s opponent, a child that
/// wins makes `p` lost and all children proven make it `-max`; when it is the same side
/// (the children are drops), a winning child makes `p` won and all proven make it `max`.
/// Returns whether `p` became proven.
fn update_proof(edges: &mut [Edge], p: u32) -> bool {
    let e = &edges[p as usize];
    if e.proof.is_some() || e.state != EdgeState::Expanded || e.num_children == 0 {
        return false;
    }
    // The children's results are for the side to move below `p`: `p`'s mover itself
    // when the children are drops, else its opponent.
    let same_side = edges[e.children as usize].mv.is_drop();
    let mut best = Proof::Loss;
    let mut all = true;
    for c in &edges[e.child_range()] {
        match c.proof {
            None => all = false,
            Some(r) => best = best.max(r),
        }
        if best == Proof::Win {
            break;
        }
    }
    if !(all || best == Proof::Win) {
        return false;
    }
    edges[p as usize].proof = Some(if same_side { best } else { best.flipped() });
    true
}

/// A fresh random seed from the OS-seeded thread generator.
pub fn random_seed() -> u64 {
    rand::rng().random()
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
