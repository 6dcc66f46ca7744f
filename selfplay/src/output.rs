//! Where self-play games go: shards of samples (`<dir>/shards/`) and one text record
//! per game (`<dir>/games/`), all written atomically.
//!
//! Games are written in units that survive a crash whole: each flush writes the records
//! of its games (`games/<stem>-NNN.txt`), then their samples as one shard
//! (`shards/<stem>.shard`). The shard is the commit point: a reader may drop records
//! whose shard does not exist. The stem `<prefix>-n<K>-<millis>-<pid>-<seq>` carries the
//! number of games `K` ([`games_in_shard_name`]). A writer with
//! [`GameWriter::deterministic_names`] writes `0` for the time and the process id, so that
//! the same games give the same file names; [`shard_order_key`] orders either kind of name
//! by prefix, then time, process and sequence number.

use crate::data::{write_atomically, write_shard};
use crate::worker::FinishedGame;
use crate::Error;
use loa::{GameRecord, Outcome};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A short tag of this host for file names: letters and digits of `$HOSTNAME` or
/// `/etc/hostname` (at most 16), empty if neither gives any.
pub fn host_tag() -> String {
    let raw = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .unwrap_or_default();
    raw.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(16)
        .collect()
}

/// The number of games of a shard (or record) file named by a [`GameWriter`]:
/// `<prefix>-n<K>-<millis>-<pid>-<seq>.shard` → `K`.
pub fn games_in_shard_name(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".shard")?;
    let k = stem.rsplit('-').nth(3)?;
    k.strip_prefix('n')?.parse().ok()
}

/// The order of a shard (or record) named by a [`GameWriter`] among others: its name
/// without the `-n<K>` part (`<prefix>-<millis>-<pid>-<seq>`), so that a writer's shards
/// sort by prefix, then in the order they were written; other names as they are.
pub fn shard_order_key(name: &str) -> String {
    let stem = name.strip_suffix(".shard").unwrap_or(name);
    let parts: Vec<&str> = stem.rsplitn(5, '-').collect();
    match parts.as_slice() {
        [seq, pid, millis, k, prefix] if k.starts_with('n') => {
            format!("{prefix}-{millis}-{pid}-{seq}")
        }
        _ => name.to_string(),
    }
}

/// Collects finished games and writes them as shards of about `shard_samples` samples,
/// each with its games' records (see the module docs). Not thread-safe: used by the
/// thread that receives games.
pub struct GameWriter {
    shard_dir: PathBuf,
    game_dir: Option<PathBuf>,
    sgf: bool,
    prefix: String,
    shard_samples: usize,
    flush_every: Option<Duration>,
    buffer: Vec<FinishedGame>,
    buffered_samples: usize,
    last_flush: Instant,
    seq: u64,
    deterministic_names: bool,
    /// Shards written so far.
    pub shards_written: Vec<PathBuf>,
    /// Games written so far.
    pub games_written: u64,
    /// Samples written so far.
    pub samples_written: u64,
}

impl GameWriter {
    /// A writer into `dir/shards` (and `dir/games` when `records`), creating them; file
    /// names start with `sp-<host>`; shards are written by size only.
    pub fn new(dir: &Path, shard_samples: usize, records: bool) -> Result<GameWriter, Error> {
        let shard_dir = dir.join("shards");
        let game_dir = records.then(|| dir.join("games"));
        for d in std::iter::once(&shard_dir).chain(game_dir.as_ref()) {
            std::fs::create_dir_all(d).map_err(|cause| Error::Io {
                path: d.clone(),
                cause,
            })?;
        }
        let host = host_tag();
        let prefix = if host.is_empty() {
            "sp".into()
        } else {
            format!("sp-{host}")
        };
        Ok(GameWriter::with_names(
            &shard_dir,
            game_dir.as_deref(),
            &prefix,
            shard_samples,
            None,
        ))
    }

    /// A writer into existing directories, naming its files `<prefix>-n<games>-…`. A shard
    /// is written once `shard_samples` samples are buffered or, with `flush_every`, once
    /// that long has passed since the last one (so that a crash loses little).
    pub fn with_names(
        shard_dir: &Path,
        game_dir: Option<&Path>,
        prefix: &str,
        shard_samples: usize,
        flush_every: Option<Duration>,
    ) -> GameWriter {
        GameWriter {
            shard_dir: shard_dir.to_path_buf(),
            game_dir: game_dir.map(Path::to_path_buf),
            sgf: false,
            prefix: prefix.to_string(),
            shard_samples: shard_samples.max(1),
            flush_every,
            buffer: Vec::new(),
            buffered_samples: 0,
            last_flush: Instant::now(),
            seq: 0,
            deterministic_names: false,
            shards_written: Vec::new(),
            games_written: 0,
            samples_written: 0,
        }
    }

    /// Also writes each game as SGF (`<stem>-NNN.sgf`, [`game_sgf_text`]) beside its text
    /// record; nothing without a records directory.
    pub fn with_sgf(mut self, on: bool) -> GameWriter {
        self.sgf = on;
        self
    }

    /// Names files `<prefix>-n<K>-0000000000000-0-<seq>`: without the time and the process
    /// id, so that the same games written in the same shards give the same names.
    pub fn deterministic_names(mut self, on: bool) -> GameWriter {
        self.deterministic_names = on;
        self
    }

    /// The directory shards go to.
    pub fn shard_dir(&self) -> &Path {
        &self.shard_dir
    }

    /// Writes what is buffered, then names later files with `prefix`.
    pub fn set_prefix(&mut self, prefix: &str) -> Result<(), Error> {
        self.flush()?;
        self.prefix = prefix.to_string();
        Ok(())
    }

    /// Adds a finished game; writes a shard when one is due.
    pub fn add(&mut self, game: FinishedGame) -> Result<(), Error> {
        self.buffered_samples += game.samples.len();
        self.buffer.push(game);
        let late = self
            .flush_every
            .is_some_and(|d| self.last_flush.elapsed() >= d);
        if self.buffered_samples >= self.shard_samples || late {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered games: their records, then their shard. Nothing if none.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.last_flush = Instant::now();
        if self.buffer.is_empty() {
            return Ok(());
        }
        let (millis, pid) = if self.deterministic_names {
            (0, 0)
        } else {
            let millis = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            (millis, std::process::id())
        };
        let stem = format!(
            "{}-n{:03}-{millis:013}-{pid}-{:05}",
            self.prefix,
            self.buffer.len(),
            self.seq
        );
        self.seq += 1;
        if let Some(dir) = &self.game_dir {
            for (k, game) in self.buffer.iter().enumerate() {
                let path = dir.join(format!("{stem}-{k:03}.txt"));
                write_atomically(&path, game_record_text(game).as_bytes())?;
                if self.sgf {
                    let sgf = game_sgf_text(game);
                    write_atomically(&path.with_extension("sgf"), sgf.as_bytes())?;
                }
            }
        }
        let samples: Vec<_> = self
            .buffer
            .iter_mut()
            .flat_map(|g| std::mem::take(&mut g.samples))
            .collect();
        let path = self.shard_dir.join(format!("{stem}.shard"));
        write_shard(&path, &samples)?;
        self.games_written += self.buffer.len() as u64;
        self.samples_written += samples.len() as u64;
        self.shards_written.push(path);
        self.buffer.clear();
        self.buffered_samples = 0;
        Ok(())
    }
}

/// The record of a game: comment lines naming variant, rules, start position and how it
/// ended, then the numbered moves and the result, as `loazero replay` reads it
/// (`loazero replay FILE`; the header lines give variant, rules and start).
pub fn game_record_text(game: &FinishedGame) -> String {
    let how = if let Some(c) = game.resigned {
        format!("{} resigned", c.name())
    } else if game.adjudicated {
        "adjudicated a draw at the ply cap".to_string()
    } else {
        "by the rules".to_string()
    };
    let mut s = loa::RecordHeader {
        variant: Some(game.start.variant().to_string()),
        rules: Some(game.rules.to_string()),
        start: Some(game.start.to_text()),
        end: Some(format!("{} ({how})", game.outcome.name())),
    }
    .format();
    // The result token only when the moves themselves end the game, so replay agrees.
    let result = match (game.resigned.is_some() || game.adjudicated, game.outcome) {
        (true, _) => "*",
        (false, Outcome::Win(loa::Color::Black)) => "1-0",
        (false, Outcome::Win(loa::Color::White)) => "0-1",
        (false, Outcome::Draw) => "1/2-1/2",
    };
    s.push_str(&GameRecord::format(&game.moves, Some(result)));
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// The game as SGF ([`loa::sgf`]): start, rules and moves (an `LZ` property names variant
/// and rules), a resignation as the resigning side's `resign` move, a game stopped at the
/// ply cap as `RE[0]` with a comment saying so.
pub fn game_sgf_text(game: &FinishedGame) -> String {
    let mut g = loa::Game::from_position(game.start, game.rules);
    for &mv in &game.moves {
        if g.play(mv).is_err() {
            // Self-play plays legal moves only: not reached.
            break;
        }
    }
    let mut sgf = loa::sgf::SgfGame::new(g);
    sgf.resigned = game.resigned;
    sgf.info.event = Some("loazero self-play".into());
    if game.adjudicated {
        sgf.info.result = Some("0".into());
        sgf.info.comment = Some("adjudicated a draw at the ply cap".into());
    }
    sgf.format()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_sort_by_prefix_then_writing_order() {
        let a = "loop-g0002-n010-0000000000000-0-00001.shard";
        let b = "loop-g0002-n003-0000000000000-0-00002.shard";
        let c = "loop-g0010-n001-0000000000000-0-00000.shard";
        assert_eq!(games_in_shard_name(a), Some(10));
        assert_eq!(shard_order_key(a), "loop-g0002-0000000000000-0-00001");
        assert!(shard_order_key(a) < shard_order_key(b));
        assert!(shard_order_key(b) < shard_order_key(c));
        let timed = "sp-host-n004-1764000000123-4242-00000.shard";
        assert_eq!(shard_order_key(timed), "sp-host-1764000000123-4242-00000");
        assert_eq!(shard_order_key("other.shard"), "other.shard");
    }
}
