//! `train`: the policy-value network (tch), its input encoding, the inference service
//! for search, the replay window, the trainer with exact checkpoints, and export.
//!
//! * [`encoding`]: positions → `u8` planes (side-to-move view), per variant
//!   ([`encoding::input_layout`]), versioned; [`policy`]: move ⇄ policy index of the
//!   network's output ([`policy::PolicyIndex`]). Both live in the torch-free `selfplay`
//!   crate (one encoder for the trainer and the Python wheel) and are re-exported here.
//! * [`net`]: the residual network (input and policy planes of its variant); [`model`]: a
//!   network with its description and files; a model serves the variants of its layout
//!   only ([`ModelInfo::check_variant`]).
//! * [`inference`]: [`NetEvaluator`], the network behind `selfplay::Evaluator`;
//!   [`players`]: model files as players (the model loader of `eval::PlayerFactory`).
//! * [`replay`]: the window of newest self-play positions of one layout; [`batch`]:
//!   training batches with augmentation over the board's symmetries (8 or 12).
//! * [`optimizer`], [`trainer`]: SGD/AdamW with state as named tensors; resumable
//!   training; [`metrics`]: JSON-lines metrics and progress; [`grow`]: a wider and deeper
//!   network that computes what a trained one does ([`Trainer::grown`]).
//! * [`export`]: safetensors + TorchScript + `model.json`.
//! * [`config`]: [`TrainConfig`], every tunable of this crate; [`auto_precision`]: `auto`
//!   precision on the CPU, chosen by timing fp32 against bf16 per network shape (cached).
//!
//! Threading: tensors and modules are `Send`, not `Sync`; a [`Model`] or [`Trainer`] is
//! owned by one thread. [`NetEvaluator`] is `Sync` (it talks to its own thread). torch's
//! intra-op thread count is process-wide ([`device::set_threads`]); on a small CPU
//! machine shared with search threads, 1 is often fastest (OpenMP threads spin).
//!
//! # Use
//!
//! ```text
//! // Search: a network behind selfplay::Evaluator (CPU or CUDA; CUDA missing = error).
//! let eval: Arc<dyn Evaluator> = Arc::new(NetEvaluator::load(&model_path, &config.inference)?);
//! // Set inference.max_batch to (worker threads × positions per request) so full
//! // batches run without waiting for the 1 ms deadline.
//!
//! // Training on the shards of a directory.
//! let mut trainer = Trainer::new(config.clone(), Variant::Standard)?;   // fresh net
//! //  or Trainer::resume(&checkpoint, Some(config.clone()))?            // exact resume
//! //  or Trainer::from_model(&model, config.clone())?                    // new optimizer
//! let mut window = ReplayWindow::new(config.window_positions, Variant::Standard);
//! let report = window.refresh(&shards_dir)?;      // report.skipped: bad shards, named
//! let mut log = MetricsLog::open(&run_dir.join("metrics.jsonl"))?;
//! trainer.train(&window, steps, Some(&mut log))?;
//! trainer.save_checkpoint(&run_dir.join("checkpoints/latest.safetensors"))?;
//! trainer.save_model(&run_dir.join("models/gen-0001.safetensors"))?;
//! eval.set_weights(trainer.weights())?;           // or eval.load_weights(&model_path)
//! ```
//!
//! Files (all safetensors, `f32`, written atomically; JSON description in the metadata
//! key `loazero`): a model file holds `net.<layer>` tensors and a [`ModelInfo`]; a
//! checkpoint adds `opt.<slot>.<layer>` tensors and the trainer state (step, sampling
//! RNG, config) and is itself a valid model file.

pub mod auto_precision;
pub mod auto_threads;
pub mod batch;
pub mod bench;
pub mod config;
pub mod cpu_peak;
pub mod device;
pub mod export;
pub mod folded;
pub mod grow;
pub mod heldout;
pub mod inference;
pub mod input_tensor;
pub mod learned_eval;
pub mod metrics;
pub mod model;
pub mod net;
pub mod optimizer;
pub mod players;
pub mod replay;
pub mod tensor_file;
pub mod trainer;

// The input encoding and the policy index live in the torch-free `selfplay` crate (one
// encoder for the trainer, search and the Python wheel); their `train::` paths remain.
pub use selfplay::{encoding, policy};

pub use config::{InferenceConfig, NetConfig, TrainConfig};
pub use inference::NetEvaluator;
pub use metrics::StepStats;
pub use model::{Model, ModelInfo};
pub use replay::{ReplayWindow, WindowSize};
pub use trainer::{TrainSummary, Trainer};

/// Test set-up: one torch thread (tests run in parallel on a small machine, where
/// OpenMP's spinning threads otherwise slow everything down several-fold).
#[cfg(test)]
pub(crate) fn test_threads() {
    tch::set_num_threads(1);
}
