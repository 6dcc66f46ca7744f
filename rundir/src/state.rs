//! [`LoopState`]: where the loop stands, saved atomically as `RUN_DIR/state.json` after
//! every phase. Together with the files of the run directory it is everything a restart
//! needs; nothing else is kept only in memory.

use anyhow::{anyhow, bail, Context, Result};
use selfplay::Precision;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Format tag of `state.json`.
pub const STATE_FORMAT: &str = "loazero-run-state";
/// Version of the state layout written by this build.
pub const STATE_VERSION: u32 = 1;

/// The phases of a generation, in order. Generation 0 only has `Rate` (the initial model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The best model plays `run.games_per_generation` games.
    Selfplay,
    /// The trainer runs up to `train_target` steps, then writes the candidate.
    Train,
    /// The candidate plays the best model; promoted or not.
    Gate,
    /// The best model is rated against the anchors (when due).
    Rate,
}

/// The loop's saved position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopState {
    /// Always [`STATE_FORMAT`].
    pub format: String,
    /// [`STATE_VERSION`].
    pub version: u32,
    /// The generation in progress.
    pub generation: u32,
    /// Its phase.
    pub phase: Phase,
    /// The generation of the best model (`models/gen-NNNN.safetensors`).
    pub best: u32,
    /// Trainer step at which this generation's training ends (set when training starts).
    pub train_target: u64,
    /// Active seconds of the run so far (all processes, up to the last save).
    pub elapsed_s: f64,
    /// Seconds the last complete generation took (self-play + training + gate), to
    /// decide whether another one fits in the time budget.
    pub last_generation_s: f64,
    /// Seconds the last rating round took.
    pub last_rating_s: f64,
    /// Elapsed seconds when the current generation started.
    pub generation_started_s: f64,
    /// Generations whose model has been rated against the anchors.
    pub rated: Vec<u32>,
    /// Candidates promoted and rejected so far.
    pub promoted: u32,
    /// See `promoted`.
    pub rejected: u32,
    /// A deterministic run's `auto` precisions as it resolved them when it began, so that
    /// a resumed process computes in the same arithmetic whatever it would measure now
    /// (`None` in other runs, and in a state written before this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_precision: Option<PinnedPrecision>,
}

/// The precisions a deterministic run computes in ([`LoopState::pinned_precision`]):
/// neither is `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedPrecision {
    /// Of inference: self-play, gates and ratings (`train.inference.precision`).
    pub inference: Precision,
    /// Of the training steps (`train.precision`).
    pub training: Precision,
}

impl Default for LoopState {
    fn default() -> Self {
        LoopState::new()
    }
}

impl LoopState {
    /// The state of a new run: generation 0 (the initial model) is to be rated.
    pub fn new() -> LoopState {
        LoopState {
            format: STATE_FORMAT.into(),
            version: STATE_VERSION,
            generation: 0,
            phase: Phase::Rate,
            best: 0,
            train_target: 0,
            elapsed_s: 0.0,
            last_generation_s: 0.0,
            last_rating_s: 0.0,
            generation_started_s: 0.0,
            rated: Vec::new(),
            promoted: 0,
            rejected: 0,
            pinned_precision: None,
        }
    }

    /// Reads `state.json`; errors name the file.
    pub fn load(path: &Path) -> Result<LoopState> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let state: LoopState = serde_json::from_str(&text)
            .map_err(|e| anyhow!("{}: not a valid run state: {e}", path.display()))?;
        if state.format != STATE_FORMAT {
            bail!("{}: not a loazero run state", path.display());
        }
        if state.version != STATE_VERSION {
            bail!(
                "{}: run state version {}, this build reads {STATE_VERSION}",
                path.display(),
                state.version
            );
        }
        if let Some(pin) = state.pinned_precision {
            if pin.inference == Precision::Auto || pin.training == Precision::Auto {
                bail!("{}: a pinned precision cannot be auto", path.display());
            }
        }
        if state.best > state.generation {
            bail!(
                "{}: best model gen {} is newer than generation {}",
                path.display(),
                state.best,
                state.generation
            );
        }
        Ok(state)
    }

    /// Writes `state.json` atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).expect("plain data serialises");
        crate::layout::write_atomically(path, format!("{text}\n").as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bad_files_name_themselves() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        let mut s = LoopState::new();
        s.generation = 4;
        s.phase = Phase::Gate;
        s.best = 3;
        s.rated = vec![0, 3];
        s.save(&p).unwrap();
        assert_eq!(LoopState::load(&p).unwrap(), s);
        std::fs::write(&p, "{\"format\": \"loazero-run-state\", \"vers").unwrap();
        let e = LoopState::load(&p).unwrap_err().to_string();
        assert!(e.contains("state.json") && e.contains("not a valid"), "{e}");
        let mut text = serde_json::to_string(&s).unwrap();
        text = text.replace("\"version\":1", "\"version\":9");
        std::fs::write(&p, text).unwrap();
        let e = LoopState::load(&p).unwrap_err().to_string();
        assert!(e.contains("version 9"), "{e}");
    }

    /// A pinned precision round-trips, a state without one (an older file) reads as
    /// `None`, and a pin of `auto` is refused.
    #[test]
    fn the_pinned_precision_is_kept_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        let mut s = LoopState::new();
        s.save(&p).unwrap();
        assert!(!std::fs::read_to_string(&p).unwrap().contains("pinned"));
        assert_eq!(LoopState::load(&p).unwrap().pinned_precision, None);
        s.pinned_precision = Some(PinnedPrecision {
            inference: Precision::Bfloat16,
            training: Precision::Float,
        });
        s.save(&p).unwrap();
        assert_eq!(LoopState::load(&p).unwrap(), s);
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("bfloat16", "auto");
        std::fs::write(&p, text).unwrap();
        let e = LoopState::load(&p).unwrap_err().to_string();
        assert!(e.contains("cannot be auto"), "{e}");
    }
}
