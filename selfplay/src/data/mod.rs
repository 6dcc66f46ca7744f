//! Training data: [`Sample`]s ([`sample`]) and the shard files that hold them
//! ([`shard`]: versioned, checksummed, zstd-compressed, written atomically, every defect
//! read back reported as a [`crate::Error`] naming the file).

pub mod sample;
pub mod shard;

pub use crate::atomic_file::write_atomically;
pub use sample::Sample;
pub use shard::{
    decode_shard, encode_shard, list_shards, read_recent_shards, read_shard,
    read_shard_sample_count, shard_file_name, unique_file_name, write_shard, ShardScan,
    FORMAT_VERSION, MAGIC, OLDEST_READABLE_VERSION, SHARD_EXTENSION,
};
