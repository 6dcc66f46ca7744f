//! [`Driver`]: the self-play → train → gate → rate loop over a [`RunDir`].
//!
//! Each generation `g ≥ 1` goes through the [`Phase`]s in order; `state.json` is saved
//! after each phase, and every phase can be cut at any moment and redone from the files:
//! * self-play: the best model plays until the loop's shards of `g` hold
//!   `run.games_per_generation` games (a restart plays only the missing ones);
//! * train: the trainer (restored from `checkpoints/latest`) runs to `state.train_target`
//!   steps, checkpointing every `run.checkpoint_every`, then writes `candidates/gen-g`;
//! * gate: the candidate plays the best model; the verdict is saved as `decision.json`
//!   before the promotion (a copy to `models/gen-g`) and the state, so a restart repeats
//!   only the idempotent part;
//! * rate: when due, the best model plays every anchor ([`super::rating`]).
//!
//! Generation 0 is the initial network, rated before the first self-play.
//!
//! **Stops.** A generation starts only when it and the final rating are expected to fit
//! into the time budget (`run.minutes`, [`stop_reason`]). Whatever the estimate, a phase
//! still running when the budget is used up, or when a SIGINT or SIGTERM comes
//! ([`loazero::interrupt`]), stops within about a second, in every phase: self-play (MCTS
//! and Descent, between evaluator batches; the games under way are dropped, the
//! finished ones are in the shards), training (after the running chunk of
//! `train.log_every` steps, checkpointed), gate and rating matches (before the next
//! move; an unfinished match is replayed on resume, finished ones are kept). The run
//! time so far is saved, so a resumed run counts it.

use super::algorithm;
use super::config::{derive_seed, LoopConfig, RunConfig, SeedUse};
use super::display::{clock, Bar, LoopDisplay};
use super::join::Background;
use super::learned_stage::{self, LearnedStage};
use super::net_schedule;
use super::rating::{self, model_spec, rating_rows};
use super::remote::StoreTrainer;
use anyhow::{anyhow, bail, Context, Result};
use eval::arena::{play_once, GameResult, MatchConfig, Openings};
use eval::elo::Tally;
use eval::{Decision, GateReport, PlayerFactory};
use rundir::layout::{copy_atomically, learned_name, model_name, RunDir};
use rundir::shards::{loop_games_done, loop_prefix, remove_loop_games};
use rundir::state::{LoopState, Phase};
use selfplay::{Cancel, ParkedGames};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use train::device::PrecisionOn;
use train::heldout::HeldoutSet;
use train::metrics::{unix_time, MetricsLog};
use train::metrics::{GenerationRecord, RatingRecord, Record, StopReason, StopRecord};
use train::{InferenceConfig, NetEvaluator, ReplayWindow, TrainConfig, Trainer};

/// A shard is written at least this often during self-play, so that a crash loses
/// little finished work.
const SHARD_FLUSH: Duration = Duration::from_secs(30);

/// The error of a phase that the time budget (`run.minutes`) cut short; the loop ends
/// as at a planned stop, with [`StopReason::TimeBudget`].
#[derive(Debug)]
struct OutOfTime;

impl std::fmt::Display for OutOfTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the run's time budget is used up")
    }
}

impl std::error::Error for OutOfTime {}

fn is_out_of_time(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<OutOfTime>())
}

/// Why generation `state.generation` may not start at `elapsed` seconds (`None`: it may):
/// it is beyond `run.generations`, or, with a time budget, the last generation and the
/// last rating round (the final one is still to come) would not fit into what is left of
/// the `budget_s` seconds the generations may use ([`generations_budget_s`]).
fn stop_reason(
    run: &LoopConfig,
    state: &LoopState,
    elapsed: f64,
    budget_s: f64,
) -> Option<StopReason> {
    if run.generations > 0 && state.generation > run.generations {
        return Some(StopReason::Generations);
    }
    if run.minutes > 0.0 {
        let need = state.last_generation_s + state.last_rating_s;
        if elapsed + need > budget_s {
            return Some(StopReason::TimeBudget);
        }
    }
    None
}

/// Whether the run ends with the learned evaluation's stage ([`learned_stage`]): a share of
/// the budget for it and a variant it covers.
fn learned_stage_on(config: &RunConfig) -> bool {
    config.learned_eval.share > 0.0 && eval::learned::supports(config.variant())
}

/// Seconds of the run's budget its generations and the final rating of its best model
/// may use: all of it, less the learned evaluation's share when its stage runs.
fn generations_budget_s(config: &RunConfig) -> f64 {
    let share = if learned_stage_on(config) {
        config.learned_eval.share
    } else {
        0.0
    };
    config.run.minutes * 60.0 * (1.0 - share)
}

/// The progress of rating matches on the match bar (a new bar whenever the match, named
/// by its label, changes); `current` holds the label of the match shown.
fn match_progress<'a>(
    display: &'a LoopDisplay,
    current: &'a Mutex<String>,
) -> impl Fn(&str, usize, &GameResult, &Tally) + Sync + 'a {
    move |label, games, _, t| {
        let mut cur = current.lock().expect("label lock");
        if *cur != label {
            *cur = label.to_string();
            display.start(Bar::Match, games as u64, label);
        }
        display.update(
            Bar::Match,
            t.games() as u64,
            &format!("{label}: {}-{}-{}", t.wins, t.draws, t.losses),
        );
    }
}

/// Runs the loop of one run directory. Owned by the main thread.
pub struct Driver {
    run: RunDir,
    config: RunConfig,
    state: LoopState,
    trainer: Option<Trainer>,
    window: ReplayWindow,
    metrics: MetricsLog,
    display: LoopDisplay,
    started: Instant,
    base_elapsed: f64,
    /// Asks the phases to stop: a signal, or the run time reaching `cancel_at_s`.
    cancel: Cancel,
    /// Run seconds (`f64` bits) at which `cancel` stops the phases when the run has a time
    /// budget: the generations' budget, then the whole budget for the learned stage.
    cancel_at_s: Arc<AtomicU64>,
    record: GenerationRecord,
    /// The held-out set of the run's variant, when `run.heldout` and one ships.
    heldout: Option<HeldoutSet>,
    /// Self-play games carried to the next generation (`run.continuous_selfplay`, not
    /// in a deterministic run); in memory only, so a restart begins with none.
    parked: ParkedGames,
    /// The background self-play (`run.background_selfplay_threads`), while it runs.
    background: Option<Background>,
    /// Its positions when the current generation's record began.
    background_mark: u64,
    /// Its games when the previous self-play phase ended: the games it finished since
    /// count toward the current generation's `run.games_per_generation`.
    background_games_mark: u64,
    /// Raw forward positions/s of the run's network by batch size ([`raw_forward_batch`]),
    /// measured once per process: it does not depend on the weights, and measuring it
    /// every generation took half a second of each.
    raw_forward: std::collections::HashMap<usize, f64>,
    /// The store the run is kept in (`loazero run --store`; `run` is then its working
    /// copy): told after every saved phase ([`StoreTrainer::after_save`]).
    store: Option<StoreTrainer>,
}

/// The batch size whose raw forward speed stands for a mean self-play batch of `mean`:
/// the nearest multiple of 8 from 16 on (one measurement serves a run's generations,
/// whose mean batches differ by a few positions), the nearest whole batch below.
fn raw_forward_batch(mean: f64) -> usize {
    let batch = mean.round().max(1.0) as usize;
    if batch < 16 {
        batch
    } else {
        (batch + 4) / 8 * 8
    }
}

impl Driver {
    /// Opens (or initialises: generation 0's model and checkpoint) the run in `run`
    /// with `config`, after the caller took the lock and cleaned up.
    pub fn open(run: RunDir, config: RunConfig, display: LoopDisplay) -> Result<Driver> {
        let metrics = MetricsLog::open(&run.metrics())?;
        let window = ReplayWindow::with_size(config.train.window_size(), config.variant())
            .keep_value_only(config.train.value_only_positions)
            .order_by_name(config.run.deterministic);
        let (state, trainer) = if run.state().exists() {
            (LoopState::load(&run.state())?, None)
        } else {
            let trainer = Trainer::new(config.train.clone(), config.variant())?;
            trainer.save_model(&run.model(0))?;
            trainer.save_checkpoint(&run.checkpoint())?;
            let state = LoopState::new();
            state.save(&run.state())?;
            display.line(&format!(
                "initialised {}: {} (gen-0000)",
                run.root().display(),
                trainer.describe()
            ));
            (state, Some(trainer))
        };
        if !run.model(state.best).exists() {
            bail!(
                "{}: the best model {} is missing",
                run.state().display(),
                run.model(state.best).display()
            );
        }
        let config_heldout = config
            .run
            .heldout
            .then(|| HeldoutSet::shipped(config.variant()))
            .flatten();
        let started = Instant::now();
        let timed = config.run.minutes > 0.0;
        let base_elapsed = state.elapsed_s;
        let cancel_at_s = Arc::new(AtomicU64::new(generations_budget_s(&config).to_bits()));
        let at = cancel_at_s.clone();
        let cancel = Cancel::when(move || {
            loazero::interrupt::requested()
                || (timed
                    && base_elapsed + started.elapsed().as_secs_f64()
                        >= f64::from_bits(at.load(Ordering::Relaxed)))
        });
        Ok(Driver {
            base_elapsed,
            cancel,
            cancel_at_s,
            run,
            config,
            state,
            trainer,
            window,
            metrics,
            display,
            started,
            record: GenerationRecord::default(),
            heldout: config_heldout,
            parked: ParkedGames::default(),
            background: None,
            background_mark: 0,
            background_games_mark: 0,
            raw_forward: Default::default(),
            store: None,
        })
    }

    /// Keeps the run in `store` from now on (the working copy is this driver's run
    /// directory): mirrors it and publishes generation 0 when the log lacks it.
    pub fn attach_store(mut self, mut store: StoreTrainer) -> Result<Driver> {
        store.set_max_staleness(self.config.run.max_shard_staleness);
        self.store = Some(store);
        self.sync_store()?;
        Ok(self)
    }

    /// Hands the saved state to the store, if the run is kept in one.
    fn sync_store(&mut self) -> Result<()> {
        if let Some(store) = &mut self.store {
            let (pulled, stale) = store.after_save(&self.run, &self.state)?;
            if pulled + stale > 0 {
                self.display.line(&format!(
                    "pulled {pulled} workers' shards from {} ({stale} dropped as played with \
                     a model more than run.max_shard_staleness generations old)",
                    store.describe()
                ));
            }
        }
        Ok(())
    }

    /// Active seconds of the run so far.
    fn elapsed(&self) -> f64 {
        self.base_elapsed + self.started.elapsed().as_secs_f64()
    }

    fn save_state(&mut self) -> Result<()> {
        self.state.elapsed_s = self.elapsed();
        self.state.save(&self.run.state())?;
        self.sync_store()
    }

    /// The fraction of the run's budget used so far (time if it has one, else
    /// generations; generations first in a deterministic run), for the `cosine-run`
    /// learning-rate schedule; None without a budget.
    fn run_progress(&self) -> Option<f64> {
        let r = &self.config.run;
        let by_generations = r.deterministic && r.generations > 0;
        if r.minutes > 0.0 && !by_generations {
            Some(self.elapsed() / generations_budget_s(&self.config))
        } else if r.generations > 0 {
            Some(self.state.generation.saturating_sub(1) as f64 / r.generations as f64)
        } else {
            None
        }
    }

    fn budget_s(&self) -> f64 {
        self.config.run.minutes * 60.0
    }

    /// Why no further generation may start (generation and time limits); `None`: one may.
    fn stop_reason(&self) -> Option<StopReason> {
        stop_reason(
            &self.config.run,
            &self.state,
            self.elapsed(),
            generations_budget_s(&self.config),
        )
    }

    /// Whether the generations' part of the time budget is used up.
    fn out_of_time(&self) -> bool {
        self.config.run.minutes > 0.0 && self.elapsed() >= generations_budget_s(&self.config)
    }

    /// The error of a phase that [`Driver::cancel`] stopped: [`loazero::interrupt::Interrupted`]
    /// after a signal, else [`OutOfTime`].
    fn stop_error(&self) -> anyhow::Error {
        if loazero::interrupt::requested() {
            loazero::interrupt::Interrupted.into()
        } else {
            OutOfTime.into()
        }
    }

    /// `err`, or the [`Driver::stop_error`] when it is a cancellation
    /// ([`selfplay::is_cancelled`]).
    fn stopped(&self, err: anyhow::Error) -> anyhow::Error {
        if err.chain().any(selfplay::is_cancelled) {
            self.stop_error()
        } else {
            err
        }
    }

    /// Records in `metrics.jsonl` that the loop stopped, and why.
    fn record_stop(&mut self, reason: StopReason) -> Result<()> {
        let generation = match self.state.phase {
            // Generation `g` has been gated (its rating may be due): it is complete.
            Phase::Rate => self.state.generation,
            // Generation `g` is under way (or, in self-play, not begun): `g - 1` was the last.
            Phase::Selfplay | Phase::Train | Phase::Gate => self.state.generation.saturating_sub(1),
        };
        self.metrics.write(&Record::Stop(StopRecord {
            time: unix_time(),
            elapsed_s: self.elapsed(),
            generation,
            reason,
        }))
    }

    fn rating_due(&self, generation: u32) -> bool {
        let every = self.config.rating.every;
        generation == 0 || (every > 0 && generation.is_multiple_of(every))
    }

    /// Runs until a limit is reached, then rates the final best model if needed. A
    /// SIGINT or SIGTERM ([`loazero::interrupt`]) stops it at the next safe point with an
    /// [`loazero::interrupt::Interrupted`] error, after saying where it stopped.
    pub fn run(mut self) -> Result<()> {
        loazero::interrupt::install();
        let threads = self.config.background_selfplay_threads();
        if threads < self.config.run.background_selfplay_threads {
            self.display
                .line("background self-play is off: run.deterministic plays only the loop's games");
        }
        if threads > 0 {
            self.background = Some(Background::start(&self.run, &self.config, threads)?);
            self.display.line(&format!(
                "background self-play: {threads} worker threads with the newest promoted model"
            ));
        }
        let result = self.run_loop();
        if let Err(e) = &result {
            if loazero::interrupt::is_interrupted(e) {
                // Best effort: the interruption is the error to report.
                let _ = self.save_state();
                let _ = self.record_stop(StopReason::Interrupted);
                let _ = self.sync_store();
                self.display.finish();
                eprintln!(
                    "stopped at generation {} ({:?} phase) after {} of run time; everything \
                     finished so far is saved: run the same command again to resume",
                    self.state.generation,
                    self.state.phase,
                    clock(self.elapsed())
                );
            }
        }
        result
    }

    fn run_loop(&mut self) -> Result<()> {
        let r = &self.config.run;
        let inference = &self.config.train.inference;
        // `auto` for the run's first network (measured on its first use on this machine;
        // each evaluator resolves it for the network it serves).
        let precision = train::device::resolve_device(inference.device)
            .map(|d| {
                train::auto_precision::inference_precision(
                    inference.precision,
                    d,
                    &self.config.train.net,
                    self.config.variant(),
                    inference.threads,
                )
                .to_string()
            })
            .unwrap_or_else(|_| inference.precision.to_string());
        self.display.line(&format!(
            "run {}: generation {} ({:?}), best {}, {} of {}; {} self-play games and {} \
             training steps per generation; inference on {} in {precision}",
            self.run.root().display(),
            self.state.generation,
            self.state.phase,
            model_name(self.state.best),
            clock(self.elapsed()),
            if r.minutes > 0.0 {
                clock(r.minutes * 60.0)
            } else {
                "no time limit".into()
            },
            r.games_per_generation,
            r.train_steps_per_generation,
            inference.device,
        ));
        let stopped = match self.generations() {
            Ok(reason) => reason,
            Err(e) if is_out_of_time(&e) => {
                self.display.line(&format!(
                    "the time budget ({}) ran out in generation {}'s {:?} phase: what it \
                     finished is saved, a run with a larger --minutes goes on from there",
                    clock(self.budget_s()),
                    self.state.generation,
                    self.state.phase
                ));
                StopReason::TimeBudget
            }
            Err(e) => return Err(e),
        };
        if let Some(mut background) = self.background.take() {
            background.stop()?;
        }
        let best = self.state.best;
        if !self.state.rated.contains(&best) {
            let rated = if self.out_of_time() {
                Err(OutOfTime.into())
            } else {
                self.rate(best)
            };
            match rated {
                Ok(()) => {}
                Err(e) if is_out_of_time(&e) => self.display.line(&format!(
                    "{} is not rated: the time budget is used up (a run with a larger \
                     --minutes rates it)",
                    model_name(best)
                )),
                Err(e) => return Err(e),
            }
        }
        let learned = if learned_stage_on(&self.config) {
            self.learned_stage()?
        } else {
            None
        };
        self.save_state()?;
        self.record_stop(stopped)?;
        self.sync_store()?;
        self.display.finish();
        let table = match rating::fit_run(&self.run) {
            Ok(table) => {
                println!("ratings after {} ({} games):", clock(self.elapsed()), {
                    table.ratings.iter().map(|r| r.games as u64).sum::<u64>() / 2
                });
                println!("{table}");
                Some(table)
            }
            // The budget ran out before the first rating matches finished.
            Err(e) if stopped == StopReason::TimeBudget => {
                println!("no ratings yet: {e:#}");
                None
            }
            Err(e) => return Err(e),
        };
        println!(
            "best model: {} ({} promoted, {} rejected); ratings: {}",
            self.run.model(best).display(),
            self.state.promoted,
            self.state.rejected,
            self.run.ratings_csv().display()
        );
        if let Some(k) = learned {
            println!(
                "best learned evaluation: {} (alpha-beta with it: alphabeta:eval={})",
                self.run.learned_model(k).display(),
                self.run.learned_model(k).display()
            );
        }
        println!("{}", self.strongest_player(table.as_ref(), learned)?);
        if stopped == StopReason::TimeBudget {
            let twice = self.config.run.minutes * 2.0;
            println!(
                "the run used its {} minutes; to train on, run the same command with a \
                 larger --minutes (it counts the whole run, e.g. --minutes {})",
                self.config.run.minutes,
                (twice * 100.0).round() / 100.0
            );
        }
        Ok(())
    }

    /// The line naming the run's strongest player by the ratings: its best MCTS model at
    /// `rating.simulations`, or the learned alpha-beta at `learned_eval.rating_depth`.
    fn strongest_player(
        &self,
        table: Option<&eval::ratings::RatingTable>,
        learned: Option<u32>,
    ) -> Result<String> {
        let best = self.state.best;
        let elo = |name: &str| {
            table
                .and_then(|t| t.ratings.iter().find(|r| r.name == name))
                .map(|r| r.elo)
        };
        let model = model_spec(
            &self.run.model(best),
            self.config.rating.simulations,
            self.config.train.inference.device,
        )?;
        let model_elo = elo(&model_name(best));
        let Some(k) = learned else {
            return Ok(format!("strongest player: {model}"));
        };
        let learned_elo = elo(&learned_name(k));
        let path = self.run.learned_model(k);
        let (rating_depth, sims) = (
            self.config.learned_eval.rating_depth,
            self.config.rating.simulations,
        );
        let rated = |e: Option<f64>| e.map_or("unrated".into(), |e| format!("Elo {e:+.0}"));
        Ok(match (learned_elo, model_elo) {
            (Some(l), Some(m)) if m > l => format!(
                "strongest player: {model} ({}, {} at {sims} simulations; {} at depth \
                 {rating_depth}: {})",
                model_name(best),
                rated(model_elo),
                learned_name(k),
                rated(learned_elo)
            ),
            _ => format!(
                "strongest player: alphabeta:eval={} (the learned alpha-beta {}, {} at depth \
                 {rating_depth}; {} {} at {sims} simulations); give it the time per move you \
                 play at, e.g. alphabeta:eval={},ms=200",
                path.display(),
                learned_name(k),
                rated(learned_elo),
                model_name(best),
                rated(model_elo),
                path.display()
            ),
        })
    }

    /// The learned evaluation's stage ([`learned_stage`]) with the rest of the budget (at
    /// most `learned_eval.share` of it), then the rating of its best evaluation. Returns
    /// that best one; the budget running out ends the stage with what it finished.
    fn learned_stage(&mut self) -> Result<Option<u32>> {
        let budget = self.budget_s();
        self.cancel_at_s.store(budget.to_bits(), Ordering::Relaxed);
        let stage_end = (self.config.run.minutes > 0.0)
            .then(|| (self.elapsed() + self.config.learned_eval.share * budget).min(budget));
        let factory = self.factory();
        let seconds_left = || stage_end.map(|end| end - self.elapsed());
        let teacher = self.run.model(self.state.best);
        let stage = LearnedStage {
            run: &self.run,
            config: &self.config,
            factory: &factory,
            teacher: &teacher,
            cancel: &self.cancel,
            seconds_left: &seconds_left,
            display: &self.display,
        };
        let best = match stage.run().map_err(|e| self.stopped(e)) {
            Ok(best) => best,
            Err(e) if is_out_of_time(&e) => {
                self.display.line(
                    "the time budget ran out in the learned evaluation's stage: what it \
                     finished is kept",
                );
                learned_stage::best_learned(&learned_stage::learned_generations(&self.run)?)
            }
            Err(e) => return Err(e),
        };
        let Some(k) = best else {
            return Ok(None);
        };
        let current = Mutex::new(String::new());
        let display = &self.display;
        let rated = rating::rate_learned(
            &self.run,
            &self.config,
            &factory,
            k,
            &self.cancel,
            &match_progress(display, &current),
        )
        .map_err(|e| self.stopped(e));
        match rated {
            Ok(table) => {
                self.metrics.write(&Record::Rating(RatingRecord {
                    time: unix_time(),
                    elapsed_s: self.elapsed(),
                    generation: self.state.best,
                    ratings: rating_rows(&table),
                }))?;
                if let Some(r) = table.ratings.iter().find(|r| r.name == learned_name(k)) {
                    self.display.line(&format!(
                        "rated {} (alpha-beta at depth {}): Elo {:+.0} ± {:.0}; ratings.csv \
                         updated",
                        learned_name(k),
                        self.config.learned_eval.rating_depth,
                        r.elo,
                        1.96 * r.stderr
                    ));
                }
            }
            Err(e) if is_out_of_time(&e) => self.display.line(&format!(
                "{} is not rated: the time budget is used up (a run with a larger --minutes \
                 rates it)",
                learned_name(k)
            )),
            Err(e) => return Err(e),
        }
        Ok(Some(k))
    }

    /// Plays generations until a limit says stop (its reason); fails with
    /// [`loazero::interrupt::Interrupted`] or [`OutOfTime`] when a phase is cut short.
    fn generations(&mut self) -> Result<StopReason> {
        loop {
            // The time budget stops the loop here once used up, before a generation
            // that would not fit (`stop_reason`), or in a phase (`self.cancel`).
            loazero::interrupt::check()?;
            if self.out_of_time() {
                return Ok(StopReason::TimeBudget);
            }
            if let Some(background) = &mut self.background {
                background.check()?;
            }
            self.display.generation(
                self.state.generation,
                self.config.run.generations,
                self.elapsed(),
                self.budget_s(),
            );
            match self.state.phase {
                Phase::Rate => {
                    let best = self.state.best;
                    if self.rating_due(self.state.generation) && !self.state.rated.contains(&best) {
                        self.rate(best)?;
                    }
                    self.state.generation += 1;
                    self.state.phase = Phase::Selfplay;
                    self.state.generation_started_s = self.elapsed();
                    self.record = GenerationRecord::default();
                    self.save_state()?;
                }
                Phase::Selfplay => {
                    if let Some(reason) = self.stop_reason() {
                        return Ok(reason);
                    }
                    self.selfplay()?;
                    let step = self.trainer()?.step();
                    self.state.train_target = step + self.config.run.train_steps_per_generation;
                    self.state.phase = Phase::Train;
                    self.save_state()?;
                }
                Phase::Train => {
                    self.train()?;
                    self.state.phase = Phase::Gate;
                    self.save_state()?;
                }
                Phase::Gate => {
                    self.gate()?;
                    self.state.last_generation_s = self.elapsed() - self.state.generation_started_s;
                    self.state.phase = Phase::Rate;
                    self.save_state()?;
                }
            }
        }
    }

    /// The trainer, restored from the checkpoint on first use after a restart.
    fn trainer(&mut self) -> Result<&mut Trainer> {
        if self.trainer.is_none() {
            let path = self.run.checkpoint();
            // The checkpoint's shape says the stage of run.net_schedule the run is at.
            let (train, schedule) = (&self.config.train, &self.config.run.net_schedule);
            let t = Trainer::resume_with(&path, |net, _| {
                net_schedule::train_config_for(train, schedule, net)
            })
            .with_context(|| format!("cannot resume the trainer from {}", path.display()))?;
            self.trainer = Some(t);
        }
        Ok(self.trainer.as_mut().expect("just set"))
    }

    /// The inference settings of self-play and matches. A deterministic run turns the
    /// evaluation cache off (its hits depend on which worker asked first) and the batch
    /// deadline to 0 (its workers call the network one at a time, so no other request can
    /// join a batch).
    fn inference_config(&self) -> InferenceConfig {
        let mut inference = self.config.train.inference.clone();
        if self.config.run.deterministic {
            inference.cache_positions = 0;
            inference.deadline_us = 0;
        }
        inference
    }

    /// Factory of players whose `model:` specs load with the run's inference settings.
    fn factory(&self) -> PlayerFactory {
        train::players::model_player_factory(self.inference_config(), None)
    }

    /// The self-play phase: the loop plays what generation `g`'s
    /// `run.games_per_generation` still lacks after its own committed games (a restart)
    /// and the background's games finished since the previous self-play phase. With
    /// background self-play that keeps up, the loop plays nothing and goes on to train.
    fn selfplay(&mut self) -> Result<()> {
        let g = self.state.generation;
        let deterministic = self.config.run.deterministic;
        let mut total = self.config.run.games_per_generation;
        if let Some(background) = &self.background {
            let now = background.games();
            let from_background = now.saturating_sub(self.background_games_mark);
            self.background_games_mark = now;
            self.record.background_games = Some(from_background);
            total = total.saturating_sub(from_background);
        }
        let mut done = loop_games_done(&self.run.shards(), g)?;
        if done >= total {
            self.record.selfplay_games = Some(0);
            self.record.selfplay_positions = Some(0);
            return Ok(());
        }
        if deterministic && done > 0 {
            // The games already written depend on those still to play (they shared the
            // network's batches): replay the generation from its first game.
            let removed = remove_loop_games(&self.run.shards(), &self.run.games(), g)?;
            self.display.line(&format!(
                "generation {g}: replaying self-play from the first game ({removed} games \
                 removed; run.deterministic)"
            ));
            done = 0;
        }
        let model = self.run.model(self.state.best);
        let evaluator = NetEvaluator::load(&model, &self.inference_config())
            .map_err(|e| anyhow!("cannot load the best model {}: {e:#}", model.display()))?;
        let mut sp = self.config.selfplay.clone();
        let base = sp.seed.unwrap_or(self.config.run.seed);
        sp.seed = Some(derive_seed(base, SeedUse::Selfplay, g, done));
        let mut writer = selfplay::GameWriter::with_names(
            &self.run.shards(),
            sp.write_game_records.then(|| self.run.games()).as_deref(),
            &loop_prefix(g),
            sp.shard_samples,
            // A deterministic run's shards hold the same games whenever they are written.
            (!deterministic).then_some(SHARD_FLUSH),
        )
        .with_sgf(sp.write_sgf)
        .deterministic_names(deterministic);
        let label = format!("generation {g}, {}", model_name(self.state.best));
        self.display.start(Bar::Selfplay, total, &label);
        self.display.update(Bar::Selfplay, done, &label);
        let display = &self.display;
        let net = evaluator.info().net.clone();
        let sink = |game| writer.add(game).map_err(|e: selfplay::Error| e.to_string());
        let show = |p: &selfplay::Progress| {
            display.update(
                Bar::Selfplay,
                done + p.games,
                &format!(
                    "{:.0} positions/s  {:.0} evals/s",
                    p.positions_per_second(),
                    p.evaluations_per_second()
                ),
            )
        };
        let evaluator = Arc::new(evaluator);
        let service = evaluator.clone();
        let result = algorithm::play(
            self.config.run.algorithm,
            &sp,
            evaluator,
            total - done,
            deterministic,
            self.config
                .run
                .continuous_selfplay
                .then_some(&mut self.parked),
            &self.cancel,
            sink,
            show,
        );
        let flushed = writer.flush();
        if result.as_ref().is_err_and(|e| selfplay::is_cancelled(e)) {
            // The finished games are in the shards; the rest is played on resume.
            flushed.map_err(|e| anyhow!("cannot write self-play games: {e}"))?;
            return Err(self.stop_error());
        }
        let progress = result.map_err(|e| anyhow!("self-play of generation {g}: {e}"))?;
        flushed.map_err(|e| anyhow!("cannot write self-play games: {e}"))?;
        self.record.selfplay_games = Some(progress.games);
        self.record.selfplay_positions = Some(progress.positions);
        self.record.selfplay_seconds = Some(progress.seconds);
        self.record.positions_per_sec = Some(progress.positions_per_second());
        self.record.evals_per_sec = Some(progress.evaluations_per_second());
        self.record.selfplay_in_flight = Some(self.parked.in_flight());
        self.record.eval_cache_hit_rate = service.stats().cache_hit_rate();
        if progress.batches > 0 {
            let mean_batch = progress.mean_batch();
            let batch = raw_forward_batch(mean_batch);
            let raw = match self.raw_forward.get(&batch) {
                Some(&raw) => raw,
                None => {
                    let inference = self.inference_config();
                    let device = train::device::resolve_device(inference.device)?;
                    let raw = train::bench::forward(
                        &net,
                        self.config.variant(),
                        device,
                        service.precision().kind_on(device),
                        batch,
                        0.5,
                        inference.fold_batch_norm,
                        inference.threads,
                    )
                    .per_sec;
                    self.raw_forward.insert(batch, raw);
                    raw
                }
            };
            self.record.mean_batch = Some(mean_batch);
            self.record.raw_forward_per_sec = Some(raw);
            self.record.forward_efficiency =
                Some(progress.evaluations_per_second() / raw.max(1e-9));
        }
        Ok(())
    }

    fn train(&mut self) -> Result<()> {
        let g = self.state.generation;
        let target = self.state.train_target;
        let report = self
            .window
            .refresh(&self.run.shards())
            .map_err(|e| anyhow!("cannot read the shards: {e}"))?;
        for bad in &report.skipped {
            self.display
                .line(&format!("warning: skipping unreadable shard: {bad}"));
        }
        if self.window.is_empty() {
            bail!(
                "no training positions in {} (every shard unreadable?)",
                self.run.shards().display()
            );
        }
        self.grow_if_due()?;
        let every = self.config.run.checkpoint_every;
        let log_every = self.config.train.log_every;
        let checkpoint = self.run.checkpoint();
        let window_len = self.window.len();
        let steps_per_gen = self.config.run.train_steps_per_generation;
        let progress = self.run_progress();
        self.trainer()?.set_run_progress(progress);
        let begin = target.saturating_sub(steps_per_gen);
        self.display.start(
            Bar::Train,
            steps_per_gen,
            &format!("generation {g}, window {window_len}"),
        );
        let started = Instant::now();
        let (mut loss, mut policy, mut value, mut samples) = (0.0, 0.0, 0.0, 0u64);
        // NaN throughout for a network without an occupancy head.
        let mut occupancy = 0.0;
        let mut kl = 0.0;
        let mut steps = 0u64;
        loop {
            let trainer = self.trainer.as_mut().expect("loaded above");
            let step = trainer.step();
            if step >= target {
                break;
            }
            let to_checkpoint = every - step % every;
            let chunk = log_every.min(target - step).min(to_checkpoint);
            let summary = trainer.train(&self.window, chunk, Some(&mut self.metrics))?;
            let s = &summary.stats;
            let n = summary.steps as f64;
            loss += s.loss * n;
            policy += s.policy_loss * n;
            kl += s.policy_kl * n;
            value += s.value_loss * n;
            occupancy += s.occupancy_loss * n;
            samples += s.samples as u64;
            steps += summary.steps;
            let step = trainer.step();
            let stopping = self.cancel.requested();
            if step.is_multiple_of(every) || step >= target || stopping {
                trainer.save_checkpoint(&checkpoint)?;
            }
            if stopping {
                return Err(self.stop_error());
            }
            self.display.update(
                Bar::Train,
                step.saturating_sub(begin),
                &format!(
                    "loss {:.3} (policy {:.3}, value {:.3})",
                    s.loss, s.policy_loss, s.value_loss
                ),
            );
        }
        // The checkpoint is at `target` here: written above, or the one the trainer was
        // restored from.
        let trainer = self.trainer.as_mut().expect("loaded above");
        trainer.save_model(&self.run.candidate(g))?;
        let secs = started.elapsed().as_secs_f64();
        if let Some(set) = &self.heldout {
            self.record.heldout = Some(set.score(trainer.output_model())?);
        }
        if steps > 0 {
            let n = steps as f64;
            self.record.train_steps = Some(steps);
            self.record.train_seconds = Some(secs);
            self.record.train_samples_per_sec = Some(samples as f64 / secs.max(1e-9));
            self.record.loss = Some(loss / n);
            self.record.policy_loss = Some(policy / n);
            self.record.policy_kl = Some(kl / n);
            self.record.value_loss = Some(value / n);
            self.record.occupancy_loss = Some(occupancy / n).filter(|o| o.is_finite());
        }
        self.record.window = Some(window_len);
        self.record.net = Some(self.trainer()?.model().info.net.shape());
        Ok(())
    }

    /// Grows the trainer's network into the next stage of `run.net_schedule` once the run
    /// has produced that stage's positions (one stage a generation). The grown checkpoint
    /// replaces the old one before it trains a step, so a restart goes on with one or the
    /// other, and the stage is always the checkpoint's shape.
    fn grow_if_due(&mut self) -> Result<()> {
        let produced = self.window.produced();
        let net = self.trainer()?.model().info.net.clone();
        let (first, schedule) = (&self.config.train.net, &self.config.run.net_schedule);
        let Some(next) = net_schedule::due(first, schedule, &net, produced) else {
            return Ok(());
        };
        let config = TrainConfig {
            net: next.clone(),
            ..self.config.train.clone()
        };
        let grown = self
            .trainer()?
            .grown(config)
            .with_context(|| format!("cannot grow the {} network", net.shape()))?;
        grown.save_checkpoint(&self.run.checkpoint())?;
        self.display.line(&format!(
            "generation {}: the network grows from {} to {} after {produced} positions \
             (run.net_schedule; at first it computes what the {} did)",
            self.state.generation,
            net.shape(),
            next.shape(),
            net.shape()
        ));
        self.trainer = Some(grown);
        // Forward speeds measured for the old network.
        self.raw_forward.clear();
        Ok(())
    }

    fn gate(&mut self) -> Result<()> {
        let g = self.state.generation;
        let candidate = self.run.candidate(g);
        let report = if self.config.run.gate {
            Some(self.gate_match(g).map_err(|e| self.stopped(e))?)
        } else {
            None
        };
        let promote = report
            .as_ref()
            .is_none_or(|r| r.decision == Decision::Promote);
        if promote {
            copy_atomically(&candidate, &self.run.model(g))?;
            self.state.best = g;
            self.state.promoted += 1;
        } else {
            self.state.rejected += 1;
        }
        let elapsed = self.elapsed();
        let store_seconds = self.store.as_mut().map(StoreTrainer::take_seconds);
        let rec = &mut self.record;
        if let Some(s) = store_seconds {
            rec.store_pull_seconds = Some(s.pull);
            rec.store_mirror_seconds = Some(s.mirror);
            rec.store_publish_seconds = Some(s.publish);
        }
        rec.time = unix_time();
        rec.elapsed_s = Some(elapsed);
        rec.generation = g;
        rec.promoted = promote;
        rec.best = model_name(self.state.best);
        if let Some(background) = &self.background {
            let now = background.positions();
            rec.background_positions = Some(now.saturating_sub(self.background_mark));
            self.background_mark = now;
        }
        crate::memory::release_free_heap();
        rec.rss_mib = train::metrics::resident_mib();
        rec.open_files = train::metrics::open_files();
        if let Some(r) = &report {
            rec.gate_games = Some(r.tally.games());
            rec.gate_score = Some(r.score);
            rec.gate_elo = Some(r.elo.elo).filter(|e| e.is_finite());
        }
        self.metrics
            .write(&Record::Generation(Box::new(self.record.clone())))?;
        let line = self.summary_line(report.as_ref());
        self.display.line(&line);
        Ok(())
    }

    fn gate_match(&mut self, g: u32) -> Result<GateReport> {
        let dir = self.run.gate_match(g);
        play_once(&dir, "decision.json", || {
            let device = self.config.train.inference.device;
            let sims = self.config.run.gate_simulations;
            let candidate = model_spec(&self.run.candidate(g), sims, device)?;
            let best = model_spec(&self.run.model(self.state.best), sims, device)?;
            let arena = MatchConfig {
                games: self.config.gate.max_games,
                variant: self.config.variant(),
                rules: self.config.rules(),
                openings: Openings::Random {
                    plies: self.config.run.gate_opening_plies,
                    max_eval: 150,
                },
                threads: rating::match_threads(&self.config),
                max_plies: self.config.selfplay.max_game_plies,
                seed: derive_seed(self.config.run.seed, SeedUse::GateMatch, g, 0),
                out_dir: Some(dir.clone()),
                sgf: false,
                resume: false,
                cancel: self.cancel.clone(),
            };
            let label = format!("gate {} vs {}", model_name(g), model_name(self.state.best));
            self.display
                .start(Bar::Match, self.config.gate.max_games as u64, &label);
            let display = &self.display;
            eval::gate(
                &self.factory(),
                &candidate,
                &best,
                &self.config.gate,
                &arena,
                &|_, t: &Tally| {
                    display.update(
                        Bar::Match,
                        t.games() as u64,
                        &format!("{label}: {}-{}-{}", t.wins, t.draws, t.losses),
                    )
                },
            )
        })
    }

    fn rate(&mut self, generation: u32) -> Result<()> {
        let started = self.elapsed();
        let current = Mutex::new(String::new());
        let display = &self.display;
        let factory = self.factory();
        let table = rating::rate(
            &self.run,
            &self.config,
            &factory,
            generation,
            &self.cancel,
            &match_progress(display, &current),
        )
        .map_err(|e| self.stopped(e))?;
        drop(factory);
        self.state.rated.push(generation);
        self.state.last_rating_s = self.elapsed() - started;
        self.metrics.write(&Record::Rating(RatingRecord {
            time: unix_time(),
            elapsed_s: self.elapsed(),
            generation,
            ratings: rating_rows(&table),
        }))?;
        let name = model_name(generation);
        let anchors: Vec<String> = table
            .ratings
            .iter()
            .filter(|r| {
                self.config
                    .rating
                    .anchors
                    .iter()
                    .any(|a| a.name() == r.name)
            })
            .map(|r| format!("{} {:+.0}", r.name, r.elo))
            .collect();
        if let Some(r) = table.ratings.iter().find(|r| r.name == name) {
            self.display.line(&format!(
                "rated {name}: Elo {:+.0} ± {:.0} (anchors: {}); ratings.csv updated",
                r.elo,
                1.96 * r.stderr,
                anchors.join(", ")
            ));
        }
        Ok(())
    }

    fn summary_line(&self, gate: Option<&GateReport>) -> String {
        let r = &self.record;
        let mut parts = vec![format!("gen {}", r.generation)];
        match (r.selfplay_games, r.positions_per_sec, r.evals_per_sec) {
            (Some(g), Some(p), Some(e)) => parts.push(format!(
                "self-play {g} games {:.0} pos/s {:.0} evals/s",
                p, e
            )),
            (Some(0), _, _) => parts.push("self-play 0 games".into()),
            _ => parts.push("self-play (resumed)".into()),
        }
        match (r.background_games, r.background_positions) {
            (Some(g), Some(n)) => parts.push(format!("background {g} games, {n} positions")),
            (None, Some(n)) => parts.push(format!("background {n} positions")),
            _ => {}
        }
        match (r.loss, r.policy_loss, r.value_loss, r.train_samples_per_sec) {
            (Some(l), Some(p), Some(v), Some(s)) => parts.push(format!(
                "train loss {l:.3} (p {p:.3} v {v:.3}) {s:.0} samples/s"
            )),
            _ => parts.push("train (resumed)".into()),
        }
        match gate {
            Some(g) => parts.push(format!(
                "gate {}-{}-{} {:.0}% Elo {:+.0} -> {}",
                g.tally.wins,
                g.tally.draws,
                g.tally.losses,
                100.0 * g.score,
                g.elo.elo.clamp(-999.0, 999.0),
                if r.promoted { "promoted" } else { "rejected" }
            )),
            None => parts.push("promoted (no gate)".into()),
        }
        parts.push(format!("best {}", r.best));
        if let Ok(table) = rating::fit_run(&self.run) {
            if let Some(b) = table.ratings.iter().find(|x| x.name == r.best) {
                parts.push(format!("Elo {:+.0}±{:.0}", b.elo, 1.96 * b.stderr));
            }
        }
        if let (Some(pull), Some(mirror), Some(publish)) = (
            r.store_pull_seconds,
            r.store_mirror_seconds,
            r.store_publish_seconds,
        ) {
            parts.push(format!(
                "store {:.1} s (pull {pull:.1} mirror {mirror:.1} publish {publish:.1})",
                pull + mirror + publish
            ));
        }
        parts.push(clock(r.elapsed_s.unwrap_or(0.0)));
        parts.join(" | ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_forward_batches_round_to_eights_from_sixteen() {
        let batches: Vec<usize> = [0.2, 3.4, 15.4, 15.6, 19.4, 20.0, 236.4, 239.9, 244.0]
            .iter()
            .map(|&m| raw_forward_batch(m))
            .collect();
        assert_eq!(batches, [1, 3, 15, 16, 16, 24, 240, 240, 248]);
    }

    #[test]
    fn generations_start_only_within_the_limits() {
        let mut run = RunConfig::default().run;
        run.minutes = 10.0;
        run.generations = 0;
        let mut state = LoopState::new();
        state.generation = 3;
        state.last_generation_s = 100.0;
        state.last_rating_s = 50.0;
        assert_eq!(stop_reason(&run, &state, 449.0, 600.0), None);
        assert_eq!(stop_reason(&run, &state, 450.0, 600.0), None);
        assert_eq!(
            stop_reason(&run, &state, 451.0, 600.0),
            Some(StopReason::TimeBudget)
        );
        // A budget kept back for the learned stage ends the generations sooner.
        assert_eq!(
            stop_reason(&run, &state, 331.0, 480.0),
            Some(StopReason::TimeBudget)
        );
        run.minutes = 0.0;
        assert_eq!(stop_reason(&run, &state, 1e9, 0.0), None);
        run.generations = 3;
        assert_eq!(stop_reason(&run, &state, 0.0, 0.0), None);
        state.generation = 4;
        assert_eq!(
            stop_reason(&run, &state, 0.0, 0.0),
            Some(StopReason::Generations)
        );
    }

    /// The learned stage's share comes off the generations' budget only where the stage
    /// runs (a covered variant, a share above 0).
    #[test]
    fn the_learned_share_comes_off_the_generations_budget() {
        let mut config = RunConfig::default();
        config.run.minutes = 30.0;
        assert_eq!(config.learned_eval.share, 0.2);
        assert!((generations_budget_s(&config) - 1440.0).abs() < 1e-9);
        config.selfplay.variant = loa::Variant::Six;
        assert_eq!(generations_budget_s(&config), 1800.0);
        config.selfplay.variant = loa::Variant::ScrambledEggs;
        config.learned_eval.share = 0.0;
        assert_eq!(generations_budget_s(&config), 1800.0);
    }
}
