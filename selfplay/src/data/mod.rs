//! Training data: [`Sample`]s ([`sample`]) and the shard files that hold them
//! ([`shard`]: versioned, checksummed, zstd-compressed, written atomically, every defect
//! read back reported as a [`DataError`] naming the file).

pub mod sample;
pub mod shard;

pub use crate::atomic_file::write_atomically;
pub use sample::Sample;
pub use shard::{
    decode_shard, encode_shard, list_shards, read_recent_shards, read_shard, shard_file_name,
    unique_file_name, write_shard, ShardScan, FORMAT_VERSION, MAGIC, OLDEST_READABLE_VERSION,
    SHARD_EXTENSION,
};

use std::path::{Path, PathBuf};

/// A shard could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// File-system failure.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
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

impl DataError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            DataError::Io { path, .. } | DataError::Corrupt { path, .. } => path,
        }
    }
}
