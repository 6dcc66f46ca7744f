//! The run's time budget and its stops: when a generation may start ([`stop_reason`]), the
//! share of the budget the generations may use, and the errors of a phase cut short.

use super::Driver;
use crate::run::config::{LoopConfig, RunConfig};
use anyhow::Result;
use rundir::state::{LoopState, Phase};
use train::metrics::{unix_time, Record, StopReason, StopRecord};

/// The error of a phase that the time budget (`run.minutes`) cut short; the loop ends
/// as at a planned stop, with [`StopReason::TimeBudget`].
#[derive(Debug)]
pub(super) struct OutOfTime;

impl std::fmt::Display for OutOfTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the run's time budget is used up")
    }
}

impl std::error::Error for OutOfTime {}

pub(super) fn is_out_of_time(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<OutOfTime>())
}

/// Why generation `state.generation` may not start at `elapsed` seconds (`None`: it may):
/// it is beyond `run.generations`, or, with a time budget, the last generation and the
/// last rating round (the final one is still to come) would not fit into what is left of
/// the `budget_s` seconds the generations may use ([`generations_budget_s`]).
pub(super) fn stop_reason(
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
pub(super) fn learned_stage_on(config: &RunConfig) -> bool {
    config.learned_eval.share > 0.0 && eval::learned::supports(config.variant())
}

/// Seconds of the run's budget its generations and the final rating of its best model
/// may use: all of it, less the learned evaluation's share when its stage runs.
pub(super) fn generations_budget_s(config: &RunConfig) -> f64 {
    let share = if learned_stage_on(config) {
        config.learned_eval.share
    } else {
        0.0
    };
    config.run.minutes * 60.0 * (1.0 - share)
}

impl Driver {
    /// The fraction of the run's budget used so far (time if it has one, else
    /// generations; generations first in a deterministic run), for the `cosine-run`
    /// learning-rate schedule; None without a budget.
    pub(super) fn run_progress(&self) -> Option<f64> {
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

    pub(super) fn budget_s(&self) -> f64 {
        self.config.run.minutes * 60.0
    }

    /// Why no further generation may start (generation and time limits); `None`: one may.
    pub(super) fn stop_reason(&self) -> Option<StopReason> {
        stop_reason(
            &self.config.run,
            &self.state,
            self.elapsed(),
            generations_budget_s(&self.config),
        )
    }

    /// Whether the generations' part of the time budget is used up.
    pub(super) fn out_of_time(&self) -> bool {
        self.config.run.minutes > 0.0 && self.elapsed() >= generations_budget_s(&self.config)
    }

    /// The error of a phase that [`Driver::cancel`] stopped: [`loazero::interrupt::Interrupted`]
    /// after a signal, else [`OutOfTime`].
    pub(super) fn stop_error(&self) -> anyhow::Error {
        if loazero::interrupt::requested() {
            loazero::interrupt::Interrupted.into()
        } else {
            OutOfTime.into()
        }
    }

    /// `err`, or the [`Driver::stop_error`] when it is a cancellation
    /// ([`selfplay::is_cancelled`]).
    pub(super) fn stopped(&self, err: anyhow::Error) -> anyhow::Error {
        if err.chain().any(selfplay::is_cancelled) {
            self.stop_error()
        } else {
            err
        }
    }

    /// Records in `metrics.jsonl` that the loop stopped, and why.
    pub(super) fn record_stop(&mut self, reason: StopReason) -> Result<()> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
