//! Work played into a folder exactly once: a match (or a gate, or any result of games
//! written into one folder) counts once its completion file exists; an unfinished one is
//! cleared and played again from scratch. The run loop's rating, anchor and gate matches
//! all resume this way.

use anyhow::{anyhow, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// The result recorded in `dir/marker` when it exists; otherwise clears `dir`, calls
/// `play` (which writes its games into `dir`) and records what it returns in
/// `dir/marker` atomically (temporary file, fsync, rename) before returning it. An error
/// from `play` (a failure, or a stop asked for by a signal) records nothing, so the next
/// call plays again. Errors name the file.
pub fn play_once<T: Serialize + DeserializeOwned>(
    dir: &Path,
    marker: &str,
    play: impl FnOnce() -> Result<T>,
) -> Result<T> {
    if let Some(done) = read_marker(dir, marker)? {
        return Ok(done);
    }
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot remove {}", dir.display())),
    }
    let result = play()?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(marker);
    let text = serde_json::to_string_pretty(&result)?;
    selfplay::data::write_atomically(&path, text.as_bytes())
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(result)
}

/// The result recorded in `dir/marker`, if the file exists. Errors: unreadable, or not a
/// record of this kind (both naming the file).
pub fn read_marker<T: DeserializeOwned>(dir: &Path, marker: &str) -> Result<Option<T>> {
    let path = dir.join(marker);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| anyhow!("{}: not a finished-match record: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn plays_once_replays_the_unfinished_and_names_bad_records() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        // A torn earlier attempt: its files are cleared before playing.
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("results.jsonl"), "{\"torn").unwrap();
        let calls = Cell::new(0);
        let play = || {
            calls.set(calls.get() + 1);
            assert!(!dir.join("results.jsonl").exists());
            std::fs::create_dir_all(&dir).unwrap();
            Ok(vec![3u32, 1, 2])
        };
        assert_eq!(play_once(&dir, "done.json", play).unwrap(), vec![3, 1, 2]);
        let again: Vec<u32> = play_once(&dir, "done.json", || {
            panic!("a finished match is never replayed")
        })
        .unwrap();
        assert_eq!(again, vec![3, 1, 2]);
        assert_eq!(calls.get(), 1);
        // A failed (or interrupted) attempt records nothing.
        let other = tmp.path().join("n");
        let r: Result<u32> = play_once(&other, "done.json", || Err(anyhow!("stopped")));
        assert!(r.is_err());
        assert!(read_marker::<u32>(&other, "done.json").unwrap().is_none());
        // A damaged record is an error naming the file.
        std::fs::write(dir.join("done.json"), "not json").unwrap();
        let err = read_marker::<Vec<u32>>(&dir, "done.json").unwrap_err();
        assert!(format!("{err}").contains("done.json"), "{err}");
    }
}
