//! A model: the network's variables in a [`nn::VarStore`] plus what is needed to use them
//! ([`ModelInfo`]: variant, encoding version, input and policy planes, shape). Model files
//! are safetensors with the info as JSON metadata (see [`crate::tensor_file`]); a training
//! checkpoint is also a valid model file (its optimizer tensors are ignored when loading a
//! model).
//!
//! A model is made for one variant's layout (input planes, grid, policy planes); it can be
//! used for another variant only where that layout is identical
//! ([`crate::encoding::same_layout`], e.g. `standard` and `scrambled-eggs`).

use crate::config::NetConfig;
use crate::encoding::{
    check_version, input_layout, num_planes, same_layout, PlaneSet, ENCODING_VERSION,
};
use crate::net::Net;
use crate::policy::policy_planes;
use crate::tensor_file;
use anyhow::{bail, Context, Result};
use loa::Variant;
use serde::{Deserialize, Serialize};
use std::path::Path;
use tch::{nn, Device, Kind, Tensor};

/// Format tag of model files.
pub const MODEL_FORMAT: &str = "loazero-model";
/// Version of the model file layout.
pub const MODEL_FORMAT_VERSION: u32 = 1;
/// Prefix of the network's tensors in model and checkpoint files.
pub const NET_PREFIX: &str = "net.";

/// A [`Variant`] as its name in JSON.
mod variant_name {
    use loa::Variant;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Variant, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}

/// What a model file says about its network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// Always [`MODEL_FORMAT`].
    pub format: String,
    /// Layout version ([`MODEL_FORMAT_VERSION`]).
    pub format_version: u32,
    /// Input encoding version. Files of version 1 (`standard`, `scrambled-eggs`, `6x6`,
    /// whose planes did not change) read as [`ENCODING_VERSION`].
    pub encoding_version: u32,
    /// The variant whose layout the network has (and was trained on).
    #[serde(with = "variant_name")]
    pub variant: Variant,
    /// Side of the grid the network sees (8, 6, or 9 for the hexagonal board).
    pub board_size: usize,
    /// Number of input planes ([`crate::encoding::num_planes`]); absent in version-1 files.
    #[serde(default)]
    pub input_planes: usize,
    /// Number of policy planes ([`crate::policy::policy_planes`]); absent in version-1 files.
    #[serde(default)]
    pub policy_planes: usize,
    /// The network shape.
    pub net: NetConfig,
    /// Training steps behind these weights.
    pub step: u64,
    /// Checkpoint-only fields (optimizer, RNG, config); absent in plain model files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trainer: Option<serde_json::Value>,
}

impl ModelInfo {
    /// The description of a fresh network for `variant`.
    pub fn new(net: &NetConfig, variant: Variant) -> ModelInfo {
        ModelInfo {
            format: MODEL_FORMAT.into(),
            format_version: MODEL_FORMAT_VERSION,
            encoding_version: ENCODING_VERSION,
            variant,
            board_size: variant.geometry().size as usize,
            input_planes: num_planes(variant, net.plane_set),
            policy_planes: policy_planes(variant),
            net: net.clone(),
            step: 0,
            trainer: None,
        }
    }

    /// Parses the description of the model or checkpoint file `path` (for messages),
    /// checks that this build can use it, and brings a version-1 description to the
    /// current encoding version (same planes). Errors name the file.
    pub fn parse(text: &str, path: &Path) -> Result<ModelInfo> {
        let mut value: serde_json::Value = serde_json::from_str(text)
            .with_context(|| format!("{}: bad model description", path.display()))?;
        // Files written before the plane set was a setting have the board planes; files
        // written before its rename call it `input_features` (read by its serde alias).
        if let Some(net) = value.get_mut("net").and_then(|n| n.as_object_mut()) {
            if !net.contains_key("input_features") {
                net.entry("plane_set")
                    .or_insert_with(|| PlaneSet::Board.name().into());
            }
        }
        let mut info: ModelInfo = serde_json::from_value(value)
            .with_context(|| format!("{}: bad model description", path.display()))?;
        info.check(path)?;
        Ok(info)
    }

    fn check(&mut self, path: &Path) -> Result<()> {
        let file = path.display();
        if self.format != MODEL_FORMAT {
            bail!("{file}: not a loazero model (format `{}`)", self.format);
        }
        if self.format_version != MODEL_FORMAT_VERSION {
            bail!(
                "{file}: model format version {}, this build reads {MODEL_FORMAT_VERSION}",
                self.format_version
            );
        }
        let variant = self.variant;
        check_version(variant, self.encoding_version)
            .map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        let size = variant.geometry().size as usize;
        if self.board_size != size {
            bail!(
                "{file}: a {variant} model on a {0}x{0} grid; {variant} has {size}x{size}",
                self.board_size
            );
        }
        let plane_set = self.net.plane_set;
        let (planes, policy) = (num_planes(variant, plane_set), policy_planes(variant));
        if self.encoding_version == 1 && self.input_planes == 0 && self.policy_planes == 0 {
            self.input_planes = planes;
            self.policy_planes = policy;
        }
        if self.input_planes != planes || self.policy_planes != policy {
            bail!(
                "{file}: a {variant} model with {} input and {} policy planes; {variant} has \
                 {planes} and {policy} with the plane set `{}` under encoding version \
                 {ENCODING_VERSION}",
                self.input_planes,
                self.policy_planes,
                plane_set.name()
            );
        }
        self.encoding_version = ENCODING_VERSION;
        self.net
            .validate()
            .map_err(|e| anyhow::anyhow!("{file}: {e}"))
    }

    /// Checks, before any network is allocated, that a file whose network tensors hold
    /// `elements` values can be this description's network ([`NetConfig::min_weights`]):
    /// a description claiming a huge network in a small file is an error naming `path`,
    /// never a huge allocation.
    pub fn check_weight_count(&self, elements: u64, path: &Path) -> Result<()> {
        let min = self.net.min_weights();
        if elements < min {
            bail!(
                "{}: the description's network has at least {min} weights; the file holds {elements}",
                path.display()
            );
        }
        Ok(())
    }

    /// Whether this model can read positions of `variant` and write its policy: `variant`
    /// must have the model's layout (input planes, grid, policy planes), e.g. a `standard`
    /// model plays `scrambled-eggs`; otherwise an error saying why.
    pub fn check_variant(&self, variant: Variant) -> Result<()> {
        if same_layout(self.variant, variant) {
            return Ok(());
        }
        let plane_set = self.net.plane_set;
        let (a, b) = (
            input_layout(self.variant, plane_set),
            input_layout(variant, plane_set),
        );
        bail!(
            "a {} model cannot be used for {variant}: the network layouts differ \
             ({} input planes on {}x{} and {} policy planes vs {} on {}x{} and {})",
            self.variant,
            a.num_planes(),
            a.size,
            a.size,
            policy_planes(self.variant),
            b.num_planes(),
            b.size,
            b.size,
            policy_planes(variant)
        )
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
        let net = Net::new(&vs.root(), &info.net, info.variant);
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
    let info = ModelInfo::parse(&file.description, path)?;
    let tensors: Vec<(String, Tensor)> = file
        .tensors
        .into_iter()
        .filter_map(|(n, t)| n.strip_prefix(NET_PREFIX).map(|s| (s.to_string(), t)))
        .collect();
    info.check_weight_count(element_count(&tensors), path)?;
    Ok((info, tensors))
}

/// The number of values in `tensors`.
pub(crate) fn element_count(tensors: &[(String, Tensor)]) -> u64 {
    tensors.iter().map(|(_, t)| t.numel() as u64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> NetConfig {
        NetConfig::tiny()
    }

    #[test]
    fn save_load_round_trip() {
        crate::test_threads();
        let dir = tempfile::tempdir().unwrap();
        for variant in [Variant::Six, Variant::Parachute, Variant::Alveole] {
            let path = dir.path().join(format!("{variant}.safetensors"));
            tch::manual_seed(1);
            let m = Model::new(ModelInfo::new(&tiny(), variant), Device::Cpu);
            m.save(&path).unwrap();
            let back = Model::load(&path, Device::Cpu).unwrap();
            assert_eq!(back.info, m.info);
            assert_eq!(back.info.variant, variant);
            assert_eq!(back.info.board_size, variant.geometry().size as usize);
            assert_eq!(back.info.input_planes, num_planes(variant, PlaneSet::Board));
            assert_eq!(back.info.policy_planes, policy_planes(variant));
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

    /// Writes `m`'s weights with the description `edit` makes of its info's JSON.
    fn write_edited(m: &Model, path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
        let mut desc = serde_json::to_value(&m.info).unwrap();
        edit(&mut desc);
        let tensors: Vec<(String, Tensor)> = m
            .weights()
            .into_iter()
            .map(|(n, t)| (format!("{NET_PREFIX}{n}"), t))
            .collect();
        tensor_file::write(path, &tensors, &desc.to_string()).unwrap();
    }

    /// Version-1 model files (no plane counts) of the variants whose planes did not change
    /// still load; other variants, other versions and inconsistent layouts are refused
    /// with the file named.
    #[test]
    fn version_one_files_and_bad_layouts() {
        crate::test_threads();
        let dir = tempfile::tempdir().unwrap();
        let v1 = |d: &mut serde_json::Value| {
            let o = d.as_object_mut().unwrap();
            o.insert("encoding_version".into(), 1.into());
            o.remove("input_planes");
            o.remove("policy_planes");
        };
        for variant in [Variant::Standard, Variant::ScrambledEggs, Variant::Six] {
            let m = Model::new(ModelInfo::new(&tiny(), variant), Device::Cpu);
            let path = dir.path().join(format!("v1-{variant}.safetensors"));
            write_edited(&m, &path, v1);
            let back = Model::load(&path, Device::Cpu).unwrap();
            assert_eq!(back.info, m.info, "{variant}");
            assert_eq!(back.info.encoding_version, ENCODING_VERSION);
        }
        let refused = |variant: Variant, name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
            let m = Model::new(ModelInfo::new(&tiny(), variant), Device::Cpu);
            let path = dir.path().join(name);
            write_edited(&m, &path, edit);
            let err = format!("{:#}", Model::load(&path, Device::Cpu).err().unwrap());
            assert!(err.contains(name), "{err}");
            err
        };
        let err = refused(Variant::Gemma, "v1-gemma.safetensors", &v1);
        assert!(err.contains("version 1"), "{err}");
        let err = refused(Variant::Standard, "v3.safetensors", &|d| {
            d["encoding_version"] = 3.into();
        });
        assert!(err.contains("version 3"), "{err}");
        let err = refused(Variant::Parachute, "planes.safetensors", &|d| {
            d["input_planes"] = 7.into();
        });
        assert!(err.contains("7 input"), "{err}");
        let err = refused(Variant::Alveole, "size.safetensors", &|d| {
            d["board_size"] = 8.into();
        });
        assert!(err.contains("8x8"), "{err}");
        let err = refused(Variant::Standard, "unknown.safetensors", &|d| {
            d["variant"] = "chess".into();
        });
        assert!(err.contains("unknown variant"), "{err}");
    }

    /// Model files written before the plane set was renamed (`net.input_features`) load
    /// with the plane set they name; files from before it existed load with the board
    /// planes.
    #[test]
    fn model_files_with_the_old_plane_set_key_load() {
        crate::test_threads();
        let dir = tempfile::tempdir().unwrap();
        let loa = NetConfig {
            plane_set: PlaneSet::Loa,
            ..tiny()
        };
        let m = Model::new(ModelInfo::new(&loa, Variant::Standard), Device::Cpu);
        let path = dir.path().join("old-key.safetensors");
        write_edited(&m, &path, |d| {
            let net = d["net"].as_object_mut().unwrap();
            let set = net.remove("plane_set").unwrap();
            net.insert("input_features".into(), set);
        });
        let back = Model::load(&path, Device::Cpu).unwrap();
        assert_eq!(back.info.net.plane_set, PlaneSet::Loa);
        assert_eq!(back.info, m.info);
        let m = Model::new(ModelInfo::new(&tiny(), Variant::Standard), Device::Cpu);
        let path = dir.path().join("no-key.safetensors");
        write_edited(&m, &path, |d| {
            d["net"].as_object_mut().unwrap().remove("plane_set");
        });
        let back = Model::load(&path, Device::Cpu).unwrap();
        assert_eq!(back.info.net.plane_set, PlaneSet::Board);
    }

    /// A model without an occupancy head is described without the key (as before the
    /// head existed); one with the head names it and loads with it.
    #[test]
    fn only_a_model_with_an_occupancy_head_names_it() {
        crate::test_threads();
        let dir = tempfile::tempdir().unwrap();
        for head in [false, true] {
            let net = NetConfig {
                occupancy_head: head,
                ..tiny()
            };
            let m = Model::new(ModelInfo::new(&net, Variant::Standard), Device::Cpu);
            let path = dir.path().join(format!("head-{head}.safetensors"));
            m.save(&path).unwrap();
            let description = tensor_file::read(&path).unwrap().description;
            assert_eq!(
                description.contains("occupancy_head"),
                head,
                "{description}"
            );
            let back = Model::load(&path, Device::Cpu).unwrap();
            assert_eq!(back.info, m.info);
            let planes = back.net.input_planes() as i64;
            let x = tch::Tensor::zeros([1, planes, 8, 8], (tch::Kind::Uint8, Device::Cpu));
            assert_eq!(back.net.forward(&x, false).occupancy.is_some(), head);
        }
    }

    #[test]
    fn a_description_claiming_a_huge_network_is_an_error_before_allocating() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.safetensors");
        let m = Model::new(ModelInfo::new(&tiny(), Variant::Standard), Device::Cpu);
        // 256 blocks of 4096 channels would be 300 GB of weights: the file's few tensors
        // are checked against the description's size first.
        write_edited(&m, &path, |d| {
            d["net"]["blocks"] = 256.into();
            d["net"]["channels"] = 4096.into();
        });
        let e = format!("{:#}", Model::load(&path, Device::Cpu).err().unwrap());
        assert!(
            e.contains("huge.safetensors") && e.contains("at least"),
            "{e}"
        );
        write_edited(&m, &path, |d| {
            d["net"]["value_hidden"] = 1_000_000_000_000u64.into()
        });
        let e = format!("{:#}", Model::load(&path, Device::Cpu).err().unwrap());
        assert!(e.contains("value_hidden"), "{e}");
        let info = &m.info;
        let n = info.net.min_weights();
        assert!(info.check_weight_count(n, &path).is_ok());
        assert!(info.check_weight_count(n - 1, &path).is_err());
        let all: u64 = m.weights().iter().map(|(_, t)| t.numel() as u64).sum();
        assert!(all >= n, "{all} weights, lower bound {n}");
    }

    #[test]
    fn models_serve_variants_of_the_same_layout_only() {
        let info = ModelInfo::new(&tiny(), Variant::Standard);
        assert!(info.check_variant(Variant::Standard).is_ok());
        assert!(info.check_variant(Variant::ScrambledEggs).is_ok());
        for other in [
            Variant::Six,
            Variant::Parachute,
            Variant::Gemma,
            Variant::Ambiloa,
            Variant::Alveole,
        ] {
            let err = info.check_variant(other).unwrap_err().to_string();
            assert!(err.contains("standard model cannot be used for"), "{err}");
            assert!(err.contains(other.name()), "{err}");
        }
        let gemma = ModelInfo::new(&tiny(), Variant::Gemma);
        assert!(gemma.check_variant(Variant::Standard).is_err());
    }
}
