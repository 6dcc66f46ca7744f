//! `loazero match`: two players, many games, records, results and an Elo difference.

use crate::args::{default_match_games, GameArgs, MatchGameArgs};
use crate::players::Players;
use crate::progress::ProgressLine;
use anyhow::{bail, Context, Result};
use eval::arena::{play_match, Control, GameResult, MatchConfig, Openings};
use eval::PlayerSpec;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `loazero match`.
#[derive(clap::Args)]
#[command(after_help = eval::player::kind::spec_help())]
pub struct Args {
    /// Player A: a player spec, e.g. alphabeta:depth=3, mcts:sims=400 or
    /// model:path=P,ms=200 (every kind and key below).
    #[arg(long)]
    pub a: String,
    /// Player B (same forms as --a).
    #[arg(long)]
    pub b: String,
    /// Number of games; each opening is played twice, A with Black then with White.
    #[arg(long, default_value_t = default_match_games())]
    pub games: usize,
    /// How the games start and end (`--openings`, `--max-plies`, `--seed`).
    #[command(flatten)]
    pub play: MatchGameArgs,
    /// Games played in parallel (absent or 0: one per CPU core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// The variant and rules (`--variant`, `--rules`).
    #[command(flatten)]
    pub game: GameArgs,
    /// Output directory for games/NNNNN.txt and results.jsonl (default
    /// `matches/<unix time>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write every game as SGF (games/NNNNN.sgf; `loazero replay` reads it).
    #[arg(long)]
    pub sgf: bool,
    /// Go on with the match in --out (a stopped or killed one): play only the games its
    /// results.jsonl lacks, after checking they are this match's (same players,
    /// --variant, --rules, --openings and --seed); the figures count every game. Without
    /// it an --out that holds results is refused.
    #[arg(long, requires = "out")]
    pub resume: bool,
}

/// Plays the match and prints W/D/L, score and Elo of A over B with a 95% interval.
pub fn run(args: Args, players: Players) -> Result<()> {
    let a = PlayerSpec::parse(&args.a)?;
    let b = PlayerSpec::parse(&args.b)?;
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let openings = Openings::parse(&args.play.openings, args.game.variant, args.game.rules)?;
    let out = args.out.unwrap_or_else(|| {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        PathBuf::from(format!("matches/{secs}"))
    });
    let threads = crate::args::threads_or_all_cores(args.threads);
    let config = MatchConfig {
        games: args.games,
        variant: args.game.variant,
        rules: args.game.rules,
        openings,
        threads,
        max_plies: args.play.max_plies,
        seed: args.play.seed,
        out_dir: Some(out.clone()),
        sgf: args.sgf,
        resume: args.resume,
        // A signal stops the match after the games under way (see below).
        cancel: Default::default(),
    };
    let factory = players.match_factory();
    eprintln!(
        "match: A = {a}, B = {b}; {} games, {} threads, {} {}, output {}",
        args.games,
        threads,
        config.variant,
        config.rules,
        out.display()
    );
    crate::interrupt::install();
    let start = Instant::now();
    // Plain lines: every game for short matches, else at most one per 10 s.
    let interval = Duration::from_secs(if args.games <= 50 { 0 } else { 10 });
    let progress = ProgressLine::new("match", args.games as u64, "games", interval);
    let report = play_match(&factory, &a, &b, &config, &|g, t| {
        let msg = format!(
            "A {}-{}-{} ({:.1}%)  Elo {}",
            t.wins,
            t.draws,
            t.losses,
            100.0 * t.score(),
            t.elo()
        );
        progress.update(
            t.games() as u64,
            &format!("last {} ({} plies); {msg}", g.result, g.plies),
        );
        if crate::interrupt::requested() {
            Control::Stop
        } else {
            Control::Continue
        }
    });
    progress.finish();
    let report = report.with_context(|| format!("match in {}", out.display()))?;
    if report.resumed > 0 {
        eprintln!(
            "resumed: {} of the {} games were in {} already",
            report.resumed,
            args.games,
            out.display()
        );
    }
    let t = report.tally;
    let n = report.games.len().max(1) as f64;
    let mean = |f: fn(&GameResult) -> f64| report.games.iter().map(f).sum::<f64>() / n;
    let a_time = mean(|g| g.a_seconds_per_move);
    let b_time = mean(|g| g.b_seconds_per_move);
    let plies = mean(|g| g.plies as f64);
    println!("A: {a}");
    println!("B: {b}");
    println!(
        "games {}  A wins {}  draws {}  losses {}  score {:.1}%",
        t.games(),
        t.wins,
        t.draws,
        t.losses,
        100.0 * t.score()
    );
    println!("Elo(A - B) {} (95% interval)", t.elo());
    println!(
        "time per move: A {:.1} ms, B {:.1} ms; {:.1} plies per game; {:.1} s in all",
        1000.0 * a_time,
        1000.0 * b_time,
        plies,
        start.elapsed().as_secs_f64()
    );
    println!("results: {}", out.join("results.jsonl").display());
    if report.stopped && crate::interrupt::requested() {
        eprintln!(
            "stopped after {} of {} games (the games above); their records are in {}; \
             the same command with `--out {} --resume` goes on",
            report.games.len(),
            args.games,
            out.display(),
            out.display()
        );
        return Err(crate::interrupt::Interrupted.into());
    }
    Ok(())
}
