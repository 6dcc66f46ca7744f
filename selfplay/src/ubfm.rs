//! Unbounded Best-First Minimax (UBFM) with completion (Cohen-Solal & Cazenave; see
//! `shared/notes/descent.md`): a best-first minimax search over a transposition table,
//! driven by any [`Evaluator`]'s values (its priors are not used).
//!
//! # The search
//!
//! The table maps a position's Zobrist hash to what the search knows of it: its value for
//! its side to move (the evaluator's, then the backed-up minimax value), its resolution
//! ([`Resolution`]: proven win, loss or draw with the distance in plies, or unresolved)
//! and, once expanded, its children: each legal move with the child's key, or the child's
//! exact result when the game ends there. One iteration:
//!
//! 1. descends from the root, at every expanded state to its best child for the side to
//!    move there (negamax: a child's value changes sign when the side to move changes,
//!    and does not across a `parachute` drop, made by the same side);
//! 2. expands the non-expanded state it reaches: generates its moves and evaluates
//!    **all its children in one [`EvalBatch`]** (children already in the table, and
//!    children whose result is exact, are not sent);
//! 3. recomputes the values and resolutions of the states on the path, bottom up, from
//!    their children's current entries (a state reached by several paths is recomputed
//!    whenever a descent passes through it).
//!
//! **Descent** ([`UbfmConfig::descend_to_terminal`]; Cohen-Solal's variant used for
//! learning) differs in step 2 only: after an expansion the iteration goes on down the
//! best line of the fresh children, expanding each state it reaches, until the line
//! ends in a finished game (an exact result) or a resolved state; step 3 then backs
//! the minimax values up the whole path. Descent mode also remembers the position of
//! every state whose value it computed ([`Ubfm::searched_states`]): tree learning
//! trains on all of them.
//!
//! **Batching.** [`Ubfm::search`] evaluates each expansion's children in one
//! [`EvalBatch`] of its own. [`Ubfm::advance`], [`Ubfm::gather`] and [`Ubfm::absorb`]
//! expose the same search as steps, so that a caller (Descent self-play) drives many
//! searches in lockstep and sends the children of all their expansions to the
//! evaluator in one call.
//!
//! # Exact results
//!
//! A child is not evaluated when its result is known: the game ends there (connection,
//! the ply limit, a player without moves under `no-move=loss`, nobody able to move under
//! `no-move=pass`: [`loa::Position::connection_outcome_after`] and
//! [`loa::Position::non_connection_outcome`]'s rules), its side to move wins within its
//! turn ([`loa::tactics::winning_move`]: a win in 1, or 2 for a `parachute` compound
//! turn), or it repeats a position (below).
//!
//! **Terminal reward** (prefers fast wins and slow losses): a state whose side to move
//! wins in `d` plies under best play is worth `1 − d/1000` to it, one that loses in `d`
//! plies `−(1 − d/1000)` (distances above [`MAX_DISTANCE`] count as [`MAX_DISTANCE`]), a
//! draw 0. A finished game is a loss in 0 plies for its side to move (or a draw), so the
//! move that ends it wins in 1: worth 0.999 to its mover.
//!
//! **Repetitions.** A child equal to a position of the game so far (under the three-fold
//! rule) or to a state on the current search path (under any rule: a cycle of the
//! search) is scored a draw for the move leading to it, once, where it is met: the side
//! that can repeat can at least draw that way. So proven wins and losses hold under the
//! rules (a repetition counted as a draw can only stop a proof), while a proven draw may
//! rest on a repetition the real game would continue from.
//!
//! # Completion
//!
//! With [`UbfmConfig::completion`] (the default) every state carries its resolution: a
//! state with a child that is a proven loss for the child's side to move is a proven win
//! (in one ply more than the fastest such child), a state whose children are all resolved
//! takes the best of them (a draw before the longest loss), and anything else is
//! unresolved. The descent chooses among **unresolved** children only, so a resolved
//! subtree is never searched again, and it ranks children as the papers do: by
//! completed value first (proven win > unresolved or draw > proven loss; among proven
//! wins the fastest, among proven losses the slowest), then by value. The search stops
//! as soon as the root is resolved. A proven distance is the best the search has proven,
//! an upper bound on the winner's plies (a faster win may lie in a subtree it never
//! needed to search). Without completion (the ablation of the papers)
//! every child competes by value alone, exact results included, and an iteration whose
//! best line ends in a finished game changes nothing: the search stops there, since
//! every later iteration would repeat it.
//!
//! # The move played
//!
//! The papers' **safest action**: the root move the descents went through most often
//! (ties: the better completed value, then value), except that a proven win is played at
//! once (the fastest one), and a proven loss only when every move is one (then the
//! slowest). See [`Ubfm::best_move`]. (`shared/notes/descent.md` records the rule as
//! "plays the safest action instead of the best", the most explored root move being its
//! recollected definition.) Visits rather than the best value: a move whose value was
//! raised by one last expansion, not yet searched further, is not played on that alone.
//!
//! # Limits and memory
//!
//! A search runs until its iteration budget or its deadline (read between iterations;
//! the root is always expanded), the root is resolved (completion), the root has a
//! single move, or the table holds [`UbfmConfig::max_entries`] entries. [`Ubfm::search`]
//! clears the table at its start (no tree is kept between moves), so memory is bounded
//! by the cap; [`Ubfm::set_root_keeping_table`] keeps it (Descent self-play follows its
//! game down the tree it built, and clears the table itself).

use crate::evaluator::{EvalBatch, Evaluator};
use crate::Error;
use loa::rules::Repetition;
use loa::{Game, Move, MoveList, Position, Rules};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

mod resolution;
mod root;

pub use resolution::{completed_order, Resolution};

/// Distances in plies above this count as this in a proven result's value (so every
/// proven win is worth at least 0.5).
pub const MAX_DISTANCE: u16 = 500;

/// Value lost per ply of distance to a proven result.
const PLY_DISCOUNT: f32 = 1.0 / 1000.0;

/// Default cap on table entries: about 100 MB.
pub const DEFAULT_MAX_ENTRIES: usize = 1 << 20;

/// Plies a principal variation shows at most.
const MAX_PV: usize = 32;

/// Settings of a UBFM search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UbfmConfig {
    /// Completion: resolved states are ranked by their result and never searched again
    /// (default `true`; `false` is the papers' plain UBFM, for comparison).
    pub completion: bool,
    /// The search stops before an expansion would take the table past this many entries.
    pub max_entries: usize,
    /// Descent (default `false`: UBFM): an iteration goes on down the best line after
    /// its expansion, expanding every state it meets, until a finished game or a
    /// resolved state; the table also keeps the position of every state whose value
    /// the search computed ([`Ubfm::searched_states`], for tree learning).
    pub descend_to_terminal: bool,
}

impl Default for UbfmConfig {
    fn default() -> Self {
        UbfmConfig {
            completion: true,
            max_entries: DEFAULT_MAX_ENTRIES,
            descend_to_terminal: false,
        }
    }
}

/// Counters and results of the last search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UbfmStats {
    /// Descents from the root.
    pub iterations: u32,
    /// States expanded.
    pub expansions: u32,
    /// Positions sent to the evaluator.
    pub evaluations: u32,
    /// Entries in the table at the end.
    pub entries: usize,
    /// The root's value for its side to move.
    pub value: f32,
    /// The root's resolution (always unresolved without completion).
    pub resolution: Resolution,
    /// The principal variation: best moves from the root by completed value.
    pub pv: Vec<Move>,
    /// Why the search stopped: `budget`, `deadline`, `resolved`, `single move`,
    /// `stuck` (plain UBFM's best line ends in a finished game) or `table full`.
    pub stopped_by: &'static str,
}

impl UbfmStats {
    /// One line for logs and the engine protocol: iterations, expansions, evaluations,
    /// value (or proof), principal variation.
    pub fn summary(&self) -> String {
        let result = match self.resolution {
            Resolution::Unresolved => format!("value {:+.3}", self.value),
            Resolution::Win(d) => format!("proven win in {d}"),
            Resolution::Loss(d) => format!("proven loss in {d}"),
            Resolution::Draw => "proven draw".into(),
        };
        let pv: Vec<String> = self.pv.iter().map(|m| m.to_string()).collect();
        format!(
            "ubfm iterations {} expansions {} evaluations {} entries {} {result} pv {} ({})",
            self.iterations,
            self.expansions,
            self.evaluations,
            self.entries,
            pv.join(" "),
            self.stopped_by
        )
    }
}

/// One root move after a search, seen by the side to move at the root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UbfmRootMove {
    /// The move.
    pub mv: Move,
    /// Descents through it.
    pub visits: u32,
    /// Its value.
    pub value: f32,
    /// Its proven result (unresolved without completion).
    pub resolution: Resolution,
}

/// Limits of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UbfmLimits {
    /// Most iterations (each expands at most one state).
    pub iterations: u32,
    /// Stop once this passes (checked between iterations).
    pub deadline: Option<Instant>,
}

/// Where a child edge leads.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// A state in the table, by key.
    State(u64),
    /// The game ends there (or repeats): the result for the child's side to move.
    Exact(Resolution),
}

/// A move of an expanded state.
#[derive(Clone, Copy, Debug)]
struct Child {
    mv: Move,
    target: Target,
    /// Whether the child's side to move is the parent's opponent (false across a drop).
    flip: bool,
    /// Descents through this edge.
    visits: u32,
}

/// What the table holds for one state.
#[derive(Clone, Debug)]
struct Entry {
    /// Value for the side to move: the evaluation, then the backed-up minimax value.
    value: f32,
    resolution: Resolution,
    /// `None` until expanded.
    children: Option<Vec<Child>>,
}

/// Hashes a table key, already a uniformly random Zobrist hash, as itself.
#[derive(Clone, Copy, Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// The transposition table: position hash → entry. Two positions with the same 64-bit
/// hash (about 2^-64 per pair) would share an entry.
type Table = HashMap<u64, Entry, BuildHasherDefault<KeyHasher>>;

/// A search (see the module docs). Not shared between threads; the evaluator may be.
pub struct Ubfm {
    config: UbfmConfig,
    rules: Rules,
    table: Table,
    root: u64,
    root_pos: Position,
    /// Hashes of the game's positions up to and including the root.
    history: HashSet<u64>,
    stats: UbfmStats,
    batch: EvalBatch,
    moves: MoveList,
    /// Descent mode: the position of every state whose value the search computed
    /// (expanded, or proven without the evaluator), for tree learning.
    positions: HashMap<u64, Position, BuildHasherDefault<KeyHasher>>,
    /// The iteration in progress, if any.
    cursor: Option<Cursor>,
    /// The expansion waiting for its children's values, if any.
    pending: Option<Pending>,
}

/// Where the iteration in progress stands.
struct Cursor {
    /// The states of the path with the child index taken from each.
    path: Vec<(u64, usize)>,
    /// The keys from the root to the current state.
    keys: Vec<u64>,
    key: u64,
    pos: Position,
    /// States this iteration expanded.
    expanded: u32,
}

/// An expansion waiting for the values of its new children.
struct Pending {
    key: u64,
    pos: Position,
    children: Vec<Child>,
    /// New states with their exact result when known without the evaluator; those
    /// without one are evaluated, in this order.
    fresh: Vec<(Position, Option<Resolution>)>,
    /// How many of `fresh` need the evaluator.
    to_evaluate: usize,
}

/// How one iteration ended.
enum Step {
    /// A state was expanded (or the table is full: `false`).
    Expanded(bool),
    /// The values changed without an expansion (a stale resolution, a cycle broken).
    Updated,
    /// The best line ends in a finished game and nothing was expanded: nothing can
    /// change (plain UBFM or Descent without completion).
    Stuck,
}

/// What [`Ubfm::descend`] stopped at.
enum Descend {
    /// The pending expansion needs values.
    NeedsValues,
    /// The iteration is over.
    Done(Step),
}

impl Ubfm {
    /// A search with `config`; call [`Ubfm::search`].
    pub fn new(config: UbfmConfig) -> Ubfm {
        let rules = Rules::classic();
        Ubfm {
            config,
            rules,
            table: Table::default(),
            root: 0,
            root_pos: Position::start(loa::Variant::Standard, &rules),
            history: HashSet::new(),
            stats: UbfmStats::default(),
            batch: EvalBatch::new(),
            moves: MoveList::new(),
            positions: Default::default(),
            cursor: None,
            pending: None,
        }
    }

    /// The settings.
    pub fn config(&self) -> &UbfmConfig {
        &self.config
    }

    /// Counters and results of the last search.
    pub fn stats(&self) -> &UbfmStats {
        &self.stats
    }

    /// Searches the current position of `game` with `evaluator` within `limits` (the
    /// table starts empty). Errors if the game is over or the evaluator fails.
    pub fn search(
        &mut self,
        game: &Game,
        evaluator: &dyn Evaluator,
        limits: UbfmLimits,
    ) -> Result<(), Error> {
        self.set_root(game)?;
        let mut batch = std::mem::take(&mut self.batch);
        let result = self.run(evaluator, limits, &mut batch);
        self.batch = batch;
        result
    }

    /// Runs the search of the current root to its end, evaluating through `batch`.
    fn run(
        &mut self,
        evaluator: &dyn Evaluator,
        limits: UbfmLimits,
        batch: &mut EvalBatch,
    ) -> Result<(), Error> {
        while self.advance(limits)?.is_none() {
            batch.clear();
            self.gather(batch);
            evaluator.evaluate(batch)?;
            self.absorb(&batch.values)?;
        }
        Ok(())
    }

    /// Searches like [`Ubfm::search`] and returns [`Ubfm::best_move`].
    pub fn choose_move(
        &mut self,
        game: &Game,
        evaluator: &dyn Evaluator,
        limits: UbfmLimits,
    ) -> Result<Move, Error> {
        self.search(game, evaluator, limits)?;
        self.best_move()
            .ok_or_else(|| Error::Eval("search produced no move".into()))
    }

    /// Points the search at `game`'s position with an empty table. Errors if the game
    /// is over.
    pub fn set_root(&mut self, game: &Game) -> Result<(), Error> {
        self.table.clear();
        self.positions.clear();
        self.set_root_keeping_table(game)
    }

    /// Points the search at `game`'s position and keeps what the table knows (Descent
    /// self-play follows its game down the tree it built). Errors if the game is over.
    pub fn set_root_keeping_table(&mut self, game: &Game) -> Result<(), Error> {
        if let Some(o) = game.outcome() {
            return Err(Error::Eval(format!(
                "no move to choose: the game is over ({})",
                o.name()
            )));
        }
        self.rules = *game.rules();
        self.root_pos = *game.position();
        self.root = self.root_pos.hash();
        self.history.clear();
        let mut p = *game.start();
        self.history.insert(p.hash());
        for &mv in game.moves() {
            p.play(mv);
            self.history.insert(p.hash());
        }
        self.table.entry(self.root).or_insert(Entry {
            value: 0.0,
            resolution: Resolution::Unresolved,
            children: None,
        });
        self.stats = UbfmStats::default();
        self.cursor = None;
        self.pending = None;
        Ok(())
    }

    /// Why the search of the current root should stop now, if it should.
    fn stop_reason(&self, limits: &UbfmLimits) -> Option<&'static str> {
        if self.stats.iterations >= limits.iterations.max(1) {
            return Some("budget");
        }
        let root = &self.table[&self.root];
        let children = root.children.as_ref()?;
        if self.config.completion && root.resolution.is_resolved() {
            Some("resolved")
        } else if children.len() == 1 {
            Some("single move")
        } else if limits.deadline.is_some_and(|d| Instant::now() >= d) {
            Some("deadline")
        } else {
            None
        }
    }

    /// Advances the search of the current root (see [`Ubfm::set_root`]) within
    /// `limits` until it needs values or ends. `Ok(None)`: the positions that
    /// [`Ubfm::gather`] adds to a batch need the evaluator's values, handed back with
    /// [`Ubfm::absorb`] before the next call. `Ok(Some(reason))`: the search is over
    /// (the reason as [`UbfmStats::stopped_by`]) and its results are in
    /// [`Ubfm::stats`]. This lets a caller drive many searches in lockstep and evaluate
    /// their children in one batch.
    pub fn advance(&mut self, limits: UbfmLimits) -> Result<Option<&'static str>, Error> {
        if self.pending.is_some() {
            return Err(Error::Eval(
                "the search still waits for the values of its last expansion".into(),
            ));
        }
        loop {
            if self.cursor.is_none() {
                if let Some(reason) = self.stop_reason(&limits) {
                    self.finish(reason);
                    return Ok(Some(reason));
                }
                self.stats.iterations += 1;
                self.cursor = Some(Cursor {
                    path: Vec::new(),
                    keys: vec![self.root],
                    key: self.root,
                    pos: self.root_pos,
                    expanded: 0,
                });
            }
            match self.descend()? {
                Descend::NeedsValues => return Ok(None),
                Descend::Done(Step::Expanded(true) | Step::Updated) => {}
                Descend::Done(Step::Expanded(false)) => {
                    self.finish("table full");
                    return Ok(Some("table full"));
                }
                Descend::Done(Step::Stuck) => {
                    self.finish("stuck");
                    return Ok(Some("stuck"));
                }
            }
        }
    }

    /// The number of positions waiting for values (0 unless [`Ubfm::advance`] returned
    /// `Ok(None)`).
    pub fn pending_evaluations(&self) -> usize {
        self.pending.as_ref().map_or(0, |p| p.to_evaluate)
    }

    /// Adds the positions waiting for values to `batch`, with their legal moves (a
    /// pass where there is none); returns how many.
    pub fn gather(&mut self, batch: &mut EvalBatch) -> usize {
        let Some(pending) = &self.pending else {
            return 0;
        };
        for (pos, _) in pending.fresh.iter().filter(|(_, win)| win.is_none()) {
            self.moves.clear();
            pos.generate_moves(&mut self.moves);
            if self.moves.is_empty() {
                self.moves.push(Move::PASS);
            }
            batch.push(*pos, &self.moves);
        }
        pending.to_evaluate
    }

    /// Hands the evaluator's values of the gathered positions back (in the order
    /// [`Ubfm::gather`] added them). Errors on a wrong count or a non-finite value.
    pub fn absorb(&mut self, values: &[f32]) -> Result<(), Error> {
        let pending = self
            .pending
            .take()
            .ok_or_else(|| Error::Eval("values given to a search that asked for none".into()))?;
        if values.len() != pending.to_evaluate {
            return Err(Error::Eval(format!(
                "evaluator returned {} values for {} positions",
                values.len(),
                pending.to_evaluate
            )));
        }
        self.install(pending, values)?;
        if let Some(c) = &mut self.cursor {
            c.expanded += 1;
        }
        Ok(())
    }

    /// Records the results of the search that just ended.
    fn finish(&mut self, stopped_by: &'static str) {
        let root = &self.table[&self.root];
        self.stats.value = root.value;
        self.stats.resolution = if self.config.completion {
            root.resolution
        } else {
            Resolution::Unresolved
        };
        self.stats.entries = self.table.len();
        self.stats.pv = self.principal_variation();
        self.stats.stopped_by = stopped_by;
    }

    /// Goes on with the iteration of the cursor: descends, expands (pausing for values),
    /// and in Descent mode goes on down the best line; at its end backs the values up.
    fn descend(&mut self) -> Result<Descend, Error> {
        let completion = self.config.completion;
        let mut c = self.cursor.take().expect("an iteration in progress");
        let step = loop {
            if c.expanded > 0 && !self.config.descend_to_terminal {
                break Step::Expanded(true);
            }
            if self.table[&c.key].children.is_none() {
                let Some(pending) = self.prepare_expansion(c.key, &c.pos, &c.keys) else {
                    break Step::Expanded(false);
                };
                if pending.to_evaluate > 0 {
                    self.pending = Some(pending);
                    self.cursor = Some(c);
                    return Ok(Descend::NeedsValues);
                }
                self.install(pending, &[])?;
                c.expanded += 1;
                continue;
            }
            self.recompute(c.key);
            let entry = &self.table[&c.key];
            if completion && entry.resolution.is_resolved() {
                // Proven, through another path since the parent was last recomputed, or
                // by the expansion that just reached it (Descent).
                break if c.expanded > 0 {
                    Step::Expanded(true)
                } else {
                    Step::Updated
                };
            }
            let Some(k) = self.select(c.key) else {
                break Step::Updated;
            };
            let child = self.table[&c.key].children.as_ref().expect("expanded")[k];
            match child.target {
                Target::Exact(_) => {
                    c.path.push((c.key, k));
                    // Descent reached a terminal state; an iteration that expanded
                    // nothing on the way can change nothing.
                    break if c.expanded > 0 {
                        Step::Expanded(true)
                    } else {
                        Step::Stuck
                    };
                }
                Target::State(next) if c.keys.contains(&next) => {
                    // A cycle through the table: the move repeats a position of the path,
                    // a draw where it is met (the line ends there).
                    self.children_mut(c.key)[k].target = Target::Exact(Resolution::Draw);
                    c.path.push((c.key, k));
                    break if c.expanded > 0 {
                        Step::Expanded(true)
                    } else {
                        Step::Updated
                    };
                }
                Target::State(next) => {
                    c.path.push((c.key, k));
                    c.pos.play(child.mv);
                    c.keys.push(next);
                    c.key = next;
                }
            }
        };
        for &(k, i) in c.path.iter().rev() {
            self.children_mut(k)[i].visits += 1;
        }
        for &k in c.keys.iter().rev() {
            self.recompute(k);
        }
        Ok(Descend::Done(step))
    }

    fn children_mut(&mut self, key: u64) -> &mut Vec<Child> {
        self.table
            .get_mut(&key)
            .and_then(|e| e.children.as_mut())
            .expect("an expanded state")
    }

    /// Prepares the expansion of state `key` at `pos` (`path`: the keys from the root
    /// to it): its children, with the new states to evaluate. `None` when the table
    /// has no room for the children.
    fn prepare_expansion(&mut self, key: u64, pos: &Position, path: &[u64]) -> Option<Pending> {
        self.moves.clear();
        pos.generate_moves(&mut self.moves);
        if self.moves.is_empty() {
            // Positions in the table are not finished, so the rules say pass here.
            self.moves.push(Move::PASS);
        }
        let moves: Vec<Move> = self.moves.iter().copied().collect();
        if self.table.len() + moves.len() > self.config.max_entries {
            return None;
        }
        let mut children = Vec::with_capacity(moves.len());
        let mut fresh: Vec<(Position, Option<Resolution>)> = Vec::new();
        for &mv in &moves {
            let child = pos.after(mv);
            let flip = child.to_move() != pos.to_move();
            let target = match self.exact_result(&child, mv, path) {
                Some(r) => Target::Exact(r),
                None => {
                    let ck = child.hash();
                    if !self.table.contains_key(&ck) && !fresh.iter().any(|f| f.0 == child) {
                        fresh.push((child, self.win_within_turn(&child)));
                    }
                    Target::State(ck)
                }
            };
            children.push(Child {
                mv,
                target,
                flip,
                visits: 0,
            });
        }
        let to_evaluate = fresh.iter().filter(|f| f.1.is_none()).count();
        Some(Pending {
            key,
            pos: *pos,
            children,
            fresh,
            to_evaluate,
        })
    }

    /// Completes an expansion with the values of its evaluated children (`values`, in
    /// the order of `pending.fresh`). Errors on a non-finite value.
    fn install(&mut self, pending: Pending, values: &[f32]) -> Result<(), Error> {
        if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            let pos = pending.fresh.iter().filter(|f| f.1.is_none()).nth(i);
            return Err(Error::Eval(format!(
                "non-finite value {v} for position {}",
                pos.map_or(String::new(), |p| p.0.to_text())
            )));
        }
        self.stats.evaluations += values.len() as u32;
        let record = self.config.descend_to_terminal;
        let mut evaluated = values.iter();
        for (child, win) in pending.fresh {
            let (value, resolution) = match win {
                Some(r) => (r.value().expect("a win"), r),
                None => {
                    let v = evaluated.next().expect("one value per evaluated child");
                    (v.clamp(-1.0, 1.0), Resolution::Unresolved)
                }
            };
            let resolution = if self.config.completion {
                resolution
            } else {
                Resolution::Unresolved
            };
            if record && resolution.is_resolved() {
                self.positions.insert(child.hash(), child);
            }
            self.table.insert(
                child.hash(),
                Entry {
                    value,
                    resolution,
                    children: None,
                },
            );
        }
        if record {
            self.positions.insert(pending.key, pending.pos);
        }
        self.table
            .get_mut(&pending.key)
            .expect("the expanded state")
            .children = Some(pending.children);
        self.stats.expansions += 1;
        Ok(())
    }

    /// The result of `child`, reached by `mv` from the last state of `path`, for its side
    /// to move, when the game ends there or repeats (see the module docs).
    fn exact_result(&self, child: &Position, mv: Move, path: &[u64]) -> Option<Resolution> {
        let rules = &self.rules;
        let us = child.to_move();
        if let Some(o) = child.connection_outcome_after(mv, rules) {
            return Some(Resolution::of(o, us));
        }
        if let Some(o) = child.non_connection_outcome(rules) {
            return Some(Resolution::of(o, us));
        }
        let h = child.hash();
        let repeats_game = rules.repetition == Repetition::ThreeFold && self.history.contains(&h);
        if repeats_game || path.contains(&h) {
            return Some(Resolution::Draw);
        }
        None
    }

    /// A win of `pos`'s side to move within its turn ([`loa::tactics::winning_move`]).
    fn win_within_turn(&self, pos: &Position) -> Option<Resolution> {
        loa::tactics::winning_move(pos, &self.rules).map(|(_, plies)| Resolution::Win(plies as u16))
    }

    /// A child's (resolution, value) for the side to move at its parent.
    fn child_result(&self, child: &Child) -> (Resolution, f32) {
        let (r, v) = match child.target {
            Target::Exact(r) => (r, r.value().expect("exact")),
            Target::State(k) => {
                let e = &self.table[&k];
                (e.resolution, e.value)
            }
        };
        let before = r.one_ply_before(child.flip);
        let value = match before.value() {
            Some(x) if self.config.completion || matches!(child.target, Target::Exact(_)) => x,
            _ if child.flip => -v,
            _ => v,
        };
        if self.config.completion {
            (before, value)
        } else {
            (Resolution::Unresolved, value)
        }
    }

    /// Recomputes the value and resolution of expanded state `key` from its children.
    fn recompute(&mut self, key: u64) {
        let Some(children) = self.table[&key].children.as_ref() else {
            return;
        };
        let mut best: Option<(Resolution, f32)> = None;
        let mut all_resolved = true;
        let mut fastest_win: Option<u16> = None;
        for c in children {
            let r = self.child_result(c);
            if !r.0.is_resolved() {
                all_resolved = false;
            }
            if let Resolution::Win(d) = r.0 {
                fastest_win = Some(fastest_win.map_or(d, |f| f.min(d)));
            }
            if best.is_none_or(|b| completed_order(r, b) == Ordering::Greater) {
                best = Some(r);
            }
        }
        let (best_r, best_v) = best.expect("a state has a move");
        let resolution = if !self.config.completion {
            Resolution::Unresolved
        } else if let Some(d) = fastest_win {
            Resolution::Win(d)
        } else if all_resolved {
            best_r
        } else {
            Resolution::Unresolved
        };
        let value = resolution.value().unwrap_or(best_v);
        let e = self.table.get_mut(&key).expect("the state");
        e.value = value;
        e.resolution = resolution;
    }

    /// The child the descent takes at expanded state `key`: the best by completed value
    /// among the unresolved children (completion), or by value among all. Ties: the first
    /// in move-generation order. `None` when no child qualifies.
    fn select(&self, key: u64) -> Option<usize> {
        let children = self.table[&key].children.as_ref()?;
        let mut best: Option<(usize, (Resolution, f32))> = None;
        for (i, c) in children.iter().enumerate() {
            let r = self.child_result(c);
            if self.config.completion && r.0.is_resolved() {
                continue;
            }
            if best.is_none_or(|(_, b)| completed_order(r, b) == Ordering::Greater) {
                best = Some((i, r));
            }
        }
        best.map(|(i, _)| i)
    }
}

#[cfg(test)]
#[path = "ubfm_tests.rs"]
mod tests;
