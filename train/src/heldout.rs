//! A fixed held-out set of positions with reference moves, and how well a network's policy
//! matches them: the move-matching curve of a run, which shows whether the policy learns
//! (its training cross-entropy alone cannot: the targets change as the network does).
//!
//! The set for `standard` ships with the crate (`train/data/heldout-standard.txt`, made by
//! `loazero heldout --out`): positions from the thesis games and from games of mixed
//! random and alpha-beta moves, each labelled with the best move of `alphabeta:depth=5`.
//!
//! File format: `#` comment lines, then one position per line,
//! `POSITION TEXT ; MOVE ; SCORE` — [`Position::to_text`], the reference move, and the
//! reference search's score for the side to move (centipawn-like; ±1 000 000 and beyond
//! are wins).

use crate::input_tensor;
use crate::model::Model;
use crate::net::wdl_to_value;
use crate::policy::PolicyIndex;
use anyhow::{bail, Context, Result};
use loa::{Move, Position, Rules, Variant};
use tch::{Device, Kind};

/// The shipped set of the `standard` variant.
pub const STANDARD_SET: &str = include_str!("../data/heldout-standard.txt");

/// One labelled position.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldoutPosition {
    /// The position (not over).
    pub position: Position,
    /// The reference move (legal in `position`).
    pub best: Move,
    /// The reference search's score for the side to move.
    pub score: i32,
}

/// A held-out set of one variant under classic rules.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldoutSet {
    /// The variant.
    pub variant: Variant,
    /// The positions.
    pub positions: Vec<HeldoutPosition>,
}

/// Move matching of a network on a [`HeldoutSet`].
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeldoutScore {
    /// Positions scored.
    pub positions: usize,
    /// Fraction where the policy's most likely legal move is the reference move.
    pub top1: f64,
    /// Fraction where the reference move is among the policy's three most likely.
    pub top3: f64,
    /// Mean log-probability of the reference move (nats; higher is better).
    pub log_likelihood: f64,
    /// Fraction of positions whose reference score is decisive (|score| ≥ 100) where the
    /// network's value has the same sign.
    pub value_sign_agreement: f64,
    /// top-1 of a uniformly random legal move (mean 1 / legal moves): the chance level.
    pub chance_top1: f64,
}

impl HeldoutSet {
    /// Parses a set of `variant`; errors name the line.
    pub fn parse(text: &str, variant: Variant) -> Result<HeldoutSet> {
        let rules = Rules::classic();
        let mut positions = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = || format!("held-out set line {}", i + 1);
            let fields: Vec<&str> = line.split(';').map(str::trim).collect();
            let [pos_text, move_text, score_text] = fields[..] else {
                bail!("{}: expected `POSITION ; MOVE ; SCORE`", at());
            };
            let position = Position::from_text(pos_text, variant).with_context(at)?;
            if position.outcome(&rules).is_some() {
                bail!("{}: the position is over", at());
            }
            let best = position.parse_move(move_text, &rules).with_context(at)?;
            let score = score_text
                .parse()
                .with_context(|| format!("{}: bad score `{score_text}`", at()))?;
            positions.push(HeldoutPosition {
                position,
                best,
                score,
            });
        }
        if positions.is_empty() {
            bail!("held-out set: no positions");
        }
        Ok(HeldoutSet { variant, positions })
    }

    /// The shipped set of `variant`, if there is one.
    pub fn shipped(variant: Variant) -> Option<HeldoutSet> {
        (variant == Variant::Standard)
            .then(|| HeldoutSet::parse(STANDARD_SET, variant).expect("the shipped set parses"))
    }

    /// The file text (see the module docs), after `header` lines (each prefixed `# `).
    pub fn to_text(&self, header: &[String]) -> String {
        let mut s = String::new();
        for h in header {
            s.push_str(&format!("# {h}\n"));
        }
        for p in &self.positions {
            s.push_str(&format!(
                "{} ; {} ; {}\n",
                p.position.to_text(),
                p.best,
                p.score
            ));
        }
        s
    }

    /// Scores `model`'s policy and value on the set: one batched forward pass in inference
    /// mode on the model's device. Errors: the model is for another variant.
    pub fn score(&self, model: &Model) -> Result<HeldoutScore> {
        model.info.check_variant(self.variant)?;
        let _guard = tch::no_grad_guard();
        let rules = Rules::classic();
        let count = self.positions.len();
        let x = input_tensor::of_positions(
            self.positions.iter().map(|p| &p.position),
            self.variant,
            model.info.net.plane_set,
        )?;
        let device = model.vs.device();
        let out = model.net.forward(&x.to_device(device), false);
        let logits = Vec::<f32>::try_from(
            out.policy
                .to_kind(Kind::Float)
                .to_device(Device::Cpu)
                .contiguous()
                .flatten(0, -1),
        )?;
        let values = Vec::<f32>::try_from(
            wdl_to_value(&out.wdl.to_kind(Kind::Float)).to_device(Device::Cpu),
        )?;
        let len = logits.len() / count;
        let mut score = HeldoutScore {
            positions: count,
            ..HeldoutScore::default()
        };
        let mut decisive = 0usize;
        for (i, p) in self.positions.iter().enumerate() {
            let row = &logits[i * len..(i + 1) * len];
            let moves = p.position.legal_moves(&rules);
            let mut scored: Vec<(f32, Move)> = moves
                .iter()
                .filter_map(|&m| p.position.policy_index(m).map(|k| (row[k], m)))
                .collect();
            if scored.is_empty() {
                continue;
            }
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            let max = scored[0].0;
            let log_sum = scored
                .iter()
                .map(|(l, _)| (l - max).exp())
                .sum::<f32>()
                .ln()
                + max;
            let rank = scored.iter().position(|&(_, m)| m == p.best);
            score.top1 += (rank == Some(0)) as u8 as f64;
            score.top3 += rank.is_some_and(|r| r < 3) as u8 as f64;
            score.log_likelihood += rank.map_or(-30.0, |r| (scored[r].0 - log_sum) as f64);
            score.chance_top1 += 1.0 / scored.len() as f64;
            if p.score.abs() >= 100 {
                decisive += 1;
                score.value_sign_agreement += ((values[i] > 0.0) == (p.score > 0)) as u8 as f64;
            }
        }
        let c = count as f64;
        score.top1 /= c;
        score.top3 /= c;
        score.log_likelihood /= c;
        score.chance_top1 /= c;
        score.value_sign_agreement /= decisive.max(1) as f64;
        Ok(score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NetConfig;
    use crate::model::ModelInfo;

    #[test]
    fn the_shipped_set_parses_and_round_trips() {
        let set = HeldoutSet::shipped(Variant::Standard).unwrap();
        assert!(set.positions.len() >= 200, "{}", set.positions.len());
        let again = HeldoutSet::parse(&set.to_text(&["x".into()]), Variant::Standard).unwrap();
        assert_eq!(again, set);
        assert!(HeldoutSet::shipped(Variant::Alveole).is_none());
    }

    #[test]
    fn bad_lines_are_errors_naming_the_line() {
        let start = Position::start(Variant::Standard, &Rules::classic()).to_text();
        for (text, needle) in [
            ("# only a comment\n".to_string(), "no positions"),
            (format!("# h\n{start} ; b1-b3\n"), "line 2"),
            (format!("{start} ; b1-b4 ; 0\n"), "line 1"),
            (format!("{start} ; b1-b3 ; many\n"), "bad score"),
            ("8/8/8 b ; b1-b3 ; 0\n".to_string(), "line 1"),
        ] {
            let e = format!(
                "{:#}",
                HeldoutSet::parse(&text, Variant::Standard).unwrap_err()
            );
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn an_untrained_network_scores_near_chance() {
        crate::test_threads();
        tch::manual_seed(1);
        let set = HeldoutSet::shipped(Variant::Standard).unwrap();
        let net = NetConfig {
            blocks: 1,
            channels: 8,
            global_pool_every: 0,
            policy_channels: 4,
            value_channels: 4,
            value_hidden: 8,
            plane_set: Default::default(),
            occupancy_head: false,
        };
        let model = Model::new(ModelInfo::new(&net, Variant::Standard), Device::Cpu);
        let s = set.score(&model).unwrap();
        assert_eq!(s.positions, set.positions.len());
        assert!(s.chance_top1 > 0.01 && s.chance_top1 < 0.2, "{s:?}");
        assert!(s.top1 < 0.25 && s.top3 >= s.top1, "{s:?}");
        assert!(s.log_likelihood < 0.0, "{s:?}");
        let other = Model::new(ModelInfo::new(&net, Variant::Six), Device::Cpu);
        assert!(set.score(&other).is_err());
    }
}
