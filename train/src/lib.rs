//! `train`: the policy-value network (tch), its input encoding, the inference service
//! for search, the replay window, the trainer with exact checkpoints, and export.
//!
//! * [`encoding`]: positions → `u8` planes (side-to-move view), versioned.
//! * [`net`]: the residual network; [`model`]: a network with its description and files.
//! * [`evaluator`]: [`NetEvaluator`], the network behind `selfplay::Evaluator`.
//! * [`replay`]: the window of newest self-play positions; [`batch`]: training batches
//!   with symmetry augmentation.
//! * [`optimizer`], [`trainer`]: SGD/AdamW with state as named tensors; resumable
//!   training; [`metrics`]: JSON-lines metrics and progress.
//! * [`export`]: safetensors + TorchScript + `model.json`.
//! * [`config`]: [`TrainConfig`], every tunable of this crate.
//!
//! Threading: tensors and modules are `Send`, not `Sync`; a [`Model`] or [`Trainer`] is
//! owned by one thread. [`NetEvaluator`] is `Sync` (it talks to its own thread).

pub mod batch;
pub mod bench;
pub mod config;
pub mod device;
pub mod encoding;
pub mod evaluator;
pub mod export;
pub mod metrics;
pub mod model;
pub mod net;
pub mod optimizer;
pub mod replay;
pub mod tensor_file;
pub mod trainer;

pub use config::{InferenceConfig, NetConfig, TrainConfig};
pub use evaluator::NetEvaluator;
pub use model::{Model, ModelInfo};
pub use replay::ReplayWindow;
pub use trainer::{StepStats, TrainSummary, Trainer};

/// Test set-up: one torch thread (tests run in parallel on a small machine, where
/// OpenMP's spinning threads otherwise slow everything down several-fold).
#[cfg(test)]
pub(crate) fn test_threads() {
    tch::set_num_threads(1);
}
