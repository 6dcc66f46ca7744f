//! Descent self-play (Cohen-Solal & Cazenave; `shared/notes/descent.md`): games played
//! with the [`Ubfm`] search in Descent mode, and **tree learning**: every state the
//! searches of a game valued becomes a training sample, not only the positions played.
//!
//! # A game
//!
//! Every move searches [`DescentConfig::iterations`] Descent iterations (or for
//! [`DescentConfig::ms`] milliseconds, if that comes first) from the current
//! position (each follows the best line down to a finished game or a proven state,
//! expanding every state on its way, and backs the minimax values up the path), with
//! completion, over a table that the game keeps from move to move (the search goes on
//! in the subtree of the move played). Terminal reward: the search's, which prefers
//! fast wins and slow losses: a state whose side to move wins in `d` plies is worth
//! `1 − d/1000` to it, one it loses in `d` plies `−(1 − d/1000)`, a draw 0 (see
//! [`crate::ubfm`], the one definition).
//!
//! **The move played** ([`DescentConfig::exploration`], [`DescentConfig::epsilon`]): the
//! best root move by completed value (the fastest proven win; else the best value among
//! the moves not proven lost, the line the next iteration would follow), except that,
//! where no move is a proven win, exploration may pick another move not proven lost (any
//! move when every one is): ε-greedy draws one uniformly with probability ε; ordinal
//! ranks them by completed value (ties in move-generation order) and plays rank `r` with
//! probability `(1 − ε)·ε^r`, the last rank with the rest ([`ordinal_rank`]). No
//! resignation; a game still running after `max_game_plies` is adjudicated a draw.
//!
//! # Samples
//!
//! * One per move played: the position, the root moves with a policy target (the
//!   share of the root's descents through each move, or the move played when none went
//!   through any), the root's backed-up value as `search_value` and the game's outcome.
//! * With [`DescentConfig::tree_learning`], one per other state the searches valued
//!   ([`Ubfm::searched_states`]: every expanded state with its backed-up minimax value,
//!   every state proven without the network with its exact value), marked
//!   [`Sample::tree_only`]: value target only, no policy, no outcome. A state is
//!   recorded once per game, with the value the table held last. The table is harvested
//!   at the end of the game, and before a move whenever it holds more than half of
//!   [`DescentConfig::max_entries`] (it is then cleared: the next search starts afresh).
//!
//! # Batching
//!
//! Each worker thread advances [`DescentConfig::games_per_worker`] games in lockstep:
//! every step runs each game's search to its next expansion ([`Ubfm::advance`]), gathers
//! the children of all those expansions into one [`EvalBatch`] and makes one evaluator
//! call, as the MCTS workers do with their leaves. Dealing games to workers, the
//! deterministic mode and progress are those of [`crate::worker`].

use crate::cancel::Cancel;
use crate::config::{DescentConfig, Exploration, SelfplayConfig};
use crate::data::Sample;
use crate::evaluator::{EvalBatch, Evaluator};
use crate::ubfm::{completed_order, Resolution, Ubfm, UbfmConfig, UbfmLimits, UbfmRootMove};
use crate::worker::{
    game_seed, play_with, FinishedGame, GameLoop, GameOrder, Message, Progress, Shared, Slot,
};
use crate::Error;
use loa::{Game, Move, Outcome};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering as Order;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Plays `games` Descent self-play games with `evaluator` under `config` (its
/// `descent` table; see the module docs), calling `sink` for every finished game and
/// `progress` about once a second, like [`crate::run_selfplay`]. With `deterministic`
/// (a seed required), the games do not depend on thread timing, as in
/// [`crate::Schedule::Deterministic`]. Progress counts moves played as positions
/// (the samples, with tree learning, are many more). Once `cancel` asks, the workers
/// stop at their next expansion, within about half a second: the games under way are
/// dropped (their moves and tree samples with them) and the call fails with
/// [`Error::Cancelled`] after handing the finished games to `sink`.
pub fn run_descent_selfplay(
    config: &SelfplayConfig,
    evaluator: Arc<dyn Evaluator>,
    games: u64,
    deterministic: bool,
    cancel: &Cancel,
    sink: impl FnMut(FinishedGame) -> Result<(), String>,
    progress: impl FnMut(&Progress),
) -> Result<Progress, Error> {
    if deterministic && config.seed.is_none() {
        return Err(Error::Config(
            "deterministic self-play needs a seed (selfplay.seed)".into(),
        ));
    }
    if deterministic && config.descent.ms > 0 {
        return Err(Error::Config(format!(
            "selfplay.descent.ms = {}: a time limit makes the games depend on the machine's \
             speed; deterministic self-play needs 0",
            config.descent.ms
        )));
    }
    let new_worker = |seed, order, _parked: Vec<Slot>| -> Box<dyn GameLoop> {
        Box::new(DescentWorker::new(config, seed, order))
    };
    play_with(
        config,
        config.descent.games_per_worker,
        &new_worker,
        evaluator,
        games,
        None,
        deterministic,
        cancel,
        sink,
        progress,
    )
}

/// One game of a Descent worker.
struct DescentGame {
    /// Its index (deterministic mode; 0 otherwise).
    index: u64,
    /// Its own random numbers (deterministic mode; the worker's otherwise).
    rng: Option<StdRng>,
    game: Game,
    search: Ubfm,
    /// One sample per move played (outcome filled in at the end).
    played: Vec<Sample>,
    /// Hashes of the positions played.
    played_keys: HashSet<u64>,
    /// Tree-only samples harvested so far, by position hash.
    tree: HashMap<u64, Sample>,
    /// When the search of the current move began (for [`DescentConfig::ms`]).
    move_started: Instant,
}

struct DescentWorker {
    config: SelfplayConfig,
    rng: StdRng,
    order: Option<GameOrder>,
    slots: Vec<Option<DescentGame>>,
    batch: EvalBatch,
}

impl GameLoop for DescentWorker {
    fn run(
        &mut self,
        evaluator: &dyn Evaluator,
        shared: &Shared,
        tx: &mpsc::Sender<Message>,
    ) -> Result<(), Error> {
        // (slot, first position in the batch, positions) of each waiting search.
        let mut waiting: Vec<(usize, usize, usize)> = Vec::new();
        loop {
            if shared.stopping() {
                return Ok(());
            }
            for i in 0..self.slots.len() {
                if self.slots[i].is_none() {
                    if let Some(index) = shared.claim_start(&mut self.order) {
                        self.slots[i] = Some(self.new_game(index)?);
                    }
                }
            }
            if self.slots.iter().all(Option::is_none) {
                return Ok(());
            }
            self.batch.clear();
            waiting.clear();
            for i in 0..self.slots.len() {
                let Some(mut slot) = self.slots[i].take() else {
                    continue;
                };
                match self.drive(&mut slot, shared)? {
                    Some(finished) => {
                        if !shared.deliver(tx, slot.index, finished) {
                            return Ok(());
                        }
                    }
                    None => {
                        let first = self.batch.len();
                        let n = slot.search.gather(&mut self.batch);
                        waiting.push((i, first, n));
                        self.slots[i] = Some(slot);
                    }
                }
            }
            shared.evaluate(evaluator, &mut self.batch)?;
            for &(i, first, n) in &waiting {
                let slot = self.slots[i].as_mut().expect("a waiting game");
                slot.search.absorb(&self.batch.values[first..first + n])?;
            }
        }
    }
}

impl DescentWorker {
    fn new(config: &SelfplayConfig, seed: u64, order: Option<GameOrder>) -> DescentWorker {
        DescentWorker {
            config: config.clone(),
            rng: StdRng::seed_from_u64(seed),
            order,
            slots: (0..config.descent.games_per_worker).map(|_| None).collect(),
            batch: EvalBatch::new(),
        }
    }

    fn descent(&self) -> &DescentConfig {
        &self.config.descent
    }

    /// A new game: game `index` with its own generator in deterministic mode.
    fn new_game(&mut self, index: Option<u64>) -> Result<DescentGame, Error> {
        let game = Game::new(self.config.variant, self.config.rules);
        let rng = index
            .zip(self.order.as_ref())
            .map(|(k, o)| StdRng::seed_from_u64(game_seed(o.base_seed, k)));
        let mut search = Ubfm::new(UbfmConfig {
            completion: true,
            max_entries: self.descent().max_entries,
            descend_to_terminal: true,
        });
        search.set_root(&game)?;
        Ok(DescentGame {
            index: index.unwrap_or(0),
            rng,
            game,
            search,
            played: Vec::new(),
            played_keys: HashSet::new(),
            tree: HashMap::new(),
            move_started: Instant::now(),
        })
    }

    /// Runs `slot`'s searches and plays their moves until a search waits for values
    /// (`None`) or the game ends (its samples and record).
    fn drive(
        &mut self,
        slot: &mut DescentGame,
        shared: &Shared,
    ) -> Result<Option<FinishedGame>, Error> {
        let ms = self.descent().ms;
        let iterations = self.descent().iterations;
        let limits = |started: Instant| UbfmLimits {
            iterations,
            deadline: (ms > 0).then(|| started + Duration::from_millis(ms.into())),
        };
        while slot.search.advance(limits(slot.move_started))?.is_some() {
            shared.counters.positions.fetch_add(1, Ordering::Relaxed);
            if let Some(finished) = self.play_move(slot)? {
                return Ok(Some(finished));
            }
        }
        Ok(None)
    }

    /// Records the sample of the finished search and plays its move (see the module
    /// docs); returns the game if it is over.
    fn play_move(&mut self, slot: &mut DescentGame) -> Result<Option<FinishedGame>, Error> {
        let pos = *slot.game.position();
        let root = slot.search.root_moves();
        if root.is_empty() {
            return Err(Error::Eval(format!(
                "the Descent search of {} has no root moves",
                pos.to_text()
            )));
        }
        let greedy = best_by_completed_value(&root);
        let epsilon = self.descent().epsilon;
        let exploration = self.descent().exploration;
        let rng = slot.rng.as_mut().unwrap_or(&mut self.rng);
        let proven_win = matches!(greedy.resolution, Resolution::Win(_));
        // The moves exploration may pick: those not proven lost, all when every one is.
        let open = || -> Vec<UbfmRootMove> {
            let open: Vec<UbfmRootMove> = root
                .iter()
                .filter(|m| !matches!(m.resolution, Resolution::Loss(_)))
                .copied()
                .collect();
            if open.is_empty() {
                root.clone()
            } else {
                open
            }
        };
        let mv = match exploration {
            _ if proven_win || epsilon <= 0.0 => greedy.mv,
            Exploration::Epsilon => {
                if rng.random::<f32>() < epsilon {
                    let choices = open();
                    choices[rng.random_range(0..choices.len())].mv
                } else {
                    greedy.mv
                }
            }
            Exploration::Ordinal => {
                let mut ranked = open();
                // Best first; a stable sort keeps move-generation order among ties, as
                // `best_by_completed_value` does.
                ranked.sort_by(|a, b| {
                    completed_order((b.resolution, b.value), (a.resolution, a.value))
                });
                ranked[ordinal_rank(rng, ranked.len(), epsilon)].mv
            }
        };
        slot.played.push(Sample {
            position: pos,
            rules: self.config.rules,
            moves: root.iter().map(|m| m.mv).collect(),
            policy: policy_target(&root, mv),
            search_value: slot.search.root_value().clamp(-1.0, 1.0),
            outcome: 0.0,
            tree_only: false,
            final_pieces: None,
        });
        slot.played_keys.insert(pos.hash());
        slot.game
            .play(mv)
            .map_err(|e| Error::Eval(format!("the Descent search proposed {mv}: {e}")))?;
        if let Some(o) = slot.game.outcome() {
            return Ok(Some(self.finish(slot, o, false)));
        }
        if slot.game.moves().len() as u32 >= self.config.max_game_plies {
            return Ok(Some(self.finish(slot, Outcome::Draw, true)));
        }
        if slot.search.table_len() > self.descent().max_entries / 2 {
            self.harvest(slot);
            slot.search.set_root(&slot.game)?;
        } else {
            slot.search.set_root_keeping_table(&slot.game)?;
        }
        slot.move_started = Instant::now();
        Ok(None)
    }

    /// Tree learning: adds the table's valued states, other than the positions played,
    /// to the game's tree-only samples (a state already there takes the newer value).
    fn harvest(&self, slot: &mut DescentGame) {
        if !self.descent().tree_learning {
            return;
        }
        let rules = self.config.rules;
        for (key, pos, value, _) in slot.search.searched_states() {
            if slot.played_keys.contains(&key) {
                continue;
            }
            slot.tree.insert(
                key,
                Sample {
                    position: *pos,
                    rules,
                    moves: Vec::new(),
                    policy: Vec::new(),
                    search_value: value.clamp(-1.0, 1.0),
                    outcome: 0.0,
                    tree_only: true,
                    final_pieces: None,
                },
            );
        }
    }

    fn finish(&self, slot: &mut DescentGame, outcome: Outcome, adjudicated: bool) -> FinishedGame {
        self.harvest(slot);
        let mut samples = std::mem::take(&mut slot.played);
        let last = slot.game.position();
        for s in &mut samples {
            let side = s.position.to_move();
            s.outcome = outcome.score_for(side);
            s.final_pieces = Some(Sample::final_pieces_of(last, side));
        }
        let mut tree: Vec<(u64, Sample)> = std::mem::take(&mut slot.tree)
            .into_iter()
            .filter(|(key, _)| !slot.played_keys.contains(key))
            .collect();
        // The table's order depends on hashing only; sort for reproducible shards.
        tree.sort_by_key(|(key, s)| (s.position.ply(), *key));
        samples.extend(tree.into_iter().map(|(_, s)| s));
        FinishedGame {
            start: *slot.game.start(),
            rules: self.config.rules,
            moves: slot.game.moves().to_vec(),
            outcome,
            resigned: None,
            adjudicated,
            resign_disabled: false,
            false_resignations: 0,
            would_resign: 0,
            samples,
        }
    }
}

/// The root move best by completed value (the fastest proven win, the slowest proven
/// loss; ties: the first in move-generation order).
fn best_by_completed_value(root: &[UbfmRootMove]) -> UbfmRootMove {
    *root
        .iter()
        .reduce(|a, b| {
            if completed_order((b.resolution, b.value), (a.resolution, a.value)) == Order::Greater {
                b
            } else {
                a
            }
        })
        .expect("root moves")
}

/// The rank (0 = the best) of the move the ordinal rule plays among `n` ranked moves:
/// rank `r < n − 1` with probability `(1 − ε)·ε^r`, rank `n − 1` with `ε^(n−1)` (each
/// rank in turn is taken with probability `1 − ε`, else passed over). The Descent papers
/// name an "ordinal" action distribution, one that depends on the order of the moves'
/// values only (`shared/notes/descent.md`, 1.2); their exact formula was not available
/// to check, so this truncated geometric law over ranks is this project's form of it.
pub(crate) fn ordinal_rank(rng: &mut impl Rng, n: usize, epsilon: f32) -> usize {
    let mut rank = 0;
    while rank + 1 < n && rng.random::<f32>() < epsilon {
        rank += 1;
    }
    rank
}

/// The policy target of a played position: the root's descents through each move,
/// normalised; the move played alone when no descent went through any.
fn policy_target(root: &[UbfmRootMove], played: Move) -> Vec<f32> {
    let total: u32 = root.iter().map(|m| m.visits).sum();
    root.iter()
        .map(|m| {
            if total > 0 {
                m.visits as f32 / total as f32
            } else if m.mv == played {
                1.0
            } else {
                0.0
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "descent_tests.rs"]
mod tests;
