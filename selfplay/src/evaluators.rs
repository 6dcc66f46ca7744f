//! Evaluators that need no network: [`UniformEvaluator`] (engine-bound benchmarks, tests)
//! and [`HeuristicEvaluator`] (a cheap LOA evaluation, strong enough to beat random play
//! every time with a few hundred simulations).
//!
//! Both are stateless, `Send + Sync`, and give each position the same result whatever
//! else shares its batch.

use crate::evaluator::{EvalBatch, EvalError, Evaluator};
use loa::{Color, Geometry, Position};

/// Uniform priors over the legal moves and value 0 for every position.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl UniformEvaluator {
    /// The evaluator.
    pub fn new() -> UniformEvaluator {
        UniformEvaluator
    }
}

impl Evaluator for UniformEvaluator {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), EvalError> {
        batch.prepare_outputs();
        for i in 0..batch.len() {
            let range = batch.range(i);
            let p = 1.0 / range.len().max(1) as f32;
            batch.priors[range].fill(p);
        }
        Ok(())
    }

    fn name(&self) -> String {
        "uniform".into()
    }
}

/// A classical evaluation in the spirit of the early LOA programs, squashed to `[-1, 1]`:
///
/// * value: the difference in *concentration* (the mean Chebyshev distance of a side's
///   pieces to their centre of mass, above the minimum that piece count allows) and in the
///   number of groups, plus a small side-to-move bonus, through `tanh`;
/// * priors: a softmax over a move score — how much closer the moved piece gets to its
///   side's centre of mass, and a bonus for captures.
#[derive(Clone, Copy, Debug)]
pub struct HeuristicEvaluator {
    /// Weight of the concentration difference (per cell of mean distance).
    pub concentration_weight: f32,
    /// Weight of the group-count difference (per group).
    pub groups_weight: f32,
    /// Value added for the side to move.
    pub tempo: f32,
    /// Softmax inverse temperature of the priors (per cell of distance gained).
    pub prior_sharpness: f32,
    /// Move-score bonus of a capture.
    pub capture_bonus: f32,
}

impl Default for HeuristicEvaluator {
    fn default() -> Self {
        HeuristicEvaluator {
            concentration_weight: 1.0,
            groups_weight: 0.15,
            tempo: 0.05,
            prior_sharpness: 1.5,
            capture_bonus: 0.3,
        }
    }
}

impl HeuristicEvaluator {
    /// The evaluator with its default weights.
    pub fn new() -> HeuristicEvaluator {
        HeuristicEvaluator::default()
    }

    /// Value of `pos` for its side to move, in `(-1, 1)`.
    pub fn value(&self, pos: &Position) -> f32 {
        let g = pos.geometry();
        let us = pos.to_move();
        let (own, own_groups) = side_terms(g, pos.pieces(us));
        let (opp, opp_groups) = side_terms(g, pos.pieces(us.opponent()));
        let score = self.concentration_weight * (opp - own)
            + self.groups_weight * (opp_groups as f32 - own_groups as f32)
            + self.tempo;
        score.tanh()
    }
}

/// Centre of mass of a bitboard as (col, row), and the piece count.
#[inline]
fn centre_of_mass(g: &Geometry, bits: u64) -> (f32, f32, u32) {
    let mut sum_c = 0u32;
    let mut sum_r = 0u32;
    let mut n = 0u32;
    let mut b = bits;
    while b != 0 {
        let sq = b.trailing_zeros() as u8;
        b &= b - 1;
        let (c, r) = g.coords(sq);
        sum_c += c as u32;
        sum_r += r as u32;
        n += 1;
    }
    let n_f = n.max(1) as f32;
    (sum_c as f32 / n_f, sum_r as f32 / n_f, n)
}

/// Smallest possible sum of Chebyshev distances to a centre for `n` pieces (rings of
/// 1, 8, 16, 24 … cells at distances 0, 1, 2, 3 …).
fn min_distance_sum(n: u32) -> f32 {
    let mut left = n;
    let mut sum = 0;
    let mut ring = 0;
    while left > 0 {
        let cells = if ring == 0 { 1 } else { 8 * ring };
        let k = left.min(cells);
        sum += k * ring;
        left -= k;
        ring += 1;
    }
    sum as f32
}

/// (mean excess distance to the centre of mass, number of groups) of one side.
fn side_terms(g: &Geometry, bits: u64) -> (f32, u32) {
    let (cc, cr, n) = centre_of_mass(g, bits);
    if n <= 1 {
        return (0.0, n);
    }
    let mut sum = 0.0f32;
    let mut b = bits;
    while b != 0 {
        let sq = b.trailing_zeros() as u8;
        b &= b - 1;
        let (c, r) = g.coords(sq);
        sum += (c as f32 - cc).abs().max((r as f32 - cr).abs());
    }
    let excess = (sum - min_distance_sum(n)).max(0.0) / n as f32;
    (excess, g.count_groups(bits))
}

impl Evaluator for HeuristicEvaluator {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), EvalError> {
        batch.prepare_outputs();
        for i in 0..batch.len() {
            let pos = batch.positions[i];
            batch.values[i] = self.value(&pos);
            let g = pos.geometry();
            let us: Color = pos.to_move();
            let (cc, cr, _) = centre_of_mass(g, pos.pieces(us));
            let range = batch.range(i);
            let mut max_score = f32::NEG_INFINITY;
            for j in range.clone() {
                let mv = batch.moves[j];
                let score = if mv.is_pass() {
                    0.0
                } else {
                    let (fc, fr) = g.coords(mv.from());
                    let (tc, tr) = g.coords(mv.to());
                    let d_from = (fc as f32 - cc).abs().max((fr as f32 - cr).abs());
                    let d_to = (tc as f32 - cc).abs().max((tr as f32 - cr).abs());
                    let mut s = self.prior_sharpness * (d_from - d_to);
                    if mv.is_capture() {
                        s += self.capture_bonus;
                    }
                    s
                };
                batch.priors[j] = score;
                max_score = max_score.max(score);
            }
            let mut total = 0.0;
            for p in &mut batch.priors[range.clone()] {
                *p = (*p - max_score).exp();
                total += *p;
            }
            let inv = 1.0 / total;
            for p in &mut batch.priors[range] {
                *p *= inv;
            }
        }
        Ok(())
    }

    fn name(&self) -> String {
        "heuristic".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Rules, Variant};

    fn batch_of(positions: &[Position]) -> EvalBatch {
        let rules = Rules::classic();
        let mut batch = EvalBatch::new();
        for p in positions {
            batch.push(*p, &p.legal_moves(&rules));
        }
        batch
    }

    #[test]
    fn outputs_are_distributions_and_values_in_range() {
        let rules = Rules::classic();
        let mut positions = vec![];
        for v in Variant::ALL {
            let mut p = Position::start(v, &rules);
            for k in 0..12 {
                positions.push(p);
                let moves = p.legal_moves(&rules);
                p.play(moves[(k * 5 + 3) % moves.len()]);
            }
        }
        let evaluators: [&dyn Evaluator; 2] =
            [&UniformEvaluator::new(), &HeuristicEvaluator::new()];
        for e in evaluators {
            let mut batch = batch_of(&positions);
            e.evaluate(&mut batch).unwrap();
            for i in 0..batch.len() {
                let s: f32 = batch.priors[batch.range(i)].iter().sum();
                assert!((s - 1.0).abs() < 1e-4, "{} priors sum to {s}", e.name());
                assert!(batch.priors[batch.range(i)].iter().all(|&p| p >= 0.0));
                assert!((-1.0..=1.0).contains(&batch.values[i]));
            }
        }
    }

    #[test]
    fn heuristic_prefers_the_concentrated_side() {
        // Black: a tight 2x2 block plus one piece; White scattered in the corners.
        let p = Position::from_text("w6w/8/8/3bb3/3bb3/8/8/w5bw b", Variant::Standard).unwrap();
        let e = HeuristicEvaluator::new();
        assert!(e.value(&p) > 0.3, "{}", e.value(&p));
        let q = Position::from_text("w6w/8/8/3bb3/3bb3/8/8/w5bw w", Variant::Standard).unwrap();
        assert!(e.value(&q) < -0.3, "{}", e.value(&q));
    }

    #[test]
    fn results_do_not_depend_on_batch_neighbours() {
        let rules = Rules::classic();
        let a = Position::start(Variant::Standard, &rules);
        let b = a.after(a.legal_moves(&rules)[4]);
        let e = HeuristicEvaluator::new();
        let mut one = batch_of(&[b]);
        let mut two = batch_of(&[a, b]);
        e.evaluate(&mut one).unwrap();
        e.evaluate(&mut two).unwrap();
        assert_eq!(one.values[0], two.values[1]);
        assert_eq!(&one.priors[..], &two.priors[two.range(1)]);
    }
}
