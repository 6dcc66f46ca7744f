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
/// call plays again. Errors name the file. ([`play_once_if_current`] with every record
/// current.)
pub fn play_once<T: Serialize + DeserializeOwned>(
    dir: &Path,
    marker: &str,
    play: impl FnOnce() -> Result<T>,
) -> Result<T> {
    Ok(play_once_if_current(dir, marker, |_| true, play)?.result)
}

/// A result of [`play_once_if_current`] and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Once<T> {
    /// The recorded or new result.
    pub result: T,
    /// Whether it was recorded by an earlier call (nothing was played).
    pub reused: bool,
}

/// The one owner of the completion-file protocol: [`play_once`], except that a result
/// recorded in `dir/marker` counts only when `current` accepts it (e.g. it was played by
/// the same players, as many games); a record it refuses is cleared with the rest of `dir`
/// and the work played again.
pub fn play_once_if_current<T: Serialize + DeserializeOwned>(
    dir: &Path,
    marker: &str,
    current: impl FnOnce(&T) -> bool,
    play: impl FnOnce() -> Result<T>,
) -> Result<Once<T>> {
    if let Some(done) = read_marker(dir, marker)? {
        if current(&done) {
            return Ok(Once {
                result: done,
                reused: true,
            });
        }
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
    Ok(Once {
        result,
        reused: false,
    })
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

    /// A record the caller no longer accepts is cleared with its folder and played again;
    /// an accepted one is reused.
    #[test]
    fn a_record_that_is_not_current_is_played_again() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        let first = play_once_if_current(
            &dir,
            "done.json",
            |_: &u32| true,
            || {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("results.jsonl"), "game\n").unwrap();
                Ok(4u32)
            },
        )
        .unwrap();
        assert_eq!(
            first,
            Once {
                result: 4,
                reused: false
            }
        );
        let kept = play_once_if_current(
            &dir,
            "done.json",
            |&r: &u32| r == 4,
            || panic!("a current record is never replayed"),
        )
        .unwrap();
        assert_eq!(
            kept,
            Once {
                result: 4,
                reused: true
            }
        );
        let replayed = play_once_if_current(
            &dir,
            "done.json",
            |&r: &u32| r == 5,
            || {
                assert!(
                    !dir.join("results.jsonl").exists(),
                    "stale games are cleared"
                );
                Ok(5u32)
            },
        )
        .unwrap();
        assert_eq!(
            replayed,
            Once {
                result: 5,
                reused: false
            }
        );
        assert_eq!(read_marker::<u32>(&dir, "done.json").unwrap(), Some(5));
    }
}
