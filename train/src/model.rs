//! A model: the network's variables in a [`nn::VarStore`] plus what is needed to use them
//! ([`ModelInfo`]: shape, board size, encoding version). Model files are safetensors with
//! the info as JSON metadata (see [`crate::tensor_file`]); a training checkpoint is also
//! a valid model file (its optimizer tensors are ignored when loading a model).

use crate::config::NetConfig;
use crate::encoding::ENCODING_VERSION;
use crate::net::Net;
use crate::tensor_file;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use tch::{nn, Device, Kind, Tensor};

/// Format tag of model files.
pub const MODEL_FORMAT: &str = "loazero-model";
/// Version of the model file layout.
pub const MODEL_FORMAT_VERSION: u32 = 1;
/// Prefix of the network's tensors in model and checkpoint files.
pub const NET_PREFIX: &str = "net.";

/// What a model file says about its network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// Always [`MODEL_FORMAT`].
    pub format: String,
    /// Layout version ([`MODEL_FORMAT_VERSION`]).
    pub format_version: u32,
    /// Input encoding version ([`ENCODING_VERSION`]).
    pub encoding_version: u32,
    /// Board side length (8 or 6).
    pub board_size: usize,
    /// The variant trained on (informational; any variant of this board size can be
    /// evaluated).
    pub variant: String,
    /// The network shape.
    pub net: NetConfig,
    /// Training steps behind these weights.
    pub step: u64,
    /// Checkpoint-only fields (optimizer, RNG, config); absent in plain model files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trainer: Option<serde_json::Value>,
}

impl ModelInfo {
    /// The description of a fresh network.
    pub fn new(net: &NetConfig, variant: loa::Variant) -> ModelInfo {
        ModelInfo {
            format: MODEL_FORMAT.into(),
            format_version: MODEL_FORMAT_VERSION,
            encoding_version: ENCODING_VERSION,
            board_size: variant.geometry().size as usize,
            variant: variant.to_string(),
            net: net.clone(),
            step: 0,
            trainer: None,
        }
    }

    fn check(&self, path: &Path) -> Result<()> {
        if self.format != MODEL_FORMAT {
            bail!(
                "{}: not a loazero model (format `{}`)",
                path.display(),
                self.format
            );
        }
        if self.format_version != MODEL_FORMAT_VERSION {
            bail!(
                "{}: model format version {}, this build reads {MODEL_FORMAT_VERSION}",
                path.display(),
                self.format_version
            );
        }
        if self.encoding_version != ENCODING_VERSION {
            bail!(
                "{}: model uses input encoding version {}, this build has {ENCODING_VERSION}",
                path.display(),
                self.encoding_version
            );
        }
        if !(2..=8).contains(&self.board_size) {
            bail!("{}: bad board size {}", path.display(), self.board_size);
        }
        self.net
            .validate()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

/// A network with its variables and description. `Send`, not `Sync` (owned by one thread).
pub struct Model {
    /// The variables (names without the file's [`NET_PREFIX`]).
    pub vs: nn::VarStore,
    /// The layers.
    pub net: Net,
    /// The description.
    pub info: ModelInfo,
}

impl Model {
    /// A freshly initialised network (weights from torch's global RNG) on `device`.
    pub fn new(info: ModelInfo, device: Device) -> Model {
        let vs = nn::VarStore::new(device);
        let net = Net::new(&vs.root(), &info.net, info.board_size);
        Model { vs, net, info }
    }

    /// Reads a model or checkpoint file onto `device`. Errors name the file.
    pub fn load(path: &Path, device: Device) -> Result<Model> {
        let (info, tensors) = read_model_file(path)?;
        let mut model = Model::new(info, device);
        model
            .set_weights(&tensors)
            .with_context(|| path.display().to_string())?;
        Ok(model)
    }

    /// Copies `tensors` (names without prefix, from any device) into the variables. Every
    /// variable must be present with its shape; extra tensors are an error.
    pub fn set_weights(&mut self, tensors: &[(String, Tensor)]) -> Result<()> {
        let mut vars = self.vs.variables();
        if tensors.len() != vars.len() {
            bail!(
                "{} tensors for a network with {} variables",
                tensors.len(),
                vars.len()
            );
        }
        tch::no_grad(|| -> Result<()> {
            for (name, src) in tensors {
                let dst = vars
                    .get_mut(name)
                    .with_context(|| format!("unexpected tensor `{name}`"))?;
                if dst.size() != src.size() {
                    bail!(
                        "tensor `{name}` has shape {:?}, the network expects {:?}",
                        src.size(),
                        dst.size()
                    );
                }
                dst.f_copy_(&src.to_device(dst.device()).to_kind(dst.kind()))?;
            }
            Ok(())
        })
    }

    /// Deep copies of the variables on the CPU in `f32`, sorted by name: what
    /// [`Model::set_weights`] and [`crate::NetEvaluator::set_weights`] take.
    pub fn weights(&self) -> Vec<(String, Tensor)> {
        let mut v: Vec<(String, Tensor)> = self
            .vs
            .variables()
            .into_iter()
            .map(|(n, t)| {
                (
                    n,
                    t.detach()
                        .to_device(Device::Cpu)
                        .to_kind(Kind::Float)
                        .copy(),
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// Writes a model file (weights and info) atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let tensors: Vec<(String, Tensor)> = self
            .weights()
            .into_iter()
            .map(|(n, t)| (format!("{NET_PREFIX}{n}"), t))
            .collect();
        let mut info = self.info.clone();
        info.trainer = None;
        tensor_file::write(path, &tensors, &serde_json::to_string(&info)?)
    }
}

/// Reads the description and the network tensors (prefix stripped) of a model or
/// checkpoint file.
pub fn read_model_file(path: &Path) -> Result<(ModelInfo, Vec<(String, Tensor)>)> {
    let file = tensor_file::read(path)?;
    let info: ModelInfo = serde_json::from_str(&file.description)
        .with_context(|| format!("{}: bad model description", path.display()))?;
    info.check(path)?;
    let tensors = file
        .tensors
        .into_iter()
        .filter_map(|(n, t)| n.strip_prefix(NET_PREFIX).map(|s| (s.to_string(), t)))
        .collect();
    Ok((info, tensors))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> NetConfig {
        NetConfig {
            blocks: 1,
            channels: 8,
            global_pool_every: 1,
            policy_channels: 4,
            value_channels: 4,
            value_hidden: 8,
        }
    }

    #[test]
    fn save_load_round_trip() {
        crate::test_threads();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.safetensors");
        tch::manual_seed(1);
        let m = Model::new(ModelInfo::new(&tiny(), loa::Variant::Six), Device::Cpu);
        m.save(&path).unwrap();
        let back = Model::load(&path, Device::Cpu).unwrap();
        assert_eq!(back.info, m.info);
        assert_eq!(back.info.board_size, 6);
        for ((n1, t1), (n2, t2)) in m.weights().iter().zip(back.weights()) {
            assert_eq!(n1, &n2);
            assert!(t1.equal(&t2), "{n1}");
        }
        // A file with another shape is refused with a clear message.
        let mut info = m.info.clone();
        info.net.channels = 16;
        let mut other = Model::new(info, Device::Cpu);
        let err = other.set_weights(&m.weights()).unwrap_err().to_string();
        assert!(err.contains("shape"), "{err}");
    }
}
