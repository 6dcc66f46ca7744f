//! Where and in what precision a player's network runs: the `device=` and `precision=`
//! keys of a player spec, as types parsed once ([`Device`] and [`Precision`], whose home
//! is [`selfplay::device`]; together [`NetOptions`]). The binary maps them
//! onto torch's devices and its inference settings.

use super::spec::PlayerSpec;

pub use selfplay::{Device, Precision};

/// Where and in what precision a player's network runs: its spec's `device=` and
/// `precision=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NetOptions {
    /// Default [`Device::Cpu`].
    pub device: Device,
    /// `None` (the default): the command's own inference setting.
    pub precision: Option<Precision>,
}

impl NetOptions {
    /// On `device`, in the command's precision.
    pub fn on(device: Device) -> NetOptions {
        NetOptions {
            device,
            precision: None,
        }
    }

    /// The options a spec states (the defaults for keys it does not give).
    pub fn of(spec: &PlayerSpec) -> NetOptions {
        NetOptions {
            device: spec.device("device").unwrap_or_default(),
            precision: spec.precision("precision"),
        }
    }
}
