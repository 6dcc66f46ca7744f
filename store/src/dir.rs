//! [`DirStore`]: the local-directory back end. The key `a/b/c` is the file `ROOT/a/b/c`.
//!
//! Every write goes to a temporary file `.tmp.<name>.<random>` beside its target (key
//! segments never start with `.`, so temporary files are never keys and never listed),
//! is fsynced, and then becomes visible in one step:
//! * [`Store::put`]: `rename(2)` over the target (atomic replacement);
//! * [`Store::put_if_absent`]: `link(2)` to the target, which fails with `EEXIST` when the
//!   name exists, so exactly one of several racing creators succeeds, and the loser changes
//!   nothing. The temporary name is removed afterwards either way.
//!
//! The directory is fsynced after each change so that a crash of the machine keeps what a
//! write reported as done. A crash between writing and removing a temporary file leaves it
//! behind; such files are invisible to every operation, and [`DirStore::sweep_temporary`]
//! removes those older than a given age.

use crate::error::{Error, Result};
use crate::key::{check_folder, Key};
use crate::{Listed, Store};
use rand::Rng;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The prefix of temporary file names.
const TEMPORARY_PREFIX: &str = ".tmp.";

/// A store in a local directory (created when missing).
#[derive(Debug, Clone)]
pub struct DirStore {
    root: PathBuf,
}

impl DirStore {
    /// The store in `root`, creating the directory (and its parents) when missing.
    pub fn open(root: impl Into<PathBuf>) -> Result<DirStore> {
        let root = root.into();
        fs::create_dir_all(&root).map_err(|source| Error::Local {
            path: root.display().to_string(),
            source,
        })?;
        if !root.is_dir() {
            return Err(Error::InvalidStore {
                spec: root.display().to_string(),
                reason: "not a directory".into(),
            });
        }
        Ok(DirStore { root })
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Removes temporary files (left by crashed writers) last modified more than `min_age`
    /// ago, and returns how many. A live writer's temporary file is seconds old, so a
    /// `min_age` of minutes never removes one in use.
    pub fn sweep_temporary(&self, min_age: Duration) -> Result<usize> {
        let mut removed = 0;
        let mut folders = vec![self.root.clone()];
        while let Some(folder) = folders.pop() {
            for entry in fs::read_dir(&folder).map_err(|e| self.backend("sweep", &folder, e))? {
                let entry = entry.map_err(|e| self.backend("sweep", &folder, e))?;
                let path = entry.path();
                let kind = entry
                    .file_type()
                    .map_err(|e| self.backend("sweep", &path, e))?;
                let name = entry.file_name();
                if kind.is_dir() {
                    folders.push(path);
                } else if name.to_string_lossy().starts_with(TEMPORARY_PREFIX) {
                    let modified = entry
                        .metadata()
                        .and_then(|m| m.modified())
                        .map_err(|e| self.backend("sweep", &path, e))?;
                    let age = SystemTime::now()
                        .duration_since(modified)
                        .unwrap_or_default();
                    if age > min_age {
                        match fs::remove_file(&path) {
                            Ok(()) => removed += 1,
                            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                            Err(e) => return Err(self.backend("sweep", &path, e)),
                        }
                    }
                }
            }
        }
        Ok(removed)
    }

    fn path_of(&self, key: &Key) -> PathBuf {
        key.as_str()
            .split('/')
            .fold(self.root.clone(), |path, segment| path.join(segment))
    }

    fn backend(&self, operation: &'static str, what: &Path, error: io::Error) -> Error {
        Error::Backend {
            store: self.describe(),
            operation,
            key: what.display().to_string(),
            message: error.to_string(),
        }
    }

    /// Writes `bytes` to a fsynced temporary file beside `target` and returns its path.
    fn write_temporary(
        &self,
        operation: &'static str,
        target: &Path,
        bytes: &[u8],
    ) -> Result<PathBuf> {
        let folder = target.parent().expect("a key's path lies under the root");
        fs::create_dir_all(folder).map_err(|e| self.backend(operation, folder, e))?;
        let name = target
            .file_name()
            .expect("a key's path has a file name")
            .to_string_lossy();
        let suffix: u64 = rand::rng().random();
        let temporary = folder.join(format!("{TEMPORARY_PREFIX}{name}.{suffix:016x}"));
        let written = File::create_new(&temporary)
            .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()));
        if let Err(error) = written {
            let _ = fs::remove_file(&temporary);
            return Err(self.backend(operation, target, error));
        }
        Ok(temporary)
    }

    fn sync_folder(&self, operation: &'static str, target: &Path) -> Result<()> {
        let folder = target.parent().expect("a key's path lies under the root");
        File::open(folder)
            .and_then(|f| f.sync_all())
            .map_err(|e| self.backend(operation, folder, e))
    }
}

impl Store for DirStore {
    fn describe(&self) -> String {
        format!("directory {}", self.root.display())
    }

    fn get(&self, key: &Key) -> Result<Vec<u8>> {
        let path = self.path_of(key);
        fs::read(&path).map_err(|error| match error.kind() {
            // A file where the key expects a folder (key `a/b` with a file `a`) is absent too.
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => Error::NotFound {
                store: self.describe(),
                key: key.to_string(),
            },
            _ => self.backend("get", &path, error),
        })
    }

    fn put(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        let target = self.path_of(key);
        let temporary = self.write_temporary("put", &target, bytes)?;
        if let Err(error) = fs::rename(&temporary, &target) {
            let _ = fs::remove_file(&temporary);
            return Err(self.backend("put", &target, error));
        }
        self.sync_folder("put", &target)
    }

    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        let target = self.path_of(key);
        let temporary = self.write_temporary("create", &target, bytes)?;
        let linked = fs::hard_link(&temporary, &target);
        let _ = fs::remove_file(&temporary);
        match linked {
            Ok(()) => self.sync_folder("create", &target),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                Err(Error::AlreadyExists {
                    store: self.describe(),
                    key: key.to_string(),
                })
            }
            Err(error) => Err(self.backend("create", &target, error)),
        }
    }

    fn list(&self, folder: &str) -> Result<Vec<Listed>> {
        check_folder(folder)?;
        let start = if folder.is_empty() {
            self.root.clone()
        } else {
            self.path_of(&Key::new(folder)?)
        };
        let mut found = Vec::new();
        let mut pending = vec![start];
        while let Some(directory) = pending.pop() {
            let entries = match fs::read_dir(&directory) {
                Ok(entries) => entries,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    continue
                }
                Err(e) => return Err(self.backend("list", &directory, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| self.backend("list", &directory, e))?;
                let path = entry.path();
                let kind = entry
                    .file_type()
                    .map_err(|e| self.backend("list", &path, e))?;
                if kind.is_dir() {
                    pending.push(path);
                    continue;
                }
                let relative = path
                    .strip_prefix(&self.root)
                    .expect("listed under the root");
                let text: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                // Temporary files and foreign files whose names are not keys are not objects.
                let Ok(key) = Key::new(text.join("/")) else {
                    continue;
                };
                let size = match entry.metadata() {
                    Ok(metadata) => metadata.len(),
                    // Deleted between read_dir and stat: not listed.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(self.backend("list", &path, e)),
                };
                found.push(Listed { key, size });
            }
        }
        found.sort();
        Ok(found)
    }

    fn delete(&self, key: &Key) -> Result<()> {
        let path = self.path_of(key);
        match fs::remove_file(&path) {
            Ok(()) => self.sync_folder("delete", &path),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(self.backend("delete", &path, e)),
        }
    }

    fn size(&self, key: &Key) -> Result<Option<u64>> {
        let path = self.path_of(key);
        match fs::metadata(&path) {
            Ok(metadata) if metadata.is_file() => Ok(Some(metadata.len())),
            Ok(_) => Ok(None),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(self.backend("size", &path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_files_are_not_listed_and_old_ones_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let store = DirStore::open(dir.path()).unwrap();
        store.put(&Key::new("a/b").unwrap(), b"x").unwrap();
        fs::write(dir.path().join("a/.tmp.b.0123"), b"partial").unwrap();
        let keys: Vec<String> = store
            .list("")
            .unwrap()
            .into_iter()
            .map(|l| l.key.to_string())
            .collect();
        assert_eq!(keys, ["a/b"]);
        assert_eq!(store.sweep_temporary(Duration::from_secs(3600)).unwrap(), 0);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(store.sweep_temporary(Duration::from_millis(10)).unwrap(), 1);
        assert!(!dir.path().join("a/.tmp.b.0123").exists());
        assert_eq!(store.get(&Key::new("a/b").unwrap()).unwrap(), b"x");
    }

    #[test]
    fn a_key_below_a_file_is_absent_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = DirStore::open(dir.path()).unwrap();
        store.put(&Key::new("a").unwrap(), b"x").unwrap();
        let below = Key::new("a/b").unwrap();
        assert!(matches!(store.get(&below), Err(Error::NotFound { .. })));
        assert_eq!(store.size(&below).unwrap(), None);
        assert!(store.list("a").unwrap().is_empty());
        store.delete(&below).unwrap();
    }
}
