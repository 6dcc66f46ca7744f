//! `loazero run` when writes fail: a full disk (a size-limited tmpfs the test mounts when it
//! may, else a file-size limit), a read-only file system. The
//! run stops with an error naming the file and the cause, nothing committed is damaged,
//! and once space is back the same command ends like an undisturbed run.

mod common;
use common::run_files::*;
use common::{loazero, temp_dir, text, tiny_run_sets, BIN};

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A tmpfs of a fixed size mounted on a directory; unmounted when dropped. Mounting needs
/// root (CAP_SYS_ADMIN): [`SmallDisk::mount`] says `None` where it is not allowed.
struct SmallDisk {
    dir: PathBuf,
}

impl SmallDisk {
    fn mount(dir: &Path, bytes: u64) -> Option<SmallDisk> {
        if std::env::var_os("LOAZERO_TEST_NO_MOUNT").is_some() {
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
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
        let ok = Command::new("mount")
            .args(["-o", mode])
            .arg(&self.dir)
            .status()
            .is_ok_and(|s| s.success());
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
    let reference = reference(&base);
    let Some(disk) = SmallDisk::mount(&base.join("disk"), 8 << 20) else {
        eprintln!("cannot mount a tmpfs here (not root?): using a file-size limit instead");
        file_size_limits_stop_the_run_and_it_resumes(&base, &reference);
        return;
    };
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
    let mut cmd = Command::new(BIN);
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

/// The same check where a tmpfs can be mounted: the file-size limit path runs too.
#[test]
fn file_size_limits_stop_the_run_naming_the_file_and_it_resumes() {
    let tmp = temp_dir();
    let base = tmp.path().to_path_buf();
    let reference = reference(&base);
    file_size_limits_stop_the_run_and_it_resumes(&base, &reference);
}
