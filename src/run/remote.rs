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
//! (`store::commit::Trainer`), then rebuilds its cache from the store: the `loop/` files of
//! the newest earlier epoch, and every worker shard a log entry added. After every saved
//! phase of the loop it (1) pulls the workers' newly committed shards into the cache before
//! training, (2) mirrors the changed files of the cache to its own `loop/eE/` (so a fenced
//! zombie never overwrites its successor's files), and (3) publishes each completed
//! generation's best model with a log entry naming the shards it pulled. A fenced trainer
//! stops with the protocol's "trainer epoch E was fenced" error.
//!
//! A worker ([`crate::run::join::join_store`]) follows the log, downloads each published
//! model to a temporary file and checks its sha256 before using it, plays into its cache, and
//! commits each finished shard with its game records as one bundle.

use super::bundle;
use super::layout::RunDir;
use super::state::{LoopState, Phase};
use anyhow::{anyhow, Context, Result};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use store::commit::{self, Retry};
use store::{Key, Store};

/// The folder of the trainers' working files.
const LOOP_FOLDER: &str = "loop";
/// The key of the run's config.
const CONFIG_KEY: &str = "config.toml";
/// Workers' shards pulled into a trainer's cache are named `joined-<their name>`; they are in
/// the store already (as bundles) and are not mirrored.
pub const JOINED_PREFIX: &str = "joined-";

/// The store named by `spec`, checked by the start-up probe (create-only writes,
/// read-after-write, list-after-write).
pub fn open_checked(spec: &str) -> Result<Arc<dyn Store>> {
    let store = store::open(spec).map_err(|e| anyhow!("--store {spec}: {e}"))?;
    commit::probe(store.as_ref()).map_err(|e| anyhow!("--store {spec}: {e}"))?;
    Ok(store)
}

/// The default local cache of a store's run: `$XDG_CACHE_HOME/loazero/stores/<16 hex digits
/// of the sha256 of the store's name>` (or under `~/.cache`, or the temporary directory).
pub fn default_cache(store: &dyn Store) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    let digest = commit::sha256_hex(store.describe().as_bytes());
    base.join("loazero").join("stores").join(&digest[..16])
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

/// The trainer's side of a store run (module doc).
pub struct StoreTrainer {
    store: Arc<dyn Store>,
    trainer: commit::Trainer,
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
    /// The lock on the cache's working copy, held while this trainer lives.
    _cache_lock: std::fs::File,
}

impl StoreTrainer {
    /// Takes the run in `store` over as its trainer and rebuilds the working copy in
    /// `cache/trainer` (removed first: the store is the truth), holding the lock
    /// `cache/trainer.lock` (one trainer per cache). Returns the trainer and the working
    /// copy. Fenced when a newer trainer took over meanwhile.
    pub fn start(store: Arc<dyn Store>, cache: &Path) -> Result<(StoreTrainer, RunDir)> {
        std::fs::create_dir_all(cache)
            .with_context(|| format!("cannot create the cache {}", cache.display()))?;
        let lock_path = cache.join("trainer.lock");
        let lock = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("cannot open {}", lock_path.display()))?;
        if lock.try_lock().is_err() {
            anyhow::bail!(
                "the cache {} is in use by another `loazero run --store` (lock {}); give \
                 each trainer its own --cache",
                cache.display(),
                lock_path.display()
            );
        }
        let retry = Retry::default();
        let trainer = commit::Trainer::start(store.clone(), retry)?;
        let root = cache.join("trainer");
        match std::fs::remove_dir_all(&root) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot clear {}", root.display())),
        }
        let run = RunDir::new(&root);
        run.create()?;
        let mut me = StoreTrainer {
            store,
            trainer,
            retry,
            mirrored: HashMap::new(),
            pulled: Vec::new(),
            stale: Vec::new(),
            max_staleness: super::config::LoopConfig::default().max_shard_staleness,
            in_cache: HashSet::new(),
            _cache_lock: lock,
        };
        me.restore(&run)?;
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
        format!("{LOOP_FOLDER}/e{:08}", self.trainer.epoch())
    }

    /// Copies the newest earlier trainer's `loop/` files and every shard some generation
    /// added into the empty working copy.
    fn restore(&mut self, run: &RunDir) -> Result<()> {
        let listed = self.retry.run(|| self.store.list(LOOP_FOLDER))?;
        let mine = self.trainer.epoch();
        let epoch_of = |k: &Key| -> Option<(u64, String)> {
            let rest = k.as_str().strip_prefix("loop/e")?;
            let (epoch, path) = rest.split_once('/')?;
            Some((epoch.parse().ok()?, path.to_string()))
        };
        let newest = listed
            .iter()
            .filter_map(|l| epoch_of(&l.key))
            .filter(|(e, path)| *e < mine && path == "state.json")
            .map(|(e, _)| e)
            .max();
        if let Some(epoch) = newest {
            // That trainer may still be alive (a zombie, or the first of two trainers) and
            // mirroring. Its mirror uploads a phase's files before the state.json naming
            // them, so the state read first is no newer than any file listed after it: the
            // copy is one a crash could have left, never a state naming a missing model.
            let state_key = Key::new(format!("{LOOP_FOLDER}/e{epoch:08}/state.json"))?;
            let state = self.retry.run(|| self.store.get(&state_key))?;
            for listed in self.retry.run(|| self.store.list(LOOP_FOLDER))? {
                let Some((e, path)) = epoch_of(&listed.key) else {
                    continue;
                };
                if e != epoch || listed.key == state_key {
                    continue;
                }
                let bytes = match self.retry.run(|| self.store.get(&listed.key)) {
                    Ok(bytes) => bytes,
                    // Removed by that trainer since the listing.
                    Err(store::Error::NotFound { .. }) => continue,
                    Err(e) => return Err(e.into()),
                };
                let target = run.root().join(&path);
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                super::layout::write_atomically(&target, &bytes)?;
            }
            super::layout::write_atomically(&run.state(), &state)?;
        }
        let mut added: Vec<Key> = Vec::new();
        for listed in self.retry.run(|| self.store.list("shards"))? {
            if self.trainer.added_by(&listed.key).is_some() {
                added.push(listed.key);
            }
        }
        for shard in added {
            self.fetch_shard(run, &shard)?;
        }
        Ok(())
    }

    /// Downloads the bundle `shard` into the working copy (`shards/joined-…`, its records in
    /// `games/`).
    fn fetch_shard(&mut self, run: &RunDir, shard: &Key) -> Result<()> {
        let bytes = self.retry.run(|| self.store.get(shard))?;
        let what = format!("{}: {shard}", self.store.describe());
        let files = bundle::unpack(&bytes, &what)?;
        let original = files[0].0.trim_end_matches(".shard").to_string();
        bundle::write_unpacked(
            &files,
            &format!("{JOINED_PREFIX}{original}"),
            &run.shards(),
            &run.games(),
            &what,
        )?;
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
    /// Returns the numbers of shards pulled and dropped as stale.
    pub fn after_save(&mut self, run: &RunDir, state: &LoopState) -> Result<(usize, usize)> {
        let pulled = if state.phase == Phase::Train {
            self.pull(run)?
        } else {
            (0, 0)
        };
        self.mirror(run)?;
        self.publish_completed(run, state)?;
        Ok(pulled)
    }

    /// Pulls the committed shards no generation has added yet into the working copy, or
    /// drops them when they are stale. Returns the numbers pulled and dropped.
    fn pull(&mut self, run: &RunDir) -> Result<(usize, usize)> {
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
            self.fetch_shard(run, &shard)?;
            self.pulled.push(shard);
            pulled += 1;
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
    /// and removes those deleted (lock, temporary files, plots and pulled shards stay out).
    pub fn mirror(&mut self, run: &RunDir) -> Result<()> {
        let mut seen = HashSet::new();
        let mut files = Vec::new();
        walk(run.root(), "", &mut files)?;
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
            self.mirrored.insert(relative, stamp);
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
        Ok(())
    }
}

/// The files under `dir` that a trainer mirrors, as (relative path, path).
fn walk(dir: &Path, relative: &str, out: &mut Vec<(String, PathBuf)>) -> Result<()> {
    for name in super::layout::list_names(dir)? {
        let skip = name.starts_with('.')
            || name.starts_with(JOINED_PREFIX)
            || (relative.is_empty() && (name == "lock" || name == "plots"));
        if skip {
            continue;
        }
        let path = dir.join(&name);
        let rel = if relative.is_empty() {
            name.clone()
        } else {
            format!("{relative}/{name}")
        };
        let kind = std::fs::symlink_metadata(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if kind.is_dir() {
            walk(&path, &rel, out)?;
        } else if kind.is_file() {
            out.push((rel, path));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // The zombie is fenced at its next publication.
        let mut next = state.clone();
        next.generation = 1;
        next.phase = Phase::Rate;
        let e = first.after_save(&run, &next).unwrap_err();
        assert!(e.to_string().contains("was fenced"), "{e}");
    }
}
