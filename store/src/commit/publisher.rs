//! The trainer's side of the commit protocol: the [`Publisher`], the one writer of a run's
//! log at a time, which claims an epoch, takes the log over and publishes generations until
//! it is fenced (the contract's point 4, in the module doc of [`super`]).

use super::log::{
    claimed_epochs, create_once, create_verified, epoch_key, log_index, log_key, model_key,
    read_entry, sha256_hex, Created, EpochClaim, LogEntry, Publication, Retry, WriterId,
    LOG_FORMAT,
};
use crate::error::{Error, Result};
use crate::key::Key;
use crate::parallel;
use crate::Store;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Log entries read at once while a trainer takes over: bounds the bytes held at once.
pub(super) const LOG_BATCH: usize = 256;

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

/// The one writer of a run's log, held by its trainer: claims an epoch, takes the log
/// over, and publishes generations until it is fenced (module doc of [`super`], point 4).
#[derive(Debug)]
pub struct Publisher {
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

impl Publisher {
    /// Claims the next epoch, reads the whole log, and appends a takeover entry. Fenced when
    /// a trainer of a newer epoch has already taken over.
    pub fn start(store: Arc<dyn Store>, retry: Retry) -> Result<Publisher> {
        let writer = WriterId::random();
        let epoch = claim_epoch(store.as_ref(), &writer, &retry)?;
        let mut trainer = Publisher {
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

    /// The generation [`Publisher::publish`] publishes next.
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

    /// [`Publisher::publish`], recording also the shards the trainer dropped as played with a
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
