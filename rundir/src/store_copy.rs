//! Local copies of a run kept in a store, kept in step incrementally: the one sync routine
//! behind the trainer's working copy (rebuilt at every start, workers' shards pulled into it:
//! `src/run/store_trainer.rs`) and the read-only views of `serve`, `plot`, `ratings` and `replay`
//! with `--store` ([`crate::store_view`]).
//!
//! A [`LocalCopy`] is a directory whose files are copies of store objects, with a manifest
//! beside it (`<dir>.manifest.json`) that records, for each object copied into it (or
//! uploaded from it), the object's key and size and the local files that hold it, each
//! with its length, modification time and inode (every atomic write, the only way files are
//! written here, gives a new inode). [`LocalCopy::sync`] makes the directory hold exactly a
//! set of [`Wanted`] objects:
//!
//! * an object marked [`Reuse::SameKeyAndSize`] (its key never holds other bytes of the
//!   same size: see [`loop_files`] and [`bundles`] for which are) is kept, not downloaded,
//!   when the manifest holds its key with the same size and its local files are exactly as
//!   written then;
//! * every other object is downloaded at every sync, and its local file is rewritten only
//!   when its bytes changed (so its modification time says when the copy last saw it
//!   change);
//! * every other file in the directory (temporary files, files of objects no longer
//!   wanted, files written locally and never uploaded) is removed.
//!
//! A sync never writes to the store: it only lists, reads and checks sizes. A manifest that
//! is missing, unreadable or made for another store counts as empty (everything is
//! downloaded once more).
//!
//! What a copy of a run holds ([`loop_files`], [`bundles`]): the `loop/eEEEEEEE/` files of one
//! trainer epoch, laid out as a run directory, and workers' shard bundles unpacked as
//! `shards/joined-<stem>.shard` with their records `games/joined-<stem>-NNN.txt`.

use crate::bundle;
use crate::layout::write_atomically;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use store::commit::{self, Retry};
use store::{Key, Listed, Store};

/// The folder of the trainers' working files: `loop/eEEEEEEE/<run directory file>`.
pub const LOOP_FOLDER: &str = "loop";
/// The key of the run's config.
pub const CONFIG_KEY: &str = "config.toml";
/// Workers' shards unpacked into a copy are named `joined-<their name>`; they are in the
/// store already (as bundles), so a trainer never mirrors them.
pub const JOINED_PREFIX: &str = "joined-";

/// The default local cache of a store's run: `$XDG_CACHE_HOME/loazero/stores/<16 hex digits
/// of the sha256 of the store's name>` (or under `~/.cache`, or the temporary directory).
/// A trainer's working copy is `trainer/` in it, a read-only view `view/`.
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

/// The folder of epoch `epoch`'s trainer files.
pub fn loop_folder(epoch: u64) -> String {
    format!("{LOOP_FOLDER}/e{epoch:08}")
}

/// When a synced object may be kept instead of downloaded again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Its key never holds other bytes of the same size: kept when the manifest holds the
    /// key with this size and its local files are as written.
    SameKeyAndSize,
    /// It may be overwritten in place with bytes of the same size: downloaded at every
    /// sync.
    Never,
}

/// Where a synced object lands in the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// As one file at this path (relative, `/`-separated).
    File(String),
    /// A worker's shard bundle ([`bundle`]), unpacked as `shards/joined-<stem>.shard` and
    /// `games/joined-<stem>-NNN.txt`.
    Bundle,
    /// As one file at `path`, with `bytes` read before the listing the other objects came
    /// from (a trainer's `state.json`: [`loop_files`]): written as read, never downloaded
    /// again, so it is no newer than any file it names.
    Pinned {
        /// Its path (relative, `/`-separated).
        path: String,
        /// Its bytes, as read.
        bytes: Vec<u8>,
    },
}

/// One object a copy should hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Its key.
    pub key: Key,
    /// Its size as listed (`None`: not listed, so it is downloaded whatever [`Wanted::reuse`]
    /// says).
    pub size: Option<u64>,
    /// Where it lands.
    pub place: Place,
    /// When it may be kept.
    pub reuse: Reuse,
}

/// What [`LocalCopy::fetch`] did with one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// Kept: the copy held it already.
    Kept,
    /// Downloaded, `bytes` long; `changed`: its local files changed (new, or other bytes).
    Downloaded {
        /// Its size.
        bytes: u64,
        /// Whether its local files changed.
        changed: bool,
    },
    /// It was gone from the store (deleted since it was listed): left out.
    Vanished,
}

/// What one [`LocalCopy::sync`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SyncReport {
    /// Objects downloaded.
    pub fetched: usize,
    /// Of those, objects whose local files changed (new, or other bytes than before).
    pub changed: usize,
    /// Objects kept without a download.
    pub kept: usize,
    /// Bytes downloaded.
    pub bytes: u64,
    /// Local files removed.
    pub removed: usize,
}

impl std::fmt::Display for SyncReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} objects downloaded ({:.1} MB, {} changed), {} kept from the cache, {} files removed",
            self.fetched,
            self.bytes as f64 / 1e6,
            self.changed,
            self.kept,
            self.removed
        )
    }
}

/// A local file as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct LocalFile {
    /// Relative to the copy's root.
    path: String,
    /// Its length, modification time (ns since 1970) and inode when recorded.
    len: u64,
    modified_ns: u64,
    inode: u64,
}

/// An object held by the copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Held {
    /// The object's size.
    size: u64,
    /// The local files holding it.
    files: Vec<LocalFile>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    /// The store the objects came from ([`Store::describe`]).
    store: String,
    /// Held objects by key.
    objects: BTreeMap<String, Held>,
}

/// A local directory of copies of store objects, with its manifest (module doc).
#[derive(Debug)]
pub struct LocalCopy {
    root: PathBuf,
    manifest_path: PathBuf,
    manifest: Manifest,
}

/// The length, modification time and inode of the file at `path`, if it is a file.
fn stamp(path: &Path) -> Option<(u64, u64, u64)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((meta.len(), u64::try_from(modified).ok()?, meta.ino()))
}

/// Checks a relative path of the copy: `/`-separated segments, none empty, `.` or `..`.
fn relative_path(text: &str) -> Result<&str> {
    if text.is_empty()
        || text
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
    {
        anyhow::bail!("{text:?} is not a relative path inside a run");
    }
    Ok(text)
}

impl LocalCopy {
    /// The copy in `root` (created when missing) of objects of `store`, with its manifest at
    /// `<root>.manifest.json`.
    pub fn open(root: &Path, store: &dyn Store) -> Result<LocalCopy> {
        std::fs::create_dir_all(root)
            .with_context(|| format!("cannot create {}", root.display()))?;
        let mut name = root
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "copy".into());
        name.push(".manifest.json");
        let manifest_path = root.with_file_name(name);
        let described = store.describe();
        let manifest = std::fs::read(&manifest_path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Manifest>(&bytes).ok())
            .filter(|m| m.store == described)
            .unwrap_or_else(|| Manifest {
                store: described,
                objects: BTreeMap::new(),
            });
        Ok(LocalCopy {
            root: root.to_path_buf(),
            manifest_path,
            manifest,
        })
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the copy holds `key` at `size` with its local files as written.
    fn holds(&self, key: &Key, size: u64) -> bool {
        self.manifest.objects.get(key.as_str()).is_some_and(|held| {
            held.size == size
                && held.files.iter().all(|f| {
                    stamp(&self.root.join(&f.path)) == Some((f.len, f.modified_ns, f.inode))
                })
        })
    }

    /// Records that the local file `relative` holds the object `key` of `size` bytes (the
    /// trainer uploaded it from there). A file that is gone by now is not recorded.
    pub fn note(&mut self, key: &Key, size: u64, relative: &str) -> Result<()> {
        let relative = relative_path(relative)?;
        self.manifest.objects.remove(key.as_str());
        if stamp(&self.root.join(relative)).is_some() {
            let file = self.local_file(relative)?;
            self.manifest.objects.insert(
                key.to_string(),
                Held {
                    size,
                    files: vec![file],
                },
            );
        }
        Ok(())
    }

    fn local_file(&self, relative: &str) -> Result<LocalFile> {
        let path = self.root.join(relative);
        let (len, modified_ns, inode) =
            stamp(&path).with_context(|| format!("cannot read {}", path.display()))?;
        Ok(LocalFile {
            path: relative.to_string(),
            len,
            modified_ns,
            inode,
        })
    }

    /// Whether the copy holds `wanted` already, so that it may be kept (module doc).
    fn can_keep(&self, wanted: &Wanted) -> bool {
        wanted
            .size
            .filter(|_| wanted.reuse == Reuse::SameKeyAndSize)
            .is_some_and(|size| self.holds(&wanted.key, size))
    }

    /// Makes the copy hold `wanted` (kept, or downloaded), without removing anything else.
    pub fn fetch(&mut self, store: &dyn Store, wanted: &Wanted, retry: &Retry) -> Result<Fetch> {
        if self.can_keep(wanted) {
            return Ok(Fetch::Kept);
        }
        let bytes = download(store, wanted, retry)?;
        self.place(store, wanted, bytes)
    }

    /// Writes the downloaded `bytes` of `wanted` into the copy (`None`: the object was gone).
    fn place(
        &mut self,
        store: &dyn Store,
        wanted: &Wanted,
        bytes: Option<Vec<u8>>,
    ) -> Result<Fetch> {
        let Some(bytes) = bytes else {
            self.manifest.objects.remove(wanted.key.as_str());
            return Ok(Fetch::Vanished);
        };
        let what = format!("{}: {}", store.describe(), wanted.key);
        let files: Vec<(String, Vec<u8>)> = match &wanted.place {
            Place::File(relative) | Place::Pinned { path: relative, .. } => {
                vec![(relative_path(relative)?.to_string(), bytes.clone())]
            }
            Place::Bundle => {
                let files = bundle::unpack(&bytes, &what)?;
                let stem = format!("{JOINED_PREFIX}{}", files[0].0.trim_end_matches(".shard"));
                bundle::unpacked_paths(&files, &stem, &what)?
                    .into_iter()
                    .zip(files)
                    .map(|(path, (_, content))| (path, content))
                    .collect()
            }
        };
        let mut changed = false;
        let mut held = Vec::with_capacity(files.len());
        // The records before their shard (a run directory's commit order).
        for (relative, content) in files.iter().rev() {
            let path = self.root.join(relative);
            if !std::fs::read(&path).is_ok_and(|old| old == *content) {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                write_unsynced(&path, content)?;
                changed = true;
            }
            held.push(self.local_file(relative)?);
        }
        held.reverse();
        let size = bytes.len() as u64;
        self.manifest
            .objects
            .insert(wanted.key.to_string(), Held { size, files: held });
        Ok(Fetch::Downloaded {
            bytes: size,
            changed,
        })
    }

    /// Makes the directory hold exactly `wanted` (module doc). Never writes to `store`.
    pub fn sync(
        &mut self,
        store: &dyn Store,
        wanted: &[Wanted],
        retry: &Retry,
    ) -> Result<SyncReport> {
        let mut report = SyncReport::default();
        // In batches of PARALLEL_DOWNLOADS, in `wanted`'s order (a pinned state comes
        // last): the batch's missing objects are downloaded at once, then placed one by
        // one. Small batches bound the bytes held at once to that many objects (models of
        // a large net are hundreds of megabytes each).
        for batch in wanted.chunks(PARALLEL_DOWNLOADS) {
            let keep: Vec<bool> = batch.iter().map(|w| self.can_keep(w)).collect();
            let missing: Vec<&Wanted> = batch
                .iter()
                .zip(&keep)
                .filter(|(_, kept)| !**kept)
                .map(|(w, _)| w)
                .collect();
            let mut downloaded = download_all(store, &missing, retry)?.into_iter();
            for (w, kept) in batch.iter().zip(keep) {
                let outcome = if kept {
                    Fetch::Kept
                } else {
                    let bytes = downloaded.next().expect("one download per missing object");
                    self.place(store, w, bytes)?
                };
                match outcome {
                    Fetch::Kept => report.kept += 1,
                    Fetch::Vanished => {}
                    Fetch::Downloaded { bytes, changed } => {
                        report.fetched += 1;
                        report.bytes += bytes;
                        report.changed += usize::from(changed);
                    }
                }
            }
        }
        let keys: HashSet<&str> = wanted.iter().map(|w| w.key.as_str()).collect();
        self.manifest
            .objects
            .retain(|key, _| keys.contains(key.as_str()));
        let keep: HashSet<&str> = self
            .manifest
            .objects
            .values()
            .flat_map(|held| held.files.iter().map(|f| f.path.as_str()))
            .collect();
        for (relative, path) in crate::layout::walk_files(&self.root, &|_, _| true)? {
            if keep.contains(relative.as_str()) {
                continue;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => report.removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot remove {}", path.display()))
                }
            }
        }
        Ok(report)
    }

    /// Saves the manifest (atomically), so that the next process finds what this one
    /// holds: first the whole file system of the copy is synced once (`syncfs(2)`), so
    /// every file the manifest names is on disk before it is (the files were written
    /// unsynced: [`write_unsynced`]).
    pub fn save(&self) -> Result<()> {
        let bytes = serde_json::to_vec(&self.manifest).context("the manifest serializes")?;
        sync_file_system(&self.root)?;
        write_atomically(&self.manifest_path, &bytes)
    }
}

/// Objects a sync downloads at once, each on its own thread. A fresh copy of a long run is
/// thousands of small shard bundles, and one GET at a time is bound by the store's latency
/// (about 25–50 objects a second from a local s3s-fs; tens of milliseconds an object from a
/// cloud store).
const PARALLEL_DOWNLOADS: usize = store::parallel::READS_IN_FLIGHT;

/// The bytes of `wanted`: its pinned bytes, or read from the store (`None`: gone since it
/// was listed).
fn download(store: &dyn Store, wanted: &Wanted, retry: &Retry) -> Result<Option<Vec<u8>>> {
    match &wanted.place {
        Place::Pinned { bytes, .. } => Ok(Some(bytes.clone())),
        _ => match retry.run(|| store.get(&wanted.key)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        },
    }
}

/// [`download`]s every object of `wanted` on up to [`PARALLEL_DOWNLOADS`] threads; the
/// results in `wanted`'s order, or the first error.
fn download_all(
    store: &dyn Store,
    wanted: &[&Wanted],
    retry: &Retry,
) -> Result<Vec<Option<Vec<u8>>>> {
    store::parallel::map(wanted, PARALLEL_DOWNLOADS, |w| download(store, w, retry))
        .into_iter()
        .collect()
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename (a reader sees
/// the whole old file or the whole new one), without syncing either. One fsync per file
/// made a fresh copy of a long run (thousands of shard bundles, each a shard and its game
/// records) take minutes; [`LocalCopy::save`] syncs them all at once before the manifest
/// that names them. A crash before that leaves files the old manifest does not name (or
/// names with another inode): the next sync downloads them again.
fn write_unsynced(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("cannot write {}: {e}", path.display())
    })
}

/// Syncs the file system that holds `dir` (`syncfs(2)`): one call for every file written
/// unsynced under it.
fn sync_file_system(dir: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let handle =
        std::fs::File::open(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    // SAFETY: `syncfs` only reads the descriptor, which `handle` keeps open.
    if unsafe { libc::syncfs(handle.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("cannot sync the file system of {}", dir.display()));
    }
    Ok(())
}

/// The newest trainer epoch below `below` (any epoch when `None`) that has saved its
/// files (`loop/eE/state.json`), found from the epoch claims (`epochs/`).
pub fn newest_loop_epoch(
    store: &dyn Store,
    below: Option<u64>,
    retry: &Retry,
) -> Result<Option<u64>> {
    let mut epochs: Vec<u64> = commit::claimed_epochs(store, retry)?
        .into_iter()
        .filter(|e| below.is_none_or(|b| *e < b))
        .collect();
    epochs.sort_unstable_by(|a, b| b.cmp(a));
    for epoch in epochs {
        let state = Key::new(format!("{}/state.json", loop_folder(epoch)))?;
        if retry.run(|| store.size(&state))?.is_some() {
            return Ok(Some(epoch));
        }
    }
    Ok(None)
}

/// Which of a trainer's files a copy takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopFiles {
    /// All (a trainer's working copy).
    All,
    /// All but `checkpoints/` (the trainer's resume state, which no reader needs).
    ForReaders,
}

/// The files of epoch `epoch`'s trainer (`loop/eE/…`), placed at their run-directory paths.
///
/// Which keep their bytes for good ([`Reuse::SameKeyAndSize`]): within one epoch's folder
/// the loop writes each file of `models/`, `candidates/`, `shards/` and `games/` once (a
/// deterministic run that replays a generation writes the same bytes again), and a match
/// folder `matches/M/` is final once its completion file (`done.json`, a gate's
/// `decision.json`) is listed. The rest (`state.json`, `metrics.jsonl`, `ratings.csv`,
/// `config.toml`, the checkpoint, an unfinished match) is downloaded at every sync. One
/// case escapes the rule: a finished match that a resumed trainer plays again (its
/// settings were changed with `--set`) clears it and writes it anew; a copy that never
/// lists it unfinished keeps its earlier record files where their sizes are unchanged.
///
/// That trainer may still be alive (a zombie, the first of two trainers, or the live run a
/// view follows) and mirroring. Its mirror uploads a phase's files before the `state.json`
/// naming them, so `state.json` is read *before* the listing ([`Place::Pinned`]) and comes
/// last: the copy is one a crash of that trainer could have left, never a state naming a
/// model the copy lacks. A file listed and then removed by that trainer is left out
/// ([`Fetch::Vanished`]).
pub fn loop_files(
    store: &dyn Store,
    epoch: u64,
    which: LoopFiles,
    retry: &Retry,
) -> Result<Vec<Wanted>> {
    let folder = loop_folder(epoch);
    let state_key = Key::new(format!("{folder}/state.json"))?;
    let state = match retry.run(|| store.get(&state_key)) {
        Ok(bytes) => Some(bytes),
        Err(store::Error::NotFound { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let listed = retry.run(|| store.list(&folder))?;
    let relative = |l: &Listed| -> Option<String> {
        Some(
            l.key
                .as_str()
                .strip_prefix(&folder)?
                .strip_prefix('/')?
                .to_string(),
        )
    };
    let finished: HashSet<String> = listed
        .iter()
        .filter_map(relative)
        .filter_map(|path| {
            let rest = path.strip_prefix("matches/")?;
            let (name, file) = rest.split_once('/')?;
            (file == "done.json" || file == "decision.json").then(|| name.to_string())
        })
        .collect();
    let mut wanted = Vec::with_capacity(listed.len());
    for l in &listed {
        let Some(path) = relative(l) else { continue };
        if l.key == state_key {
            continue;
        }
        if which == LoopFiles::ForReaders && path.starts_with("checkpoints/") {
            continue;
        }
        let (top, rest) = path.split_once('/').unwrap_or((path.as_str(), ""));
        let lasting = match top {
            "models" | "candidates" | "shards" | "games" => !rest.is_empty(),
            "matches" => rest
                .split_once('/')
                .is_some_and(|(name, _)| finished.contains(name)),
            _ => false,
        };
        wanted.push(Wanted {
            key: l.key.clone(),
            size: Some(l.size),
            place: Place::File(path),
            reuse: if lasting {
                Reuse::SameKeyAndSize
            } else {
                Reuse::Never
            },
        });
    }
    if let Some(bytes) = state {
        wanted.push(Wanted {
            size: Some(bytes.len() as u64),
            key: state_key,
            place: Place::Pinned {
                path: "state.json".into(),
                bytes,
            },
            reuse: Reuse::Never,
        });
    }
    Ok(wanted)
}

/// Committed shard bundles (`shards/…`, create-only objects: their bytes never change) as
/// [`Wanted`] objects.
pub fn bundles(listed: impl IntoIterator<Item = Listed>) -> Vec<Wanted> {
    listed
        .into_iter()
        .map(|l| Wanted {
            key: l.key,
            size: Some(l.size),
            place: Place::Bundle,
            reuse: Reuse::SameKeyAndSize,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{bundle_bytes, Counting};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use store::MemoryStore;

    fn key(text: &str) -> Key {
        Key::new(text).unwrap()
    }

    fn wanted(store: &dyn Store) -> Vec<Wanted> {
        let mut w = loop_files(store, 1, LoopFiles::ForReaders, &Retry::immediately(1)).unwrap();
        w.extend(bundles(store.list("shards").unwrap()));
        w
    }

    #[test]
    fn a_sync_keeps_what_is_unchanged_refreshes_what_was_overwritten_and_never_writes() {
        let counting = Arc::new(Counting::read_only());
        let memory = &counting.inner;
        let put = |k: &str, v: &[u8]| memory.put(&key(k), v).unwrap();
        put("epochs/00000001.json", b"{}");
        put("loop/e00000001/state.json", b"{\"generation\": 1}");
        put("loop/e00000001/metrics.jsonl", b"{}\n");
        put("loop/e00000001/models/gen-0000.safetensors", b"model 0");
        put("loop/e00000001/checkpoints/latest.safetensors", b"trainer");
        put(
            "loop/e00000001/matches/rate-gen-0000-vs-0/results.jsonl",
            b"{}\n",
        );
        put(
            "loop/e00000001/matches/rate-gen-0000-vs-0/games/0.txt",
            b"game",
        );
        put("loop/e00000001/matches/rate-gen-0000-vs-0/done.json", b"{}");
        put(
            "shards/g00000000/w-00000000.shard",
            &bundle_bytes("ext-g0000-h-n001-1-2-00000"),
        );
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("view");
        let retry = Retry::immediately(1);
        let mut copy = LocalCopy::open(&root, counting.as_ref()).unwrap();
        let report = copy
            .sync(counting.as_ref(), &wanted(counting.as_ref()), &retry)
            .unwrap();
        copy.save().unwrap();
        assert_eq!(
            (report.fetched, report.kept, report.removed),
            (7, 0, 0),
            "{report}"
        );
        assert_eq!(
            std::fs::read(root.join("models/gen-0000.safetensors")).unwrap(),
            b"model 0"
        );
        assert!(
            !root.join("checkpoints").exists(),
            "readers take no checkpoint"
        );
        assert_eq!(
            std::fs::read(root.join("shards/joined-ext-g0000-h-n001-1-2-00000.shard")).unwrap(),
            b"samples"
        );
        assert_eq!(
            std::fs::read(root.join("games/joined-ext-g0000-h-n001-1-2-00000-000.txt")).unwrap(),
            b"1. a1-a2 *"
        );

        // Nothing changed: only the files that may be overwritten in place are read again,
        // and none is rewritten.
        let state_stamp = stamp(&root.join("state.json"));
        let gets = counting.gets();
        let mut copy = LocalCopy::open(&root, counting.as_ref()).unwrap();
        let report = copy
            .sync(counting.as_ref(), &wanted(counting.as_ref()), &retry)
            .unwrap();
        assert_eq!(
            (report.fetched, report.changed, report.kept),
            (2, 0, 5),
            "{report}"
        );
        assert_eq!(counting.gets() - gets, 2, "state.json and metrics.jsonl");
        assert_eq!(
            stamp(&root.join("state.json")),
            state_stamp,
            "not rewritten"
        );

        // Overwritten with the same size, grown, removed, added; a local file damaged.
        put("loop/e00000001/state.json", b"{\"generation\": 2}");
        put("loop/e00000001/metrics.jsonl", b"{}\n{}\n");
        memory
            .delete(&key("loop/e00000001/models/gen-0000.safetensors"))
            .unwrap();
        put("loop/e00000001/models/gen-0001.safetensors", b"model 1");
        std::fs::write(root.join("matches/rate-gen-0000-vs-0/games/0.txt"), b"gamf").unwrap();
        std::fs::write(root.join(".tmp.leftover"), b"x").unwrap();
        let report = copy
            .sync(counting.as_ref(), &wanted(counting.as_ref()), &retry)
            .unwrap();
        assert_eq!(
            (report.fetched, report.changed, report.kept, report.removed),
            (4, 4, 3, 2),
            "{report}"
        );
        assert_eq!(
            std::fs::read(root.join("state.json")).unwrap(),
            b"{\"generation\": 2}"
        );
        assert_eq!(
            std::fs::read(root.join("matches/rate-gen-0000-vs-0/games/0.txt")).unwrap(),
            b"game"
        );
        assert!(!root.join("models/gen-0000.safetensors").exists());
        assert!(!root.join(".tmp.leftover").exists());
        assert_eq!(counting.writes(), 0, "a sync never writes to the store");
    }

    #[test]
    fn an_unfinished_match_is_read_again_and_a_manifest_of_another_store_is_ignored() {
        let memory = MemoryStore::new();
        let folder = "loop/e00000003/matches/gate-0001";
        memory
            .put(&key(&format!("{folder}/games/0.txt")), b"g")
            .unwrap();
        let w = loop_files(&memory, 3, LoopFiles::All, &Retry::immediately(1)).unwrap();
        assert_eq!(w[0].reuse, Reuse::Never, "{w:?}");
        assert_eq!(
            w[0].place,
            Place::File("matches/gate-0001/games/0.txt".into())
        );
        memory
            .put(&key(&format!("{folder}/decision.json")), b"{}")
            .unwrap();
        let w = loop_files(&memory, 3, LoopFiles::All, &Retry::immediately(1)).unwrap();
        assert!(w.iter().all(|w| w.reuse == Reuse::SameKeyAndSize), "{w:?}");

        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("copy");
        let mut copy = LocalCopy::open(&root, &memory).unwrap();
        copy.sync(&memory, &w, &Retry::immediately(1)).unwrap();
        copy.save().unwrap();
        let counting = Counting::read_only();
        counting.inner.put(&w[0].key, b"{}").unwrap();
        counting.inner.put(&w[1].key, b"g").unwrap();
        let mut copy = LocalCopy::open(&root, &counting).unwrap();
        let report = copy.sync(&counting, &w, &Retry::immediately(1)).unwrap();
        assert_eq!(
            report.fetched, 2,
            "another store's manifest counts as empty: {report}"
        );
    }

    #[test]
    fn the_newest_epoch_with_files_is_found_below_a_bound() {
        let memory = MemoryStore::new();
        let retry = Retry::immediately(1);
        assert_eq!(newest_loop_epoch(&memory, None, &retry).unwrap(), None);
        for e in 1..=3 {
            memory.put(&commit::epoch_key(e), b"{}").unwrap();
        }
        for e in [1, 2] {
            memory
                .put(&key(&format!("{}/state.json", loop_folder(e))), b"{}")
                .unwrap();
        }
        assert_eq!(newest_loop_epoch(&memory, None, &retry).unwrap(), Some(2));
        assert_eq!(
            newest_loop_epoch(&memory, Some(2), &retry).unwrap(),
            Some(1)
        );
        assert_eq!(newest_loop_epoch(&memory, Some(1), &retry).unwrap(), None);
    }

    /// A memory store that runs `after_get` after each read, with the key read (before
    /// the read's bytes are returned): the races and waits of the tests below.
    struct AfterGet {
        inner: MemoryStore,
        after_get: Box<Hook>,
    }

    /// What [`AfterGet`] runs after each read: the store and the key read.
    type Hook = dyn Fn(&MemoryStore, &Key) + Send + Sync;

    impl AfterGet {
        fn new(after_get: impl Fn(&MemoryStore, &Key) + Send + Sync + 'static) -> AfterGet {
            AfterGet {
                inner: MemoryStore::default(),
                after_get: Box::new(after_get),
            }
        }
    }

    impl std::fmt::Debug for AfterGet {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("AfterGet")
        }
    }

    impl Store for AfterGet {
        fn describe(&self) -> String {
            "a memory store with a hook after each read".into()
        }
        fn get(&self, k: &Key) -> store::Result<Vec<u8>> {
            let bytes = self.inner.get(k)?;
            (self.after_get)(&self.inner, k);
            Ok(bytes)
        }
        fn put(&self, k: &Key, bytes: &[u8]) -> store::Result<()> {
            self.inner.put(k, bytes)
        }
        fn put_if_absent(&self, k: &Key, bytes: &[u8]) -> store::Result<()> {
            self.inner.put_if_absent(k, bytes)
        }
        fn list(&self, folder: &str) -> store::Result<Vec<Listed>> {
            self.inner.list(folder)
        }
        fn delete(&self, k: &Key) -> store::Result<()> {
            self.inner.delete(k)
        }
        fn size(&self, k: &Key) -> store::Result<Option<u64>> {
            self.inner.size(k)
        }
    }

    #[test]
    fn the_state_is_read_before_the_listing_and_written_last() {
        // The trainer mirrors its next phase (a new model, then the state naming it) right
        // after the first read of `state.json`: the race a copy of a live trainer's files
        // meets.
        let mirrored = std::sync::atomic::AtomicBool::new(false);
        let store = AfterGet::new(move |inner, k| {
            if k.as_str().ends_with("state.json") && !mirrored.swap(true, Ordering::SeqCst) {
                inner
                    .put(&key("loop/e00000001/models/gen-0002.safetensors"), b"m2")
                    .unwrap();
                inner
                    .put(&key("loop/e00000001/state.json"), b"{\"best\": 2}")
                    .unwrap();
            }
        });
        let put = |k: &str, v: &[u8]| store.inner.put(&key(k), v).unwrap();
        put("loop/e00000001/models/gen-0001.safetensors", b"m1");
        put("loop/e00000001/state.json", b"{\"best\": 1}");
        let retry = Retry::immediately(1);
        let w = loop_files(&store, 1, LoopFiles::All, &retry).unwrap();
        let last = w.last().unwrap();
        assert_eq!(
            last.place,
            Place::Pinned {
                path: "state.json".into(),
                bytes: b"{\"best\": 1}".to_vec()
            },
            "the state as read before the mirror, last: {w:?}"
        );
        assert_eq!(w.iter().filter(|w| w.key == last.key).count(), 1, "{w:?}");

        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("copy");
        let mut copy = LocalCopy::open(&root, &store).unwrap();
        copy.sync(&store, &w, &retry).unwrap();
        assert_eq!(
            std::fs::read(root.join("state.json")).unwrap(),
            b"{\"best\": 1}",
            "not downloaded again"
        );
        assert!(root.join("models/gen-0001.safetensors").is_file());
    }

    #[test]
    fn missing_objects_are_downloaded_several_at_once_and_placed_in_order() {
        // Each read waits (up to 5 s) until another read is in flight, until two have
        // overlapped once; the most reads in flight at once are recorded.
        #[derive(Default)]
        struct Overlap {
            in_flight: Mutex<usize>,
            changed: std::sync::Condvar,
            most: AtomicUsize,
        }
        let overlap = Arc::new(Overlap::default());
        let seen = overlap.clone();
        let store = AfterGet::new(move |_, _| {
            let mut n = seen.in_flight.lock().unwrap();
            *n += 1;
            seen.most.fetch_max(*n, Ordering::SeqCst);
            seen.changed.notify_all();
            let (mut n, _) = seen
                .changed
                .wait_timeout_while(n, std::time::Duration::from_secs(5), |n| {
                    *n < 2 && seen.most.load(Ordering::SeqCst) < 2
                })
                .unwrap();
            *n -= 1;
        });
        for g in 0..20 {
            let k = format!("loop/e00000001/models/gen-{g:04}.safetensors");
            store
                .inner
                .put(&key(&k), format!("model {g}").as_bytes())
                .unwrap();
        }
        store
            .inner
            .put(&key("loop/e00000001/state.json"), b"{}")
            .unwrap();
        let retry = Retry::immediately(1);
        let w = loop_files(&store.inner, 1, LoopFiles::All, &retry).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut copy = LocalCopy::open(&dir.path().join("copy"), &store).unwrap();
        let report = copy.sync(&store, &w, &retry).unwrap();
        assert_eq!((report.fetched, report.kept), (21, 0), "{report}");
        assert!(overlap.most.load(Ordering::SeqCst) >= 2, "reads overlapped");
        for g in 0..20 {
            let file = dir
                .path()
                .join(format!("copy/models/gen-{g:04}.safetensors"));
            assert_eq!(
                std::fs::read(file).unwrap(),
                format!("model {g}").as_bytes()
            );
        }
        assert_eq!(
            std::fs::read(dir.path().join("copy/state.json")).unwrap(),
            b"{}"
        );
    }
}
