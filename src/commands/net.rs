//! The network side of the eval subcommands: model files as evaluators (torch; only in
//! `loazero-torch`; the torch-free `loazero` binary has a stub in its place, see
//! `src/light.rs`).

use anyhow::{anyhow, Result};
use loa::Variant;

/// Loads a network model file as an evaluator on `device` (`cpu`, `cuda`, `cuda:N`); the
/// one place the binary turns a model path into a `selfplay::Evaluator`. The evaluator owns
/// its inference thread; it is `Sync` and meant to be shared by every search thread.
///
/// With `variant`, a model whose network layout does not fit that variant is refused here
/// (otherwise its first evaluation request fails).
pub fn net_evaluator(
    path: &std::path::Path,
    device: &str,
    variant: Option<Variant>,
) -> Result<std::sync::Arc<dyn selfplay::Evaluator>> {
    let config = train::InferenceConfig {
        device: device.to_string(),
        ..train::InferenceConfig::default()
    };
    net_evaluator_with(path, &config, variant)
}

/// [`net_evaluator`] for players that think against a clock ([`timed_inference`]).
pub fn net_evaluator_timed(
    path: &std::path::Path,
    device: &str,
    variant: Option<Variant>,
) -> Result<std::sync::Arc<dyn selfplay::Evaluator>> {
    net_evaluator_with(path, &timed_inference(device), variant)
}

/// The inference settings of players that think against a clock: one torch thread (the
/// opponent keeps the other cores; OpenMP threads would spin while the search works) and
/// no wait for more requests before a forward pass (one search sends one batch at a
/// time, so waiting only burns the budget).
pub fn timed_inference(device: &str) -> train::InferenceConfig {
    train::InferenceConfig {
        device: device.to_string(),
        deadline_us: 0,
        threads: 1,
        ..train::InferenceConfig::default()
    }
}

/// [`net_evaluator`] with explicit inference settings (`config.device` is the device).
pub fn net_evaluator_with(
    path: &std::path::Path,
    config: &train::InferenceConfig,
    variant: Option<Variant>,
) -> Result<std::sync::Arc<dyn selfplay::Evaluator>> {
    let evaluator = train::NetEvaluator::load(path, config)
        .map_err(|e| anyhow!("cannot load model {}: {e:#}", path.display()))?;
    if let Some(v) = variant {
        evaluator
            .info()
            .check_variant(v)
            .map_err(|e| anyhow!("{}: {e:#}", path.display()))?;
    }
    Ok(std::sync::Arc::new(evaluator))
}
