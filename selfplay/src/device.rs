//! Where and in what precision a network runs ([`Device`]: `cpu`, `cuda` or `cuda:N`;
//! [`Precision`]: `auto`, `float`, `half`, `bfloat16`), as player specs (`device=`,
//! `precision=`) and run configs (`train.device`, `train.inference.device`,
//! `train.precision`, `train.inference.precision`) write them. Names only: this crate has
//! no torch; `train::device` maps them onto torch's devices and tensor kinds and checks
//! that a device exists. Their one home, so that `eval`'s specs and `train`'s configs
//! share them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A device a network runs on: `cpu`, `cuda` (the default CUDA device) or `cuda:N`
/// (`gpu` is read as `cuda`; case does not matter). In configs it is the same text; bad
/// text is an error that quotes it and says what is expected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Device {
    /// The CPU.
    #[default]
    Cpu,
    /// A CUDA device: `None` the default one, `Some(n)` the n-th.
    Cuda(Option<usize>),
}

impl FromStr for Device {
    type Err = String;
    fn from_str(text: &str) -> Result<Device, String> {
        let lower = text.trim().to_ascii_lowercase();
        match lower.as_str() {
            "cpu" => Ok(Device::Cpu),
            "cuda" | "gpu" => Ok(Device::Cuda(None)),
            other => match other.strip_prefix("cuda:") {
                Some(n) => n.parse().map(|n| Device::Cuda(Some(n))).map_err(|_| {
                    format!("device '{text}': the CUDA device index must be a number (cuda:N)")
                }),
                None => Err(format!("device '{text}': expected cpu, cuda or cuda:N")),
            },
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => write!(f, "cpu"),
            Device::Cuda(None) => write!(f, "cuda"),
            Device::Cuda(Some(n)) => write!(f, "cuda:{n}"),
        }
    }
}

impl Serialize for Device {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Device {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Device, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Floating-point format of a network's inference or training. Weights are trained and
/// stored in fp32; the inference service converts its copy (after folding the batch
/// norms, when it folds). On the CPU `bfloat16` runs on oneDNN's bf16 kernels, fast only
/// where the CPU has them in hardware (`loazero bench net --precision bfloat16` tells);
/// `half` is meant for CUDA. `auto` picks for the device. A player spec without
/// `precision=` runs in the command's own setting (`train.inference.precision`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// On the CPU, the faster of `float` and `bfloat16` for the network at hand, timed on
    /// its first use on the machine (forward passes at batch 16 and 64; bf16 is a candidate
    /// only where the CPU computes it in hardware, `avx512_bf16` or AMX, and the
    /// environment does not cap torch below it) and cached; `float` on CUDA
    /// (`train::auto_precision` decides). A flag alone does not tell: the same
    /// `avx512_bf16` made bf16 faster on one CPU and slower on another
    /// (`docs/experiments.md`, batch 26). Training steps (`train.precision`) take bf16 for
    /// `auto` only with AMX, and there only where it measures faster.
    Auto,
    /// 32-bit floats.
    Float,
    /// 16-bit IEEE half floats.
    Half,
    /// bfloat16 (8-bit exponent like fp32, 8-bit mantissa).
    Bfloat16,
}

impl Precision {
    /// Every precision, in the order help texts list them.
    pub const ALL: [Precision; 4] = [
        Precision::Auto,
        Precision::Float,
        Precision::Half,
        Precision::Bfloat16,
    ];

    /// Its name in specs and configs.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Auto => "auto",
            Precision::Float => "float",
            Precision::Half => "half",
            Precision::Bfloat16 => "bfloat16",
        }
    }
}

impl FromStr for Precision {
    type Err = String;
    fn from_str(text: &str) -> Result<Precision, String> {
        let lower = text.trim().to_ascii_lowercase();
        Precision::ALL
            .into_iter()
            .find(|p| p.name() == lower)
            .ok_or_else(|| {
                let names: Vec<&str> = Precision::ALL.iter().map(|p| p.name()).collect();
                format!("precision '{text}': expected one of {}", names.join(", "))
            })
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Config {
        device: Device,
    }

    #[test]
    fn devices_parse_print_and_read_from_configs() {
        for (text, device, shown) in [
            ("cpu", Device::Cpu, "cpu"),
            ("CUDA", Device::Cuda(None), "cuda"),
            ("gpu", Device::Cuda(None), "cuda"),
            ("cuda:1", Device::Cuda(Some(1)), "cuda:1"),
        ] {
            assert_eq!(text.parse::<Device>().unwrap(), device, "{text}");
            assert_eq!(device.to_string(), shown);
            let saved = toml::to_string(&Config { device }).unwrap();
            assert_eq!(saved.trim(), format!("device = \"{shown}\""));
            let read: Config = toml::from_str(&format!("device = \"{text}\"")).unwrap();
            assert_eq!(read.device, device);
        }
        for bad in ["tpu", "cuda:x", ""] {
            let e = bad.parse::<Device>().unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
            let e = toml::from_str::<Config>(&format!("device = \"{bad}\"")).unwrap_err();
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }

    #[test]
    fn precisions_parse_and_print() {
        for p in Precision::ALL {
            assert_eq!(p.to_string().parse::<Precision>().unwrap(), p);
        }
        assert_eq!(
            "BFloat16".parse::<Precision>().unwrap(),
            Precision::Bfloat16
        );
        let e = "fp8".parse::<Precision>().unwrap_err();
        assert!(e.contains("'fp8'") && e.contains("bfloat16"), "{e}");
    }
}
