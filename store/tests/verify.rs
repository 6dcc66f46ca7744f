//! `verify`'s audit, one broken property at a time: a clean run verifies with no violation,
//! and each test breaks exactly one property of that run (deletes or rewrites one object,
//! or adds one) and asserts that the audit reports exactly that violation, in its words,
//! and nothing else. The fencing and log-shape violations (gaps, zombie publications, flat
//! takeovers, two writers of one epoch, generations twice, shards added twice, bad models)
//! are fed in `store/src/commit/tests.rs`.

use std::sync::Arc;
use store::commit::{
    epoch_key, log_key, read_entry, verify, LogEntry, Publication, Publisher, Retry, ShardWriter,
};
use store::{Key, MemoryStore, Store};

fn retry() -> Retry {
    Retry::immediately(1)
}

/// A clean run and the keys the tests break it with.
struct Run {
    store: MemoryStore,
    /// Added by generation 0 (entry 1).
    first: Key,
    /// Added by generation 1 (entry 2).
    second: Key,
    /// Dropped as stale by generation 1 (entry 2).
    dropped: Key,
    /// Committed, named by no generation.
    pending: Key,
}

/// Trainer epoch 1 takes over (entry 0), publishes generation 0 adding `first` (entry 1)
/// and generation 1 adding `second` and dropping `dropped` as stale (entry 2); trainer epoch
/// 2 takes over (entry 3) and publishes generation 2 naming no shard (entry 4); `pending`
/// is committed after. Asserts that the run verifies clean, with those counts.
fn clean_run() -> Run {
    let store = MemoryStore::new();
    let shared: Arc<dyn Store> = Arc::new(store.clone());
    let mut writer = ShardWriter::new(shared.clone(), retry());
    let mut commit = |generation: u64, bytes: &str| {
        let shard = writer.prepare(generation, bytes.as_bytes().to_vec());
        writer.commit(&shard).unwrap();
        shard.key
    };
    let first = commit(0, "games 0");
    let dropped = commit(0, "games 0, too old");
    let mut old = Publisher::start(shared.clone(), retry()).unwrap();
    old.publish(b"model 0", std::slice::from_ref(&first))
        .unwrap();
    let second = commit(1, "games 1");
    old.publish_with_stale(
        b"model 1",
        std::slice::from_ref(&second),
        std::slice::from_ref(&dropped),
    )
    .unwrap();
    let mut new = Publisher::start(shared, retry()).unwrap();
    assert_eq!((old.epoch(), new.epoch()), (1, 2));
    new.publish(b"model 2", &[]).unwrap();
    let pending = commit(2, "games 2");
    let audit = verify(&store).unwrap();
    assert!(audit.is_clean(), "{:?}", audit.violations);
    Run {
        store,
        first,
        second,
        dropped,
        pending,
    }
}

impl Run {
    /// Log entry `index`.
    fn entry(&self, index: u64) -> LogEntry {
        read_entry(&self.store, index, &retry()).unwrap().unwrap()
    }

    /// Rewrites the publication of log entry `index` with `edit`.
    fn edit_publication(&self, index: u64, edit: impl FnOnce(&mut Publication)) {
        let mut entry = self.entry(index);
        edit(entry.publication.as_mut().expect("a publication"));
        let bytes = serde_json::to_vec_pretty(&entry).unwrap();
        self.store.put(&log_key(index), &bytes).unwrap();
    }

    /// The audit's violations.
    fn violations(&self) -> Vec<String> {
        verify(&self.store).unwrap().violations
    }
}

/// The run every other test breaks verifies with no violation, and the audit counts its
/// entries, generations, takeovers and shards (added, stale, not yet named).
#[test]
fn a_clean_run_verifies_with_no_violation() {
    let run = clean_run();
    let audit = verify(&run.store).unwrap();
    assert_eq!(audit.violations, Vec::<String>::new());
    assert_eq!(
        (audit.entries, audit.generations, audit.takeovers),
        (5, 3, 2)
    );
    assert_eq!(
        (
            audit.shards_committed,
            audit.shards_added,
            audit.shards_stale
        ),
        (4, 2, 1)
    );
    assert_eq!(audit.shards_not_added, [run.pending]);
}

/// An epoch in the log whose claim object is missing, or names another writer, is reported
/// as not claimed by the writer of its entries (a store whose create-only check raced gave
/// the epoch to two trainers, or someone deleted the claim).
#[test]
fn verify_reports_an_epoch_not_claimed_by_its_writer() {
    let expected = |run: &Run| {
        let writer = run.entry(3).writer;
        [format!(
            "epoch 2 in the log is not claimed by its writer {writer}"
        )]
    };
    let run = clean_run();
    run.store.delete(&epoch_key(2)).unwrap();
    assert_eq!(run.violations(), expected(&run), "a missing claim");

    let run = clean_run();
    let other = format!("{}-other", run.entry(3).writer);
    let claim = serde_json::json!({ "epoch": 2, "writer": other });
    run.store
        .put(&epoch_key(2), claim.to_string().as_bytes())
        .unwrap();
    assert_eq!(
        run.violations(),
        expected(&run),
        "a claim by another writer"
    );
}

/// A shard that two generations drop as stale is reported with both generations.
#[test]
fn verify_reports_a_shard_dropped_twice() {
    let run = clean_run();
    let dropped = run.dropped.to_string();
    run.edit_publication(4, |p| p.shards_stale.push(dropped.clone()));
    assert_eq!(
        run.violations(),
        [format!("shard {dropped} dropped by generations 1 and 2")]
    );
}

/// A shard a publication adds whose object is not in the store is reported with the entry
/// that adds it.
#[test]
fn verify_reports_an_added_shard_that_does_not_exist() {
    let run = clean_run();
    run.store.delete(&run.second).unwrap();
    assert_eq!(
        run.violations(),
        [format!(
            "entry 2: added shard {} does not exist",
            run.second
        )]
    );
}

/// A shard one generation adds and another drops as stale is reported.
#[test]
fn verify_reports_a_shard_both_added_and_dropped_as_stale() {
    let run = clean_run();
    let first = run.first.to_string();
    run.edit_publication(4, |p| p.shards_stale.push(first.clone()));
    assert_eq!(
        run.violations(),
        [format!("shard {first} both added and dropped as stale")]
    );
}

/// Objects under `log/` whose names are not exactly what `log_key` writes (no padding, a
/// suffix, not a number) are reported each by name, and do not count as entries.
#[test]
fn verify_reports_log_objects_that_are_not_log_entry_names() {
    let run = clean_run();
    let bytes = run.store.get(&log_key(4)).unwrap();
    for name in ["log/5.json", "log/00000004.json.tmp", "log/notes"] {
        run.store.put(&Key::new(name).unwrap(), &bytes).unwrap();
    }
    assert_eq!(
        run.violations(),
        [
            "log/00000004.json.tmp is not a log entry name",
            "log/5.json is not a log entry name",
            "log/notes is not a log entry name",
        ]
    );
    assert_eq!(verify(&run.store).unwrap().entries, 5);
}

/// A publication whose model key is not a valid key is reported with the entry and the
/// key as written.
#[test]
fn verify_reports_a_model_key_that_is_not_a_key() {
    let run = clean_run();
    run.edit_publication(1, |p| p.model_key = "models/../gen 0".into());
    assert_eq!(
        run.violations(),
        ["entry 1: model key \"models/../gen 0\" is not a key"]
    );
}
