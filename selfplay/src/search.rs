//! One batched MCTS: PUCT with first-play urgency, virtual loss for several leaves per
//! evaluator call, Dirichlet root noise, MCTS-Solver, repetition and ply-limit handling,
//! tree reuse, optional Gumbel root.
//!
//! A [`Search`] is driven from outside so that many searches can share one evaluator
//! call: [`Search::gather`] appends leaves to a batch, the caller evaluates the batch,
//! [`Search::absorb`] expands the leaves and backs their values up. [`Search::run`] does
//! the loop for a single search.
//!
//! One search can also have several batches in flight at once:
//! [`Search::gather_leaves`] hands out the leaves of one batch as an [`InFlight`] ticket
//! that [`Search::absorb_leaves`] (or [`Search::abandon_leaves`]) takes back, in any
//! order, virtual loss keeping the batches apart. [`Search::run_parallel`] uses this to
//! run several threads over one tree: each gathers a batch under a mutex, evaluates it
//! without the lock while the others gather and absorb theirs, and backs it up under the
//! lock. A `Search` is `Send`; it is never touched by two threads at once.
//!
//! Files: the search itself here; the batches in flight and the threads in
//! `search/parallel.rs`; what the search says at its root (moves, value, policy target) in
//! `search/root.rs`.

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

mod parallel;
mod root;

/// Counters of one search (reset by [`Search::begin`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Simulations completed (each ends at a new leaf or a terminal/proven node).
    pub simulations: u32,
    /// Leaves sent to the evaluator (root expansion included).
    pub evaluations: u32,
    /// Simulations that met a leaf already waiting for the evaluator.
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
    /// The leaves of the current [`Search::gather`] (and, while a ticket's leaves are
    /// gathered or absorbed, that ticket's).
    current: InFlight,
    /// Tickets handed out by [`Search::gather_leaves`] with leaves not yet absorbed or
    /// abandoned.
    tickets: u32,
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
            current: InFlight::default(),
            tickets: 0,
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
    /// Must not be called while leaves are pending (in a batch or a ticket).
    pub fn set_root(&mut self, game: &Game) {
        debug_assert!(self.nothing_in_flight());
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
        debug_assert!(self.nothing_in_flight());
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
        debug_assert!(self.nothing_in_flight());
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

    fn nothing_in_flight(&self) -> bool {
        self.current.is_empty() && self.tickets == 0
    }

    /// Batches of leaves waiting for their evaluation: the leaves of a
    /// [`Search::gather`] not yet absorbed count as one, and so does every
    /// [`Search::gather_leaves`] ticket with leaves not yet absorbed or abandoned.
    pub fn batches_in_flight(&self) -> usize {
        self.tickets as usize + usize::from(!self.current.is_empty())
    }

    /// Whether the search is over: the budget is spent, the root is proven or has a
    /// single legal move, and no leaf is pending (in a batch or a ticket).
    pub fn is_finished(&self) -> bool {
        let root = &self.tree.edges[self.tree.root as usize];
        self.nothing_in_flight()
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
        debug_assert!(self.current.is_empty());
        let others_in_flight = self.tickets > 0;
        self.gather_current(batch, others_in_flight)
    }

    /// Whether the root has been expanded (the search has moves to rank).
    fn root_expanded(&self) -> bool {
        self.tree.edges[self.tree.root as usize].state == EdgeState::Expanded
    }

    /// [`Search::gather`] into `self.current`. While `others_in_flight` (other batches'
    /// leaves are not backed up yet) a Gumbel root does not halve.
    fn gather_current(&mut self, batch: &mut EvalBatch, others_in_flight: bool) -> usize {
        self.current.base = batch.len();
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
                self.current
                    .leaves
                    .push((root, self.current.paths.len() as u32, 1));
                self.current.paths.push(root);
                batch.push(pos, &self.moves);
                self.stats.evaluations += 1;
                return 1;
            }
            return 0;
        }
        if self.gumbel.is_some() && !others_in_flight {
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
            match self.simulate(forced, batch) {
                SimulationEnd::Leaf => pushed += 1,
                SimulationEnd::Done => {}
                SimulationEnd::Collision => {
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
    fn simulate(&mut self, forced_root_child: Option<u32>, batch: &mut EvalBatch) -> SimulationEnd {
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
                    return SimulationEnd::Done;
                }
                EdgeState::Pending => {
                    for &p in &self.path {
                        self.tree.edges[p as usize].in_flight -= 1;
                    }
                    return SimulationEnd::Collision;
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
                            return SimulationEnd::Done;
                        }
                        None => {
                            self.tree.edges[e as usize].state = EdgeState::Pending;
                            self.started += 1;
                            let start = self.current.paths.len() as u32;
                            self.current.paths.extend_from_slice(&self.path);
                            self.current.leaves.push((e, start, self.path.len() as u32));
                            batch.push(pos, &self.moves);
                            self.stats.evaluations += 1;
                            return SimulationEnd::Leaf;
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
        self.absorb_current(batch)
    }

    /// Leaves the tree consistent without an evaluation of `self.current`: its leaves
    /// become unexpanded again, their virtual loss is removed and their simulations are
    /// not counted (a Gumbel root gets their root children back into its phase's
    /// schedule, which cannot have moved on while they were in flight).
    fn release_current(&mut self) {
        for k in 0..self.current.leaves.len() {
            let (e, start, len) = self.current.leaves[k];
            self.tree.edges[e as usize].state = EdgeState::Unexpanded;
            let path = &self.current.paths[start as usize..(start + len) as usize];
            for &p in path {
                let edge = &mut self.tree.edges[p as usize];
                edge.in_flight = edge.in_flight.saturating_sub(1);
            }
            if let (Some(g), Some(&child)) = (&mut self.gumbel, path.get(1)) {
                g.give_back(child);
            }
        }
        let root = self.tree.root;
        self.started -= self.current.leaves.iter().filter(|p| p.0 != root).count() as u32;
        self.current.clear();
    }

    /// [`Search::absorb`] of `self.current`.
    fn absorb_current(&mut self, batch: &EvalBatch) -> Result<(), Error> {
        let solver = self.config.solver;
        let mut result = Ok(());
        let needed = self.current.base + self.current.leaves.len();
        if batch.values.len() < needed
            || batch.priors.len() != batch.moves.len()
            || batch.len() < needed
        {
            // Leave the tree consistent: the pending leaves become unexpanded again.
            self.release_current();
            return Err(Error::Eval(format!(
                "evaluator returned {} values and {} priors for {} positions and {} moves",
                batch.values.len(),
                batch.priors.len(),
                batch.len(),
                batch.moves.len()
            )));
        }
        for k in 0..self.current.leaves.len() {
            let (e, start, len) = self.current.leaves[k];
            let i = self.current.base + k;
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
            let path = &self.current.paths[start as usize..(start + len) as usize];
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
        self.current.clear();
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
}

enum SimulationEnd {
    Leaf,
    Done,
    Collision,
}

/// The leaves of one [`Search::gather_leaves`], waiting for their evaluation: give it
/// back to [`Search::absorb_leaves`] with the evaluated batch, or to
/// [`Search::abandon_leaves`]. Until then the search cannot finish.
#[derive(Debug, Default)]
#[must_use = "a ticket with leaves must go back to absorb_leaves or abandon_leaves"]
pub struct InFlight {
    /// (edge, start in `paths`, path length) per leaf, in batch order.
    leaves: Vec<(u32, u32, u32)>,
    /// The paths from the root of every leaf, concatenated.
    paths: Vec<u32>,
    /// Index in the batch of the first leaf's position.
    base: usize,
}

impl InFlight {
    /// Number of leaves (positions in the batch from the ticket's first on).
    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    /// Whether the ticket holds no leaf.
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    fn clear(&mut self) {
        self.leaves.clear();
        self.paths.clear();
    }
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

#[cfg(test)]
#[path = "parallel_tests.rs"]
mod parallel_tests;
