//! The one way loazero writes a file that must never be seen half-written: a temporary
//! file in the same directory, fsync, rename over the destination, fsync of the directory.
//!
//! Temporary names are `.{name}.tmp.{pid}.{n}` plus the destination's extension (so that
//! writers choosing an encoder by extension, such as PNG, still work): they start with a
//! dot and contain `.tmp.`, the pattern the run directory's crash clean-up removes.
//! All functions are thread-safe (the counter making names unique is atomic).

use crate::Error;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |cause| Error::Io {
        path: path.to_path_buf(),
        cause,
    }
}

/// The directory of `path` (`.` for a bare file name) and a fresh temporary path beside it.
fn temp_beside(path: &Path) -> Result<(PathBuf, PathBuf), Error> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let name = path
        .file_name()
        .ok_or_else(|| Error::Io {
            path: path.to_path_buf(),
            cause: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"),
        })?
        .to_string_lossy();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}.{unique}{ext}", std::process::id()));
    Ok((dir, tmp))
}

/// Writes `bytes` to `path` atomically. Readers see the old file, no file, or the complete
/// new one — never a partial one. On error the temporary file is removed and the error
/// names the file and the cause.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomically_with(path, |tmp| {
        let mut f = fs::File::create(tmp)?;
        f.write_all(bytes)
    })
}

/// Like [`write_atomically`] for writers that need a path rather than bytes (an image
/// encoder, a TorchScript `save`): `write` creates the temporary file it is given (and may
/// check it); then it is synced and renamed over `path`. An error from `write` removes
/// the temporary file and becomes an error naming `path`.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<(), Error> {
    let (dir, tmp) = temp_beside(path)?;
    let result = (|| {
        write(&tmp).map_err(io_err(path))?;
        fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(io_err(&tmp))?;
        fs::rename(&tmp, path).map_err(io_err(path))?;
        if let Ok(d) = fs::File::open(&dir) {
            // Best effort: some file systems cannot sync a directory.
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_whole_files_and_leave_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.png");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let mut seen = None;
        write_atomically_with(&path, |tmp| {
            seen = Some(tmp.to_path_buf());
            fs::write(tmp, b"three")
        })
        .unwrap();
        let tmp = seen.unwrap();
        let name = tmp.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name.starts_with(".a.png.tmp.") && name.ends_with(".png"),
            "{name}"
        );
        assert_eq!(fs::read(&path).unwrap(), b"three");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failing_writer_keeps_the_old_file_and_names_the_destination() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        write_atomically(&path, b"old").unwrap();
        let err = write_atomically_with(&path, |tmp| {
            fs::write(tmp, b"half")?;
            Err(std::io::Error::other("encoder failed"))
        })
        .unwrap_err();
        assert_eq!(err.path(), Some(path.as_path()));
        assert!(err.to_string().contains("encoder failed"), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = dir.path().join("no-such-dir").join("x");
        assert!(write_atomically(&missing, b"x").is_err());
    }
}
