//! The learned evaluation's phase at the end of a run ([`crate::run::learned_stage`]), and
//! the rating of its best evaluation.

use super::budget::is_out_of_time;
use super::rating_phase::match_progress;
use super::Driver;
use crate::run::learned_stage::{self, LearnedStage};
use crate::run::rating::{self, rating_rows};
use anyhow::Result;
use rundir::layout::learned_name;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use train::metrics::{unix_time, RatingRecord, Record};

impl Driver {
    /// The learned evaluation's stage ([`learned_stage`]) with the rest of the budget (at
    /// most `learned_eval.share` of it), then the rating of its best evaluation. Returns
    /// that best one; the budget running out ends the stage with what it finished.
    pub(super) fn learned_stage(&mut self) -> Result<Option<u32>> {
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
}
