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
//! single move, or the table holds [`UbfmConfig::max_entries`] entries. The table is
//! cleared at the start of every search (no tree is kept between moves), so memory is
//! bounded by the cap.

use crate::evaluator::{EvalBatch, Evaluator};
use crate::Error;
use loa::rules::Repetition;
use loa::{Color, Game, Move, MoveList, Outcome, Position, Rules};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

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
}

impl Default for UbfmConfig {
    fn default() -> Self {
        UbfmConfig {
            completion: true,
            max_entries: DEFAULT_MAX_ENTRIES,
        }
    }
}

/// The game-theoretic status of a state for its side to move, as far as the search has
/// proven it; distances count plies to the end of the game under best play.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// Not proven.
    #[default]
    Unresolved,
    /// A forced win in this many plies.
    Win(u16),
    /// A forced draw.
    Draw,
    /// A forced loss in this many plies.
    Loss(u16),
}

impl Resolution {
    /// Whether the result is proven.
    pub fn is_resolved(self) -> bool {
        self != Resolution::Unresolved
    }

    /// The value of a proven result (see the module docs' terminal reward); `None` when
    /// unresolved.
    pub fn value(self) -> Option<f32> {
        let worth = |d: u16| 1.0 - d.min(MAX_DISTANCE) as f32 * PLY_DISCOUNT;
        match self {
            Resolution::Unresolved => None,
            Resolution::Win(d) => Some(worth(d)),
            Resolution::Draw => Some(0.0),
            Resolution::Loss(d) => Some(-worth(d)),
        }
    }

    /// The same result one ply earlier, for the side that moves into this state:
    /// the opponent of its side to move (`flip`) or the same side (a `parachute` drop).
    pub fn one_ply_before(self, flip: bool) -> Resolution {
        let d = |d: u16| d.saturating_add(1);
        match (self, flip) {
            (Resolution::Win(n), false) | (Resolution::Loss(n), true) => Resolution::Win(d(n)),
            (Resolution::Loss(n), false) | (Resolution::Win(n), true) => Resolution::Loss(d(n)),
            (r, _) => r,
        }
    }

    /// The completed value's class: 2 for a proven win, 0 for a proven loss, 1 otherwise.
    fn class(self) -> u8 {
        match self {
            Resolution::Win(_) => 2,
            Resolution::Loss(_) => 0,
            Resolution::Unresolved | Resolution::Draw => 1,
        }
    }

    /// `Win(d)` for `Outcome::Win(side)` etc.: a finished game for `side`, in 0 plies.
    fn of(outcome: Outcome, side: Color) -> Resolution {
        match outcome {
            Outcome::Draw => Resolution::Draw,
            Outcome::Win(c) if c == side => Resolution::Win(0),
            Outcome::Win(_) => Resolution::Loss(0),
        }
    }
}

/// Ranks two (resolution, value) pairs for the same side as the papers' completion does:
/// completed value first (a proven win above anything unresolved or drawn, a proven loss
/// below), the fastest win and the slowest loss first, then the value (`0.0` and `-0.0`
/// are equal).
pub fn completed_order(a: (Resolution, f32), b: (Resolution, f32)) -> Ordering {
    let distance_order = match (a.0, b.0) {
        (Resolution::Win(x), Resolution::Win(y)) => y.cmp(&x),
        (Resolution::Loss(x), Resolution::Loss(y)) => x.cmp(&y),
        _ => Ordering::Equal,
    };
    a.0.class()
        .cmp(&b.0.class())
        .then(distance_order)
        .then(a.1.partial_cmp(&b.1).unwrap_or(Ordering::Equal))
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

/// A UBFM search (see the module docs). Not shared between threads; the evaluator may be.
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
}

/// What the descent of one iteration ended with.
enum Step {
    /// A state was expanded (or the table is full: `false`).
    Expanded(bool),
    /// The values changed without an expansion (a stale resolution, a cycle broken).
    Updated,
    /// Plain UBFM's best line ends in a finished game: nothing can change.
    Stuck,
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
        if let Some(o) = game.outcome() {
            return Err(Error::Eval(format!(
                "no move to choose: the game is over ({})",
                o.name()
            )));
        }
        self.set_root(game);
        let mut stopped_by = "budget";
        while self.stats.iterations < limits.iterations.max(1) {
            let root = &self.table[&self.root];
            if let Some(children) = &root.children {
                if self.config.completion && root.resolution.is_resolved() {
                    stopped_by = "resolved";
                    break;
                }
                if children.len() == 1 {
                    stopped_by = "single move";
                    break;
                }
                if limits.deadline.is_some_and(|d| Instant::now() >= d) {
                    stopped_by = "deadline";
                    break;
                }
            }
            self.stats.iterations += 1;
            match self.iterate(evaluator)? {
                Step::Expanded(true) | Step::Updated => {}
                Step::Expanded(false) => {
                    stopped_by = "table full";
                    break;
                }
                Step::Stuck => {
                    stopped_by = "stuck";
                    break;
                }
            }
        }
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

    /// Points the search at `game`'s position with an empty table.
    fn set_root(&mut self, game: &Game) {
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
        self.table.clear();
        self.table.insert(
            self.root,
            Entry {
                value: 0.0,
                resolution: Resolution::Unresolved,
                children: None,
            },
        );
        self.stats = UbfmStats::default();
    }

    /// One descent, expansion and backup.
    fn iterate(&mut self, evaluator: &dyn Evaluator) -> Result<Step, Error> {
        let completion = self.config.completion;
        // The states of the path with the child index taken from each.
        let mut path: Vec<(u64, usize)> = Vec::new();
        let mut keys_on_path: Vec<u64> = vec![self.root];
        let mut key = self.root;
        let mut pos = self.root_pos;
        let step = loop {
            if self.table[&key].children.is_none() {
                let done = self.expand(key, &pos, &keys_on_path, evaluator)?;
                break Step::Expanded(done);
            }
            self.recompute(key);
            let entry = &self.table[&key];
            if completion && entry.resolution.is_resolved() {
                // Proven through another path since the parent was last recomputed.
                break Step::Updated;
            }
            let Some(k) = self.select(key) else {
                break Step::Updated;
            };
            let child = self.table[&key].children.as_ref().expect("expanded")[k];
            match child.target {
                Target::Exact(_) => {
                    path.push((key, k));
                    break Step::Stuck;
                }
                Target::State(c) if keys_on_path.contains(&c) => {
                    // A cycle through the table: the move repeats a position of the path.
                    self.children_mut(key)[k].target = Target::Exact(Resolution::Draw);
                    break Step::Updated;
                }
                Target::State(c) => {
                    path.push((key, k));
                    pos.play(child.mv);
                    keys_on_path.push(c);
                    key = c;
                }
            }
        };
        for &(k, i) in path.iter().rev() {
            self.children_mut(k)[i].visits += 1;
        }
        for &k in keys_on_path.iter().rev() {
            self.recompute(k);
        }
        Ok(step)
    }

    fn children_mut(&mut self, key: u64) -> &mut Vec<Child> {
        self.table
            .get_mut(&key)
            .and_then(|e| e.children.as_mut())
            .expect("an expanded state")
    }

    /// Expands the state `key` at `pos` (`path`: the keys from the root to it): creates
    /// its children, evaluating the new ones in one batch. Returns `false`, expanding
    /// nothing, when the table has no room for the children.
    fn expand(
        &mut self,
        key: u64,
        pos: &Position,
        path: &[u64],
        evaluator: &dyn Evaluator,
    ) -> Result<bool, Error> {
        self.moves.clear();
        pos.generate_moves(&mut self.moves);
        if self.moves.is_empty() {
            // Positions in the table are not finished, so the rules say pass here.
            self.moves.push(Move::PASS);
        }
        let moves: Vec<Move> = self.moves.iter().copied().collect();
        if self.table.len() + moves.len() > self.config.max_entries {
            return Ok(false);
        }
        let mut children = Vec::with_capacity(moves.len());
        // New states: (child index, position, exact resolution if known without the net).
        let mut fresh: Vec<(usize, Position, Option<Resolution>)> = Vec::new();
        self.batch.clear();
        for (i, &mv) in moves.iter().enumerate() {
            let child = pos.after(mv);
            let flip = child.to_move() != pos.to_move();
            let target = match self.exact_result(&child, mv, path) {
                Some(r) => Target::Exact(r),
                None => {
                    let ck = child.hash();
                    if !self.table.contains_key(&ck) && !fresh.iter().any(|f| f.1 == child) {
                        let win = self.win_within_turn(&child);
                        if win.is_none() {
                            self.moves.clear();
                            child.generate_moves(&mut self.moves);
                            if self.moves.is_empty() {
                                self.moves.push(Move::PASS);
                            }
                            self.batch.push(child, &self.moves);
                        }
                        fresh.push((i, child, win));
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
        if !self.batch.is_empty() {
            evaluator.evaluate(&mut self.batch)?;
            if self.batch.values.len() != self.batch.len() {
                return Err(Error::Eval(format!(
                    "evaluator returned {} values for {} positions",
                    self.batch.values.len(),
                    self.batch.len()
                )));
            }
            if let Some((i, v)) = self
                .batch
                .values
                .iter()
                .enumerate()
                .find(|(_, v)| !v.is_finite())
            {
                return Err(Error::Eval(format!(
                    "non-finite value {v} for position {}",
                    self.batch.positions[i].to_text()
                )));
            }
            self.stats.evaluations += self.batch.len() as u32;
        }
        let mut evaluated = 0;
        for (_, child, win) in fresh {
            let (value, resolution) = match win {
                Some(r) => (r.value().expect("a win"), r),
                None => {
                    let v = self.batch.values[evaluated].clamp(-1.0, 1.0);
                    evaluated += 1;
                    (v, Resolution::Unresolved)
                }
            };
            let resolution = if self.config.completion {
                resolution
            } else {
                Resolution::Unresolved
            };
            self.table.insert(
                child.hash(),
                Entry {
                    value,
                    resolution,
                    children: None,
                },
            );
        }
        self.table
            .get_mut(&key)
            .expect("the expanded state")
            .children = Some(children);
        self.stats.expansions += 1;
        Ok(true)
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

    /// The root's moves with their statistics, in move-generation order (empty before a
    /// search).
    pub fn root_moves(&self) -> Vec<UbfmRootMove> {
        let Some(children) = self.table.get(&self.root).and_then(|e| e.children.as_ref()) else {
            return Vec::new();
        };
        children
            .iter()
            .map(|c| {
                let (resolution, value) = self.child_result(c);
                UbfmRootMove {
                    mv: c.mv,
                    visits: c.visits,
                    value,
                    resolution,
                }
            })
            .collect()
    }

    /// The move to play (the safest action, see the module docs): the fastest proven win
    /// if there is one; else, among the moves that are not proven losses, the most
    /// visited (ties: better completed value, then the first); else the slowest loss.
    /// `None` before a search.
    pub fn best_move(&self) -> Option<Move> {
        let moves = self.root_moves();
        let key = |m: &UbfmRootMove| (m.resolution, m.value);
        if moves
            .iter()
            .any(|m| matches!(m.resolution, Resolution::Win(_)))
        {
            return moves
                .iter()
                .reduce(|a, b| {
                    if completed_order(key(b), key(a)) == Ordering::Greater {
                        b
                    } else {
                        a
                    }
                })
                .map(|m| m.mv);
        }
        let safest = moves
            .iter()
            .filter(|m| !matches!(m.resolution, Resolution::Loss(_)))
            .reduce(|a, b| {
                let order = b
                    .visits
                    .cmp(&a.visits)
                    .then(completed_order(key(b), key(a)));
                if order == Ordering::Greater {
                    b
                } else {
                    a
                }
            });
        safest
            .or_else(|| {
                moves.iter().reduce(|a, b| {
                    if completed_order(key(b), key(a)) == Ordering::Greater {
                        b
                    } else {
                        a
                    }
                })
            })
            .map(|m| m.mv)
    }

    /// The best line from the root by completed value, through expanded states (at most
    /// 32 plies).
    pub fn principal_variation(&self) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut key = self.root;
        let mut seen = vec![key];
        while pv.len() < MAX_PV {
            let Some(children) = self.table.get(&key).and_then(|e| e.children.as_ref()) else {
                break;
            };
            let mut best: Option<(&Child, (Resolution, f32))> = None;
            for c in children {
                let r = self.child_result(c);
                if best.is_none_or(|(_, b)| completed_order(r, b) == Ordering::Greater) {
                    best = Some((c, r));
                }
            }
            let Some((c, _)) = best else { break };
            pv.push(c.mv);
            match c.target {
                Target::State(k) if !seen.contains(&k) => {
                    seen.push(k);
                    key = k;
                }
                _ => break,
            }
        }
        pv
    }

    /// The root's value for its side to move.
    pub fn root_value(&self) -> f32 {
        self.table.get(&self.root).map_or(0.0, |e| e.value)
    }

    /// The root's resolution for its side to move (unresolved without completion).
    pub fn root_resolution(&self) -> Resolution {
        self.table
            .get(&self.root)
            .map_or(Resolution::Unresolved, |e| e.resolution)
    }
}

#[cfg(test)]
#[path = "ubfm_tests.rs"]
mod tests;
