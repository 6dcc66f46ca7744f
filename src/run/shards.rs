//! [`RunGameWriter`]: self-play games into a run directory, in units that survive a
//! crash whole: each flush writes the records of its games (`games/<stem>-NNN.txt`) and
//! then their samples as one shard (`shards/<stem>.shard`), each file atomically. The stem
//! carries who wrote it, the generation of the model that played and the number of games:
//! `loop-g0003-n012-<millis>-<pid>-<seq>` (the loop) or `ext-g0003-<host>-n012-…`
//! (a joined `loazero selfplay --dir`). A shard is the commit point: records without
//! their shard are removed on restart ([`super::layout::RunDir::clean_after_crash`]),
//! and the loop counts its finished games from shard names alone ([`loop_games_done`]).

use super::layout::{list_names, write_atomically};
use anyhow::Result;
use selfplay::data::write_shard;
use selfplay::output::game_record_text;
use selfplay::FinishedGame;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Buffers finished games and writes them as shards with their records. Not
/// thread-safe: owned by the thread that receives games.
pub struct RunGameWriter {
    shard_dir: PathBuf,
    game_dir: Option<PathBuf>,
    prefix: String,
    shard_samples: usize,
    flush_every: Duration,
    buffer: Vec<FinishedGame>,
    buffered_samples: usize,
    last_flush: Instant,
    seq: u64,
    /// Games written so far.
    pub games_written: u64,
    /// Samples written so far.
    pub samples_written: u64,
    /// Shards written so far.
    pub shards_written: u64,
}

impl RunGameWriter {
    /// A writer into `shard_dir` (and records into `game_dir`) naming its files
    /// `<prefix>-n<games>-…`. A shard is written once `shard_samples` samples are
    /// buffered or `flush_every` has passed since the last one (so that a crash loses
    /// little finished work), and on [`RunGameWriter::flush`].
    pub fn new(
        shard_dir: &Path,
        game_dir: Option<&Path>,
        prefix: &str,
        shard_samples: usize,
        flush_every: Duration,
    ) -> RunGameWriter {
        RunGameWriter {
            shard_dir: shard_dir.to_path_buf(),
            game_dir: game_dir.map(Path::to_path_buf),
            prefix: prefix.to_string(),
            shard_samples: shard_samples.max(1),
            flush_every,
            buffer: Vec::new(),
            buffered_samples: 0,
            last_flush: Instant::now(),
            seq: 0,
            games_written: 0,
            samples_written: 0,
            shards_written: 0,
        }
    }

    /// Changes the name prefix of later shards (e.g. a new generation's model).
    pub fn set_prefix(&mut self, prefix: &str) -> Result<()> {
        self.flush()?;
        self.prefix = prefix.to_string();
        Ok(())
    }

    /// Adds a finished game; writes a shard when one is due.
    pub fn add(&mut self, game: FinishedGame) -> Result<()> {
        self.buffered_samples += game.samples.len();
        self.buffer.push(game);
        if self.buffered_samples >= self.shard_samples
            || self.last_flush.elapsed() >= self.flush_every
        {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered games (records, then the shard). Nothing if none.
    pub fn flush(&mut self) -> Result<()> {
        self.last_flush = Instant::now();
        if self.buffer.is_empty() {
            return Ok(());
        }
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let stem = format!(
            "{}-n{:03}-{millis:013}-{}-{:05}",
            self.prefix,
            self.buffer.len(),
            std::process::id(),
            self.seq
        );
        self.seq += 1;
        if let Some(dir) = &self.game_dir {
            for (k, game) in self.buffer.iter().enumerate() {
                let path = dir.join(format!("{stem}-{k:03}.txt"));
                write_atomically(&path, game_record_text(game).as_bytes())?;
            }
        }
        let samples: Vec<_> = self
            .buffer
            .iter_mut()
            .flat_map(|g| std::mem::take(&mut g.samples))
            .collect();
        let path = self.shard_dir.join(format!("{stem}.shard"));
        write_shard(&path, &samples).map_err(|e| anyhow::anyhow!("cannot write shard: {e}"))?;
        self.games_written += self.buffer.len() as u64;
        self.samples_written += samples.len() as u64;
        self.shards_written += 1;
        self.buffer.clear();
        self.buffered_samples = 0;
        Ok(())
    }
}

/// The prefix of the loop's own shards of generation `g`.
pub fn loop_prefix(generation: u32) -> String {
    format!("loop-g{generation:04}")
}

/// Games of generation `g` the loop has committed (from the names of its shards).
pub fn loop_games_done(shard_dir: &Path, generation: u32) -> Result<u64> {
    let prefix = format!("{}-n", loop_prefix(generation));
    let mut games = 0;
    for name in list_names(shard_dir)? {
        if !name.ends_with(".shard") {
            continue;
        }
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        if let Some(n) = rest.split('-').next().and_then(|n| n.parse::<u64>().ok()) {
            games += n;
        }
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Game, Outcome, Rules, Variant};
    use selfplay::Sample;

    fn game(plies: usize) -> FinishedGame {
        let rules = Rules::classic();
        let mut g = Game::new(Variant::Standard, rules);
        let mut samples = vec![];
        for _ in 0..plies {
            let moves = g.legal_moves().as_slice().to_vec();
            samples.push(Sample {
                position: *g.position(),
                rules,
                moves: moves.clone(),
                policy: vec![],
                search_value: 0.0,
                outcome: 0.0,
            });
            g.play(moves[0]).unwrap();
        }
        FinishedGame {
            start: loa::Position::start(Variant::Standard, &rules),
            rules,
            moves: g.moves().to_vec(),
            outcome: Outcome::Draw,
            resigned: None,
            adjudicated: true,
            resign_disabled: false,
            false_resignations: 0,
            would_resign: 0,
            samples,
        }
    }

    #[test]
    fn shards_carry_their_game_count_and_records_come_first() {
        let dir = tempfile::tempdir().unwrap();
        let (shards, games) = (dir.path().join("shards"), dir.path().join("games"));
        std::fs::create_dir_all(&shards).unwrap();
        std::fs::create_dir_all(&games).unwrap();
        let mut w = RunGameWriter::new(
            &shards,
            Some(&games),
            &loop_prefix(2),
            10,
            Duration::from_secs(3600),
        );
        w.add(game(4)).unwrap();
        w.add(game(4)).unwrap();
        assert_eq!(w.shards_written, 0);
        w.add(game(4)).unwrap(); // 12 samples ≥ 10: a shard of 3 games
        assert_eq!(w.shards_written, 1);
        w.add(game(3)).unwrap();
        w.flush().unwrap();
        assert_eq!(loop_games_done(&shards, 2).unwrap(), 4);
        assert_eq!(loop_games_done(&shards, 1).unwrap(), 0);
        assert_eq!(list_names(&games).unwrap().len(), 4);
        let total: usize = selfplay::data::list_shards(&shards)
            .unwrap()
            .iter()
            .map(|p| selfplay::read_shard(p).unwrap().len())
            .sum();
        assert_eq!(total, 15);
        w.set_prefix("ext-g0003-host").unwrap();
        w.add(game(2)).unwrap();
        w.flush().unwrap();
        assert_eq!(
            loop_games_done(&shards, 3).unwrap(),
            0,
            "ext shards not counted"
        );
        assert_eq!(w.games_written, 5);
    }
}
