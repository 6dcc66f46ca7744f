//! The self-play phase: the best model plays what the generation still lacks, and the
//! phase's speed is measured against the network's raw forward speed.

use super::Driver;
use crate::run::algorithm;
use crate::run::config::{derive_seed, SeedUse};
use crate::run::display::Bar;
use anyhow::{anyhow, Result};
use rundir::layout::model_name;
use rundir::shards::{loop_games_done, loop_prefix, remove_loop_games};
use std::sync::Arc;
use std::time::Duration;
use train::device::PrecisionOn;
use train::NetEvaluator;

/// A shard is written at least this often during self-play, so that a crash loses
/// little finished work.
const SHARD_FLUSH: Duration = Duration::from_secs(30);

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
    /// The self-play phase: the loop plays what generation `g`'s
    /// `run.games_per_generation` still lacks after its own committed games (a restart)
    /// and the background's games finished since the previous self-play phase. With
    /// background self-play that keeps up, the loop plays nothing and goes on to train.
    pub(super) fn selfplay(&mut self) -> Result<()> {
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
}
