//! The loop's own shards: self-play games of generation `g` are written by a
//! [`selfplay::GameWriter`] named `loop-g0003` (records, then the shard, each atomic; the
//! shard is the commit point), so the games the loop has finished are counted from shard
//! names alone ([`loop_games_done`]). Joined `loazero selfplay --dir` processes name
//! theirs `ext-g0003-<host>`, which the count leaves out.

use crate::layout::list_names;
use anyhow::{Context, Result};
use selfplay::output::games_in_shard_name;
use std::path::Path;

/// The prefix of the loop's own shards of generation `g`.
pub fn loop_prefix(generation: u32) -> String {
    format!("loop-g{generation:04}")
}

/// Games of generation `g` the loop has committed (from the names of its shards).
pub fn loop_games_done(shard_dir: &Path, generation: u32) -> Result<u64> {
    let prefix = format!("{}-n", loop_prefix(generation));
    Ok(list_names(shard_dir)?
        .iter()
        .filter(|n| n.starts_with(&prefix))
        .filter_map(|n| games_in_shard_name(n))
        .sum())
}

/// Removes the loop's committed games of generation `g`: its shards first (the commit
/// points), then their records in `game_dir`. For a deterministic run, which replays an
/// interrupted generation's self-play from its first game. Returns the games removed.
pub fn remove_loop_games(shard_dir: &Path, game_dir: &Path, generation: u32) -> Result<u64> {
    let prefix = format!("{}-", loop_prefix(generation));
    let mut games = 0;
    for (dir, shards) in [(shard_dir, true), (game_dir, false)] {
        for name in list_names(dir)?.iter().filter(|n| n.starts_with(&prefix)) {
            if shards {
                games += games_in_shard_name(name).unwrap_or(0);
            }
            let path = dir.join(name);
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Game, Outcome, Rules, Variant};
    use selfplay::{FinishedGame, GameWriter, Sample};

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
                tree_only: false,
                final_pieces: None,
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
        let mut w = GameWriter::with_names(&shards, Some(&games), &loop_prefix(2), 10, None);
        w.add(game(4)).unwrap();
        w.add(game(4)).unwrap();
        assert_eq!(w.shards_written.len(), 0);
        w.add(game(4)).unwrap(); // 12 samples ≥ 10: a shard of 3 games
        assert_eq!(w.shards_written.len(), 1);
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
