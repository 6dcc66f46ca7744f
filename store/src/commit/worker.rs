//! A self-play worker's side of the commit protocol: committing its shards exactly once
//! ([`ShardWriter`]), following the log ([`Follower`]) and downloading the models it names,
//! checked ([`download_model`]).

use super::log::{
    create_once, log_index, read_entry, sha256_hex, shard_key, Created, LogEntry, Publication,
    Retry, WriterId,
};
use crate::error::{Error, Result};
use crate::key::Key;
use crate::Store;
use rand::Rng;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
