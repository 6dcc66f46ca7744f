//! Matches between two players: balanced openings, alternating colours, parallel games,
//! game records and a results file.
//!
//! Game `i` uses opening `i / 2`; player A has Black in even games and White in odd ones, so
//! every opening is played once with each colour. Results go to `results.jsonl` (one JSON
//! object per game, appended and flushed as games finish; see [`GameResult`]) and each game's
//! record to `games/NNNNN.txt` ([`loa::GameRecord::format`], readable by `loazero replay`),
//! written to a temporary file and renamed.

use crate::elo::Tally;
use crate::player::{Player, PlayerFactory, PlayerSpec};
use crate::search::{AlphaBeta, SearchLimits};
use crate::AlphaBetaConfig;
use anyhow::{anyhow, bail, Context, Result};
use loa::{Color, Game, GameRecord, Move, Rules, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Where openings come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Openings {
    /// Random balanced openings of this many plies: random legal plies from the start,
    /// rejected if the game is over, if the position was already drawn, or if a depth-2
    /// alpha-beta search scores it beyond ±`max_eval` for the side to move.
    Random {
        /// Plies per opening.
        plies: u32,
        /// Largest accepted |score| of the quick search (evaluation units). Default 150.
        max_eval: i32,
    },
    /// Given move sequences (each played from the variant's start).
    List(Vec<Vec<Move>>),
}

impl Openings {
    /// Parses `random:K` or a file name (one opening per line as a move sequence; `#`
    /// comments), checking every move under `variant` and `rules`.
    pub fn parse(text: &str, variant: Variant, rules: Rules) -> Result<Openings> {
        if let Some(k) = text.strip_prefix("random:") {
            let plies = k
                .trim()
                .parse()
                .map_err(|_| anyhow!("openings '{text}': '{k}' is not a number of plies"))?;
            return Ok(Openings::Random {
                plies,
                max_eval: 150,
            });
        }
        let path = Path::new(text);
        let content = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read openings file {}", path.display()))?;
        let mut list = Vec::new();
        for (i, line) in content.lines().enumerate() {
            let record = GameRecord::parse(line)
                .map_err(|e| anyhow!("{} line {}: {e}", path.display(), i + 1))?;
            if record.moves.is_empty() {
                continue;
            }
            let mut game = Game::new(variant, rules);
            for m in &record.moves {
                game.play_text(m)
                    .map_err(|e| anyhow!("{} line {}: {e}", path.display(), i + 1))?;
            }
            if game.is_over() {
                bail!(
                    "{} line {}: the opening ends the game",
                    path.display(),
                    i + 1
                );
            }
            list.push(game.moves().to_vec());
        }
        if list.is_empty() {
            bail!("openings file {} holds no opening", path.display());
        }
        Ok(Openings::List(list))
    }

    /// `count` openings (cycling through a list if it is shorter).
    pub fn generate(
        &self,
        count: usize,
        variant: Variant,
        rules: Rules,
        seed: u64,
    ) -> Vec<Vec<Move>> {
        match self {
            Openings::List(list) => (0..count).map(|i| list[i % list.len()].clone()).collect(),
            Openings::Random { plies, max_eval } => {
                random_openings(count, *plies, *max_eval, variant, rules, seed)
            }
        }
    }
}

fn random_openings(
    count: usize,
    plies: u32,
    max_eval: i32,
    variant: Variant,
    rules: Rules,
    seed: u64,
) -> Vec<Vec<Move>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut search = AlphaBeta::new(AlphaBetaConfig {
        tt_mib: 1,
        ..Default::default()
    });
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    let mut attempts = 0usize;
    while out.len() < count {
        attempts += 1;
        let mut game = Game::new(variant, rules);
        for _ in 0..plies {
            if game.is_over() {
                break;
            }
            let moves = game.legal_moves();
            let mv = moves[rng.gen_range(0..moves.len())];
            game.play(mv).expect("legal");
        }
        if game.is_over() {
            continue;
        }
        // Past many attempts (few distinct openings exist), accept duplicates.
        let fresh = seen.insert(game.position().hash());
        if !fresh && attempts < 50 * count + 1000 {
            continue;
        }
        if attempts < 50 * count + 1000 {
            match search.search_game(&game, SearchLimits::depth(2)) {
                Ok(r) if r.score.abs() <= max_eval => {}
                _ => continue,
            }
        }
        out.push(game.moves().to_vec());
    }
    out
}

/// Settings of a match.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Number of games (an odd number leaves the last opening with one colour only).
    pub games: usize,
    pub variant: Variant,
    pub rules: Rules,
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
        }
    }
}

/// One finished game, as written to `results.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// Game number in the match (from 0).
    pub game: usize,
    /// Name of player A and B (their specs).
    pub a: String,
    pub b: String,
    /// Names of the players with Black and White (Black moves first unless the rules say
    /// otherwise: see `first`).
    pub black: String,
    pub white: String,
    /// The colour that moved first.
    pub first: String,
    pub variant: String,
    pub rules: String,
    /// The opening moves (space separated).
    pub opening: String,
    /// `black`, `white` or `draw`.
    pub result: String,
    /// Score of player A (1, 0.5, 0).
    pub score_a: f64,
    /// Plies played (opening included).
    pub plies: u32,
    /// Whether the game was stopped by `max_plies` and scored a draw.
    pub adjudicated: bool,
    /// Wall time of the game and mean thinking time per move of A and B, in seconds.
    pub seconds: f64,
    pub a_seconds_per_move: f64,
    pub b_seconds_per_move: f64,
    /// The game record file, relative to the output directory.
    pub record: Option<String>,
}

impl GameResult {
    /// Score of the player who moved first.
    pub fn score_first(&self) -> f64 {
        let first_is_a = (self.first == "black") == (self.black == self.a);
        if first_is_a {
            self.score_a
        } else {
            1.0 - self.score_a
        }
    }
    /// The name of the player who moved first and of the other one.
    pub fn first_and_second(&self) -> (&str, &str) {
        if self.first == "black" {
            (&self.black, &self.white)
        } else {
            (&self.white, &self.black)
        }
    }
}

/// The outcome of a match.
#[derive(Clone, Debug)]
pub struct MatchReport {
    /// Every finished game, in game order.
    pub games: Vec<GameResult>,
    /// Wins, draws, losses of player A.
    pub tally: Tally,
    /// Whether the callback stopped the match early.
    pub stopped: bool,
}

/// What the per-game callback wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// Start no further games (running ones finish and are counted).
    Stop,
}

/// Plays a match of `a` against `b` (see the module docs). `on_game` is called after each
/// game (from worker threads, serialised) with the game and the running tally of A.
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
    let openings = config.openings.generate(
        config.games.div_ceil(2),
        config.variant,
        config.rules,
        config.seed,
    );
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
    let shared = Mutex::new(Shared {
        results: Vec::new(),
        tally: Tally::default(),
        file: results_file,
        error: None,
    });
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let stopped_by_callback = AtomicBool::new(false);
    let threads = config.threads.clamp(1, config.games);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (shared, next, stop, openings) = (&shared, &next, &stop, &openings);
            let stopped_by_callback = &stopped_by_callback;
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
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= config.games {
                        return;
                    }
                    let outcome =
                        play_game(i, &openings[i / 2], pa.as_mut(), pb.as_mut(), a, b, config);
                    let mut s = shared.lock().expect("arena lock");
                    match outcome {
                        Ok((result, record)) => {
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
        f.sync_all().context("cannot sync results.jsonl")?;
    }
    s.results.sort_by_key(|r| r.game);
    Ok(MatchReport {
        games: s.results,
        tally: s.tally,
        stopped: stopped_by_callback.load(Ordering::SeqCst),
    })
}

fn write_game(
    config: &MatchConfig,
    file: &mut Option<std::fs::File>,
    result: &GameResult,
    record: &str,
) -> Result<()> {
    let (Some(dir), Some(file)) = (&config.out_dir, file.as_mut()) else {
        return Ok(());
    };
    if let Some(rel) = &result.record {
        let path = dir.join(rel);
        selfplay::data::write_atomically(&path, record.as_bytes())?;
    }
    let mut line = serde_json::to_string(result)?;
    line.push('\n');
    file.write_all(line.as_bytes())
        .context("cannot write results.jsonl")?;
    file.flush()?;
    Ok(())
}

fn play_game(
    index: usize,
    opening: &[Move],
    pa: &mut dyn Player,
    pb: &mut dyn Player,
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
) -> Result<(GameResult, String)> {
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
    let result = outcome.map_or("draw", |o| o.name()).to_string();
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
        "# game {index}: black {} vs white {}; variant {}; rules {}; result {result}{}\n",
        if a_is_black { &an } else { &bn },
        if a_is_black { &bn } else { &an },
        config.variant,
        config.rules,
        if adjudicated {
            " (adjudicated at the ply cap)"
        } else {
            ""
        }
    );
    let record = header + &GameRecord::format(game.moves(), Some(token));
    let result = GameResult {
        game: index,
        black: if a_is_black { an.clone() } else { bn.clone() },
        white: if a_is_black { bn.clone() } else { an.clone() },
        a: an,
        b: bn,
        first: config.rules.first_player.name().to_string(),
        variant: config.variant.to_string(),
        rules: config.rules.to_string(),
        opening: opening
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        result,
        score_a,
        plies: game.moves().len() as u32,
        adjudicated,
        seconds: start.elapsed().as_secs_f64(),
        a_seconds_per_move: time[0] / moves[0].max(1) as f64,
        b_seconds_per_move: time[1] / moves[1].max(1) as f64,
        record: config.out_dir.as_ref().map(|_| record_name),
    };
    Ok((result, record))
}

/// Reads every `*.jsonl` results file under `dir` (recursively). A malformed line is an
/// error naming the file and line, except a truncated last line (a crash while appending),
/// which is skipped with a warning on stderr.
pub fn read_results(dir: &Path) -> Result<Vec<GameResult>> {
    let mut files = Vec::new();
    collect_jsonl(dir, &mut files)?;
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<GameResult>(line) {
                Ok(r) => out.push(r),
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {
                    eprintln!(
                        "warning: {}: skipping truncated last line {}",
                        f.display(),
                        i + 1
                    );
                }
                Err(e) => bail!("{} line {}: not a game result: {e}", f.display(), i + 1),
            }
        }
    }
    Ok(out)
}

fn collect_jsonl(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory {}", dir.display()))?
    {
        let path = entry?.path();
        if path.is_dir() {
            collect_jsonl(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(read.len(), 6);
        for r in &read {
            let text = std::fs::read_to_string(dir.join(r.record.as_ref().unwrap())).unwrap();
            let rec = GameRecord::parse(&text).unwrap();
            let mut g = Game::new(Variant::Six, Rules::classic());
            for m in &rec.moves {
                g.play_text(m).unwrap();
            }
            assert_eq!(g.outcome().map_or("draw", |o| o.name()), r.result);
            assert_eq!((r.black == r.a), r.game % 2 == 0);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
