//! Work played into a folder exactly once: a match (or a gate, or any result of games
//! written into one folder) counts once its completion file exists; an unfinished one is
//! cleared and played again from scratch ([`play_once`], [`play_once_if_current`]: the run
//! loop's rating, anchor, gate and promotion matches, short enough to replay), or goes on
//! from the games it holds when they are the same match's ([`play_once_or_go_on`]:
//! `benchmark` and `ladder` pairings, which can take an hour).

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

/// A result of [`play_once_if_current`] or [`play_once_or_go_on`] and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Once<T> {
    /// The recorded or new result.
    pub result: T,
    /// Whether it was recorded by an earlier call (nothing was played).
    pub reused: bool,
}

/// [`play_once`], except that a result recorded in `dir/marker` counts only when `current`
/// accepts it (e.g. it was played by the same players, as many games); a record it refuses
/// is cleared with the rest of `dir` and the work played again.
pub fn play_once_if_current<T: Serialize + DeserializeOwned>(
    dir: &Path,
    marker: &str,
    current: impl FnOnce(&T) -> bool,
    play: impl FnOnce() -> Result<T>,
) -> Result<Once<T>> {
    play_once_or_go_on(dir, marker, current, |_| false, |_| play())
}

/// The one owner of the completion-file protocol: [`play_once_if_current`], except that a
/// folder without a record whose contents `can_go_on` accepts (the games of an unfinished
/// match of the same players and settings: [`super::can_resume`]) is kept, and `play(true)`
/// goes on from it; any other folder is cleared and `play(false)` plays from scratch. A
/// refused record's folder is always cleared: its games are another match's.
pub fn play_once_or_go_on<T: Serialize + DeserializeOwned>(
    dir: &Path,
    marker: &str,
    current: impl FnOnce(&T) -> bool,
    can_go_on: impl FnOnce(&Path) -> bool,
    play: impl FnOnce(bool) -> Result<T>,
) -> Result<Once<T>> {
    let go_on = match read_marker(dir, marker)? {
        Some(done) if current(&done) => {
            return Ok(Once {
                result: done,
                reused: true,
            })
        }
        Some(_) => false,
        None => can_go_on(dir),
    };
    if !go_on {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot remove {}", dir.display())),
        }
    }
    let result = play(go_on)?;
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

    /// An unfinished folder that `can_go_on` accepts is kept and played on; one it refuses
    /// is cleared; a folder with a refused record is cleared without asking.
    #[test]
    fn an_accepted_unfinished_folder_is_played_on() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        let games = dir.join("results.jsonl");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&games, "game 0\n").unwrap();
        let on = play_once_or_go_on(
            &dir,
            "done.json",
            |_: &u32| true,
            |d| d == dir && games.exists(),
            |go_on| {
                assert!(go_on);
                assert_eq!(std::fs::read_to_string(&games).unwrap(), "game 0\n");
                std::fs::write(&games, "game 0\ngame 1\n").unwrap();
                Ok(2u32)
            },
        )
        .unwrap();
        assert_eq!((on.result, on.reused), (2, false));
        assert_eq!(read_marker::<u32>(&dir, "done.json").unwrap(), Some(2));

        // A record the caller refuses: its games are cleared, whatever `can_go_on` says.
        let again = play_once_or_go_on(
            &dir,
            "done.json",
            |&r: &u32| r == 3,
            |_| panic!("a folder with a record is never gone on with"),
            |go_on| {
                assert!(!go_on && !games.exists());
                Ok(3u32)
            },
        )
        .unwrap();
        assert_eq!((again.result, again.reused), (3, false));

        // No record, and games `can_go_on` refuses: cleared.
        std::fs::remove_file(dir.join("done.json")).unwrap();
        std::fs::write(&games, "another match's game\n").unwrap();
        let fresh = play_once_or_go_on(
            &dir,
            "done.json",
            |_: &u32| true,
            |_| false,
            |go_on| {
                assert!(!go_on && !games.exists());
                Ok(4u32)
            },
        )
        .unwrap();
        assert_eq!(fresh.result, 4);
    }
}
