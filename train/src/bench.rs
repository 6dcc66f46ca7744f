//! Speed measurements of the network (for `loazero bench net`): forward positions/s at a
//! batch size, and training samples/s. Not tests: they only measure.

use crate::config::{NetConfig, Precision, TrainConfig};
use crate::folded::FoldedNet;
use crate::input_tensor;
use crate::model::{Model, ModelInfo};
use crate::replay::ReplayWindow;
use crate::trainer::Trainer;
use loa::{Move, Position, Rules, Variant};
use selfplay::data::Sample;
use std::time::Instant;
use tch::{Device, Kind};

/// `count` positions from seeded pseudo-random games of `variant`, as training samples
/// with a uniform policy.
pub fn sample_positions(variant: Variant, count: usize) -> Vec<Sample> {
    let rules = Rules::classic();
    let mut pos = Position::start(variant, &rules);
    let mut out = Vec::with_capacity(count);
    let mut k = 0usize;
    while out.len() < count {
        let moves: Vec<Move> = pos.legal_moves(&rules).to_vec();
        let n = moves.len();
        out.push(Sample {
            position: pos,
            rules,
            moves: moves.clone(),
            policy: vec![1.0 / n as f32; n],
            search_value: 0.0,
            outcome: [1.0, 0.0, -1.0][k % 3],
            tree_only: false,
            final_pieces: None,
        });
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        pos.play(moves[(k >> 33) % n]);
        if pos.outcome(&rules).is_some() || pos.ply() > 120 {
            pos = Position::start(variant, &rules);
        }
    }
    out
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct Throughput {
    /// Positions (forward) or samples (training) per second.
    pub per_sec: f64,
    /// Iterations timed.
    pub iterations: usize,
    /// Seconds timed.
    pub seconds: f64,
}

fn synchronize(device: Device) {
    if let Device::Cuda(i) = device {
        tch::Cuda::synchronize(i as i64);
    }
}

/// Forward passes (inference mode, `no_grad`, `u8` input copied from the CPU each time,
/// outputs copied back) of a freshly initialised `net` at `batch` positions, for at least
/// `min_secs` after a warm-up. `kind` is the inference precision (as the inference
/// service applies it: the folded net is folded in fp32, then converted); `folded` runs the
/// inference form ([`FoldedNet`]) instead of the reference forward pass. `threads` is the
/// setting the passes stand for (`train.inference.threads`): with 0, on the CPU, the
/// calling thread's torch threads follow the machine's load as the inference thread's do
/// ([`crate::auto_threads`]); other counts are the caller's to set.
#[allow(clippy::too_many_arguments)]
pub fn forward(
    net: &NetConfig,
    variant: Variant,
    device: Device,
    kind: Kind,
    batch: usize,
    min_secs: f64,
    folded: bool,
    threads: usize,
) -> Throughput {
    let _guard = tch::no_grad_guard();
    let mut model = Model::new(ModelInfo::new(net, variant), device);
    if !folded && kind != Kind::Float {
        model.vs.set_kind(kind);
        model.net.set_input_kind(kind);
    }
    let samples = sample_positions(variant, batch);
    let x = input_tensor::of_positions(samples.iter().map(|s| &s.position), variant, net.plane_set)
        .expect("positions of the variant make whole rows");
    let folded = folded.then(|| FoldedNet::with_kind(&model.net, kind));
    let run = || {
        let out = match &folded {
            Some(f) => f.forward(&x),
            None => model.net.forward(&x, false),
        };
        let p = out.policy.to_kind(Kind::Float).to_device(Device::Cpu);
        let v = out.wdl.to_kind(Kind::Float).to_device(Device::Cpu);
        (p, v)
    };
    for _ in 0..3 {
        let _ = run();
    }
    synchronize(device);
    // As the inference thread does: on the CPU, torch's threads follow the machine's load.
    let mut auto =
        (threads == 0 && !device.is_cuda()).then(crate::auto_threads::AutoThreads::from_torch);
    let start = Instant::now();
    let mut iterations = 0;
    while iterations < 2 || start.elapsed().as_secs_f64() < min_secs {
        if let Some(auto) = &mut auto {
            auto.update();
        }
        let _ = run();
        iterations += 1;
    }
    synchronize(device);
    let seconds = start.elapsed().as_secs_f64();
    Throughput {
        per_sec: (iterations * batch) as f64 / seconds,
        iterations,
        seconds,
    }
}

/// Training steps (batch building with augmentation, forward, backward, optimizer) of a
/// fresh `net` at `batch` samples per step in `precision` (`TrainConfig::precision`), for
/// at least `min_secs` after a warm-up, with `threads` torch threads as `train.threads` sets
/// them (0: following the machine's load on the CPU).
pub fn training(
    net: &NetConfig,
    variant: Variant,
    device: selfplay::Device,
    batch: usize,
    precision: Precision,
    min_secs: f64,
    threads: usize,
) -> anyhow::Result<Throughput> {
    let config = TrainConfig {
        net: net.clone(),
        device,
        batch_size: batch,
        precision,
        threads,
        ..TrainConfig::default()
    };
    let window = ReplayWindow::from_samples(sample_positions(variant, 4096), 4096, variant);
    let mut trainer = Trainer::new(config, variant)?;
    let device = crate::device::torch_device(device);
    for _ in 0..2 {
        trainer.train_step(&window)?;
    }
    synchronize(device);
    let start = Instant::now();
    let mut iterations = 0;
    while iterations < 2 || start.elapsed().as_secs_f64() < min_secs {
        trainer.train_step(&window)?;
        iterations += 1;
    }
    synchronize(device);
    let seconds = start.elapsed().as_secs_f64();
    Ok(Throughput {
        per_sec: (iterations * batch) as f64 / seconds,
        iterations,
        seconds,
    })
}

/// The inference service under load: `clients` threads each evaluating requests of
/// `per_request` positions (with their legal moves) through one [`crate::NetEvaluator`] for
/// at least `min_secs`. Returns the throughput and the mean positions per forward pass.
pub fn evaluator(
    net: &NetConfig,
    variant: Variant,
    config: &crate::config::InferenceConfig,
    clients: usize,
    per_request: usize,
    min_secs: f64,
) -> anyhow::Result<(Throughput, f64)> {
    use selfplay::{EvalBatch, Evaluator};
    let model = Model::new(ModelInfo::new(net, variant), Device::Cpu);
    let eval =
        crate::NetEvaluator::from_weights(model.info.clone(), model.weights(), config, "bench")?;
    drop(model);
    let rules = Rules::classic();
    let samples = sample_positions(variant, per_request);
    let mut template = EvalBatch::new();
    for s in &samples {
        template.push(s.position, &s.position.legal_moves(&rules));
    }
    let run = |seconds: f64| -> anyhow::Result<usize> {
        let total = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| -> anyhow::Result<()> {
            let handles: Vec<_> = (0..clients)
                .map(|_| {
                    let (eval, template, total) = (&eval, &template, &total);
                    scope.spawn(move || -> anyhow::Result<()> {
                        let start = Instant::now();
                        let mut batch = template.clone();
                        while start.elapsed().as_secs_f64() < seconds {
                            eval.evaluate(&mut batch)?;
                            total.fetch_add(batch.len(), std::sync::atomic::Ordering::Relaxed);
                        }
                        Ok(())
                    })
                })
                .collect();
            for h in handles {
                h.join().expect("client thread")?;
            }
            Ok(())
        })?;
        Ok(total.into_inner())
    };
    run(0.2)?;
    let before = (
        eval.stats()
            .batches
            .load(std::sync::atomic::Ordering::Relaxed),
        eval.stats()
            .positions
            .load(std::sync::atomic::Ordering::Relaxed),
    );
    let start = Instant::now();
    let positions = run(min_secs)?;
    let seconds = start.elapsed().as_secs_f64();
    let batches = eval
        .stats()
        .batches
        .load(std::sync::atomic::Ordering::Relaxed)
        - before.0;
    let evaluated = eval
        .stats()
        .positions
        .load(std::sync::atomic::Ordering::Relaxed)
        - before.1;
    Ok((
        Throughput {
            per_sec: positions as f64 / seconds,
            iterations: batches as usize,
            seconds,
        },
        evaluated as f64 / batches.max(1) as f64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every measurement runs for every variant (input and policy layouts of each).
    #[test]
    fn measurements_run_for_every_variant() {
        crate::test_threads();
        let net = NetConfig::tiny();
        let inference = crate::config::InferenceConfig::default();
        for variant in Variant::ALL {
            for (folded, kind) in [
                (false, Kind::Float),
                (true, Kind::Float),
                (false, Kind::BFloat16),
                (true, Kind::BFloat16),
            ] {
                // 1 thread: fixed, as the test harness sets it (0 would follow the load).
                let f = forward(&net, variant, Device::Cpu, kind, 4, 0.0, folded, 1);
                assert!(f.per_sec > 0.0 && f.iterations >= 2, "{variant}");
            }
            for precision in [Precision::Float, Precision::Bfloat16] {
                let t =
                    training(&net, variant, selfplay::Device::Cpu, 8, precision, 0.0, 1).unwrap();
                assert!(t.per_sec > 0.0, "{variant}");
            }
            let (e, mean_batch) = evaluator(&net, variant, &inference, 1, 4, 0.05).unwrap();
            assert!(e.per_sec > 0.0 && mean_batch >= 1.0, "{variant}");
        }
    }
}
