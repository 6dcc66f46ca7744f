//! `loazero selfplay --store URL`: a self-play worker of a run kept in a store
//! ([`super::remote`]). Cattle: any number may run anywhere, be killed at any moment and be
//! started again; none needs clean-up.
//!
//! The worker reads the run's config from the store, follows its log
//! (`store::commit::Follower`), downloads each published model to a temporary file and
//! checks its sha256 before loading it (`store::commit::download_model`), and plays rounds
//! like `selfplay --dir` into a working copy of its own (`CACHE/worker-<writer id>`). Every
//! 2 s a sync thread ([`WorkerSync::tick`]) looks for a newer model and commits each finished
//! shard with its game records as one bundle under a key naming this process and the
//! generation that played it. When the store cannot be reached the worker keeps playing on
//! the last model, the finished shards stay in the working copy (the spool) under the names
//! already chosen, and are committed when the store is back; a progress line says that it
//! waits. Shards played with a model more than `run.max_shard_staleness` generations older
//! than the newest published are dropped and counted.

use super::bundle;
use super::config::RunConfig;
use super::join::{joined_selfplay, play_rounds, Ended, Finished};
use super::layout::{list_names, model_name, write_atomically, RunDir};
use super::remote;
use super::state::LoopState;
use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::commit::{download_model, Follower, PendingShard, Retry, ShardWriter};
use store::Store;

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

/// A finished shard of the working copy, named for the store.
struct Spooled {
    pending: PendingShard,
    /// The shard file and its records, removed once committed.
    files: Vec<PathBuf>,
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
    spool: BTreeMap<PathBuf, Spooled>,
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
            spool: BTreeMap::new(),
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

    /// Shards waiting to be committed.
    pub fn spooled(&self) -> usize {
        self.spool.len()
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
                        self.run.shards().display()
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

    /// Names each finished shard of the working copy (once), drops the stale ones, and
    /// commits the rest in order.
    fn commit_finished(&mut self) -> Result<()> {
        for name in list_names(&self.run.shards())? {
            if name.starts_with('.') || !name.ends_with(".shard") {
                continue;
            }
            let path = self.run.shards().join(&name);
            if self.spool.contains_key(&path) {
                continue;
            }
            let generation = played_with(&name)
                .with_context(|| format!("{}: not a worker's shard name", path.display()))?;
            let (bytes, files) = bundle::pack(&path, &self.run.games())?;
            let pending = self.shards.prepare(generation, bytes);
            self.spool.insert(path, Spooled { pending, files });
        }
        let newest = self.generation.unwrap_or(0);
        let paths: Vec<PathBuf> = self.spool.keys().cloned().collect();
        for path in paths {
            let spooled = &self.spool[&path];
            let played = store_generation(&spooled.pending);
            if newest.saturating_sub(played) > self.max_staleness {
                self.counts.stale += 1;
                println!(
                    "selfplay --store {}: dropped a shard played with {} ({} generations behind \
                     the newest, run.max_shard_staleness = {})",
                    self.store.describe(),
                    model_name(played as u32),
                    newest - played,
                    self.max_staleness
                );
            } else {
                self.shards.commit(&spooled.pending)?;
                self.counts.committed += 1;
            }
            for file in &spooled.files {
                remove(file)?;
            }
            self.spool.remove(&path);
        }
        Ok(())
    }
}

/// The generation of a worker's shard file name `ext-gGGGG-…`.
fn played_with(name: &str) -> Option<u64> {
    name.strip_prefix("ext-g")?.split('-').next()?.parse().ok()
}

/// The generation in a pending shard's key.
fn store_generation(shard: &PendingShard) -> u64 {
    remote::shard_generation(&shard.key).unwrap_or(0)
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
            crate::interrupt::check()?;
            std::thread::sleep(SYNC_EVERY / 10);
        }
    }
}

/// Plays `games` games (`None`: until killed) for the run in the store `spec`, working in
/// `cache/worker-<writer id>` (default cache: [`remote::default_cache`]); `threads`
/// overrides the run's `selfplay.threads`. Prints a line per round.
pub fn join_store(
    spec: &str,
    cache: Option<&Path>,
    games: Option<u64>,
    threads: Option<usize>,
) -> Result<()> {
    crate::interrupt::install();
    let store = remote::open_checked(spec)?;
    let base = cache.map_or_else(|| remote::default_cache(store.as_ref()), Path::to_path_buf);
    let shards = ShardWriter::new(store.clone(), worker_retry());
    let tag = format!("w{}", shards.writer());
    let run = RunDir::new(base.join(format!("worker-{}", shards.writer())));
    run.create()?;
    let text = wait_for(
        &format!("selfplay --store {spec}: waiting for the store: no run yet (start it with `loazero run --store {spec}`)"),
        || remote::read_config(store.as_ref()),
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
    let sp = joined_selfplay(&config, threads);
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
        |r| {
            println!(
                "selfplay --store {spec}: {} games with {} ({:.0} positions/s, {:.0} evals/s)",
                r.played,
                model_name(r.model),
                r.positions_per_sec,
                r.evals_per_sec
            );
            if let Some(g) = r.switched_to {
                println!("switched to {}", model_name(g));
            }
        },
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
                "{e:#}; {} finished shards are not committed (kept in {})",
                sync.spooled().max(1),
                run.shards().display()
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
            Ok(())
        }
        Ended::Stopped { games } => {
            eprintln!("selfplay --store {spec}: stopped after {games} games; every finished game is committed");
            Err(crate::interrupt::Interrupted.into())
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
            store::commit::Trainer::start(memory.clone(), Retry::immediately(1)).unwrap();
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
}
