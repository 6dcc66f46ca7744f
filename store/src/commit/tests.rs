//! Tests of the commit protocol: retries, keys, takeovers of long logs, verify's
//! violations, racing publishers.

use super::publisher::LOG_BATCH;
use super::*;
use crate::error::{Error, Result};
use crate::key::Key;
use crate::{Listed, MemoryStore, Store};
use std::sync::Arc;

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
    let mut first = Publisher::start(shared.clone(), retry).unwrap();
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
    let second = Publisher::start(shared.clone(), retry).unwrap();
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
    let third = Publisher::start(lagging, retry).unwrap();
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
    let mut trainer = Publisher::start(shared.clone(), Retry::immediately(1)).unwrap();
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
    let mut first = Publisher::start(shared.clone(), Retry::immediately(1)).unwrap();
    first.publish(b"model 0", &[]).unwrap();
    let second = Publisher::start(shared, Retry::immediately(1)).unwrap();
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
        text.contains("generation 1 published by epoch 1, but the log's trainer is epoch Some(2)"),
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
    let results: Vec<Result<Publisher>> = std::thread::scope(|scope| {
        let starts: Vec<_> = (0..2)
            .map(|_| {
                let store = store.clone();
                scope.spawn(move || Publisher::start(store, Retry::immediately(1)))
            })
            .collect();
        starts.into_iter().map(|s| s.join().unwrap()).collect()
    });
    let mut epochs = claimed_epochs(&memory, &Retry::immediately(1)).unwrap();
    epochs.sort_unstable();
    assert_eq!(epochs, [1, 2]);
    let mut started: Vec<Publisher> = results
        .into_iter()
        .filter_map(|r| match r {
            Ok(trainer) => Some(trainer),
            Err(Error::Fenced { .. }) => None,
            Err(other) => panic!("{other}"),
        })
        .collect();
    started.sort_by_key(Publisher::epoch);
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
