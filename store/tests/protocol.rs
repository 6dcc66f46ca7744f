//! The store contract and the commit protocol, one suite run on every back end: memory,
//! directory, object_store's `file://`, and S3 (a real `s3s-fs` server process on
//! 127.0.0.1, see `s3_server`). Each test names the guarantee it relies on:
//!
//! * sequential create conflicts (a create of an existing key fails): every back end,
//!   s3s-fs included — the store contract, idempotent commits, fencing of a zombie after a
//!   takeover, the seeded fault-injection runs;
//! * exclusive creation under truly simultaneous creates: memory (a mutex), directory
//!   (`link(2)`) and `file://` (object_store's `link(2)`) only — the racing-trainers test,
//!   and the racing creates and racing epoch claims (threads released at once by a barrier,
//!   many rounds: a create whose check and write are apart loses that race in some round).
//!   s3s-fs checks `If-None-Match` before writing (check-then-write), so two simultaneous
//!   creates can both succeed there; AWS S3, GCS and Azure give it;
//! * neither: `check_then_write_races_fence_exactly_one_trainer` replays, on a store built
//!   to race like s3s-fs (the check, a hook where the other create slips in, the write), the
//!   interleavings of a publication and a takeover at one log index, which the protocol's
//!   verify-after-create and re-read of a trainer's previous entry must turn into exactly one
//!   fenced trainer and a clean log.
//!
//! S3 tests without the s3s-fs binary print a notice and pass, except under `CI`.

mod s3_server;

use s3_server::{S3Server, StrippingProxy};
use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store::commit::{
    claimed_epochs, download_model, probe, read_entry, sha256_hex, verify, Follower, Publisher,
    Retry, ShardWriter,
};
use store::faults::{Faults, FaultyStore};
use store::{DirStore, Error, Key, Listed, MemoryStore, Store};

/// A back end under test: each call of `handle` opens a new handle to the same storage (as
/// two processes would).
trait Backend {
    fn handle(&self) -> Arc<dyn Store>;
}

struct Memory(MemoryStore);
impl Backend for Memory {
    fn handle(&self) -> Arc<dyn Store> {
        Arc::new(self.0.clone())
    }
}

struct Directory(tempfile::TempDir);
impl Backend for Directory {
    fn handle(&self) -> Arc<dyn Store> {
        Arc::new(DirStore::open(self.0.path().join("run")).unwrap())
    }
}

struct ObjectFile(tempfile::TempDir);
impl Backend for ObjectFile {
    fn handle(&self) -> Arc<dyn Store> {
        store::open(&format!("file://{}/run", self.0.path().display())).unwrap()
    }
}

struct S3(S3Server);
impl Backend for S3 {
    fn handle(&self) -> Arc<dyn Store> {
        self.0.open("runs/test")
    }
}

fn memory() -> Option<Memory> {
    Some(Memory(MemoryStore::new()))
}
fn directory() -> Option<Directory> {
    Some(Directory(tempfile::tempdir().unwrap()))
}
fn object_file() -> Option<ObjectFile> {
    Some(ObjectFile(tempfile::tempdir().unwrap()))
}
fn s3(test: &str) -> Option<S3> {
    let binary = s3_server::binary_or_skip(test)?;
    Some(S3(S3Server::start(&binary, true)))
}

/// Runs each named suite function on the back ends listed: `mod BACKEND { #[test] fn NAME }`.
macro_rules! on_backends {
    ([$($backend:ident),+] => $tests:tt) => {
        $( on_backends!(@one $backend $tests); )+
    };
    (@one $backend:ident [$($test:ident),+ $(,)?]) => {
        mod $backend {
            $(
                #[test]
                fn $test() {
                    if let Some(backend) = on_backends!(@make $backend, stringify!($test)) {
                        super::$test(&backend);
                    }
                }
            )+
        }
    };
    (@make s3, $name:expr) => { super::s3($name) };
    (@make $backend:ident, $name:expr) => { super::$backend() };
}

/// Every back end: the protocol without simultaneous creates of one key.
mod all {
    use super::*;
    on_backends!([memory, directory, object_file, s3] => [
        store_contract,
        probe_accepts_the_store,
        shard_commits_are_idempotent,
        publish_then_follow,
        a_corrupt_model_is_refused,
        a_zombie_trainer_is_fenced,
        start_up_races_resolve_to_the_newest_trainer,
        faults_keep_the_protocol_properties,
    ]);
}

/// Back ends with exclusive creation under true concurrency (module doc).
mod atomic {
    use super::*;
    on_backends!([memory, directory, object_file] => [
        racing_trainers_publish_each_generation_once,
        racing_creates_of_one_key_have_one_winner,
        racing_epoch_claims_have_one_winner_each,
    ]);
}

fn key(text: &str) -> Key {
    Key::new(text).unwrap()
}

fn keys(listed: Vec<Listed>) -> Vec<String> {
    listed.into_iter().map(|l| l.key.to_string()).collect()
}

fn store_contract(backend: &dyn Backend) {
    let store = backend.handle();
    let other = backend.handle();
    let a = key("log/00000000.json");
    assert!(matches!(store.get(&a), Err(Error::NotFound { .. })));
    assert_eq!(store.size(&a).unwrap(), None);
    store.put_if_absent(&a, b"first").unwrap();
    // Read-after-write from another handle; a second create is refused and changes nothing.
    assert_eq!(other.get(&a).unwrap(), b"first");
    let refused = other.put_if_absent(&a, b"second").unwrap_err();
    assert!(matches!(refused, Error::AlreadyExists { .. }), "{refused}");
    assert!(
        refused.to_string().contains("log/00000000.json"),
        "{refused}"
    );
    assert_eq!(store.get(&a).unwrap(), b"first");
    store.put(&a, b"replaced").unwrap();
    assert_eq!(other.get(&a).unwrap(), b"replaced");
    assert_eq!(other.size(&a).unwrap(), Some(8));
    store.put(&key("logs/x"), b"").unwrap();
    store.put(&key("log/deeper/y"), b"yy").unwrap();
    assert_eq!(store.get(&key("logs/x")).unwrap(), b"");
    assert_eq!(
        keys(other.list("log").unwrap()),
        ["log/00000000.json", "log/deeper/y"]
    );
    assert_eq!(
        keys(other.list("").unwrap()),
        ["log/00000000.json", "log/deeper/y", "logs/x"]
    );
    assert_eq!(
        other.list("log/deeper").unwrap(),
        [Listed {
            key: key("log/deeper/y"),
            size: 2
        }]
    );
    assert!(other.list("nothing").unwrap().is_empty());
    assert!(matches!(other.list("a//b"), Err(Error::InvalidKey { .. })));
    store.delete(&a).unwrap();
    store.delete(&a).unwrap();
    assert!(matches!(other.get(&a), Err(Error::NotFound { .. })));
    // A deleted key can be created again.
    other.put_if_absent(&a, b"again").unwrap();
    assert_eq!(store.get(&a).unwrap(), b"again");
}

fn probe_accepts_the_store(backend: &dyn Backend) {
    let store = backend.handle();
    probe(store.as_ref()).unwrap();
    probe(store.as_ref()).unwrap();
    assert!(
        store.list("probe").unwrap().is_empty(),
        "the probe removes its object"
    );
}

fn shard_commits_are_idempotent(backend: &dyn Backend) {
    let store = backend.handle();
    let mut writer = ShardWriter::new(backend.handle(), Retry::immediately(3));
    let first = writer.prepare(0, b"shard one".to_vec());
    let second = writer.prepare(0, b"shard two".to_vec());
    assert_ne!(first.key, second.key);
    assert!(first
        .key
        .as_str()
        .starts_with(&format!("shards/g00000000/{}-", writer.writer())));
    writer.commit(&first).unwrap();
    // A retry after a lost acknowledgement: the same key and bytes again.
    writer.commit(&first).unwrap();
    writer.commit(&second).unwrap();
    let mut other = ShardWriter::new(backend.handle(), Retry::immediately(3));
    assert_ne!(other.writer(), writer.writer());
    let theirs = other.prepare(0, b"shard one".to_vec());
    other.commit(&theirs).unwrap();
    assert_eq!(store.list("shards").unwrap().len(), 3);
    assert_eq!(store.get(&first.key).unwrap(), b"shard one");
    // The same key with other bytes is not this writer's earlier write.
    let mut forged = first.clone();
    forged.bytes = b"other bytes".to_vec();
    let conflict = writer.commit(&forged).unwrap_err();
    assert!(matches!(conflict, Error::Conflict { .. }), "{conflict}");
    assert_eq!(store.get(&first.key).unwrap(), b"shard one");
}

fn commit_shards(writer: &mut ShardWriter, generation: u64, count: usize) -> Vec<Key> {
    (0..count)
        .map(|i| {
            let shard = writer.prepare(generation, format!("games {generation} {i}").into_bytes());
            writer.commit(&shard).unwrap();
            shard.key
        })
        .collect()
}

fn publish_then_follow(backend: &dyn Backend) {
    let retry = Retry::immediately(3);
    let mut worker = ShardWriter::new(backend.handle(), retry);
    let mut trainer = Publisher::start(backend.handle(), retry).unwrap();
    assert_eq!((trainer.epoch(), trainer.next_generation()), (1, 0));
    let mut follower = Follower::from_start(backend.handle(), retry);
    assert_eq!(follower.poll().unwrap(), None);
    let shards = commit_shards(&mut worker, 0, 2);
    assert_eq!(trainer.new_shards().unwrap(), shards);
    trainer.publish(b"model 0", &shards).unwrap();
    assert!(trainer.new_shards().unwrap().is_empty());
    let published = follower.poll().unwrap().expect("generation 0");
    assert_eq!(published.generation, 0);
    assert_eq!(published.model_sha256, sha256_hex(b"model 0"));
    assert_eq!(follower.poll().unwrap(), None);
    let models = tempfile::tempdir().unwrap();
    let path =
        download_model(backend.handle().as_ref(), &published, models.path(), &retry).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"model 0");
    assert!(path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("gen-00000000-"));
    // Two more generations between polls: the poll returns the newest.
    let more = commit_shards(&mut worker, 0, 1);
    trainer.publish(b"model 1", &more).unwrap();
    trainer.publish(b"model 2", &[]).unwrap();
    assert_eq!(follower.poll().unwrap().unwrap().generation, 2);
    let mut late = Follower::near_end(backend.handle(), retry).unwrap();
    assert_eq!(
        late.poll().unwrap().unwrap().model_sha256,
        sha256_hex(b"model 2")
    );
    // A shard some generation added cannot be added again.
    let reused = trainer.publish(b"model 3", &shards[..1]).unwrap_err();
    assert!(
        matches!(reused, Error::ShardReused { generation: 0, .. }),
        "{reused}"
    );
    let audit = verify(backend.handle().as_ref()).unwrap();
    assert!(audit.is_clean(), "{:?}", audit.violations);
    assert_eq!(
        (audit.entries, audit.generations, audit.takeovers),
        (4, 3, 1)
    );
    assert_eq!((audit.shards_committed, audit.shards_added), (3, 3));
    // A restarted trainer resumes from the log: next generation 3, every shard known.
    let restarted = Publisher::start(backend.handle(), retry).unwrap();
    assert_eq!((restarted.epoch(), restarted.next_generation()), (2, 3));
    assert_eq!(
        restarted.latest().unwrap().model_sha256,
        sha256_hex(b"model 2")
    );
    assert_eq!(restarted.added_by(&more[0]), Some(1));
}

fn a_corrupt_model_is_refused(backend: &dyn Backend) {
    let retry = Retry::immediately(3);
    let store = backend.handle();
    let mut trainer = Publisher::start(backend.handle(), retry).unwrap();
    let entry = trainer.publish(b"the real model", &[]).unwrap();
    let publication = entry.publication.unwrap();
    store
        .put(&key(&publication.model_key), b"the real modeL")
        .unwrap();
    let models = tempfile::tempdir().unwrap();
    let refused = download_model(store.as_ref(), &publication, models.path(), &retry).unwrap_err();
    assert!(matches!(refused, Error::Corrupt { .. }), "{refused}");
    assert!(refused.to_string().contains("sha256"), "{refused}");
    assert_eq!(
        std::fs::read_dir(models.path()).unwrap().count(),
        0,
        "no file is left behind"
    );
    let audit = verify(store.as_ref()).unwrap();
    assert!(audit
        .violations
        .iter()
        .any(|v| v.contains("differs from its recorded size and sha256")));
}

/// Asserts that `error` says the trainer of `epoch` was fenced at log `index` by the
/// trainer of `by_epoch`.
fn assert_fenced(error: &Error, epoch: u64, by_epoch: u64, index: u64) {
    let Error::Fenced {
        epoch: was,
        by_epoch: by,
        index: at,
        ..
    } = error
    else {
        panic!("not fenced: {error}");
    };
    assert_eq!((*was, *by, *at), (epoch, by_epoch, index), "{error}");
}

fn a_zombie_trainer_is_fenced(backend: &dyn Backend) {
    let retry = Retry::immediately(3);
    let mut zombie = Publisher::start(backend.handle(), retry).unwrap();
    zombie.publish(b"model 0 by epoch 1", &[]).unwrap();
    // The scheduler starts a replacement while the first is cut off.
    let mut replacement = Publisher::start(backend.handle(), retry).unwrap();
    assert_eq!((replacement.epoch(), replacement.next_generation()), (2, 1));
    let fenced = zombie.publish(b"model 1 by epoch 1", &[]).unwrap_err();
    assert_fenced(&fenced, 1, 2, 2);
    let message = fenced.to_string();
    assert!(
        message.contains("trainer epoch 1 was fenced") && message.contains("epoch 2"),
        "{message}"
    );
    // Still fenced on the next try; the replacement publishes generation 1.
    assert!(matches!(
        zombie.publish(b"again", &[]),
        Err(Error::Fenced { .. })
    ));
    replacement.publish(b"model 1 by epoch 2", &[]).unwrap();
    let audit = verify(backend.handle().as_ref()).unwrap();
    assert!(audit.is_clean(), "{:?}", audit.violations);
    assert_eq!((audit.generations, audit.takeovers), (2, 2));
    let mut follower = Follower::from_start(backend.handle(), retry);
    assert_eq!(
        follower.poll().unwrap().unwrap().model_sha256,
        sha256_hex(b"model 1 by epoch 2")
    );
}

/// A store that runs `hook` once, just before the first create of a log entry.
struct BeforeFirstLogCreate {
    inner: Arc<dyn Store>,
    hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl std::fmt::Debug for BeforeFirstLogCreate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BeforeFirstLogCreate")
            .field("inner", &self.inner)
            .finish()
    }
}

impl Store for BeforeFirstLogCreate {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn get(&self, key: &Key) -> store::Result<Vec<u8>> {
        self.inner.get(key)
    }
    fn put(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        self.inner.put(key, bytes)
    }
    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        if key.is_in("log") {
            let hook = self.hook.lock().unwrap().take();
            if let Some(hook) = hook {
                hook();
            }
        }
        self.inner.put_if_absent(key, bytes)
    }
    fn list(&self, folder: &str) -> store::Result<Vec<Listed>> {
        self.inner.list(folder)
    }
    fn delete(&self, key: &Key) -> store::Result<()> {
        self.inner.delete(key)
    }
    fn size(&self, key: &Key) -> store::Result<Option<u64>> {
        self.inner.size(key)
    }
}

fn start_up_races_resolve_to_the_newest_trainer(backend: &dyn Backend) {
    let retry = Retry::immediately(3);
    // 1. A trainer that claimed its epoch first but writes its takeover last is fenced: a
    //    newer trainer took the index it wanted.
    let newer = Arc::new(Mutex::new(None));
    let slot = newer.clone();
    let handle = backend.handle();
    let older_store = Arc::new(BeforeFirstLogCreate {
        inner: backend.handle(),
        hook: Mutex::new(Some(Box::new(move || {
            *slot.lock().unwrap() = Some(Publisher::start(handle, retry).unwrap());
        }))),
    });
    let fenced = Publisher::start(older_store, retry).unwrap_err();
    assert_fenced(&fenced, 1, 2, 0);
    let mut newer = newer.lock().unwrap().take().expect("the hook ran");
    newer.publish(b"model 0 by epoch 2", &[]).unwrap();
    // 2. An older trainer's publication at the index a newer trainer wanted for its takeover
    //    is stepped over: the newer trainer takes over after it and the older is fenced next.
    let older = Arc::new(Mutex::new(newer));
    let publisher = older.clone();
    let newest_store = Arc::new(BeforeFirstLogCreate {
        inner: backend.handle(),
        hook: Mutex::new(Some(Box::new(move || {
            publisher
                .lock()
                .unwrap()
                .publish(b"model 1 by epoch 2", &[])
                .unwrap();
        }))),
    });
    let mut newest = Publisher::start(newest_store, retry).unwrap();
    assert_eq!((newest.epoch(), newest.next_generation()), (3, 2));
    let fenced = older
        .lock()
        .unwrap()
        .publish(b"model 2 by epoch 2", &[])
        .unwrap_err();
    assert_fenced(&fenced, 2, 3, 3);
    newest.publish(b"model 2 by epoch 3", &[]).unwrap();
    let audit = verify(backend.handle().as_ref()).unwrap();
    assert!(audit.is_clean(), "{:?}", audit.violations);
    assert_eq!(
        (audit.entries, audit.generations, audit.takeovers),
        (5, 3, 2)
    );
}

/// Seeded runs with lost acknowledgements (failures after the write), failures before
/// writes and delays on every participant's store: three workers commit shards in threads
/// while a trainer publishes; a second trainer takes over midway and the first must be
/// fenced, with the fencing error, on every later try too; a worker cut off since
/// generation 0 commits 3 late shards, which the second trainer drops as stale (played
/// more than one generation before its newest). Then the properties: the log is contiguous,
/// each entry's model exists with its sha256, no generation has two entries, every
/// committed shard was named by exactly one generation (added, or dropped as stale) and
/// exists once and nothing else does, the fenced trainer wrote nothing after the entry that
/// fenced it, and faults of every kind happened.
fn faults_keep_the_protocol_properties(backend: &dyn Backend) {
    let retry = Retry::immediately(64);
    let faults = Faults {
        fail_before: 0.15,
        lost_ack: 0.15,
        max_delay: Duration::from_micros(200),
    };
    let mut injected = (0, 0);
    for seed in 0..3u64 {
        let run = format!("seed{seed}");
        let faulty = |participant: u64| {
            let inner: Arc<dyn Store> = Arc::new(Prefixed(backend.handle(), run.clone()));
            Arc::new(FaultyStore::new(inner, faults, seed * 100 + participant))
        };
        let mut stores = Vec::new();
        let committed: Vec<Vec<Key>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..3)
                .map(|w| {
                    let store = faulty(w);
                    stores.push(store.clone());
                    scope.spawn(move || {
                        let mut writer = ShardWriter::new(store.clone(), retry);
                        let mut follower = Follower::from_start(store, retry);
                        let mut generation = 0;
                        let mut keys = Vec::new();
                        for i in 0..6 {
                            if let Some(publication) = follower.poll().unwrap() {
                                generation = publication.generation;
                            }
                            let shard = writer
                                .prepare(generation, format!("worker {w} shard {i}").into_bytes());
                            writer.commit(&shard).unwrap();
                            keys.push(shard.key);
                        }
                        keys
                    })
                })
                .collect();
            let first_store = faulty(10);
            stores.push(first_store.clone());
            let mut first = Publisher::start(first_store, retry).unwrap();
            for round in 0..3 {
                let shards = first.new_shards().unwrap();
                first
                    .publish(format!("model {round} by the first").as_bytes(), &shards)
                    .unwrap();
            }
            let second_store = faulty(11);
            stores.push(second_store.clone());
            let mut second = Publisher::start(second_store, retry).unwrap();
            let shards = first.new_shards().unwrap();
            let fenced = first.publish(b"model by a zombie", &shards).unwrap_err();
            assert!(
                fenced.to_string().contains("was fenced"),
                "seed {seed}: {fenced}"
            );
            let Error::Fenced {
                index: fenced_at, ..
            } = fenced
            else {
                unreachable!("checked above")
            };
            let again = first.publish(b"model by a zombie, again", &[]).unwrap_err();
            assert!(
                matches!(again, Error::Fenced { .. }),
                "seed {seed}: {again}"
            );
            let mut keys: Vec<Vec<Key>> = workers.into_iter().map(|w| w.join().unwrap()).collect();
            // A worker cut off since generation 0 comes back with 3 shards.
            let late_store = faulty(12);
            stores.push(late_store.clone());
            let mut late = ShardWriter::new(late_store, retry);
            keys.push(commit_shards(&mut late, 0, 3));
            // Publish until every committed shard is in some generation, dropping those
            // played more than one generation before the newest.
            for round in 0.. {
                let shards = second.new_shards().unwrap();
                if shards.is_empty() && round > 0 {
                    break;
                }
                let newest = second.next_generation() - 1;
                let (stale, fresh): (Vec<Key>, Vec<Key>) = shards.into_iter().partition(|shard| {
                    let played: u64 = shard.as_str()["shards/g".len()..][..8].parse().unwrap();
                    newest.saturating_sub(played) > 1
                });
                second
                    .publish_with_stale(
                        format!("model {round} by the second").as_bytes(),
                        &fresh,
                        &stale,
                    )
                    .unwrap();
            }
            let epoch_one_after = read_log_entries(&Prefixed(backend.handle(), run.clone()))
                .into_iter()
                .filter(|entry| entry.epoch == 1 && entry.index >= fenced_at)
                .count();
            assert_eq!(
                epoch_one_after, 0,
                "seed {seed}: the zombie published after its fencing"
            );
            keys
        });
        for store in &stores {
            let counts = store.counts();
            injected.0 += counts.failed_before;
            injected.1 += counts.lost_acks;
        }
        let clean = Prefixed(backend.handle(), run.clone());
        let audit = verify(&clean).unwrap();
        assert!(audit.is_clean(), "seed {seed}: {:?}", audit.violations);
        let reported: BTreeSet<Key> = committed.into_iter().flatten().collect();
        let stored: BTreeSet<Key> = clean
            .list("shards")
            .unwrap()
            .into_iter()
            .map(|l| l.key)
            .collect();
        assert_eq!(
            reported.len(),
            21,
            "seed {seed}: every prepared shard has its own key"
        );
        assert_eq!(
            stored, reported,
            "seed {seed}: the committed shards, each once, and nothing else"
        );
        assert_eq!(
            (
                audit.shards_added + audit.shards_stale,
                audit.shards_not_added.len()
            ),
            (21, 0),
            "seed {seed}: every shard added or dropped, by one generation"
        );
        assert!(audit.shards_stale >= 3, "seed {seed}: {audit:?}");
        assert_eq!(audit.takeovers, 2, "seed {seed}");
        for index in 0..audit.entries {
            read_entry(&clean, index, &Retry::immediately(1))
                .unwrap()
                .expect("contiguous");
        }
    }
    assert!(
        injected.0 > 0 && injected.1 > 0,
        "faults were injected: {injected:?}"
    );
}

/// Every log entry of `store`, in order (the log must be contiguous).
fn read_log_entries(store: &dyn Store) -> Vec<store::commit::LogEntry> {
    (0..)
        .map_while(|index| read_entry(store, index, &Retry::immediately(1)).unwrap())
        .collect()
}

/// A store seen under a sub-folder of another (one run per seed in one bucket).
#[derive(Debug)]
struct Prefixed(Arc<dyn Store>, String);

impl Prefixed {
    fn inner_key(&self, key: &Key) -> Key {
        Key::new(format!("{}/{key}", self.1)).unwrap()
    }
}

impl Store for Prefixed {
    fn describe(&self) -> String {
        format!("{}/{}", self.0.describe(), self.1)
    }
    fn get(&self, key: &Key) -> store::Result<Vec<u8>> {
        self.0.get(&self.inner_key(key))
    }
    fn put(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        self.0.put(&self.inner_key(key), bytes)
    }
    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        self.0.put_if_absent(&self.inner_key(key), bytes)
    }
    fn list(&self, folder: &str) -> store::Result<Vec<Listed>> {
        let inner = if folder.is_empty() {
            self.1.clone()
        } else {
            format!("{}/{folder}", self.1)
        };
        let prefix = format!("{}/", self.1);
        Ok(self
            .0
            .list(&inner)?
            .into_iter()
            .map(|l| Listed {
                key: Key::new(l.key.as_str().strip_prefix(&prefix).unwrap()).unwrap(),
                size: l.size,
            })
            .collect())
    }
    fn delete(&self, key: &Key) -> store::Result<()> {
        self.0.delete(&self.inner_key(key))
    }
    fn size(&self, key: &Key) -> store::Result<Option<u64>> {
        self.0.size(&self.inner_key(key))
    }
}

/// Three trainers start and publish at once while a worker commits shards, each taking
/// every new shard into each generation, until fenced. Relies on exclusive creation under
/// true concurrency. Whatever the interleaving: the log is clean (no generation or shard
/// twice), every publication a trainer saw succeed is in the log and nothing else is, every
/// failure is a fencing, and epochs are distinct.
fn racing_trainers_publish_each_generation_once(backend: &dyn Backend) {
    let retry = Retry::immediately(3);
    for _ in 0..5 {
        let run = backend.handle();
        let outcomes: Vec<(Option<u64>, u64, Result<(), Error>)> = std::thread::scope(|scope| {
            let store = run.clone();
            scope.spawn(move || {
                let mut writer = ShardWriter::new(store, retry);
                commit_shards(&mut writer, 0, 20);
            });
            let trainers: Vec<_> = (0..3)
                .map(|_| {
                    let store = run.clone();
                    scope.spawn(move || {
                        let mut trainer = match Publisher::start(store, retry) {
                            Ok(trainer) => trainer,
                            Err(error) => return (None, 0, Err(error)),
                        };
                        let mut published = 0;
                        for round in 0..15 {
                            let model = format!("epoch {} round {round}", trainer.epoch());
                            let outcome = trainer
                                .new_shards()
                                .and_then(|shards| trainer.publish(model.as_bytes(), &shards));
                            if let Err(error) = outcome {
                                return (Some(trainer.epoch()), published, Err(error));
                            }
                            published += 1;
                        }
                        (Some(trainer.epoch()), published, Ok(()))
                    })
                })
                .collect();
            trainers.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let audit = verify(run.as_ref()).unwrap();
        assert!(audit.is_clean(), "{:?}", audit.violations);
        for (_, _, outcome) in &outcomes {
            if let Err(error) = outcome {
                assert!(matches!(error, Error::Fenced { .. }), "{error}");
            }
        }
        let published: u64 = outcomes.iter().map(|(_, count, _)| count).sum();
        assert_eq!(audit.generations, published, "{outcomes:?}");
        assert!(
            published >= 15,
            "the last trainer to take over publishes all its rounds: {outcomes:?}"
        );
        let epochs: HashSet<u64> = outcomes.iter().filter_map(|(epoch, _, _)| *epoch).collect();
        assert_eq!(
            epochs.len(),
            outcomes
                .iter()
                .filter(|(epoch, _, _)| epoch.is_some())
                .count()
        );
        // The next repetition starts from an empty store.
        for listed in run.list("").unwrap() {
            run.delete(&listed.key).unwrap();
        }
    }
}

/// Threads released at once, and rounds, of the racing tests below: enough that a
/// non-atomic create (check, then write) is caught, on a loaded machine too.
const RACERS: usize = 4;
const RACE_ROUNDS: usize = 50;

/// Empties `run` (the next round of a race starts from an empty store).
fn clear(run: &dyn Store) {
    for listed in run.list("").unwrap() {
        run.delete(&listed.key).unwrap();
    }
}

/// The store contract's exclusive create under true concurrency: `RACERS` threads, each
/// with its own handle and its own bytes, released at once by a barrier, create the same
/// key, `RACE_ROUNDS` times. Each round exactly one create succeeds, every other one is
/// refused with [`Error::AlreadyExists`], and the object holds the winner's bytes. A
/// correct back end passes whatever the interleaving; one whose create checks for the key
/// and then writes (a rename over it) lets two racers succeed in a round where their checks
/// both come before either write.
fn racing_creates_of_one_key_have_one_winner(backend: &dyn Backend) {
    let target = key("epochs/00000001.json");
    for round in 0..RACE_ROUNDS {
        let barrier = std::sync::Barrier::new(RACERS);
        let outcomes: Vec<store::Result<()>> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..RACERS)
                .map(|racer| {
                    let (store, barrier, target) = (backend.handle(), &barrier, &target);
                    scope.spawn(move || {
                        let bytes = format!("racer {racer}");
                        barrier.wait();
                        store.put_if_absent(target, bytes.as_bytes())
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let winners: Vec<usize> = (0..RACERS).filter(|&r| outcomes[r].is_ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {outcomes:?}");
        for outcome in &outcomes {
            if let Err(error) = outcome {
                assert!(matches!(error, Error::AlreadyExists { .. }), "{error}");
            }
        }
        let run = backend.handle();
        assert_eq!(
            run.get(&target).unwrap(),
            format!("racer {}", winners[0]).into_bytes(),
            "round {round}: the winner's bytes"
        );
        clear(run.as_ref());
    }
}

/// A store whose listing of `epochs` returns only once every racer has listed: every
/// trainer that starts then sees the same claims and claims the same next epoch.
#[derive(Debug)]
struct ListEpochsTogether {
    inner: Arc<dyn Store>,
    barrier: Arc<std::sync::Barrier>,
}

impl Store for ListEpochsTogether {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn get(&self, key: &Key) -> store::Result<Vec<u8>> {
        self.inner.get(key)
    }
    fn put(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        self.inner.put(key, bytes)
    }
    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        self.inner.put_if_absent(key, bytes)
    }
    fn list(&self, folder: &str) -> store::Result<Vec<Listed>> {
        let listed = self.inner.list(folder);
        if folder == "epochs" {
            self.barrier.wait();
        }
        listed
    }
    fn delete(&self, key: &Key) -> store::Result<()> {
        self.inner.delete(key)
    }
    fn size(&self, key: &Key) -> store::Result<Option<u64>> {
        self.inner.size(key)
    }
}

/// The epoch-claim race: `RACERS` trainers start at once, each with its own handle, all
/// listing the claims before any claims (so all claim epoch 1 first, the losers then 2, …),
/// `RACE_ROUNDS` times. Each round every epoch 1..=`RACERS` is held by exactly one trainer
/// (the epoch of a started trainer, or of a fenced one's error), the claims are exactly
/// those epochs, and the log verifies clean. Fixed whatever the interleaving on a correct
/// back end. A create whose check and write are apart lets two trainers hold one epoch in a
/// round where the second write lands after the first trainer's read-back of its claim; the
/// read-back turns the other overlaps into a lost claim, so the narrower the create's window
/// the rarer such a round, and `racing_creates_of_one_key_have_one_winner` is the sharper
/// test of the create itself.
fn racing_epoch_claims_have_one_winner_each(backend: &dyn Backend) {
    let retry = Retry::immediately(3);
    let all: Vec<u64> = (1..=RACERS as u64).collect();
    for round in 0..RACE_ROUNDS {
        let barrier = Arc::new(std::sync::Barrier::new(RACERS));
        let mut epochs: Vec<u64> = std::thread::scope(|scope| {
            let trainers: Vec<_> = (0..RACERS)
                .map(|_| {
                    let store: Arc<dyn Store> = Arc::new(ListEpochsTogether {
                        inner: backend.handle(),
                        barrier: barrier.clone(),
                    });
                    scope.spawn(move || match Publisher::start(store, retry) {
                        Ok(trainer) => trainer.epoch(),
                        Err(Error::Fenced { epoch, .. }) => epoch,
                        Err(error) => panic!("round {round}: {error}"),
                    })
                })
                .collect();
            trainers.into_iter().map(|t| t.join().unwrap()).collect()
        });
        epochs.sort_unstable();
        assert_eq!(epochs, all, "round {round}: one trainer per epoch");
        let run = backend.handle();
        let mut claimed = claimed_epochs(run.as_ref(), &retry).unwrap();
        claimed.sort_unstable();
        assert_eq!(claimed, all, "round {round}: the claims");
        let audit = verify(run.as_ref()).unwrap();
        assert!(audit.is_clean(), "round {round}: {:?}", audit.violations);
        clear(run.as_ref());
    }
}

/// The probe against a store that ignores create-only writes: s3s-fs behind a proxy that
/// deletes `If-None-Match` from every request (what Garage 2.5 does on its own). The probe
/// must refuse it naming the missing support; the same server reached directly passes.
#[test]
fn s3_probe_refuses_a_store_that_ignores_if_none_match() {
    let Some(binary) =
        s3_server::binary_or_skip("s3_probe_refuses_a_store_that_ignores_if_none_match")
    else {
        return;
    };
    // Unsigned requests: the proxy changes the headers a signature would cover.
    let server = S3Server::start(&binary, false);
    let proxy = StrippingProxy::start(server.port);
    let ignoring = server.open_via("runs/garage-like", proxy.port);
    let refused = probe(ignoring.as_ref()).unwrap_err();
    assert!(matches!(refused, Error::Unsupported { .. }), "{refused}");
    let message = refused.to_string();
    assert!(
        message.contains("cannot hold a run") && message.contains("If-None-Match"),
        "{message}"
    );
    assert!(proxy.stripped() >= 1, "the proxy deleted the condition");
    assert!(
        ignoring.list("probe").unwrap().is_empty(),
        "the probe removes its object"
    );
    probe(server.open("runs/direct").as_ref()).unwrap();
}

/// `--store s3://…` objects are plain files in s3s-fs's data directory: what the tests write
/// reaches a real server's disk.
#[test]
fn s3_objects_reach_the_servers_disk() {
    let Some(binary) = s3_server::binary_or_skip("s3_objects_reach_the_servers_disk") else {
        return;
    };
    let server = S3Server::start(&binary, true);
    let store = server.open("runs/disk");
    let mut writer = ShardWriter::new(store.clone(), Retry::immediately(3));
    let shard = writer.prepare(0, b"on disk".to_vec());
    writer.commit(&shard).unwrap();
    let path = server
        .data_dir()
        .join(s3_server::BUCKET)
        .join("runs/disk")
        .join(shard.key.as_str());
    assert_eq!(std::fs::read(&path).unwrap(), b"on disk");
    // A wrong secret is a definite refusal, not a retried failure.
    let mut options = server.options(server.port);
    options.retain(|(k, _)| *k != "aws_secret_access_key");
    options.push(("aws_secret_access_key", "wrong".into()));
    let borrowed: Vec<(&str, &str)> = options.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let wrong =
        store::open_with_options(&format!("s3://{}/runs/disk", s3_server::BUCKET), &borrowed)
            .unwrap();
    let error = wrong.get(&shard.key).unwrap_err();
    assert!(!error.is_transient(), "{error}");
}

/// What a [`CheckThenWrite`] store runs around the first create of one log entry.
type Hook = Box<dyn Fn() + Send + Sync>;

/// A store whose create-only check is not atomic, the way s3s-fs's is not: `put_if_absent`
/// checks that the key is free, then writes over whatever is there by then. Around the
/// first create of log entry `index` it runs `between` (after the check, before the write:
/// where a racing create slips in) and `after` (after the write, before the answer).
struct CheckThenWrite {
    inner: MemoryStore,
    index: u64,
    between: Hook,
    after: Hook,
    done: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for CheckThenWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CheckThenWrite")
    }
}

impl CheckThenWrite {
    fn wrap(inner: &MemoryStore, index: u64, between: Hook, after: Hook) -> Arc<dyn Store> {
        Arc::new(CheckThenWrite {
            inner: inner.clone(),
            index,
            between,
            after,
            done: false.into(),
        })
    }
}

impl Store for CheckThenWrite {
    fn describe(&self) -> String {
        "check-then-write".into()
    }
    fn get(&self, key: &Key) -> store::Result<Vec<u8>> {
        self.inner.get(key)
    }
    fn put(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        self.inner.put(key, bytes)
    }
    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        if self.inner.size(key)?.is_some() {
            return Err(Error::AlreadyExists {
                store: self.describe(),
                key: key.to_string(),
            });
        }
        let hooked = *key == store::commit::log_key(self.index)
            && !self.done.swap(true, std::sync::atomic::Ordering::SeqCst);
        if hooked {
            (self.between)();
        }
        self.inner.put(key, bytes)?;
        if hooked {
            (self.after)();
        }
        Ok(())
    }
    fn list(&self, folder: &str) -> store::Result<Vec<Listed>> {
        self.inner.list(folder)
    }
    fn delete(&self, key: &Key) -> store::Result<()> {
        self.inner.delete(key)
    }
    fn size(&self, key: &Key) -> store::Result<Option<u64>> {
        self.inner.size(key)
    }
}

fn nothing() -> Hook {
    Box::new(|| {})
}

/// The interleavings of s3s-fs's non-atomic create check in the one place two processes
/// create the same key: an old trainer's publication and a new trainer's takeover at one log
/// index, both passing the check, the later write replacing the earlier. Whichever write
/// lands last and whenever the loser reads back, no generation gets two entries, the log
/// stays clean, and exactly one trainer is fenced, with the fencing error. (Without the
/// protocol's verify-after-create and its re-read of a trainer's previous entry, case 1
/// gives generation 1 two entries: the new trainer never saw the old one's.)
#[test]
fn check_then_write_races_fence_exactly_one_trainer() {
    let retry = Retry::immediately(3);

    // 1. The old trainer's publication lands last, after the new trainer read its takeover
    //    back: the new trainer is fenced at its first publication, the old one goes on.
    let memory = MemoryStore::new();
    let new = Arc::new(Mutex::new(None));
    let (slot, plain) = (new.clone(), memory.clone());
    let racy = CheckThenWrite::wrap(
        &memory,
        2,
        Box::new(move || {
            let trainer = Publisher::start(Arc::new(plain.clone()), retry).unwrap();
            *slot.lock().unwrap() = Some(trainer);
        }),
        nothing(),
    );
    let mut old = Publisher::start(racy, retry).unwrap();
    old.publish(b"model 0", &[]).unwrap();
    old.publish(b"model 1 by epoch 1", &[]).unwrap();
    let mut new = new.lock().unwrap().take().expect("the race ran");
    assert_eq!((new.epoch(), new.next_generation()), (2, 1));
    let fenced = new.publish(b"model 1 by epoch 2", &[]).unwrap_err();
    assert_fenced(&fenced, 2, 1, 2);
    assert!(fenced.to_string().contains("was fenced"), "{fenced}");
    old.publish(b"model 2 by epoch 1", &[]).unwrap();
    let audit = verify(&memory).unwrap();
    assert!(audit.is_clean(), "{:?}", audit.violations);
    assert_eq!((audit.generations, audit.takeovers), (3, 1));

    // 2. The new trainer's takeover lands last, after the old trainer read its publication
    //    back: the old trainer is fenced at its next publication, the new one publishes
    //    generation 1 (the old one's generation 1 is gone with its entry).
    let memory = MemoryStore::new();
    let old = Arc::new(Mutex::new(
        Publisher::start(Arc::new(memory.clone()), retry).unwrap(),
    ));
    old.lock().unwrap().publish(b"model 0", &[]).unwrap();
    let publisher = old.clone();
    let racy = CheckThenWrite::wrap(
        &memory,
        2,
        Box::new(move || {
            publisher
                .lock()
                .unwrap()
                .publish(b"model 1 by epoch 1", &[])
                .unwrap();
        }),
        nothing(),
    );
    let mut new = Publisher::start(racy, retry).unwrap();
    assert_eq!((new.epoch(), new.next_generation()), (2, 1));
    let fenced = old
        .lock()
        .unwrap()
        .publish(b"model 2 by epoch 1", &[])
        .unwrap_err();
    assert_fenced(&fenced, 1, 2, 2);
    new.publish(b"model 1 by epoch 2", &[]).unwrap();
    let audit = verify(&memory).unwrap();
    assert!(audit.is_clean(), "{:?}", audit.violations);
    assert_eq!((audit.generations, audit.takeovers), (2, 2));
    assert_eq!(
        Follower::from_start(Arc::new(memory.clone()), retry)
            .poll()
            .unwrap()
            .unwrap()
            .model_sha256,
        sha256_hex(b"model 1 by epoch 2")
    );

    // 3. Both writes land before the first writer reads back: its read-back sees the other
    //    entry and it is fenced at once, within the same publication.
    let memory = MemoryStore::new();
    let barrier = Arc::new(std::sync::Barrier::new(2));
    let (a_wrote, a_wrote_rx) = std::sync::mpsc::channel::<()>();
    let (b_wrote, b_wrote_rx) = std::sync::mpsc::channel::<()>();
    let (a_wrote, a_wrote_rx) = (Mutex::new(a_wrote), Mutex::new(a_wrote_rx));
    let (b_wrote, b_wrote_rx) = (Mutex::new(b_wrote), Mutex::new(b_wrote_rx));
    let gate = barrier.clone();
    let old_store = CheckThenWrite::wrap(
        &memory,
        2,
        Box::new(move || {
            gate.wait();
        }),
        Box::new(move || {
            a_wrote.lock().unwrap().send(()).unwrap();
            b_wrote_rx.lock().unwrap().recv().unwrap();
        }),
    );
    let mut old = Publisher::start(old_store, retry).unwrap();
    old.publish(b"model 0", &[]).unwrap();
    let new_store = CheckThenWrite::wrap(
        &memory,
        2,
        Box::new(move || {
            barrier.wait();
            a_wrote_rx.lock().unwrap().recv().unwrap();
        }),
        Box::new(move || b_wrote.lock().unwrap().send(()).unwrap()),
    );
    let (fenced, new) = std::thread::scope(|scope| {
        let publishing = scope.spawn(|| old.publish(b"model 1 by epoch 1", &[]));
        let starting = scope.spawn(move || Publisher::start(new_store, retry));
        (publishing.join().unwrap(), starting.join().unwrap())
    });
    assert_fenced(&fenced.unwrap_err(), 1, 2, 2);
    let mut new = new.unwrap();
    new.publish(b"model 1 by epoch 2", &[]).unwrap();
    let audit = verify(&memory).unwrap();
    assert!(audit.is_clean(), "{:?}", audit.violations);
    assert_eq!((audit.generations, audit.takeovers), (2, 2));
}
