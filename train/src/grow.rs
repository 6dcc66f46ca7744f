//! Growing a network: a wider and deeper copy of a trained network that computes the same
//! function, so that a run can move to a larger network as it matures (KataGo and lc0
//! move to bigger networks late in a run) without starting the larger one from scratch.
//!
//! [`grow_weights`] maps the weights of a `from`-shaped network onto a `to` shape with at
//! least as many blocks, tower channels, head channels and value units, the same input
//! planes, and the same kind (plain or global pooling) for every old block ([`check`]):
//! * every old weight keeps its place: channel `i` of the old tower is channel `i` of the
//!   new one, unit `i` of a head is unit `i`, and pooled features (channel means, then
//!   maxima) keep theirs;
//! * weights from a new channel or unit into an old one are zero, so the old channels,
//!   and from them the policy and value outputs, compute what they did;
//! * weights into new channels and units keep a fresh network's random initialisation, so
//!   the new channels carry signal, and the zero weights out of them get gradients and
//!   learn from the first step;
//! * an occupancy head the old network lacks ([`NetConfig::occupancy_head`]) keeps its
//!   fresh initialisation: it is a training target only, so the policy and value outputs
//!   are unchanged, and the head learns from the first step (a head is never dropped);
//! * new blocks come after the old ones, with their second batch norm's scale and shift
//!   at zero: such a block adds nothing to its input (`relu(x + 0) = x`, as `x ≥ 0` after
//!   the previous block's ReLU) until training moves that scale.
//!
//! Batch norms keep their running statistics (new channels start at mean 0, variance 1),
//! so the grown network's outputs equal the old ones in inference mode as well as in
//! training mode, to float rounding (tested below).

use crate::config::NetConfig;
use anyhow::{bail, ensure, Result};
use std::collections::BTreeMap;
use tch::Tensor;

/// Checks that a `from`-shaped network can grow into a `to`-shaped one; the message says
/// what cannot. Equal shapes can (growing is then a copy).
pub fn check(from: &NetConfig, to: &NetConfig) -> Result<()> {
    let sizes = [
        ("blocks", from.blocks, to.blocks),
        ("channels", from.channels, to.channels),
        ("policy_channels", from.policy_channels, to.policy_channels),
        ("value_channels", from.value_channels, to.value_channels),
        ("value_hidden", from.value_hidden, to.value_hidden),
    ];
    for (name, a, b) in sizes {
        if b < a {
            bail!("{name} would shrink from {a} to {b}: a network only grows");
        }
    }
    if from.occupancy_head && !to.occupancy_head {
        bail!("the occupancy head would be dropped: a network only grows");
    }
    if from.plane_set != to.plane_set {
        bail!(
            "the input planes differ ({:?}, then {:?}): a grown network reads the same planes",
            from.plane_set,
            to.plane_set
        );
    }
    if let Some(i) = (0..from.blocks).find(|&i| from.pools(i) != to.pools(i)) {
        bail!(
            "block {i} would {} global pooling (global_pool_every {}, then {}): the old \
             blocks keep their kind",
            if from.pools(i) { "lose" } else { "gain" },
            from.global_pool_every,
            to.global_pool_every
        );
    }
    Ok(())
}

/// The weights of a `to`-shaped network that computes what the `from`-shaped network
/// with weights `old` computes (see the module docs). `fresh` is a freshly initialised
/// `to`-shaped network's weights, whose random values fill the new channels and units.
/// Weights are named and shaped as [`crate::Model::weights`] gives them; the result is in
/// `fresh`'s order, for [`crate::Model::set_weights`].
pub fn grow_weights(
    old: &[(String, Tensor)],
    from: &NetConfig,
    fresh: Vec<(String, Tensor)>,
    to: &NetConfig,
) -> Result<Vec<(String, Tensor)>> {
    check(from, to)?;
    let old: BTreeMap<&str, &Tensor> = old.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut used = 0;
    let mut grown = Vec::with_capacity(fresh.len());
    for (name, tensor) in fresh {
        let mut tensor = tensor.detach().copy();
        match old.get(name.as_str()) {
            Some(old) => {
                used += 1;
                place(&name, old, &tensor, pooled_input(&name, from, to))?;
            }
            None => match block_index(&name) {
                Some(block) if block >= from.blocks => {
                    if name.ends_with(".bn2.weight") || name.ends_with(".bn2.bias") {
                        let _ = tensor.zero_();
                    }
                }
                None if name.starts_with("occupancy.") && !from.occupancy_head => {}
                _ => bail!("`{name}` is missing from the network being grown"),
            },
        }
        grown.push((name, tensor));
    }
    if used != old.len() {
        let names: Vec<&str> = grown.iter().map(|(n, _)| n.as_str()).collect();
        let extra: Vec<&str> = old
            .keys()
            .filter(|n| !names.contains(*n))
            .copied()
            .collect();
        bail!("the grown network lacks {}", extra.join(", "));
    }
    Ok(grown)
}

/// The block of a tower weight (`blocks.3.conv1.weight` → 3).
fn block_index(name: &str) -> Option<usize> {
    name.strip_prefix("blocks.")?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// For a weight whose input is pooled features (a global-pooling block's `pool_fc`, the
/// value head's `fc1`: channel means, then channel maxima): the channels of the old and
/// the new network's pooled layer.
fn pooled_input(name: &str, from: &NetConfig, to: &NetConfig) -> Option<(i64, i64)> {
    if name.ends_with(".pool_fc.weight") {
        Some((from.channels as i64, to.channels as i64))
    } else if name == "value.fc1.weight" {
        Some((from.value_channels as i64, to.value_channels as i64))
    } else {
        None
    }
}

/// Writes `old` into `new`: the old output units (the leading rows) read nothing from the
/// new input units and their old weights from the old ones, in the leading corner, or, for
/// `pooled` inputs `(c_old, c_new)`, means at `0..c_old` and maxima at
/// `c_new..c_new + c_old`.
fn place(name: &str, old: &Tensor, new: &Tensor, pooled: Option<(i64, i64)>) -> Result<()> {
    let (os, ns) = (old.size(), new.size());
    ensure!(
        os.len() == ns.len() && os.iter().zip(&ns).all(|(a, b)| a <= b),
        "`{name}`: the old shape {os:?} does not fit into {ns:?}"
    );
    if let Some((c_old, _)) = pooled {
        ensure!(
            os.len() == 2 && os[1] == 2 * c_old,
            "`{name}`: shape {os:?} is not that of a layer reading {c_old} pooled channels"
        );
    }
    tch::no_grad(|| {
        let mut rows = new.narrow(0, 0, os[0]);
        if os.len() == 1 {
            rows.copy_(old);
            return;
        }
        let _ = rows.zero_();
        match pooled {
            None => {
                let mut corner = rows;
                for (dim, &size) in os.iter().enumerate().skip(1) {
                    corner = corner.narrow(dim as i64, 0, size);
                }
                corner.copy_(old);
            }
            Some((c_old, c_new)) => {
                rows.narrow(1, 0, c_old).copy_(&old.narrow(1, 0, c_old));
                rows.narrow(1, c_new, c_old)
                    .copy_(&old.narrow(1, c_old, c_old));
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TrainConfig;
    use crate::model::{Model, ModelInfo};
    use crate::replay::ReplayWindow;
    use crate::trainer::tests::random_samples;
    use crate::trainer::Trainer;
    use loa::Variant;
    use tch::{Device, Kind};

    fn small() -> NetConfig {
        NetConfig::tiny_pooled()
    }

    /// Wider in every dimension and two blocks deeper (the fourth block pools).
    fn larger() -> NetConfig {
        NetConfig {
            blocks: 4,
            channels: 12,
            policy_channels: 6,
            value_channels: 7,
            value_hidden: 11,
            ..small()
        }
    }

    /// A trainer of `net` that has trained a few steps, so that its weights and batch
    /// norm statistics are not the initial ones.
    fn trained(net: NetConfig, variant: Variant) -> (Trainer, ReplayWindow) {
        trained_averaging(net, variant, 0.0, 5)
    }

    /// [`trained`] with `ema_decay` and `steps` steps.
    fn trained_averaging(
        net: NetConfig,
        variant: Variant,
        ema_decay: f64,
        steps: usize,
    ) -> (Trainer, ReplayWindow) {
        let window = ReplayWindow::from_samples(random_samples(variant, 64, 9), 1000, variant);
        let config = TrainConfig {
            net,
            batch_size: 16,
            lr: 0.05,
            threads: 1,
            ema_decay,
            ..TrainConfig::default()
        };
        let mut trainer = Trainer::new(config, variant).unwrap();
        for _ in 0..steps {
            trainer.train_step(&window).unwrap();
        }
        (trainer, window)
    }

    fn inputs(model: &Model, n: i64) -> Tensor {
        let (planes, size) = (
            model.net.input_planes() as i64,
            model.net.board_size() as i64,
        );
        Tensor::randint(2, [n, planes, size, size], (Kind::Uint8, Device::Cpu))
    }

    fn assert_same_outputs(a: &Model, b: &Model, x: &Tensor, train: bool) {
        let (oa, ob) = (a.net.forward(x, train), b.net.forward(x, train));
        let close = |p: &Tensor, q: &Tensor| p.allclose(q, 1e-4, 1e-5, false);
        assert!(
            close(&oa.policy, &ob.policy),
            "policy logits differ (train {train})"
        );
        assert!(close(&oa.wdl, &ob.wdl), "WDL logits differ (train {train})");
        if let (Some(p), Some(q)) = (&oa.occupancy, &ob.occupancy) {
            assert!(close(p, q), "occupancy logits differ (train {train})");
        }
    }

    /// An occupancy head grows with the tower (its outputs unchanged) or is added fresh
    /// to a network without one (the policy and value unchanged); it is never dropped.
    #[test]
    fn occupancy_heads_grow_or_are_added() {
        let with = |net: NetConfig| NetConfig {
            occupancy_head: true,
            ..net
        };
        let variant = Variant::Standard;
        for from in [small(), with(small())] {
            let (trainer, _) = trained(from.clone(), variant);
            let grown = trainer
                .grown(TrainConfig {
                    net: with(larger()),
                    ..trainer.config().clone()
                })
                .unwrap();
            let x = inputs(trainer.model(), 16);
            assert_same_outputs(trainer.model(), grown.model(), &x, false);
            assert!(grown.model().net.forward(&x, false).occupancy.is_some());
        }
        let e = check(&with(small()), &larger()).unwrap_err().to_string();
        assert!(e.contains("occupancy"), "{e}");
    }

    #[test]
    fn a_grown_network_computes_what_the_old_one_did() {
        for variant in [Variant::Standard, Variant::Alveole] {
            let (trainer, _) = trained(small(), variant);
            let grown = trainer
                .grown(TrainConfig {
                    net: larger(),
                    ..trainer.config().clone()
                })
                .unwrap();
            assert_eq!(grown.model().info.net, larger());
            assert_eq!(grown.step(), trainer.step());
            let x = inputs(trainer.model(), 32);
            // Inference mode (running statistics) and training mode (batch statistics).
            assert_same_outputs(trainer.model(), grown.model(), &x, false);
            assert_same_outputs(trainer.model(), grown.model(), &x, true);
        }
    }

    #[test]
    fn a_grown_weight_average_computes_what_the_old_average_did() {
        let (trainer, _) = trained_averaging(small(), Variant::Standard, 0.9, 20);
        let x = inputs(trainer.model(), 32);
        let outputs = |m: &Model| m.net.forward(&x, false).wdl;
        // The average lags the trained weights, so the check below can tell them apart.
        assert!(!outputs(trainer.output_model()).allclose(
            &outputs(trainer.model()),
            1e-4,
            1e-5,
            false
        ));
        let grown = trainer
            .grown(TrainConfig {
                net: larger(),
                ..trainer.config().clone()
            })
            .unwrap();
        assert_same_outputs(trainer.output_model(), grown.output_model(), &x, false);
        assert_same_outputs(trainer.model(), grown.model(), &x, false);
    }

    #[test]
    fn a_grown_network_trains_its_new_weights() {
        let variant = Variant::Standard;
        let (trainer, window) = trained(small(), variant);
        let mut grown = trainer
            .grown(TrainConfig {
                net: larger(),
                ..trainer.config().clone()
            })
            .unwrap();
        let weight = |t: &Trainer, name: &str| {
            t.model()
                .weights()
                .into_iter()
                .find(|(n, _)| n == name)
                .unwrap()
                .1
        };
        // The largest magnitude of the weights from the new channels into the old ones,
        // and of the new block's second batch norm scale.
        let new_into_old = |t: &Trainer| {
            let conv = weight(t, "blocks.0.conv1.weight");
            conv.narrow(0, 0, 8)
                .narrow(1, 8, 4)
                .abs()
                .max()
                .double_value(&[])
        };
        let new_block_scale = |t: &Trainer| {
            weight(t, "blocks.3.bn2.weight")
                .abs()
                .max()
                .double_value(&[])
        };
        assert_eq!(new_into_old(&grown), 0.0);
        assert_eq!(new_block_scale(&grown), 0.0);
        for _ in 0..3 {
            grown.train_step(&window).unwrap();
        }
        assert!(new_into_old(&grown) > 0.0);
        assert!(new_block_scale(&grown) > 0.0);
        assert_eq!(grown.step(), trainer.step() + 3);
    }

    #[test]
    fn shapes_that_cannot_grow_are_refused_by_name() {
        let from = small();
        let cases = [
            (
                NetConfig {
                    blocks: 1,
                    ..from.clone()
                },
                "blocks would shrink",
            ),
            (
                NetConfig {
                    channels: 4,
                    ..from.clone()
                },
                "channels would shrink",
            ),
            (
                NetConfig {
                    value_hidden: 2,
                    ..from.clone()
                },
                "value_hidden would shrink",
            ),
            (
                NetConfig {
                    plane_set: crate::encoding::PlaneSet::Loa,
                    ..from.clone()
                },
                "input planes",
            ),
            (
                NetConfig {
                    blocks: 3,
                    global_pool_every: 3,
                    ..from.clone()
                },
                "block 1 would lose global pooling",
            ),
        ];
        for (to, expected) in cases {
            let err = check(&from, &to).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
        check(&from, &from).unwrap();
        check(&from, &larger()).unwrap();
    }

    #[test]
    fn weights_of_another_network_are_refused() {
        let variant = Variant::Standard;
        let old = Model::new(ModelInfo::new(&small(), variant), Device::Cpu);
        let fresh = Model::new(ModelInfo::new(&larger(), variant), Device::Cpu);
        let mut weights = old.weights();
        weights.push((
            "stem.extra".into(),
            Tensor::zeros([1], (Kind::Float, Device::Cpu)),
        ));
        let err = grow_weights(&weights, &small(), fresh.weights(), &larger())
            .unwrap_err()
            .to_string();
        assert!(err.contains("stem.extra"), "{err}");
        let weights: Vec<_> = old
            .weights()
            .into_iter()
            .filter(|(n, _)| n != "blocks.0.bn1.running_var")
            .collect();
        let err = grow_weights(&weights, &small(), fresh.weights(), &larger())
            .unwrap_err()
            .to_string();
        assert!(err.contains("blocks.0.bn1.running_var"), "{err}");
    }
}
