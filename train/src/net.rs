//! The policy-value network: a residual tower with optional global-pooling blocks, a
//! convolutional policy head (the variant's policy planes over the grid) and a
//! win/draw/loss value head.
//!
//! Every layer is size-agnostic (convolutions and global pooling), and the forward pass
//! never bakes a batch size, so traced exports run at any batch size. The stem takes the
//! variant's input planes ([`crate::encoding::input_layout`]).
//!
//! Outputs of [`Net::forward`], for a variant with grid side `N` and `P` policy planes
//! ([`crate::policy::policy_planes`]: directions, then a drop or removal plane):
//! * policy logits `[B, P·N·N]`, index `plane · N·N + row · N + col` — exactly
//!   [`crate::policy::PolicyIndex::policy_index`] (grid cell = `row · N + col`);
//! * WDL logits `[B, 3]` in the order win, draw, loss for the side (team) to move; the
//!   scalar value is `P(win) − P(loss)` ([`wdl_to_value`]);
//! * with an occupancy head ([`NetConfig::occupancy_head`]), occupancy logits
//!   `[B, 3, N, N]`: for every grid cell, empty, own piece, opponent's piece when the
//!   game ends (a training target only: exports and search leave it out).

use crate::config::NetConfig;
use crate::encoding::plane_scales;
use crate::policy::policy_planes;
use loa::Variant;
use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};

/// `t` (4-D, NCHW shape) with channels-last strides on the CPU; unchanged elsewhere.
/// Same shape and values: only the memory order changes (oneDNN's convolutions work
/// channels-last; NCHW tensors are reordered on every call).
pub(crate) fn cpu_channels_last(t: Tensor) -> Tensor {
    if t.device() == Device::Cpu && t.dim() == 4 {
        t.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
    } else {
        t
    }
}

/// `conv` (weights in fp32) applied in `kind`: the weights are cast (differentiably, so
/// gradients reach the fp32 weights) and laid out channels-last on the CPU.
fn conv_in(x: &Tensor, conv: &nn::Conv2D, kind: Kind) -> Tensor {
    let pad = conv.ws.size()[2] / 2;
    x.conv2d(
        &cpu_channels_last(conv.ws.to_kind(kind)),
        conv.bs.as_ref().map(|b| b.to_kind(kind)).as_ref(),
        [1, 1],
        [pad, pad],
        [1, 1],
        1,
    )
}

fn conv(p: nn::Path, cin: usize, cout: usize, k: i64) -> nn::Conv2D {
    nn::conv2d(
        p,
        cin as i64,
        cout as i64,
        k,
        nn::ConvConfig {
            padding: k / 2,
            bias: false,
            ..Default::default()
        },
    )
}

fn bn(p: nn::Path, c: usize) -> nn::BatchNorm {
    nn::batch_norm2d(p, c as i64, Default::default())
}

/// Channel means and maxima over the board: `[B, C, H, W]` → `[B, 2C]`. A channels-last
/// `x` (the CPU's layout, see [`cpu_channels_last`]) goes through whole-board average and
/// max pooling, whose channels-last kernels are vectorised across channels; torch's
/// reductions over dims 2 and 3 walk each channel with a stride there, which made their
/// bf16 maximum a large part of a self-play process's time (`loazero bench net` shows
/// the difference).
pub(crate) fn global_pool(x: &Tensor) -> Tensor {
    let size = x.size();
    let channels_last = size.len() == 4 && {
        let (c, w) = (size[1], size[3]);
        x.stride() == [size[2] * w * c, 1, w * c, c]
    };
    if channels_last {
        let board = [size[2], size[3]];
        let mean = x.avg_pool2d(board, board, [0, 0], false, true, None::<i64>);
        let max = x.max_pool2d(board, board, [0, 0], [1, 1], false);
        return Tensor::cat(&[mean.flatten(1, -1), max.flatten(1, -1)], 1);
    }
    let mean = x.mean_dim(&[2i64, 3][..], false, None);
    let max = x.amax(&[2i64, 3][..], false);
    Tensor::cat(&[mean, max], 1)
}

pub(crate) struct ResBlock {
    pub(crate) conv1: nn::Conv2D,
    pub(crate) bn1: nn::BatchNorm,
    pub(crate) conv2: nn::Conv2D,
    pub(crate) bn2: nn::BatchNorm,
    /// Global pooling: pooled features of the first half → per-channel bias.
    pub(crate) pool_fc: Option<nn::Linear>,
}

impl ResBlock {
    fn new(p: nn::Path, c: usize, global_pool: bool) -> ResBlock {
        ResBlock {
            conv1: conv(&p / "conv1", c, c, 3),
            bn1: bn(&p / "bn1", c),
            conv2: conv(&p / "conv2", c, c, 3),
            bn2: bn(&p / "bn2", c),
            pool_fc: global_pool
                .then(|| nn::linear(&p / "pool_fc", 2 * c as i64, c as i64, Default::default())),
        }
    }

    /// [`ResBlock::forward`] with activations in `kind` (batch norms and the pooling
    /// layer in fp32; see [`Net::forward_mixed`]).
    fn forward_mixed(&self, x: &Tensor, train: bool, kind: Kind) -> Tensor {
        let y = self
            .bn1
            .forward_t(&conv_in(x, &self.conv1, kind), train)
            .relu();
        let y = match &self.pool_fc {
            Some(fc) => {
                let bias = global_pool(&y).to_kind(Kind::Float).apply(fc).to_kind(kind);
                &y + bias.unsqueeze(-1).unsqueeze(-1)
            }
            None => y,
        };
        let y = self.bn2.forward_t(&conv_in(&y, &self.conv2, kind), train);
        (x + y).relu()
    }

    fn forward(&self, x: &Tensor, train: bool) -> Tensor {
        let y = self.bn1.forward_t(&x.apply(&self.conv1), train).relu();
        // Out of place: autograd needs the relu output unchanged.
        let y = match &self.pool_fc {
            Some(fc) => &y + global_pool(&y).apply(fc).unsqueeze(-1).unsqueeze(-1),
            None => y,
        };
        let y = self.bn2.forward_t(&y.apply(&self.conv2), train);
        (x + y).relu()
    }
}

/// The network's layers. Holds tensors that live in a [`nn::VarStore`]; `Send`, not `Sync`.
pub struct Net {
    config: NetConfig,
    variant: Variant,
    board_size: usize,
    input_planes: usize,
    policy_planes: usize,
    pub(crate) stem: nn::Conv2D,
    pub(crate) stem_bn: nn::BatchNorm,
    pub(crate) blocks: Vec<ResBlock>,
    pub(crate) policy_conv: nn::Conv2D,
    pub(crate) policy_bn: nn::BatchNorm,
    pub(crate) policy_out: nn::Conv2D,
    pub(crate) value_conv: nn::Conv2D,
    pub(crate) value_bn: nn::BatchNorm,
    pub(crate) value_fc1: nn::Linear,
    pub(crate) value_fc2: nn::Linear,
    /// The occupancy head's 1×1 convolution (tower channels → 3, with bias), if the net
    /// has one.
    pub(crate) occupancy: Option<nn::Conv2D>,
    /// `[1, planes, 1, 1]` input scales (see [`plane_scales`]), in the input kind.
    pub(crate) scales: Tensor,
}

/// Network outputs for a batch.
pub struct NetOutput {
    /// `[B, P·N·N]` policy logits (unmasked).
    pub policy: Tensor,
    /// `[B, 3]` win/draw/loss logits.
    pub wdl: Tensor,
    /// `[B, 3, N, N]` occupancy logits (empty, own, opponent; fp32), for a net with an
    /// occupancy head.
    pub occupancy: Option<Tensor>,
}

/// Multiply-accumulates of one forward pass per position of a `config` network on
/// `variant`'s board: the convolutions and fully connected layers (batch norms, ReLUs,
/// additions and pooling are a few operations per activation and left out). FLOPs are
/// twice this.
pub fn macs_per_position(config: &NetConfig, variant: Variant) -> u64 {
    let n = variant.geometry().size as u64;
    let cells = n * n;
    let c = config.channels as u64;
    let input = plane_scales(variant, config.plane_set).len() as u64;
    let (pc, vc, vh) = (
        config.policy_channels as u64,
        config.value_channels as u64,
        config.value_hidden as u64,
    );
    let pooled_blocks = config
        .blocks
        .checked_div(config.global_pool_every)
        .unwrap_or(0) as u64;
    let stem = cells * c * input * 9;
    let tower = config.blocks as u64 * 2 * cells * c * c * 9 + pooled_blocks * 2 * c * c;
    let policy = cells * pc * c * 9 + cells * policy_planes(variant) as u64 * pc;
    let value = cells * vc * c + 2 * vc * vh + vh * 3;
    let occupancy = if config.occupancy_head {
        cells * c * 3
    } else {
        0
    };
    stem + tower + policy + value + occupancy
}

/// `P(win) − P(loss)` from `[B, 3]` WDL logits: `[B]`.
pub fn wdl_to_value(wdl: &Tensor) -> Tensor {
    let p = wdl.softmax(-1, Kind::Float);
    p.select(1, 0) - p.select(1, 2)
}

impl Net {
    /// Creates the layers under `p` (variables named like `blocks.3.conv1.weight`) for
    /// `variant`'s input and policy layout. Weights are initialised from torch's global
    /// RNG (`tch::manual_seed`).
    pub fn new(p: &nn::Path, config: &NetConfig, variant: Variant) -> Net {
        let c = config.channels;
        let board_size = variant.geometry().size as usize;
        let scales = plane_scales(variant, config.plane_set);
        let input_planes = scales.len();
        let policy_planes = policy_planes(variant);
        let blocks = (0..config.blocks)
            .map(|i| ResBlock::new(p / "blocks" / i, c, config.pools(i)))
            .collect();
        let scales = Tensor::from_slice(&scales)
            .view([1, input_planes as i64, 1, 1])
            .to_device(p.device());
        Net {
            config: config.clone(),
            variant,
            board_size,
            input_planes,
            policy_planes,
            stem: conv(p / "stem" / "conv", input_planes, c, 3),
            stem_bn: bn(p / "stem" / "bn", c),
            blocks,
            policy_conv: conv(p / "policy" / "conv", c, config.policy_channels, 3),
            policy_bn: bn(p / "policy" / "bn", config.policy_channels),
            policy_out: nn::conv2d(
                p / "policy" / "out",
                config.policy_channels as i64,
                policy_planes as i64,
                1,
                Default::default(),
            ),
            value_conv: conv(p / "value" / "conv", c, config.value_channels, 1),
            value_bn: bn(p / "value" / "bn", config.value_channels),
            value_fc1: nn::linear(
                p / "value" / "fc1",
                2 * config.value_channels as i64,
                config.value_hidden as i64,
                Default::default(),
            ),
            value_fc2: nn::linear(
                p / "value" / "fc2",
                config.value_hidden as i64,
                3,
                Default::default(),
            ),
            occupancy: config
                .occupancy_head
                .then(|| nn::conv2d(p / "occupancy" / "conv", c as i64, 3, 1, Default::default())),
            scales,
        }
    }

    /// The shape this net was built with.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The variant whose layout the net reads and writes.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Side of the grid (`N`).
    pub fn board_size(&self) -> usize {
        self.board_size
    }

    /// Number of input planes.
    pub fn input_planes(&self) -> usize {
        self.input_planes
    }

    /// Number of policy planes.
    pub fn policy_planes(&self) -> usize {
        self.policy_planes
    }

    /// Length of the policy output.
    pub fn policy_len(&self) -> usize {
        self.policy_planes * self.board_size * self.board_size
    }

    /// Makes inputs of `kind` (call after converting the store to half/bf16).
    pub fn set_input_kind(&mut self, kind: Kind) {
        self.scales = self.scales.to_kind(kind);
    }

    /// Converts stored planes (`u8` `[B, planes, N, N]`, any device) into the network's
    /// input: the net's device and kind, scaled.
    pub fn prepare_input(&self, planes: &Tensor) -> Tensor {
        planes
            .to_device(self.scales.device())
            .to_kind(self.scales.kind())
            * &self.scales
    }

    /// The forward pass on stored planes (`u8` `[B, planes, N, N]`). `train` selects batch
    /// statistics (and updates the running ones) in batch norm; `false` for inference.
    pub fn forward(&self, planes: &Tensor, train: bool) -> NetOutput {
        let x = self.prepare_input(planes);
        let mut x = self.stem_bn.forward_t(&x.apply(&self.stem), train).relu();
        for b in &self.blocks {
            x = b.forward(&x, train);
        }
        let p = self
            .policy_bn
            .forward_t(&x.apply(&self.policy_conv), train)
            .relu()
            .apply(&self.policy_out)
            .flatten(1, -1);
        let v = self
            .value_bn
            .forward_t(&x.apply(&self.value_conv), train)
            .relu();
        let wdl = global_pool(&v)
            .apply(&self.value_fc1)
            .relu()
            .apply(&self.value_fc2);
        let occupancy = self.occupancy.as_ref().map(|conv| x.apply(conv));
        NetOutput {
            policy: p,
            wdl,
            occupancy,
        }
    }

    /// [`Net::forward`] in mixed precision: weights stay fp32 (the optimizer's master
    /// copy; each step casts them, differentiably), convolutions and activations run in
    /// `kind` (bf16: AMX or AVX-512 BF16 kernels on the CPU), channels-last on the CPU;
    /// batch norms (their statistics and affine parameters), the fully connected layers
    /// and the outputs are fp32. The outputs are the same function as [`Net::forward`]'s
    /// up to `kind`'s rounding.
    pub fn forward_mixed(&self, planes: &Tensor, train: bool, kind: Kind) -> NetOutput {
        let x = cpu_channels_last(self.prepare_input(planes).to_kind(kind));
        let mut x = self
            .stem_bn
            .forward_t(&conv_in(&x, &self.stem, kind), train)
            .relu();
        for b in &self.blocks {
            x = b.forward_mixed(&x, train, kind);
        }
        let p = self
            .policy_bn
            .forward_t(&conv_in(&x, &self.policy_conv, kind), train)
            .relu();
        let p = conv_in(&p, &self.policy_out, kind)
            .to_kind(Kind::Float)
            .flatten(1, -1);
        let v = self
            .value_bn
            .forward_t(&conv_in(&x, &self.value_conv, kind), train)
            .relu();
        let wdl = global_pool(&v)
            .to_kind(Kind::Float)
            .apply(&self.value_fc1)
            .relu()
            .apply(&self.value_fc2);
        let occupancy = self
            .occupancy
            .as_ref()
            .map(|conv| conv_in(&x, conv, kind).to_kind(Kind::Float));
        NetOutput {
            policy: p,
            wdl,
            occupancy,
        }
    }

    /// The single-tensor output of exported models: `[B, P + 4]` = policy logits (`P`),
    /// WDL logits (3), value `P(win) − P(loss)` (1), in `float`.
    pub fn forward_export(&self, planes: &Tensor) -> Tensor {
        let out = self.forward(planes, false);
        let value = wdl_to_value(&out.wdl).unsqueeze(1);
        Tensor::cat(
            &[
                out.policy.to_kind(Kind::Float),
                out.wdl.to_kind(Kind::Float),
                value,
            ],
            1,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::PlaneSet;
    use crate::input_tensor;
    use loa::{Rules, Variant};

    fn tiny() -> NetConfig {
        NetConfig::tiny_pooled()
    }

    #[test]
    fn shapes_for_every_variant() {
        crate::test_threads();
        // (variant, input planes, grid side, policy planes)
        let expected = [
            (Variant::Standard, 7, 8, 8),
            (Variant::ScrambledEggs, 7, 8, 8),
            (Variant::Six, 7, 6, 8),
            (Variant::Parachute, 10, 8, 9),
            (Variant::Gemma, 8, 8, 9),
            (Variant::Ambiloa, 15, 8, 8),
            (Variant::Alveole, 6, 9, 6),
        ];
        for (variant, planes, n, pp) in expected {
            let vs = nn::VarStore::new(tch::Device::Cpu);
            let net = Net::new(&vs.root(), &tiny(), variant);
            assert_eq!(net.input_planes(), planes);
            assert_eq!(net.policy_planes(), pp);
            assert_eq!(net.board_size(), n);
            assert_eq!(
                vs.variables()["stem.conv.weight"].size(),
                vec![8, planes as i64, 3, 3]
            );
            let pos = loa::Position::start(variant, &Rules::classic());
            let x = input_tensor::of_positions([&pos, &pos], variant, PlaneSet::Board).unwrap();
            let out = net.forward(&x, false);
            assert_eq!(out.policy.size(), vec![2, (pp * n * n) as i64], "{variant}");
            assert_eq!(out.wdl.size(), vec![2, 3]);
            assert_eq!(net.policy_len(), crate::policy::policy_size(variant));
            let e = net.forward_export(&x);
            assert_eq!(e.size(), vec![2, (pp * n * n + 4) as i64]);
            let v = wdl_to_value(&out.wdl);
            let v0 = v.double_value(&[0]);
            assert!((-1.0..=1.0).contains(&v0));
        }
    }

    #[test]
    fn macs_match_a_hand_count() {
        // 4×32 on 8×8 with 7 input planes and 8 policy planes: stem 64·32·7·9, four
        // blocks of two 3×3 convolutions 64·32·32·9, two pooling layers 2·32·32, policy
        // 64·16·32·9 + 64·8·16, value 64·16·32 + 32·64 + 64·3.
        let want = 129_024 + 4_718_592 + 4_096 + 294_912 + 8_192 + 32_768 + 2_048 + 192;
        let small = NetConfig::small();
        assert_eq!(macs_per_position(&small, Variant::Standard), want);
        assert_eq!(want, 5_189_824);
    }

    /// A net with an occupancy head: `[B, 3, N, N]` logits from `occupancy.conv`, the
    /// same in plain and mixed forwards; the policy and value outputs and the exported
    /// tensor have the shapes of a net without one, and the MACs count the head.
    #[test]
    fn occupancy_head() {
        crate::test_threads();
        let with = NetConfig {
            occupancy_head: true,
            ..tiny()
        };
        for variant in [Variant::Standard, Variant::Alveole] {
            let vs = nn::VarStore::new(tch::Device::Cpu);
            let net = Net::new(&vs.root(), &with, variant);
            let n = net.board_size() as i64;
            assert_eq!(vs.variables()["occupancy.conv.weight"].size(), [3, 8, 1, 1]);
            assert_eq!(vs.variables()["occupancy.conv.bias"].size(), [3]);
            let pos = loa::Position::start(variant, &Rules::classic());
            let x = input_tensor::of_positions([&pos], variant, PlaneSet::Board).unwrap();
            let out = net.forward(&x, false);
            let occupancy = out.occupancy.unwrap();
            assert_eq!(occupancy.size(), [1, 3, n, n]);
            let mixed = net.forward_mixed(&x, false, Kind::Float).occupancy.unwrap();
            assert!(mixed.allclose(&occupancy, 1e-5, 1e-5, false));
            assert_eq!(
                net.forward_export(&x).size(),
                [1, net.policy_len() as i64 + 4]
            );
        }
        let vs = nn::VarStore::new(tch::Device::Cpu);
        let plain = Net::new(&vs.root(), &tiny(), Variant::Standard);
        assert!(plain.occupancy.is_none());
        assert!(!vs.variables().contains_key("occupancy.conv.weight"));
        assert_eq!(
            macs_per_position(&with, Variant::Standard),
            macs_per_position(&tiny(), Variant::Standard) + 64 * 8 * 3
        );
    }

    #[test]
    fn global_pool_is_the_same_in_both_layouts() {
        let x = Tensor::randn([3, 5, 4, 4], (Kind::Float, Device::Cpu));
        let last = cpu_channels_last(x.copy());
        assert_eq!(last.stride(), [80, 1, 20, 5]);
        let (a, b) = (global_pool(&x), global_pool(&last));
        assert_eq!(a.size(), [3, 10]);
        assert!(a.allclose(&b, 1e-6, 1e-6, false));
        let mean = x.mean_dim(&[2i64, 3][..], false, None);
        assert!(a.narrow(1, 0, 5).allclose(&mean, 1e-6, 1e-6, false));
        // Gradients flow through the channels-last path too.
        let g = last.set_requires_grad(true);
        global_pool(&g).sum(Kind::Float).backward();
        assert_eq!(g.grad().size(), [3, 5, 4, 4]);
    }

    #[test]
    fn global_pool_blocks_and_names() {
        crate::test_threads();
        let vs = nn::VarStore::new(tch::Device::Cpu);
        let _net = Net::new(&vs.root(), &tiny(), Variant::Standard);
        let vars = vs.variables();
        assert!(vars.contains_key("blocks.1.pool_fc.weight"));
        assert!(!vars.contains_key("blocks.0.pool_fc.weight"));
        assert!(vars.contains_key("blocks.0.bn1.running_mean"));
        assert!(vars.contains_key("value.fc2.bias"));
    }

    /// Batch norm: eval mode uses running statistics (outputs independent of the other
    /// positions in the batch), train mode batch statistics.
    #[test]
    fn batch_norm_modes() {
        crate::test_threads();
        tch::manual_seed(3);
        let vs = nn::VarStore::new(tch::Device::Cpu);
        let net = Net::new(&vs.root(), &tiny(), Variant::Standard);
        let rules = Rules::classic();
        let first = loa::Position::start(Variant::Standard, &rules);
        let second = first.after(first.legal_moves(&rules)[3]);
        let board = |ps: &[&loa::Position]| {
            input_tensor::of_positions(ps.iter().copied(), Variant::Standard, PlaneSet::Board)
                .unwrap()
        };
        let (x1, x2) = (board(&[&first]), board(&[&first, &second]));
        tch::no_grad(|| {
            let e1 = net.forward(&x1, false).policy;
            let e2 = net.forward(&x2, false).policy.narrow(0, 0, 1);
            assert!(e1.allclose(&e2, 1e-5, 1e-5, false));
            let t1 = net
                .forward(&x1.repeat([2, 1, 1, 1]), true)
                .policy
                .narrow(0, 0, 1);
            let t2 = net.forward(&x2, true).policy.narrow(0, 0, 1);
            assert!(!t1.allclose(&t2, 1e-5, 1e-5, false));
        });
    }
}
