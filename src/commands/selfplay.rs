//! `loazero selfplay`: plays games with MCTS and writes training shards and game records.

use anyhow::Result;
use eval::player::mcts::BuiltinEvaluator;
use loazero::progress::ProgressLine;
use selfplay::{Evaluator, GameWriter, SelfplayConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `loazero selfplay`.
#[derive(clap::Args)]
pub struct Args {
    /// TOML config: a run config (its `[selfplay]` table is used) or a bare self-play
    /// config. Default: built-in defaults.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A built-in evaluator (no network): heuristic (the default) or uniform, as a player
    /// spec's `evaluator=`.
    #[arg(long, value_name = "heuristic|uniform", conflicts_with = "model")]
    pub evaluator: Option<BuiltinEvaluator>,
    /// Network model file to evaluate positions with.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Number of games to play (with --dir or --store: default until killed).
    #[arg(long, required_unless_present_any = ["dir", "store"])]
    pub games: Option<u64>,
    /// Output directory: shards go to OUT/shards, game records to OUT/games.
    #[arg(long, required_unless_present_any = ["dir", "store"], conflicts_with_all = ["dir", "store"])]
    pub out: Option<PathBuf>,
    /// Join the run in this run directory (`loazero run --dir`): play with its newest
    /// promoted model and its self-play config, writing shards its trainer reads.
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["config", "evaluator", "model", "simulations", "seed"])]
    pub dir: Option<PathBuf>,
    #[arg(
        long,
        value_name = "URL",
        conflicts_with_all = ["dir", "config", "evaluator", "model", "simulations", "seed"],
        help = concat!(
            "Join the run kept in this store (`loazero run --store URL`; ",
            loazero::store_forms!(),
            "): follow its published models (each checked against its sha256 before use) \
             and commit each finished shard with its game records. While the store cannot \
             be reached, it plays on with the last model and keeps finished shards to commit \
             later"
        )
    )]
    pub store: Option<String>,
    #[arg(
        long,
        value_name = "DIR",
        requires = "store",
        help = concat!(
            "With --store: the local cache directory; this worker works in \
             CACHE/worker-<its writer id> (models, shards waiting to be committed), removed \
             when it ends normally. ",
            loazero::cache_default!()
        )
    )]
    pub cache: Option<PathBuf>,
    /// Override the config's worker threads (0 = one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Override the config's simulations per full search (`selfplay.simulations`; as a
    /// player spec's `sims=`).
    #[arg(long = "sims", alias = "simulations")]
    pub simulations: Option<u32>,
    /// Override the config's variant (standard, scrambled-eggs, 6x6, parachute, gemma,
    /// ambiloa, alveole); a --model must fit it.
    #[arg(long)]
    pub variant: Option<loa::Variant>,
    /// Override the config's random seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also write every game as SGF beside its record (`games/*.sgf`; in a run directory
    /// the run's `selfplay.write_sgf` decides).
    #[arg(long, conflicts_with = "dir")]
    pub sgf: bool,
}

/// How positions are evaluated.
#[derive(Clone, Debug)]
enum EvaluatorChoice {
    /// A built-in evaluator.
    Builtin(BuiltinEvaluator),
    /// A network model file.
    Model(PathBuf),
}

/// Builds the evaluator for `choice`. The one place that maps an evaluator choice to an
/// implementation: the network evaluator plugs in here.
/// A model must fit `variant`.
fn build_evaluator(choice: &EvaluatorChoice, variant: loa::Variant) -> Result<Arc<dyn Evaluator>> {
    match choice {
        EvaluatorChoice::Builtin(builtin) => Ok(builtin.evaluator()),
        EvaluatorChoice::Model(path) => {
            train::players::net_evaluator(path, selfplay::Device::Cpu, Some(variant))
        }
    }
}

/// Plays the games; prints a summary line (games, samples, shards, throughput).
pub fn run(args: Args) -> Result<()> {
    if let Some(spec) = &args.store {
        return crate::run::store_worker::play_for_store(
            spec,
            args.cache.as_deref(),
            args.games,
            args.threads,
        );
    }
    if let Some(dir) = &args.dir {
        return crate::run::joined_selfplay::play_for_run_dir(dir, args.games, args.threads);
    }
    let (Some(games), Some(out)) = (args.games, args.out.as_ref()) else {
        anyhow::bail!("--games and --out are required without --dir or --store");
    };
    let mut config = match &args.config {
        Some(path) => SelfplayConfig::from_file(path)?,
        None => SelfplayConfig::default(),
    };
    if let Some(t) = args.threads {
        config.threads = t;
    }
    if let Some(v) = args.variant {
        config.variant = v;
    }
    if let Some(s) = args.simulations {
        config.simulations = s;
    }
    if args.seed.is_some() {
        config.seed = args.seed;
    }
    if args.sgf {
        config.write_game_records = true;
        config.write_sgf = true;
    }
    config.validate()?;
    let choice = match (&args.model, args.evaluator) {
        (Some(m), _) => EvaluatorChoice::Model(m.clone()),
        (None, Some(k)) => EvaluatorChoice::Builtin(k),
        (None, None) => EvaluatorChoice::Builtin(BuiltinEvaluator::Heuristic),
    };
    let evaluator = build_evaluator(&choice, config.variant)?;
    play(&config, evaluator, games, out)
}

/// Plays `games` games into `out` (shards in `out/shards`, records in `out/games`).
pub fn play(
    config: &SelfplayConfig,
    evaluator: Arc<dyn Evaluator>,
    games: u64,
    out: &Path,
) -> Result<()> {
    let mut writer = GameWriter::new(out, config.shard_samples, config.write_game_records)?
        .with_sgf(config.write_sgf);
    let display = ProgressLine::new("selfplay", games, "games", Duration::from_secs(10));
    let name = evaluator.name();
    let result = selfplay::run_selfplay(
        config,
        evaluator,
        games,
        selfplay::Schedule::RunOut,
        &selfplay::Cancel::never(),
        |g| writer.add(g).map_err(|e| e.to_string()),
        |p| {
            display.update(
                p.games,
                &format!(
                    "{} positions, {:.0} positions/s, {:.0} evals/s, mean batch {:.1} ({:.0} s)",
                    p.positions,
                    p.positions_per_second(),
                    p.evaluations_per_second(),
                    p.mean_batch(),
                    p.seconds
                ),
            )
        },
    );
    display.finish();
    // Whatever happened, keep the samples already played.
    let flushed = writer.flush();
    let progress = result?;
    flushed?;
    println!(
        "selfplay: {} games, {} samples in {} shards under {} ({name}, {:.1} s, {:.0} positions/s, \
         {:.0} evals/s, mean batch {:.1}, would-resign {} of which false {})",
        progress.games,
        writer.samples_written,
        writer.shards_written.len(),
        writer.shard_dir().display(),
        progress.seconds,
        progress.positions_per_second(),
        progress.evaluations_per_second(),
        progress.mean_batch(),
        progress.would_resign,
        progress.false_resignations,
    );
    Ok(())
}
