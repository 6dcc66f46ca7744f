//! Gating: does a candidate replace the current best? A match of up to `max_games`, stopped
//! as soon as the answer is known, decided by a win-rate threshold or an SPRT.

use crate::arena::{play_match, Control, MatchConfig};
use crate::elo::{expected_score, EloEstimate, Tally};
use crate::player::{PlayerFactory, PlayerSpec};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// How the gate decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateMethod {
    /// Promote iff the candidate's score reaches `threshold` over `max_games`; stops early
    /// once the remaining games cannot change the answer.
    Threshold,
    /// Sequential probability ratio test of `elo0` against `elo1` with error rates `alpha`,
    /// `beta` (normal approximation of the trinomial score, as in fishtest); if `max_games`
    /// pass without a decision, the threshold rule decides.
    Sprt,
}

/// Gate settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateConfig {
    /// `threshold` (default) or `sprt`.
    pub method: GateMethod,
    /// Most games played. Default 30.
    pub max_games: usize,
    /// Score the candidate needs (threshold rule). Default 0.55.
    pub threshold: f64,
    /// SPRT null hypothesis (Elo of candidate over best). Default 0.
    pub elo0: f64,
    /// SPRT alternative. Default 35 (≈ a 55% score).
    pub elo1: f64,
    /// SPRT false-promotion rate. Default 0.05.
    pub alpha: f64,
    /// SPRT false-rejection rate. Default 0.05.
    pub beta: f64,
    /// No SPRT decision before this many games. Default 20.
    pub min_games: usize,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            method: GateMethod::Threshold,
            max_games: 30,
            threshold: 0.55,
            elo0: 0.0,
            elo1: 35.0,
            alpha: 0.05,
            beta: 0.05,
            min_games: 20,
        }
    }
}

/// The verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The candidate becomes the best model.
    Promote,
    /// The best model stays.
    Reject,
}

/// The verdict with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    /// Promote or reject.
    pub decision: Decision,
    /// The candidate's wins, draws, losses.
    pub tally: Tally,
    /// The candidate's score fraction.
    pub score: f64,
    /// The candidate's Elo over the best model, with its interval.
    pub elo: EloEstimate,
    /// The SPRT log-likelihood ratio (SPRT only) and its bounds.
    pub llr: Option<f64>,
    /// The SPRT's lower and upper log-likelihood-ratio bounds.
    pub llr_bounds: Option<(f64, f64)>,
    /// Whether it stopped before `max_games`.
    pub early: bool,
}

impl GateConfig {
    /// SPRT log-likelihood ratio of a tally (normal approximation).
    pub fn llr(&self, t: &Tally) -> f64 {
        let n = t.games() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let (s0, s1) = (expected_score(self.elo0), expected_score(self.elo1));
        let var = t.variance().max(1e-3);
        n * (s1 - s0) * (2.0 * t.score() - s0 - s1) / (2.0 * var)
    }

    /// Lower and upper LLR bounds.
    pub fn llr_bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The decision for a tally, or `None` while undecided. At `max_games` it always decides.
    pub fn decide(&self, t: &Tally) -> Option<Decision> {
        let n = t.games() as usize;
        let by_threshold = |t: &Tally| {
            if t.score() >= self.threshold {
                Decision::Promote
            } else {
                Decision::Reject
            }
        };
        if n >= self.max_games {
            if self.method == GateMethod::Sprt {
                let (lo, hi) = self.llr_bounds();
                let llr = self.llr(t);
                if llr >= hi {
                    return Some(Decision::Promote);
                }
                if llr <= lo {
                    return Some(Decision::Reject);
                }
            }
            return Some(by_threshold(t));
        }
        match self.method {
            GateMethod::Threshold => {
                let points = t.wins as f64 + 0.5 * t.draws as f64;
                let remaining = (self.max_games - n) as f64;
                let need = self.threshold * self.max_games as f64;
                if points >= need {
                    Some(Decision::Promote)
                } else if points + remaining < need {
                    Some(Decision::Reject)
                } else {
                    None
                }
            }
            GateMethod::Sprt => {
                if n < self.min_games {
                    return None;
                }
                let (lo, hi) = self.llr_bounds();
                let llr = self.llr(t);
                if llr >= hi {
                    Some(Decision::Promote)
                } else if llr <= lo {
                    Some(Decision::Reject)
                } else {
                    None
                }
            }
        }
    }

    /// The report for a finished tally.
    pub fn report(&self, t: &Tally, decision: Decision) -> GateReport {
        GateReport {
            decision,
            tally: *t,
            score: t.score(),
            elo: t.elo(),
            llr: (self.method == GateMethod::Sprt).then(|| self.llr(t)),
            llr_bounds: (self.method == GateMethod::Sprt).then(|| self.llr_bounds()),
            early: (t.games() as usize) < self.max_games,
        }
    }
}

/// Plays `candidate` against `best` under `gate` (the match settings come from `arena`,
/// whose `games` is replaced by `gate.max_games`) and returns the verdict. `on_game` sees
/// every finished game with the candidate's running tally. A match stopped by the arena's
/// cancel decides nothing: it fails with [`selfplay::Error::Cancelled`].
pub fn gate(
    factory: &PlayerFactory,
    candidate: &PlayerSpec,
    best: &PlayerSpec,
    gate: &GateConfig,
    arena: &MatchConfig,
    on_game: &(dyn Fn(&crate::arena::GameResult, &Tally) + Sync),
) -> Result<GateReport> {
    let config = MatchConfig {
        games: gate.max_games,
        ..arena.clone()
    };
    let report = play_match(factory, candidate, best, &config, &|g, t| {
        on_game(g, t);
        if gate.decide(t).is_some() {
            Control::Stop
        } else {
            Control::Continue
        }
    })?;
    if report.cancelled {
        return Err(selfplay::Error::Cancelled.into());
    }
    let t = report.tally;
    let decision = gate.decide(&t).unwrap_or_else(|| {
        if t.score() >= gate.threshold {
            Decision::Promote
        } else {
            Decision::Reject
        }
    });
    Ok(gate.report(&t, decision))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_stops_when_decided() {
        let g = GateConfig {
            max_games: 20,
            ..Default::default()
        };
        // 11 points needed of 20.
        assert_eq!(
            g.decide(&Tally {
                wins: 11,
                draws: 0,
                losses: 0
            }),
            Some(Decision::Promote)
        );
        assert_eq!(
            g.decide(&Tally {
                wins: 10,
                draws: 0,
                losses: 0
            }),
            None
        );
        assert_eq!(
            g.decide(&Tally {
                wins: 0,
                draws: 0,
                losses: 10
            }),
            Some(Decision::Reject)
        );
        assert_eq!(
            g.decide(&Tally {
                wins: 10,
                draws: 1,
                losses: 9
            }),
            Some(Decision::Reject)
        );
    }

    #[test]
    fn sprt_accepts_strong_and_rejects_weak_candidates() {
        let g = GateConfig {
            method: GateMethod::Sprt,
            ..Default::default()
        };
        assert_eq!(
            g.decide(&Tally {
                wins: 60,
                draws: 10,
                losses: 20
            }),
            Some(Decision::Promote)
        );
        assert_eq!(
            g.decide(&Tally {
                wins: 20,
                draws: 10,
                losses: 60
            }),
            Some(Decision::Reject)
        );
        assert_eq!(
            g.decide(&Tally {
                wins: 11,
                draws: 0,
                losses: 9
            }),
            None
        );
        assert_eq!(
            g.decide(&Tally {
                wins: 10,
                draws: 0,
                losses: 0
            }),
            None,
            "min_games"
        );
    }

    #[test]
    fn gate_plays_until_decided() {
        let factory = PlayerFactory::new();
        let cand = PlayerSpec::parse("alphabeta:depth=1").unwrap();
        let best = PlayerSpec::parse("random").unwrap();
        let cfg = GateConfig {
            max_games: 40,
            threshold: 0.55,
            ..Default::default()
        };
        let arena = MatchConfig {
            variant: loa::Variant::Six,
            threads: 2,
            ..Default::default()
        };
        let r = gate(&factory, &cand, &best, &cfg, &arena, &|_, _| {}).unwrap();
        assert_eq!(r.decision, Decision::Promote, "{r:?}");
        assert!(r.early && r.tally.games() < 40, "{r:?}");
    }
}
