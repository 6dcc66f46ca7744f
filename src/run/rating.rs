//! Rating models against fixed anchors: resumable matches (a match counts once its
//! `done.json` exists; an unfinished one is replayed from scratch) and a Bradley–Terry
//! fit over every finished rating and anchor match of the run.

use super::config::{derive_seed, RunConfig, SeedUse};
use anyhow::Result;
use eval::arena::{play_match, play_once, Control, GameResult, MatchConfig, Openings};
use eval::elo::Tally;
use eval::player::spec_builders::{learned_alphabeta_spec, model_spec};
use eval::ratings::RatingTable;
use eval::{PlayerFactory, PlayerSpec};
use rundir::layout::{generation_of, model_name, write_atomically, RunDir};
pub use rundir::rated_games::fit_run;
use rundir::rated_games::{MatchDone, DONE};
use selfplay::Cancel;
use std::path::{Path, PathBuf};
use train::metrics::RatingRow;

/// Plays a match into `dir` unless it already finished there (then its recorded tally is
/// returned; see [`play_once`]). An unfinished match is replayed. `on_game` sees each game.
/// `cancel` stops the match before its next move (fails with
/// [`selfplay::Error::Cancelled`]; nothing is recorded, so the match is replayed).
#[allow(clippy::too_many_arguments)]
pub fn resumable_match(
    factory: &PlayerFactory,
    a: &PlayerSpec,
    b: &PlayerSpec,
    games: usize,
    config: &RunConfig,
    opening_plies: u32,
    seed: u64,
    dir: &Path,
    cancel: &Cancel,
    on_game: &(dyn Fn(&GameResult, &Tally) + Sync),
) -> Result<Tally> {
    let done: MatchDone = play_once(dir, DONE, || {
        let match_config = MatchConfig {
            games,
            variant: config.variant(),
            rules: config.rules(),
            openings: Openings::Random {
                plies: opening_plies,
                max_eval: 150,
            },
            threads: match_threads(config),
            max_plies: config.selfplay.max_game_plies,
            seed,
            out_dir: Some(dir.to_path_buf()),
            sgf: false,
            resume: false,
            cancel: cancel.clone(),
        };
        let report = play_match(factory, a, b, &match_config, &|g, t| {
            on_game(g, t);
            Control::Continue
        })?;
        if report.cancelled {
            // Not complete: nothing recorded, so a resumed run replays the match.
            return Err(selfplay::Error::Cancelled.into());
        }
        Ok(MatchDone {
            a: a.name(),
            b: b.name(),
            tally: report.tally,
        })
    })?;
    Ok(done.tally)
}

/// Parallel games of the run's matches (one in a deterministic run).
pub fn match_threads(config: &RunConfig) -> usize {
    if config.run.deterministic {
        // Parallel games share a model's evaluator (batches merged by timing) and take
        // their games from a common counter.
        return 1;
    }
    match config.run.match_threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Rates the model of `generation` against every anchor (and plays the anchor matches
/// once per run), then fits every finished match of the run. Returns the table with
/// models named `gen-NNNN`; writes `ratings.csv`. `on_game` sees every game with its
/// match's label and number of games. `cancel` stops it before the next move
/// of its match (see [`resumable_match`]): the matches finished so far are kept.
pub fn rate(
    run: &RunDir,
    config: &RunConfig,
    factory: &PlayerFactory,
    generation: u32,
    cancel: &Cancel,
    on_game: &(dyn Fn(&str, usize, &GameResult, &Tally) + Sync),
) -> Result<RatingTable> {
    let q = &config.rating;
    let anchors: &[PlayerSpec] = &q.anchors;
    if q.anchor_games > 0 {
        for k in 0..anchors.len().saturating_sub(1) {
            let label = format!("{} vs {}", anchors[k], anchors[k + 1]);
            resumable_match(
                factory,
                &anchors[k],
                &anchors[k + 1],
                q.anchor_games,
                config,
                q.opening_plies,
                derive_seed(config.run.seed, SeedUse::AnchorMatch, 0, k as u64),
                &run.anchor_match(k),
                cancel,
                &|g, t| on_game(&label, q.anchor_games, g, t),
            )?;
        }
    }
    let model = model_spec(
        &run.model(generation),
        q.simulations,
        config.train.inference.device,
    )?;
    let players = AnchorMatches {
        player: &model,
        name: model_name(generation),
        seeds: (SeedUse::RatingMatch, generation),
        dir: &|k| run.rating_match(generation, k),
    };
    players.play(run, config, factory, cancel, on_game)
}

/// One player's matches against every anchor (`rating.games` each): its name in the
/// labels, the seeds' use and number, the directory of the match against anchor `k`.
struct AnchorMatches<'a> {
    player: &'a PlayerSpec,
    name: String,
    seeds: (SeedUse, u32),
    dir: &'a dyn Fn(usize) -> PathBuf,
}

impl AnchorMatches<'_> {
    /// Plays (or reads) every match, then fits every finished match of the run and writes
    /// `ratings.csv`.
    fn play(
        &self,
        run: &RunDir,
        config: &RunConfig,
        factory: &PlayerFactory,
        cancel: &Cancel,
        on_game: &(dyn Fn(&str, usize, &GameResult, &Tally) + Sync),
    ) -> Result<RatingTable> {
        let q = &config.rating;
        for (k, anchor) in q.anchors.iter().enumerate() {
            let label = format!("{} vs {anchor}", self.name);
            resumable_match(
                factory,
                self.player,
                anchor,
                q.games,
                config,
                q.opening_plies,
                derive_seed(config.run.seed, self.seeds.0, self.seeds.1, k as u64),
                &(self.dir)(k),
                cancel,
                &|g, t| on_game(&label, q.games, g, t),
            )?;
        }
        let table = fit_run(run)?;
        write_atomically(&run.ratings_csv(), table.to_csv().as_bytes())?;
        Ok(table)
    }
}

/// Rates learned generation `k` (`models/nnue-k`, as `alphabeta:depth=D,eval=…` with `D =
/// learned_eval.rating_depth`) against every anchor, as [`rate`] rates a model (the anchor
/// matches are those of the models' ratings), then fits every finished match of the run.
pub fn rate_learned(
    run: &RunDir,
    config: &RunConfig,
    factory: &PlayerFactory,
    k: u32,
    cancel: &Cancel,
    on_game: &(dyn Fn(&str, usize, &GameResult, &Tally) + Sync),
) -> Result<RatingTable> {
    let player = learned_alphabeta_spec(
        &run.learned_model(k),
        Some(config.learned_eval.rating_depth),
    )?;
    let players = AnchorMatches {
        player: &player,
        name: rundir::layout::learned_name(k),
        seeds: (SeedUse::LearnedRating, k),
        dir: &|i| run.learned_rating_match(k, i),
    };
    players.play(run, config, factory, cancel, on_game)
}

/// The rows of a table for the metrics log.
pub fn rating_rows(table: &RatingTable) -> Vec<RatingRow> {
    table
        .ratings
        .iter()
        .map(|r| RatingRow {
            name: r.name.clone(),
            generation: generation_of(&r.name),
            elo: r.elo,
            stderr: r.stderr,
            games: r.games,
            score: r.score,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval::arena::read_results;
    use rundir::rated_games::display_name;

    #[test]
    fn model_players_are_named_by_their_file() {
        let spec = model_spec(
            Path::new("/x/run/models/gen-0007.safetensors"),
            64,
            selfplay::Device::Cpu,
        )
        .unwrap();
        assert_eq!(display_name(&spec.name()), "gen-0007");
        assert_eq!(display_name("alphabeta:depth=2"), "alphabeta:depth=2");
        assert_eq!(display_name("random"), "random");
    }

    /// What the match tests share: a 6×6 run in `dir`, `alphabeta:depth=1` against
    /// `random`, and the directory of the run's first anchor match.
    struct MatchFixture {
        run: RunDir,
        config: RunConfig,
        factory: PlayerFactory,
        a: PlayerSpec,
        b: PlayerSpec,
        m: std::path::PathBuf,
    }

    fn match_fixture(dir: &Path) -> MatchFixture {
        let run = RunDir::new(dir);
        run.create().unwrap();
        let m = run.anchor_match(0);
        MatchFixture {
            run,
            config: RunConfig::from_toml_str(
                "[selfplay]\nvariant = \"6x6\"\n[run]\nmatch_threads = 1\n",
                "t",
                &[],
            )
            .unwrap(),
            factory: PlayerFactory::new(),
            a: PlayerSpec::parse("alphabeta:depth=1").unwrap(),
            b: PlayerSpec::parse("random").unwrap(),
            m,
        }
    }

    #[test]
    fn a_cancelled_match_records_nothing_and_is_played_again() {
        let dir = tempfile::tempdir().unwrap();
        let MatchFixture {
            run: _,
            config,
            factory,
            a,
            b,
            m,
        } = match_fixture(dir.path());
        let always = Cancel::when(|| true);
        let e = resumable_match(&factory, &a, &b, 2, &config, 2, 5, &m, &always, &|_, _| {
            panic!("a cancelled match finishes no game")
        })
        .unwrap_err();
        assert!(e.chain().any(selfplay::is_cancelled), "{e:#}");
        assert!(rundir::rated_games::read_done(&m).unwrap().is_none());
        let t = resumable_match(
            &factory,
            &a,
            &b,
            2,
            &config,
            2,
            5,
            &m,
            &Cancel::never(),
            &|_, _| {},
        )
        .unwrap();
        assert_eq!(t.games(), 2);
    }

    #[test]
    fn finished_matches_are_kept_and_unfinished_ones_replayed() {
        let dir = tempfile::tempdir().unwrap();
        let MatchFixture {
            run,
            config,
            factory,
            a,
            b,
            m,
        } = match_fixture(dir.path());
        // A torn, unfinished match: replayed from scratch.
        std::fs::create_dir_all(&m).unwrap();
        std::fs::write(m.join("results.jsonl"), "{\"game\": 0, \"a\"").unwrap();
        let count = std::sync::atomic::AtomicUsize::new(0);
        let never = Cancel::never();
        let t = resumable_match(&factory, &a, &b, 4, &config, 2, 5, &m, &never, &|_, _| {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
        .unwrap();
        assert_eq!(t.games(), 4);
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 4);
        assert_eq!(read_results(&m).unwrap().games.len(), 4);
        // Finished: not played again.
        let t2 = resumable_match(&factory, &a, &b, 4, &config, 2, 5, &m, &never, &|_, _| {
            panic!("a finished match must not be replayed")
        })
        .unwrap();
        assert_eq!(t2, t);
        let table = fit_run(&run).unwrap();
        assert_eq!(table.anchor, "random");
        assert_eq!(table.ratings.len(), 2);
    }
}
