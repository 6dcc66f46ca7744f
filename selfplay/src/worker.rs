//! Self-play: worker threads on a dedicated rayon pool, each advancing many games in
//! lockstep so that one evaluator call carries leaves of all its games. Finished games
//! flow over a channel to the calling thread, which hands them to a sink (usually an
//! [`crate::output::GameWriter`]) and reports progress.

use crate::config::SelfplayConfig;
use crate::data::Sample;
use crate::evaluator::{EvalBatch, EvalError, Evaluator};
use crate::search::Search;
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

/// Why a self-play run stopped early.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    /// Bad configuration.
    #[error("bad self-play configuration: {0}")]
    Config(String),
    /// The evaluator failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// The sink (writing games) failed.
    #[error("{0}")]
    Sink(String),
}

enum Message {
    Game(Box<FinishedGame>),
    Failed(SelfplayError),
}

/// Plays `games` games with `evaluator` under `config`, calling `sink` for every finished
/// game (on the calling thread, in completion order) and `progress` about once a second
/// and after every game. Stops at the first evaluator or sink error.
pub fn run_selfplay(
    config: &SelfplayConfig,
    evaluator: Arc<dyn Evaluator>,
    games: u64,
    mut sink: impl FnMut(FinishedGame) -> Result<(), String>,
    mut progress: impl FnMut(&Progress),
) -> Result<Progress, SelfplayError> {
    config.validate().map_err(SelfplayError::Config)?;
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.threads
    };
    let per_worker = config.games_per_worker as u64;
    let threads = threads.min(games.div_ceil(per_worker).max(1) as usize);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("selfplay-{i}"))
        .build()
        .map_err(|e| SelfplayError::Config(format!("cannot start worker threads: {e}")))?;
    let counters = Arc::new(Counters::default());
    let started = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let base_seed = config.seed.unwrap_or_else(crate::search::random_seed);
    let (tx, rx) = mpsc::channel::<Message>();
    let t0 = Instant::now();
    let mut snapshot = Progress {
        total_games: games,
        ..Progress::default()
    };
    let mut failure = None;
    pool.in_place_scope(|scope| {
        for w in 0..threads {
            let tx = tx.clone();
            let evaluator = evaluator.clone();
            let counters = counters.clone();
            let started = started.clone();
            let stop = stop.clone();
            let config = config.clone();
            scope.spawn(move |_| {
                let seed = base_seed ^ (w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let mut worker = Worker::new(&config, seed);
                if let Err(e) =
                    worker.run(evaluator.as_ref(), games, &started, &stop, &counters, &tx)
                {
                    stop.store(true, Ordering::Relaxed);
                    let _ = tx.send(Message::Failed(e));
                }
            });
        }
        drop(tx);
        let mut last = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(500)) {
                Ok(Message::Game(g)) => {
                    snapshot.would_resign += g.would_resign as u64;
                    snapshot.false_resignations += g.false_resignations as u64;
                    if failure.is_none() {
                        if let Err(e) = sink(*g) {
                            failure = Some(SelfplayError::Sink(e));
                            stop.store(true, Ordering::Relaxed);
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
            snapshot.games = counters.games.load(Ordering::Relaxed);
            snapshot.positions = counters.positions.load(Ordering::Relaxed);
            snapshot.evaluations = counters.evaluations.load(Ordering::Relaxed);
            snapshot.batches = counters.batches.load(Ordering::Relaxed);
            snapshot.seconds = t0.elapsed().as_secs_f64();
            if last.elapsed() >= Duration::from_millis(500) || snapshot.games == games {
                progress(&snapshot);
                last = Instant::now();
            }
        }
    });
    snapshot.seconds = t0.elapsed().as_secs_f64();
    progress(&snapshot);
    match failure {
        Some(e) => Err(e),
        None => Ok(snapshot),
    }
}

/// One game in a worker.
struct Slot {
    game: Game,
    search: Search,
    samples: Vec<Sample>,
    full_search: bool,
    resign_disabled: bool,
    /// Per colour: would have resigned (resignation-disabled games).
    would_resign: [bool; 2],
}

struct Worker {
    config: SelfplayConfig,
    variant: loa::Variant,
    rules: Rules,
    rng: StdRng,
    slots: Vec<Option<Slot>>,
    batch: EvalBatch,
}

impl Worker {
    fn new(config: &SelfplayConfig, seed: u64) -> Worker {
        Worker {
            config: config.clone(),
            variant: config.variant().expect("validated"),
            rules: config.rules().expect("validated"),
            rng: StdRng::seed_from_u64(seed),
            slots: (0..config.games_per_worker).map(|_| None).collect(),
            batch: EvalBatch::new(),
        }
    }

    fn new_slot(&mut self) -> Slot {
        let game = Game::new(self.variant, self.rules);
        let mut search = Search::new(self.config.mcts.clone(), self.rules, self.rng.random());
        search.set_root(&game);
        let resign_disabled = self.rng.random::<f32>() < self.config.resign_disabled_fraction;
        let mut slot = Slot {
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
        slot.full_search = self.rng.random::<f32>() < m.full_search_probability;
        let sims = if slot.full_search {
            self.config.simulations
        } else {
            m.cheap_simulations.min(self.config.simulations)
        };
        slot.search.begin(sims, slot.full_search);
    }

    fn run(
        &mut self,
        evaluator: &dyn Evaluator,
        games: u64,
        started: &AtomicU64,
        stop: &AtomicBool,
        counters: &Counters,
        tx: &mpsc::Sender<Message>,
    ) -> Result<(), SelfplayError> {
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            for i in 0..self.slots.len() {
                if self.slots[i].is_none() && started.fetch_add(1, Ordering::Relaxed) < games {
                    self.slots[i] = Some(self.new_slot());
                }
            }
            if self.slots.iter().all(Option::is_none) {
                return Ok(());
            }
            self.batch.clear();
            for slot in self.slots.iter_mut().flatten() {
                slot.search.gather(&mut self.batch);
            }
            if !self.batch.is_empty() {
                evaluator.evaluate(&mut self.batch)?;
                counters
                    .evaluations
                    .fetch_add(self.batch.len() as u64, Ordering::Relaxed);
                counters.batches.fetch_add(1, Ordering::Relaxed);
            }
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
                        counters.games.fetch_add(1, Ordering::Relaxed);
                        if tx.send(Message::Game(Box::new(finished))).is_err() {
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
        });
        // Resignation: the root value and the best move's value both below the threshold.
        let ply = slot.game.moves().len() as u32;
        let threshold = self.config.resign_threshold;
        let best_q = root_moves
            .iter()
            .map(|m| match m.proof {
                Some(p) => p as f32,
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
        for s in &mut samples {
            s.outcome = outcome.score_for(s.position.to_move());
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
