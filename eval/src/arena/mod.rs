//! Matches between two players: balanced openings, alternating colours, parallel games,
//! game records and a results file.
//!
//! Game `i` uses opening `i / 2`; player A has Black in even games and White in odd ones, so
//! every opening is played once with each colour. Results go to `results.jsonl` (one JSON
//! object per game, appended and flushed as games finish; see [`GameResult`]) and each game's
//! record to `games/NNNNN.txt` ([`loa::GameRecord::format`] with the record's header lines,
//! readable by `loazero replay`) and, with [`MatchConfig::sgf`], to `games/NNNNN.sgf`
//! ([`loa::sgf`]), each written to a temporary file and renamed. A match cut short (a
//! signal, a crash) goes on from its folder with [`MatchConfig::resume`]: the games its
//! results file holds count and only the others are played.

mod once;
mod openings;
mod results;
mod resume;

pub use once::{play_once, play_once_if_current, play_once_or_go_on, read_marker, Once};
pub use openings::Openings;
pub use results::{read_results, GameOutcome, GameResult, ResultsRead};

use crate::elo::Tally;
use crate::player::{Player, PlayerFactory, PlayerSpec};
use anyhow::{anyhow, bail, Context, Result};
use loa::{Color, Game, GameRecord, Move, Rules, Variant};
pub use selfplay::Cancel;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Settings of a match.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Number of games (an odd number leaves the last opening with one colour only).
    pub games: usize,
    /// The variant played.
    pub variant: Variant,
    /// The rules played under.
    pub rules: Rules,
    /// Where the games start.
    pub openings: Openings,
    /// Parallel games.
    pub threads: usize,
    /// Games still running after this many plies are adjudicated a draw (unless the rules'
    /// own ply limit ends them first). Default 400.
    pub max_plies: u32,
    /// Seed of the openings and of the players' random streams.
    pub seed: u64,
    /// Where records and results go (nothing is written when `None`).
    pub out_dir: Option<PathBuf>,
    /// Also write every game as SGF (`games/NNNNN.sgf`, players in `PB`/`PW`).
    pub sgf: bool,
    /// Go on with the match whose results `out_dir` already holds: its games count and
    /// are not played again, after checking that each is a game of this match (players,
    /// variant, rules, and the opening its number has under these openings and seed;
    /// `max_plies` is not recorded, so not checked). Without it an `out_dir` that holds
    /// results is refused. Default: false.
    pub resume: bool,
    /// Polled before every move: once it asks, the games under way are dropped (not
    /// counted, not written), no game starts, and the match ends with
    /// [`MatchReport::cancelled`]. Default: never.
    pub cancel: Cancel,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            games: 100,
            variant: Variant::Standard,
            rules: Rules::classic(),
            openings: Openings::Random {
                plies: 4,
                max_eval: 150,
            },
            threads: 1,
            max_plies: 400,
            seed: 1,
            out_dir: None,
            sgf: false,
            resume: false,
            cancel: Cancel::never(),
        }
    }
}

/// The outcome of a match.
#[derive(Clone, Debug)]
pub struct MatchReport {
    /// Every finished game, in game order (with those of a resumed match's folder).
    pub games: Vec<GameResult>,
    /// How many of `games` a resumed match read from its folder instead of playing.
    pub resumed: usize,
    /// Wins, draws, losses of player A.
    pub tally: Tally,
    /// Whether the callback stopped the match early.
    pub stopped: bool,
    /// Whether [`MatchConfig::cancel`] stopped it: the games under way then were dropped,
    /// so `games` may lack some below the last one.
    pub cancelled: bool,
}

/// What the per-game callback wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Go on.
    Continue,
    /// Start no further games (running ones finish and are counted).
    Stop,
}

/// Plays a match of `a` against `b` (see the module docs). `on_game` is called after each
/// game played (from worker threads, serialised) with the game and the running tally of A
/// (which counts a resumed match's earlier games too).
pub fn play_match(
    factory: &PlayerFactory,
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    on_game: &(dyn Fn(&GameResult, &Tally) -> Control + Sync),
) -> Result<MatchReport> {
    if config.games == 0 {
        bail!("a match needs at least one game");
    }
    let openings = match_openings(config);
    let earlier = match &config.out_dir {
        Some(dir) => resume::earlier_games(dir, &a.name(), &b.name(), config, &openings)?,
        None => Vec::new(),
    };
    let results_file = match &config.out_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir.join("games"))
                .with_context(|| format!("cannot create {}", dir.join("games").display()))?;
            let path = dir.join("results.jsonl");
            Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .with_context(|| format!("cannot open {}", path.display()))?,
            )
        }
        None => None,
    };
    struct Shared {
        results: Vec<GameResult>,
        tally: Tally,
        file: Option<std::fs::File>,
        error: Option<anyhow::Error>,
    }
    let mut tally = Tally::default();
    for g in &earlier {
        tally.add(g.score_a);
    }
    let resumed = earlier.len();
    // The game numbers still to play, in order (`earlier` is in game order).
    let mut played = earlier.iter().map(|g| g.game).peekable();
    let todo: Vec<usize> = (0..config.games)
        .filter(|i| played.next_if_eq(i).is_none())
        .collect();
    let shared = Mutex::new(Shared {
        results: earlier,
        tally,
        file: results_file,
        error: None,
    });
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let stopped_by_callback = AtomicBool::new(false);
    let cancelled = AtomicBool::new(false);
    // None when a resumed match has every game already.
    let threads = config.threads.clamp(1, config.games).min(todo.len());
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (shared, next, stop, openings, todo) = (&shared, &next, &stop, &openings, &todo);
            let (stopped_by_callback, cancelled) = (&stopped_by_callback, &cancelled);
            scope.spawn(move || {
                let build = || -> Result<(Box<dyn Player>, Box<dyn Player>)> {
                    let seed = config.seed.wrapping_mul(1_000_003).wrapping_add(t as u64);
                    Ok((factory.build(a, seed)?, factory.build(b, seed ^ 0x5555)?))
                };
                let (mut pa, mut pb) = match build() {
                    Ok(p) => p,
                    Err(e) => {
                        let mut s = shared.lock().expect("arena lock");
                        s.error.get_or_insert(e);
                        stop.store(true, Ordering::SeqCst);
                        return;
                    }
                };
                loop {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Some(&i) = todo.get(next.fetch_add(1, Ordering::SeqCst)) else {
                        return;
                    };
                    let outcome =
                        play_game(i, &openings[i / 2], pa.as_mut(), pb.as_mut(), a, b, config);
                    let mut s = shared.lock().expect("arena lock");
                    match outcome {
                        Ok(None) => {
                            cancelled.store(true, Ordering::SeqCst);
                            stop.store(true, Ordering::SeqCst);
                            return;
                        }
                        Ok(Some((result, record))) => {
                            if let Err(e) = write_game(config, &mut s.file, &result, &record) {
                                s.error.get_or_insert(e);
                                stop.store(true, Ordering::SeqCst);
                                return;
                            }
                            s.tally.add(result.score_a);
                            let tally = s.tally;
                            if on_game(&result, &tally) == Control::Stop {
                                stopped_by_callback.store(true, Ordering::SeqCst);
                                stop.store(true, Ordering::SeqCst);
                            }
                            s.results.push(result);
                        }
                        Err(e) => {
                            s.error.get_or_insert(e.context(format!("game {i}")));
                            stop.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                }
            });
        }
    });
    let mut s = shared.into_inner().expect("arena lock");
    if let Some(e) = s.error.take() {
        return Err(e);
    }
    if let Some(f) = &s.file {
        let path = config
            .out_dir
            .as_deref()
            .unwrap_or(Path::new("."))
            .join("results.jsonl");
        f.sync_all()
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    s.results.sort_by_key(|r| r.game);
    Ok(MatchReport {
        games: s.results,
        resumed,
        tally: s.tally,
        stopped: stopped_by_callback.load(Ordering::SeqCst),
        cancelled: cancelled.load(Ordering::SeqCst),
    })
}

/// The openings of a match's games: game `i` starts from opening `i / 2`.
fn match_openings(config: &MatchConfig) -> Vec<Vec<Move>> {
    config.openings.generate(
        config.games.div_ceil(2),
        config.variant,
        config.rules,
        config.seed,
    )
}

/// Whether `config.out_dir` holds games that this match of `a` against `b` would go on
/// from with [`MatchConfig::resume`]: at least one, and every one a game of this match
/// (players, variant, rules, game number and opening, as `resume` checks them). False when
/// the folder holds none, another match's, or a results file that cannot be read. Changes
/// nothing. ([`play_once_or_go_on`]'s test of an unfinished match's folder.)
pub fn can_resume(a: &PlayerSpec, b: &PlayerSpec, config: &MatchConfig) -> bool {
    let Some(dir) = &config.out_dir else {
        return false;
    };
    resume::holds_games_of(dir, &a.name(), &b.name(), config, &match_openings(config))
}

fn write_game(
    config: &MatchConfig,
    file: &mut Option<std::fs::File>,
    result: &GameResult,
    record: &GameFiles,
) -> Result<()> {
    let (Some(dir), Some(file)) = (&config.out_dir, file.as_mut()) else {
        return Ok(());
    };
    if let Some(rel) = &result.record {
        let path = dir.join(rel);
        selfplay::data::write_atomically(&path, record.text.as_bytes())?;
        if let Some(sgf) = &record.sgf {
            selfplay::data::write_atomically(&path.with_extension("sgf"), sgf.as_bytes())?;
        }
    }
    let mut line = serde_json::to_string(result)?;
    line.push('\n');
    file.write_all(line.as_bytes())
        .and_then(|_| file.flush())
        .with_context(|| format!("cannot write {}", dir.join("results.jsonl").display()))?;
    Ok(())
}

/// A finished game's files: the loazero record and, if asked for, the SGF text.
struct GameFiles {
    text: String,
    sgf: Option<String>,
}

/// Plays game `index`; `None` when [`MatchConfig::cancel`] asked before one of its moves.
fn play_game(
    index: usize,
    opening: &[Move],
    pa: &mut dyn Player,
    pb: &mut dyn Player,
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
) -> Result<Option<(GameResult, GameFiles)>> {
    let start = Instant::now();
    let a_is_black = index & 1 == 0;
    let mut game = Game::new(config.variant, config.rules);
    for &mv in opening {
        game.play(mv).map_err(|e| anyhow!("opening: {e}"))?;
    }
    let mut time = [0.0f64; 2];
    let mut moves = [0u32; 2];
    let mut adjudicated = false;
    while !game.is_over() {
        if config.cancel.requested() {
            return Ok(None);
        }
        if game.moves().len() as u32 >= config.max_plies {
            adjudicated = true;
            break;
        }
        let black_to_move = game.position().to_move() == Color::Black;
        let a_to_move = black_to_move == a_is_black;
        let k = if a_to_move { 0 } else { 1 };
        let player: &mut dyn Player = if a_to_move { &mut *pa } else { &mut *pb };
        let t = Instant::now();
        let mv = player.choose_move(&game)?;
        time[k] += t.elapsed().as_secs_f64();
        moves[k] += 1;
        game.play(mv)
            .map_err(|e| anyhow!("player {} chose an illegal move: {e}", player.name()))?;
    }
    let outcome = game.outcome();
    let result = GameOutcome::of(outcome);
    let a_color = if a_is_black {
        Color::Black
    } else {
        Color::White
    };
    let score_a = outcome.map_or(0.5, |o| (o.score_for(a_color) as f64 + 1.0) / 2.0);
    let token = match outcome {
        Some(loa::Outcome::Win(Color::Black)) => "1-0",
        Some(loa::Outcome::Win(Color::White)) => "0-1",
        _ => "1/2-1/2",
    };
    let (an, bn) = (a.name(), b.name());
    let record_name = format!("games/{index:05}.txt");
    let header = format!(
        "# game {index}: black {} vs white {}; result {result}{}\n",
        if a_is_black { &an } else { &bn },
        if a_is_black { &bn } else { &an },
        if adjudicated {
            " (adjudicated at the ply cap)"
        } else {
            ""
        }
    ) + &loa::RecordHeader {
        variant: Some(config.variant.to_string()),
        rules: Some(config.rules.to_string()),
        start: None,
        end: None,
    }
    .format();
    let record = GameFiles {
        text: header + &GameRecord::format(game.moves(), Some(token)),
        sgf: config.sgf.then(|| {
            let mut sgf = loa::sgf::SgfGame::new(game.clone());
            sgf.info.black = Some(if a_is_black { an.clone() } else { bn.clone() });
            sgf.info.white = Some(if a_is_black { bn.clone() } else { an.clone() });
            sgf.info.event = Some(format!("loazero match, game {index}"));
            if adjudicated {
                sgf.info.result = Some("0".into());
                sgf.info.comment = Some("adjudicated a draw at the ply cap".into());
            }
            sgf.format()
        }),
    };
    let result = GameResult {
        game: index,
        black: if a_is_black { an.clone() } else { bn.clone() },
        white: if a_is_black { bn.clone() } else { an.clone() },
        a: an,
        b: bn,
        first: config.rules.first_player,
        variant: config.variant,
        rules: config.rules,
        opening: loa::notation::moves_text(opening),
        result,
        score_a,
        plies: game.moves().len() as u32,
        adjudicated,
        seconds: start.elapsed().as_secs_f64(),
        a_seconds_per_move: time[0] / moves[0].max(1) as f64,
        b_seconds_per_move: time[1] / moves[1].max(1) as f64,
        record: config.out_dir.as_ref().map(|_| record_name),
    };
    Ok(Some((result, record)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn random_openings_are_distinct_and_not_over() {
        let rules = Rules::classic();
        let o = Openings::Random {
            plies: 4,
            max_eval: 150,
        }
        .generate(20, Variant::Standard, rules, 3);
        assert_eq!(o.len(), 20);
        let mut hashes = HashSet::new();
        for moves in &o {
            assert_eq!(moves.len(), 4);
            let mut g = Game::new(Variant::Standard, rules);
            for &m in moves {
                g.play(m).unwrap();
            }
            assert!(!g.is_over());
            assert!(hashes.insert(g.position().hash()));
        }
    }

    #[test]
    fn openings_files_are_checked() {
        let dir = std::env::temp_dir().join(format!("loazero-openings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rules = Rules::classic();
        let good = dir.join("good.txt");
        std::fs::write(&good, "# two openings\n1. b1-b3 a2-c2\n\n1. c1-c3\n").unwrap();
        match Openings::parse(good.to_str().unwrap(), Variant::Standard, rules).unwrap() {
            Openings::List(l) => assert_eq!(l.len(), 2),
            o => panic!("{o:?}"),
        }
        let bad = dir.join("bad.txt");
        std::fs::write(&bad, "1. b1-b3\n1. b1-b8\n").unwrap();
        let e = Openings::parse(bad.to_str().unwrap(), Variant::Standard, rules).unwrap_err();
        assert!(format!("{e}").contains("line 2"), "{e}");
        assert!(Openings::parse("random:x", Variant::Standard, rules).is_err());
        assert!(Openings::parse("/no/such/file", Variant::Standard, rules).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn alphabeta_beats_random_in_every_new_variant() {
        let factory = PlayerFactory::new();
        let a = PlayerSpec::parse("alphabeta:depth=2").unwrap();
        let b = PlayerSpec::parse("random").unwrap();
        for variant in [
            Variant::Parachute,
            Variant::Gemma,
            Variant::Ambiloa,
            Variant::Alveole,
        ] {
            let config = MatchConfig {
                games: 24,
                threads: 2,
                variant,
                openings: Openings::Random {
                    plies: 2,
                    max_eval: 1000,
                },
                seed: 7,
                ..Default::default()
            };
            let start = Instant::now();
            let report = play_match(&factory, &a, &b, &config, &|_, _| Control::Continue).unwrap();
            let t = report.tally;
            let score = (t.wins as f64 + 0.5 * t.draws as f64) / t.games() as f64;
            eprintln!(
                "{variant}: alphabeta:depth=2 vs random {}-{}-{} ({:.0}%), {:.0} plies a game, in {:.1} s",
                t.wins,
                t.draws,
                t.losses,
                100.0 * score,
                report.games.iter().map(|r| r.plies as f64).sum::<f64>() / t.games() as f64,
                start.elapsed().as_secs_f64()
            );
            assert!(score >= 0.9, "{variant}: {t:?}");
            for r in &report.games {
                assert!(
                    !r.adjudicated,
                    "{variant}: game {} reached the ply cap",
                    r.game
                );
            }
        }
    }

    #[test]
    fn a_small_match_writes_records_and_results() {
        let dir = std::env::temp_dir().join(format!("loazero-arena-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let factory = PlayerFactory::new();
        let a = PlayerSpec::parse("alphabeta:depth=1").unwrap();
        let b = PlayerSpec::parse("random").unwrap();
        let config = MatchConfig {
            games: 6,
            threads: 2,
            variant: Variant::Six,
            out_dir: Some(dir.clone()),
            ..Default::default()
        };
        let report = play_match(&factory, &a, &b, &config, &|_, _| Control::Continue).unwrap();
        assert_eq!(report.games.len(), 6);
        assert_eq!(report.tally.games(), 6);
        let read = read_results(&dir).unwrap();
        assert!(read.skipped.is_empty());
        assert_eq!(read.games.len(), 6);
        for r in &read.games {
            let text = std::fs::read_to_string(dir.join(r.record.as_ref().unwrap())).unwrap();
            let rec = GameRecord::parse(&text).unwrap();
            let mut g = Game::new(Variant::Six, Rules::classic());
            for m in &rec.moves {
                g.play_text(m).unwrap();
            }
            assert_eq!(GameOutcome::of(g.outcome()), r.result);
            assert_eq!((r.black == r.a), r.game % 2 == 0);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A cancel stops a match between moves: games of about a minute end within a
    /// second of it, dropped (no result, no record), and the report says so.
    #[test]
    fn a_cancel_drops_the_games_under_way_between_moves() {
        let dir = tempfile::tempdir().unwrap();
        let factory = PlayerFactory::new();
        // About 0.2 s a move: a game lasts far longer than the test waits.
        let slow = PlayerSpec::parse("mcts:evaluator=uniform,sims=100000").unwrap();
        // The cancel is asked for 300 ms in; the time is measured from then, when the
        // cancel first says so (not from the start, which a busy machine delays).
        let started = Instant::now();
        let asked = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
        let seen = asked.clone();
        let config = MatchConfig {
            games: 4,
            threads: 2,
            out_dir: Some(dir.path().to_path_buf()),
            cancel: Cancel::when(move || {
                started.elapsed().as_millis() > 300 && {
                    seen.get_or_init(Instant::now);
                    true
                }
            }),
            ..Default::default()
        };
        let report =
            play_match(&factory, &slow, &slow, &config, &|_, _| Control::Continue).unwrap();
        let took = asked.get().expect("the cancel was asked").elapsed();
        assert!(report.cancelled && !report.stopped);
        assert!(
            report.games.is_empty() && report.tally.games() == 0,
            "{:?}",
            report.tally
        );
        assert!(took.as_secs_f64() < 1.5, "{took:?}");
        assert!(read_results(dir.path()).unwrap().games.is_empty());
        assert_eq!(
            std::fs::read_dir(dir.path().join("games")).unwrap().count(),
            0
        );
    }
}
