//! The commit protocol: how self-play workers and trainers on many machines share one run in
//! a [`Store`] with no locks, no leases and no file-system semantics — only create-only
//! writes, the way delta-rs commits its `_delta_log` on object stores.
//!
//! # Keys
//!
//! ```text
//! epochs/NNNNNNNN.json                     a trainer's claim of epoch N (create-only)
//! log/NNNNNNNN.json                        log entry N (create-only), N = 0, 1, 2, …
//! models/eEEEEEEEE/gen-GGGGGGGG-SHA.model  generation G's model by the trainer of epoch E, SHA = first 16
//!                                          hex digits of its sha256 (create-only)
//! shards/gGGGGGGGG/WRITER-SSSSSSSS.shard   shard S of writer WRITER, played with generation G's model (create-only)
//! probe/WRITER                             the start-up probe's object (deleted afterwards)
//! ```
//!
//! Numbers are zero-padded to 8 digits so that key order is numeric order. A WRITER is a
//! [`WriterId`]: 128 random bits in hex, drawn once per process start, so no two processes
//! ever write the same shard key and no clean-up of dead writers is ever needed.
//!
//! # The contract
//!
//! 1. **Shards are committed exactly once.** A worker names each shard before uploading it
//!    ([`ShardWriter::prepare`]: writer id + sequence number) and commits it with a
//!    create-only write ([`ShardWriter::commit`]). When the outcome is unknown (timeout, lost
//!    acknowledgement: [`Error::Backend`]) it retries the same key with the same bytes; an
//!    [`Error::AlreadyExists`] whose object holds identical bytes is its own earlier write and
//!    counts as success. So a retry never makes a second copy, and a worker that cannot
//!    reach the store keeps the [`PendingShard`] (key and bytes) and commits it later.
//! 2. **A generation becomes visible only whole.** [`Trainer::publish`] creates the model
//!    object first, then the log entry that names it with its sha256 and size, the shards the
//!    generation added to the replay window, and the trainer's epoch. Before the log entry
//!    exists no worker looks at the model; after, the model is complete.
//! 3. **Workers verify what they load.** [`Follower::poll`] reads the log forward from the
//!    last entry it saw and returns the newest publication; [`download_model`] writes the
//!    model to a temporary file, checks its sha256 and size against the log entry and only
//!    then renames it into place (KataGo's client sequence).
//! 4. **One trainer per run at a time (fencing).** A trainer starts by claiming the next
//!    epoch (creating `epochs/N`; creates are exclusive, so epochs are unique) and appending
//!    a *takeover* entry with its epoch to the log. Each log index can be created once, and
//!    a trainer always appends at the index after the last entry it has read. Hence:
//!    * a trainer that finds, at the index it wants, an entry by another trainer is
//!      **fenced** ([`Error::Fenced`], whose message says so) and must stop: when publishing,
//!      always; when taking over, only if that entry's epoch is newer than its own (an older
//!      trainer's entry is read and stepped over, so the newest trainer wins a start-up race
//!      instead of both fencing each other forever);
//!    * an old trainer (a zombie behind a partition) is fenced at its very next publication
//!      after a new trainer's takeover, since the takeover occupies the index it would use;
//!    * no generation ever has two log entries, and each shard is added by at most one
//!      generation ([`Trainer::publish`] refuses a shard an earlier entry added, and the
//!      trainer knows every earlier entry because it read them all and appended after them).
//!    * a fenced trainer's model objects live under its own epoch's prefix and are never
//!      named by a log entry; once fenced, a [`Trainer`] stays fenced.
//! 5. **The store must honour create-only writes.** [`probe`] creates one object twice at
//!    start-up; a store that accepts the second create (Garage 2.5 ignores
//!    `If-None-Match: *`) is refused with [`Error::Unsupported`], naming what is missing.
//!
//! Only [`Error::Backend`] is retried ([`Retry`]); every other error is a definite answer.
//!
//! # What each guarantee rests on
//!
//! * Exclusive creation (two racing creates of one key: exactly one succeeds) — fencing and
//!   "no generation has two entries". [`crate::MemoryStore`] (a mutex) and
//!   [`crate::DirStore`] (`link(2)`) give it under true concurrency; so do AWS S3, GCS and
//!   Azure. The test server `s3s-fs` honours `If-None-Match` but checks it before writing
//!   (check-then-write: the object's existence, then the body is streamed to a temporary
//!   file and renamed over the key), so two creates whose check-to-rename windows overlap
//!   both succeed and the later rename silently replaces the earlier object. Unchecked, that
//!   could give a generation two entries: a new trainer's takeover at index N is replaced by
//!   the old trainer's publication of generation G there, the new trainer (which never read
//!   it) publishes its own G at N+1. So the keys that decide who owns the run are
//!   *verified after creation*: an epoch claim or log entry is read back right after its
//!   create (another trainer's bytes there: the create lost, handled like a refused create),
//!   and before each publication a trainer reads its own previous entry again (another
//!   trainer's entry there: a racing create replaced it after the read-back, and this trainer
//!   is fenced, whatever the epochs). Two trainers holding one epoch (both claims seemed to
//!   succeed) fence each other at the log: an entry of one's own epoch by another writer
//!   fences. What remains is a replacement landing after the loser's next publication began
//!   — a create whose check and write are further apart than a whole generation — and the
//!   claim object of an epoch naming the other writer (then [`verify`] reports the epoch as
//!   not claimed by its writer). The racing-creates tests run on the memory and directory
//!   back ends; `store/tests/protocol.rs` replays the s3s-fs interleavings with a
//!   check-then-write store.
//! * Read-after-write and list-after-write (AWS S3 since 2020, GCS, Azure, local stores) —
//!   a trainer sees every entry before the one it appends; a restarted trainer sees every
//!   committed shard. [`probe`] checks read-after-write and list-after-write on its object.
//! * Atomic objects (a reader never sees half an object) — every back end.

use crate::error::{Error, Result};
use crate::key::Key;
use crate::parallel;
use crate::Store;
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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

#[derive(Debug, Serialize, Deserialize)]
struct EpochClaim {
    epoch: u64,
    writer: String,
}

impl LogEntry {
    fn to_bytes(&self) -> Vec<u8> {
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
enum Created {
    /// The object is ours: created now, or by an earlier try whose acknowledgement was lost
    /// (the object holds exactly our bytes).
    Ours,
    /// Another writer's object is at the key; its bytes.
    Foreign(Vec<u8>),
}

/// Creates `key` with `bytes`, idempotently: transient failures are retried with the same
/// bytes, and an existing object with identical bytes is our own earlier write.
fn create_once(store: &dyn Store, key: &Key, bytes: &[u8], retry: &Retry) -> Result<Created> {
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
fn create_verified(store: &dyn Store, key: &Key, bytes: &[u8], retry: &Retry) -> Result<Created> {
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

/// Log entries read at once while a trainer takes over: bounds the bytes held at once.
const LOG_BATCH: usize = 256;

/// The indices 0, 1, …, n−1 of the log's entries as listed now, up to the first gap (a
/// listing that lags or misses an entry only means the reader goes on one at a time).
fn listed_log_prefix(store: &dyn Store, retry: &Retry) -> Result<Vec<u64>> {
    let mut indices: Vec<u64> = retry
        .run(|| store.list("log"))?
        .iter()
        .filter_map(|l| log_index(&l.key))
        .collect();
    indices.sort_unstable();
    Ok(indices
        .into_iter()
        .enumerate()
        .take_while(|&(position, index)| position as u64 == index)
        .map(|(_, index)| index)
        .collect())
}

/// Reads log entry `index`, or `None` when it does not exist (yet).
pub fn read_entry(store: &dyn Store, index: u64, retry: &Retry) -> Result<Option<LogEntry>> {
    match retry.run(|| store.get(&log_key(index))) {
        Ok(bytes) => LogEntry::parse(store, index, &bytes).map(Some),
        Err(Error::NotFound { .. }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Checks that `store` supports what the protocol needs, creating and then deleting one
/// object `probe/WRITER`: a create-only write succeeds; a second create-only write of the
/// same key fails with [`Error::AlreadyExists`] and leaves the first object as it was; the
/// object reads back and is listed right after its write. A store that fails a check is
/// refused with [`Error::Unsupported`] naming it; a store that cannot be reached gives the
/// store's own error.
pub fn probe(store: &dyn Store) -> Result<()> {
    let key = Key::new(format!("probe/{}", WriterId::random())).expect("a valid key");
    let unsupported = |missing: String| Error::Unsupported {
        store: store.describe(),
        missing,
    };
    let first = b"first create";
    store.put_if_absent(&key, first)?;
    let second = store.put_if_absent(&key, b"second create");
    let read = store.get(&key);
    let listed = store.list("probe");
    store.delete(&key)?;
    match second {
        Err(Error::AlreadyExists { .. }) => {}
        Ok(()) => {
            return Err(unsupported(format!(
                "create-only writes (S3 `If-None-Match: *`): a second create of {key} succeeded \
                 instead of failing, so two writers could overwrite each other's shards, models \
                 and log entries and trainers could not be fenced (Garage, for one, ignores the \
                 condition; AWS S3, GCS, Azure, MinIO, Ceph RGW, Cloudflare R2 and local \
                 directories honour it)"
            )))
        }
        Err(error) => return Err(error),
    }
    if read? != first {
        return Err(unsupported(format!(
            "create-only writes: the refused second create of {key} still replaced the object"
        )));
    }
    if !listed?.iter().any(|listed| listed.key == key) {
        return Err(unsupported(format!(
            "list-after-write: {key} was not listed right after its creation"
        )));
    }
    Ok(())
}

/// A finished shard with its final key, ready to commit (or to keep in a spool until the
/// store is reachable: committing it later is the same idempotent write).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingShard {
    /// Its key, `shards/gGGGGGGGG/WRITER-SSSSSSSS.shard`.
    pub key: Key,
    /// Its bytes (samples and game records).
    pub bytes: Vec<u8>,
}

/// A self-play worker's shard uploads: names shards with its writer id and a sequence
/// number, and commits each exactly once.
#[derive(Debug)]
pub struct ShardWriter {
    store: Arc<dyn Store>,
    writer: WriterId,
    next_sequence: u64,
    retry: Retry,
}

impl ShardWriter {
    /// A writer with a fresh random id.
    pub fn new(store: Arc<dyn Store>, retry: Retry) -> ShardWriter {
        ShardWriter {
            store,
            writer: WriterId::random(),
            next_sequence: 0,
            retry,
        }
    }

    /// Its id.
    pub fn writer(&self) -> &WriterId {
        &self.writer
    }

    /// Names the next shard, played with `generation`'s model.
    pub fn prepare(&mut self, generation: u64, bytes: Vec<u8>) -> PendingShard {
        let key = shard_key(generation, &self.writer, self.next_sequence);
        self.next_sequence += 1;
        PendingShard { key, bytes }
    }

    /// Commits `shard` (idempotent: committing it again, after a lost acknowledgement or from
    /// a spool, changes nothing). Transient failures are retried; when the tries run out the
    /// error is returned and the shard may be committed later.
    pub fn commit(&self, shard: &PendingShard) -> Result<()> {
        match create_once(self.store.as_ref(), &shard.key, &shard.bytes, &self.retry)? {
            Created::Ours => Ok(()),
            Created::Foreign(_) => Err(Error::Conflict {
                store: self.store.describe(),
                key: shard.key.to_string(),
            }),
        }
    }
}

/// The one trainer of a run: claims an epoch, takes the log over, and publishes generations
/// until it is fenced (module doc, point 4).
#[derive(Debug)]
pub struct Trainer {
    store: Arc<dyn Store>,
    writer: WriterId,
    epoch: u64,
    retry: Retry,
    /// The index of the next log entry to create (all before it have been read).
    next_index: u64,
    /// The next generation to publish.
    next_generation: u64,
    /// Every shard some entry added, with the generation that added it.
    added: HashMap<Key, u64>,
    /// Every shard some entry dropped as stale.
    stale: HashSet<Key>,
    /// The newest publication read or written.
    latest: Option<Publication>,
    /// The entry that fenced this trainer: once fenced, it stays fenced.
    fenced: Option<LogEntry>,
    /// The last log entry this trainer created, as bytes: checked again before the next
    /// publication (a racing create that overwrote it after its read-back fences us then).
    last_written: Option<(u64, Vec<u8>)>,
}

impl Trainer {
    /// Claims the next epoch, reads the whole log, and appends a takeover entry. Fenced when
    /// a trainer of a newer epoch has already taken over.
    pub fn start(store: Arc<dyn Store>, retry: Retry) -> Result<Trainer> {
        let writer = WriterId::random();
        let epoch = claim_epoch(store.as_ref(), &writer, &retry)?;
        let mut trainer = Trainer {
            store,
            writer,
            epoch,
            retry,
            next_index: 0,
            next_generation: 0,
            added: HashMap::new(),
            stale: HashSet::new(),
            latest: None,
            fenced: None,
            last_written: None,
        };
        // The entries listed now, several at a time (a long run's log is thousands of
        // entries, one round trip each), then forward one at a time to the true end (a
        // listing may lag, and entries may have been added since).
        let listed = listed_log_prefix(trainer.store.as_ref(), &trainer.retry)?;
        for batch in listed.chunks(LOG_BATCH) {
            let store = trainer.store.as_ref();
            let retry = &trainer.retry;
            let read = parallel::map(batch, parallel::READS_IN_FLIGHT, |&index| {
                read_entry(store, index, retry)
            });
            for entry in read {
                match entry? {
                    Some(entry) => trainer.take_over_after(entry)?,
                    None => break,
                }
            }
            if trainer.next_index < batch[batch.len() - 1] + 1 {
                break;
            }
        }
        while let Some(entry) =
            read_entry(trainer.store.as_ref(), trainer.next_index, &trainer.retry)?
        {
            trainer.take_over_after(entry)?;
        }
        loop {
            let takeover = trainer.entry(None).to_bytes();
            let key = log_key(trainer.next_index);
            match create_verified(trainer.store.as_ref(), &key, &takeover, &trainer.retry)? {
                Created::Ours => {
                    trainer.last_written = Some((trainer.next_index, takeover));
                    break;
                }
                Created::Foreign(bytes) => {
                    let other =
                        LogEntry::parse(trainer.store.as_ref(), trainer.next_index, &bytes)?;
                    trainer.take_over_after(other)?;
                }
            }
        }
        trainer.next_index += 1;
        Ok(trainer)
    }

    /// Applies an existing entry met while taking over (fenced if it is a newer trainer's,
    /// or another writer's with this trainer's epoch: two claims of one epoch that both
    /// seemed to succeed, possible only on a store whose create-only check races).
    fn take_over_after(&mut self, entry: LogEntry) -> Result<()> {
        if entry.epoch > self.epoch
            || (entry.epoch == self.epoch && entry.writer != self.writer.as_str())
        {
            return Err(self.fenced_error(entry));
        }
        self.apply(entry);
        self.next_index += 1;
        Ok(())
    }

    fn apply(&mut self, entry: LogEntry) {
        if let Some(publication) = entry.publication {
            for shard in &publication.shards_added {
                if let Ok(key) = Key::new(shard.as_str()) {
                    self.added.insert(key, publication.generation);
                }
            }
            for shard in &publication.shards_stale {
                if let Ok(key) = Key::new(shard.as_str()) {
                    self.stale.insert(key);
                }
            }
            self.next_generation = publication.generation + 1;
            self.latest = Some(publication);
        }
    }

    fn fenced_error(&self, by: LogEntry) -> Error {
        Error::Fenced {
            store: self.store.describe(),
            epoch: self.epoch,
            index: by.index,
            by_epoch: by.epoch,
            by_writer: by.writer,
        }
    }

    /// Reads the last entry this trainer created again: if it now holds another trainer's
    /// entry, a racing create overwrote it after its read-back (a store whose create-only
    /// check is not atomic) and this trainer is fenced by that entry, whatever its epoch.
    fn check_last_written(&mut self) -> Result<()> {
        let Some((index, bytes)) = &self.last_written else {
            return Ok(());
        };
        let index = *index;
        let stored = self.retry.run(|| self.store.get(&log_key(index)))?;
        if stored == *bytes {
            return Ok(());
        }
        let other = LogEntry::parse(self.store.as_ref(), index, &stored)?;
        self.fenced = Some(other.clone());
        Err(self.fenced_error(other))
    }

    fn entry(&self, publication: Option<Publication>) -> LogEntry {
        LogEntry {
            format: LOG_FORMAT,
            index: self.next_index,
            epoch: self.epoch,
            writer: self.writer.to_string(),
            publication,
        }
    }

    /// This trainer's epoch.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The generation [`Trainer::publish`] publishes next.
    pub fn next_generation(&self) -> u64 {
        self.next_generation
    }

    /// The newest publication in the log as this trainer knows it (the model to resume from).
    pub fn latest(&self) -> Option<&Publication> {
        self.latest.as_ref()
    }

    /// The generation that added `shard`, if any has.
    pub fn added_by(&self, shard: &Key) -> Option<u64> {
        self.added.get(shard).copied()
    }

    /// Committed shards that no generation has added or dropped as stale yet, in key order.
    pub fn new_shards(&self) -> Result<Vec<Key>> {
        let listed = self.retry.run(|| self.store.list("shards"))?;
        Ok(listed
            .into_iter()
            .map(|l| l.key)
            .filter(|key| !self.added.contains_key(key) && !self.stale.contains(key))
            .collect())
    }

    /// Shards dropped as stale by some entry, so far.
    pub fn stale_shards(&self) -> usize {
        self.stale.len()
    }

    /// Publishes the next generation: creates its model object, then its log entry naming
    /// the model (sha256, size) and `shards_added`. Fenced when another trainer has written
    /// the log index this one needs, and on every call after that; refuses a shard some
    /// generation already added. After any other error the same call may be repeated.
    pub fn publish(&mut self, model: &[u8], shards_added: &[Key]) -> Result<LogEntry> {
        self.publish_with_stale(model, shards_added, &[])
    }

    /// [`Trainer::publish`], recording also the shards the trainer dropped as played with a
    /// model too old (`shards_stale`): like added ones, each is named by one entry only.
    pub fn publish_with_stale(
        &mut self,
        model: &[u8],
        shards_added: &[Key],
        shards_stale: &[Key],
    ) -> Result<LogEntry> {
        let generation = self.next_generation;
        let mut seen = HashSet::new();
        for shard in shards_added.iter().chain(shards_stale) {
            if self.stale.contains(shard) {
                return Err(Error::ShardReused {
                    store: self.store.describe(),
                    key: shard.to_string(),
                    generation,
                });
            }
            if let Some(&earlier) = self.added.get(shard) {
                return Err(Error::ShardReused {
                    store: self.store.describe(),
                    key: shard.to_string(),
                    generation: earlier,
                });
            }
            if !seen.insert(shard) {
                return Err(Error::ShardReused {
                    store: self.store.describe(),
                    key: shard.to_string(),
                    generation,
                });
            }
        }
        if let Some(fenced) = &self.fenced {
            return Err(self.fenced_error(fenced.clone()));
        }
        self.check_last_written()?;
        let model_sha256 = sha256_hex(model);
        let model_key = model_key(self.epoch, generation, &model_sha256);
        if let Created::Foreign(_) =
            create_once(self.store.as_ref(), &model_key, model, &self.retry)?
        {
            return Err(Error::Conflict {
                store: self.store.describe(),
                key: model_key.to_string(),
            });
        }
        let entry = self.entry(Some(Publication {
            generation,
            model_key: model_key.to_string(),
            model_sha256,
            model_size: model.len() as u64,
            shards_added: shards_added.iter().map(Key::to_string).collect(),
            shards_stale: shards_stale.iter().map(Key::to_string).collect(),
        }));
        let bytes = entry.to_bytes();
        match create_verified(
            self.store.as_ref(),
            &log_key(self.next_index),
            &bytes,
            &self.retry,
        )? {
            Created::Ours => {
                self.last_written = Some((self.next_index, bytes));
                self.apply(entry.clone());
                self.next_index += 1;
                Ok(entry)
            }
            Created::Foreign(bytes) => {
                let other = LogEntry::parse(self.store.as_ref(), self.next_index, &bytes)?;
                self.fenced = Some(other.clone());
                Err(self.fenced_error(other))
            }
        }
    }
}

/// Claims the lowest unclaimed epoch above every listed claim.
fn claim_epoch(store: &dyn Store, writer: &WriterId, retry: &Retry) -> Result<u64> {
    let mut epoch = claimed_epochs(store, retry)?
        .into_iter()
        .max()
        .map_or(1, |newest| newest + 1);
    loop {
        let claim = EpochClaim {
            epoch,
            writer: writer.to_string(),
        };
        let bytes = serde_json::to_vec(&claim).expect("a claim serializes");
        match create_verified(store, &epoch_key(epoch), &bytes, retry)? {
            Created::Ours => return Ok(epoch),
            Created::Foreign(_) => epoch += 1,
        }
    }
}

/// A worker's view of the log: reads it forward and reports each newer publication.
#[derive(Debug)]
pub struct Follower {
    store: Arc<dyn Store>,
    retry: Retry,
    next_index: u64,
}

impl Follower {
    /// A follower that reads the log from its first entry.
    pub fn from_start(store: Arc<dyn Store>, retry: Retry) -> Follower {
        Follower {
            store,
            retry,
            next_index: 0,
        }
    }

    /// A follower whose first [`Follower::poll`] returns the newest publication without
    /// reading the whole log: it lists `log/` and reads back from the last entry listed to
    /// the last publication (a stale listing only means the next poll reads more).
    pub fn near_end(store: Arc<dyn Store>, retry: Retry) -> Result<Follower> {
        let listed = retry.run(|| store.list("log"))?;
        let last = listed.iter().filter_map(|l| log_index(&l.key)).max();
        let mut start = 0;
        if let Some(last) = last {
            for index in (0..=last).rev() {
                match read_entry(store.as_ref(), index, &retry)? {
                    Some(LogEntry {
                        publication: Some(_),
                        ..
                    }) => {
                        start = index;
                        break;
                    }
                    _ => continue,
                }
            }
        }
        Ok(Follower {
            store,
            retry,
            next_index: start,
        })
    }

    /// Reads the entries written since the last poll; returns the newest publication among
    /// them, or `None` when there is none.
    pub fn poll(&mut self) -> Result<Option<Publication>> {
        let mut newest = None;
        while let Some(entry) = read_entry(self.store.as_ref(), self.next_index, &self.retry)? {
            self.next_index += 1;
            if entry.publication.is_some() {
                newest = entry.publication;
            }
        }
        Ok(newest)
    }
}

/// Downloads `publication`'s model into `directory` as `gen-GGGGGGGG-SHA.model` (SHA = the
/// first 16 hex digits of its sha256): writes a temporary file, checks its size and sha256
/// against the log entry, and only then renames it into place. A mismatch removes the
/// temporary file and is [`Error::Corrupt`].
pub fn download_model(
    store: &dyn Store,
    publication: &Publication,
    directory: &Path,
    retry: &Retry,
) -> Result<PathBuf> {
    let local = |path: &Path, source| Error::Local {
        path: path.display().to_string(),
        source,
    };
    let key = Key::new(publication.model_key.as_str())?;
    let bytes = retry.run(|| store.get(&key))?;
    let name = format!(
        "gen-{:08}-{}.model",
        publication.generation,
        &publication.model_sha256[..16.min(publication.model_sha256.len())]
    );
    let target = directory.join(&name);
    let suffix: u64 = rand::rng().random();
    let temporary = directory.join(format!(".tmp.{name}.{suffix:016x}"));
    File::create_new(&temporary)
        .and_then(|mut file| file.write_all(&bytes).and_then(|()| file.sync_all()))
        .map_err(|e| local(&temporary, e))?;
    // Check what is on disk, the bytes that will be loaded.
    let written = fs::read(&temporary).map_err(|e| local(&temporary, e));
    let problem = match &written {
        Err(_) => None,
        Ok(written) if written.len() as u64 != publication.model_size => Some(format!(
            "{} bytes, the log entry says {}",
            written.len(),
            publication.model_size
        )),
        Ok(written) => {
            let sha = sha256_hex(written);
            (sha != publication.model_sha256).then(|| {
                format!(
                    "sha256 {sha}, the log entry says {}",
                    publication.model_sha256
                )
            })
        }
    };
    if written.is_err() || problem.is_some() {
        let _ = fs::remove_file(&temporary);
        written?;
        return Err(Error::Corrupt {
            store: store.describe(),
            key: key.to_string(),
            reason: problem.expect("set"),
        });
    }
    fs::rename(&temporary, &target).map_err(|e| local(&target, e))?;
    Ok(target)
}

/// What [`verify`] found: counts, and every broken protocol property.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Audit {
    /// Log entries.
    pub entries: u64,
    /// Publications (generations).
    pub generations: u64,
    /// Takeover entries.
    pub takeovers: u64,
    /// Shard objects in the store.
    pub shards_committed: usize,
    /// Shards named by some publication.
    pub shards_added: usize,
    /// Shards a publication names as dropped (stale).
    pub shards_stale: usize,
    /// Committed shards no publication names (not yet trained on, or stale).
    pub shards_not_added: Vec<Key>,
    /// Each broken property, in words.
    pub violations: Vec<String>,
}

impl Audit {
    /// No property is broken.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Checks the protocol's properties on a whole store: the log is contiguous from 0; every
/// entry parses and names its own index; epochs never decrease along the log, each takeover
/// raises the epoch, and every publication is by the epoch of the latest takeover; the
/// generations are 0, 1, 2, … (so none has two entries); every published model exists with
/// its recorded size and sha256; every added shard exists and was added by one generation;
/// no shard is both added and dropped as stale, nor dropped twice; every epoch in the log was
/// claimed by the writer that wrote it. Store errors abort; broken properties are collected
/// in [`Audit::violations`].
pub fn verify(store: &dyn Store) -> Result<Audit> {
    let mut audit = Audit::default();
    let mut indices = Vec::new();
    for listed in store.list("log")? {
        match log_index(&listed.key) {
            Some(index) => indices.push(index),
            None => audit
                .violations
                .push(format!("{} is not a log entry name", listed.key)),
        }
    }
    indices.sort_unstable();
    for (position, &index) in indices.iter().enumerate() {
        if index != position as u64 {
            audit.violations.push(format!(
                "log is not contiguous: entry {index} in position {position}"
            ));
            break;
        }
    }
    // Shards listed after the log: every shard an entry listed above names was committed
    // before that entry, so it is in this listing.
    let shards = store.list("shards")?;
    let committed: HashSet<&str> = shards.iter().map(|l| l.key.as_str()).collect();
    let logged = parallel::map(&indices, parallel::READS_IN_FLIGHT, |&index| {
        store.get(&log_key(index))
    });
    let mut epoch_writers: HashMap<u64, String> = HashMap::new();
    let mut current_epoch: Option<u64> = None;
    let mut added: HashMap<String, u64> = HashMap::new();
    let mut stale: HashMap<String, u64> = HashMap::new();
    let mut publications = Vec::new();
    for (&index, bytes) in indices.iter().zip(logged) {
        let entry = match LogEntry::parse(store, index, &bytes?) {
            Ok(entry) => entry,
            Err(error) => {
                audit.violations.push(error.to_string());
                continue;
            }
        };
        audit.entries += 1;
        if let Some(writer) = epoch_writers.insert(entry.epoch, entry.writer.clone()) {
            if writer != entry.writer {
                audit.violations.push(format!(
                    "epoch {} used by writers {writer} and {} (entry {index})",
                    entry.epoch, entry.writer
                ));
            }
        }
        match entry.publication {
            None => {
                audit.takeovers += 1;
                if current_epoch.is_some_and(|epoch| entry.epoch <= epoch) {
                    audit.violations.push(format!(
                        "entry {index}: takeover by epoch {} after epoch {}",
                        entry.epoch,
                        current_epoch.expect("checked")
                    ));
                }
                current_epoch = Some(entry.epoch);
            }
            Some(publication) => {
                if current_epoch != Some(entry.epoch) {
                    audit.violations.push(format!(
                        "entry {index}: generation {} published by epoch {}, but the log's trainer is epoch {current_epoch:?}",
                        publication.generation, entry.epoch
                    ));
                }
                if publication.generation != audit.generations {
                    audit.violations.push(format!(
                        "entry {index}: generation {} where generation {} was due (a generation twice, or one skipped)",
                        publication.generation, audit.generations
                    ));
                }
                audit.generations += 1;
                for shard in &publication.shards_stale {
                    if let Some(earlier) = stale.insert(shard.clone(), publication.generation) {
                        audit.violations.push(format!(
                            "shard {shard} dropped by generations {earlier} and {}",
                            publication.generation
                        ));
                    }
                }
                for shard in &publication.shards_added {
                    if let Some(earlier) = added.insert(shard.clone(), publication.generation) {
                        audit.violations.push(format!(
                            "shard {shard} added by generations {earlier} and {}",
                            publication.generation
                        ));
                    }
                    if !committed.contains(shard.as_str()) {
                        audit
                            .violations
                            .push(format!("entry {index}: added shard {shard} does not exist"));
                    }
                }
                publications.push((index, publication));
            }
        }
    }
    // The models, a few at a time (each is read whole to check its sha256).
    for found in parallel::map(&publications, parallel::READS_IN_FLIGHT, |(index, p)| {
        model_violation(store, *index, p)
    }) {
        audit.violations.extend(found?);
    }
    for (epoch, writer) in &epoch_writers {
        let claim = match store.get(&epoch_key(*epoch)) {
            Ok(bytes) => serde_json::from_slice::<EpochClaim>(&bytes).ok(),
            Err(Error::NotFound { .. }) => None,
            Err(error) => return Err(error),
        };
        if claim
            .as_ref()
            .is_none_or(|claim| claim.writer != *writer || claim.epoch != *epoch)
        {
            audit.violations.push(format!(
                "epoch {epoch} in the log is not claimed by its writer {writer}"
            ));
        }
    }
    audit.shards_committed = shards.len();
    audit.shards_added = added.len();
    audit.shards_stale = stale.len();
    for shard in stale.keys().filter(|s| added.contains_key(*s)) {
        audit
            .violations
            .push(format!("shard {shard} both added and dropped as stale"));
    }
    audit.shards_not_added = shards
        .into_iter()
        .map(|l| l.key)
        .filter(|key| !added.contains_key(key.as_str()) && !stale.contains_key(key.as_str()))
        .collect();
    Ok(audit)
}

/// What is wrong with `publication`'s model (entry `index`), if anything: missing, or not
/// of its recorded size and sha256.
fn model_violation(
    store: &dyn Store,
    index: u64,
    publication: &Publication,
) -> Result<Option<String>> {
    let Ok(key) = Key::new(publication.model_key.as_str()) else {
        return Ok(Some(format!(
            "entry {index}: model key {:?} is not a key",
            publication.model_key
        )));
    };
    match store.get(&key) {
        Ok(bytes) => Ok((bytes.len() as u64 != publication.model_size
            || sha256_hex(&bytes) != publication.model_sha256)
            .then(|| {
                format!("entry {index}: model {key} differs from its recorded size and sha256")
            })),
        Err(Error::NotFound { .. }) => {
            Ok(Some(format!("entry {index}: model {key} does not exist")))
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Listed, MemoryStore};

    #[test]
    fn retry_stops_at_definite_answers_and_after_its_attempts() {
        let mut calls = 0;
        let transient = || Error::Backend {
            store: "s".into(),
            operation: "get",
            key: "k".into(),
            message: "down".into(),
        };
        let outcome: Result<()> = Retry::immediately(3).run(|| {
            calls += 1;
            Err(transient())
        });
        assert!(outcome.unwrap_err().is_transient());
        assert_eq!(calls, 3);
        calls = 0;
        let outcome: Result<()> = Retry::immediately(3).run(|| {
            calls += 1;
            Err(Error::NotFound {
                store: "s".into(),
                key: "k".into(),
            })
        });
        assert!(matches!(outcome, Err(Error::NotFound { .. })));
        assert_eq!(calls, 1);
    }

    #[test]
    fn log_index_reads_exactly_the_keys_log_key_writes() {
        for index in [0, 7, 12_345_678, 123_456_789] {
            assert_eq!(log_index(&log_key(index)), Some(index));
        }
        for other in [
            "log/7.json",
            "log/0000000x.json",
            "log/-0000007.json",
            "log/00000007.json.tmp",
            "logs/00000007.json",
            "epochs/00000007.json",
        ] {
            assert_eq!(log_index(&Key::new(other).unwrap()), None, "{other}");
        }
    }

    /// The epochs a reader finds are exactly the claims a trainer writes (the trainer's
    /// next claim and the views' newest epoch both read them).
    #[test]
    fn epoch_of_reads_exactly_the_keys_epoch_key_writes() {
        for epoch in [1, 7, 12_345_678, 123_456_789] {
            assert_eq!(epoch_of(&epoch_key(epoch)), Some(epoch));
        }
        for other in [
            "epochs/7.json",
            "epochs/0000000x.json",
            "epochs/00000007.json.tmp",
            "epoch/00000007.json",
            "log/00000007.json",
        ] {
            assert_eq!(epoch_of(&Key::new(other).unwrap()), None, "{other}");
        }
        let store = MemoryStore::new();
        for key in [
            "epochs/00000002.json",
            "epochs/00000009.json",
            "epochs/9.json",
        ] {
            store.put(&Key::new(key).unwrap(), b"{}").unwrap();
        }
        let mut found = claimed_epochs(&store, &Retry::immediately(1)).unwrap();
        found.sort_unstable();
        assert_eq!(found, [2, 9]);
    }

    #[test]
    fn a_trainer_takes_over_a_log_longer_than_a_batch_and_one_listed_only_in_part() {
        let store = MemoryStore::new();
        let shared: Arc<dyn Store> = Arc::new(store.clone());
        let retry = Retry::immediately(1);
        let mut first = Trainer::start(shared.clone(), retry).unwrap();
        let mut writer = ShardWriter::new(shared.clone(), retry);
        let generations = 2 * LOG_BATCH as u64 + 37;
        let mut keys = Vec::new();
        for generation in 0..generations {
            let shard = writer.prepare(generation, vec![generation as u8]);
            writer.commit(&shard).unwrap();
            first
                .publish(
                    format!("model {generation}").as_bytes(),
                    std::slice::from_ref(&shard.key),
                )
                .unwrap();
            keys.push(shard.key);
        }
        let second = Trainer::start(shared.clone(), retry).unwrap();
        assert_eq!(second.next_generation(), generations);
        assert_eq!(second.latest().unwrap().generation, generations - 1);
        assert_eq!(
            second.added_by(&keys[300]),
            Some(300),
            "every entry was applied"
        );
        // The newest entries missing from the listing (a listing that lags): read one at a
        // time past its end.
        #[derive(Debug)]
        struct LaggingList(MemoryStore, usize);
        impl Store for LaggingList {
            fn describe(&self) -> String {
                "a listing missing its newest entries".into()
            }
            fn get(&self, key: &Key) -> Result<Vec<u8>> {
                self.0.get(key)
            }
            fn put(&self, key: &Key, bytes: &[u8]) -> Result<()> {
                self.0.put(key, bytes)
            }
            fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> Result<()> {
                self.0.put_if_absent(key, bytes)
            }
            fn list(&self, folder: &str) -> Result<Vec<Listed>> {
                let mut listed = self.0.list(folder)?;
                listed.truncate(listed.len().saturating_sub(self.1));
                Ok(listed)
            }
            fn delete(&self, key: &Key) -> Result<()> {
                self.0.delete(key)
            }
            fn size(&self, key: &Key) -> Result<Option<u64>> {
                self.0.size(key)
            }
        }
        let lagging: Arc<dyn Store> = Arc::new(LaggingList(store.clone(), 300));
        let third = Trainer::start(lagging, retry).unwrap();
        assert_eq!(third.next_generation(), generations);
        assert!(matches!(
            first.publish(b"late", &[]),
            Err(Error::Fenced { .. })
        ));
        let audit = verify(&store).unwrap();
        assert!(audit.is_clean(), "{:?}", audit.violations);
        assert_eq!((audit.generations, audit.takeovers), (generations, 3));
    }

    #[test]
    fn verify_reports_a_gap_a_bad_model_and_a_doubly_added_shard() {
        let store = MemoryStore::new();
        let shared: Arc<dyn Store> = Arc::new(store.clone());
        let mut writer = ShardWriter::new(shared.clone(), Retry::immediately(1));
        let shard = writer.prepare(0, b"games".to_vec());
        writer.commit(&shard).unwrap();
        let mut trainer = Trainer::start(shared.clone(), Retry::immediately(1)).unwrap();
        trainer
            .publish(b"model 0", std::slice::from_ref(&shard.key))
            .unwrap();
        assert!(verify(&store).unwrap().is_clean());
        // Forge an entry that re-adds the shard as generation 1, and corrupt model 0.
        let mut forged = read_entry(&store, 1, &Retry::immediately(1))
            .unwrap()
            .unwrap();
        forged.index = 2;
        store.put(&log_key(2), &forged.to_bytes()).unwrap();
        let model = model_key(1, 0, &sha256_hex(b"model 0"));
        store.put(&model, b"other bytes").unwrap();
        let audit = verify(&store).unwrap();
        let text = audit.violations.join("\n");
        assert!(text.contains(&format!("model {model} differs")), "{text}");
        assert!(
            text.contains("generation 0 where generation 1 was due"),
            "{text}"
        );
        assert!(text.contains("added by generations 0 and 0"), "{text}");
        store.delete(&log_key(1)).unwrap();
        let text = verify(&store).unwrap().violations.join("\n");
        assert!(
            text.contains("log is not contiguous: entry 2 in position 1"),
            "{text}"
        );
    }

    /// A store run with trainer A (epoch 1: takeover, generation 0) taken over by trainer
    /// B (epoch 2: takeover entry 2), clean; the log entries of A's publication and B's
    /// takeover, to forge from.
    fn taken_over_run() -> (MemoryStore, LogEntry, LogEntry) {
        let store = MemoryStore::new();
        let shared: Arc<dyn Store> = Arc::new(store.clone());
        let mut first = Trainer::start(shared.clone(), Retry::immediately(1)).unwrap();
        first.publish(b"model 0", &[]).unwrap();
        let second = Trainer::start(shared, Retry::immediately(1)).unwrap();
        assert_eq!((first.epoch(), second.epoch()), (1, 2));
        let audit = verify(&store).unwrap();
        assert!(audit.is_clean(), "{:?}", audit.violations);
        let entry = |i| {
            read_entry(&store, i, &Retry::immediately(1))
                .unwrap()
                .unwrap()
        };
        let (publication, takeover) = (entry(1), entry(2));
        assert!(publication.publication.is_some() && takeover.publication.is_none());
        (store, publication, takeover)
    }

    /// The audit's violations after writing `forged` as the log's next entry (3).
    fn violations_with(store: &MemoryStore, mut forged: LogEntry) -> String {
        forged.index = 3;
        store.put(&log_key(3), &forged.to_bytes()).unwrap();
        verify(store).unwrap().violations.join("\n")
    }

    /// The fencing properties the chaos and protocol tests rely on `verify` to check, each
    /// broken on purpose: a zombie publication (the old trainer publishing after the
    /// takeover), a takeover that does not raise the epoch, and an epoch with two writers.
    #[test]
    fn verify_reports_a_zombie_publication_a_flat_takeover_and_two_writers_in_one_epoch() {
        // The old trainer (epoch 1) publishes generation 1 after epoch 2 took over.
        let (store, publication, _) = taken_over_run();
        let mut zombie = publication.clone();
        if let Some(p) = zombie.publication.as_mut() {
            p.generation = 1;
        }
        let text = violations_with(&store, zombie);
        assert!(
            text.contains(
                "generation 1 published by epoch 1, but the log's trainer is epoch Some(2)"
            ),
            "{text}"
        );

        // A takeover that does not raise the epoch: epoch 2 taking over from itself (its
        // own writer: only the epoch is wrong), and an older epoch taking over.
        let (store, publication, takeover) = taken_over_run();
        let text = violations_with(&store, takeover.clone());
        assert!(text.contains("takeover by epoch 2 after epoch 2"), "{text}");
        let (store, _, _) = taken_over_run();
        let older = LogEntry {
            epoch: 1,
            writer: publication.writer.clone(),
            ..takeover
        };
        let text = violations_with(&store, older);
        assert!(text.contains("takeover by epoch 1 after epoch 2"), "{text}");

        // Epoch 2's publication written by another writer than the one that claimed it.
        let (store, publication, takeover) = taken_over_run();
        let mut impostor = publication;
        impostor.epoch = 2;
        impostor.writer = format!("{}-other", takeover.writer);
        let text = violations_with(&store, impostor);
        assert!(text.contains("epoch 2 used by writers"), "{text}");
    }

    /// A store whose listing of `epochs` waits until `waiting` callers have listed: every
    /// trainer that starts then sees the same claims and races for the same next epoch.
    #[derive(Debug)]
    struct ListTogether {
        inner: MemoryStore,
        barrier: std::sync::Barrier,
    }

    impl Store for ListTogether {
        fn describe(&self) -> String {
            "list together".into()
        }
        fn get(&self, key: &Key) -> Result<Vec<u8>> {
            self.inner.get(key)
        }
        fn put(&self, key: &Key, bytes: &[u8]) -> Result<()> {
            self.inner.put(key, bytes)
        }
        fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> Result<()> {
            self.inner.put_if_absent(key, bytes)
        }
        fn list(&self, folder: &str) -> Result<Vec<Listed>> {
            let listed = self.inner.list(folder);
            if folder == "epochs" {
                self.barrier.wait();
            }
            listed
        }
        fn delete(&self, key: &Key) -> Result<()> {
            self.inner.delete(key)
        }
        fn size(&self, key: &Key) -> Result<Option<u64>> {
            self.inner.size(key)
        }
    }

    /// Two trainers that start at the same moment, both seeing no claim, end with two
    /// different epochs (the exclusive create decides): the newer one publishes, the older
    /// one is fenced (when it starts, if the newer one's takeover came first, or when it
    /// publishes), and the log stays clean.
    #[test]
    fn two_trainers_starting_at_once_claim_different_epochs() {
        let memory = MemoryStore::new();
        let store: Arc<dyn Store> = Arc::new(ListTogether {
            inner: memory.clone(),
            barrier: std::sync::Barrier::new(2),
        });
        let results: Vec<Result<Trainer>> = std::thread::scope(|scope| {
            let starts: Vec<_> = (0..2)
                .map(|_| {
                    let store = store.clone();
                    scope.spawn(move || Trainer::start(store, Retry::immediately(1)))
                })
                .collect();
            starts.into_iter().map(|s| s.join().unwrap()).collect()
        });
        let mut epochs = claimed_epochs(&memory, &Retry::immediately(1)).unwrap();
        epochs.sort_unstable();
        assert_eq!(epochs, [1, 2]);
        let mut started: Vec<Trainer> = results
            .into_iter()
            .filter_map(|r| match r {
                Ok(trainer) => Some(trainer),
                Err(Error::Fenced { .. }) => None,
                Err(other) => panic!("{other}"),
            })
            .collect();
        started.sort_by_key(Trainer::epoch);
        let mut newest = started.pop().expect("the newer trainer starts");
        assert_eq!(newest.epoch(), 2);
        for mut older in started {
            assert!(matches!(
                older.publish(b"late", &[]),
                Err(Error::Fenced { .. })
            ));
        }
        newest.publish(b"model 0", &[]).unwrap();
        let audit = verify(&memory).unwrap();
        assert!(audit.is_clean(), "{:?}", audit.violations);
    }
}
