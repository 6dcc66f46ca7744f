//! Where self-play games go: shards of samples (`<dir>/shards/`) and one text record
//! per game (`<dir>/games/`), all written atomically; and the progress display.

use crate::data::{
    shard_file_name, unique_file_name, write_atomically, write_shard, DataError, Sample,
};
use crate::worker::{FinishedGame, Progress};
use loa::{GameRecord, Outcome};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Collects finished games into shard files of about `shard_samples` samples and writes
/// each game's record. Not thread-safe: used by the thread that receives games.
pub struct GameWriter {
    shard_dir: PathBuf,
    game_dir: Option<PathBuf>,
    prefix: String,
    shard_samples: usize,
    buffer: Vec<Sample>,
    shard_seq: u64,
    game_seq: u64,
    /// Shards written so far.
    pub shards_written: Vec<PathBuf>,
    /// Samples written so far.
    pub samples_written: u64,
}

impl GameWriter {
    /// A writer into `dir/shards` (and `dir/games` when `records`), creating them.
    pub fn new(dir: &Path, shard_samples: usize, records: bool) -> Result<GameWriter, DataError> {
        let shard_dir = dir.join("shards");
        let game_dir = dir.join("games");
        for d in [&shard_dir, &game_dir] {
            if d == &game_dir && !records {
                continue;
            }
            std::fs::create_dir_all(d).map_err(|source| DataError::Io {
                path: d.clone(),
                source,
            })?;
        }
        let host = std::env::var("HOSTNAME").unwrap_or_default();
        let host: String = host
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(16)
            .collect();
        Ok(GameWriter {
            shard_dir,
            game_dir: records.then_some(game_dir),
            prefix: if host.is_empty() {
                "sp".into()
            } else {
                format!("sp-{host}")
            },
            shard_samples: shard_samples.max(1),
            buffer: Vec::new(),
            shard_seq: 0,
            game_seq: 0,
            shards_written: Vec::new(),
            samples_written: 0,
        })
    }

    /// The directory shards go to.
    pub fn shard_dir(&self) -> &Path {
        &self.shard_dir
    }

    /// Adds a game: its record now, its samples to the next shard (written once full).
    pub fn add(&mut self, game: FinishedGame) -> Result<(), DataError> {
        if let Some(dir) = &self.game_dir {
            let name = unique_file_name(&self.prefix, self.game_seq, "txt");
            self.game_seq += 1;
            write_atomically(&dir.join(name), game_record_text(&game).as_bytes())?;
        }
        self.buffer.extend(game.samples);
        if self.buffer.len() >= self.shard_samples {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered samples as a shard (nothing if empty).
    pub fn flush(&mut self) -> Result<(), DataError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let path = self
            .shard_dir
            .join(shard_file_name(&self.prefix, self.shard_seq));
        self.shard_seq += 1;
        write_shard(&path, &self.buffer)?;
        self.samples_written += self.buffer.len() as u64;
        self.buffer.clear();
        self.shards_written.push(path);
        Ok(())
    }
}

/// The record of a game: comment lines naming variant, rules, start position and how it
/// ended, then the numbered moves and the result, as `loazero replay` reads it
/// (`loazero replay FILE --variant V --rules R`).
pub fn game_record_text(game: &FinishedGame) -> String {
    let mut s = String::new();
    s.push_str(&format!("# variant {}\n", game.start.variant()));
    s.push_str(&format!("# rules {}\n", game.rules));
    s.push_str(&format!("# start {}\n", game.start.to_text()));
    let how = if let Some(c) = game.resigned {
        format!("{} resigned", c.name())
    } else if game.adjudicated {
        "adjudicated a draw at the ply cap".to_string()
    } else {
        "by the rules".to_string()
    };
    s.push_str(&format!("# end {} ({how})\n", game.outcome.name()));
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

/// Shows self-play progress on stderr: an indicatif bar on a terminal, otherwise a plain
/// line every `interval` seconds.
pub struct ProgressDisplay {
    bar: Option<indicatif::ProgressBar>,
    last_line: f64,
    last_games: u64,
    interval: f64,
}

impl ProgressDisplay {
    /// A display for `total_games` games.
    pub fn new(total_games: u64) -> ProgressDisplay {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(total_games);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} games  {msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar
        });
        ProgressDisplay {
            bar,
            last_line: f64::NEG_INFINITY,
            last_games: u64::MAX,
            interval: 10.0,
        }
    }

    /// Updates the display.
    pub fn update(&mut self, p: &Progress) {
        let msg = format!(
            "{:.0} positions/s  {:.0} evals/s  mean batch {:.1}",
            p.positions_per_second(),
            p.evaluations_per_second(),
            p.mean_batch()
        );
        match &self.bar {
            Some(bar) => {
                bar.set_position(p.games);
                bar.set_message(msg);
            }
            None => {
                let done = p.games == p.total_games && self.last_games != p.games;
                if p.seconds - self.last_line >= self.interval || done {
                    eprintln!(
                        "selfplay: {}/{} games, {} positions, {msg} ({:.0} s)",
                        p.games, p.total_games, p.positions, p.seconds
                    );
                    self.last_line = p.seconds;
                    self.last_games = p.games;
                }
            }
        }
    }

    /// Closes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}
