//! `loazero run` when writes fail and when writers race. A full disk (a size-limited tmpfs
//! the test mounts), a file-size limit or a read-only file system stops the run with an
//! error naming the file and the cause, nothing committed is damaged, and once space is
//! back the same command ends like an undisturbed run; a disk that fails with EIO (a loop
//! device shrunk under its file system) stops it the same way. The loop and joined
//! `selfplay --dir` processes, all killed -9 and restarted at random, lose and duplicate
//! no game. The mounts need root, `mount`, `losetup` and `mkfs.ext4`: without them those
//! two tests say SKIPPED, and fail under CI ([`without_a_mount`]).

mod common;
use common::run_files::*;
use common::{bin, loazero, temp_dir, text, tiny_run_sets};

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` with its output discarded: whether it ran and exited 0.
fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the test may mount file systems (`LOAZERO_TEST_NO_MOUNT` unset).
fn may_mount() -> bool {
    std::env::var_os("LOAZERO_TEST_NO_MOUNT").is_none()
}

/// What a test that needs a mount does without one (`why`): with `LOAZERO_TEST_NO_MOUNT`
/// set (a deliberate opt-out) it says SKIPPED, except under CI; otherwise it follows
/// `common::skip_or_fail`: SKIPPED, but under CI (`CI` set), which runs as root with
/// `mount`, `losetup` and `mkfs.ext4` (`.ci/run` installs util-linux's `mount` and
/// e2fsprogs when missing), a failure, since a skip there would hide a broken test.
/// Under CI nothing skips: an opt-out there is a failure too.
fn without_a_mount(why: &str) {
    if !may_mount() && !common::under_ci() {
        common::say_skipped(&format!("{why} (LOAZERO_TEST_NO_MOUNT is set)"));
        return;
    }
    common::skip_or_fail(&format!(
        "{why}: run as root with mount, losetup and mkfs.ext4 (apt-get install mount \
         e2fsprogs), or set LOAZERO_TEST_NO_MOUNT to skip"
    ));
}

/// A tmpfs of a fixed size mounted on a directory; unmounted when dropped. Mounting needs
/// root (CAP_SYS_ADMIN): [`SmallDisk::mount`] says `None` where it is not allowed.
struct SmallDisk {
    dir: PathBuf,
}

impl SmallDisk {
    fn mount(dir: &Path, bytes: u64) -> Option<SmallDisk> {
        if !may_mount() {
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let ok = succeeds(
            Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
                .arg(dir),
        );
        ok.then(|| SmallDisk { dir: dir.into() })
    }

    fn ballast(&self) -> PathBuf {
        self.dir.join("ballast")
    }

    /// Bytes free to an unprivileged writer.
    fn free(&self) -> u64 {
        let path = std::ffi::CString::new(self.dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statvfs(3) fills the struct we hand it; the path is NUL-terminated.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(path.as_ptr(), &mut st) }, 0);
        st.f_bavail as u64 * st.f_frsize as u64
    }

    /// Fills the disk with a ballast file until about `slack` bytes are left.
    fn fill_leaving(&self, slack: u64) {
        self.empty();
        let fill = self.free().saturating_sub(slack);
        std::fs::write(self.ballast(), vec![0u8; fill as usize]).unwrap();
    }

    /// Removes the ballast: space is back.
    fn empty(&self) {
        let _ = std::fs::remove_file(self.ballast());
    }

    fn remount(&self, read_only: bool) {
        let mode = if read_only {
            "remount,ro"
        } else {
            "remount,rw"
        };
        let ok = succeeds(Command::new("mount").args(["-o", mode]).arg(&self.dir));
        assert!(ok, "mount -o {mode} {}", self.dir.display());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

fn run_args(dir: &Path) -> Vec<String> {
    common::run_args(dir, 3, &tiny_run_sets())
}

/// The run directory's subdirectory (or top-level file) that the error text names first,
/// e.g. `shards` for `…/run/shards/loop-g0001-….shard`.
fn named_part(text: &str, run: &Path) -> Option<String> {
    let prefix = format!("{}/", run.display());
    let at = text.find(&prefix)? + prefix.len();
    let rest = &text[at..];
    let end = rest
        .find(|c: char| c == '/' || c == ':' || c.is_whitespace())
        .unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

/// Checks what a failed start printed and that every artefact committed before is still
/// there, unchanged; records the new ones. Returns the part of the run the error named.
fn check_failed_start(
    out: &Output,
    run: &Path,
    cause: &str,
    committed: &mut BTreeMap<String, Vec<u8>>,
) -> String {
    let t = text(out);
    assert!(!out.status.success(), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    assert!(
        t.contains(cause),
        "the error gives the cause ({cause}): {t}"
    );
    let part = named_part(&t, run).unwrap_or_else(|| panic!("the error names no file: {t}"));
    eprintln!("{}", t.lines().last().unwrap_or(""));
    let now = artefacts(run);
    for (name, bytes) in committed.iter() {
        assert_eq!(
            now.get(name),
            Some(bytes),
            "{name} changed or vanished: {t}"
        );
    }
    committed.extend(now);
    part
}

/// A reference run on the ordinary disk.
fn reference(base: &Path) -> Counts {
    let straight = base.join("straight");
    let out = loazero(&run_args(&straight));
    assert!(out.status.success(), "{}", text(&out));
    counts(&straight)
}

/// The disk fills up again and again at random moments of the run (the loop started each
/// time with a few dozen KB free), once the file system is read-only; after
/// each stop the space is given back and the same command goes on. The run ends with the
/// counts of an undisturbed one, having failed on several kinds of files.
#[test]
fn a_full_disk_stops_the_run_naming_the_file_and_it_resumes_to_the_same_counts() {
    let tmp = temp_dir();
    let base = tmp.path().to_path_buf();
    let Some(disk) = SmallDisk::mount(&base.join("disk"), 8 << 20) else {
        // The file-size limit, the nearest thing without a mount, has a test of its own.
        without_a_mount("cannot mount a tmpfs here (not root?)");
        return;
    };
    let reference = reference(&base);
    let run = disk.dir.join("run");
    let mut committed = BTreeMap::new();

    // Full: each start gets 4–68 KB, a fraction of what the rest of the run writes.
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut parts = BTreeSet::new();
    let mut stops = 0;
    let mut finished = false;
    for _ in 0..60 {
        disk.fill_leaving((4 << 10) + next(&mut seed) % (64 << 10));
        let out = loazero(&run_args(&run));
        disk.empty();
        if out.status.success() {
            finished = true;
            break;
        }
        parts.insert(check_failed_start(
            &out,
            &run,
            "No space left on device",
            &mut committed,
        ));
        stops += 1;
        if stops == 2 {
            // A read-only file system (Linux refuses to remount one read-only while a
            // process writes to it, so between starts): the resume stops at its first write.
            disk.remount(true);
            let out = loazero(&run_args(&run));
            disk.remount(false);
            let part = check_failed_start(&out, &run, "Read-only file system", &mut committed);
            eprintln!("read-only: stopped at a write into {part}");
        }
    }
    eprintln!("{stops} stops on a full disk, at writes into {parts:?}");
    if !finished {
        let out = loazero(&run_args(&run));
        assert!(out.status.success(), "{}", text(&out));
    }
    assert!(stops >= 5, "too few stops on a full disk: {stops}");
    assert!(
        parts.len() >= 3,
        "the disk filled at too few kinds of files: {parts:?}"
    );
    assert_eq!(counts(&run), reference, "after {stops} full-disk stops");
    for (name, bytes) in &committed {
        assert_eq!(
            std::fs::read(run.join(name)).ok().as_ref(),
            Some(bytes),
            "{name}"
        );
    }
}

/// Runs `loazero ARGS` with files limited to `limit` bytes (RLIMIT_FSIZE; SIGXFSZ ignored, so
/// that a write past the limit fails with EFBIG instead of killing the process).
fn loazero_with_file_size_limit(args: &[String], limit: u64) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    // SAFETY: only async-signal-safe calls (setrlimit, signal) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: libc::RLIM_INFINITY,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// Without a small disk: each start may write files of at most a few KB, so it stops at
/// the first bigger file, naming it; then the limit goes and the run ends as an undisturbed
/// one.
fn file_size_limits_stop_the_run_and_it_resumes(base: &Path, reference: &Counts) {
    let run = base.join("limited");
    let mut committed = BTreeMap::new();
    let mut parts = BTreeSet::new();
    for limit in [1 << 10, 3 << 10, 6 << 10, 12 << 10, 20 << 10] {
        let out = loazero_with_file_size_limit(&run_args(&run), limit);
        if out.status.success() {
            break;
        }
        parts.insert(check_failed_start(
            &out,
            &run,
            "File too large",
            &mut committed,
        ));
    }
    eprintln!("file-size limits stopped the run at writes into {parts:?}");
    assert!(!parts.is_empty());
    let out = loazero(&run_args(&run));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(&counts(&run), reference);
}

/// A file-size limit (RLIMIT_FSIZE, no mount needed) stops the run like a full disk.
#[test]
fn file_size_limits_stop_the_run_naming_the_file_and_it_resumes() {
    let tmp = temp_dir();
    let base = tmp.path().to_path_buf();
    let reference = reference(&base);
    file_size_limits_stop_the_run_and_it_resumes(&base, &reference);
}

/// An ext4 file system on a loop device over a sparse 64 MiB file, mounted on a directory;
/// [`FailingDisk::fail_beyond_written`] then shrinks the device under it, so that writes
/// to blocks past what is written so far fail with EIO from the block layer (a disk going
/// bad, not a mock). Unmounted and detached when dropped. Needs root, `losetup`, loop
/// devices and `mkfs.ext4`: [`FailingDisk::mount`] says `None` where any is missing.
struct FailingDisk {
    image: PathBuf,
    device: String,
    dir: PathBuf,
}

impl FailingDisk {
    fn mount(image: &Path, dir: &Path) -> Option<FailingDisk> {
        if !may_mount() {
            return None;
        }
        std::fs::File::create(image)
            .and_then(|f| f.set_len(64 << 20))
            .ok()?;
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(image)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || device.is_empty() {
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let disk = FailingDisk {
            image: image.into(),
            device,
            dir: dir.into(),
        };
        // No superblock backups (they would sit at the far end of the device) and every
        // table written now: past the files, nothing on the device is written later but
        // new data.
        let made = succeeds(Command::new("mkfs.ext4").args([
            "-q",
            "-F",
            "-b",
            "4096",
            "-O",
            "sparse_super2",
            "-E",
            "num_backup_sb=0,lazy_itable_init=0,lazy_journal_init=0",
            &disk.device,
        ]));
        let mounted = made && succeeds(Command::new("mount").arg(&disk.device).arg(dir));
        mounted.then_some(disk)
    }

    /// Shrinks the device to the end of the image's last written extent (mkfs's wipe of
    /// the image's final MiB aside) and fills what is free below: what is on disk stays
    /// readable, writes of new data fail.
    fn fail_beyond_written(&self) {
        // Mounted again, the file system holds no block preallocated in memory (unwritten
        // blocks that new files would take below the cut). It cannot be mounted again
        // once the device is smaller than it.
        let remounted = succeeds(Command::new("umount").arg(&self.dir))
            && succeeds(Command::new("mount").arg(&self.device).arg(&self.dir));
        assert!(remounted, "mount {} again", self.device);
        // SAFETY: sync(2) takes no arguments and cannot fail.
        unsafe { libc::sync() };
        let size = std::fs::metadata(&self.image).unwrap().len();
        let end = written_end(&self.image, size - (1 << 20)).next_multiple_of(4096);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&self.image)
            .and_then(|f| f.set_len(end))
            .unwrap();
        let ok = succeeds(Command::new("losetup").args(["-c", &self.device]));
        assert!(ok, "losetup -c {}", self.device);
        // The free blocks left below the cut (files deleted or replaced since) go to
        // ballast, as one file written 64 KiB at a time, then as small files (allocated
        // from another pool), each until a write fails: from then on every new block is
        // past the end.
        let fill = |path: &Path, chunk: usize, times: usize| -> usize {
            use std::io::Write;
            let mut f = std::fs::File::create(path).unwrap();
            let mut good = 0;
            while good < times {
                if f.write_all(&vec![7u8; chunk])
                    .and_then(|_| f.sync_all())
                    .is_err()
                {
                    break;
                }
                good += 1;
            }
            f.set_len((good * chunk) as u64).unwrap();
            good
        };
        let ballast = self.dir.join("ballast");
        std::fs::create_dir_all(&ballast).unwrap();
        fill(&ballast.join("big"), 64 << 10, 1024);
        for k in 0..4096 {
            if fill(&ballast.join(k.to_string()), 8 << 10, 1) == 0 {
                break;
            }
        }
        // Later reads of committed files come from the device, not the page cache.
        let _ = std::fs::write("/proc/sys/vm/drop_caches", "3");
    }
}

impl Drop for FailingDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// The end of the last data extent of the sparse file `path` that starts below `below`
/// (SEEK_DATA / SEEK_HOLE).
fn written_end(path: &Path, below: u64) -> u64 {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let (mut at, mut end) = (0i64, 0u64);
    loop {
        // SAFETY: lseek(2) on a descriptor `f` keeps open; errors are returned, not UB.
        let data = unsafe { libc::lseek(f.as_raw_fd(), at, libc::SEEK_DATA) };
        if data < 0 || data as u64 >= below {
            return end;
        }
        let hole = unsafe { libc::lseek(f.as_raw_fd(), data, libc::SEEK_HOLE) };
        assert!(hole > data, "SEEK_HOLE on {}", path.display());
        end = hole as u64;
        at = hole;
    }
}

/// A disk that goes bad under a run (writes past what is written fail with EIO): the run
/// stops with an error naming the file and "Input/output error", without a panic, and what
/// it committed before is still there, unchanged, read back from the device. (It stops at
/// its first write, the run config: ext4 takes new files' blocks from a fresh
/// preallocated range, past the end, even when a few blocks below are free.)
#[test]
fn a_failing_disk_stops_the_run_naming_the_file() {
    let tmp = temp_dir();
    let base = tmp.path().to_path_buf();
    let Some(disk) = FailingDisk::mount(&base.join("disk.img"), &base.join("disk")) else {
        without_a_mount("cannot make a loop device here (not root, or no losetup / mkfs.ext4)");
        return;
    };
    let run = disk.dir.join("run");
    let first = loazero(&common::run_args(&run, 1, &tiny_run_sets()));
    assert!(first.status.success(), "{}", text(&first));
    let mut committed = artefacts(&run);
    disk.fail_beyond_written();
    let out = loazero(&run_args(&run));
    let part = check_failed_start(&out, &run, "Input/output error", &mut committed);
    eprintln!("input/output error: stopped at a write into {part}");
}

/// Every shard under `dir/shards` with its stem and samples; panics naming a shard that
/// does not read whole.
fn read_every_shard(dir: &Path) -> Vec<(String, usize)> {
    names(&dir.join("shards"))
        .into_iter()
        .filter(|n| n.ends_with(".shard") && !n.starts_with('.'))
        .filter_map(|n| {
            let path = dir.join("shards").join(&n);
            match selfplay::read_shard(&path) {
                Ok(samples) => Some((n.trim_end_matches(".shard").to_string(), samples.len())),
                // Listed, then replaced or removed: not a torn read.
                Err(_) if !path.exists() => None,
                Err(e) => panic!("{n} is not whole: {e}"),
            }
        })
        .collect()
}

/// A joined self-play process writing into `dir`.
fn joiner(dir: &Path) -> Child {
    Command::new(bin())
        .args(["selfplay", "--dir"])
        .arg(dir)
        .args(["--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The loop and three joined `selfplay --dir` processes in one run directory; the loop is
/// killed -9 and restarted 20 times at random moments, and so are the joiners, while the
/// test reads every shard again and again. Then the joiners stop and the loop finishes one
/// more generation alone. Every committed game (a shard and its records) is in exactly
/// one shard with exactly its records, every shard reads whole at every moment, each
/// generation of the loop has exactly its games, the replay window of the last generation
/// holds every shard's samples, and `state.json` agrees with the models on disk.
#[test]
fn racing_writers_killed_at_random_lose_and_duplicate_nothing() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let mut sets = tiny_run_sets();
    sets.push("train.window_positions=10000000".into());
    let args = |generations: u32| common::run_args(&dir, generations, &sets);
    // The first generation, so that joiners have a model to play.
    let out = loazero(&args(1));
    assert!(out.status.success(), "{}", text(&out));

    let mut seed = 0x51_7cc1_b727_220a_u64;
    let mut joiners: Vec<Child> = (0..3).map(|_| joiner(&dir)).collect();
    let (mut loop_kills, mut joiner_kills, mut reads) = (0, 0, 0);
    let started = Instant::now();
    while loop_kills < 20 {
        let mut run = Command::new(bin())
            .args(args(1000))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lifetime = Duration::from_millis(200 + next(&mut seed) % 2500);
        let t = Instant::now();
        while t.elapsed() < lifetime {
            std::thread::sleep(Duration::from_millis(50 + next(&mut seed) % 150));
            read_every_shard(&dir);
            reads += 1;
            if next(&mut seed).is_multiple_of(4) {
                let k = (next(&mut seed) % 3) as usize;
                joiners[k].kill().unwrap();
                joiners[k].wait().unwrap();
                joiners[k] = joiner(&dir);
                joiner_kills += 1;
            }
        }
        assert!(
            run.try_wait().unwrap().is_none(),
            "the loop ended by itself"
        );
        run.kill().unwrap();
        run.wait().unwrap();
        loop_kills += 1;
    }
    for j in &mut joiners {
        j.kill().unwrap();
        j.wait().unwrap();
    }
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    let last = state["generation"].as_u64().unwrap() as u32 + 1;
    let out = loazero(&args(last));
    assert!(out.status.success(), "{}", text(&out));
    eprintln!(
        "{loop_kills} loop kills and {joiner_kills} joiner kills in {:.1} s, {reads} reads of \
         every shard; the loop then finished generation {last}",
        started.elapsed().as_secs_f64()
    );

    // Shards and records: each committed game is one record of one shard.
    let shards = read_every_shard(&dir);
    let records: BTreeSet<String> = names(&dir.join("games"))
        .into_iter()
        .filter(|n| n.ends_with(".txt") && !n.starts_with('.'))
        .collect();
    let mut committed = BTreeSet::new();
    let (mut loop_games, mut ext_games) = (BTreeMap::<u32, u64>::new(), 0);
    for (stem, samples) in &shards {
        assert!(*samples > 0, "{stem} is empty");
        let k = games_in_shard_name(&format!("{stem}.shard"));
        for i in 0..k {
            let record = format!("{stem}-{i:03}.txt");
            assert!(
                records.contains(&record),
                "{record} of a committed shard is missing"
            );
            committed.insert(record);
        }
        assert!(
            !records.contains(&format!("{stem}-{k:03}.txt")),
            "{stem} has more records than games"
        );
        if let Some(g) = stem.strip_prefix("loop-g") {
            *loop_games.entry(g[..4].parse().unwrap()).or_default() += k;
        } else {
            assert!(stem.starts_with("ext-"), "{stem}");
            ext_games += k;
        }
    }
    // No records without a shard and no temp files: the loop's restart removed what
    // killed writers (itself and the joiners) left.
    let orphans: Vec<&String> = records.difference(&committed).collect();
    assert!(orphans.is_empty(), "{orphans:?}");
    assert_eq!(counts(&dir).temp_files, 0, "temp files left");
    assert!(ext_games > 0);
    let expected: BTreeMap<u32, u64> = (1..=last).map(|g| (g, 6)).collect();
    assert_eq!(loop_games, expected, "games of the loop per generation");

    // The window of the last generation holds every shard.
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    let window = metrics
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("whole metrics lines"))
        .filter(|v| v["kind"] == "generation" && v["generation"] == last)
        .map(|v| v["window"].as_u64().unwrap())
        .next_back()
        .expect("a record of the last generation");
    let samples: usize = shards.iter().map(|(_, n)| n).sum();
    assert_eq!(window as usize, samples, "the window is every shard");

    // state.json agrees with the files: every generation promoted (no gate), rated ones
    // recorded, nothing half-written left.
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(
        state["generation"],
        last + 1,
        "the next generation is the one to play"
    );
    assert_eq!(state["best"], last);
    let models: Vec<String> = (0..=last)
        .map(|g| format!("gen-{g:04}.safetensors"))
        .collect();
    assert_eq!(names(&dir.join("models")), models);
    let c = counts(&dir);
    assert_eq!(c.generation_records, (1..=last as u64).collect::<Vec<_>>());
    assert_eq!(c.loop_games, 6 * last as u64);
    assert_eq!(c.train_step_in_metrics, 6 * last as u64);
}
