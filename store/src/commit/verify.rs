//! The audit of a whole store against the commit protocol's contract ([`verify`]).

use super::log::{epoch_key, log_index, log_key, sha256_hex, EpochClaim, LogEntry, Publication};
use crate::error::{Error, Result};
use crate::key::Key;
use crate::parallel;
use crate::Store;
use std::collections::{HashMap, HashSet};

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
