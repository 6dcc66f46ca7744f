//! The rating phase: the best model plays the anchors when a rating is due
//! ([`crate::run::rating`]); the line naming the run's strongest player.

use super::Driver;
use crate::run::display::{Bar, LoopDisplay};
use crate::run::rating::{self, rating_rows};
use anyhow::Result;
use eval::arena::GameResult;
use eval::elo::Tally;
use eval::player::spec_builders::model_spec;
use rundir::layout::{learned_name, model_name};
use std::sync::Mutex;
use train::metrics::{unix_time, RatingRecord, Record};

/// The progress of rating matches on the match bar (a new bar whenever the match, named
/// by its label, changes); `current` holds the label of the match shown.
pub(super) fn match_progress<'a>(
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

impl Driver {
    pub(super) fn rating_due(&self, generation: u32) -> bool {
        let every = self.config.rating.every;
        generation == 0 || (every > 0 && generation.is_multiple_of(every))
    }

    pub(super) fn rate(&mut self, generation: u32) -> Result<()> {
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

    /// The line naming the run's strongest player by the ratings: its best MCTS model at
    /// `rating.simulations`, or the learned alpha-beta at `learned_eval.rating_depth`.
    pub(super) fn strongest_player(
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
}
