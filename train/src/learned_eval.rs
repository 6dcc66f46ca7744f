//! Training the learned alpha-beta evaluation ([`eval::learned`]) on labelled positions: the
//! float network of [`eval::learned::FEATURE_SET`] in tch, its inputs built by the same
//! functions the search evaluates with, the board's symmetries as augmentation, the loss in
//! win-probability space (binary cross-entropy of the output logit against a target in
//! `[0, 1]`), and the weights handed back as [`Weights`] for eval's file format.
//!
//! Labels ([`LabelledPosition::target`]) come from the caller: [`labels_from_shards`] blends
//! a self-play sample's search value (the teacher network's MCTS value) with the game's
//! outcome, `λ·search + (1 − λ)·outcome`, in value space `[-1, 1]` mapped to `[0, 1]`.

use anyhow::{bail, Context, Result};
use eval::learned::features::{global_inputs, psq_dense};
use eval::learned::file::TENSORS;
use eval::learned::games::ScoredPosition;
use eval::learned::{supports, Weights, GLOBAL_INPUTS, HIDDEN, L1, L1_INPUTS, L2, PSQ_INPUTS};
use loa::Position;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::time::{Duration, Instant};
use tch::{nn, nn::Module, nn::OptimizerConfig, Device, Kind, Reduction, Tensor};

/// A position with its training target: the side to move's expected score in `[0, 1]`.
#[derive(Clone, Debug)]
pub struct LabelledPosition {
    /// The position.
    pub position: Position,
    /// The side to move's expected score, in `[0, 1]`.
    pub target: f32,
}

/// The tunables of one training of the learned evaluation.
#[derive(Clone, Debug)]
pub struct LearnedEvalTraining {
    /// Passes over the positions (each pass with a fresh random symmetry per position).
    pub passes: usize,
    /// Stop after this long even if passes remain.
    pub time_limit: Option<Duration>,
    /// Positions per training step.
    pub batch_size: usize,
    /// Adam's learning rate (decayed by cosine to a tenth over the passes).
    pub learning_rate: f64,
    /// Fraction of the positions held out to measure the loss on (by position order: give
    /// them grouped by game).
    pub heldout_fraction: f64,
    /// Seed of the initial weights, the batch order and the symmetries.
    pub seed: u64,
    /// Asked before every step: when it asks to stop, the training fails with
    /// [`selfplay::Error::Cancelled`] (a SIGINT, say; `time_limit` ends it with weights).
    pub stop: selfplay::Cancel,
}

impl Default for LearnedEvalTraining {
    fn default() -> Self {
        LearnedEvalTraining {
            passes: 6,
            time_limit: None,
            batch_size: 1024,
            learning_rate: 2e-3,
            heldout_fraction: 0.05,
            seed: 1,
            stop: selfplay::Cancel::never(),
        }
    }
}

/// What a training did.
#[derive(Clone, Debug)]
pub struct LearnedEvalReport {
    /// Positions trained on.
    pub train_positions: usize,
    /// Positions held out.
    pub heldout_positions: usize,
    /// Passes made (fewer than asked when the time limit ended the training).
    pub passes: usize,
    /// Optimiser steps made.
    pub steps: usize,
    /// Mean training loss of the last pass.
    pub train_loss: f64,
    /// Loss on the held-out positions (no augmentation) before and after.
    pub heldout_loss_before: f64,
    /// Loss on the held-out positions after.
    pub heldout_loss: f64,
    /// The entropy of the held-out targets: the loss a perfect predictor reaches.
    pub heldout_target_entropy: f64,
    /// Time taken.
    pub elapsed: Duration,
}

/// Largest feature-transformer weight kept during training: with 24 pieces and [`QA`] of
/// 255 the integer sums stay inside `i16` (see [`eval::learned::LearnedEval::new`]).
///
/// [`QA`]: eval::learned::QA
const FT_CLIP: f64 = 4.0;

struct Net {
    ft: nn::Linear,
    l1: nn::Linear,
    l2: nn::Linear,
    out: nn::Linear,
}

impl Net {
    fn new(root: &nn::Path) -> Net {
        Net {
            ft: nn::linear(
                root / "ft",
                PSQ_INPUTS as i64,
                HIDDEN as i64,
                Default::default(),
            ),
            l1: nn::linear(root / "l1", L1_INPUTS as i64, L1 as i64, Default::default()),
            l2: nn::linear(root / "l2", L1 as i64, L2 as i64, Default::default()),
            out: nn::linear(root / "out", L2 as i64, 1, Default::default()),
        }
    }

    /// Logits `[B]` of inputs `[B, 128]` ×2 and `[B, 24]`.
    fn forward(&self, mover: &Tensor, other: &Tensor, globals: &Tensor) -> Tensor {
        let a = self.ft.forward(mover).clamp(0.0, 1.0);
        let b = self.ft.forward(other).clamp(0.0, 1.0);
        let x = Tensor::cat(&[a, b, globals.shallow_clone()], 1);
        let h1 = self.l1.forward(&x).clamp(0.0, 1.0);
        let h2 = self.l2.forward(&h1).clamp(0.0, 1.0);
        self.out.forward(&h2).squeeze_dim(1)
    }
}

/// The inputs and targets of `positions` (each mapped by the symmetry `sym(i)`), as tensors.
fn batch(
    positions: &[&LabelledPosition],
    mut sym: impl FnMut(usize) -> usize,
) -> (Tensor, Tensor, Tensor, Tensor) {
    let n = positions.len();
    let mut mover = Vec::with_capacity(n * PSQ_INPUTS);
    let mut other = Vec::with_capacity(n * PSQ_INPUTS);
    let mut globals = Vec::with_capacity(n * GLOBAL_INPUTS);
    let mut target = Vec::with_capacity(n);
    for (i, lp) in positions.iter().enumerate() {
        let pos = lp.position.transformed(sym(i));
        let us = pos.to_move();
        mover.extend_from_slice(&psq_dense(&pos, us));
        other.extend_from_slice(&psq_dense(&pos, us.opponent()));
        globals.extend_from_slice(&global_inputs(&pos));
        target.push(lp.target);
    }
    let n = n as i64;
    (
        Tensor::from_slice(&mover).view([n, PSQ_INPUTS as i64]),
        Tensor::from_slice(&other).view([n, PSQ_INPUTS as i64]),
        Tensor::from_slice(&globals).view([n, GLOBAL_INPUTS as i64]),
        Tensor::from_slice(&target),
    )
}

fn set_weights(vs: &nn::VarStore, w: &Weights) -> Result<()> {
    let vars = vs.variables();
    tch::no_grad(|| -> Result<()> {
        for ((name, [o, i]), data) in TENSORS.iter().zip(&w.tensors) {
            let mut v = vars
                .get(*name)
                .with_context(|| format!("no variable {name}"))?
                .shallow_clone();
            let shape: Vec<i64> = if name.ends_with(".bias") {
                vec![*i as i64]
            } else {
                vec![*o as i64, *i as i64]
            };
            v.copy_(&Tensor::from_slice(data).view(shape.as_slice()));
        }
        Ok(())
    })
}

fn get_weights(vs: &nn::VarStore) -> Result<Weights> {
    let vars = vs.variables();
    let mut tensors = Vec::new();
    for (name, _) in TENSORS {
        let v = vars
            .get(name)
            .with_context(|| format!("no variable {name}"))?;
        tensors.push(Vec::<f32>::try_from(v.flatten(0, -1).to_kind(Kind::Float))?);
    }
    Ok(Weights {
        tensors,
        notes: Default::default(),
    })
}

fn mean_loss(net: &Net, positions: &[&LabelledPosition], batch_size: usize) -> f64 {
    if positions.is_empty() {
        return f64::NAN;
    }
    let mut total = 0.0;
    tch::no_grad(|| {
        for chunk in positions.chunks(batch_size) {
            let (m, o, g, t) = batch(chunk, |_| 0);
            let loss = net
                .forward(&m, &o, &g)
                .binary_cross_entropy_with_logits::<Tensor>(&t, None, None, Reduction::Sum);
            total += loss.double_value(&[]);
        }
    });
    total / positions.len() as f64
}

/// Trains the learned evaluation on `data` (starting from `init`, else from random weights)
/// and returns its weights with what the training did. Errors on positions of a variant the
/// feature set does not cover, or with fewer than 100 positions.
pub fn train_learned_eval(
    data: &[LabelledPosition],
    init: Option<&Weights>,
    config: &LearnedEvalTraining,
    mut progress: impl FnMut(&str),
) -> Result<(Weights, LearnedEvalReport)> {
    if data.len() < 100 {
        bail!(
            "{} positions: too few to train a learned evaluation on",
            data.len()
        );
    }
    if let Some(lp) = data.iter().find(|lp| !supports(lp.position.variant())) {
        bail!(
            "a position of variant {}: the learned evaluation covers standard and scrambled-eggs",
            lp.position.variant().name()
        );
    }
    let started = Instant::now();
    tch::manual_seed(config.seed as i64);
    let vs = nn::VarStore::new(Device::Cpu);
    let net = Net::new(&vs.root());
    set_weights(
        &vs,
        &init
            .cloned()
            .unwrap_or_else(|| Weights::random(config.seed)),
    )?;
    let heldout_n = ((data.len() as f64) * config.heldout_fraction) as usize;
    let (train_part, heldout_part) = data.split_at(data.len() - heldout_n);
    let heldout: Vec<&LabelledPosition> = heldout_part.iter().collect();
    let mut order: Vec<&LabelledPosition> = train_part.iter().collect();
    let entropy = heldout
        .iter()
        .map(|lp| {
            let p = lp.target.clamp(1e-6, 1.0 - 1e-6) as f64;
            -(p * p.ln() + (1.0 - p) * (1.0 - p).ln())
        })
        .sum::<f64>()
        / heldout.len().max(1) as f64;
    let heldout_loss_before = mean_loss(&net, &heldout, config.batch_size);
    let mut opt = nn::Adam::default().build(&vs, config.learning_rate)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(config.seed);
    let steps_per_pass = order.len().div_ceil(config.batch_size);
    let total_steps = (steps_per_pass * config.passes).max(1);
    let ft_weight = vs
        .variables()
        .get("ft.weight")
        .expect("ft.weight")
        .shallow_clone();
    let ft_bias = vs
        .variables()
        .get("ft.bias")
        .expect("ft.bias")
        .shallow_clone();
    let (mut step, mut passes, mut train_loss) = (0usize, 0usize, f64::NAN);
    'passes: for pass in 0..config.passes {
        order.shuffle(&mut rng);
        let (mut sum, mut count) = (0.0, 0usize);
        for chunk in order.chunks(config.batch_size) {
            if config.time_limit.is_some_and(|t| started.elapsed() >= t) {
                break 'passes;
            }
            if config.stop.requested() {
                return Err(selfplay::Error::Cancelled.into());
            }
            let progress_frac = step as f64 / total_steps as f64;
            let lr = config.learning_rate
                * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress_frac).cos()));
            opt.set_lr(lr);
            let (m, o, g, t) = batch(chunk, |_| rng.random_range(0..8));
            let loss = net
                .forward(&m, &o, &g)
                .binary_cross_entropy_with_logits::<Tensor>(&t, None, None, Reduction::Mean);
            opt.backward_step(&loss);
            tch::no_grad(|| {
                let _ = ft_weight.shallow_clone().clamp_(-FT_CLIP, FT_CLIP);
                let _ = ft_bias.shallow_clone().clamp_(-FT_CLIP, FT_CLIP);
            });
            sum += loss.double_value(&[]) * chunk.len() as f64;
            count += chunk.len();
            step += 1;
        }
        passes = pass + 1;
        train_loss = sum / count.max(1) as f64;
        progress(&format!(
            "pass {passes}/{}: train loss {train_loss:.4}, held-out {:.4} (target entropy {entropy:.4}), {:.0} s",
            config.passes,
            mean_loss(&net, &heldout, config.batch_size),
            started.elapsed().as_secs_f64()
        ));
    }
    let heldout_loss = mean_loss(&net, &heldout, config.batch_size);
    let weights = get_weights(&vs)?;
    Ok((
        weights,
        LearnedEvalReport {
            train_positions: order.len(),
            heldout_positions: heldout.len(),
            passes,
            steps: step,
            train_loss,
            heldout_loss_before,
            heldout_loss,
            heldout_target_entropy: entropy,
            elapsed: started.elapsed(),
        },
    ))
}

/// Labelled positions of the self-play shards in `dir` (oldest first, grouped by game as
/// the shards hold them), in covered variants: target `(1 + λ·search + (1 − λ)·outcome)/2`
/// with `λ = search_weight` (a tree-only sample: its search value alone). At most
/// `max_positions`, the newest kept.
pub fn labels_from_shards(
    dir: &Path,
    search_weight: f32,
    max_positions: usize,
) -> Result<Vec<LabelledPosition>> {
    let scan = selfplay::data::read_recent_shards(dir, Some(max_positions))
        .with_context(|| format!("cannot read the shards of {}", dir.display()))?;
    let mut out = Vec::new();
    // `scan` holds the newest shard first: oldest first here, so held-out parts are newest.
    for s in scan
        .samples
        .iter()
        .rev()
        .filter(|s| supports(s.position.variant()))
    {
        let v = if s.tree_only {
            s.search_value
        } else {
            search_weight * s.search_value + (1.0 - search_weight) * s.outcome
        };
        out.push(LabelledPosition {
            position: s.position,
            target: ((1.0 + v) / 2.0).clamp(0.0, 1.0),
        });
    }
    Ok(out)
}

/// Labelled positions of alpha-beta self-play ([`eval::learned::games`]): target
/// `λ·σ(score / scale) + (1 − λ)·(1 + result)/2` with `λ = search_weight`, where `scale` is
/// the evaluation units per logit of the evaluation that searched
/// ([`eval::learned::games::fit_score_scale`]).
pub fn labels_from_scored_games(
    positions: &[ScoredPosition],
    scale: f32,
    search_weight: f32,
) -> Vec<LabelledPosition> {
    positions
        .iter()
        .filter(|p| supports(p.position.variant()))
        .map(|p| {
            let searched = 1.0 / (1.0 + (-(p.score as f32) / scale).exp());
            let result = (1.0 + p.outcome) / 2.0;
            LabelledPosition {
                position: p.position,
                target: (search_weight * searched + (1.0 - search_weight) * result).clamp(0.0, 1.0),
            }
        })
        .collect()
}

/// Blends a policy-value network's value into `labels` (the MCTS network is the teacher):
/// `target ← (1 − τ)·target + τ·(1 + v)/2` with `τ = weight` and `v` the value head's output
/// for the side to move, batched through `evaluator` 256 positions at a time.
pub fn blend_teacher_values(
    labels: &mut [LabelledPosition],
    evaluator: &dyn selfplay::Evaluator,
    weight: f32,
) -> Result<()> {
    if weight == 0.0 {
        return Ok(());
    }
    let rules = loa::Rules::classic();
    let mut batch = selfplay::EvalBatch::new();
    for chunk in labels.chunks_mut(256) {
        batch.clear();
        for lp in chunk.iter() {
            let moves = lp.position.legal_moves(&rules).to_vec();
            batch.push(lp.position, &moves);
        }
        evaluator
            .evaluate(&mut batch)
            .map_err(|e| anyhow::anyhow!("the teacher network {}: {e}", evaluator.name()))?;
        for (lp, &v) in chunk.iter_mut().zip(&batch.values) {
            lp.target = ((1.0 - weight) * lp.target + weight * (1.0 + v) / 2.0).clamp(0.0, 1.0);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval::learned::{LearnedEval, Simd};
    use loa::{Rules, Variant};
    use rand::rngs::SmallRng;

    /// The teacher's value moves each label by its weight; weight 0 leaves them.
    #[test]
    fn teacher_values_blend_into_the_labels() {
        let rules = Rules::classic();
        let start = Position::start(Variant::Standard, &rules);
        let mut labels = vec![
            LabelledPosition {
                position: start,
                target: 1.0,
            };
            300
        ];
        // The uniform evaluator values every position 0: (1 + 0) / 2 = 0.5.
        let teacher = selfplay::UniformEvaluator;
        blend_teacher_values(&mut labels, &teacher, 0.0).unwrap();
        assert!(labels.iter().all(|l| l.target == 1.0));
        blend_teacher_values(&mut labels, &teacher, 0.25).unwrap();
        assert!(labels.iter().all(|l| (l.target - 0.875).abs() < 1e-6));
    }

    /// Positions of random games of `variant`: about `n`, from the start to move 40.
    fn random_positions(variant: Variant, n: usize, seed: u64) -> Vec<Position> {
        let rules = Rules::classic();
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut out = Vec::new();
        while out.len() < n {
            let mut pos = Position::start(variant, &rules);
            for _ in 0..40 {
                if pos.outcome(&rules).is_some() {
                    break;
                }
                out.push(pos);
                let moves = pos.legal_moves(&rules);
                pos.play(moves[rng.random_range(0..moves.len())]);
            }
        }
        out
    }

    /// The trainer's torch network and eval's inference give one logit for the same
    /// weights: torch's initial weights (the feature transformer and the output made 8×
    /// larger, so that the logits spread), set into the network the trainer trains, and the
    /// same weights through eval's file, its float reference and its quantised integer
    /// path, on positions of both variants the feature set covers. A transposed matrix, a
    /// mover/other swap or global terms out of order on either side fail here.
    #[test]
    fn the_torch_network_and_eval_give_one_logit_for_the_same_weights() {
        tch::manual_seed(11);
        let vs = nn::VarStore::new(Device::Cpu);
        let net = Net::new(&vs.root());
        let mut w = get_weights(&vs).unwrap();
        for ((name, _), t) in TENSORS.iter().zip(&mut w.tensors) {
            if *name == "ft.weight" || *name == "out.weight" {
                t.iter_mut().for_each(|x| *x *= 8.0);
            }
        }
        set_weights(&vs, &w).unwrap();
        let eval = LearnedEval::new(
            Weights::from_bytes(&w.to_bytes()).unwrap(),
            Simd::detected(),
        )
        .unwrap();
        let mut logits = Vec::new();
        for variant in [Variant::Standard, Variant::ScrambledEggs] {
            let positions = random_positions(variant, 300, 17);
            let labelled: Vec<LabelledPosition> = positions
                .iter()
                .map(|&position| LabelledPosition {
                    position,
                    target: 0.5,
                })
                .collect();
            let refs: Vec<&LabelledPosition> = labelled.iter().collect();
            let (m, o, g, _) = batch(&refs, |_| 0);
            let torch = Vec::<f32>::try_from(tch::no_grad(|| net.forward(&m, &o, &g))).unwrap();
            for (pos, &t) in positions.iter().zip(&torch) {
                let reference = eval::learned::reference_logit(&w, pos);
                assert!(
                    (reference - t).abs() < 1e-3,
                    "{variant:?} {}: torch {t}, eval's float {reference}",
                    pos.to_text()
                );
                let integer = eval.logit(pos);
                assert!(
                    (integer - t).abs() < 0.1,
                    "{variant:?} {}: torch {t}, eval {integer}",
                    pos.to_text()
                );
            }
            logits.extend(torch);
        }
        let mean = logits.iter().sum::<f32>() / logits.len() as f32;
        let spread =
            (logits.iter().map(|l| (l - mean).powi(2)).sum::<f32>() / logits.len() as f32).sqrt();
        assert!(
            spread > 0.2,
            "the logits hardly differ (sd {spread}): the test would not see a swap"
        );
    }

    /// Positions from random games, labelled by a rule the net can learn (more own pieces
    /// than the opponent's: the mover is ahead): the held-out loss falls well below its
    /// start, and the trained weights, through eval's file and integer path, give what the
    /// float network gives.
    #[test]
    fn training_learns_a_learnable_label_and_the_weights_play_the_same() {
        let rules = Rules::classic();
        let mut rng = SmallRng::seed_from_u64(5);
        let mut data = Vec::new();
        while data.len() < 3000 {
            let mut pos = Position::start(Variant::Standard, &rules);
            for _ in 0..60 {
                if pos.outcome(&rules).is_some() {
                    break;
                }
                let us = pos.to_move();
                let diff = pos.pieces(us).count_ones() as f32
                    - pos.pieces(us.opponent()).count_ones() as f32;
                data.push(LabelledPosition {
                    position: pos,
                    target: if diff > 0.0 {
                        0.9
                    } else if diff < 0.0 {
                        0.1
                    } else {
                        0.5
                    },
                });
                let moves = pos.legal_moves(&rules);
                pos.play(moves[rng.random_range(0..moves.len())]);
            }
        }
        let config = LearnedEvalTraining {
            passes: 40,
            batch_size: 128,
            ..Default::default()
        };
        let (w, report) = train_learned_eval(&data, None, &config, |_| {}).unwrap();
        assert!(
            report.heldout_loss < report.heldout_loss_before - 0.05
                && report.heldout_loss < report.heldout_target_entropy + 0.08,
            "{report:?}"
        );
        let back = Weights::from_bytes(&w.to_bytes()).unwrap();
        let net = LearnedEval::new(back, Simd::detected()).unwrap();
        for lp in data.iter().step_by(97) {
            let reference = eval::learned::reference_logit(&w, &lp.position);
            assert!((net.logit(&lp.position) - reference).abs() < 0.05);
        }
        let six = Position::start(Variant::Six, &rules);
        let mut bad = data.clone();
        bad[0].position = six;
        assert!(train_learned_eval(&bad, None, &config, |_| {}).is_err());
    }
}
