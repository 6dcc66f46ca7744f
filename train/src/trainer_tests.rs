//! Tests of the trainer: steps, checkpoints and their exact resumption, schedules, precision.

use super::*;
use crate::config::{NetConfig, OptimizerKind, Precision};
use loa::{Color, Move, Outcome, Position, Rules, Variant};

fn tiny_net() -> NetConfig {
    NetConfig::tiny()
}

/// A tiny net trained fast with AdamW on one thread, in `precision`.
fn quick_adamw(precision: Precision) -> TrainConfig {
    TrainConfig {
        net: tiny_net(),
        batch_size: 32,
        optimizer: OptimizerKind::Adamw,
        lr: 0.01,
        warmup_steps: 1,
        threads: 1,
        precision,
        ..TrainConfig::default()
    }
}

/// Positions from seeded random games, with a policy on some and outcomes.
pub(crate) fn random_samples(variant: Variant, n: usize, seed: u64) -> Vec<Sample> {
    let rules = Rules::classic();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut pos = Position::start(variant, &rules);
    while out.len() < n {
        let moves: Vec<Move> = pos.legal_moves(&rules).to_vec();
        let policy = if rng.random_bool(0.7) {
            let raw: Vec<f32> = moves.iter().map(|_| rng.random::<f32>()).collect();
            let s: f32 = raw.iter().sum();
            raw.iter().map(|x| x / s).collect()
        } else {
            vec![]
        };
        out.push(Sample {
            position: pos,
            rules,
            moves: moves.clone(),
            policy,
            search_value: rng.random_range(-1.0..1.0),
            outcome: [-1.0, 0.0, 1.0][rng.random_range(0..3)],
            tree_only: false,
            // As if the game ended here (a target the occupancy head can learn).
            final_pieces: Some(Sample::final_pieces_of(&pos, pos.to_move())),
        });
        pos.play(moves[rng.random_range(0..moves.len())]);
        if pos.outcome(&rules).is_some() {
            pos = Position::start(variant, &rules);
        }
    }
    out
}

fn assert_same_weights(a: &Trainer, b: &Trainer) {
    for (wa, wb) in [
        (a.model().weights(), b.model().weights()),
        (a.weights(), b.weights()),
    ] {
        assert_eq!(wa.len(), wb.len());
        for ((na, ta), (nb, tb)) in wa.iter().zip(&wb) {
            assert_eq!(na, nb);
            assert!(ta.equal(tb), "weights differ at {na}");
        }
    }
    let (sa, sb) = (a.optimizer.state_tensors(), b.optimizer.state_tensors());
    for ((na, ta), (_, tb)) in sa.iter().zip(&sb) {
        assert!(ta.equal(tb), "optimizer state differs at {na}");
    }
    assert_eq!(a.step(), b.step());
}

/// The per-sample mask of the policy loss: samples without a policy target (cheap
/// searches, Descent's tree-only positions) add nothing to the policy loss and no
/// gradient to the policy head, and train the value head towards their value target
/// (a tree-only sample's search value alone, however the outcome is weighted).
#[test]
fn samples_without_a_policy_target_train_only_the_value() {
    let variant = Variant::Standard;
    let config = TrainConfig {
        net: tiny_net(),
        batch_size: 8,
        search_value_weight: 0.25,
        threads: 1,
        ..TrainConfig::default()
    };
    let mut trainer = Trainer::new(config, variant).unwrap();
    let samples = random_samples(variant, 24, 11);
    let with_policy: Vec<&Sample> = samples.iter().filter(|s| !s.policy.is_empty()).collect();
    let tree: Vec<Sample> = samples
        .iter()
        .map(|s| Sample {
            moves: vec![],
            policy: vec![],
            outcome: 0.0,
            tree_only: true,
            final_pieces: None,
            ..s.clone()
        })
        .collect();
    let mut mixed = with_policy.clone();
    mixed.extend(tree.iter());
    let alone = trainer.evaluate(&with_policy).unwrap();
    let both = trainer.evaluate(&mixed).unwrap();
    assert!(alone.policy_loss > 0.0);
    assert!((both.policy_loss - alone.policy_loss).abs() < 1e-5);
    assert_eq!(both.policy_samples, with_policy.len());
    assert_eq!(both.samples, mixed.len());
    // A tree-only sample's value target is its search value.
    let refs: Vec<&Sample> = tree.iter().collect();
    let plane_set = trainer.model.info.net.plane_set;
    let batch = make_batch(&refs, &vec![0; refs.len()], variant, plane_set, 0.25).unwrap();
    let targets = Vec::<f32>::try_from(batch.value_target.shallow_clone()).unwrap();
    let expected: Vec<f32> = tree.iter().map(|s| s.search_value).collect();
    assert_eq!(targets, expected);
    // Gradients of a batch of tree-only samples: none reach the policy head.
    let out = trainer.forward(&batch.input, true);
    let (loss, _) = trainer.losses(&out, &batch);
    trainer.optimizer.zero_grad();
    loss.backward();
    let mut policy_params = 0;
    let mut value_grad = 0.0;
    for (name, var) in trainer.model.vs.variables() {
        let grad = var.grad();
        if !grad.defined() {
            continue;
        }
        let norm = grad.abs().sum(Kind::Float).double_value(&[]);
        if name.contains("policy.") {
            policy_params += 1;
            assert_eq!(norm, 0.0, "{name} got a gradient");
        } else if name.contains("value.") {
            value_grad += norm;
        }
    }
    assert!(
        policy_params > 0,
        "the policy head's weights have gradients"
    );
    assert!(value_grad > 0.0);
}

/// With an occupancy head the loss adds `occupancy_loss_weight` times the occupancy
/// cross-entropy, which training lowers on a fixed batch; the head is saved and
/// resumed with the model. Without the head the occupancy loss is NaN and the total
/// is policy + value.
#[test]
fn the_occupancy_head_trains_and_resumes() {
    let variant = Variant::Standard;
    let samples = random_samples(variant, 64, 9);
    let refs: Vec<&Sample> = samples.iter().collect();
    let syms = vec![0; refs.len()];
    let config = TrainConfig {
        net: crate::config::NetConfig {
            occupancy_head: true,
            ..tiny_net()
        },
        batch_size: 64,
        lr: 0.05,
        warmup_steps: 1,
        occupancy_loss_weight: 2.0,
        threads: 1,
        ..TrainConfig::default()
    };
    let mut trainer = Trainer::new(config.clone(), variant).unwrap();
    let first = trainer.train_on(&refs, &syms).unwrap();
    assert!(first.occupancy_loss > 0.0, "{first:?}");
    let total = first.policy_loss + first.value_loss + 2.0 * first.occupancy_loss;
    assert!((first.loss - total).abs() < 1e-4, "{first:?}");
    let mut last = first.clone();
    for _ in 0..40 {
        last = trainer.train_on(&refs, &syms).unwrap();
    }
    assert!(
        last.occupancy_loss < 0.8 * first.occupancy_loss,
        "{} then {}",
        first.occupancy_loss,
        last.occupancy_loss
    );
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("ckpt.safetensors");
    trainer.save_checkpoint(&ckpt).unwrap();
    let resumed = Trainer::resume(&ckpt, None).unwrap();
    assert!(resumed.model().info.net.occupancy_head);
    let (a, b) = (
        trainer.evaluate(&refs).unwrap(),
        resumed.evaluate(&refs).unwrap(),
    );
    assert!(a.occupancy_loss.is_finite());
    assert_eq!(a.occupancy_loss, b.occupancy_loss);
    let mut plain = Trainer::new(
        TrainConfig {
            net: tiny_net(),
            ..config
        },
        variant,
    )
    .unwrap();
    let s = plain.train_on(&refs, &syms).unwrap();
    assert!(s.occupancy_loss.is_nan());
    assert!(
        (s.loss - (s.policy_loss + s.value_loss)).abs() < 1e-4,
        "{s:?}"
    );
}

/// N steps + checkpoint + resume + M steps == N + M uninterrupted steps, bit for bit,
/// for both optimizers (CPU, fixed seed), on the square and the hexagonal board.
#[test]
fn resume_continues_exactly() {
    for (variant, optimizer, ema_decay) in [
        (Variant::Standard, OptimizerKind::Sgd, 0.0),
        (Variant::Standard, OptimizerKind::Sgd, 0.9),
        (Variant::Standard, OptimizerKind::Adamw, 0.0),
        (Variant::Alveole, OptimizerKind::Adamw, 0.0),
    ] {
        let window = ReplayWindow::from_samples(random_samples(variant, 200, 5), 1000, variant);
        let config = TrainConfig {
            net: tiny_net(),
            batch_size: 16,
            optimizer,
            lr: if optimizer == OptimizerKind::Sgd {
                0.05
            } else {
                0.003
            },
            warmup_steps: 2,
            lr_schedule: crate::config::LrSchedule::Cosine,
            lr_decay_steps: 20,
            search_value_weight: 0.25,
            ema_decay,
            threads: 1,
            ..TrainConfig::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let ckpt = dir.path().join("ckpt.safetensors");
        let mut straight = Trainer::new(config.clone(), variant).unwrap();
        for _ in 0..7 {
            straight.train_step(&window).unwrap();
        }
        let mut first = Trainer::new(config.clone(), variant).unwrap();
        for _ in 0..4 {
            first.train_step(&window).unwrap();
        }
        first.save_checkpoint(&ckpt).unwrap();
        drop(first);
        let mut resumed = Trainer::resume(&ckpt, None).unwrap();
        assert_eq!(resumed.step(), 4);
        for _ in 0..3 {
            resumed.train_step(&window).unwrap();
        }
        assert_same_weights(&straight, &resumed);
        // The checkpoint is also a model file.
        let m = Model::load(&ckpt, Device::Cpu).unwrap();
        assert_eq!(m.info.step, 4);
        assert_eq!(m.info.variant, variant);
        // A changed net shape is refused.
        let mut other = config.clone();
        other.net.channels = 16;
        let err = Trainer::resume(&ckpt, Some(other))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("differs"), "{err}");
    }
}

/// The averaged weights equal the bias-corrected recurrence, the output model and
/// `save_model` carry them, and the raw model keeps training on its own weights.
#[test]
fn weight_average_follows_the_recurrence() {
    let variant = Variant::Standard;
    let window = ReplayWindow::from_samples(random_samples(variant, 100, 3), 1000, variant);
    let config = TrainConfig {
        net: tiny_net(),
        batch_size: 8,
        ema_decay: 0.5,
        threads: 1,
        ..TrainConfig::default()
    };
    let mut plain = Trainer::new(
        TrainConfig {
            ema_decay: 0.0,
            ..config.clone()
        },
        variant,
    )
    .unwrap();
    let mut averaged = Trainer::new(config.clone(), variant).unwrap();
    assert!(plain.average.is_none());
    let name = "blocks.0.conv1.weight";
    let pick = |w: Vec<(String, Tensor)>| w.into_iter().find(|(n, _)| n == name).unwrap().1;
    let mut expected = pick(plain.model().weights());
    for step in 0..5u64 {
        plain.train_step(&window).unwrap();
        averaged.train_step(&window).unwrap();
        let d = config.ema_decay_at(step);
        expected = &expected * d + pick(plain.model().weights()) * (1.0 - d);
    }
    // Same seed, same batches: the raw weights are those of the plain trainer.
    assert!(pick(averaged.model().weights()).equal(&pick(plain.model().weights())));
    let out = pick(averaged.weights());
    assert!(out.allclose(&expected, 1e-5, 1e-6, false));
    assert!(!out.allclose(&pick(averaged.model().weights()), 1e-5, 1e-6, false));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    averaged.save_model(&path).unwrap();
    let saved = Model::load(&path, Device::Cpu).unwrap();
    assert_eq!(saved.info.step, 5);
    assert!(pick(saved.weights()).equal(&out));
    assert_eq!(config.ema_decay_at(0), 0.1);
    assert_eq!(config.ema_decay_at(1000), 0.5);
}

#[test]
fn training_reduces_loss_and_logs() {
    let window = ReplayWindow::from_samples(
        random_samples(Variant::Standard, 64, 9),
        1000,
        Variant::Standard,
    );
    let config = TrainConfig {
        log_every: 10,
        ..quick_adamw(TrainConfig::default().precision)
    };
    let dir = tempfile::tempdir().unwrap();
    let mut log = MetricsLog::open(&dir.path().join("metrics.jsonl")).unwrap();
    let mut t = Trainer::new(config, Variant::Standard).unwrap();
    let first = t.train(&window, 10, Some(&mut log)).unwrap();
    let later = t.train(&window, 30, Some(&mut log)).unwrap();
    assert!(later.stats.loss < first.stats.loss, "{first:?} {later:?}");
    // KL = cross-entropy − target entropy: non-negative, below the cross-entropy, and
    // falling as the policy fits.
    for st in [&first.stats, &later.stats] {
        assert!(st.target_entropy > 0.0, "{st:?}");
        assert!(
            st.policy_kl > -1e-4 && st.policy_kl < st.policy_loss,
            "{st:?}"
        );
    }
    assert!(
        later.stats.policy_kl < first.stats.policy_kl,
        "{first:?} {later:?}"
    );
    let text = std::fs::read_to_string(dir.path().join("metrics.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["step"], 40);
    assert!(lines[3]["policy_accuracy"].as_f64().is_some());
    assert!(lines[3]["samples_per_sec"].as_f64().unwrap() > 0.0);
    let empty = ReplayWindow::new(10, Variant::Standard);
    assert!(t
        .train_step(&empty)
        .unwrap_err()
        .to_string()
        .contains("empty"));
    for other in [Variant::Six, Variant::Gemma] {
        let w = ReplayWindow::from_samples(random_samples(other, 4, 1), 10, other);
        let err = format!("{:#}", t.train_step(&w).unwrap_err());
        assert!(err.contains("cannot be used for"), "{err}");
    }
    let scrambled = random_samples(Variant::ScrambledEggs, 40, 2);
    let w = ReplayWindow::from_samples(scrambled, 100, Variant::ScrambledEggs);
    t.train_step(&w).unwrap();
}

/// bfloat16 mixed precision: the first step's losses are fp32's up to bf16 rounding,
/// the weights stay fp32 and training lowers the loss; `half` is refused.
#[test]
fn bfloat16_mixed_precision_trains() {
    let window = ReplayWindow::from_samples(
        random_samples(Variant::Standard, 64, 9),
        1000,
        Variant::Standard,
    );
    let config = quick_adamw;
    let samples: Vec<&Sample> = (0..32).map(|i| window.get(i)).collect();
    let syms = vec![0; samples.len()];
    let mut fp32 = Trainer::new(config(Precision::Float), Variant::Standard).unwrap();
    let mut bf16 = Trainer::new(config(Precision::Bfloat16), Variant::Standard).unwrap();
    let a = fp32.train_on(&samples, &syms).unwrap();
    let b = bf16.train_on(&samples, &syms).unwrap();
    assert!(a.loss != b.loss, "bf16 rounding shows: {a:?} {b:?}");
    assert!((a.loss - b.loss).abs() < 0.05 * a.loss, "{a:?} {b:?}");
    assert!(bf16
        .model()
        .weights()
        .iter()
        .all(|(_, t)| t.kind() == Kind::Float));
    let first = bf16.evaluate(&samples).unwrap();
    bf16.train(&window, 30, None).unwrap();
    let later = bf16.evaluate(&samples).unwrap();
    assert!(later.loss < first.loss, "{first:?} {later:?}");
    let err = Trainer::new(config(Precision::Half), Variant::Standard)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("half"), "{err}");
}

/// Training on the variants with extra planes (parachute: drops; ambiloa: four
/// players) and on the hexagonal board with 12-fold augmentation lowers the loss.
#[test]
fn training_reduces_loss_in_other_variants() {
    for variant in [Variant::Parachute, Variant::Ambiloa, Variant::Alveole] {
        let window = ReplayWindow::from_samples(random_samples(variant, 64, 9), 1000, variant);
        assert_eq!(window.len(), 64);
        let config = quick_adamw(TrainConfig::default().precision);
        let mut t = Trainer::new(config, variant).unwrap();
        let first = t.train(&window, 10, None).unwrap();
        let later = t.train(&window, 30, None).unwrap();
        assert!(
            later.stats.loss < first.stats.loss,
            "{variant}: {first:?} {later:?}"
        );
        assert!(t.describe().contains(variant.name()));
        eprintln!(
            "{variant}: mean loss {:.4} (steps 1-10) -> {:.4} (steps 11-40)",
            first.stats.loss, later.stats.loss
        );
    }
}

/// Positions where the side to move connects with exactly one or two moves, found by
/// enumerating moves with the engine along seeded random games.
fn one_move_wins(n: usize, seed: u64) -> Vec<Sample> {
    let rules = Rules::classic();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut pos = Position::start(Variant::Standard, &rules);
    while out.len() < n {
        let moves: Vec<Move> = pos.legal_moves(&rules).to_vec();
        let me: Color = pos.to_move();
        let wins: Vec<bool> = moves
            .iter()
            .map(|&m| pos.after(m).connection_outcome_after(m, &rules) == Some(Outcome::Win(me)))
            .collect();
        let k = wins.iter().filter(|&&w| w).count();
        if (1..=2).contains(&k) && moves.len() > 4 {
            out.push(Sample {
                position: pos,
                rules,
                moves: moves.clone(),
                policy: wins
                    .iter()
                    .map(|&w| if w { 1.0 / k as f32 } else { 0.0 })
                    .collect(),
                search_value: 1.0,
                outcome: 1.0,
                tree_only: false,
                final_pieces: None,
            });
        }
        let non_winning: Vec<Move> = moves
            .iter()
            .zip(&wins)
            .filter(|(_, &w)| !w)
            .map(|(&m, _)| m)
            .collect();
        if k > 0 || non_winning.is_empty() || pos.ply() > 150 {
            pos = Position::start(Variant::Standard, &rules);
        } else {
            pos.play(non_winning[rng.random_range(0..non_winning.len())]);
            if pos.outcome(&rules).is_some() {
                pos = Position::start(Variant::Standard, &rules);
            }
        }
    }
    out
}

/// Supervised sanity: a small net fits a fixed set of positions with known winning
/// moves to ≥ 95% policy accuracy (inference mode).
#[test]
fn fits_one_move_wins() {
    let samples = one_move_wins(48, 11);
    let chance: f64 = samples
        .iter()
        .map(|s| s.policy.iter().filter(|&&p| p > 0.0).count() as f64 / s.moves.len() as f64)
        .sum::<f64>()
        / samples.len() as f64;
    let refs: Vec<&Sample> = samples.iter().collect();
    let config = TrainConfig {
        net: NetConfig {
            blocks: 2,
            channels: 32,
            global_pool_every: 0,
            policy_channels: 16,
            value_channels: 8,
            value_hidden: 16,
            plane_set: Default::default(),
            occupancy_head: false,
        },
        batch_size: 48,
        optimizer: OptimizerKind::Adamw,
        lr: 0.01,
        warmup_steps: 5,
        weight_decay: 0.0,
        augment_symmetries: false,
        threads: 1,
        ..TrainConfig::default()
    };
    let mut t = Trainer::new(config, Variant::Standard).unwrap();
    let before = t.evaluate(&refs).unwrap().policy_accuracy;
    let syms = vec![0; refs.len()];
    let mut acc = 0.0;
    for step in 0..400 {
        t.train_on(&refs, &syms).unwrap();
        if step % 25 == 24 {
            acc = t.evaluate(&refs).unwrap().policy_accuracy;
            if acc >= 0.99 {
                break;
            }
        }
    }
    eprintln!(
        "one-move wins: chance {chance:.3}, before {before:.3}, after {acc:.3} at step {}",
        t.step()
    );
    assert!(acc >= 0.95, "policy accuracy {acc} < 0.95");
}
