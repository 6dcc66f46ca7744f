//! `run.net_schedule`: a network that grows as the run goes on. Each stage names the keys
//! of the network's shape it changes and the self-play positions the run must have
//! produced before its network grows into that shape ([`train::grow`]: a wider and deeper
//! network that computes what the old one did, then trains on the same replay window).
//! Positions, not minutes: the schedule follows the run's data, so a faster machine grows
//! its network sooner, when it has the data to train a larger one, and a short run never
//! gets there. A key a stage leaves out keeps the value of the network before it, so the
//! default stage `{ blocks = 6 }` deepens whatever `train.net` a user chose.
//!
//! The trainer's checkpoint says which stage a run is at (its network's shape). Growing
//! writes the grown checkpoint in place of the old one, atomically, before it trains, so
//! a restart finds one or the other and goes on from there; no other state records the
//! stage.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use train::{NetConfig, TrainConfig};

/// One stage of `run.net_schedule`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetGrowth {
    /// Self-play positions the run has produced (every shard its trainer has read: its
    /// own, its background's and its workers') before the network grows.
    pub after_positions: u64,
    /// What of the shape changes: a table like `train.net` whose missing keys keep the
    /// values of the network before this stage.
    pub net: NetChange,
}

/// The keys of [`NetConfig`] that one stage sets; `None` keeps the value of the network
/// before it. Written back (a run's saved `config.toml`) with only the keys it sets. The
/// input planes (`plane_set`) are not among them: a grown network computes what the old
/// one did from the same inputs, so a stage that names them is refused when the config is
/// read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_pool_every: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_channels: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_channels: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_hidden: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupancy_head: Option<bool>,
}

impl NetChange {
    /// The shape `before` takes with this stage's keys.
    pub fn apply(&self, before: &NetConfig) -> NetConfig {
        NetConfig {
            blocks: self.blocks.unwrap_or(before.blocks),
            channels: self.channels.unwrap_or(before.channels),
            global_pool_every: self.global_pool_every.unwrap_or(before.global_pool_every),
            policy_channels: self.policy_channels.unwrap_or(before.policy_channels),
            value_channels: self.value_channels.unwrap_or(before.value_channels),
            value_hidden: self.value_hidden.unwrap_or(before.value_hidden),
            plane_set: before.plane_set,
            occupancy_head: self.occupancy_head.unwrap_or(before.occupancy_head),
        }
    }
}

/// The shapes of a run's stages: `first` (`train.net`), then each stage's change applied
/// to the shape before it.
pub fn shapes(first: &NetConfig, schedule: &[NetGrowth]) -> Vec<NetConfig> {
    let mut out = vec![first.clone()];
    for stage in schedule {
        let next = stage.net.apply(out.last().expect("first"));
        out.push(next);
    }
    out
}

/// Checks a schedule that starts from the run's network `first` (`train.net`): the
/// positions rise strictly, and each shape differs from the one before it and can grow
/// from it ([`train::grow::check`]). The message names the stage (`run.net_schedule[k]`).
pub fn validate(first: &NetConfig, schedule: &[NetGrowth]) -> std::result::Result<(), String> {
    let shapes = shapes(first, schedule);
    let mut positions = None;
    for (k, stage) in schedule.iter().enumerate() {
        let at = format!("run.net_schedule[{k}]");
        let (before, after) = (&shapes[k], &shapes[k + 1]);
        after.validate().map_err(|e| format!("{at}.net: {e}"))?;
        if after == before {
            return Err(format!(
                "{at}.net: the same network as the one before it ({})",
                before.shape()
            ));
        }
        train::grow::check(before, after).map_err(|e| {
            format!(
                "{at}.net: cannot grow {} into {}: {e} (a schedule made for another \
                 train.net: give run.net_schedule for this one, or [] for none)",
                before.shape(),
                after.shape()
            )
        })?;
        if let Some(p) = positions.filter(|&p| stage.after_positions <= p) {
            return Err(format!(
                "{at}.after_positions = {}: must exceed the stage before it ({p})",
                stage.after_positions
            ));
        }
        positions = Some(stage.after_positions);
    }
    Ok(())
}

/// The stage of a network of shape `net`: 0 for `first` (`train.net`), k + 1 for
/// `schedule[k]`; `None` for a shape the run does not have.
pub fn stage_of(first: &NetConfig, schedule: &[NetGrowth], net: &NetConfig) -> Option<usize> {
    shapes(first, schedule).iter().position(|s| s == net)
}

/// The training config of the stage whose network has shape `net`: `train` with that
/// shape. Errors: a shape that is neither `train.net` nor a stage of `schedule` (a run
/// resumed with another network or schedule than it was trained with).
pub fn train_config_for(
    train: &TrainConfig,
    schedule: &[NetGrowth],
    net: &NetConfig,
) -> Result<TrainConfig> {
    if stage_of(&train.net, schedule, net).is_none() {
        bail!(
            "the trainer's network ({}, {net:?}) is neither train.net ({}) nor a stage of \
             run.net_schedule: resume the run with the config it was trained with",
            net.shape(),
            train.net.shape()
        );
    }
    Ok(TrainConfig {
        net: net.clone(),
        ..train.clone()
    })
}

/// The shape to grow into now: the stage after `net`'s, once the run has produced its
/// positions (`produced`). `None`: not yet, the last stage, or a shape the schedule lacks.
pub fn due(
    first: &NetConfig,
    schedule: &[NetGrowth],
    net: &NetConfig,
    produced: u64,
) -> Option<NetConfig> {
    let k = stage_of(first, schedule, net)?;
    let next = schedule.get(k)?;
    (produced >= next.after_positions).then(|| shapes(first, schedule).swap_remove(k + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(after_positions: u64, blocks: usize, channels: usize) -> NetGrowth {
        NetGrowth {
            after_positions,
            net: NetChange {
                blocks: Some(blocks),
                channels: Some(channels),
                ..NetChange::default()
            },
        }
    }

    fn net(blocks: usize, channels: usize) -> NetConfig {
        NetConfig {
            blocks,
            channels,
            ..NetConfig::small()
        }
    }

    #[test]
    fn stages_follow_the_positions_produced() {
        let first = NetConfig::small();
        let schedule = [stage(1_000, 6, 48), stage(5_000, 8, 64)];
        validate(&first, &schedule).unwrap();
        assert_eq!(
            shapes(&first, &schedule),
            [first.clone(), net(6, 48), net(8, 64)]
        );
        assert_eq!(stage_of(&first, &schedule, &first), Some(0));
        assert_eq!(stage_of(&first, &schedule, &net(8, 64)), Some(2));
        assert_eq!(stage_of(&first, &schedule, &NetConfig::gpu()), None);
        assert_eq!(due(&first, &schedule, &first, 999), None);
        assert_eq!(due(&first, &schedule, &first, 1_000), Some(net(6, 48)));
        // One stage at a time, from the shape the trainer has.
        assert_eq!(due(&first, &schedule, &first, 9_000), Some(net(6, 48)));
        assert_eq!(due(&first, &schedule, &net(6, 48), 4_999), None);
        assert_eq!(due(&first, &schedule, &net(6, 48), 5_000), Some(net(8, 64)));
        assert_eq!(due(&first, &schedule, &net(8, 64), u64::MAX), None);
        assert_eq!(due(&first, &[], &first, u64::MAX), None);
    }

    /// A stage's missing keys keep the network's values, whatever `train.net` is: the
    /// default schedule deepens a wider or a tiny network as it deepens the default one.
    #[test]
    fn a_stage_changes_only_the_keys_it_names() {
        let deeper = [NetGrowth {
            after_positions: 10,
            net: NetChange {
                blocks: Some(6),
                ..NetChange::default()
            },
        }];
        for first in [NetConfig::small(), NetConfig::tiny(), net(4, 64)] {
            validate(&first, &deeper).unwrap();
            let grown = &shapes(&first, &deeper)[1];
            assert_eq!(
                *grown,
                NetConfig {
                    blocks: 6,
                    ..first.clone()
                }
            );
        }
        let head = [NetGrowth {
            after_positions: 10,
            net: NetChange {
                occupancy_head: Some(true),
                ..NetChange::default()
            },
        }];
        assert_eq!(
            shapes(&NetConfig::tiny(), &head)[1].shape(),
            "1x8+occupancy"
        );
        // The saved config writes back only the keys a stage names.
        let text = toml::to_string(&deeper[0]).unwrap();
        assert_eq!(text.trim(), "after_positions = 10\n\n[net]\nblocks = 6");
        let back: NetGrowth = toml::from_str(&text).unwrap();
        assert_eq!(back, deeper[0]);
    }

    /// A stage cannot change the input planes: the key is refused when the config is read
    /// (under either of its names), not accepted and then refused by every validation.
    #[test]
    fn a_stage_that_changes_the_planes_is_refused_when_read() {
        for key in ["plane_set", "input_features"] {
            let text = format!("after_positions = 10\n\n[net]\n{key} = \"loa\"\n");
            let err = toml::from_str::<NetGrowth>(&text).unwrap_err().to_string();
            assert!(err.contains(key), "{key}: {err}");
        }
    }

    #[test]
    fn each_stage_gets_the_training_config_with_its_shape() {
        let train = TrainConfig::default();
        let schedule = [stage(1_000, 6, 48)];
        let c = train_config_for(&train, &schedule, &net(6, 48)).unwrap();
        assert_eq!(c.net, net(6, 48));
        assert_eq!(c.lr, train.lr);
        assert_eq!(
            train_config_for(&train, &schedule, &train.net).unwrap(),
            train
        );
        let err = train_config_for(&train, &schedule, &NetConfig::gpu())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("10x128") && err.contains("run.net_schedule"),
            "{err}"
        );
    }

    #[test]
    fn bad_schedules_are_refused_by_stage() {
        let first = NetConfig::small();
        let cases = [
            (
                vec![stage(10, 4, 32)],
                "run.net_schedule[0].net: the same network",
            ),
            (
                vec![stage(10, 2, 32)],
                "run.net_schedule[0].net: cannot grow 4x32 into 2x32",
            ),
            (
                vec![stage(10, 6, 48), stage(10, 8, 48)],
                "run.net_schedule[1].after_positions = 10",
            ),
            (
                vec![stage(10, 6, 48), stage(20, 6, 32)],
                "run.net_schedule[1].net: cannot grow 6x48 into 6x32",
            ),
            (vec![stage(10, 6, 0)], "run.net_schedule[0].net"),
        ];
        for (schedule, expected) in cases {
            let err = validate(&first, &schedule).unwrap_err();
            assert!(err.contains(expected), "{err}");
        }
        // A schedule made for the default network, on a deeper one, says what to do.
        let err = validate(&NetConfig::gpu(), &[stage(10, 6, 128)]).unwrap_err();
        assert!(
            err.contains("cannot grow 10x128 into 6x128") && err.contains("or [] for none"),
            "{err}"
        );
    }
}
