//! Elo difference from a match score, with a 95% interval.

use serde::{Deserialize, Serialize};

/// Expected score of a player `elo` points stronger (logistic Elo curve).
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The Elo difference that gives expected score `score` (±∞ at 1 and 0).
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / score - 1.0).log10()
    }
}

/// Wins, draws and losses of one side of a match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

impl Tally {
    /// Games counted.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }
    /// Score fraction (win 1, draw ½); 0.5 with no games.
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.5
        } else {
            (self.wins as f64 + 0.5 * self.draws as f64) / n as f64
        }
    }
    /// Adds one game scored 1, ½ or 0.
    pub fn add(&mut self, score: f64) {
        if score > 0.75 {
            self.wins += 1;
        } else if score < 0.25 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }
    /// Per-game variance of the score.
    pub fn variance(&self) -> f64 {
        let n = self.games() as f64;
        if n == 0.0 {
            return 0.25;
        }
        let s = self.score();
        (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n
    }
    /// Elo difference with its 95% interval.
    pub fn elo(&self) -> EloEstimate {
        EloEstimate::from_tally(self)
    }
}

/// An Elo difference with a 95% confidence interval.
///
/// In JSON a non-finite end is written as the text `"inf"`, `"-inf"` or `"NaN"` (JSON has
/// no such numbers, and serde_json would write `null`, which could not be read back: a gate
/// decided by a clean sweep and saved in `decision.json` stopped its resumed run).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// Point estimate (±∞ for a clean sweep).
    #[serde(with = "any_float")]
    pub elo: f64,
    /// Lower end of the 95% interval.
    #[serde(with = "any_float")]
    pub lower: f64,
    /// Upper end of the 95% interval.
    #[serde(with = "any_float")]
    pub upper: f64,
}

/// An `f64` in JSON, infinities and NaN included: finite values as numbers, the others as
/// the texts `"inf"`, `"-inf"` and `"NaN"`; `null` (what files written before this read
/// as) is NaN. The one home of this encoding: every Elo written to JSON uses it
/// (`#[serde(with = "crate::elo::any_float")]`).
pub(crate) mod any_float {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if value.is_finite() {
            serializer.serialize_f64(*value)
        } else if value.is_nan() {
            serializer.serialize_str("NaN")
        } else if *value > 0.0 {
            serializer.serialize_str("inf")
        } else {
            serializer.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Number(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        match Option::<Written>::deserialize(deserializer)? {
            Some(Written::Number(x)) => Ok(x),
            Some(Written::Text(t)) => match t.as_str() {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                "NaN" => Ok(f64::NAN),
                other => Err(serde::de::Error::custom(format!(
                    "{other:?} is not a number (expected a number, \"inf\", \"-inf\" or \"NaN\")"
                ))),
            },
            None => Ok(f64::NAN),
        }
    }
}

impl EloEstimate {
    /// The estimate from a tally: the interval maps `score ± 1.96·σ/√n` through the Elo
    /// curve (trinomial variance); for a clean sweep (or none) of `n` games the open end
    /// uses the "rule of three" bound `3/n`.
    pub fn from_tally(t: &Tally) -> EloEstimate {
        let n = t.games() as f64;
        if n == 0.0 {
            return EloEstimate {
                elo: 0.0,
                lower: f64::NEG_INFINITY,
                upper: f64::INFINITY,
            };
        }
        let s = t.score();
        let se = (t.variance() / n).sqrt();
        let mut lo = s - 1.96 * se;
        let mut hi = s + 1.96 * se;
        if s >= 1.0 {
            lo = 1.0 - 3.0 / n;
        }
        if s <= 0.0 {
            hi = 3.0 / n;
        }
        EloEstimate {
            elo: elo_from_score(s),
            lower: elo_from_score(lo.clamp(0.0, 1.0)),
            upper: elo_from_score(hi.clamp(0.0, 1.0)),
        }
    }
}

impl std::fmt::Display for EloEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = |x: f64| {
            if x.is_infinite() {
                if x > 0.0 {
                    "+inf".to_string()
                } else {
                    "-inf".to_string()
                }
            } else if x.round() == 0.0 {
                // Not "-0" for an even score (or a tiny negative one).
                "0".to_string()
            } else {
                format!("{x:+.0}")
            }
        };
        write!(f, "{} [{}, {}]", v(self.elo), v(self.lower), v(self.upper))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_with_infinite_ends_round_trips_through_json() {
        let sweep = EloEstimate {
            elo: f64::INFINITY,
            lower: 400.0,
            upper: f64::INFINITY,
        };
        let text = serde_json::to_string(&sweep).unwrap();
        assert_eq!(text, r#"{"elo":"inf","lower":400.0,"upper":"inf"}"#);
        assert_eq!(serde_json::from_str::<EloEstimate>(&text).unwrap(), sweep);
        let lost: EloEstimate =
            serde_json::from_str(r#"{"elo":"-inf","lower":null,"upper":-12.5}"#).unwrap();
        assert_eq!((lost.elo, lost.upper), (f64::NEG_INFINITY, -12.5));
        assert!(
            lost.lower.is_nan(),
            "null, as older files wrote ±∞, reads as NaN"
        );
        let bad = serde_json::from_str::<EloEstimate>(r#"{"elo":"lots","lower":0,"upper":1}"#);
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("\"lots\" is not a number"));
    }

    #[test]
    fn elo_curve() {
        assert!((elo_from_score(0.5)).abs() < 1e-9);
        assert!((elo_from_score(expected_score(200.0)) - 200.0).abs() < 1e-6);
        // The logistic Elo curve by hand: 400 · log10(0.75 / 0.25) = 400 · 0.47712 = 190.85.
        assert!((elo_from_score(0.75) - 190.85).abs() < 0.1);
    }

    #[test]
    fn interval_contains_the_estimate_and_shrinks_with_games() {
        let small = Tally {
            wins: 6,
            draws: 2,
            losses: 2,
        }
        .elo();
        let big = Tally {
            wins: 600,
            draws: 200,
            losses: 200,
        }
        .elo();
        assert!(small.lower < small.elo && small.elo < small.upper);
        assert!((small.elo - big.elo).abs() < 1e-9);
        assert!(big.upper - big.lower < small.upper - small.lower);
        let sweep = Tally {
            wins: 100,
            draws: 0,
            losses: 0,
        }
        .elo();
        assert!(sweep.elo.is_infinite() && sweep.lower > 500.0 && sweep.lower.is_finite());
    }

    #[test]
    fn an_even_score_prints_as_zero() {
        let even = Tally {
            wins: 12,
            draws: 0,
            losses: 12,
        }
        .elo();
        let text = even.to_string();
        assert!(text.starts_with("0 [-"), "{text}");
        assert!(!text.contains("-0 ") && !text.contains("[-0"), "{text}");
    }
}
