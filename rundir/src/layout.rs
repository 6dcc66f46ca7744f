//! [`RunDir`]: where everything of a run lives, the exclusive lock on it, and the clean-up
//! of what a crash can leave behind.
//!
//! ```text
//! RUN_DIR/
//!   config.toml            the config the run uses (every key)
//!   state.json             the loop's position: generation, phase, best model, timers
//!   lock                   held (flock) by the running `loazero run`
//!   shards/                self-play training data: loop-gNNNN-nKKK-….shard (the loop,
//!                          K games each), ext-gNNNN-….shard (joined `loazero selfplay`)
//!   games/                 one text record per self-play game: <shard name>-NNN.txt
//!   models/gen-NNNN.safetensors      every promoted model (gen-0000: the initial net)
//!   candidates/gen-NNNN.safetensors  every trained candidate, promoted or not
//!   checkpoints/latest.safetensors   the trainer (weights, optimizer, RNG, step)
//!   matches/gate-NNNN/     the gate match of generation NNNN (results.jsonl, games/,
//!                          decision.json once decided)
//!   matches/rate-gen-NNNN-vs-K/      a rated model against anchor K (done.json once complete)
//!   matches/anchors-K/     anchor K against anchor K+1 (done.json once complete)
//!   ratings.csv            the latest Bradley–Terry table (random = 0)
//!   metrics.jsonl          train / generation / rating / stop records, one JSON object a line
//!   plots/                 `loazero plot RUN_DIR`
//! ```
//!
//! Every file is written atomically (temp file, fsync, rename) except the two append-only
//! logs (`metrics.jsonl`, a match's `results.jsonl`), whose torn last line is cut off on
//! restart ([`truncate_torn_line`]) or whose unfinished match is replayed.

use anyhow::{bail, Context, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The file layout of a run directory. Plain paths; creates nothing by itself.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
}

/// Name of the model of generation `g` (`gen-0003`).
pub fn model_name(generation: u32) -> String {
    format!("gen-{generation:04}")
}

/// The generation of a model name (`gen-0003` → 3).
pub fn generation_of(name: &str) -> Option<u32> {
    name.strip_prefix("gen-")?.parse().ok()
}

/// Name of the learned evaluation of learned generation `k` (`nnue-0002`).
pub fn learned_name(k: u32) -> String {
    format!("nnue-{k:04}")
}

/// The learned generation of a learned evaluation's name (`nnue-0002` → 2).
pub fn learned_generation_of(name: &str) -> Option<u32> {
    name.strip_prefix("nnue-")?.parse().ok()
}

impl RunDir {
    /// The layout under `root`.
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }
    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The saved config.
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    /// The loop state.
    pub fn state(&self) -> PathBuf {
        self.root.join("state.json")
    }
    /// Self-play shards.
    pub fn shards(&self) -> PathBuf {
        self.root.join("shards")
    }
    /// Self-play game records.
    pub fn games(&self) -> PathBuf {
        self.root.join("games")
    }
    /// Promoted models.
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
    /// The promoted model of generation `g`.
    pub fn model(&self, generation: u32) -> PathBuf {
        self.models()
            .join(format!("{}.safetensors", model_name(generation)))
    }
    /// Trained candidates.
    pub fn candidates(&self) -> PathBuf {
        self.root.join("candidates")
    }
    /// The candidate of generation `g`.
    pub fn candidate(&self, generation: u32) -> PathBuf {
        self.candidates()
            .join(format!("{}.safetensors", model_name(generation)))
    }
    /// The promoted learned evaluation of learned generation `k`.
    pub fn learned_model(&self, k: u32) -> PathBuf {
        self.models()
            .join(format!("{}.safetensors", learned_name(k)))
    }
    /// The trained learned evaluation of learned generation `k`, promoted or not.
    pub fn learned_candidate(&self, k: u32) -> PathBuf {
        self.candidates()
            .join(format!("{}.safetensors", learned_name(k)))
    }
    /// Trainer checkpoints.
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }
    /// The trainer checkpoint.
    pub fn checkpoint(&self) -> PathBuf {
        self.checkpoints().join("latest.safetensors")
    }
    /// Gate and rating matches.
    pub fn matches(&self) -> PathBuf {
        self.root.join("matches")
    }
    /// The gate match of generation `g`.
    pub fn gate_match(&self, generation: u32) -> PathBuf {
        self.matches().join(format!("gate-{generation:04}"))
    }
    /// The rating match of the model of generation `g` against anchor `k`.
    pub fn rating_match(&self, generation: u32, anchor: usize) -> PathBuf {
        self.matches()
            .join(format!("rate-{}-vs-{anchor}", model_name(generation)))
    }
    /// The promotion match of learned generation `k` against the best before it.
    pub fn learned_promotion_match(&self, k: u32) -> PathBuf {
        self.matches().join(format!("promote-{}", learned_name(k)))
    }
    /// The rating match of learned generation `k` against anchor `anchor`.
    pub fn learned_rating_match(&self, k: u32, anchor: usize) -> PathBuf {
        self.matches()
            .join(format!("rate-{}-vs-{anchor}", learned_name(k)))
    }
    /// The match of anchor `k` against anchor `k + 1`.
    pub fn anchor_match(&self, anchor: usize) -> PathBuf {
        self.matches().join(format!("anchors-{anchor}"))
    }
    /// The ratings table.
    pub fn ratings_csv(&self) -> PathBuf {
        self.root.join("ratings.csv")
    }
    /// The metrics log.
    pub fn metrics(&self) -> PathBuf {
        self.root.join("metrics.jsonl")
    }

    /// Creates the directories of the layout.
    pub fn create(&self) -> Result<()> {
        for d in [
            self.root.clone(),
            self.shards(),
            self.games(),
            self.models(),
            self.candidates(),
            self.checkpoints(),
            self.matches(),
        ] {
            std::fs::create_dir_all(&d)
                .with_context(|| format!("cannot create {}", d.display()))?;
        }
        Ok(())
    }

    /// Takes the run's exclusive lock (released when the returned file is dropped or the
    /// process dies). Errors if another process holds it.
    pub fn lock(&self) -> Result<File> {
        let path = self.root.join("lock");
        match try_lock_file(&path)? {
            Some(file) => Ok(file),
            None => bail!(
                "{} is in use by another `loazero run` (lock {})",
                self.root.display(),
                path.display()
            ),
        }
    }

    /// Removes what a killed loop leaves behind: its temp files, and game records whose
    /// shard was never written (the records of a shard are written just before it); and
    /// what killed joined self-play processes of this host left ([`Self::clean_dead_joiners`]).
    /// Files of running joiners (`ext-…`) are left alone. Returns the number of files
    /// removed. Only the process holding the run's lock may call it.
    pub fn clean_after_crash(&self) -> Result<usize> {
        let mut removed = self.clean_dead_joiners()?;
        let is_loop_tmp = |name: &str| name.starts_with(".loop-") && name.contains(".tmp.");
        let is_any_tmp = |name: &str| name.starts_with('.') && name.contains(".tmp.");
        for (dir, only_loop) in [
            (self.shards(), true),
            (self.games(), true),
            (self.models(), false),
            (self.candidates(), false),
            (self.checkpoints(), false),
            (self.root.clone(), false),
        ] {
            for name in list_names(&dir)? {
                let tmp = if only_loop {
                    is_loop_tmp(&name)
                } else {
                    is_any_tmp(&name)
                };
                if tmp {
                    remove(&dir.join(&name))?;
                    removed += 1;
                }
            }
        }
        let shards: std::collections::HashSet<String> = list_names(&self.shards())?
            .into_iter()
            .filter_map(|n| n.strip_suffix(".shard").map(str::to_string))
            .collect();
        for name in list_names(&self.games())? {
            if !name.starts_with("loop-") {
                continue;
            }
            let Some(stem) = record_shard_stem(&name) else {
                continue;
            };
            if !shards.contains(stem) {
                remove(&self.games().join(&name))?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

impl RunDir {
    /// Removes the temp files and the shardless game records of joined `selfplay --dir`
    /// processes (`ext-…` names) that ran on this host and no longer run (the writer's pid
    /// is in every name): what a joiner killed between writing a shard's records and the
    /// shard leaves. Files of other hosts, of running processes, and of any process whose
    /// pid is alive again are kept. Safe while the loop and other joiners run. Returns the
    /// number of files removed.
    pub fn clean_dead_joiners(&self) -> Result<usize> {
        let host = selfplay::output::host_tag();
        let host = if host.is_empty() {
            "host".to_string()
        } else {
            host
        };
        let dead_here = |name: &str, pid: Option<u32>| {
            name.trim_start_matches('.').split('-').nth(2) == Some(host.as_str())
                && pid.is_some_and(|p| !process_runs(p))
        };
        let mut removed = 0;
        let shards: std::collections::HashSet<String> = list_names(&self.shards())?
            .into_iter()
            .filter_map(|n| n.strip_suffix(".shard").map(str::to_string))
            .collect();
        for dir in [self.shards(), self.games()] {
            for name in list_names(&dir)? {
                let stale = if name.starts_with(".ext-") {
                    dead_here(&name, temp_file_pid(&name))
                } else if name.starts_with("ext-") {
                    record_shard_stem(&name).is_some_and(|stem| {
                        !shards.contains(stem)
                            && dead_here(
                                &name,
                                stem.rsplit('-').nth(1).and_then(|p| p.parse().ok()),
                            )
                    })
                } else {
                    false
                };
                if stale {
                    remove(&dir.join(&name))?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }
}

/// The writer's pid in a temp file name `.{name}.tmp.{pid}.{n}…` (see
/// [`selfplay::data::write_atomically`]).
fn temp_file_pid(name: &str) -> Option<u32> {
    let (_, after) = name.rsplit_once(".tmp.")?;
    after.split('.').next()?.parse().ok()
}

/// Opens the lock file `path` (creating it) and takes its exclusive lock (`flock`) without
/// waiting: `None` when another process holds it. The lock is released when the returned
/// file is dropped or the process dies. Every lock of a run and of its store caches (the
/// run directory's, a trainer's, a worker's, a view's) is taken here or in [`lock_file`].
pub fn try_lock_file(path: &Path) -> Result<Option<File>> {
    let file = open_lock_file(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

/// [`try_lock_file`], waiting for the lock while another process holds it.
pub fn lock_file(path: &Path) -> Result<File> {
    let file = open_lock_file(path)?;
    file.lock()
        .with_context(|| format!("cannot lock {}", path.display()))?;
    Ok(file)
}

fn open_lock_file(path: &Path) -> Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// Whether a process with this pid runs on this host (or may: a pid we cannot signal
/// counts as running).
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// The shard a game record belongs to: `<stem>-NNN.txt` (or `.sgf`) → `<stem>`.
pub fn record_shard_stem(name: &str) -> Option<&str> {
    let base = name
        .strip_suffix(".txt")
        .or_else(|| name.strip_suffix(".sgf"))?;
    let (stem, k) = base.rsplit_once('-')?;
    k.chars().all(|c| c.is_ascii_digit()).then_some(stem)
}

/// File names in `dir` (none if it does not exist).
pub fn list_names(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    let mut out = Vec::new();
    for e in entries {
        let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
        out.push(e.file_name().to_string_lossy().into_owned());
    }
    out.sort();
    Ok(out)
}

/// Every regular file below `root` (links are neither followed nor listed), sorted by
/// name at each level, as (its path relative to `root` with `/` between folders, its
/// path): `keep(folder, name)` is asked of every entry with the relative folder it is in
/// (`""` at the root), and an entry it refuses is skipped (a folder, with all it holds).
pub fn walk_files(
    root: &Path,
    keep: &dyn Fn(&str, &str) -> bool,
) -> Result<Vec<(String, PathBuf)>> {
    fn walk(
        dir: &Path,
        relative: &str,
        keep: &dyn Fn(&str, &str) -> bool,
        out: &mut Vec<(String, PathBuf)>,
    ) -> Result<()> {
        for name in list_names(dir)? {
            if !keep(relative, &name) {
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
                walk(&path, &rel, keep, out)?;
            } else if kind.is_file() {
                out.push((rel, path));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, "", keep, &mut out)?;
    Ok(out)
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// Writes `bytes` to `path` atomically (temp file, fsync, rename, directory fsync).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    selfplay::data::write_atomically(path, bytes).map_err(|e| match e {
        selfplay::Error::Io { cause, .. } => {
            anyhow::anyhow!("cannot write {}: {cause}", path.display())
        }
        other => anyhow::anyhow!("cannot write {}: {other}", path.display()),
    })
}

/// Copies `from` to `to` atomically (the destination is complete or absent).
pub fn copy_atomically(from: &Path, to: &Path) -> Result<()> {
    let bytes = std::fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
    write_atomically(to, &bytes)
}

/// Cuts an append-only log back to its last complete line (a crash can leave half a
/// line); returns whether anything was cut. A missing file is fine.
pub fn truncate_torn_line(path: &Path) -> Result<bool> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(false);
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let f = File::options()
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    f.set_len(keep as u64)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot truncate {}", path.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(model_name(3), "gen-0003");
        assert_eq!(generation_of("gen-0003"), Some(3));
        assert_eq!(generation_of("random"), None);
        assert_eq!(
            record_shard_stem("loop-g0001-n004-1700-12-00003-017.txt"),
            Some("loop-g0001-n004-1700-12-00003")
        );
        assert_eq!(record_shard_stem("notes.md"), None);
    }

    #[test]
    fn crash_leftovers_are_removed_and_complete_files_kept() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        run.create().unwrap();
        std::fs::write(run.shards().join("loop-g0001-n002-5.shard"), b"x").unwrap();
        std::fs::write(run.shards().join(".loop-g0001-n002-6.shard.tmp.1.0"), b"x").unwrap();
        std::fs::write(run.shards().join(".ext-g0001-7.shard.tmp.1.0"), b"x").unwrap();
        std::fs::write(run.games().join("loop-g0001-n002-5-000.txt"), b"x").unwrap();
        std::fs::write(run.games().join("loop-g0001-n002-6-000.txt"), b"x").unwrap();
        std::fs::write(run.games().join("ext-g0001-9-000.txt"), b"x").unwrap();
        std::fs::write(run.models().join(".gen-0001.safetensors.tmp.3.1"), b"x").unwrap();
        assert_eq!(run.clean_after_crash().unwrap(), 3);
        let mut left = list_names(&run.shards()).unwrap();
        left.extend(list_names(&run.games()).unwrap());
        left.extend(list_names(&run.models()).unwrap());
        assert_eq!(
            left,
            [
                ".ext-g0001-7.shard.tmp.1.0",
                "loop-g0001-n002-5.shard",
                "ext-g0001-9-000.txt",
                "loop-g0001-n002-5-000.txt"
            ]
        );
    }

    #[test]
    fn leftovers_of_dead_joiners_of_this_host_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        run.create().unwrap();
        let host = selfplay::output::host_tag();
        let host = if host.is_empty() {
            "host".to_string()
        } else {
            host
        };
        let me = std::process::id();
        // A pid that runs no process: past the kernel's pid limit.
        let dead = 4_194_305;
        let names = [
            // a dead joiner's committed shard and its record: kept
            (
                run.shards(),
                format!("ext-g0001-{host}-n001-17-{dead}-00000.shard"),
            ),
            (
                run.games(),
                format!("ext-g0001-{host}-n001-17-{dead}-00000-000.txt"),
            ),
            // its records without a shard and its temp files: removed
            (
                run.games(),
                format!("ext-g0001-{host}-n002-18-{dead}-00001-000.txt"),
            ),
            (
                run.games(),
                format!("ext-g0001-{host}-n002-18-{dead}-00001-001.sgf"),
            ),
            (
                run.shards(),
                format!(".ext-g0001-{host}-n002-18-{dead}-00001.shard.tmp.{dead}.3.shard"),
            ),
            // a running joiner's (this process): kept
            (
                run.games(),
                format!("ext-g0001-{host}-n001-19-{me}-00000-000.txt"),
            ),
            (
                run.shards(),
                format!(".ext-g0001-{host}-n001-19-{me}-00000.shard.tmp.{me}.1.shard"),
            ),
            // another host's: kept
            (
                run.games(),
                format!("ext-g0001-zz{host}-n001-20-{dead}-00000-000.txt"),
            ),
        ];
        for (d, n) in &names {
            std::fs::write(d.join(n), b"x").unwrap();
        }
        assert_eq!(run.clean_dead_joiners().unwrap(), 3);
        for (k, (d, n)) in names.iter().enumerate() {
            assert_eq!(d.join(n).exists(), !(2..5).contains(&k), "{n}");
        }
    }

    #[test]
    fn torn_lines_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.jsonl");
        std::fs::write(&p, "{\"a\":1}\n{\"b\":").unwrap();
        assert!(truncate_torn_line(&p).unwrap());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n");
        assert!(!truncate_torn_line(&p).unwrap());
        assert!(!truncate_torn_line(&dir.path().join("none")).unwrap());
    }

    #[test]
    fn a_second_lock_fails_while_the_first_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        run.create().unwrap();
        let held = run.lock().unwrap();
        let e = run.lock().unwrap_err().to_string();
        assert!(e.contains("in use"), "{e}");
        drop(held);
        run.lock().unwrap();
    }
}
