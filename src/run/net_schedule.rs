//! `run.net_schedule`: a network that grows as the run goes on. Each stage names a shape
//! and the self-play positions the run must have produced before its network grows into
//! that shape ([`train::grow`]: a wider and deeper network that computes what the old one
//! did, then trains on the same replay window). Positions, not minutes: the schedule
//! follows the run's data, so a faster machine grows its network sooner, when it has the
//! data to train a larger one, and a short run never gets there.
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
    /// The shape it grows into: a table like `train.net`, every key optional (a missing
    /// one takes the `small` preset's value, as in `train.net`).
    pub net: NetConfig,
}

/// Checks a schedule that starts from the run's network `first` (`train.net`): the
/// positions rise strictly, and each shape differs from the one before it and can grow
/// from it ([`train::grow::check`]). The message names the stage (`run.net_schedule[k]`).
pub fn validate(first: &NetConfig, schedule: &[NetGrowth]) -> std::result::Result<(), String> {
    let mut before = first;
    let mut positions = None;
    for (k, stage) in schedule.iter().enumerate() {
        let at = format!("run.net_schedule[{k}]");
        stage.net.validate().map_err(|e| format!("{at}.net: {e}"))?;
        if stage.net == *before {
            return Err(format!(
                "{at}.net: the same network as the one before it ({})",
                before.shape()
            ));
        }
        train::grow::check(before, &stage.net).map_err(|e| {
            format!(
                "{at}.net: cannot grow {} into {}: {e}",
                before.shape(),
                stage.net.shape()
            )
        })?;
        if let Some(p) = positions.filter(|&p| stage.after_positions <= p) {
            return Err(format!(
                "{at}.after_positions = {}: must exceed the stage before it ({p})",
                stage.after_positions
            ));
        }
        positions = Some(stage.after_positions);
        before = &stage.net;
    }
    Ok(())
}

/// The stage of a network of shape `net`: 0 for `first` (`train.net`), k + 1 for
/// `schedule[k]`; `None` for a shape the run does not have.
pub fn stage_of(first: &NetConfig, schedule: &[NetGrowth], net: &NetConfig) -> Option<usize> {
    if net == first {
        return Some(0);
    }
    schedule.iter().position(|s| s.net == *net).map(|k| k + 1)
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

/// The stage to grow into now: the one after `net`'s, once the run has produced its
/// positions (`produced`). `None`: not yet, the last stage, or a shape the schedule lacks.
pub fn due<'a>(
    first: &NetConfig,
    schedule: &'a [NetGrowth],
    net: &NetConfig,
    produced: u64,
) -> Option<&'a NetGrowth> {
    let next = schedule.get(stage_of(first, schedule, net)?)?;
    (produced >= next.after_positions).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(after_positions: u64, blocks: usize, channels: usize) -> NetGrowth {
        NetGrowth {
            after_positions,
            net: NetConfig {
                blocks,
                channels,
                ..NetConfig::small()
            },
        }
    }

    #[test]
    fn stages_follow_the_positions_produced() {
        let first = NetConfig::small();
        let schedule = [stage(1_000, 6, 48), stage(5_000, 8, 64)];
        validate(&first, &schedule).unwrap();
        assert_eq!(stage_of(&first, &schedule, &first), Some(0));
        assert_eq!(stage_of(&first, &schedule, &schedule[1].net), Some(2));
        assert_eq!(stage_of(&first, &schedule, &NetConfig::gpu()), None);
        assert_eq!(due(&first, &schedule, &first, 999), None);
        assert_eq!(due(&first, &schedule, &first, 1_000), Some(&schedule[0]));
        // One stage at a time, from the shape the trainer has.
        assert_eq!(due(&first, &schedule, &first, 9_000), Some(&schedule[0]));
        assert_eq!(due(&first, &schedule, &schedule[0].net, 4_999), None);
        assert_eq!(
            due(&first, &schedule, &schedule[0].net, 5_000),
            Some(&schedule[1])
        );
        assert_eq!(due(&first, &schedule, &schedule[1].net, u64::MAX), None);
        assert_eq!(due(&first, &[], &first, u64::MAX), None);
    }

    #[test]
    fn each_stage_gets_the_training_config_with_its_shape() {
        let train = TrainConfig::default();
        let schedule = [stage(1_000, 6, 48)];
        let c = train_config_for(&train, &schedule, &schedule[0].net).unwrap();
        assert_eq!(c.net, schedule[0].net);
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
    }
}
