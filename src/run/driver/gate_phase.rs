//! The gate phase: the candidate plays the best model, is promoted or rejected, and the
//! generation's record and summary line are written.

use super::Driver;
use crate::run::config::{derive_seed, SeedUse};
use crate::run::display::{clock, Bar};
use crate::run::rating;
use crate::run::store_trainer::StoreTrainer;
use anyhow::Result;
use eval::arena::{play_once, MatchConfig, Openings};
use eval::elo::Tally;
use eval::player::spec_builders::model_spec;
use eval::{Decision, GateReport};
use rundir::layout::{copy_atomically, model_name};
use train::metrics::{unix_time, Record};

impl Driver {
    pub(super) fn gate(&mut self) -> Result<()> {
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

    pub(super) fn gate_match(&mut self, g: u32) -> Result<GateReport> {
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

    pub(super) fn summary_line(&self, gate: Option<&GateReport>) -> String {
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
        // What the network learned, where games between two weak models cannot tell: its
        // top-1 move matching on the held-out positions against a random legal move's.
        if let Some(h) = &r.heldout {
            parts.push(format!(
                "held-out top-1 {:.1}% (chance {:.1}%)",
                100.0 * h.top1,
                100.0 * h.chance_top1
            ));
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
