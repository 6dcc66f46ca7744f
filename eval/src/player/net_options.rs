//! Where and in what precision a player's network runs: the `device=` and `precision=`
//! keys of a player spec, as types parsed once ([`Device`] and [`Precision`], whose home
//! is [`selfplay::device`]; together [`NetOptions`]). The binary maps them
//! onto torch's devices and its inference settings.

use super::spec::PlayerSpec;

pub use selfplay::{Device, Precision};

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
    /// Threads of the player's search (0 or 1: one). A loader gives a player of several
    /// threads as many inference threads, each with its own copy of the network and one
    /// torch thread, so that the search threads' batches are evaluated at once.
    pub threads: usize,
}

impl NetOptions {
    /// On `device`, in the command's precision, at fixed search counts.
    pub fn on(device: Device) -> NetOptions {
        NetOptions {
            device,
            precision: None,
            timed: false,
            threads: 1,
        }
    }

    /// The options a spec states (the defaults for keys it does not give).
    pub fn of(spec: &PlayerSpec) -> NetOptions {
        NetOptions {
            device: spec.device("device").unwrap_or_default(),
            precision: spec.precision("precision"),
            timed: spec.int("ms").is_some(),
            threads: spec.int("threads").map_or(1, |n| n as usize),
        }
    }
}
