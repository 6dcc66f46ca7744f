//! `loazero ladder RUN`: does more training still pay? Plays a run's promoted models from
//! several training times against alpha-beta at equal time per move (the timed pairings of
//! `loazero benchmark`, [`eval::strength`]), and writes one table and one PNG of the Elo of
//! each model against the run's training time.
//!
//! The models: `--generations G1,G2,…`, or `--points N` (default 5) spread evenly over the
//! run's training time, the newest always among them ([`picking::spread`]). A model's
//! training time is the run's active time at the end of the generation that made it
//! (`elapsed_s` of the generation records in `metrics.jsonl`, read with
//! [`crate::metrics_view::read_metrics`]); generation 0, the untrained network, is minute 0.
//!
//! Output directory (default `RUN/ladder`):
//! * `gen-NNNN/`: the model's [`eval::strength::run`] directory (`time-200ms/`, its
//!   `results.csv`): a rerun of the same command reuses every complete pairing there,
//!   goes on with one cut short from the games it holds, and plays only what is missing.
//! * `nnue-NNNN/`: the same for the run's newest learned alpha-beta
//!   (`alphabeta:eval=models/nnue-NNNN.safetensors`, made at the end of the run: its rung
//!   stands at the run's last training time; `--no-learned` leaves it out).
//! * `ladder.csv`, `ladder.md` and `ladder.png` (Elo ± 95% against training time in
//!   minutes, one line per time per move, the learned alpha-beta as its own marks): every
//!   finished pairing (by time per move, then training time), rewritten after each.
//!
//! Here the command; the models it picks in [`picking`], its rows and tables in [`rungs`],
//! its plot in [`plot`].

mod picking;
mod plot;
mod rungs;

use crate::metrics_view::read_metrics;
use crate::pairings::{game_progress, report_pairing, PairingArgs, Search};
use crate::plot::{register_font, write_png};
use crate::run::config::RunConfig;
use anyhow::{bail, Context, Result};
use eval::arena::Openings;
use eval::player::spec_builders::learned_alphabeta_spec;
use eval::strength::{self, PairingResult, StrengthConfig};
use loazero::args::{default_match_games, parse_list};
use picking::{newest_learned, pick, promoted_generations, spread, with_times, Climber};
use rundir::layout::{model_name, write_atomically, RunDir};
use rungs::{csv, in_table_order, markdown, table, Rung};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `loazero ladder`.
#[derive(clap::Args)]
pub struct Args {
    /// The run directory (as written by `loazero run`): its promoted models
    /// (`models/gen-NNNN.safetensors`), its `metrics.jsonl` (their training times) and its
    /// `config.toml` (the variant and rules played) are read. Also `ladder RUN_DIR`.
    #[arg(
        long = "dir",
        value_name = "RUN_DIR",
        required_unless_present = "dir_positional",
        conflicts_with = "dir_positional"
    )]
    pub dir: Option<PathBuf>,
    /// The run directory, as older versions took it (`--dir` is the spelling of every
    /// command).
    #[arg(value_name = "RUN_DIR", hide = true)]
    pub dir_positional: Option<PathBuf>,
    /// The generations whose models play, comma-separated (each needs a promoted model
    /// and a training time). Default: --points models spread over the training time.
    #[arg(long, conflicts_with = "points")]
    pub generations: Option<String>,
    /// How many models to choose, evenly spread over the run's training time (at 1/N,
    /// 2/N, … of it, the newest model last; fewer when models are scarce).
    #[arg(long, default_value_t = 5)]
    pub points: usize,
    /// Times per move in milliseconds, comma-separated: each model plays `ms=T` against
    /// `alphabeta:ms=T`; one line of the plot per time.
    #[arg(long, default_value = "200")]
    pub ms: String,
    /// Games per model and time, even (each opening with both colours). 100 games give an
    /// Elo interval of about ±70 near even strength.
    #[arg(long, default_value_t = default_match_games())]
    pub games: usize,
    /// Games played at once; more than 1 lets the games compete for the CPU, which
    /// distorts equal-time results (as `loazero benchmark --timed-threads`).
    #[arg(long, default_value_t = 1)]
    pub timed_threads: usize,
    #[command(flatten)]
    pub pairing: PairingArgs,
    /// Output directory (default RUN/ladder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Leave out the run's learned alpha-beta (by default its newest promoted learned
    /// evaluation, `models/nnue-NNNN.safetensors`, climbs too, at the run's last training
    /// time).
    #[arg(long)]
    pub no_learned: bool,
}

/// Writes `ladder.csv`, `ladder.md` and `ladder.png` of `rungs` into `out`, each
/// atomically.
fn write_outputs(out: &Path, run: &Path, games: usize, rungs: &[Rung]) -> Result<()> {
    let rungs = &in_table_order(rungs);
    write_atomically(&out.join("ladder.csv"), csv(rungs).as_bytes())?;
    write_atomically(
        &out.join("ladder.md"),
        markdown(run, games, rungs).as_bytes(),
    )?;
    write_png(out, "ladder.png", (1200, 800), |root| {
        plot::draw(root, rungs)
    })?;
    Ok(())
}

/// Chooses the models, plays every missing pairing (progress on stderr) and prints the
/// table on stdout.
pub fn run(mut args: Args) -> Result<()> {
    if args.dir.is_none() {
        loazero::args::note_older_spelling("ladder RUN_DIR", "ladder --dir RUN_DIR");
    }
    let dir = args
        .dir
        .take()
        .or(args.dir_positional.take())
        .expect("clap requires one");
    run_with(args, dir)
}

fn run_with(args: Args, dir: PathBuf) -> Result<()> {
    let run_dir = RunDir::new(&dir);
    let times_ms: Vec<u64> = parse_list("--ms", &args.ms)?;
    if times_ms.is_empty() {
        bail!("--ms: give at least one time per move in milliseconds");
    }
    if times_ms.contains(&0) {
        bail!("--ms {}: a time per move must be positive", args.ms);
    }
    if !dir.is_dir() {
        bail!(
            "run directory {} does not exist or is not a directory",
            dir.display()
        );
    }
    // Models first: a directory without any is not a run, whatever else it lacks.
    let generations = promoted_generations(&run_dir)?;
    let metrics = read_metrics(&dir).context("the models' training times")?;
    let all = with_times(&generations, &metrics.generations);
    let chosen = match &args.generations {
        Some(text) => pick(&run_dir, &all, &parse_list("--generations", text)?)?,
        None => {
            let untimed: Vec<String> = all
                .iter()
                .filter(|c| c.minutes.is_none())
                .map(|c| model_name(c.generation))
                .collect();
            if !untimed.is_empty() {
                eprintln!(
                    "warning: passed over (no training time in {}): {}",
                    run_dir.metrics().display(),
                    untimed.join(", ")
                );
            }
            spread(&all, args.points)?
        }
    };
    let (variant, rules, algorithm) = if run_dir.config().is_file() {
        let config = RunConfig::load(Some(&run_dir.config()), &[])?;
        (config.variant(), config.rules(), config.run.algorithm)
    } else {
        let config = RunConfig::load(None, &[])?;
        eprintln!(
            "warning: {} has no config.toml: playing {} {}",
            dir.display(),
            config.variant(),
            config.rules()
        );
        (config.variant(), config.rules(), config.run.algorithm)
    };
    let search = args.pairing.search.unwrap_or(Search::of(algorithm));
    let openings = Openings::parse(&args.pairing.play.openings, variant, rules)?;
    // The climbers: the chosen models, then (unless --no-learned) the newest learned
    // alpha-beta at the run's last training time.
    let mut climbers: Vec<(Climber, f64)> = chosen
        .iter()
        .map(|c| (Climber::Model(c.generation), c.minutes.unwrap_or(0.0)))
        .collect();
    // (Only where the learned evaluation's feature set covers the run's variant.)
    if !args.no_learned && eval::learned::supports(variant) {
        if let Some(k) = newest_learned(&run_dir)? {
            let last = all.iter().filter_map(|c| c.minutes).fold(0.0, f64::max);
            climbers.push((Climber::Learned(k), last));
        }
    }
    let file_of = |climber: Climber| match climber {
        Climber::Model(g) => run_dir.model(g),
        Climber::Learned(k) => run_dir.learned_model(k),
    };
    let config_of = |climber: Climber| -> Result<StrengthConfig> {
        let player = match climber {
            Climber::Model(_) => search.spec(&file_of(climber), 1, args.pairing.device)?,
            Climber::Learned(_) => learned_alphabeta_spec(&file_of(climber), None)?,
        };
        Ok(StrengthConfig {
            player,
            times_ms: times_ms.clone(),
            depths: Vec::new(),
            sims: 1,
            games: args.games,
            timed_threads: args.timed_threads,
            depth_threads: 1,
            variant,
            rules,
            openings: openings.clone(),
            max_plies: args.pairing.play.max_plies,
            seed: args.pairing.play.seed,
        })
    };
    // One torch thread, no batch wait: the model's time budget is spent on search, and
    // one core is left to the opponent (as in `loazero benchmark`).
    let factory = train::players::model_player_factory(
        train::players::timed_inference(selfplay::Device::Cpu),
        Some(variant),
    );
    // Every argument and file is checked before the first game.
    for &(climber, _) in &climbers {
        let pairings = config_of(climber)?.pairings()?;
        factory
            .build(&pairings[0].player, 0)
            .with_context(|| format!("{}", file_of(climber).display()))?;
    }
    let out = args.out.clone().unwrap_or_else(|| dir.join("ladder"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let listed: Vec<String> = climbers
        .iter()
        .map(|(climber, minutes)| format!("{} ({minutes:.1} min)", climber.name()))
        .collect();
    eprintln!(
        "ladder: {} vs alphabeta at {} ms per move: {}; {} games each; {variant} {rules}; \
         output {}",
        dir.display(),
        times_ms
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
        listed.join(", "),
        args.games,
        out.display()
    );
    register_font()?;
    let start = Instant::now();
    let mut rungs: Vec<Rung> = Vec::new();
    for &(climber, minutes) in &climbers {
        let name = climber.name();
        let prefix = format!("{name} ");
        let rung = |r: &PairingResult| Rung {
            climber,
            minutes,
            result: r.clone(),
        };
        let on_game = game_progress(args.games, &prefix);
        let results = strength::run(
            &factory,
            &config_of(climber)?,
            &out.join(&name),
            &on_game,
            &mut |p, all, reused| {
                report_pairing(&prefix, p, all, reused);
                let so_far: Vec<Rung> = rungs.iter().cloned().chain(all.iter().map(rung)).collect();
                write_outputs(&out, &dir, args.games, &so_far)
            },
        )?;
        rungs.extend(results.iter().map(rung));
    }
    println!("run: {}", dir.display());
    print!("{}", table(&in_table_order(&rungs)));
    println!(
        "Elo of each model over alpha-beta at equal time per move, 95% interval; {} games \
         per model and time; {:.1} s",
        args.games,
        start.elapsed().as_secs_f64()
    );
    for f in ["ladder.csv", "ladder.md", "ladder.png"] {
        println!("wrote {}", out.join(f).display());
    }
    Ok(())
}
