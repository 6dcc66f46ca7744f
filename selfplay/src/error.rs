//! The crate's one error type.

use std::path::{Path, PathBuf};

/// Why a self-play, search or data operation failed. Every fallible public function of
/// `selfplay` returns it, and so does [`crate::Evaluator::evaluate`] in every backend.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value is invalid; the message names the key.
    #[error("bad self-play configuration: {0}")]
    Config(String),
    /// An evaluator could not evaluate a batch (device lost, malformed batch, dead
    /// inference thread, a search handed back an evaluation of the wrong size).
    #[error("evaluation failed: {0}")]
    Eval(String),
    /// The sink that receives finished games refused one.
    #[error("{0}")]
    Sink(String),
    /// A [`crate::Cancel`] stopped the work before its end (the finished part is kept,
    /// see [`crate::cancel`]).
    #[error("stopped before its end (cancelled)")]
    Cancelled,
    /// File-system failure. Its message names the file and the cause (the cause is not
    /// also a `source()`, so that `{:#}` chains do not print it twice).
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// The file is not a valid shard (truncated, corrupted, wrong version, bad content).
    #[error("{path}: corrupt shard: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl Error {
    /// The file the error is about, for [`Error::Io`] and [`Error::Corrupt`].
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Io { path, .. } | Error::Corrupt { path, .. } => Some(path),
            _ => None,
        }
    }
}
