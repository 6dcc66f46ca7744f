//! `loazero selfplay --store URL`: a self-play worker of a run kept in a store
//! ([`super::store_trainer`]). Cattle: any number may run anywhere, be killed at any
//! moment and be started again; none needs clean-up.
//!
//! The worker reads the run's config from the store, follows its log
//! (`store::commit::Follower`), downloads each published model to a temporary file and
//! checks its sha256 before loading it (`store::commit::download_model`), and plays rounds
//! like `selfplay --dir` into a working copy of its own (`CACHE/worker-<writer id>`). Every
//! 2 s a sync thread ([`WorkerSync::tick`]) looks for a newer model and commits each finished
//! shard with its game records as one bundle under a key naming this process and the
//! generation that played it. When the store cannot be reached the worker keeps playing on
//! the last model and the finished shards wait in the spool, committed when the store is
//! back; a progress line says that it waits. Shards played with a model more than
//! `run.max_shard_staleness` generations older than the newest published are dropped and
//! counted.
//!
//! Nothing finished is lost to a crash. The spool is on disk: a finished shard is first
//! packed into its bundle and written (synced) to `CACHE/worker-<id>/spool/` under a file
//! name that is its store key (`gGGGGGGGG=WRITER-SSSSSSSS.shard` for
//! `shards/gGGGGGGGG/WRITER-SSSSSSSS.shard`), then its shard file and records are removed,
//! then the bundle is committed, then the spool file is removed. Each working copy is
//! guarded by `CACHE/worker-<id>.lock`, held (`flock`) for the process's life and released by
//! the kernel when it dies, even by `kill -9`. A worker starting with a cache adopts every
//! working copy there whose lock it can take ([`adopt_dead_workers`]): leftovers of a shard
//! already in the spool are removed, finished shards not yet in it are packed under this
//! worker's keys, and the spooled bundles are moved to this worker's spool and committed
//! under their *original* keys — so a bundle whose commit happened but whose
//! acknowledgement was lost (or whose process died before removing it) is recognised by the
//! store as the same create, never a second copy. Live workers are never robbed: their locks
//! are held. Games in progress (and the records of a shard not yet finished) are dropped.

use super::config::RunConfig;
use super::joined_selfplay::{play_rounds, selfplay_config, Ended, Finished};
use super::store_trainer;
use anyhow::{anyhow, bail, Context, Result};
use rundir::bundle;
use rundir::layout::{list_names, model_name, record_shard_stem, write_atomically, RunDir};
use rundir::state::LoopState;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::commit::{download_model, Follower, PendingShard, Retry, ShardWriter};
use store::{Key, Store};

/// How often the sync thread looks at the store.
const SYNC_EVERY: Duration = Duration::from_secs(2);

/// Retries of one store operation of a worker: a few quick tries, then the worker reports
/// that it waits and tries again at the next tick.
fn worker_retry() -> Retry {
    Retry {
        attempts: 3,
        first_delay: Duration::from_millis(200),
        max_delay: Duration::from_secs(1),
    }
}

/// The spool of the working copy `run`: finished shards' bundles named by their store keys.
fn spool_dir(run: &RunDir) -> PathBuf {
    run.root().join("spool")
}

/// The spool file name of the shard key `shards/gGGGGGGGG/WRITER-SSSSSSSS.shard`:
/// `gGGGGGGGG=WRITER-SSSSSSSS.shard` (`=` is a key character that shard keys do not use).
fn spool_name(key: &Key) -> Result<String> {
    let rest = key
        .as_str()
        .strip_prefix("shards/")
        .filter(|rest| !rest.contains('='))
        .with_context(|| format!("{key} is not a shard key"))?;
    Ok(rest.replace('/', "="))
}

/// The shard key of a spool file name ([`spool_name`]).
fn spool_key(name: &str) -> Option<Key> {
    Key::new(format!("shards/{}", name.replace('=', "/")))
        .ok()
        .filter(|key| store_trainer::shard_generation(key).is_some())
}

/// Spools every finished shard of the working copy `run` (a shard file and its records):
/// names it with `writer`'s next key, writes its bundle to `spool` (synced), then removes the
/// shard file and its records. Returns how many it spooled.
fn spool_finished(run: &RunDir, spool: &Path, writer: &mut ShardWriter) -> Result<usize> {
    std::fs::create_dir_all(spool).with_context(|| format!("cannot create {}", spool.display()))?;
    let mut spooled = 0;
    for name in list_names(&run.shards())? {
        if name.starts_with('.') || !name.ends_with(".shard") {
            continue;
        }
        let path = run.shards().join(&name);
        let generation = played_with(&name)
            .with_context(|| format!("{}: not a worker's shard name", path.display()))?;
        let (bytes, files) = bundle::pack(&path, &run.games())?;
        let pending = writer.prepare(generation, bytes);
        write_atomically(&spool.join(spool_name(&pending.key)?), &pending.bytes)?;
        // The shard file first: records without their shard are a torn write, never packed.
        for file in &files {
            remove(file)?;
        }
        spooled += 1;
    }
    Ok(spooled)
}

/// The spool files of `spool`, with their keys, in name order.
fn spooled_files(spool: &Path) -> Result<Vec<(PathBuf, Key)>> {
    let mut files = Vec::new();
    for name in list_names(spool)? {
        if name.starts_with('.') {
            continue;
        }
        let path = spool.join(&name);
        let key = spool_key(&name)
            .with_context(|| format!("{}: not a spooled shard's name", path.display()))?;
        files.push((path, key));
    }
    Ok(files)
}

/// The lock file of the working copy `dir` (`CACHE/worker-<id>` → `CACHE/worker-<id>.lock`).
fn lock_path(dir: &Path) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    dir.with_file_name(name)
}

/// Takes the lock of the working copy `dir` without waiting: `None` when another process
/// holds it (a live worker).
fn try_lock(dir: &Path) -> Result<Option<File>> {
    rundir::layout::try_lock_file(&lock_path(dir))
}

/// Adopts the working copies of dead workers in `cache` (module doc): for each
/// `worker-*` directory but `own` whose lock is free, removes the leftovers of shards already
/// in its spool, spools its finished shards under `writer`'s keys, moves its spool into
/// `own`'s, and removes it. Every step leaves the dead copy consistent, so a crash while
/// adopting only leaves it to the next worker. Returns the shards adopted.
pub fn adopt_dead_workers(cache: &Path, own: &RunDir, writer: &mut ShardWriter) -> Result<usize> {
    let own_spool = spool_dir(own);
    std::fs::create_dir_all(&own_spool)
        .with_context(|| format!("cannot create {}", own_spool.display()))?;
    let mut adopted = 0;
    for name in list_names(cache)? {
        let dir = cache.join(&name);
        if !name.starts_with("worker-") || name.ends_with(".lock") || dir == own.root() {
            continue;
        }
        if !dir.is_dir() {
            continue;
        }
        let Some(_lock) = try_lock(&dir)? else {
            continue;
        };
        let dead = RunDir::new(&dir);
        let spool = spool_dir(&dead);
        for (path, _) in spooled_files(&spool)? {
            let bytes =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            let files = bundle::unpack(&bytes, &path.display().to_string())?;
            let shard = &files[0].0;
            let stem = shard.trim_end_matches(".shard");
            remove(&dead.shards().join(shard))?;
            for record in list_names(&dead.games())? {
                if record_shard_stem(&record) == Some(stem) {
                    remove(&dead.games().join(record))?;
                }
            }
        }
        spool_finished(&dead, &spool, writer)?;
        for (path, _) in spooled_files(&spool)? {
            let target = own_spool.join(path.file_name().expect("a file"));
            std::fs::rename(&path, &target).with_context(|| {
                format!("cannot move {} to {}", path.display(), target.display())
            })?;
            adopted += 1;
        }
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot remove {}", dir.display()))?;
        remove(&lock_path(&dir))?;
    }
    Ok(adopted)
}

/// What the sync thread did since the worker started.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SyncCounts {
    /// Shards committed.
    pub committed: u64,
    /// Shards dropped as stale (`run.max_shard_staleness`).
    pub stale: u64,
}

/// The store side of a worker: follows the log, commits the finished shards.
pub struct WorkerSync {
    store: Arc<dyn Store>,
    run: RunDir,
    follower: Follower,
    shards: ShardWriter,
    /// The newest generation loaded into the working copy.
    generation: Option<u64>,
    max_staleness: u64,
    /// Whether the store failed at the last try (a line was printed).
    waiting: bool,
    counts: SyncCounts,
}

impl WorkerSync {
    /// A sync of the working copy `run` with `store`, following the log from its newest
    /// publication.
    pub fn new(
        store: Arc<dyn Store>,
        run: RunDir,
        shards: ShardWriter,
        max_staleness: u64,
    ) -> Result<WorkerSync> {
        let follower = Follower::near_end(store.clone(), worker_retry())?;
        Ok(WorkerSync {
            store,
            run,
            follower,
            shards,
            generation: None,
            max_staleness,
            waiting: false,
            counts: SyncCounts::default(),
        })
    }

    /// The newest generation in the working copy.
    pub fn generation(&self) -> Option<u64> {
        self.generation
    }

    /// Counts so far.
    pub fn counts(&self) -> SyncCounts {
        self.counts
    }

    /// Shards waiting in the spool to be committed.
    pub fn spooled(&self) -> usize {
        spooled_files(&spool_dir(&self.run)).map_or(0, |files| files.len())
    }

    /// One look at the store: a newer model, then the finished shards. Store failures are
    /// reported once (`waiting for the store …`) and retried at the next tick; what cannot
    /// be retried (a corrupt model, a foreign object at one of this worker's keys, local
    /// I/O) is an error.
    pub fn tick(&mut self) -> Result<()> {
        // Shards are named and committed even when no newer model could be read.
        let followed = self.follow();
        let outcome = followed.and(self.commit_finished());
        match outcome {
            Ok(()) => {
                if self.waiting {
                    self.waiting = false;
                    println!(
                        "selfplay --store {}: the store is back ({} shards committed so far)",
                        self.store.describe(),
                        self.counts.committed
                    );
                }
                Ok(())
            }
            Err(e) if is_transient(&e) => {
                if !self.waiting {
                    self.waiting = true;
                    println!(
                        "selfplay --store {}: waiting for the store ({e:#}); playing on with {}, \
                         finished shards spooled in {}",
                        self.store.describe(),
                        self.generation
                            .map_or("no model".into(), |g| model_name(g as u32)),
                        spool_dir(&self.run).display()
                    );
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Loads the newest publication into the working copy if it is newer: the model
    /// (verified), then `state.json` naming it, which the playing rounds read.
    fn follow(&mut self) -> Result<()> {
        let Some(publication) = self.follower.poll()? else {
            return Ok(());
        };
        if self.generation.is_some_and(|g| g >= publication.generation) {
            return Ok(());
        }
        let generation = u32::try_from(publication.generation)
            .map_err(|_| anyhow!("generation {} is out of range", publication.generation))?;
        let incoming = self.run.root().join("incoming");
        std::fs::create_dir_all(&incoming)
            .with_context(|| format!("cannot create {}", incoming.display()))?;
        let downloaded = download_model(
            self.store.as_ref(),
            &publication,
            &incoming,
            &worker_retry(),
        )?;
        let target = self.run.model(generation);
        std::fs::rename(&downloaded, &target)
            .with_context(|| format!("cannot move the model to {}", target.display()))?;
        let mut state = LoopState::new();
        state.generation = generation;
        state.best = generation;
        state.save(&self.run.state())?;
        self.generation = Some(publication.generation);
        Ok(())
    }

    /// Spools each finished shard of the working copy, then commits the spool in key order,
    /// dropping the stale shards; a spool file is removed once committed or dropped.
    fn commit_finished(&mut self) -> Result<()> {
        let spool = spool_dir(&self.run);
        spool_finished(&self.run, &spool, &mut self.shards)?;
        let newest = self.generation.unwrap_or(0);
        for (path, key) in spooled_files(&spool)? {
            let played = store_trainer::shard_generation(&key).unwrap_or(0);
            if newest.saturating_sub(played) > self.max_staleness {
                self.counts.stale += 1;
                // Named by the shard file inside, whose stem its game records share.
                let shard = std::fs::read(&path)
                    .ok()
                    .and_then(|bytes| bundle::unpack(&bytes, &key.to_string()).ok())
                    .and_then(|files| files.into_iter().next())
                    .map_or_else(|| key.to_string(), |(name, _)| name);
                println!(
                    "selfplay --store {}: dropped shard {shard}, played with {} ({} generations \
                     behind the newest, run.max_shard_staleness = {})",
                    self.store.describe(),
                    model_name(played as u32),
                    newest - played,
                    self.max_staleness
                );
            } else {
                let bytes = std::fs::read(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                self.shards.commit(&PendingShard { key, bytes })?;
                self.counts.committed += 1;
            }
            remove(&path)?;
        }
        Ok(())
    }
}

/// The generation of a worker's shard file name `ext-gGGGG-…`.
fn played_with(name: &str) -> Option<u64> {
    name.strip_prefix("ext-g")?.split('-').next()?.parse().ok()
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// Whether `e` is a store failure whose outcome is unknown (worth waiting for).
fn is_transient(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<store::Error>()
            .is_some_and(store::Error::is_transient)
    })
}

/// Waits until `look` finds something, printing `waiting` once; store failures count as
/// not found yet. Stops with an error on Ctrl-C / SIGTERM.
fn wait_for<T>(waiting: &str, mut look: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    let mut said = false;
    loop {
        match look() {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => {}
            Err(e) if is_transient(&e) => {}
            Err(e) => return Err(e),
        }
        if !said {
            println!("{waiting}");
            said = true;
        }
        for _ in 0..10 {
            loazero::interrupt::check()?;
            std::thread::sleep(SYNC_EVERY / 10);
        }
    }
}

/// Plays `games` games (`None`: until killed) for the run in the store `spec`, working in
/// `cache/worker-<writer id>` (default cache: [`store_trainer::default_cache`]); `threads`
/// overrides the run's `selfplay.threads`. Prints a line per round.
pub fn play_for_store(
    spec: &str,
    cache: Option<&Path>,
    games: Option<u64>,
    threads: Option<usize>,
) -> Result<()> {
    loazero::interrupt::install();
    let store = store_trainer::open_checked(spec)?;
    let base = cache.map_or_else(
        || store_trainer::default_cache(store.as_ref()),
        Path::to_path_buf,
    );
    let mut shards = ShardWriter::new(store.clone(), worker_retry());
    let tag = format!("w{}", shards.writer());
    let run = RunDir::new(base.join(format!("worker-{}", shards.writer())));
    std::fs::create_dir_all(&base)
        .with_context(|| format!("cannot create the cache {}", base.display()))?;
    // Held until the process ends: no other worker adopts this working copy meanwhile.
    let _own_lock = try_lock(run.root())?
        .with_context(|| format!("{} is locked by another process", run.root().display()))?;
    run.create()?;
    let adopted = adopt_dead_workers(&base, &run, &mut shards)?;
    if adopted > 0 {
        println!(
            "selfplay --store {spec}: adopted {adopted} finished shards of dead workers in {} \
             (committed under their own keys)",
            base.display()
        );
    }
    let text = wait_for(
        &format!("selfplay --store {spec}: waiting for the store: no run yet (start it with `loazero run --store {spec}`)"),
        || store_trainer::read_config(store.as_ref()),
    )?;
    write_atomically(&run.config(), text.as_bytes())?;
    let config = RunConfig::load(Some(&run.config()), &[])
        .with_context(|| format!("the config of the run in {spec}"))?;
    let mut sync = WorkerSync::new(
        store.clone(),
        run.clone(),
        shards,
        config.run.max_shard_staleness,
    )?;
    wait_for(
        &format!("selfplay --store {spec}: waiting for the store's first model"),
        || {
            sync.follow()?;
            Ok(sync.generation())
        },
    )?;
    println!(
        "selfplay --store {spec}: worker {tag} with {}, working copy {}",
        model_name(sync.generation().unwrap_or(0) as u32),
        run.root().display()
    );
    let sp = selfplay_config(&config, threads);
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, in_thread) = (stop.clone(), Arc::new(AtomicBool::new(false)));
    let done = in_thread.clone();
    let handle = std::thread::Builder::new()
        .name("store-sync".into())
        .spawn(move || -> (WorkerSync, Result<()>) {
            let mut next = Instant::now() + SYNC_EVERY;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                if Instant::now() < next {
                    continue;
                }
                next = Instant::now() + SYNC_EVERY;
                if let Err(e) = sync.tick() {
                    // Stop the play: the error is reported when it has ended.
                    flag.store(true, Ordering::Relaxed);
                    return (sync, Err(e));
                }
            }
            (sync, Ok(()))
        })
        .map_err(|e| anyhow!("cannot start the store sync thread: {e}"))?;
    let ended = play_rounds(
        &run,
        &tag,
        &config,
        sp,
        games,
        &stop,
        &Finished::default(),
        |r| r.print(&format!("selfplay --store {spec}")),
    );
    in_thread.store(true, Ordering::Relaxed);
    let (mut sync, synced) = handle
        .join()
        .map_err(|_| anyhow!("the store sync thread panicked"))?;
    synced?;
    let ended = ended?;
    // Commit what is left, waiting for the store up to a minute.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let outcome = sync.commit_finished();
        match outcome {
            Ok(()) => break,
            Err(e) if is_transient(&e) && Instant::now() < deadline => {
                sync.tick()?;
                std::thread::sleep(SYNC_EVERY);
            }
            Err(e) => bail!(
                "{e:#}; {} finished shards are not committed (kept in {}: a later \
                 `selfplay --store` with this cache commits them)",
                sync.spooled().max(1),
                spool_dir(&run).display()
            ),
        }
    }
    let counts = sync.counts();
    println!(
        "selfplay --store {spec}: {} shards committed, {} dropped as stale",
        counts.committed, counts.stale
    );
    match ended {
        Ended::Done => {
            std::fs::remove_dir_all(run.root())
                .with_context(|| format!("cannot remove {}", run.root().display()))?;
            remove(&lock_path(run.root()))?;
            Ok(())
        }
        Ended::Stopped { games } => {
            eprintln!("selfplay --store {spec}: stopped after {games} games; every finished game is committed");
            Err(loazero::interrupt::Interrupted.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_give_the_generation_that_played_them() {
        assert_eq!(played_with("ext-g0012-wabc-n003-1-2-00000.shard"), Some(12));
        assert_eq!(played_with("loop-g0012-n003-1-2-00000.shard"), None);
    }

    /// A worker cut off from the store keeps its shards and commits them when it is back;
    /// stale shards are dropped and counted.
    #[test]
    fn shards_wait_for_the_store_and_stale_ones_are_dropped() {
        use store::faults::{Faults, FaultyStore};
        let dir = tempfile::tempdir().unwrap();
        let memory: Arc<dyn Store> = Arc::new(store::MemoryStore::new());
        let mut trainer =
            store::commit::Publisher::start(memory.clone(), Retry::immediately(1)).unwrap();
        trainer.publish(b"gen 0", &[]).unwrap();
        let offline = Faults {
            fail_before: 1.0,
            ..Faults::NONE
        };
        let faulty = Arc::new(FaultyStore::new(memory.clone(), offline, 1));
        faulty.set_enabled(false);
        let store: Arc<dyn Store> = faulty.clone();
        let run = RunDir::new(dir.path().join("w"));
        run.create().unwrap();
        let writer = ShardWriter::new(store.clone(), Retry::immediately(1));
        let mut sync = WorkerSync::new(store.clone(), run.clone(), writer, 1).unwrap();
        sync.tick().unwrap();
        assert_eq!(sync.generation(), Some(0));
        assert_eq!(std::fs::read(run.model(0)).unwrap(), b"gen 0");
        let shard = |g: u32, seq: u32| {
            let stem = format!("ext-g{g:04}-wtest-n001-0000000000001-0-{seq:05}");
            std::fs::write(run.games().join(format!("{stem}-000.txt")), b"a game").unwrap();
            std::fs::write(run.shards().join(format!("{stem}.shard")), b"samples").unwrap();
        };
        shard(0, 0);
        faulty.set_enabled(true);
        sync.tick().unwrap();
        assert!(sync.waiting);
        assert_eq!(sync.spooled(), 1);
        faulty.set_enabled(false);
        sync.tick().unwrap();
        assert!(!sync.waiting);
        assert_eq!(
            sync.counts(),
            SyncCounts {
                committed: 1,
                stale: 0
            }
        );
        assert_eq!(memory.list("shards").unwrap().len(), 1);
        assert!(
            list_names(&run.games()).unwrap().is_empty(),
            "records go with the shard"
        );
        trainer.publish(b"gen 1", &[]).unwrap();
        trainer.publish(b"gen 2", &[]).unwrap();
        shard(0, 1);
        shard(1, 2);
        sync.tick().unwrap();
        assert_eq!(sync.generation(), Some(2));
        assert_eq!(
            sync.counts(),
            SyncCounts {
                committed: 2,
                stale: 1
            }
        );
    }
    /// A killed worker's finished shards are adopted by the next worker with its cache:
    /// the spooled one is committed under its original key (its commit had happened, the
    /// acknowledgement was lost: still one copy), the unspooled one under the adopter's key,
    /// torn leftovers go, and a live worker's copy (its lock held) is left alone.
    #[test]
    fn a_dead_workers_shards_are_adopted_once_and_live_ones_left_alone() {
        let cache = tempfile::tempdir().unwrap();
        let memory: Arc<dyn Store> = Arc::new(store::MemoryStore::new());
        let mut trainer =
            store::commit::Publisher::start(memory.clone(), Retry::immediately(1)).unwrap();
        trainer.publish(b"gen 0", &[]).unwrap();
        let write_shard = |run: &RunDir, stem: &str| {
            std::fs::write(run.games().join(format!("{stem}-000.txt")), stem).unwrap();
            std::fs::write(run.shards().join(format!("{stem}.shard")), b"samples").unwrap();
        };
        // The dead worker: one shard spooled and committed (ack lost, killed before removing
        // its files), one finished but not spooled, one record of an unfinished shard.
        let dead = RunDir::new(cache.path().join("worker-dead"));
        dead.create().unwrap();
        let mut dead_writer = ShardWriter::new(memory.clone(), Retry::immediately(1));
        write_shard(&dead, "ext-g0000-wdead-n001-1-0-00000");
        spool_finished(&dead, &spool_dir(&dead), &mut dead_writer).unwrap();
        let (spooled_path, spooled_key) = spooled_files(&spool_dir(&dead)).unwrap().remove(0);
        let bytes = std::fs::read(&spooled_path).unwrap();
        dead_writer
            .commit(&PendingShard {
                key: spooled_key.clone(),
                bytes,
            })
            .unwrap();
        write_shard(&dead, "ext-g0000-wdead-n001-1-0-00000"); // torn: not yet removed
        write_shard(&dead, "ext-g0000-wdead-n001-1-0-00001");
        std::fs::write(
            dead.games().join("ext-g0000-wdead-n001-1-0-00002-000.txt"),
            b"unfinished",
        )
        .unwrap();
        // A live worker, its lock held.
        let live = RunDir::new(cache.path().join("worker-live"));
        live.create().unwrap();
        let _held = try_lock(live.root()).unwrap().unwrap();
        write_shard(&live, "ext-g0000-wlive-n001-1-0-00000");

        let own = RunDir::new(cache.path().join("worker-own"));
        let _own_lock = try_lock(own.root()).unwrap().unwrap();
        own.create().unwrap();
        let mut writer = ShardWriter::new(memory.clone(), Retry::immediately(1));
        let adopter = writer.writer().to_string();
        assert_eq!(
            adopt_dead_workers(cache.path(), &own, &mut writer).unwrap(),
            2
        );
        assert!(!dead.root().exists() && !lock_path(dead.root()).exists());
        assert!(live
            .shards()
            .join("ext-g0000-wlive-n001-1-0-00000.shard")
            .exists());
        assert!(
            try_lock(live.root()).unwrap().is_none(),
            "the live lock is held"
        );
        let keys: Vec<Key> = spooled_files(&spool_dir(&own))
            .unwrap()
            .into_iter()
            .map(|(_, key)| key)
            .collect();
        assert!(keys.contains(&spooled_key), "{keys:?}");
        assert!(
            keys.iter().any(|k| k.as_str().contains(&adopter)),
            "{keys:?}"
        );
        let mut sync = WorkerSync::new(memory.clone(), own.clone(), writer, 4).unwrap();
        sync.tick().unwrap();
        assert_eq!(sync.counts().committed, 2);
        assert_eq!(sync.spooled(), 0);
        let committed = memory.list("shards").unwrap();
        assert_eq!(committed.len(), 2, "no second copy: {committed:?}");
        let mut games = Vec::new();
        for listed in committed {
            let files = bundle::unpack(&memory.get(&listed.key).unwrap(), "t").unwrap();
            games.extend(files.into_iter().skip(1).map(|(name, _)| name));
        }
        games.sort();
        assert_eq!(
            games,
            [
                "ext-g0000-wdead-n001-1-0-00000-000.txt",
                "ext-g0000-wdead-n001-1-0-00001-000.txt"
            ]
        );
    }
}
