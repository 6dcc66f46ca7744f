//! Tests of the inference service: outputs against the model's own forward pass, threads, weight swaps, the cache, W/D/L, bad input.

use super::*;
use crate::config::NetConfig;
use crate::config::Precision;
use loa::{Move, Position, Rules, Variant};

fn tiny_model() -> Model {
    tiny_model_for(Variant::Standard)
}

fn tiny_model_for(variant: Variant) -> Model {
    tch::manual_seed(7);
    let net = NetConfig::tiny();
    Model::new(ModelInfo::new(&net, variant), Device::Cpu)
}

/// Inference in fp32, whatever `auto` picks on this CPU: these tests compare with
/// the reference forward pass to 1e-5.
fn fp32() -> InferenceConfig {
    InferenceConfig {
        precision: Precision::Float,
        ..InferenceConfig::default()
    }
}

/// An fp32 evaluator of `model` with the evaluation cache on (64 positions), named `label`.
fn cached_evaluator(model: &Model, label: &str) -> NetEvaluator {
    let config = InferenceConfig {
        cache_positions: 64,
        ..fp32()
    };
    NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, label).unwrap()
}

/// `a` and `b` agree to 1e-5, element by element.
fn assert_close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-5, "{x} {y}");
    }
}

/// bf16 inference (folded or not) answers within bf16's rounding of fp32: priors and
/// values within a few hundredths.
#[test]
fn bfloat16_inference_stays_close_to_fp32() {
    crate::test_threads();
    let model = tiny_model();
    let ps = positions(12);
    let (priors, values) = reference(&model, &batch_of(&ps));
    for fold_batch_norm in [true, false] {
        let config = InferenceConfig {
            precision: Precision::Bfloat16,
            fold_batch_norm,
            ..InferenceConfig::default()
        };
        let eval =
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "b").unwrap();
        let mut b = batch_of(&ps);
        eval.evaluate(&mut b).unwrap();
        let max_diff = |a: &[f32], b: &[f32]| {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0f32, f32::max)
        };
        let (dp, dv) = (max_diff(&b.priors, &priors), max_diff(&b.values, &values));
        assert!(
            dp < 0.03 && dv < 0.05,
            "fold {fold_batch_norm}: priors {dp}, values {dv}"
        );
        assert!(
            dp > 0.0,
            "bf16 rounding shows: the test compares bf16 outputs"
        );
    }
}

fn positions(n: usize) -> Vec<Position> {
    let rules = Rules::classic();
    let mut p = Position::start(Variant::Standard, &rules);
    let mut out = vec![];
    for k in 0..n {
        out.push(p);
        let moves = p.legal_moves(&rules);
        p.play(moves[(k * 11) % moves.len()]);
        if p.outcome(&rules).is_some() {
            p = Position::start(Variant::Standard, &rules);
        }
    }
    out
}

/// `model`'s weights, every one zero.
fn zeroed_weights(model: &Model) -> Vec<(String, Tensor)> {
    model
        .weights()
        .into_iter()
        .map(|(n, t)| (n, t.zeros_like()))
        .collect()
}

fn batch_of(ps: &[Position]) -> EvalBatch {
    let rules = Rules::classic();
    let mut b = EvalBatch::new();
    for p in ps {
        let moves: Vec<Move> = p.legal_moves(&rules).to_vec();
        b.push(*p, &moves);
    }
    b
}

/// Direct computation of the expected outputs with the model itself.
fn reference(model: &Model, b: &EvalBatch) -> (Vec<f32>, Vec<f32>) {
    let _g = tch::no_grad_guard();
    let x = input_tensor::of_positions(
        &b.positions,
        model.info.variant,
        crate::encoding::PlaneSet::Board,
    )
    .unwrap();
    let out = model.net.forward(&x, false);
    let values = Vec::<f32>::try_from(wdl_to_value(&out.wdl)).unwrap();
    let mut priors = vec![];
    for i in 0..b.len() {
        let row = out.policy.get(i as i64);
        let idx: Vec<i64> = b.moves[b.range(i)]
            .iter()
            .map(|m| b.positions[i].policy_index(*m).unwrap() as i64)
            .collect();
        let l = row
            .index_select(0, &Tensor::from_slice(&idx))
            .softmax(0, Kind::Float);
        priors.extend(Vec::<f32>::try_from(l).unwrap());
    }
    (priors, values)
}

#[test]
fn matches_direct_forward_from_many_threads() {
    crate::test_threads();
    let model = tiny_model();
    let config = InferenceConfig {
        max_batch: 64,
        ..fp32()
    };
    let eval = Arc::new(
        NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "tiny").unwrap(),
    );
    assert_eq!(eval.name(), "net:tiny@cpu");
    let ps = positions(40);
    let expected = {
        let b = batch_of(&ps);
        reference(&model, &b)
    };
    std::thread::scope(|s| {
        for t in 0..4 {
            let eval = eval.clone();
            let ps = &ps;
            let expected = &expected;
            s.spawn(move || {
                for round in 0..5 {
                    let lo = (t * 7 + round * 3) % 30;
                    let mut b = batch_of(&ps[lo..lo + 10]);
                    eval.evaluate(&mut b).unwrap();
                    let b_full = batch_of(ps);
                    for i in 0..10 {
                        let r = b_full.range(lo + i);
                        let got = &b.priors[b.range(i)];
                        let want = &expected.0[r];
                        for (g, w) in got.iter().zip(want) {
                            assert!((g - w).abs() < 1e-5, "{g} vs {w}");
                        }
                        let s: f32 = got.iter().sum();
                        assert!((s - 1.0).abs() < 1e-4);
                        assert!((b.values[i] - expected.1[lo + i]).abs() < 1e-5);
                    }
                }
            });
        }
    });
    assert!(eval.stats().batches.load(Ordering::Relaxed) >= 1);
    assert_eq!(eval.stats().requests.load(Ordering::Relaxed), 20);
}

/// Two inference threads (two model copies) answer exactly as one does, for one
/// caller and for several concurrent callers (each compared with the reference
/// forward pass).
#[test]
fn two_forward_threads_answer_as_one() {
    crate::test_threads();
    let model = tiny_model();
    let ps = positions(40);
    let one =
        NetEvaluator::from_weights(model.info.clone(), model.weights(), &fp32(), "1").unwrap();
    let config = InferenceConfig {
        forward_threads: 2,
        max_batch: 8,
        ..fp32()
    };
    let two = Arc::new(
        NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "2").unwrap(),
    );
    let mut a = batch_of(&ps[..12]);
    let mut b = batch_of(&ps[..12]);
    one.evaluate(&mut a).unwrap();
    two.evaluate(&mut b).unwrap();
    assert_eq!(a.values, b.values);
    assert_eq!(a.priors, b.priors);
    let expected = reference(&model, &batch_of(&ps));
    let full = batch_of(&ps);
    std::thread::scope(|s| {
        for t in 0..4 {
            let two = two.clone();
            let (ps, expected, full) = (&ps, &expected, &full);
            s.spawn(move || {
                for round in 0..6 {
                    let lo = (t * 7 + round * 5) % 32;
                    let mut b = batch_of(&ps[lo..lo + 8]);
                    two.evaluate(&mut b).unwrap();
                    for i in 0..8 {
                        let want = &expected.0[full.range(lo + i)];
                        for (g, w) in b.priors[b.range(i)].iter().zip(want) {
                            assert!((g - w).abs() < 1e-5, "{g} vs {w}");
                        }
                        assert!((b.values[i] - expected.1[lo + i]).abs() < 1e-5);
                    }
                }
            });
        }
    });
    assert_eq!(two.stats().requests.load(Ordering::Relaxed), 1 + 24);
    let bad = InferenceConfig {
        forward_threads: 0,
        ..fp32()
    };
    assert!(NetEvaluator::from_weights(model.info.clone(), model.weights(), &bad, "0").is_err());
}

/// After `set_weights` every inference thread's copy answers with the new weights:
/// concurrent calls (more than threads, with the cache on, which is cleared too) get
/// what an evaluator made from the new weights gives; a wrong shape is refused by all.
#[test]
fn new_weights_reach_every_forward_thread() {
    crate::test_threads();
    let model = tiny_model();
    let config = InferenceConfig {
        forward_threads: 3,
        max_batch: 4,
        cache_positions: 64,
        ..fp32()
    };
    let eval = Arc::new(
        NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "w").unwrap(),
    );
    let ps = positions(24);
    let call_all = |eval: &Arc<NetEvaluator>| {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..6)
                .map(|t| {
                    let eval = eval.clone();
                    let ps = &ps;
                    s.spawn(move || {
                        (0..4)
                            .map(|round| {
                                let lo = (t * 4 + round) % 20;
                                let mut b = batch_of(&ps[lo..lo + 4]);
                                eval.evaluate(&mut b).unwrap();
                                (lo, b)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        })
    };
    // Warm every copy (and cache) with the old weights.
    call_all(&eval);
    tch::manual_seed(99);
    let other = Model::new(model.info.clone(), Device::Cpu);
    eval.set_weights(other.weights()).unwrap();
    let fresh =
        NetEvaluator::from_weights(other.info.clone(), other.weights(), &fp32(), "fresh").unwrap();
    let answers = call_all(&eval);
    assert_eq!(answers.len(), 24);
    for (lo, b) in answers {
        let mut want = batch_of(&ps[lo..lo + 4]);
        fresh.evaluate(&mut want).unwrap();
        for (g, w) in b.priors.iter().zip(&want.priors) {
            assert!((g - w).abs() < 1e-5, "{g} vs {w}");
        }
        for (g, w) in b.values.iter().zip(&want.values) {
            assert!((g - w).abs() < 1e-5, "{g} vs {w}");
        }
    }
    let bad = vec![(
        "value.fc2.bias".to_string(),
        Tensor::zeros([5], (Kind::Float, Device::Cpu)),
    )];
    assert!(eval.set_weights(bad).is_err());
}

/// Not a test: positions per second of two concurrent callers (16 positions a call,
/// as a timed model player sends) with one and two inference threads, one torch
/// thread each, on the small network (`cargo test --release -p train --lib --
/// --ignored --nocapture forward_threads_speed_probe`). A probe on a shared machine,
/// not a benchmark.
#[test]
#[ignore]
fn forward_threads_speed_probe() {
    tch::manual_seed(3);
    let model = Model::new(
        ModelInfo::new(&NetConfig::small(), Variant::Standard),
        Device::Cpu,
    );
    let ps = positions(64);
    for forward_threads in [1, 2] {
        let config = InferenceConfig {
            forward_threads,
            threads: 1,
            deadline_us: 0,
            ..InferenceConfig::default()
        };
        let eval = Arc::new(
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "s").unwrap(),
        );
        let t = Instant::now();
        let until = t + Duration::from_secs(3);
        let done: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|c| {
                    let (eval, ps) = (eval.clone(), &ps);
                    s.spawn(move || {
                        let mut n = 0;
                        let mut k = c * 16;
                        while Instant::now() < until {
                            let mut b = batch_of(&ps[k % 48..k % 48 + 16]);
                            eval.evaluate(&mut b).unwrap();
                            n += b.len();
                            k += 16;
                        }
                        n
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let secs = t.elapsed().as_secs_f64();
        println!(
            "forward_threads {forward_threads}: {:>7.0} positions/s, mean batch {:.1}",
            done as f64 / secs,
            eval.stats().mean_batch()
        );
        // One MCTS player with as many search threads as inference threads.
        let mcts = selfplay::MctsConfig {
            leaves_per_batch: 16,
            ..selfplay::MctsConfig::default()
        };
        let mut player = selfplay::MctsPlayer::new(mcts, 1, eval.clone());
        player.set_threads(forward_threads);
        let game = loa::Game::new(Variant::Standard, Rules::classic());
        let t = Instant::now();
        player
            .choose_move_until(&game, t + Duration::from_secs(3), u32::MAX)
            .unwrap();
        println!(
            "forward_threads {forward_threads}, {forward_threads} search threads: {:>7.0} \
             simulations/s",
            player.last_stats().simulations as f64 / t.elapsed().as_secs_f64()
        );
    }
}

/// With the cache on: a repeated position is answered from the cache with the same
/// outputs, a different move list is a miss, and new weights clear the cache.
#[test]
fn cache_answers_repeats_and_forgets_old_weights() {
    crate::test_threads();
    let model = tiny_model();
    let eval = cached_evaluator(&model, "c");
    let plain =
        NetEvaluator::from_weights(model.info.clone(), model.weights(), &fp32(), "p").unwrap();
    let ps = positions(5);
    let mut first = batch_of(&ps);
    eval.evaluate(&mut first).unwrap();
    let stats = eval.stats();
    assert_eq!(stats.cache_lookups.load(Ordering::Relaxed), 5);
    assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 0);
    // The same positions again, in another order and with a duplicate.
    let again: Vec<Position> = vec![ps[3], ps[0], ps[3]];
    let mut second = batch_of(&again);
    eval.evaluate(&mut second).unwrap();
    assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 3);
    assert_eq!(stats.positions.load(Ordering::Relaxed), 5);
    let mut reference = batch_of(&again);
    plain.evaluate(&mut reference).unwrap();
    assert_close(&second.priors, &reference.priors);
    assert_close(&second.values, &reference.values);
    assert_eq!(plain.stats().cache_hit_rate(), None);
    assert_eq!(stats.cache_hit_rate(), Some(3.0 / 8.0));
    // The same position asked with fewer moves is not answered from the cache.
    let mut fewer = EvalBatch::new();
    let moves = ps[1].legal_moves(&Rules::classic()).to_vec();
    fewer.push(ps[1], &moves[..moves.len() - 1]);
    eval.evaluate(&mut fewer).unwrap();
    assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 3);
    // New weights: nothing is answered from the old ones.
    eval.set_weights(zeroed_weights(&model)).unwrap();
    let mut after = batch_of(&ps);
    eval.evaluate(&mut after).unwrap();
    assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 3);
    assert!(after.values.iter().all(|v| v.abs() < 1e-6));
}

/// W/D/L through the evaluator: the network's probabilities, from the pass that gives
/// the values (win − loss), never answered by the cache.
#[test]
fn wdl_comes_from_the_same_forward_pass() {
    crate::test_threads();
    let model = tiny_model();
    let eval = cached_evaluator(&model, "w");
    let ps = positions(6);
    let mut plain = batch_of(&ps);
    eval.evaluate(&mut plain).unwrap();
    let mut asked = batch_of(&ps);
    let wdl = eval.evaluate_with_wdl(&mut asked).unwrap();
    assert_eq!(wdl.len(), ps.len());
    let stats = eval.stats();
    assert_eq!(stats.positions.load(Ordering::Relaxed), 12);
    assert_eq!(stats.cache_lookups.load(Ordering::Relaxed), 6);
    assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 0);
    let expected = {
        let _g = tch::no_grad_guard();
        let x =
            input_tensor::of_positions(&ps, model.info.variant, model.info.net.plane_set).unwrap();
        let p = model.net.forward(&x, false).wdl.softmax(-1, Kind::Float);
        Vec::<f32>::try_from(p.flatten(0, -1)).unwrap()
    };
    assert_close(&wdl.concat(), &expected);
    let win_minus_loss: Vec<f32> = wdl.iter().map(|[w, _, l]| w - l).collect();
    assert_close(&win_minus_loss, &asked.values);
    assert_close(&asked.values, &plain.values);
    assert_close(&asked.priors, &plain.priors);
    let mut empty = EvalBatch::new();
    assert!(eval.evaluate_with_wdl(&mut empty).unwrap().is_empty());
}

#[test]
fn weights_swap_and_bad_inputs() {
    crate::test_threads();
    let model = tiny_model();
    let eval =
        NetEvaluator::from_weights(model.info.clone(), model.weights(), &fp32(), "tiny").unwrap();
    let ps = positions(3);
    let mut b1 = batch_of(&ps);
    eval.evaluate(&mut b1).unwrap();
    // Zero every weight: values become exactly 0 and priors uniform.
    eval.set_weights(zeroed_weights(&model)).unwrap();
    let mut b2 = batch_of(&ps);
    eval.evaluate(&mut b2).unwrap();
    assert_ne!(b1.priors, b2.priors);
    let r = b2.range(0);
    let k = r.len() as f32;
    assert!(b2.priors[r].iter().all(|p| (p - 1.0 / k).abs() < 1e-6));
    assert!(b2.values.iter().all(|v| v.abs() < 1e-6));
    // A wrong shape is refused and the old weights stay.
    let bad = vec![(
        "value.fc2.bias".to_string(),
        Tensor::zeros([5], (Kind::Float, Device::Cpu)),
    )];
    assert!(eval.set_weights(bad).is_err());
    // Positions of another layout are refused with a clear message.
    for (other, word) in [(Variant::Six, "6x6"), (Variant::Gemma, "gemma")] {
        let pos = Position::start(other, &Rules::classic());
        let mut b3 = batch_of(&[pos]);
        let err = eval.evaluate(&mut b3).unwrap_err().to_string();
        assert!(err.contains(word) && err.contains("standard"), "{err}");
    }
    // The same layout is fine.
    let mut b4 = batch_of(&[Position::start(Variant::ScrambledEggs, &Rules::classic())]);
    eval.evaluate(&mut b4).unwrap();
    // A model file of another layout is refused.
    let dir = tempfile::tempdir().unwrap();
    let gemma = dir.path().join("gemma.safetensors");
    tiny_model_for(Variant::Gemma).save(&gemma).unwrap();
    let err = eval.load_weights(&gemma).unwrap_err().to_string();
    assert!(err.contains("gemma.safetensors"), "{err}");
    // An empty batch is fine.
    let mut empty = EvalBatch::new();
    eval.evaluate(&mut empty).unwrap();
}

/// Pseudo-random game positions of `variant` for which `keep` holds (no forced passes).
fn positions_where(
    variant: Variant,
    count: usize,
    keep: impl Fn(&Position) -> bool,
) -> Vec<Position> {
    let rules = Rules::classic();
    let mut out = vec![];
    let mut p = Position::start(variant, &rules);
    let mut k = 1usize;
    for _ in 0..20_000 {
        if out.len() == count {
            break;
        }
        let moves = p.legal_moves(&rules);
        if keep(&p) && !moves[0].is_pass() {
            out.push(p);
        }
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        p.play(moves[(k >> 33) % moves.len()]);
        if p.outcome(&rules).is_some() || p.ply() > 200 {
            p = Position::start(variant, &rules);
        }
    }
    assert_eq!(out.len(), count, "{variant}: too few positions found");
    out
}

/// Priors of drops (parachute), removals (gemma), the players of ambiloa and the hex
/// board come from the network's extra policy planes, exactly as a direct forward pass
/// gives them.
#[test]
fn priors_cover_drops_removals_and_every_layout() {
    crate::test_threads();
    let has_remove = |p: &Position| {
        let mut list = loa::MoveList::new();
        p.generate_moves(&mut list);
        list.iter().any(|m| m.is_remove())
    };
    let cases: Vec<(Variant, Vec<Position>)> = vec![
        (
            Variant::Parachute,
            positions_where(Variant::Parachute, 6, |p| p.drop_pending()),
        ),
        (
            Variant::Gemma,
            positions_where(Variant::Gemma, 3, has_remove),
        ),
        (
            Variant::Ambiloa,
            positions_where(Variant::Ambiloa, 8, |_| true),
        ),
        (
            Variant::Alveole,
            positions_where(Variant::Alveole, 5, |_| true),
        ),
    ];
    for (variant, ps) in cases {
        let model = tiny_model_for(variant);
        let eval = NetEvaluator::from_weights(model.info.clone(), model.weights(), &fp32(), "tiny")
            .unwrap();
        let mut b = batch_of(&ps);
        eval.evaluate(&mut b).unwrap();
        let (priors, values) = reference(&model, &b);
        for (g, w) in b.priors.iter().zip(&priors) {
            assert!((g - w).abs() < 1e-5, "{variant}: {g} vs {w}");
        }
        for (g, w) in b.values.iter().zip(&values) {
            assert!((g - w).abs() < 1e-5, "{variant}: {g} vs {w}");
        }
        let special = b
            .moves
            .iter()
            .zip(&b.priors)
            .filter(|(m, _)| m.is_drop() || m.is_remove())
            .collect::<Vec<_>>();
        match variant {
            Variant::Parachute | Variant::Gemma => {
                assert!(!special.is_empty(), "{variant}");
                assert!(special.iter().all(|(_, &p)| p > 0.0));
            }
            _ => assert!(special.is_empty()),
        }
        for i in 0..b.len() {
            let s: f32 = b.priors[b.range(i)].iter().sum();
            assert!((s - 1.0).abs() < 1e-4, "{variant}: priors sum {s}");
        }
    }
}

/// A CUDA evaluator where there is no CUDA is an error that says so; where there is,
/// it is made.
#[test]
fn cuda_request_fails_without_cuda_and_works_with_it() {
    crate::test_threads();
    let model = tiny_model();
    let config = InferenceConfig {
        device: selfplay::Device::Cuda(None),
        ..Default::default()
    };
    let made = NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "t");
    if tch::Cuda::is_available() {
        assert!(made.is_ok(), "{:?}", made.err().map(|e| e.to_string()));
        return;
    }
    let err = made.err().unwrap().to_string();
    assert!(err.contains("CUDA is not available"), "{err}");
}
