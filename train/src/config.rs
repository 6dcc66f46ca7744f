//! [`TrainConfig`]: every tunable of the `train` crate, with documented defaults.
//!
//! Unknown keys are errors (`deny_unknown_fields`); missing keys take the defaults
//! below, so a TOML section may list only what it changes.

use crate::encoding::PlaneSet;
use selfplay::Device;
pub use selfplay::Precision;
use serde::{Deserialize, Serialize};

/// Shape of the policy-value network. Part of every model file: a model is loaded with
/// the shape it was saved with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetConfig {
    /// Residual blocks in the tower. Default 4 ([`NetConfig::small`]); CPU preset 6, GPU
    /// preset 10.
    pub blocks: usize,
    /// Channels of the tower. Default 32; CPU preset 64, GPU preset 128.
    pub channels: usize,
    /// Every `global_pool_every`-th block (the 3rd, 6th, …) is a global-pooling block
    /// (channel means and maxima feed a per-channel bias, as in KataGo); 0 disables
    /// them. Default 2.
    pub global_pool_every: usize,
    /// Channels of the policy head's 3×3 convolution. Default 16.
    pub policy_channels: usize,
    /// Channels of the value head's 1×1 convolution. Default 16.
    pub value_channels: usize,
    /// Hidden units of the value head's fully connected layer. Default 64.
    pub value_hidden: usize,
    /// The network's input planes: a plane set of [`crate::encoding::PLANES`]
    /// ([`PlaneSet`], each named in its docs). Default `board`. Configs and model files
    /// written before the rename call it `input_features` (still read).
    #[serde(alias = "input_features")]
    pub plane_set: PlaneSet,
    /// An occupancy head: a 1×1 convolution of the tower's output that predicts, for
    /// every cell, whether it holds an own piece, an opponent's piece or nothing when the
    /// game ends (KataGo's ownership head; LOA's analogue is where the winning group
    /// forms). It is trained with weight `occupancy_loss_weight` and gives the tower a
    /// dense target besides the one win/draw/loss per position; search never reads it.
    /// Model files written before it existed have none. Default false, and then not
    /// written: a network without the head is described as before the head existed, so
    /// older builds (a store run's workers, say) still read its model files.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub occupancy_head: bool,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig::small()
    }
}

impl NetConfig {
    /// The small preset: 4 blocks × 32 channels, the default of `loazero run` on a
    /// 2-core CPU (a 6×64 network trains too few generations in 30 minutes there).
    pub fn small() -> NetConfig {
        NetConfig {
            blocks: 4,
            channels: 32,
            global_pool_every: 2,
            policy_channels: 16,
            value_channels: 16,
            value_hidden: 64,
            plane_set: PlaneSet::Board,
            occupancy_head: false,
        }
    }

    /// The smallest useful shape (1 block × 8 channels): tests and examples that need a
    /// network, not a player.
    pub fn tiny() -> NetConfig {
        NetConfig {
            blocks: 1,
            channels: 8,
            global_pool_every: 1,
            policy_channels: 4,
            value_channels: 4,
            value_hidden: 8,
            plane_set: PlaneSet::Board,
            occupancy_head: false,
        }
    }

    /// [`NetConfig::tiny`] with two blocks, the second with global pooling: the smallest
    /// net that has every kind of layer (for tests).
    pub fn tiny_pooled() -> NetConfig {
        NetConfig {
            blocks: 2,
            global_pool_every: 2,
            ..NetConfig::tiny()
        }
    }

    /// The CPU preset: 6 blocks × 64 channels.
    pub fn cpu() -> NetConfig {
        NetConfig {
            blocks: 6,
            channels: 64,
            global_pool_every: 3,
            policy_channels: 32,
            value_channels: 32,
            value_hidden: 128,
            plane_set: PlaneSet::Board,
            occupancy_head: false,
        }
    }

    /// The GPU preset: 10 blocks × 128 channels.
    pub fn gpu() -> NetConfig {
        NetConfig {
            blocks: 10,
            channels: 128,
            ..NetConfig::cpu()
        }
    }

    /// A preset by name: `small` (= `default`), `cpu` or `gpu`.
    pub fn preset(name: &str) -> anyhow::Result<NetConfig> {
        match name {
            "small" | "default" => Ok(NetConfig::small()),
            "cpu" => Ok(NetConfig::cpu()),
            "gpu" | "big" => Ok(NetConfig::gpu()),
            _ => Err(anyhow::anyhow!(
                "unknown net preset `{name}` (expected small, cpu or gpu)"
            )),
        }
    }

    /// The shape in short: blocks × channels, and `+occupancy` with an occupancy head
    /// (`4x32`, `4x32+occupancy`), so that growing that only adds the head names a change.
    pub fn shape(&self) -> String {
        let head = if self.occupancy_head {
            "+occupancy"
        } else {
            ""
        };
        format!("{}x{}{head}", self.blocks, self.channels)
    }

    /// Whether block `block` (0-based) of the tower is a global-pooling block: every
    /// `global_pool_every`-th one.
    pub fn pools(&self, block: usize) -> bool {
        self.global_pool_every > 0 && (block + 1).is_multiple_of(self.global_pool_every)
    }

    /// Checks that every size is usable.
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.channels == 0 || self.policy_channels == 0 || self.value_channels == 0 {
            return Err(anyhow::anyhow!("net: channel counts must be positive"));
        }
        if self.value_hidden == 0 {
            return Err(anyhow::anyhow!("net: value_hidden must be positive"));
        }
        if self.blocks > 256 || self.channels > 4096 {
            return Err(anyhow::anyhow!(
                "net: tower larger than 256 blocks × 4096 channels"
            ));
        }
        if self.policy_channels > 4096 || self.value_channels > 4096 || self.value_hidden > 65536 {
            return Err(anyhow::anyhow!(
                "net: heads larger than 4096 policy or value channels or 65536 value_hidden"
            ));
        }
        Ok(())
    }

    /// A lower bound on the number of weights of this network (the 3×3 convolutions of
    /// the tower and the policy head, the value head's 1×1 convolution and its two fully
    /// connected layers), computed without allocating it: a model file whose tensors hold
    /// fewer elements cannot be this network ([`crate::ModelInfo::check_weight_count`]).
    pub fn min_weights(&self) -> u64 {
        let [b, c, pc, vc, vh] = [
            self.blocks,
            self.channels,
            self.policy_channels,
            self.value_channels,
            self.value_hidden,
        ]
        .map(|x| x as u64);
        let terms = [
            b.saturating_mul(18).saturating_mul(c).saturating_mul(c),
            9u64.saturating_mul(c).saturating_mul(pc),
            c.saturating_mul(vc),
            2u64.saturating_mul(vc).saturating_mul(vh),
            3u64.saturating_mul(vh),
        ];
        terms.iter().fold(0u64, |a, &t| a.saturating_add(t))
    }
}

/// The optimizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// SGD with (Nesterov) momentum; weight decay as an L2 term on conv/linear weights.
    Sgd,
    /// AdamW: Adam with decoupled weight decay on conv/linear weights.
    Adamw,
}

/// The learning-rate schedule after warm-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LrSchedule {
    /// `lr` for ever.
    Constant,
    /// Cosine from `lr` down to `lr * lr_min_fraction` at `lr_decay_steps`, then flat.
    Cosine,
    /// Cosine from `lr` down to `lr * lr_min_fraction` over the progress of a `run`
    /// (the fraction of its time budget, or of its generations, used so far; see
    /// [`crate::Trainer::set_run_progress`]), so the rate reaches its floor as the run
    /// ends whatever the machine's speed. `lr` when no progress is known (a run without a
    /// budget, the `train` command).
    CosineRun,
}

/// Tunables of the inference service ([`crate::NetEvaluator`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InferenceConfig {
    /// Device: `cpu`, `cuda` or `cuda:N` ([`Device`]). Default `cpu`. Asking for CUDA
    /// where it is unavailable is an error.
    pub device: Device,
    /// Largest number of positions per forward pass. Requests are never split, so one
    /// pass may exceed it by less than one request. Default 512.
    pub max_batch: usize,
    /// How long the inference thread waits for more requests once it holds one, in
    /// microseconds, before running a partial batch. Default 1000 (1 ms).
    pub deadline_us: u64,
    /// Inference precision (see [`Precision`]), on any device. Default `auto`: on the CPU
    /// the faster of `float` and `bfloat16` for the network served, timed on its first
    /// use on the machine and cached ([`crate::auto_precision`]; `bfloat16` is a
    /// candidate only where the CPU computes bf16 in hardware); `float` on CUDA.
    pub precision: Precision,
    /// torch intra-op threads, set when the evaluator starts; 0 keeps the current
    /// setting and, on the CPU, lowers the inference thread's count while other processes
    /// keep cores busy ([`crate::auto_threads`]). Process-wide (it also changes
    /// training's). On a CPU shared with search threads, 1 is often fastest (OpenMP
    /// threads spin while waiting). Default 0.
    pub threads: usize,
    /// Run inference on the folded network ([`crate::folded::FoldedNet`]: batch norms
    /// folded into the convolutions; same outputs up to float rounding, faster). Default
    /// true; false runs the reference [`crate::net::Net::forward`].
    pub fold_batch_norm: bool,
    /// Entries of the evaluation cache: the outputs of recently evaluated positions,
    /// keyed by position hash and checked against the position and its move list, so a
    /// position seen again (a transposition in a tree, an opening shared by many games) is
    /// answered without the network. Cleared when the weights change. 0 disables it.
    /// Default 0.
    pub cache_positions: usize,
    /// Inference threads, at least 1: each owns its own copy of the model (and its own
    /// evaluation cache) and serves the one request queue, so with `threads = 1` two
    /// callers' batches run at the same time on two cores (KataGo's CPU backend gives one
    /// evaluation thread per core). New weights reach every copy before
    /// [`crate::NetEvaluator::set_weights`] returns. Default 1.
    pub forward_threads: usize,
}

impl Default for InferenceConfig {
    fn default() -> Self {
        InferenceConfig {
            device: Device::Cpu,
            max_batch: 512,
            deadline_us: 1000,
            precision: Precision::Auto,
            threads: 0,
            fold_batch_norm: true,
            cache_positions: 0,
            forward_threads: 1,
        }
    }
}

/// Every tunable of training: network shape, optimizer, schedule, replay window, device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// Network shape. Default [`NetConfig::small`] (4 × 32).
    pub net: NetConfig,
    /// Training device: `cpu`, `cuda` or `cuda:N` ([`Device`]). Default `cpu`.
    pub device: Device,
    /// torch intra-op threads (process-wide); 0 keeps torch's default and, on the CPU,
    /// lowers the trainer's count while other processes keep cores busy
    /// ([`crate::auto_threads`]). Default 0.
    pub threads: usize,
    /// Positions per training step. Default 256.
    pub batch_size: usize,
    /// Optimizer. Default `sgd`.
    pub optimizer: OptimizerKind,
    /// Peak learning rate. Default 0.02 (suits SGD; use about 1e-3 with AdamW).
    pub lr: f64,
    /// SGD momentum (Nesterov). Default 0.9.
    pub momentum: f64,
    /// Weight decay on convolution and linear weights (not biases, not batch norm).
    /// Default 1e-4.
    pub weight_decay: f64,
    /// AdamW β1. Default 0.9.
    pub adam_beta1: f64,
    /// AdamW β2. Default 0.999.
    pub adam_beta2: f64,
    /// AdamW ε. Default 1e-8.
    pub adam_eps: f64,
    /// Linear warm-up from 0 to `lr` over this many steps. Default 100.
    pub warmup_steps: u64,
    /// Schedule after warm-up. Default `constant`.
    pub lr_schedule: LrSchedule,
    /// Length of the cosine decay in steps (counted from step 0). Default 100000.
    pub lr_decay_steps: u64,
    /// Final learning rate of the cosine decay, as a fraction of `lr`. Default 0.05.
    pub lr_min_fraction: f64,
    /// Weight of the value loss (cross-entropy over win/draw/loss) against the policy
    /// cross-entropy. Default 1.0.
    pub value_loss_weight: f64,
    /// Value target = (1 − w) · game outcome + w · search value. Default 0.5.
    pub search_value_weight: f64,
    /// Weight of the occupancy loss (cross-entropy over empty/own/opponent, averaged over
    /// the board cells of the positions that have final pieces) against the policy
    /// cross-entropy, for a network with an occupancy head (`net.occupancy_head`);
    /// ignored without one. Default 1.0 (the value loss's weight, as KataGo weighs its
    /// ownership loss like its value loss).
    pub occupancy_loss_weight: f64,
    /// Exponential moving average of the weights: after every step the averaged network
    /// moves `1 − ema_decay` of the way to the trained one (the decay is capped at
    /// `(1 + step) / (10 + step)` early on, so the start is not dominated by the random
    /// initialisation). The saved models (candidates, `save_model`) and the held-out score
    /// use the averaged weights; training continues on the raw ones. 0 disables it.
    /// Default 0.
    pub ema_decay: f64,
    /// Replay window: train on the newest this many positions (with `window_growth`,
    /// until the run has produced this many, and never fewer). Default 60000.
    pub window_positions: usize,
    /// Growth of the replay window with the data, KataGo's power-law window
    /// ([`crate::replay::WindowSize`]): once the run has produced n > c =
    /// `window_positions` positions the window holds c · (1 + g · ((n/c)^a − 1) / a),
    /// g = `window_growth` in [0, 1] (positions added to the window per position produced,
    /// at n = c), a = `window_exponent`. 0 keeps the window at `window_positions`.
    /// Default 0.
    pub window_growth: f64,
    /// The exponent a of the window's growth, in (0, 1]: smaller tapers it sooner.
    /// Default 0.65 (KataGo's).
    pub window_exponent: f64,
    /// Train on positions without a policy target (the cheap searches of playout-cap
    /// randomisation) for their value; false keeps only full-search positions in the
    /// window, as KataGo does (Descent's tree-only positions are kept either way).
    /// Default true.
    pub value_only_positions: bool,
    /// Sample one of the 8 board symmetries per training position. Default true.
    pub augment_symmetries: bool,
    /// Seed of weight initialisation and sampling. Default 1.
    pub seed: u64,
    /// Write a progress line every this many steps when stderr is not a terminal (and a
    /// metrics record to the JSON-lines file). Default 50.
    pub log_every: u64,
    /// Precision of the training steps' arithmetic: `float`, or `bfloat16` mixed
    /// precision ([`crate::net::Net::forward_mixed`]: fp32 weights, optimizer and
    /// losses; convolutions and activations in bf16, channels-last), or `auto`. `half` is
    /// refused: it would need loss scaling. Default `auto`: on a CPU with AMX bf16 tiles,
    /// the faster of `float` and `bfloat16` in a few training steps of the network at
    /// `batch_size`, timed on first use and cached
    /// ([`crate::auto_precision::training_precision`]); `float` elsewhere: with AMX, bf16
    /// training made a stronger model in the same minutes; with `avx512_bf16` alone it made
    /// more generations but no stronger model, and it is not reproducible bit for bit
    /// there (`docs/experiments.md`, batches 6 and 26).
    pub precision: Precision,
    /// The inference service.
    pub inference: InferenceConfig,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            net: NetConfig::default(),
            device: Device::Cpu,
            threads: 0,
            batch_size: 256,
            optimizer: OptimizerKind::Sgd,
            lr: 0.02,
            momentum: 0.9,
            weight_decay: 1e-4,
            adam_beta1: 0.9,
            adam_beta2: 0.999,
            adam_eps: 1e-8,
            warmup_steps: 100,
            lr_schedule: LrSchedule::Constant,
            lr_decay_steps: 100_000,
            lr_min_fraction: 0.05,
            value_loss_weight: 1.0,
            search_value_weight: 0.5,
            occupancy_loss_weight: 1.0,
            ema_decay: 0.0,
            window_positions: 60_000,
            window_growth: 0.0,
            window_exponent: 0.65,
            value_only_positions: true,
            augment_symmetries: true,
            seed: 1,
            log_every: 50,
            precision: Precision::Auto,
            inference: InferenceConfig::default(),
        }
    }
}

impl TrainConfig {
    /// The replay window's size: `window_positions`, growing by `window_growth` and
    /// `window_exponent`.
    pub fn window_size(&self) -> crate::replay::WindowSize {
        crate::replay::WindowSize {
            base: self.window_positions,
            growth: self.window_growth,
            exponent: self.window_exponent,
        }
    }

    /// Checks ranges; the message names the key.
    pub fn validate(&self) -> anyhow::Result<()> {
        self.net.validate()?;
        let check = |ok: bool, msg: &str| {
            if ok {
                Ok(())
            } else {
                Err(anyhow::anyhow!("{msg}"))
            }
        };
        check(self.batch_size > 0, "batch_size must be positive")?;
        check(self.lr > 0.0 && self.lr.is_finite(), "lr must be positive")?;
        check(
            (0.0..1.0).contains(&self.momentum),
            "momentum must be in [0, 1)",
        )?;
        check(self.weight_decay >= 0.0, "weight_decay must be ≥ 0")?;
        check(
            (0.0..1.0).contains(&self.adam_beta1),
            "adam_beta1 must be in [0, 1)",
        )?;
        check(
            (0.0..1.0).contains(&self.adam_beta2),
            "adam_beta2 must be in [0, 1)",
        )?;
        check(self.adam_eps > 0.0, "adam_eps must be positive")?;
        check(
            (0.0..=1.0).contains(&self.lr_min_fraction),
            "lr_min_fraction must be in [0, 1]",
        )?;
        check(
            self.value_loss_weight >= 0.0,
            "value_loss_weight must be ≥ 0",
        )?;
        check(
            (0.0..=1.0).contains(&self.search_value_weight),
            "search_value_weight must be in [0, 1]",
        )?;
        check(
            self.occupancy_loss_weight >= 0.0 && self.occupancy_loss_weight.is_finite(),
            "occupancy_loss_weight must be ≥ 0",
        )?;
        check(
            (0.0..1.0).contains(&self.ema_decay),
            "ema_decay must be in [0, 1)",
        )?;
        check(
            self.window_positions > 0,
            "window_positions must be positive",
        )?;
        check(
            (0.0..=1.0).contains(&self.window_growth),
            "window_growth must be in [0, 1] (above 1 the window would outgrow the data)",
        )?;
        check(
            self.window_exponent > 0.0 && self.window_exponent <= 1.0,
            "window_exponent must be in (0, 1]",
        )?;
        check(self.log_every > 0, "log_every must be positive")?;
        check(
            self.precision != Precision::Half,
            "precision: half is not supported for training (it needs loss scaling); use \
             bfloat16 or float",
        )?;
        check(
            self.inference.max_batch > 0,
            "inference.max_batch must be positive",
        )?;
        check(
            self.inference.forward_threads > 0,
            "inference.forward_threads must be at least 1",
        )?;
        Ok(())
    }

    /// The weight-average decay applied after step `step` (0-based): `ema_decay`, capped
    /// at `(1 + step) / (10 + step)`; 0 when averaging is off.
    pub fn ema_decay_at(&self, step: u64) -> f64 {
        let warm = (1 + step) as f64 / (10 + step) as f64;
        self.ema_decay.min(warm)
    }

    /// The learning rate at `step` (0-based) with the run `progress` in [0, 1] when known
    /// (for [`LrSchedule::CosineRun`]): warm-up, then the schedule.
    pub fn lr_at(&self, step: u64, progress: Option<f64>) -> f64 {
        if step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        match self.lr_schedule {
            LrSchedule::Constant => self.lr,
            LrSchedule::CosineRun => match progress {
                Some(t) => {
                    let end = self.lr * self.lr_min_fraction;
                    let t = t.clamp(0.0, 1.0);
                    end + (self.lr - end) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
                }
                None => self.lr,
            },
            LrSchedule::Cosine => {
                let end = self.lr * self.lr_min_fraction;
                if step >= self.lr_decay_steps {
                    return end;
                }
                let span = self.lr_decay_steps.saturating_sub(self.warmup_steps).max(1);
                let t = (step - self.warmup_steps) as f64 / span as f64;
                end + (self.lr - end) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_unknown_keys_fail() {
        let c = TrainConfig::default();
        c.validate().unwrap();
        let json = serde_json::to_string(&c).unwrap();
        let back: TrainConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
        let partial: TrainConfig =
            serde_json::from_str(r#"{"lr": 0.5, "net": {"blocks": 2}}"#).unwrap();
        assert_eq!(partial.lr, 0.5);
        assert_eq!(partial.net.blocks, 2);
        assert_eq!(partial.net.channels, NetConfig::default().channels);
        let err = serde_json::from_str::<TrainConfig>(r#"{"lrr": 0.5}"#).unwrap_err();
        assert!(err.to_string().contains("lrr"), "{err}");
        let err = serde_json::from_str::<TrainConfig>(r#"{"net": {"block": 2}}"#).unwrap_err();
        assert!(err.to_string().contains("block"), "{err}");
    }

    #[test]
    fn lr_schedule() {
        let c = TrainConfig {
            lr: 1.0,
            warmup_steps: 10,
            lr_schedule: LrSchedule::Cosine,
            lr_decay_steps: 110,
            lr_min_fraction: 0.1,
            ..TrainConfig::default()
        };
        assert!((c.lr_at(0, None) - 0.1).abs() < 1e-12);
        assert!((c.lr_at(9, None) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(10, None) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(60, Some(0.9)) - 0.55).abs() < 1e-9);
        assert!((c.lr_at(110, None) - 0.1).abs() < 1e-12);
        assert!((c.lr_at(10_000, None) - 0.1).abs() < 1e-12);
        // Over the run: by progress, not steps; warm-up first; lr without a progress.
        let run = TrainConfig {
            lr_schedule: LrSchedule::CosineRun,
            ..c.clone()
        };
        assert!((run.lr_at(5, Some(0.9)) - 0.6).abs() < 1e-12);
        assert!((run.lr_at(500, Some(0.0)) - 1.0).abs() < 1e-12);
        assert!((run.lr_at(20, Some(0.5)) - 0.55).abs() < 1e-9);
        assert!((run.lr_at(20, Some(1.0)) - 0.1).abs() < 1e-12);
        assert!((run.lr_at(20, Some(7.0)) - 0.1).abs() < 1e-12);
        assert!((run.lr_at(20, None) - 1.0).abs() < 1e-12);
        let parsed: TrainConfig = serde_json::from_str(r#"{"lr_schedule": "cosine-run"}"#).unwrap();
        assert_eq!(parsed.lr_schedule, LrSchedule::CosineRun);
        let bad = TrainConfig {
            momentum: 1.5,
            ..TrainConfig::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("momentum"));
    }
}
