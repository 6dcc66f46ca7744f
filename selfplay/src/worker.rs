//! Self-play: worker threads on a dedicated rayon pool, each advancing many games in
//! lockstep so that one evaluator call carries leaves of all its games. Finished games
//! flow over a channel to the calling thread, which hands them to a sink (usually an
//! [`crate::output::GameWriter`]) and reports progress.
//!
//! [`run_selfplay`] with [`Schedule::RunOut`] plays exactly `games` games and lets the last
//! ones run out, so the batches shrink at the end. [`Schedule::Continuous`] keeps every
//! worker's slots full until `games` games have finished and then *parks* the games still
//! in flight in a [`ParkedGames`], which the next call (usually with the next generation's
//! network) continues: each parked game restarts the search of its current move, so it
//! switches network at a move boundary. Batches stay full for the whole phase; games that
//! span a generation are played partly by two networks, which AlphaZero-style training
//! accepts (KataGo's self-play switches networks mid-game the same way).
//!
//! [`Schedule::Deterministic`] plays like [`Schedule::RunOut`] but so that the games do not
//! depend on thread timing: game `k` draws its random numbers from its own generator
//! (seeded from the config's seed and `k`), worker `w` of `T` plays games `w`, `w + T`, …,
//! the workers call the evaluator one at a time (so no evaluator can merge two workers'
//! leaves into one batch), and the sink receives the games in the order of `k`.

use crate::cancel::Cancel;
use crate::config::SelfplayConfig;
use crate::data::Sample;
use crate::evaluator::{EvalBatch, Evaluator};
use crate::search::Search;
use crate::Error;
use loa::{Color, Game, Move, Outcome, Position, Rules};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// One finished self-play game.
#[derive(Clone, Debug)]
pub struct FinishedGame {
    /// The start position.
    pub start: Position,
    /// The rules.
    pub rules: Rules,
    /// Every move played.
    pub moves: Vec<Move>,
    /// The result (a resignation counts as a win of the other side; a game stopped at
    /// `max_game_plies` is a draw).
    pub outcome: Outcome,
    /// The side that resigned, if the game ended so.
    pub resigned: Option<Color>,
    /// Whether the game was stopped at `max_game_plies`.
    pub adjudicated: bool,
    /// Whether resignation was disabled in this game.
    pub resign_disabled: bool,
    /// Resignation-disabled games: sides that would have resigned but did not lose.
    pub false_resignations: u32,
    /// Sides that would have resigned (resignation-disabled games).
    pub would_resign: u32,
    /// One sample per move, outcome filled in.
    pub samples: Vec<Sample>,
}

/// Running totals of a self-play run; shared between workers (atomics).
#[derive(Debug, Default)]
pub struct Counters {
    /// Games finished.
    pub games: AtomicU64,
    /// Moves played (= samples).
    pub positions: AtomicU64,
    /// Positions evaluated.
    pub evaluations: AtomicU64,
    /// Evaluator calls.
    pub batches: AtomicU64,
}

impl Counters {
    /// Brings `snapshot` up to date: these totals, plus the `delivered` games that an
    /// earlier call finished and this one handed on first (continuous mode), and the
    /// seconds since `t0`.
    fn update(&self, snapshot: &mut Progress, delivered: u64, t0: Instant) {
        snapshot.games = delivered + self.games.load(Ordering::Relaxed);
        snapshot.positions = self.positions.load(Ordering::Relaxed);
        snapshot.evaluations = self.evaluations.load(Ordering::Relaxed);
        snapshot.batches = self.batches.load(Ordering::Relaxed);
        snapshot.seconds = t0.elapsed().as_secs_f64();
    }
}

/// A snapshot for progress displays.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// Games finished so far.
    pub games: u64,
    /// Games requested.
    pub total_games: u64,
    /// Moves played.
    pub positions: u64,
    /// Positions evaluated.
    pub evaluations: u64,
    /// Evaluator calls.
    pub batches: u64,
    /// Seconds since the start.
    pub seconds: f64,
    /// Resignation-disabled games whose loser-to-be did not lose, over such games'
    /// would-be resignations.
    pub false_resignations: u64,
    /// Would-be resignations in resignation-disabled games.
    pub would_resign: u64,
}

impl Progress {
    /// Moves played per second.
    pub fn positions_per_second(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }
    /// Evaluations per second.
    pub fn evaluations_per_second(&self) -> f64 {
        self.evaluations as f64 / self.seconds.max(1e-9)
    }
    /// Mean positions per evaluator call.
    pub fn mean_batch(&self) -> f64 {
        self.evaluations as f64 / self.batches.max(1) as f64
    }
}

pub(crate) enum Message {
    /// A finished game and its index (deterministic mode; 0 otherwise).
    Game(u64, Box<FinishedGame>),
    Failed(Error),
}

/// Games carried from one [`Schedule::Continuous`] call to the next: games in flight
/// when the requested count was reached, and games that finished beyond it. Lives in
/// memory only: a crash loses the parked games (never a committed one). `Send`.
#[derive(Default)]
pub struct ParkedGames {
    slots: Vec<Slot>,
    finished: Vec<FinishedGame>,
}

impl ParkedGames {
    /// Games in flight.
    pub fn in_flight(&self) -> usize {
        self.slots.len()
    }

    /// Finished games waiting to be handed to the next call's sink.
    pub fn finished(&self) -> usize {
        self.finished.len()
    }

    /// Moves already played (samples recorded) in the parked games, finished or not.
    pub fn positions(&self) -> usize {
        self.slots.iter().map(|s| s.samples.len()).sum::<usize>()
            + self.finished.iter().map(|g| g.samples.len()).sum::<usize>()
    }
}

/// State the workers of one call share.
pub(crate) struct Shared {
    games: u64,
    continuous: bool,
    /// Deterministic mode: held by a worker around each evaluator call.
    pub(crate) eval_turn: Option<std::sync::Mutex<()>>,
    started: AtomicU64,
    claimed: AtomicU64,
    pub(crate) stop: AtomicBool,
    pub(crate) counters: Counters,
    parked: std::sync::Mutex<ParkedGames>,
}

impl Shared {
    /// Whether the workers should stop.
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Claims the next game for a free slot: `Some(Some(k))` game `k` (deterministic
    /// mode, from `order`), `Some(None)` a game, `None` when the call has all its games.
    pub(crate) fn claim_start(&self, order: &mut Option<GameOrder>) -> Option<Option<u64>> {
        match order {
            Some(o) => (o.next < self.games).then(|| {
                o.next += o.stride;
                Some(o.next - o.stride)
            }),
            None => (self.continuous || self.started.fetch_add(1, Ordering::Relaxed) < self.games)
                .then_some(None),
        }
    }

    /// Hands finished game `index` on (parks it in continuous mode when the count is
    /// already reached); false when the receiver is gone.
    pub(crate) fn deliver(
        &self,
        tx: &mpsc::Sender<Message>,
        index: u64,
        finished: FinishedGame,
    ) -> bool {
        let k = self.claimed.fetch_add(1, Ordering::Relaxed);
        if k >= self.games {
            // Finished beyond the count (continuous mode): next call's.
            let mut parked = self.parked.lock().unwrap_or_else(|e| e.into_inner());
            parked.finished.push(finished);
            return true;
        }
        if k + 1 == self.games && self.continuous {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.counters.games.fetch_add(1, Ordering::Relaxed);
        tx.send(Message::Game(index, Box::new(finished))).is_ok()
    }

    /// Evaluates `batch` when it has positions (in deterministic mode, holding
    /// [`Shared::eval_turn`]) and counts it; an error when the evaluator fails or returns
    /// other than one value a position.
    pub(crate) fn evaluate(
        &self,
        evaluator: &dyn Evaluator,
        batch: &mut EvalBatch,
    ) -> Result<(), Error> {
        if batch.is_empty() {
            return Ok(());
        }
        let _turn = self
            .eval_turn
            .as_ref()
            .map(|t| t.lock().unwrap_or_else(|e| e.into_inner()));
        evaluator.evaluate(batch)?;
        if batch.values.len() != batch.len() {
            return Err(Error::Eval(format!(
                "evaluator returned {} values for {} positions",
                batch.values.len(),
                batch.len()
            )));
        }
        self.counters
            .evaluations
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        self.counters.batches.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// One worker thread's games: [`Worker`] (MCTS) or the Descent worker. Runs until the
/// call has all its games or [`Shared::stopping`].
pub(crate) trait GameLoop: Send {
    /// Plays, sending finished games over `tx`.
    fn run(
        &mut self,
        evaluator: &dyn Evaluator,
        shared: &Shared,
        tx: &mpsc::Sender<Message>,
    ) -> Result<(), Error>;
}

/// Builds worker `w`'s game loop from its seed, its deterministic game order and the
/// parked games it takes over.
pub(crate) type NewWorker<'a> =
    dyn Fn(u64, Option<GameOrder>, Vec<Slot>) -> Box<dyn GameLoop> + Sync + 'a;

/// How a [`run_selfplay`] call schedules its games (see the module docs).
pub enum Schedule<'a> {
    /// Plays exactly `games` games and lets the last ones run out (the batches shrink at
    /// the end).
    RunOut,
    /// Like [`Schedule::RunOut`], but the games are a function of the config (its seed is
    /// required), `games` and the evaluator's answers alone, whatever the thread timing.
    /// With an evaluator whose answer to a batch depends only on that batch (a network on
    /// the CPU with fixed torch threads, and no evaluation cache), two calls play the same
    /// games, move for move, and hand them to `sink` in the same order. Costs the merging
    /// of different workers' leaves into one network batch.
    Deterministic,
    /// Keeps every worker's batch full until `games` games have been handed to `sink`:
    /// finished games parked by the previous call go first, parked games in flight
    /// continue (their current move searched again with the evaluator), and what is still
    /// in flight at the end is parked here for the next call. Exactly `games` games reach
    /// `sink` unless an error or the cancel stops the run (a cancel parks the games in
    /// flight too).
    Continuous(&'a mut ParkedGames),
}

/// Plays `games` games with `evaluator` under `config`, scheduled by `schedule`, calling
/// `sink` for every finished game (on the calling thread, in completion order; in the
/// order of the games with [`Schedule::Deterministic`]) and `progress` about once a second
/// and after every game. Stops at the first evaluator or sink error, and within about
/// half a second of `cancel` asking (then the games under way are dropped, or parked with
/// [`Schedule::Continuous`], and the call fails with [`Error::Cancelled`]; the finished
/// ones were handed to `sink`). [`Schedule::Deterministic`] without a seed in `config` is
/// refused ([`Error::Config`]).
pub fn run_selfplay(
    config: &SelfplayConfig,
    evaluator: Arc<dyn Evaluator>,
    games: u64,
    schedule: Schedule<'_>,
    cancel: &Cancel,
    sink: impl FnMut(FinishedGame) -> Result<(), String>,
    progress: impl FnMut(&Progress),
) -> Result<Progress, Error> {
    let (parked, deterministic) = match schedule {
        Schedule::RunOut => (None, false),
        Schedule::Deterministic => {
            if config.seed.is_none() {
                return Err(Error::Config(
                    "deterministic self-play needs a seed (selfplay.seed)".into(),
                ));
            }
            (None, true)
        }
        Schedule::Continuous(parked) => (Some(parked), false),
    };
    play(
        config,
        evaluator,
        games,
        parked,
        deterministic,
        cancel,
        sink,
        progress,
    )
}

/// The seed of game `index` of a deterministic self-play call with seed `base`
/// (splitmix64 of the two).
pub(crate) fn game_seed(base: u64, index: u64) -> u64 {
    let mut z = base ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[allow(clippy::too_many_arguments)]
fn play(
    config: &SelfplayConfig,
    evaluator: Arc<dyn Evaluator>,
    games: u64,
    parked: Option<&mut ParkedGames>,
    deterministic: bool,
    cancel: &Cancel,
    sink: impl FnMut(FinishedGame) -> Result<(), String>,
    progress: impl FnMut(&Progress),
) -> Result<Progress, Error> {
    let new_worker = |seed, order, resumed| -> Box<dyn GameLoop> {
        let mut worker = Worker::new(config, seed);
        worker.order = order;
        worker.resume(resumed);
        Box::new(worker)
    };
    play_with(
        config,
        config.games_per_worker,
        &new_worker,
        evaluator,
        games,
        parked,
        deterministic,
        cancel,
        sink,
        progress,
    )
}

/// The worker pool, game dealing, ordering and progress of every self-play call, with
/// `new_worker` building each worker thread's game loop (`per_worker` games each). Polls
/// `cancel` about every half second: once it asks, the workers stop at their next batch
/// (dropping, or in continuous mode parking, their games under way) and the call fails
/// with [`Error::Cancelled`] after handing the games finished so far to `sink`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn play_with(
    config: &SelfplayConfig,
    per_worker: usize,
    new_worker: &NewWorker,
    evaluator: Arc<dyn Evaluator>,
    games: u64,
    mut parked: Option<&mut ParkedGames>,
    deterministic: bool,
    cancel: &Cancel,
    mut sink: impl FnMut(FinishedGame) -> Result<(), String>,
    mut progress: impl FnMut(&Progress),
) -> Result<Progress, Error> {
    config.validate()?;
    let continuous = parked.is_some();
    let mut carried = parked
        .as_deref_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    // Finished games carried over count first.
    let mut delivered = 0u64;
    while delivered < games && !carried.finished.is_empty() {
        let g = carried.finished.remove(0);
        sink(g).map_err(Error::Sink)?;
        delivered += 1;
    }
    let games_left = games - delivered;
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.threads
    };
    let per_worker = per_worker.max(1) as u64;
    let threads = if continuous {
        threads
    } else {
        threads.min(games.div_ceil(per_worker).max(1) as usize)
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("selfplay-{i}"))
        .build()
        .map_err(|e| Error::Config(format!("cannot start worker threads: {e}")))?;
    let shared = Arc::new(Shared {
        games: games_left,
        continuous,
        eval_turn: deterministic.then(|| std::sync::Mutex::new(())),
        started: AtomicU64::new(0),
        claimed: AtomicU64::new(0),
        stop: AtomicBool::new(games_left == 0),
        counters: Counters::default(),
        parked: std::sync::Mutex::new(ParkedGames {
            slots: Vec::new(),
            finished: carried.finished,
        }),
    });
    // Parked games in flight, dealt out to the workers.
    let mut hand_out: Vec<Vec<Slot>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, slot) in carried.slots.into_iter().enumerate() {
        hand_out[i % threads].push(slot);
    }
    let base_seed = config.seed.unwrap_or_else(crate::search::random_seed);
    let (tx, rx) = mpsc::channel::<Message>();
    let t0 = Instant::now();
    let mut snapshot = Progress {
        total_games: games,
        ..Progress::default()
    };
    let mut failure = None;
    let mut cancelled = false;
    // Deterministic mode: games finished out of order wait here for their turn.
    let mut waiting = std::collections::BTreeMap::<u64, FinishedGame>::new();
    let mut next_index = 0u64;
    pool.in_place_scope(|scope| {
        for (w, resumed) in hand_out.into_iter().enumerate() {
            let tx = tx.clone();
            let evaluator = evaluator.clone();
            let shared = shared.clone();
            let seed = base_seed ^ (w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let order = deterministic.then_some(GameOrder {
                base_seed,
                next: w as u64,
                stride: threads as u64,
            });
            let mut worker = new_worker(seed, order, resumed);
            scope.spawn(move |_| {
                if let Err(e) = worker.run(evaluator.as_ref(), &shared, &tx) {
                    shared.stop.store(true, Ordering::Relaxed);
                    let _ = tx.send(Message::Failed(e));
                }
            });
        }
        drop(tx);
        let mut last = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(500)) {
                Ok(Message::Game(index, g)) => {
                    snapshot.would_resign += g.would_resign as u64;
                    snapshot.false_resignations += g.false_resignations as u64;
                    let mut ready = vec![*g];
                    if deterministic {
                        waiting.insert(index, ready.pop().expect("just pushed"));
                        while let Some(g) = waiting.remove(&next_index) {
                            ready.push(g);
                            next_index += 1;
                        }
                    }
                    for g in ready {
                        if failure.is_none() {
                            if let Err(e) = sink(g) {
                                failure = Some(Error::Sink(e));
                                shared.stop.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                }
                Ok(Message::Failed(e)) => {
                    if failure.is_none() {
                        failure = Some(e);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if !cancelled && cancel.requested() {
                cancelled = true;
                shared.stop.store(true, Ordering::Relaxed);
            }
            shared.counters.update(&mut snapshot, delivered, t0);
            if last.elapsed() >= Duration::from_millis(500) || snapshot.games == games {
                progress(&snapshot);
                last = Instant::now();
            }
        }
    });
    shared.counters.update(&mut snapshot, delivered, t0);
    progress(&snapshot);
    if let Some(parked) = parked {
        let mut carried = shared.parked.lock().unwrap_or_else(|e| e.into_inner());
        *parked = std::mem::take(&mut *carried);
    }
    match failure {
        Some(e) => Err(e),
        None if cancelled && snapshot.games < games => Err(Error::Cancelled),
        None => Ok(snapshot),
    }
}

/// One game in a worker.
pub(crate) struct Slot {
    /// Its index (deterministic mode; 0 otherwise).
    index: u64,
    /// Its own random numbers (deterministic mode; the worker's otherwise).
    rng: Option<StdRng>,
    game: Game,
    search: Search,
    samples: Vec<Sample>,
    full_search: bool,
    resign_disabled: bool,
    /// Per colour: would have resigned (resignation-disabled games).
    would_resign: [bool; 2],
}

/// Deterministic mode: the games a worker plays (`next`, `next + stride`, … below the
/// call's count) and the seed their generators derive from.
pub(crate) struct GameOrder {
    pub(crate) base_seed: u64,
    next: u64,
    stride: u64,
}

impl GameLoop for Worker {
    fn run(
        &mut self,
        evaluator: &dyn Evaluator,
        shared: &Shared,
        tx: &mpsc::Sender<Message>,
    ) -> Result<(), Error> {
        self.run_games(evaluator, shared, tx)
    }
}

struct Worker {
    config: SelfplayConfig,
    variant: loa::Variant,
    rules: Rules,
    rng: StdRng,
    order: Option<GameOrder>,
    slots: Vec<Option<Slot>>,
    batch: EvalBatch,
}

impl Worker {
    fn new(config: &SelfplayConfig, seed: u64) -> Worker {
        Worker {
            config: config.clone(),
            variant: config.variant,
            rules: config.rules,
            rng: StdRng::seed_from_u64(seed),
            order: None,
            slots: (0..config.games_per_worker).map(|_| None).collect(),
            batch: EvalBatch::new(),
        }
    }

    /// A new game: game `index` with its own generator in deterministic mode.
    fn new_slot(&mut self, index: Option<u64>) -> Slot {
        let game = Game::new(self.variant, self.rules);
        let mut own = index
            .zip(self.order.as_ref())
            .map(|(k, o)| StdRng::seed_from_u64(game_seed(o.base_seed, k)));
        let rng = own.as_mut().unwrap_or(&mut self.rng);
        let mut search = Search::new(self.config.mcts.clone(), self.rules, rng.random());
        search.set_root(&game);
        let resign_disabled = rng.random::<f32>() < self.config.resign_disabled_fraction;
        let mut slot = Slot {
            index: index.unwrap_or(0),
            rng: own,
            game,
            search,
            samples: Vec::new(),
            full_search: true,
            resign_disabled,
            would_resign: [false; 2],
        };
        self.begin_move(&mut slot);
        slot
    }

    fn begin_move(&mut self, slot: &mut Slot) {
        let m = &self.config.mcts;
        let rng = slot.rng.as_mut().unwrap_or(&mut self.rng);
        slot.full_search = rng.random::<f32>() < m.full_search_probability;
        let sims = if slot.full_search {
            self.config.simulations
        } else {
            m.cheap_simulations.min(self.config.simulations)
        };
        slot.search.begin(sims, slot.full_search);
    }

    /// Takes over parked games: each searches its current move again from scratch (so
    /// with this call's evaluator). Slots beyond `games_per_worker` are kept too.
    fn resume(&mut self, parked: Vec<Slot>) {
        for mut slot in parked {
            slot.search = Search::new(self.config.mcts.clone(), self.rules, self.rng.random());
            slot.search.set_root(&slot.game);
            self.begin_move(&mut slot);
            match self.slots.iter().position(Option::is_none) {
                Some(i) => self.slots[i] = Some(slot),
                None => self.slots.push(Some(slot)),
            }
        }
    }

    /// Moves this worker's games in flight into the shared parking.
    fn park(&mut self, shared: &Shared) {
        let mut parked = shared.parked.lock().unwrap_or_else(|e| e.into_inner());
        parked
            .slots
            .extend(self.slots.iter_mut().filter_map(Option::take));
    }

    fn run_games(
        &mut self,
        evaluator: &dyn Evaluator,
        shared: &Shared,
        tx: &mpsc::Sender<Message>,
    ) -> Result<(), Error> {
        let counters = &shared.counters;
        loop {
            if shared.stopping() {
                if shared.continuous {
                    self.park(shared);
                }
                return Ok(());
            }
            for i in 0..self.slots.len() {
                if self.slots[i].is_some() {
                    continue;
                }
                if let Some(index) = shared.claim_start(&mut self.order) {
                    self.slots[i] = Some(self.new_slot(index));
                }
            }
            if self.slots.iter().all(Option::is_none) {
                return Ok(());
            }
            self.batch.clear();
            for slot in self.slots.iter_mut().flatten() {
                slot.search.gather(&mut self.batch);
            }
            shared.evaluate(evaluator, &mut self.batch)?;
            for i in 0..self.slots.len() {
                let Some(mut slot) = self.slots[i].take() else {
                    continue;
                };
                slot.search.absorb(&self.batch)?;
                if !slot.search.is_finished() {
                    self.slots[i] = Some(slot);
                    continue;
                }
                counters.positions.fetch_add(1, Ordering::Relaxed);
                match self.play_move(&mut slot) {
                    None => {
                        self.begin_move(&mut slot);
                        self.slots[i] = Some(slot);
                    }
                    Some(finished) => {
                        if !shared.deliver(tx, slot.index, finished) {
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    /// Records the sample of the finished search, plays its move; returns the game if it
    /// is over (by rule, resignation or adjudication).
    fn play_move(&mut self, slot: &mut Slot) -> Option<FinishedGame> {
        let pos = *slot.game.position();
        let us = pos.to_move();
        let value = slot.search.root_value();
        let root_moves = slot.search.root_moves();
        slot.samples.push(Sample {
            position: pos,
            rules: self.rules,
            moves: root_moves.iter().map(|m| m.mv).collect(),
            policy: if slot.full_search {
                slot.search.policy_target()
            } else {
                Vec::new()
            },
            search_value: value.clamp(-1.0, 1.0),
            outcome: 0.0,
            tree_only: false,
            final_pieces: None,
        });
        // Resignation: the root value and the best move's value both below the threshold.
        let ply = slot.game.moves().len() as u32;
        let threshold = self.config.resign_threshold;
        let best_q = root_moves
            .iter()
            .map(|m| match m.proof {
                Some(p) => p.value(),
                None if m.visits > 0 => m.q,
                None => -1.0,
            })
            .fold(-1.0f32, f32::max);
        if threshold > -1.0
            && ply >= self.config.resign_min_ply
            && value < threshold
            && best_q < threshold
        {
            if slot.resign_disabled {
                slot.would_resign[us.index()] = true;
            } else {
                return Some(self.finish(slot, Outcome::Win(us.opponent()), Some(us), false));
            }
        }
        let m = &self.config.mcts;
        let temperature = if ply < m.temperature_plies {
            m.temperature
        } else {
            m.temperature_end
        };
        let mv = slot
            .search
            .sample_move(temperature)
            .expect("a finished search of a live game has root moves");
        slot.game
            .play(mv)
            .expect("search only proposes legal moves");
        if let Some(o) = slot.game.outcome() {
            return Some(self.finish(slot, o, None, false));
        }
        if slot.game.moves().len() as u32 >= self.config.max_game_plies {
            return Some(self.finish(slot, Outcome::Draw, None, true));
        }
        slot.search.advance(mv);
        None
    }

    fn finish(
        &self,
        slot: &mut Slot,
        outcome: Outcome,
        resigned: Option<Color>,
        adjudicated: bool,
    ) -> FinishedGame {
        let mut samples = std::mem::take(&mut slot.samples);
        let last = slot.game.position();
        for s in &mut samples {
            let side = s.position.to_move();
            s.outcome = outcome.score_for(side);
            s.final_pieces = Some(Sample::final_pieces_of(last, side));
        }
        let mut would_resign = 0;
        let mut false_resignations = 0;
        for c in Color::ALL {
            if slot.would_resign[c.index()] {
                would_resign += 1;
                if outcome != Outcome::Win(c.opponent()) {
                    false_resignations += 1;
                }
            }
        }
        FinishedGame {
            start: *slot.game.start(),
            rules: self.rules,
            moves: slot.game.moves().to_vec(),
            outcome,
            resigned,
            adjudicated,
            resign_disabled: slot.resign_disabled,
            false_resignations,
            would_resign,
            samples,
        }
    }
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
