//! SGD (Nesterov momentum) and AdamW over a [`nn::VarStore`]'s trainable variables, with
//! every piece of state held as named tensors so that checkpoints restore it exactly
//! (tch's built-in optimizers cannot save their state).
//!
//! Weight decay applies to convolution and linear weights (tensors of rank ≥ 2), not to
//! biases or batch-norm parameters.

use crate::config::{OptimizerKind, TrainConfig};
use anyhow::{bail, Context, Result};
use tch::{nn, Tensor};

/// Prefix of optimizer tensors in checkpoint files.
pub const OPT_PREFIX: &str = "opt.";

struct Param {
    name: String,
    var: Tensor,
    decay: bool,
    /// SGD: `[momentum]`; AdamW: `[first moment, second moment]`.
    state: Vec<Tensor>,
}

/// The optimizer: hyper-parameters come from [`TrainConfig`] at each step (so a schedule
/// or a changed config applies at once); the state lives here.
pub struct Optimizer {
    kind: OptimizerKind,
    params: Vec<Param>,
}

fn slot_names(kind: OptimizerKind) -> &'static [&'static str] {
    match kind {
        OptimizerKind::Sgd => &["momentum"],
        OptimizerKind::Adamw => &["adam_m", "adam_v"],
    }
}

impl Optimizer {
    /// Zero state for every trainable variable of `vs` (sorted by name).
    pub fn new(vs: &nn::VarStore, kind: OptimizerKind) -> Optimizer {
        let mut vars: Vec<(String, Tensor)> = vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let params = vars
            .into_iter()
            .map(|(name, var)| Param {
                decay: var.dim() >= 2,
                state: slot_names(kind)
                    .iter()
                    .map(|_| var.zeros_like().detach())
                    .collect(),
                name,
                var,
            })
            .collect();
        Optimizer { kind, params }
    }

    /// The optimizer kind.
    pub fn kind(&self) -> OptimizerKind {
        self.kind
    }

    /// Clears the gradients of every variable.
    pub fn zero_grad(&mut self) {
        for p in &mut self.params {
            p.var.zero_grad();
        }
    }

    /// Applies one update with learning rate `lr`; `t` is the 1-based number of this step
    /// (AdamW bias correction). Variables without a gradient are left alone.
    pub fn step(&mut self, config: &TrainConfig, lr: f64, t: u64) {
        let _guard = tch::no_grad_guard();
        let wd = config.weight_decay;
        for p in &mut self.params {
            let g = p.var.grad();
            if !g.defined() {
                continue;
            }
            match self.kind {
                OptimizerKind::Sgd => {
                    let m = config.momentum;
                    let g = if p.decay && wd > 0.0 {
                        &g + &p.var * wd
                    } else {
                        g
                    };
                    let buf = &mut p.state[0];
                    let _ = buf.g_mul_scalar_(m);
                    let _ = buf.g_add_(&g);
                    let update = &g + &*buf * m;
                    let _ = p.var.g_sub_(&(update * lr));
                }
                OptimizerKind::Adamw => {
                    let (b1, b2) = (config.adam_beta1, config.adam_beta2);
                    if p.decay && wd > 0.0 {
                        let _ = p.var.g_mul_scalar_(1.0 - lr * wd);
                    }
                    let (m, rest) = p.state.split_at_mut(1);
                    let (m, v) = (&mut m[0], &mut rest[0]);
                    let _ = m.lerp_(&g, 1.0 - b1);
                    let _ = v.g_mul_scalar_(b2);
                    let _ = v.g_add_(&(&g * &g * (1.0 - b2)));
                    let bc1 = 1.0 - b1.powi(t as i32);
                    let bc2 = 1.0 - b2.powi(t as i32);
                    let denom = (&*v / bc2).sqrt() + config.adam_eps;
                    let _ = p.var.g_sub_(&(&*m / denom * (lr / bc1)));
                }
            }
        }
    }

    /// The state as named tensors (`opt.<slot>.<variable>`), deep copies on the CPU.
    pub fn state_tensors(&self) -> Vec<(String, Tensor)> {
        let slots = slot_names(self.kind);
        let mut out = Vec::new();
        for p in &self.params {
            for (slot, t) in slots.iter().zip(&p.state) {
                out.push((
                    format!("{OPT_PREFIX}{slot}.{}", p.name),
                    t.to_device(tch::Device::Cpu).copy(),
                ));
            }
        }
        out
    }

    /// Restores the state from tensors named as by [`Optimizer::state_tensors`]; every
    /// slot of every variable must be present with the right shape.
    pub fn load_state(&mut self, tensors: &[(String, Tensor)]) -> Result<()> {
        let map: std::collections::HashMap<&str, &Tensor> =
            tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
        let slots = slot_names(self.kind);
        let _guard = tch::no_grad_guard();
        for p in &mut self.params {
            for (slot, dst) in slots.iter().zip(p.state.iter_mut()) {
                let name = format!("{OPT_PREFIX}{slot}.{}", p.name);
                let src = map
                    .get(name.as_str())
                    .with_context(|| format!("optimizer state `{name}` missing"))?;
                if src.size() != dst.size() {
                    bail!("optimizer state `{name}` has shape {:?}", src.size());
                }
                dst.copy_(&src.to_device(dst.device()).to_kind(dst.kind()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind};

    /// Minimises ‖w − target‖² with both optimizers; AdamW's first step moves each
    /// coordinate by lr (bias correction), SGD's by lr · grad.
    #[test]
    fn optimizers_descend_and_state_round_trips() {
        for kind in [OptimizerKind::Sgd, OptimizerKind::Adamw] {
            let vs = nn::VarStore::new(Device::Cpu);
            let w = vs.root().zeros("w", &[2, 2]);
            let target = Tensor::from_slice(&[1.0f32, -2.0, 3.0, 0.5]).view([2, 2]);
            let mut opt = Optimizer::new(&vs, kind);
            let config = TrainConfig {
                weight_decay: 0.0,
                ..TrainConfig::default()
            };
            let loss = |w: &Tensor| (w - &target).square().sum(Kind::Float);
            let l0 = loss(&w).double_value(&[]);
            for t in 1..=50 {
                opt.zero_grad();
                loss(&w).backward();
                opt.step(&config, 0.05, t);
                if t == 1 && kind == OptimizerKind::Adamw {
                    let moved = w.abs().max().double_value(&[]);
                    assert!((moved - 0.05).abs() < 1e-5, "{moved}");
                }
            }
            let l1 = loss(&w).double_value(&[]);
            assert!(l1 < 0.1 * l0, "{kind:?}: {l0} -> {l1}");
            let state = opt.state_tensors();
            assert_eq!(state.len(), slot_names(kind).len());
            let mut other = Optimizer::new(&vs, kind);
            other.load_state(&state).unwrap();
            for ((_, a), (_, b)) in state.iter().zip(other.state_tensors()) {
                assert!(a.equal(&b));
            }
            assert!(other.load_state(&[]).is_err());
        }
    }
}
