//! A deterministic run computes in one arithmetic from its first process to its last:
//! `auto` precision is resolved once, when the run begins (measured, or read from the
//! machine's cache: [`train::auto_precision`]), kept in `state.json`
//! ([`LoopState::pinned_precision`](rundir::state::LoopState)), and a resumed process
//! uses what is kept there instead of measuring again. Otherwise a resume on a machine
//! where `float` and `bfloat16` time close (or under another load) could pick the other
//! one and break the run's bit-for-bit reproducibility.

use super::super::config::RunConfig;
use anyhow::Result;
use rundir::state::PinnedPrecision;
use selfplay::Precision;

/// The precisions `config` computes in now: its settings, with `auto` resolved for the
/// run's first network (inference: on its device with its threads; training: with its
/// threads and batch).
pub(super) fn resolve(config: &RunConfig) -> Result<PinnedPrecision> {
    let net = &config.train.net;
    let variant = config.variant();
    let inference = &config.train.inference;
    let training = &config.train;
    Ok(PinnedPrecision {
        inference: train::auto_precision::inference_precision(
            inference.precision,
            train::device::resolve_device(inference.device)?,
            net,
            variant,
            inference.threads,
        ),
        training: train::auto_precision::training_precision(
            training.precision,
            train::device::resolve_device(training.device)?,
            net,
            variant,
            training.threads,
            training.batch_size,
        ),
    })
}

/// Puts `pin` in place of `config`'s `auto` settings (a precision the config names
/// explicitly stays its own).
pub(super) fn apply(config: &mut RunConfig, pin: PinnedPrecision) {
    if config.train.inference.precision == Precision::Auto {
        config.train.inference.precision = pin.inference;
    }
    if config.train.precision == Precision::Auto {
        config.train.precision = pin.training;
    }
}
