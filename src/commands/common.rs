//! Arguments shared by several subcommands.

use anyhow::{anyhow, Result};
use clap::Args;
use loa::{Position, Rules, Variant};

/// `--variant` and `--rules`.
#[derive(Args, Clone, Debug)]
pub struct GameArgs {
    /// Variant: standard, scrambled-eggs, 6x6, parachute, gemma, ambiloa or alveole.
    #[arg(long, default_value = "standard", value_parser = parse_variant)]
    pub variant: Variant,
    /// Rules: a preset (classic = black first, mover wins a simultaneous connection, pass
    /// when stuck, draw on 3-fold repetition; icga = the same but a simultaneous connection
    /// is a draw), optionally followed by overrides, e.g.
    /// `classic,no-move=loss,repetition=off,ply-limit=300,first=white,simultaneous=draw`.
    #[arg(long, default_value = "classic", value_parser = parse_rules)]
    pub rules: Rules,
}

impl GameArgs {
    /// The start position, or `text` parsed as a position of the variant.
    pub fn position(&self, text: Option<&str>) -> Result<Position> {
        match text {
            None => Ok(Position::start(self.variant, &self.rules)),
            Some(t) => Position::from_text(t, self.variant).map_err(|e| anyhow!("{e}")),
        }
    }
}

fn parse_variant(s: &str) -> Result<Variant, String> {
    s.parse()
}

fn parse_rules(s: &str) -> Result<Rules, String> {
    Rules::parse(s)
}

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
