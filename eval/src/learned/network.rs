//! The learned evaluation ready to run: quantised feature transformer, float dense layers,
//! and the instruction-set path chosen at load.

use super::accumulator::Accumulator;
use super::features::global_inputs;
use super::file::Weights;
use super::transformer::FeatureTransformer;
use super::{Simd, GLOBAL_INPUTS, HIDDEN, L1, L1_INPUTS, L2, PSQ_INPUTS, QA, SCORE_SCALE};
use crate::evaluation::EVAL_LIMIT;
use anyhow::{bail, Result};
use loa::{Color, Position};
use std::path::Path;

/// A learned evaluation (see the module docs of [`super`]). Thread-safe: share it in an
/// `Arc`.
pub struct LearnedEval {
    /// The quantised feature transformer and its kernels.
    transformer: FeatureTransformer,
    /// First dense layer, `[input][output]`.
    l1_weight: Box<[[f32; L1]; L1_INPUTS]>,
    l1_bias: [f32; L1],
    /// Second dense layer, `[input][output]`.
    l2_weight: [[f32; L2]; L1],
    l2_bias: [f32; L2],
    out_weight: [f32; L2],
    out_bias: f32,
    simd: Simd,
    /// Where it was read from (or "(memory)"), as `info` lines name it.
    source: String,
    /// The float weights it was made from.
    weights: Weights,
}

impl std::fmt::Debug for LearnedEval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LearnedEval({}, {})", self.source, self.simd.name())
    }
}

#[inline(always)]
fn madd<const FMA: bool>(x: f32, w: f32, acc: f32) -> f32 {
    if FMA {
        x.mul_add(w, acc)
    } else {
        x * w + acc
    }
}

#[inline(always)]
fn forward_kernel<const FMA: bool>(
    net: &LearnedEval,
    acc: &Accumulator,
    mover: Color,
    globals: &[f32; GLOBAL_INPUTS],
) -> f32 {
    let mut x = [0f32; L1_INPUTS];
    let scale = 1.0 / QA as f32;
    for (k, c) in [mover, mover.opponent()].into_iter().enumerate() {
        let sums = &acc.sums[c.index()];
        let out = &mut x[k * HIDDEN..(k + 1) * HIDDEN];
        for i in 0..HIDDEN {
            out[i] = sums[i].clamp(0, QA as i16) as f32 * scale;
        }
    }
    x[2 * HIDDEN..].copy_from_slice(globals);
    let mut h1 = net.l1_bias;
    for (xi, row) in x.iter().zip(net.l1_weight.iter()) {
        for j in 0..L1 {
            h1[j] = madd::<FMA>(*xi, row[j], h1[j]);
        }
    }
    let mut h2 = net.l2_bias;
    for (hi, row) in h1.iter().zip(net.l2_weight.iter()) {
        let a = hi.clamp(0.0, 1.0);
        for j in 0..L2 {
            h2[j] = madd::<FMA>(a, row[j], h2[j]);
        }
    }
    let mut out = net.out_bias;
    for (h, w) in h2.iter().zip(&net.out_weight) {
        out = madd::<FMA>(h.clamp(0.0, 1.0), *w, out);
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn forward_avx2(
    net: &LearnedEval,
    acc: &Accumulator,
    mover: Color,
    globals: &[f32; GLOBAL_INPUTS],
) -> f32 {
    forward_kernel::<true>(net, acc, mover, globals)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
unsafe fn forward_avx512(
    net: &LearnedEval,
    acc: &Accumulator,
    mover: Color,
    globals: &[f32; GLOBAL_INPUTS],
) -> f32 {
    forward_kernel::<true>(net, acc, mover, globals)
}

impl LearnedEval {
    /// Reads a weights file, on the path `LOAZERO_SIMD` asks for (else the fastest).
    pub fn load(path: &Path) -> Result<LearnedEval> {
        let mut net = LearnedEval::new(Weights::load(path)?, Simd::from_env()?)
            .map_err(|e| e.context(format!("learned evaluation {}", path.display())))?;
        net.source = path.display().to_string();
        Ok(net)
    }

    /// The evaluation of `weights` on the path `simd` (errors if this CPU lacks it, or if
    /// the feature transformer's weights are too large for its integer sums).
    pub fn new(weights: Weights, simd: Simd) -> Result<LearnedEval> {
        if !simd.available() {
            bail!("this CPU lacks the {} instructions", simd.name());
        }
        let transformer = FeatureTransformer::quantise(&weights)?;
        let l1 = weights.tensor("l1.weight");
        let mut l1_weight = Box::new([[0f32; L1]; L1_INPUTS]);
        for j in 0..L1 {
            for i in 0..L1_INPUTS {
                l1_weight[i][j] = l1[j * L1_INPUTS + i];
            }
        }
        let l2 = weights.tensor("l2.weight");
        let mut l2_weight = [[0f32; L2]; L1];
        for j in 0..L2 {
            for i in 0..L1 {
                l2_weight[i][j] = l2[j * L1 + i];
            }
        }
        Ok(LearnedEval {
            transformer,
            l1_weight,
            l1_bias: weights.tensor("l1.bias").try_into().expect("L1 biases"),
            l2_weight,
            l2_bias: weights.tensor("l2.bias").try_into().expect("L2 biases"),
            out_weight: weights.tensor("out.weight").try_into().expect("L2 weights"),
            out_bias: weights.tensor("out.bias")[0],
            simd,
            source: "(memory)".into(),
            weights,
        })
    }

    /// The feature transformer (the accumulator's kernels).
    pub(super) fn transformer(&self) -> &FeatureTransformer {
        &self.transformer
    }

    /// The instruction-set path it runs on.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// The same weights on another path.
    pub fn with_simd(&self, simd: Simd) -> Result<LearnedEval> {
        let mut net = LearnedEval::new(self.weights.clone(), simd)?;
        net.source = self.source.clone();
        Ok(net)
    }

    /// Where it was read from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The float weights it was made from.
    pub fn weights(&self) -> &Weights {
        &self.weights
    }

    /// The win logit of the side to move in `pos` from its accumulator `acc`.
    pub fn logit_with(&self, acc: &Accumulator, pos: &Position) -> f32 {
        let globals = global_inputs(pos);
        let mover = pos.to_move();
        match self.simd {
            // SAFETY: `new` checked that this CPU has the path.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { forward_avx2(self, acc, mover, &globals) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { forward_avx512(self, acc, mover, &globals) },
            _ => forward_kernel::<false>(self, acc, mover, &globals),
        }
    }

    /// The win logit of the side to move in `pos`.
    pub fn logit(&self, pos: &Position) -> f32 {
        self.logit_with(&Accumulator::refresh(self, pos), pos)
    }

    /// The evaluation of `pos` for the side to move in evaluation units, in
    /// `[-EVAL_LIMIT, EVAL_LIMIT]` (the search's scale: see [`SCORE_SCALE`]). Assumes the
    /// game is not over and the variant covered ([`super::check_supported`]).
    #[inline]
    pub fn evaluate(&self, pos: &Position) -> i32 {
        to_score(self.logit(pos))
    }
}

/// A logit in evaluation units.
#[inline]
pub fn to_score(logit: f32) -> i32 {
    ((logit * SCORE_SCALE).round() as i32).clamp(-EVAL_LIMIT, EVAL_LIMIT)
}

/// The float network of `weights` evaluated directly, without quantisation (the trainer's
/// arithmetic; a reference for tests).
pub fn reference_logit(weights: &Weights, pos: &Position) -> f32 {
    use super::features::psq_dense;
    let (ft, ft_b) = (weights.tensor("ft.weight"), weights.tensor("ft.bias"));
    let mover = pos.to_move();
    let mut x = Vec::with_capacity(L1_INPUTS);
    for c in [mover, mover.opponent()] {
        let input = psq_dense(pos, c);
        for h in 0..HIDDEN {
            let s: f32 = ft_b[h]
                + (0..PSQ_INPUTS)
                    .map(|i| ft[h * PSQ_INPUTS + i] * input[i])
                    .sum::<f32>();
            x.push(s.clamp(0.0, 1.0));
        }
    }
    x.extend_from_slice(&global_inputs(pos));
    let dense = |w: &[f32], b: &[f32], x: &[f32]| -> Vec<f32> {
        b.iter()
            .enumerate()
            .map(|(j, bj)| {
                bj + x
                    .iter()
                    .enumerate()
                    .map(|(i, xi)| w[j * x.len() + i] * xi)
                    .sum::<f32>()
            })
            .collect()
    };
    let clip = |v: Vec<f32>| v.into_iter().map(|a| a.clamp(0.0, 1.0)).collect::<Vec<_>>();
    let h1 = clip(dense(
        weights.tensor("l1.weight"),
        weights.tensor("l1.bias"),
        &x,
    ));
    let h2 = clip(dense(
        weights.tensor("l2.weight"),
        weights.tensor("l2.bias"),
        &h1,
    ));
    dense(
        weights.tensor("out.weight"),
        weights.tensor("out.bias"),
        &h2,
    )[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learned::{supports, Accumulator};
    use loa::{Rules, Variant};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn nets() -> Vec<LearnedEval> {
        let w = Weights::random(7);
        Simd::ALL
            .into_iter()
            .filter(|s| s.available())
            .map(|s| LearnedEval::new(w.clone(), s).unwrap())
            .collect()
    }

    /// Long random games in every covered variant: the accumulator updated move by move
    /// equals the refreshed one after every move, on every path this CPU has, and every
    /// path's logit is the float reference's within rounding.
    #[test]
    fn incremental_and_refreshed_accumulators_agree_exactly() {
        let nets = nets();
        assert!(!nets.is_empty());
        let mut rng = SmallRng::seed_from_u64(11);
        let mut checked = 0;
        for variant in Variant::ALL.into_iter().filter(|v| supports(*v)) {
            for game in 0..40 {
                let rules = Rules::classic();
                let mut pos = Position::start(variant, &rules);
                let mut accs: Vec<Accumulator> =
                    nets.iter().map(|n| Accumulator::refresh(n, &pos)).collect();
                for _ply in 0..200 {
                    if pos.outcome(&rules).is_some() {
                        break;
                    }
                    let moves = pos.legal_moves(&rules);
                    let mv = moves[rng.random_range(0..moves.len())];
                    for (acc, net) in accs.iter_mut().zip(&nets) {
                        acc.update(net, &pos, mv);
                    }
                    pos.play(mv);
                    for (acc, net) in accs.iter().zip(&nets) {
                        assert_eq!(
                            *acc,
                            Accumulator::refresh(net, &pos),
                            "{variant:?} game {game}: {} on {:?}",
                            pos.to_text(),
                            net.simd()
                        );
                        checked += 1;
                    }
                    let reference = reference_logit(nets[0].weights(), &pos);
                    for (acc, net) in accs.iter().zip(&nets) {
                        let l = net.logit_with(acc, &pos);
                        assert!(
                            (l - reference).abs() < 0.02,
                            "{:?}: {l} against the float reference {reference}",
                            net.simd()
                        );
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn oversized_transformer_weights_are_refused() {
        let mut w = Weights::random(2);
        w.tensors[0][5 * PSQ_INPUTS + 3] = 200.0;
        let e = format!("{:#}", LearnedEval::new(w, Simd::Scalar).unwrap_err());
        assert!(e.contains("unit 5") && e.contains("too large"), "{e}");
    }

    #[test]
    fn a_forced_path_the_cpu_lacks_is_refused() {
        for s in Simd::ALL.into_iter().filter(|s| !s.available()) {
            assert!(LearnedEval::new(Weights::random(1), s).is_err());
            assert!(Simd::named(s.name()).is_err());
        }
        assert!(Simd::named("sse9")
            .unwrap_err()
            .to_string()
            .contains("sse9"));
        assert_eq!(Simd::named("scalar").unwrap(), Simd::Scalar);
    }
}
