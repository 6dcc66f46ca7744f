//! The shared log format of the commit protocol: the keys (log entries, epoch claims,
//! models, shards), the log entry and its publication, the writer ids, the retry policy,
//! and the idempotent create-only writes every actor uses.

use crate::error::{Error, Result};
use crate::key::Key;
use crate::Store;
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::time::Duration;

/// The log entry format this build writes and reads.
pub const LOG_FORMAT: u32 = 1;

/// How the protocol retries operations whose outcome is unknown ([`Error::Backend`]):
/// `attempts` tries in all, waiting `first_delay`, then twice that, … at most `max_delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Tries in all (at least 1).
    pub attempts: u32,
    /// The wait after the first failure.
    pub first_delay: Duration,
    /// The longest wait.
    pub max_delay: Duration,
}

impl Default for Retry {
    /// 10 tries over about 45 s (0.2 s doubling to 10 s): longer than a store's restart, short
    /// enough that a worker cut off for longer spools its shards and plays on.
    fn default() -> Self {
        Retry {
            attempts: 10,
            first_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(10),
        }
    }
}

impl Retry {
    /// `attempts` tries with no wait (tests).
    pub fn immediately(attempts: u32) -> Retry {
        Retry {
            attempts,
            first_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
        }
    }

    /// Runs `operation` until it succeeds, fails definitely, or the tries are used up (then
    /// the last transient error).
    pub fn run<T>(&self, mut operation: impl FnMut() -> Result<T>) -> Result<T> {
        let mut delay = self.first_delay;
        let mut attempt = 1;
        loop {
            match operation() {
                Err(error) if error.is_transient() && attempt < self.attempts.max(1) => {
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(self.max_delay);
                    attempt += 1;
                }
                outcome => return outcome,
            }
        }
    }
}

/// A process's identity in key names: 128 random bits as 32 hex digits, drawn at start.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriterId(String);

impl WriterId {
    /// A fresh random id.
    pub fn random() -> WriterId {
        let bits: u128 = rand::rng().random();
        WriterId(format!("{bits:032x}"))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for WriterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The sha256 of `bytes` in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The key of log entry `index`.
pub fn log_key(index: u64) -> Key {
    Key::new(format!("log/{index:08}.json")).expect("a valid key")
}

/// The index of the log entry at `key` (`log/NNNNNNNN.json`, as [`log_key`] writes it), or
/// `None` for any other key.
pub fn log_index(key: &Key) -> Option<u64> {
    let digits = key.as_str().strip_prefix("log/")?.strip_suffix(".json")?;
    let index = digits.parse::<u64>().ok()?;
    // Only the exact name log_key writes: no missing or extra zeros.
    (log_key(index) == *key).then_some(index)
}

/// The key of epoch `epoch`'s claim.
pub fn epoch_key(epoch: u64) -> Key {
    Key::new(format!("epochs/{epoch:08}.json")).expect("a valid key")
}

/// The epoch whose claim `key` is (the inverse of [`epoch_key`]); `None` for any other key.
pub fn epoch_of(key: &Key) -> Option<u64> {
    let digits = key
        .as_str()
        .strip_prefix("epochs/")?
        .strip_suffix(".json")?;
    let epoch = digits.parse::<u64>().ok()?;
    // Only the exact name epoch_key writes: no missing or extra zeros.
    (epoch_key(epoch) == *key).then_some(epoch)
}

/// Every claimed epoch (the keys under `epochs/` that [`epoch_of`] reads), in no order.
pub fn claimed_epochs(store: &dyn Store, retry: &Retry) -> Result<Vec<u64>> {
    let claims = retry.run(|| store.list("epochs"))?;
    Ok(claims.iter().filter_map(|l| epoch_of(&l.key)).collect())
}

/// The key of the model of `generation` published by the trainer of `epoch`, whose sha256
/// is `sha256` (hex): content-addressed, so publishing again with other bytes (a retrained
/// model after a failed publication) never meets the first upload.
pub fn model_key(epoch: u64, generation: u64, sha256: &str) -> Key {
    let short = &sha256[..16.min(sha256.len())];
    Key::new(format!(
        "models/e{epoch:08}/gen-{generation:08}-{short}.model"
    ))
    .expect("a valid key")
}

/// The key of shard `sequence` of `writer`, played with `generation`'s model.
pub fn shard_key(generation: u64, writer: &WriterId, sequence: u64) -> Key {
    Key::new(format!(
        "shards/g{generation:08}/{writer}-{sequence:08}.shard"
    ))
    .expect("a valid key")
}

/// One log entry, `log/NNNNNNNN.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// [`LOG_FORMAT`].
    pub format: u32,
    /// Its index N (the key's number, repeated so a copied entry is caught).
    pub index: u64,
    /// The epoch of the trainer that wrote it.
    pub epoch: u64,
    /// That trainer's writer id.
    pub writer: String,
    /// The generation it publishes; `None` for a trainer's takeover entry.
    pub publication: Option<Publication>,
}

/// What a generation's log entry publishes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Publication {
    /// The generation: 0 for the first publication of the run, then one more each time.
    pub generation: u64,
    /// The model object's key.
    pub model_key: String,
    /// The model's sha256 (hex).
    pub model_sha256: String,
    /// The model's size in bytes.
    pub model_size: u64,
    /// The shards this generation added to the replay window (keys).
    pub shards_added: Vec<String>,
    /// The shards the trainer dropped instead, as played with a model too old (keys; absent
    /// when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards_stale: Vec<String>,
}

/// The object of an epoch claim, `epochs/NNNNNNNN.json`.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct EpochClaim {
    /// The epoch claimed.
    pub(super) epoch: u64,
    /// The claiming writer's id.
    pub(super) writer: String,
}

impl LogEntry {
    /// The entry as stored (pretty JSON, one final newline).
    pub(super) fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a log entry serializes");
        bytes.push(b'\n');
        bytes
    }

    /// Parses the bytes of log entry `index` of `store` (for messages).
    pub fn parse(store: &dyn Store, index: u64, bytes: &[u8]) -> Result<LogEntry> {
        let corrupt = |reason: String| Error::Corrupt {
            store: store.describe(),
            key: log_key(index).to_string(),
            reason,
        };
        let entry: LogEntry =
            serde_json::from_slice(bytes).map_err(|e| corrupt(format!("not a log entry: {e}")))?;
        if entry.format != LOG_FORMAT {
            return Err(corrupt(format!(
                "format {}, this build reads format {LOG_FORMAT}",
                entry.format
            )));
        }
        if entry.index != index {
            return Err(corrupt(format!("says index {}", entry.index)));
        }
        Ok(entry)
    }
}

/// The outcome of [`create_once`].
pub(super) enum Created {
    /// The object is ours: created now, or by an earlier try whose acknowledgement was lost
    /// (the object holds exactly our bytes).
    Ours,
    /// Another writer's object is at the key; its bytes.
    Foreign(Vec<u8>),
}

/// Creates `key` with `bytes`, idempotently: transient failures are retried with the same
/// bytes, and an existing object with identical bytes is our own earlier write.
pub(super) fn create_once(
    store: &dyn Store,
    key: &Key,
    bytes: &[u8],
    retry: &Retry,
) -> Result<Created> {
    retry.run(|| match store.put_if_absent(key, bytes) {
        Ok(()) => Ok(Created::Ours),
        Err(Error::AlreadyExists { .. }) => {
            let existing = store.get(key)?;
            Ok(if existing == bytes {
                Created::Ours
            } else {
                Created::Foreign(existing)
            })
        }
        Err(error) => Err(error),
    })
}

/// [`create_once`], then a read-back (verify-after-create): an object the store reports
/// as created by us but that holds other bytes when read right after was overwritten by a
/// racing create, and is [`Created::Foreign`]. For the keys that decide who owns a run (epoch
/// claims, log entries) on stores whose create-only check is not atomic under truly
/// simultaneous creates (module doc, "What each guarantee rests on").
pub(super) fn create_verified(
    store: &dyn Store,
    key: &Key,
    bytes: &[u8],
    retry: &Retry,
) -> Result<Created> {
    match create_once(store, key, bytes, retry)? {
        Created::Ours => {
            let stored = retry.run(|| store.get(key))?;
            Ok(if stored == bytes {
                Created::Ours
            } else {
                Created::Foreign(stored)
            })
        }
        foreign => Ok(foreign),
    }
}

/// Reads log entry `index`, or `None` when it does not exist (yet).
pub fn read_entry(store: &dyn Store, index: u64, retry: &Retry) -> Result<Option<LogEntry>> {
    match retry.run(|| store.get(&log_key(index))) {
        Ok(bytes) => LogEntry::parse(store, index, &bytes).map(Some),
        Err(Error::NotFound { .. }) => Ok(None),
        Err(error) => Err(error),
    }
}
