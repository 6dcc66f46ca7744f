//! The inference form of a [`Net`]: every batch norm folded into the convolution before
//! it, and the input plane scales folded into the stem.
//!
//! For a convolution `W` (no bias) followed by inference-mode batch norm with running mean
//! `μ`, variance `σ²`, weight `γ` and bias `β`, the pair equals one convolution with
//! `W' = W · γ/√(σ² + ε)` (per output channel) and bias `b' = β − μ · γ/√(σ² + ε)`. The
//! stem's input scaling `x · s` (per input plane) becomes `W'[o, i] = W[o, i] · s[i]`
//! (zero padding is unaffected). So a forward pass does two thirds of the memory passes
//! of the reference one, with the same outputs up to float rounding (a test checks
//! 1e-4).
//!
//! On the CPU the folded network keeps its activations and convolution weights
//! channels-last (NHWC strides behind the same NCHW shapes), the layout oneDNN's
//! convolutions work in; in the default NCHW layout every convolution reorders its input
//! and output (`loazero bench net` measures what that is worth on a machine).
//!
//! Inference needs only the policy and the value: an occupancy head (a training target)
//! is not folded, and [`FoldedNet::forward`] returns no occupancy.
//!
//! A [`FoldedNet`] is a snapshot: rebuild it after the [`Net`]'s weights change. Like the
//! net it is `Send`, not `Sync` (one inference thread owns it).

use crate::net::{cpu_channels_last, global_pool, Net, NetOutput};
use tch::nn;
use tch::{Kind, Tensor};

/// Batch-norm epsilon of every layer of [`Net`] (tch's default, which the net uses).
const BN_EPS: f64 = 1e-5;

/// A convolution with bias.
struct Conv {
    weight: Tensor,
    bias: Tensor,
    padding: i64,
}

impl Conv {
    /// `conv` (no bias) followed by inference-mode `bn`, as one convolution.
    fn fold(conv: &nn::Conv2D, bn: &nn::BatchNorm) -> Conv {
        let inv_std = (&bn.running_var + BN_EPS).rsqrt();
        let gamma = bn
            .ws
            .as_ref()
            .map_or_else(|| inv_std.ones_like(), |w| w.copy());
        let beta = bn
            .bs
            .as_ref()
            .map_or_else(|| inv_std.zeros_like(), |b| b.copy());
        let factor = gamma * inv_std;
        let weight = &conv.ws * factor.view([-1, 1, 1, 1]);
        let mut bias = beta - &bn.running_mean * &factor;
        if let Some(b) = &conv.bs {
            bias += b * &factor;
        }
        let k = conv.ws.size()[2];
        Conv {
            weight: cpu_channels_last(weight.detach()),
            bias: bias.detach(),
            padding: k / 2,
        }
    }

    /// A plain convolution with its own bias (zero when it has none).
    fn plain(conv: &nn::Conv2D) -> Conv {
        let out = conv.ws.size()[0];
        let bias = conv.bs.as_ref().map_or_else(
            || Tensor::zeros([out], (conv.ws.kind(), conv.ws.device())),
            |b| b.copy(),
        );
        let k = conv.ws.size()[2];
        Conv {
            weight: cpu_channels_last(conv.ws.copy().detach()),
            bias: bias.detach(),
            padding: k / 2,
        }
    }

    fn to_kind(&self, kind: Kind) -> Conv {
        Conv {
            weight: cpu_channels_last(self.weight.to_kind(kind)),
            bias: self.bias.to_kind(kind),
            padding: self.padding,
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        x.conv2d(
            &self.weight,
            Some(&self.bias),
            [1, 1],
            [self.padding, self.padding],
            [1, 1],
            1,
        )
    }
}

/// A fully connected layer.
struct Linear {
    weight: Tensor,
    bias: Option<Tensor>,
}

impl Linear {
    fn of(l: &nn::Linear) -> Linear {
        Linear {
            weight: l.ws.copy().detach(),
            bias: l.bs.as_ref().map(|b| b.copy().detach()),
        }
    }

    fn to_kind(&self, kind: Kind) -> Linear {
        Linear {
            weight: self.weight.to_kind(kind),
            bias: self.bias.as_ref().map(|b| b.to_kind(kind)),
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        x.linear(&self.weight, self.bias.as_ref())
    }
}

struct Block {
    conv1: Conv,
    conv2: Conv,
    pool_fc: Option<Linear>,
}

/// The folded network (see the module docs).
pub struct FoldedNet {
    stem: Conv,
    blocks: Vec<Block>,
    policy_conv: Conv,
    policy_out: Conv,
    value_conv: Conv,
    value_fc1: Linear,
    value_fc2: Linear,
}

impl FoldedNet {
    /// Folds `net`'s current weights (its batch norms' running statistics included).
    /// Call under `no_grad`.
    pub fn new(net: &Net) -> FoldedNet {
        let mut stem = Conv::fold(&net.stem, &net.stem_bn);
        // Input scales `[1, planes, 1, 1]` multiply the stem's input channels.
        stem.weight =
            cpu_channels_last((&stem.weight * net.scales.to_kind(stem.weight.kind())).detach());
        FoldedNet {
            stem,
            blocks: net
                .blocks
                .iter()
                .map(|b| Block {
                    conv1: Conv::fold(&b.conv1, &b.bn1),
                    conv2: Conv::fold(&b.conv2, &b.bn2),
                    pool_fc: b.pool_fc.as_ref().map(Linear::of),
                })
                .collect(),
            policy_conv: Conv::fold(&net.policy_conv, &net.policy_bn),
            policy_out: Conv::plain(&net.policy_out),
            value_conv: Conv::fold(&net.value_conv, &net.value_bn),
            value_fc1: Linear::of(&net.value_fc1),
            value_fc2: Linear::of(&net.value_fc2),
        }
    }

    /// The inference forward pass on stored planes (`u8` `[B, planes, N, N]`, on the
    /// folded weights' device): the same outputs as [`Net::forward`] with `train = false`.
    pub fn forward(&self, planes: &Tensor) -> NetOutput {
        let w = &self.stem.weight;
        let x = cpu_channels_last(planes.to_device(w.device()).to_kind(w.kind()));
        let mut x = self.stem.forward(&x).relu_();
        for b in &self.blocks {
            let mut y = b.conv1.forward(&x).relu_();
            if let Some(fc) = &b.pool_fc {
                y += fc.forward(&global_pool(&y)).unsqueeze(-1).unsqueeze(-1);
            }
            let mut y = b.conv2.forward(&y);
            y += &x;
            x = y.relu_();
        }
        let policy = self
            .policy_out
            .forward(&self.policy_conv.forward(&x).relu_())
            .flatten(1, -1);
        let v = self.value_conv.forward(&x).relu_();
        let wdl = self
            .value_fc2
            .forward(&self.value_fc1.forward(&global_pool(&v)).relu_());
        // Search reads no occupancy: the folded net leaves that head out.
        NetOutput {
            policy,
            wdl,
            occupancy: None,
        }
    }

    /// [`FoldedNet::new`] in `kind`: folded in fp32, then converted (unless `kind` is
    /// `Float`). The one way the inference service and `bench net` build it.
    pub fn with_kind(net: &Net, kind: Kind) -> FoldedNet {
        let folded = FoldedNet::new(net);
        if kind == Kind::Float {
            folded
        } else {
            folded.to_kind(kind)
        }
    }

    /// The same network with every weight converted to `kind` (for example
    /// `Kind::BFloat16`; see `InferenceConfig::precision`). Fold first, then convert:
    /// folding in the lower precision would round twice.
    pub fn to_kind(&self, kind: Kind) -> FoldedNet {
        FoldedNet {
            stem: self.stem.to_kind(kind),
            blocks: self
                .blocks
                .iter()
                .map(|b| Block {
                    conv1: b.conv1.to_kind(kind),
                    conv2: b.conv2.to_kind(kind),
                    pool_fc: b.pool_fc.as_ref().map(|l| l.to_kind(kind)),
                })
                .collect(),
            policy_conv: self.policy_conv.to_kind(kind),
            policy_out: self.policy_out.to_kind(kind),
            value_conv: self.value_conv.to_kind(kind),
            value_fc1: self.value_fc1.to_kind(kind),
            value_fc2: self.value_fc2.to_kind(kind),
        }
    }

    /// The floating-point kind of the weights.
    pub fn kind(&self) -> Kind {
        self.stem.weight.kind()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NetConfig;
    use crate::encoding::PlaneSet;
    use crate::input_tensor;
    use loa::{Rules, Variant};

    /// Batch norms with non-trivial statistics, so that folding is really exercised.
    fn randomise_batch_norms(vs: &nn::VarStore) {
        let _g = tch::no_grad_guard();
        for (name, mut t) in vs.variables() {
            let is_bn = name.contains("bn");
            if name.contains("running_var") || (is_bn && name.ends_with(".weight")) {
                // Variances and scales: positive, away from 1.
                t.copy_(&(Tensor::rand_like(&t) + 0.5));
            } else if name.contains("running_mean") || (is_bn && name.ends_with(".bias")) {
                t.copy_(&(Tensor::randn_like(&t) * 0.3));
            }
        }
    }

    #[test]
    fn folded_outputs_match_the_reference_for_every_variant() {
        crate::test_threads();
        tch::manual_seed(7);
        let config = NetConfig::tiny_pooled();
        let rules = Rules::classic();
        for (variant, plane_set) in Variant::ALL
            .into_iter()
            .flat_map(|v| [(v, PlaneSet::Board), (v, PlaneSet::Loa)])
        {
            let config = NetConfig {
                plane_set,
                ..config.clone()
            };
            let vs = nn::VarStore::new(tch::Device::Cpu);
            let net = Net::new(&vs.root(), &config, variant);
            randomise_batch_norms(&vs);
            let _g = tch::no_grad_guard();
            let folded = FoldedNet::new(&net);
            let mut pos = loa::Position::start(variant, &rules);
            let mut positions = Vec::new();
            for k in 0..6 {
                positions.push(pos);
                let moves = pos.legal_moves(&rules);
                pos.play(moves[(k * 7) % moves.len()]);
            }
            let x = input_tensor::of_positions(&positions, variant, plane_set).unwrap();
            let a = net.forward(&x, false);
            let b = folded.forward(&x);
            let dp = (&a.policy - &b.policy).abs().max().double_value(&[]);
            let dv = (&a.wdl - &b.wdl).abs().max().double_value(&[]);
            assert!(dp < 1e-4 && dv < 1e-4, "{variant}: policy {dp}, wdl {dv}");
            assert!(a.policy.abs().max().double_value(&[]) > 1e-3, "{variant}");
            // bf16 (8 mantissa bits): the move probabilities and the win/draw/loss stay
            // within a few hundredths of fp32's (up to 0.05 seen with these randomised
            // batch norms, which scale activations far more than trained ones).
            let c = folded.to_kind(Kind::BFloat16).forward(&x);
            assert_eq!(c.policy.kind(), Kind::BFloat16);
            let probs = |t: &Tensor| t.to_kind(Kind::Float).softmax(-1, Kind::Float);
            let dp = (probs(&a.policy) - probs(&c.policy))
                .abs()
                .max()
                .double_value(&[]);
            let dv = (probs(&a.wdl) - probs(&c.wdl))
                .abs()
                .max()
                .double_value(&[]);
            assert!(
                dp < 0.1 && dv < 0.1,
                "{variant} bf16: policy {dp}, wdl {dv}"
            );
        }
    }
}
