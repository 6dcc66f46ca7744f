//! The small trained model that ships with loazero (`data/shipped`: its models, ratings,
//! metrics and README), compiled into the binaries, so that `serve` without a run shows it
//! and the engine's `level` command offers its rated players from any working directory
//! and from a binary built or installed anywhere: a checkout's `data/shipped` when the
//! working directory has one, else the embedded copy, unpacked
//! once into the user's cache (`$XDG_CACHE_HOME/loazero`, else `~/.cache/loazero`, else
//! the temporary directory) under a folder named by its contents.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The shipped run, relative to the repository root.
pub const SHIPPED_RUN: &str = "data/shipped";

/// Every file of `data/shipped`, relative to it, with its bytes (the test below checks
/// that the list is the folder's).
const FILES: &[(&str, &[u8])] = &[
    ("README.md", include_bytes!("../../data/shipped/README.md")),
    (
        "config.toml",
        include_bytes!("../../data/shipped/config.toml"),
    ),
    (
        "metrics.jsonl",
        include_bytes!("../../data/shipped/metrics.jsonl"),
    ),
    (
        "ratings.csv",
        include_bytes!("../../data/shipped/ratings.csv"),
    ),
    (
        "state.json",
        include_bytes!("../../data/shipped/state.json"),
    ),
    (
        "models/gen-0099.safetensors",
        include_bytes!("../../data/shipped/models/gen-0099.safetensors"),
    ),
    (
        "models/nnue-0001.safetensors",
        include_bytes!("../../data/shipped/models/nnue-0001.safetensors"),
    ),
];

/// The embedded shipped run, unpacked under the user's cache if it is not there yet: the
/// run directory (named `shipped`, the name the app and its player specs use).
pub fn unpacked() -> Result<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("loazero");
    unpack_into(&cache)
}

/// Unpacks the embedded run into `cache/shipped-HASH/shipped` (HASH: of the files' names
/// and bytes, so another build's copy is another folder) unless every file is already
/// there with its length; each file is written atomically, so a crash leaves a file whole
/// or absent and the next call completes the folder.
fn unpack_into(cache: &Path) -> Result<PathBuf> {
    let run = cache
        .join(format!("shipped-{:016x}", contents_hash()))
        .join("shipped");
    for (name, bytes) in FILES {
        let path = run.join(name);
        let whole = std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64);
        if !whole {
            let dir = path.parent().expect("a file under the run");
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            crate::layout::write_atomically(&path, bytes)?;
        }
    }
    Ok(run)
}

/// FNV-1a over the embedded files' names and bytes.
fn contents_hash() -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, bytes) in FILES {
        for b in name.bytes().chain([0]).chain(bytes.iter().copied()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository's `data/shipped` where the test runs (not where it was built).
    fn shipped_dir() -> PathBuf {
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run with cargo"))
            .join("..")
            .join(SHIPPED_RUN)
    }

    /// Every file of `data/shipped` is embedded, with its bytes, and nothing else: a file
    /// added to the shipped run without a line in [`FILES`] fails here.
    #[test]
    fn the_embedded_files_are_the_shipped_folder() {
        let root = shipped_dir();
        let mut on_disk = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    let name = path
                        .strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    on_disk.push(name);
                }
            }
        }
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(n, _)| n.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
        for (name, bytes) in FILES {
            assert_eq!(std::fs::read(root.join(name)).unwrap(), *bytes, "{name}");
        }
    }

    /// Unpacking writes every file once; a torn or missing file is written again, and a
    /// complete folder is left alone.
    #[test]
    fn unpacking_completes_the_folder() {
        let cache = tempfile::tempdir().unwrap();
        let run = unpack_into(cache.path()).unwrap();
        assert_eq!(run.file_name().unwrap(), "shipped");
        for (name, bytes) in FILES {
            assert_eq!(std::fs::read(run.join(name)).unwrap(), *bytes, "{name}");
        }
        let model = run.join("models/gen-0099.safetensors");
        std::fs::write(&model, b"torn").unwrap();
        std::fs::remove_file(run.join("state.json")).unwrap();
        assert_eq!(unpack_into(cache.path()).unwrap(), run);
        for (name, bytes) in FILES {
            assert_eq!(std::fs::read(run.join(name)).unwrap(), *bytes, "{name}");
        }
    }
}
