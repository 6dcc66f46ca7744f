//! [`Driver`]: the self-play → train → gate → rate loop over a [`RunDir`].
//!
//! Each generation `g ≥ 1` goes through the [`Phase`](rundir::state::Phase)s in order;
//! `state.json` is saved after each phase, and every phase can be cut at any moment and
//! redone from the files:
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
//!
//! One `impl Driver` over a file per phase: [`selfplay_phase`], [`train_phase`] (and the
//! network's growth), [`gate_phase`] (and the generation's summary line),
//! [`rating_phase`] (and the run's strongest player), [`learned_phase`]; the loop over
//! them in [`run_loop`]; the time budget and stops in [`budget`]; a deterministic run's
//! `auto` precisions in [`pinned_precision`]. This file: the driver's state, opening a
//! run, the store, the trainer and the inference settings.

mod budget;
mod gate_phase;
mod learned_phase;
mod pinned_precision;
mod rating_phase;
mod run_loop;
mod selfplay_phase;
mod train_phase;

use super::config::RunConfig;
use super::display::LoopDisplay;
use super::joined_selfplay::Background;
use super::net_schedule;
use super::store_trainer::StoreTrainer;
use anyhow::{bail, Context, Result};
use budget::generations_budget_s;
use eval::PlayerFactory;
use rundir::layout::RunDir;
use rundir::state::LoopState;
use selfplay::{Cancel, ParkedGames};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use train::heldout::HeldoutSet;
use train::metrics::{GenerationRecord, MetricsLog};
use train::{InferenceConfig, ReplayWindow, Trainer};

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

impl Driver {
    /// Opens (or initialises: generation 0's model and checkpoint) the run in `run`
    /// with `config`, after the caller took the lock and cleaned up.
    pub fn open(run: RunDir, mut config: RunConfig, display: LoopDisplay) -> Result<Driver> {
        let saved = if run.state().exists() {
            Some(LoopState::load(&run.state())?)
        } else {
            None
        };
        let pin = if config.run.deterministic {
            let pin = match saved.as_ref().and_then(|s| s.pinned_precision) {
                Some(pin) => pin,
                None => pinned_precision::resolve(&config)?,
            };
            pinned_precision::apply(&mut config, pin);
            Some(pin)
        } else {
            None
        };
        let metrics = MetricsLog::open(&run.metrics())?;
        let window = ReplayWindow::with_size(config.train.window_size(), config.variant())
            .keep_value_only(config.train.value_only_positions)
            .order_by_name(config.run.deterministic);
        let (state, trainer) = if let Some(mut state) = saved {
            if state.pinned_precision != pin && pin.is_some() {
                state.pinned_precision = pin;
                state.save(&run.state())?;
            }
            (state, None)
        } else {
            let trainer = Trainer::new(config.train.clone(), config.variant())?;
            trainer.save_model(&run.model(0))?;
            trainer.save_checkpoint(&run.checkpoint())?;
            let mut state = LoopState::new();
            state.pinned_precision = pin;
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
}
