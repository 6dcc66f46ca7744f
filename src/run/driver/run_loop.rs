//! The loop over the phases: [`Driver::run`] plays generations until a limit says stop,
//! rates the final best model, runs the learned evaluation's stage and prints the end of
//! the run.

use super::budget::{is_out_of_time, learned_stage_on, OutOfTime};
use super::Driver;
use crate::run::display::clock;
use crate::run::joined_selfplay::Background;
use crate::run::rating;
use anyhow::Result;
use rundir::layout::model_name;
use rundir::state::Phase;
use train::metrics::{GenerationRecord, StopReason};

impl Driver {
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
            "newest promoted model (the one self-play plays; the strongest by the ratings \
             is named below): {} ({} promoted, {} rejected); ratings: {}",
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
}
