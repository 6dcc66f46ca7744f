//! Where and in what precision a player's network runs: the `device=` and `precision=`
//! keys of a player spec, as types parsed once ([`Device`], [`Precision`], together
//! [`NetOptions`]). The binary maps them onto torch's devices and its inference settings.

use super::spec::PlayerSpec;
use std::fmt;
use std::str::FromStr;

/// A device a network runs on: `cpu`, `cuda` (the default CUDA device) or `cuda:N`
/// (`gpu` is read as `cuda`; case does not matter).
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

/// The precision of a network's inference (`precision=`); a spec without it runs in the
/// command's own setting (`train.inference.precision`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Whatever the device runs fastest (the binary decides).
    Auto,
    /// 32-bit floats.
    Float,
    /// 16-bit floats.
    Half,
    /// bfloat16.
    BFloat16,
}

impl Precision {
    /// Every precision, in the order help texts list them.
    pub const ALL: [Precision; 4] = [
        Precision::Auto,
        Precision::Float,
        Precision::Half,
        Precision::BFloat16,
    ];

    /// Its name in specs and configs.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Auto => "auto",
            Precision::Float => "float",
            Precision::Half => "half",
            Precision::BFloat16 => "bfloat16",
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

/// Where and in what precision a player's network runs (its spec's `device=` and
/// `precision=`), and whether the player searches against a clock (`ms=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NetOptions {
    /// Default [`Device::Cpu`].
    pub device: Device,
    /// `None` (the default): the command's own inference setting.
    pub precision: Option<Precision>,
    /// The player searches by time. A loader serves it with one torch thread and no wait
    /// for more requests (its search sends one batch at a time), and a factory made
    /// [`super::PlayerFactory::with_private_timed_networks`] gives each such player its own
    /// evaluator, so that games played at once never queue for one inference thread.
    pub timed: bool,
}

impl NetOptions {
    /// On `device`, in the command's precision, at fixed search counts.
    pub fn on(device: Device) -> NetOptions {
        NetOptions {
            device,
            precision: None,
            timed: false,
        }
    }

    /// The options a spec states (the defaults for keys it does not give).
    pub fn of(spec: &PlayerSpec) -> NetOptions {
        NetOptions {
            device: spec.device("device").unwrap_or_default(),
            precision: spec.precision("precision"),
            timed: spec.int("ms").is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_precisions_parse_and_print() {
        for (text, device, shown) in [
            ("cpu", Device::Cpu, "cpu"),
            ("CUDA", Device::Cuda(None), "cuda"),
            ("gpu", Device::Cuda(None), "cuda"),
            ("cuda:1", Device::Cuda(Some(1)), "cuda:1"),
        ] {
            assert_eq!(text.parse::<Device>().unwrap(), device, "{text}");
            assert_eq!(device.to_string(), shown);
        }
        for bad in ["tpu", "cuda:x", ""] {
            let e = bad.parse::<Device>().unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
        for p in Precision::ALL {
            assert_eq!(p.to_string().parse::<Precision>().unwrap(), p);
        }
        assert_eq!(
            "BFloat16".parse::<Precision>().unwrap(),
            Precision::BFloat16
        );
        let e = "fp8".parse::<Precision>().unwrap_err();
        assert!(e.contains("'fp8'") && e.contains("bfloat16"), "{e}");
    }
}
