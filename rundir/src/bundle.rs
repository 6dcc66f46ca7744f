//! A shard bundle: one self-play shard file together with the records of its games, as the
//! single object a worker commits to a store (`shards/gGGGGGGGG/WRITER-SSSSSSSS.shard`), so
//! that a game is in the store exactly when its shard is (no orphan records, nothing to
//! clean up after a crash).
//!
//! ```text
//! "loazero-shard-bundle 1\n"
//! then for each file (the shard first, then its records in name order):
//!   u32 little-endian: name length, the name (UTF-8, no '/'), u64 little-endian: size, the bytes
//! ```

use crate::layout::{list_names, record_shard_stem};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The first bytes of every bundle.
const MAGIC: &[u8] = b"loazero-shard-bundle 1\n";

/// The bundle of the shard file `shard` and its game records in `games` (files named
/// `<shard stem>-NNN.txt` / `.sgf`), with the paths of the files it holds (to remove once
/// the bundle is committed).
pub fn pack(shard: &Path, games: &Path) -> Result<(Vec<u8>, Vec<PathBuf>)> {
    let name = file_name(shard)?;
    let stem = name
        .strip_suffix(".shard")
        .with_context(|| format!("{} is not a .shard file", shard.display()))?;
    let mut files = vec![shard.to_path_buf()];
    for record in list_names(games)? {
        if !record.starts_with('.') && record_shard_stem(&record) == Some(stem) {
            files.push(games.join(record));
        }
    }
    let mut bytes = MAGIC.to_vec();
    for path in &files {
        let content =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let name = file_name(path)?;
        bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(&(content.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&content);
    }
    Ok((bytes, files))
}

/// The files of a bundle (name, bytes), the shard first; `what` names the bundle in errors.
pub fn unpack(bytes: &[u8], what: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let Some(mut rest) = bytes.strip_prefix(MAGIC) else {
        bail!("{what}: not a loazero shard bundle");
    };
    let mut files = Vec::new();
    let take = |n: usize, rest: &mut &[u8]| -> Result<Vec<u8>> {
        if rest.len() < n {
            bail!("{what}: truncated shard bundle");
        }
        let (head, tail) = rest.split_at(n);
        *rest = tail;
        Ok(head.to_vec())
    };
    while !rest.is_empty() {
        let len = u32::from_le_bytes(take(4, &mut rest)?.try_into().expect("4 bytes")) as usize;
        let name = String::from_utf8(take(len, &mut rest)?)
            .with_context(|| format!("{what}: a file name is not UTF-8"))?;
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            bail!("{what}: bad file name {name:?} in the bundle");
        }
        let size = u64::from_le_bytes(take(8, &mut rest)?.try_into().expect("8 bytes"));
        let content = take(
            usize::try_from(size).with_context(|| format!("{what}: {name} too large"))?,
            &mut rest,
        )?;
        files.push((name, content));
    }
    match files.first() {
        Some((name, _)) if name.ends_with(".shard") => Ok(files),
        _ => bail!("{what}: the bundle does not start with a shard"),
    }
}

/// Where a bundle's files go in a run directory under `stem`, relative to it, in the
/// bundle's order: the shard as `shards/<stem>.shard`, each record as
/// `games/<stem>-NNN.txt` (its suffix kept).
pub fn unpacked_paths(files: &[(String, Vec<u8>)], stem: &str, what: &str) -> Result<Vec<String>> {
    let (shard_name, _) = files.first().context("an empty bundle")?;
    let old_stem = shard_name.strip_suffix(".shard").unwrap_or(shard_name);
    let mut paths = vec![format!("shards/{stem}.shard")];
    for (name, _) in &files[1..] {
        let Some(suffix) = name.strip_prefix(old_stem) else {
            bail!("{what}: record {name} does not belong to shard {shard_name}");
        };
        paths.push(format!("games/{stem}{suffix}"));
    }
    Ok(paths)
}

fn file_name(path: &Path) -> Result<String> {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .with_context(|| format!("{} has no UTF-8 file name", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_and_its_records_round_trip_and_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (shards, games) = (dir.path().join("shards"), dir.path().join("games"));
        std::fs::create_dir_all(&shards).unwrap();
        std::fs::create_dir_all(&games).unwrap();
        let stem = "ext-g0002-w1-n002-0000000000001-7-00000";
        std::fs::write(shards.join(format!("{stem}.shard")), b"samples").unwrap();
        std::fs::write(games.join(format!("{stem}-000.txt")), b"game 0").unwrap();
        std::fs::write(games.join(format!("{stem}-001.txt")), b"game 1").unwrap();
        std::fs::write(
            games.join("ext-g0002-w1-n001-0000000000001-7-00001-000.txt"),
            b"x",
        )
        .unwrap();
        let (bytes, held) = pack(&shards.join(format!("{stem}.shard")), &games).unwrap();
        assert_eq!(held.len(), 3, "{held:?}");
        let files = unpack(&bytes, "test").unwrap();
        assert_eq!(files[0], (format!("{stem}.shard"), b"samples".to_vec()));
        assert_eq!(files[2].1, b"game 1");

        assert_eq!(
            unpacked_paths(&files, "joined-x", "t").unwrap(),
            [
                "shards/joined-x.shard",
                "games/joined-x-000.txt",
                "games/joined-x-001.txt"
            ]
        );
        let mut foreign = files.clone();
        foreign[1].0 = "other-000.txt".into();
        let e = unpacked_paths(&foreign, "joined-x", "b").unwrap_err();
        assert!(e.to_string().contains("does not belong to shard"), "{e}");

        let e = unpack(&bytes[..bytes.len() - 1], "shards/g1/x.shard").unwrap_err();
        assert!(
            e.to_string().contains("shards/g1/x.shard: truncated"),
            "{e}"
        );
        let e = unpack(b"PK\x03\x04", "b").unwrap_err();
        assert!(e.to_string().contains("not a loazero shard bundle"), "{e}");
    }
}
