//! The train phase: the trainer runs to the generation's step target, checkpointing, then
//! writes the candidate; the network grows by `run.net_schedule` first when due.

use super::Driver;
use crate::run::display::Bar;
use crate::run::net_schedule;
use anyhow::{anyhow, bail, Context, Result};
use std::time::Instant;
use train::TrainConfig;

impl Driver {
    pub(super) fn train(&mut self) -> Result<()> {
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
    pub(super) fn grow_if_due(&mut self) -> Result<()> {
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
}
