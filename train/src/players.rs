//! Model files as players: the model loader of every [`PlayerFactory`] that can play a
//! network (`model:` players and the UBFM/Descent players with `path=`), and model files
//! as evaluators. The one place where a model path becomes a `selfplay::Evaluator`: the
//! commands of `loazero-torch`, `serve` and the run loop all load through it. (The
//! torch-free `loazero` binary builds its factories without a loader:
//! `loazero::players::Players::torch_free`.)

use crate::{InferenceConfig, NetEvaluator};
use anyhow::{anyhow, Result};
use eval::PlayerFactory;
use loa::Variant;
use std::sync::Arc;

/// A player factory whose `model:` players load their network with `inference` (the
/// player's `device=` replacing `inference.device`, its `precision=`, when given,
/// `inference.precision`; a player that searches by time with [`timed_inference`]'s
/// thread count and batch wait; a player of `threads=N` above 1 with N inference
/// threads of one torch thread each); with `variant`, a model of another
/// network layout is refused when it loads. The one place where a model loader is made:
/// `match`, `bestmove`, `engine`, `benchmark` and the run loop all build their players
/// through it.
pub fn model_player_factory(inference: InferenceConfig, variant: Option<Variant>) -> PlayerFactory {
    PlayerFactory::new().with_model_loader(Arc::new(move |path, net| {
        let base = if net.timed {
            timed_inference(inference.device)
        } else {
            inference.clone()
        };
        let mut config = InferenceConfig {
            device: net.device,
            precision: net.precision.unwrap_or(inference.precision),
            ..base
        };
        if net.threads > 1 {
            // One inference thread per search thread, each with one torch thread (as
            // KataGo's CPU backend): the threads' batches run at once, none waits.
            config.forward_threads = net.threads;
            config.threads = 1;
            config.deadline_us = 0;
        }
        net_evaluator_with(path, &config, variant)
    }))
}

/// The factory of the commands that play (`match`, `bestmove`, `engine`):
/// [`model_player_factory`] with the default
/// inference settings, or with [`timed_inference`] when `timed` (players that think
/// against a clock: `engine`, time controls).
pub fn eval_player_factory(timed: bool) -> PlayerFactory {
    let inference = if timed {
        timed_inference(selfplay::Device::Cpu)
    } else {
        InferenceConfig::default()
    };
    model_player_factory(inference, None).with_private_timed_networks()
}

/// Loads a network model file as an evaluator on `device` (`cpu`, `cuda`, `cuda:N`). The
/// evaluator owns its inference thread; it is `Sync` and meant to be shared by every
/// search thread.
///
/// With `variant`, a model whose network layout does not fit that variant is refused here
/// (otherwise its first evaluation request fails).
pub fn net_evaluator(
    path: &std::path::Path,
    device: selfplay::Device,
    variant: Option<Variant>,
) -> Result<std::sync::Arc<dyn selfplay::Evaluator>> {
    let config = InferenceConfig {
        device,
        ..InferenceConfig::default()
    };
    net_evaluator_with(path, &config, variant)
}

/// The inference settings of players that think against a clock: one torch thread (the
/// opponent keeps the other cores; OpenMP threads would spin while the search works) and
/// no wait for more requests before a forward pass (one search sends one batch at a
/// time, so waiting only burns the budget).
pub fn timed_inference(device: selfplay::Device) -> InferenceConfig {
    InferenceConfig {
        device,
        deadline_us: 0,
        threads: 1,
        ..InferenceConfig::default()
    }
}

/// The model (or checkpoint) at `path` behind a [`NetEvaluator`] with `config`. Errors
/// name the file.
pub fn load_net_evaluator(
    path: &std::path::Path,
    config: &InferenceConfig,
) -> Result<NetEvaluator> {
    NetEvaluator::load(path, config)
        .map_err(|e| anyhow!("cannot load model {}: {e:#}", path.display()))
}

/// [`net_evaluator`] with explicit inference settings (`config.device` is the device).
pub fn net_evaluator_with(
    path: &std::path::Path,
    config: &InferenceConfig,
    variant: Option<Variant>,
) -> Result<std::sync::Arc<dyn selfplay::Evaluator>> {
    let evaluator = load_net_evaluator(path, config)?;
    if let Some(v) = variant {
        evaluator
            .info()
            .check_variant(v)
            .map_err(|e| anyhow!("{}: {e:#}", path.display()))?;
    }
    Ok(std::sync::Arc::new(evaluator))
}
