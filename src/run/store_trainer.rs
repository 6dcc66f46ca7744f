//! A run kept in a store (`loazero run --store URL`, `loazero selfplay --store URL`): the
//! store holds the run's durable state, a local cache directory holds the working copy the
//! loop and the workers use (torch reads and writes files).
//!
//! ```text
//! STORE/
//!   config.toml                          the run's config (written by each trainer at start)
//!   epochs/, log/, models/, shards/      the commit protocol (store::commit): trainer epochs,
//!                                        the generation log, published models (sha256 in
//!                                        the log), workers' shard bundles (run::bundle)
//!   loop/eEEEEEEEE/<run directory file>  the working files of the trainer of epoch E: state.json,
//!                                        metrics.jsonl, ratings.csv, checkpoints/, models/,
//!                                        candidates/, matches/, the loop's own shards/ and games/
//! ```
//!
//! The trainer ([`StoreTrainer`]) claims an epoch and takes the log over
//! (`store::commit::Publisher`), then rebuilds its cache from the store: the `loop/` files of
//! the newest earlier epoch, and every worker shard a log entry added, through the
//! incremental sync of [`rundir::store_copy`] (what its cache holds already, unchanged, is
//! not downloaded again: the shard bundles, and the files that the trainer of this cache
//! uploaded itself and that keep their bytes for good). After every saved
//! phase of the loop it (1) pulls the workers' newly committed shards into the cache before
//! training, (2) mirrors the changed files of the cache to its own `loop/eE/` (so a fenced
//! zombie never overwrites its successor's files), and (3) publishes each completed
//! generation's best model with a log entry naming the shards it pulled. A fenced trainer
//! stops with the protocol's "trainer epoch E was fenced" error.
//!
//! A worker ([`crate::run::store_worker::play_for_store`]) follows the log, downloads each
//! published model to a temporary file and checks its sha256 before using it, plays into
//! its cache, and commits each finished shard with its game records as one bundle.

use anyhow::{anyhow, Context, Result};
use rundir::layout::RunDir;
use rundir::state::{LoopState, Phase};
use rundir::store_copy::{
    self, LocalCopy, LoopFiles, Place, Reuse, SyncReport, Wanted, CONFIG_KEY,
};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use store::commit::{self, Retry};
use store::{Key, Store};

pub use rundir::store_copy::{default_cache, JOINED_PREFIX};

/// The store named by `spec`, checked by the start-up probe (create-only writes,
/// read-after-write, list-after-write).
pub fn open_checked(spec: &str) -> Result<Arc<dyn Store>> {
    let store = store::open(spec).map_err(|e| anyhow!("--store {spec}: {e}"))?;
    commit::probe(store.as_ref()).map_err(|e| anyhow!("--store {spec}: {e}"))?;
    Ok(store)
}

/// The run's config text in the store, or `None` when no trainer has started it yet.
pub fn read_config(store: &dyn Store) -> Result<Option<String>> {
    match Retry::default().run(|| store.get(&key(CONFIG_KEY)?)) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow!("{}: {CONFIG_KEY} is not UTF-8", store.describe())),
        Err(store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn key(text: &str) -> store::Result<Key> {
    Key::new(text)
}

/// The generation in a shard key `shards/gGGGGGGGG/…`.
pub fn shard_generation(shard: &Key) -> Option<u64> {
    shard
        .as_str()
        .strip_prefix("shards/g")?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// Seconds a trainer spent in store operations ([`StoreTrainer::after_save`]), by kind;
/// each includes the local file work of the operation (reading, hashing, unpacking).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StoreSeconds {
    /// Pulling the workers' newly committed shards into the working copy.
    pub pull: f64,
    /// Mirroring the working copy's changed files to `loop/eE/`.
    pub mirror: f64,
    /// Publishing completed generations (model object, then log entry).
    pub publish: f64,
}

/// The trainer's side of a store run (module doc).
pub struct StoreTrainer {
    store: Arc<dyn Store>,
    trainer: commit::Publisher,
    retry: Retry,
    /// Files of the cache mirrored to `loop/eE/`, by relative path: (size, modification time).
    mirrored: HashMap<String, (u64, SystemTime)>,
    /// Shards pulled into the cache since the last publication.
    pulled: Vec<Key>,
    /// Shards dropped as stale since the last publication.
    stale: Vec<Key>,
    /// `run.max_shard_staleness`.
    max_staleness: u64,
    /// Every shard in the cache (pulled now or when the cache was rebuilt).
    in_cache: HashSet<Key>,
    /// The working copy as a copy of store objects (what it holds, for the next start).
    copy: LocalCopy,
    /// What rebuilding the working copy at start did.
    restored: SyncReport,
    /// Seconds in store operations since the last [`StoreTrainer::take_seconds`].
    seconds: StoreSeconds,
    /// The lock on the cache's working copy, held while this trainer lives.
    _cache_lock: std::fs::File,
}

impl StoreTrainer {
    /// Takes the run in `store` over as its trainer and rebuilds the working copy in
    /// `cache/trainer` from the store (the store is the truth: what the copy held and the
    /// store does not is removed; what it held unchanged is kept, `cache/trainer.manifest.json`
    /// saying what that is), holding the lock `cache/trainer.lock` (one trainer per cache).
    /// Returns the trainer and the working copy. Fenced when a newer trainer took over
    /// meanwhile.
    pub fn start(store: Arc<dyn Store>, cache: &Path) -> Result<(StoreTrainer, RunDir)> {
        std::fs::create_dir_all(cache)
            .with_context(|| format!("cannot create the cache {}", cache.display()))?;
        let lock_path = cache.join("trainer.lock");
        let Some(lock) = rundir::layout::try_lock_file(&lock_path)? else {
            anyhow::bail!(
                "the cache {} is in use by another `loazero run --store` (lock {}); give \
                 each trainer its own --cache",
                cache.display(),
                lock_path.display()
            );
        };
        let retry = Retry::default();
        let trainer = commit::Publisher::start(store.clone(), retry)?;
        let root = cache.join("trainer");
        let copy = LocalCopy::open(&root, store.as_ref())?;
        let run = RunDir::new(&root);
        let mut me = StoreTrainer {
            store,
            trainer,
            retry,
            mirrored: HashMap::new(),
            pulled: Vec::new(),
            stale: Vec::new(),
            max_staleness: super::config::LoopConfig::default().max_shard_staleness,
            in_cache: HashSet::new(),
            copy,
            restored: SyncReport::default(),
            seconds: StoreSeconds::default(),
            _cache_lock: lock,
        };
        me.restore()?;
        run.create()?;
        Ok((me, run))
    }

    /// The store, for messages.
    pub fn describe(&self) -> String {
        self.store.describe()
    }

    /// This trainer's epoch.
    pub fn epoch(&self) -> u64 {
        self.trainer.epoch()
    }

    fn epoch_folder(&self) -> String {
        store_copy::loop_folder(self.trainer.epoch())
    }

    /// What rebuilding the working copy at start did (objects downloaded and kept).
    pub fn restored(&self) -> SyncReport {
        self.restored
    }

    /// Makes the working copy hold exactly the newest earlier trainer's `loop/` files and
    /// every shard some generation added, downloading only what it lacks.
    fn restore(&mut self) -> Result<()> {
        let mut wanted = Vec::new();
        let mine = self.trainer.epoch();
        if let Some(epoch) =
            store_copy::newest_loop_epoch(self.store.as_ref(), Some(mine), &self.retry)?
        {
            wanted =
                store_copy::loop_files(self.store.as_ref(), epoch, LoopFiles::All, &self.retry)?;
        }
        let listed = self.retry.run(|| self.store.list("shards"))?;
        let added: Vec<_> = listed
            .into_iter()
            .filter(|l| self.trainer.added_by(&l.key).is_some())
            .collect();
        self.in_cache.extend(added.iter().map(|l| l.key.clone()));
        wanted.extend(store_copy::bundles(added));
        self.restored = self.copy.sync(self.store.as_ref(), &wanted, &self.retry)?;
        self.copy.save()
    }

    /// Downloads the bundle `shard` into the working copy (`shards/joined-…`, its records in
    /// `games/`; the copy's manifest is saved by the caller).
    fn fetch_shard(&mut self, shard: &Key) -> Result<()> {
        let wanted = Wanted {
            key: shard.clone(),
            size: None,
            place: Place::Bundle,
            reuse: Reuse::SameKeyAndSize,
        };
        self.copy.fetch(self.store.as_ref(), &wanted, &self.retry)?;
        self.in_cache.insert(shard.clone());
        Ok(())
    }

    /// Drops workers' shards played with a model more than `generations` generations older
    /// than the newest published (`run.max_shard_staleness`).
    pub fn set_max_staleness(&mut self, generations: u64) {
        self.max_staleness = generations;
    }

    /// Saves the run's config in the store (the workers read it).
    pub fn put_config(&self, text: &str) -> Result<()> {
        let config = key(CONFIG_KEY)?;
        Ok(self
            .retry
            .run(|| self.store.put(&config, text.as_bytes()))?)
    }

    /// What the loop does after saving `state` (module doc): pull the workers' new shards
    /// when training is next, mirror the working copy, publish completed generations.
    /// Returns the numbers of shards pulled and dropped as stale; the seconds of each step
    /// are added to those [`StoreTrainer::take_seconds`] returns.
    pub fn after_save(&mut self, run: &RunDir, state: &LoopState) -> Result<(usize, usize)> {
        let started = Instant::now();
        let pulled = if state.phase == Phase::Train {
            self.pull()?
        } else {
            (0, 0)
        };
        let pulled_at = Instant::now();
        self.seconds.pull += (pulled_at - started).as_secs_f64();
        self.mirror(run)?;
        let mirrored_at = Instant::now();
        self.seconds.mirror += (mirrored_at - pulled_at).as_secs_f64();
        self.publish_completed(run, state)?;
        self.seconds.publish += mirrored_at.elapsed().as_secs_f64();
        Ok(pulled)
    }

    /// The seconds spent in [`StoreTrainer::after_save`] since the previous call (since the
    /// start, for the first; the rebuild of the working copy at the start is not in them).
    pub fn take_seconds(&mut self) -> StoreSeconds {
        std::mem::take(&mut self.seconds)
    }

    /// Pulls the committed shards no generation has added yet into the working copy, or
    /// drops them when they are stale. Returns the numbers pulled and dropped.
    fn pull(&mut self) -> Result<(usize, usize)> {
        let newest = self.trainer.next_generation().saturating_sub(1);
        let (mut pulled, mut dropped) = (0, 0);
        for shard in self.trainer.new_shards()? {
            if self.in_cache.contains(&shard) || self.stale.contains(&shard) {
                continue;
            }
            let played = shard_generation(&shard).unwrap_or(0);
            if newest.saturating_sub(played) > self.max_staleness {
                self.stale.push(shard);
                dropped += 1;
                continue;
            }
            self.fetch_shard(&shard)?;
            self.pulled.push(shard);
            pulled += 1;
        }
        if pulled > 0 {
            self.copy.save()?;
        }
        Ok((pulled, dropped))
    }

    /// Publishes the best model for every generation the loop has completed and the log
    /// has not (normally the one just gated; generation 0 at the start).
    fn publish_completed(&mut self, run: &RunDir, state: &LoopState) -> Result<()> {
        let completed = match state.phase {
            Phase::Rate => state.generation,
            Phase::Selfplay | Phase::Train | Phase::Gate => match state.generation.checked_sub(1) {
                Some(g) => g,
                None => return Ok(()),
            },
        };
        while self.trainer.next_generation() <= u64::from(completed) {
            let path = run.model(state.best);
            let model =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            self.trainer
                .publish_with_stale(&model, &self.pulled, &self.stale)?;
            self.pulled.clear();
            self.stale.clear();
        }
        Ok(())
    }

    /// Uploads the working copy's files that changed since the last mirror to `loop/eE/`
    /// and removes those deleted (lock, temporary files, plots and pulled shards stay out);
    /// notes each upload in the copy's manifest, so that the next start on this cache keeps
    /// what it need not download.
    pub fn mirror(&mut self, run: &RunDir) -> Result<()> {
        let mut seen = HashSet::new();
        let mut changed = false;
        // The run's files but the lock, plots, temporary files and pulled shards.
        let files = rundir::layout::walk_files(run.root(), &|folder, name| {
            !(name.starts_with('.')
                || name.starts_with(JOINED_PREFIX)
                || (folder.is_empty() && (name == "lock" || name == "plots")))
        })?;
        let folder = self.epoch_folder();
        for (relative, path) in files {
            let meta = std::fs::metadata(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let stamp = (
                meta.len(),
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            );
            seen.insert(relative.clone());
            if self.mirrored.get(&relative) == Some(&stamp) {
                continue;
            }
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                // Removed since the listing (a replaced checkpoint's old name, …).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
            };
            let target = Key::new(format!("{folder}/{relative}"))
                .map_err(|e| anyhow!("{} cannot be kept in the store: {e}", path.display()))?;
            self.retry.run(|| self.store.put(&target, &bytes))?;
            self.copy.note(&target, bytes.len() as u64, &relative)?;
            self.mirrored.insert(relative, stamp);
            changed = true;
        }
        let gone: Vec<String> = self
            .mirrored
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for relative in gone {
            let target = Key::new(format!("{folder}/{relative}"))?;
            self.retry.run(|| self.store.delete(&target))?;
            self.mirrored.remove(&relative);
        }
        if changed {
            self.copy.save()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rundir::bundle;

    #[test]
    fn shard_keys_name_their_generation() {
        let k = Key::new("shards/g00000012/abc-00000001.shard").unwrap();
        assert_eq!(shard_generation(&k), Some(12));
        assert_eq!(shard_generation(&Key::new("models/x").unwrap()), None);
    }

    /// A worker's shard played with a model more than `run.max_shard_staleness` generations
    /// old is dropped and named by the next log entry; a fresh one is pulled and added.
    #[test]
    fn stale_shards_are_dropped_and_recorded() {
        let cache = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(store::MemoryStore::new());
        let (mut trainer, run) = StoreTrainer::start(store.clone(), cache.path()).unwrap();
        trainer.set_max_staleness(2);
        let mut state = LoopState::new();
        for generation in 0..=3 {
            std::fs::write(run.model(generation), format!("model {generation}")).unwrap();
            state.generation = generation;
            state.best = generation;
            state.phase = Phase::Rate;
            state.save(&run.state()).unwrap();
            trainer.after_save(&run, &state).unwrap();
        }
        let work = cache.path().join("worker");
        let (shards, games) = (work.join("shards"), work.join("games"));
        std::fs::create_dir_all(&shards).unwrap();
        std::fs::create_dir_all(&games).unwrap();
        let mut writer = store::commit::ShardWriter::new(store.clone(), Retry::immediately(1));
        for (generation, stem) in [
            (0, "ext-g0000-w-n001-1-0-00000"),
            (3, "ext-g0003-w-n001-1-0-00001"),
        ] {
            std::fs::write(shards.join(format!("{stem}.shard")), b"samples").unwrap();
            std::fs::write(games.join(format!("{stem}-000.txt")), b"a game").unwrap();
            let (bytes, _) = bundle::pack(&shards.join(format!("{stem}.shard")), &games).unwrap();
            let pending = writer.prepare(generation, bytes);
            writer.commit(&pending).unwrap();
        }
        state.generation = 4;
        state.phase = Phase::Train;
        state.save(&run.state()).unwrap();
        assert_eq!(trainer.after_save(&run, &state).unwrap(), (1, 1));
        assert!(run
            .shards()
            .join("joined-ext-g0003-w-n001-1-0-00001.shard")
            .exists());
        assert!(run
            .games()
            .join("joined-ext-g0003-w-n001-1-0-00001-000.txt")
            .exists());
        state.phase = Phase::Rate;
        state.save(&run.state()).unwrap();
        trainer.after_save(&run, &state).unwrap();
        let audit = store::commit::verify(store.as_ref()).unwrap();
        assert!(audit.is_clean(), "{:?}", audit.violations);
        assert_eq!(
            (audit.generations, audit.shards_added, audit.shards_stale),
            (5, 1, 1)
        );
        assert!(audit.shards_not_added.is_empty(), "{audit:?}");
        assert!(
            store
                .list("loop")
                .unwrap()
                .iter()
                .all(|l| !l.key.as_str().contains(JOINED_PREFIX)),
            "pulled shards are not mirrored"
        );
    }

    /// A trainer started again on the same cache downloads no shard bundle and none of
    /// the files it uploaded itself that keep their bytes; one on another cache downloads
    /// them all; both end with the same working copy.
    #[test]
    fn a_restart_on_the_same_cache_downloads_only_what_may_have_changed() {
        use rundir::testing::{bundle_bytes, Counting};
        let (cache, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let counting = Arc::new(Counting::default());
        let store: Arc<dyn Store> = counting.clone();
        let (mut first, run) = StoreTrainer::start(store.clone(), cache.path()).unwrap();
        let mut writer = store::commit::ShardWriter::new(store.clone(), Retry::immediately(1));
        let shard = writer.prepare(0, bundle_bytes("ext-g0000-h-n001-1-2-00000"));
        writer.commit(&shard).unwrap();
        let own_game = "games/loop-g0001-n001-5-7-00000-000.txt";
        std::fs::write(run.root().join(own_game), b"1. a1-a2 *").unwrap();
        let mut state = LoopState::new();
        for (generation, phase) in [(0, Phase::Rate), (1, Phase::Train), (1, Phase::Rate)] {
            std::fs::write(run.model(generation), format!("model {generation}")).unwrap();
            state.generation = generation;
            state.best = generation;
            state.phase = phase;
            state.save(&run.state()).unwrap();
            first.after_save(&run, &state).unwrap();
        }
        assert_eq!(first.trainer.added_by(&shard.key), Some(1));
        drop(first);

        let before = counting.gets();
        let (second, run2) = StoreTrainer::start(store.clone(), cache.path()).unwrap();
        let read: Vec<String> = counting.got.lock().unwrap()[before..].to_vec();
        assert!(
            !read.iter().any(|k| k.starts_with("shards/")
                || k.ends_with(own_game)
                || k.contains("/models/")),
            "{read:?}"
        );
        assert!(read.iter().any(|k| k.ends_with("/state.json")), "{read:?}");
        assert!(second.restored().kept >= 4, "{}", second.restored());
        let joined = "shards/joined-ext-g0000-h-n001-1-2-00000.shard";
        assert_eq!(std::fs::read(run2.root().join(joined)).unwrap(), b"samples");
        assert_eq!(LoopState::load(&run2.state()).unwrap(), state);
        drop(second);

        let before = counting.gets();
        let (third, run3) = StoreTrainer::start(store.clone(), other.path()).unwrap();
        let read: Vec<String> = counting.got.lock().unwrap()[before..].to_vec();
        assert!(read.contains(&shard.key.to_string()), "{read:?}");
        assert_eq!(third.restored().kept, 0, "{}", third.restored());
        for file in [joined, own_game, "models/gen-0001.safetensors"] {
            assert_eq!(
                std::fs::read(run3.root().join(file)).unwrap(),
                std::fs::read(run2.root().join(file)).unwrap(),
                "{file}"
            );
        }
    }

    /// Every step's seconds are counted, and counted once: taken, they start from zero.
    #[test]
    fn store_seconds_are_counted_until_taken() {
        let cache = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(store::MemoryStore::new());
        let (mut trainer, run) = StoreTrainer::start(store, cache.path()).unwrap();
        std::fs::write(run.model(0), b"model zero").unwrap();
        let state = LoopState::new();
        state.save(&run.state()).unwrap();
        trainer.after_save(&run, &state).unwrap();
        let seconds = trainer.take_seconds();
        assert!(seconds.mirror > 0.0 && seconds.publish > 0.0, "{seconds:?}");
        assert_eq!(trainer.take_seconds(), StoreSeconds::default());
    }

    #[test]
    fn a_new_trainer_restores_the_previous_ones_files_and_publishes_once() {
        let (cache, cache2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let store: Arc<dyn Store> = Arc::new(store::MemoryStore::new());
        let (mut first, run) = StoreTrainer::start(store.clone(), cache.path()).unwrap();
        let e = StoreTrainer::start(store.clone(), cache.path())
            .err()
            .unwrap();
        assert!(e.to_string().contains("in use by another"), "{e}");
        std::fs::write(run.model(0), b"model zero").unwrap();
        // The learned evaluation the run's last stage promotes is published beside the
        // models (and a store view, which takes every file but the checkpoints, shows it).
        std::fs::write(run.learned_model(1), b"learned one").unwrap();
        let state = LoopState::new();
        state.save(&run.state()).unwrap();
        std::fs::write(run.root().join("lock"), b"").unwrap();
        first.after_save(&run, &state).unwrap();
        first.after_save(&run, &state).unwrap();
        assert_eq!(first.trainer.next_generation(), 1, "published once");
        assert!(store
            .size(&Key::new("loop/e00000001/state.json").unwrap())
            .unwrap()
            .is_some());
        assert!(store
            .size(&Key::new("loop/e00000001/lock").unwrap())
            .unwrap()
            .is_none());

        let (second, run2) = StoreTrainer::start(store.clone(), cache2.path()).unwrap();
        assert_eq!(
            second.epoch(),
            2,
            "a start refused by the cache lock claims no epoch"
        );
        assert_eq!(LoopState::load(&run2.state()).unwrap(), state);
        assert_eq!(std::fs::read(run2.model(0)).unwrap(), b"model zero");
        assert_eq!(
            std::fs::read(run2.learned_model(1)).unwrap(),
            b"learned one"
        );
        assert!(store
            .size(&Key::new("loop/e00000001/models/nnue-0001.safetensors").unwrap())
            .unwrap()
            .is_some());
        // The zombie is fenced at its next publication.
        let mut next = state.clone();
        next.generation = 1;
        next.phase = Phase::Rate;
        let e = first.after_save(&run, &next).unwrap_err();
        assert!(e.to_string().contains("was fenced"), "{e}");
    }
}
