//! [`StoreView`]: a read-only view of a run kept in a store, for `serve`, `plot`,
//! `ratings` and `replay` with `--store URL`: a local directory laid out exactly like a
//! `--dir` run, which the commands read as they read any run directory.
//!
//! The view is `CACHE/view` (`--cache`, default [`default_cache`]: the trainer's working
//! copy, if on the same machine, is `CACHE/trainer` beside it). Each [`StoreView::sync`]
//! makes it hold (through the one incremental sync, [`crate::store_copy`]):
//!
//! * the files of the newest trainer epoch that has saved any (`loop/eE/…`: state, config,
//!   metrics, ratings, promoted models, candidates, matches with their games, the loop's own
//!   shards and game records) except its checkpoint, which no reader needs;
//! * every worker shard committed to the store, unpacked from its bundle as
//!   `shards/joined-<name>.shard` with its records `games/joined-<name>-NNN.txt` (the names
//!   the trainer gives them).
//!
//! A sync downloads only what is new or may have changed, and takes `CACHE/view.lock`
//! meanwhile, so that several readers of one cache take turns. The store is opened without
//! the trainer's start-up probe (which writes) and wrapped in [`ReadOnly`], which refuses
//! every write: a view never changes the store.

use crate::store_copy::{self, default_cache, LocalCopy, LoopFiles, SyncReport, CONFIG_KEY};
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use store::commit::Retry;
use store::{Key, ReadOnly, Store};

/// How a view retries a read whose outcome is unknown: the object store client already
/// retries each request, so a few more tries are enough (3 within about 1.5 s).
const VIEW_RETRY: Retry = Retry {
    attempts: 3,
    first_delay: Duration::from_millis(500),
    max_delay: Duration::from_secs(1),
};

/// What one [`StoreView::sync`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewSync {
    /// The trainer epoch whose files the view shows.
    pub epoch: u64,
    /// What the sync downloaded, kept and removed.
    pub report: SyncReport,
}

/// A read-only view of the run in a store (module doc).
#[derive(Debug)]
pub struct StoreView {
    spec: String,
    store: ReadOnly,
    cache: PathBuf,
    copy: LocalCopy,
}

impl StoreView {
    /// The view of the run in the store `spec` (an `s3://`, `gs://`, `az://`, `file://` URL
    /// or a directory) in `cache` (default: [`default_cache`]). Nothing is read yet.
    pub fn open(spec: &str, cache: Option<&Path>) -> Result<StoreView> {
        // Opening a local store creates its directory; a view must not.
        let local = match spec.split_once("://") {
            None => Some(spec),
            Some(("file", path)) => Some(path.trim_start_matches("localhost")),
            Some(_) => None,
        };
        if let Some(path) = local.filter(|p| !p.is_empty() && !Path::new(p).is_dir()) {
            bail!("--store {spec}: no such directory {path}");
        }
        let store = store::open(spec).map_err(|e| anyhow!("--store {spec}: {e}"))?;
        StoreView::over(spec, store, cache)
    }

    /// [`StoreView::open`] over a store already opened (tests).
    pub fn over(spec: &str, store: Arc<dyn Store>, cache: Option<&Path>) -> Result<StoreView> {
        let cache = cache.map_or_else(|| default_cache(store.as_ref()), Path::to_path_buf);
        let store = ReadOnly(store);
        let copy = LocalCopy::open(&cache.join("view"), &store)
            .with_context(|| format!("--store {spec}: the local view in {}", cache.display()))?;
        Ok(StoreView {
            spec: spec.to_string(),
            store,
            cache,
            copy,
        })
    }

    /// The store as given.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The view's directory, a run directory.
    pub fn root(&self) -> &Path {
        self.copy.root()
    }

    /// The cache it lives in.
    pub fn cache(&self) -> &Path {
        &self.cache
    }

    /// Brings the view up to date with the store (module doc). Errors name the store and
    /// say what is missing: no run at all, or a run whose trainer has saved nothing yet.
    pub fn sync(&mut self) -> Result<ViewSync> {
        let lock = crate::layout::lock_file(&self.cache.join("view.lock"))?;
        let spec = self.spec.clone();
        let in_store = |e: anyhow::Error| anyhow!("--store {spec}: cannot read the run: {e:#}");
        let store: &dyn Store = &self.store;
        let Some(epoch) =
            store_copy::newest_loop_epoch(store, None, &VIEW_RETRY).map_err(in_store)?
        else {
            return Err(self.nothing_to_show());
        };
        let mut wanted = store_copy::loop_files(store, epoch, LoopFiles::ForReaders, &VIEW_RETRY)
            .map_err(in_store)?;
        let shards = VIEW_RETRY
            .run(|| store.list("shards"))
            .map_err(|e| in_store(e.into()))?;
        wanted.extend(store_copy::bundles(shards));
        let report = self
            .copy
            .sync(store, &wanted, &VIEW_RETRY)
            .map_err(in_store)?;
        self.copy.save()?;
        drop(lock);
        Ok(ViewSync { epoch, report })
    }

    /// The error for a store without a trainer's saved files: what the store holds instead.
    fn nothing_to_show(&self) -> anyhow::Error {
        let spec = &self.spec;
        let config = Key::new(CONFIG_KEY)
            .ok()
            .and_then(|k| self.store.size(&k).ok().flatten())
            .is_some();
        let logged = self.store.list("log").map(|l| l.len()).unwrap_or(0);
        if !config && logged == 0 {
            anyhow!(
                "--store {spec} holds no run: no {CONFIG_KEY}, no log/ entries and no trainer's \
                 loop/ files (start one with `loazero run --store {spec}`)"
            )
        } else {
            anyhow!(
                "--store {spec} holds a run whose trainer has saved no files yet (no \
                 loop/eEEEEEEE/state.json; {} log entries): try again once its trainer has \
                 started",
                logged
            )
        }
    }
}

/// Opens the view of `spec` in `cache`, brings it up to date and says so on standard error
/// (`--store URL: view DIR (trainer epoch E; …)`): for the commands that read a run once.
pub fn materialise(spec: &str, cache: Option<&Path>) -> Result<StoreView> {
    let mut view = StoreView::open(spec, cache)?;
    let synced = view.sync()?;
    eprintln!(
        "--store {spec}: view {} (trainer epoch {}; {})",
        view.root().display(),
        synced.epoch,
        synced.report
    );
    Ok(view)
}

/// The name a store's run goes by in tables and the web app: the last segment of its
/// prefix, else its bucket or directory name (`s3://b/runs/a` → `a`).
pub fn run_name(spec: &str) -> String {
    let path = spec.split_once("://").map_or(spec, |(_, rest)| rest);
    path.trim_end_matches('/')
        .rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or("store")
        .to_string()
}

/// `relative`, a path inside a run (`games/NAME.txt`, `matches/…`), in the view `view`:
/// refused when it leaves the run (absolute, `..`), an error naming the store when there
/// is no such file.
pub fn file_in(view: &StoreView, relative: &Path) -> Result<PathBuf> {
    use std::path::Component;
    if relative.as_os_str().is_empty()
        || relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        bail!(
            "{}: with --store, name a file by its path inside the run (games/NAME.txt, \
             matches/MATCH/games/…), without '..'",
            relative.display()
        );
    }
    let path = view.root().join(relative);
    if !path.is_file() {
        bail!(
            "--store {}: the run has no file {} (its game records are under games/ and \
             matches/*/games/; the view is in {})",
            view.spec(),
            relative.display(),
            view.root().display()
        );
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{bundle_bytes, Counting};

    fn key(text: &str) -> Key {
        Key::new(text).unwrap()
    }

    #[test]
    fn a_view_shows_the_newest_trainers_files_and_the_workers_games_and_never_writes() {
        let counting = Arc::new(Counting::read_only());
        let memory = &counting.inner;
        let put = |k: &str, v: &[u8]| memory.put(&key(k), v).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let mut view =
            StoreView::over("counting://run", counting.clone(), Some(cache.path())).unwrap();
        let e = view.sync().unwrap_err().to_string();
        assert!(e.contains("--store counting://run holds no run"), "{e}");
        put(CONFIG_KEY, b"[run]\n");
        put("epochs/00000001.json", b"{}");
        let e = view.sync().unwrap_err().to_string();
        assert!(e.contains("has saved no files yet"), "{e}");
        put("loop/e00000001/state.json", b"{\"generation\": 1}");
        put("loop/e00000001/checkpoints/latest.safetensors", b"trainer");
        put("epochs/00000002.json", b"{}");
        put("loop/e00000002/state.json", b"{\"generation\": 2}");
        put(
            "loop/e00000002/games/loop-g0001-n001-1-2-00000-000.txt",
            b"own",
        );
        put(
            "shards/g00000001/w-00000000.shard",
            &bundle_bytes("ext-g0001-h-n001-1-2-00000"),
        );
        let synced = view.sync().unwrap();
        assert_eq!(synced.epoch, 2);
        assert_eq!(synced.report.fetched, 3, "{}", synced.report);
        let root = view.root().to_path_buf();
        assert_eq!(
            std::fs::read(root.join("state.json")).unwrap(),
            b"{\"generation\": 2}"
        );
        assert!(root
            .join("games/loop-g0001-n001-1-2-00000-000.txt")
            .is_file());
        assert!(root
            .join("games/joined-ext-g0001-h-n001-1-2-00000-000.txt")
            .is_file());
        assert!(!root.join("checkpoints").exists());
        assert_eq!(
            file_in(
                &view,
                Path::new("games/joined-ext-g0001-h-n001-1-2-00000-000.txt")
            )
            .unwrap(),
            root.join("games/joined-ext-g0001-h-n001-1-2-00000-000.txt")
        );
        let e = file_in(&view, Path::new("../x")).unwrap_err().to_string();
        assert!(e.contains("without '..'"), "{e}");
        let e = file_in(&view, Path::new("games/none.txt"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("counting://run: the run has no file games/none.txt"),
            "{e}"
        );
        assert_eq!(counting.writes(), 0);
        let e = view.store.put(&key("x"), b"").unwrap_err().to_string();
        assert!(e.contains("never writes"), "{e}");
    }

    #[test]
    fn bad_and_unreadable_stores_are_named() {
        let e = StoreView::open("ftp://host/x", None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--store ftp://host/x") && e.contains("unknown scheme"),
            "{e}"
        );
        let cache = tempfile::tempdir().unwrap();
        let failing = store::faults::FaultyStore::new(
            store::MemoryStore::new(),
            store::faults::Faults {
                fail_before: 1.0,
                lost_ack: 0.0,
                max_delay: Duration::ZERO,
            },
            1,
        );
        let mut view =
            StoreView::over("s3://bucket/run", Arc::new(failing), Some(cache.path())).unwrap();
        let e = format!("{:#}", view.sync().unwrap_err());
        assert!(
            e.contains("--store s3://bucket/run: cannot read the run"),
            "{e}"
        );
    }

    #[test]
    fn store_runs_are_named_by_their_last_segment() {
        assert_eq!(run_name("s3://bucket/runs/a"), "a");
        assert_eq!(run_name("s3://bucket/"), "bucket");
        assert_eq!(run_name("file:///tmp/x/store/"), "store");
        assert_eq!(run_name("runs/b"), "b");
    }
}
