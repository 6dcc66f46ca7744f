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
//! 2. **A generation becomes visible only whole.** [`Publisher::publish`] creates the model
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
//!      generation ([`Publisher::publish`] refuses a shard an earlier entry added, and the
//!      trainer knows every earlier entry because it read them all and appended after them).
//!    * a fenced trainer's model objects live under its own epoch's prefix and are never
//!      named by a log entry; once fenced, a [`Publisher`] stays fenced.
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

mod log;
mod probe;
mod publisher;
mod verify;
mod worker;

pub use log::{
    claimed_epochs, epoch_key, epoch_of, log_index, log_key, model_key, read_entry, sha256_hex,
    shard_key, LogEntry, Publication, Retry, WriterId, LOG_FORMAT,
};
pub use probe::probe;
pub use publisher::Publisher;
pub use verify::{verify, Audit};
pub use worker::{download_model, Follower, PendingShard, ShardWriter};

#[cfg(test)]
mod tests;
