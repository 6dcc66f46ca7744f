//! `loazero ladder RUN`: does more training still pay? Plays a run's promoted models from
//! several training times against alpha-beta at equal time per move (the timed pairings of
//! `loazero benchmark`, [`eval::strength`]), and writes one table and one PNG of the Elo of
//! each model against the run's training time.
//!
//! The models: `--generations G1,G2,…`, or `--points N` (default 5) spread evenly over the
//! run's training time, the newest always among them ([`spread`]). A model's training time
//! is the run's active time at the end of the generation that made it (`elapsed_s` of the
//! generation records in `metrics.jsonl`, read with [`crate::metrics_view::read_metrics`]);
//! generation 0, the untrained network, is minute 0.
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

use crate::metrics_view::{read_metrics, GenerationPoint};
use crate::pairings::{game_progress, report_pairing, PairingArgs, Search};
use crate::plot::{
    clip_elo, color, draw_elo_curve, draw_even_line, draw_note, elo_axis_range, padded_range, px,
    register_font, scale, write_png, Root, ELO_CLIP,
};
use crate::run::config::RunConfig;
use anyhow::{bail, Context, Result};
use eval::arena::Openings;
use eval::elo::EloEstimate;
use eval::strength::{self, Level, PairingResult, StrengthConfig};
use loazero::args::{default_match_games, parse_list};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rundir::layout::{
    generation_of, learned_generation_of, learned_name, list_names, model_name, write_atomically,
    RunDir,
};
use std::collections::BTreeMap;
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

/// What climbs a rung: a promoted MCTS model, or the run's learned alpha-beta.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Climber {
    /// The model of a generation (`models/gen-NNNN.safetensors`), searched as the run's
    /// algorithm searches.
    Model(u32),
    /// Learned generation k (`models/nnue-NNNN.safetensors`) inside alpha-beta.
    Learned(u32),
}

impl Climber {
    /// Its file's name without the extension (`gen-0003`, `nnue-0001`): the name of its
    /// output folder and of its row.
    pub fn name(&self) -> String {
        match *self {
            Climber::Model(g) => model_name(g),
            Climber::Learned(k) => learned_name(k),
        }
    }

    /// The generation of a model; `None` for the learned alpha-beta.
    pub fn generation(&self) -> Option<u32> {
        match *self {
            Climber::Model(g) => Some(g),
            Climber::Learned(_) => None,
        }
    }
}

/// The newest promoted learned evaluation of `run` (`models/nnue-NNNN.safetensors`, the
/// highest NNNN), if any.
pub fn newest_learned(run: &RunDir) -> Result<Option<u32>> {
    Ok(list_names(&run.models())?
        .iter()
        .filter_map(|name| learned_generation_of(name.strip_suffix(".safetensors")?))
        .max())
}

/// A promoted model of a run and its training time.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The generation that made it (`models/gen-NNNN.safetensors`).
    pub generation: u32,
    /// The run's active minutes at the end of that generation (0 for generation 0);
    /// `None` when `metrics.jsonl` has no time for it.
    pub minutes: Option<f64>,
}

/// The generations of the promoted models of `run` (`models/gen-NNNN.safetensors`),
/// ascending. Errors: a directory that does not exist, or one without models (not a run).
pub fn promoted_generations(run: &RunDir) -> Result<Vec<u32>> {
    let root = run.root();
    if !root.is_dir() {
        bail!(
            "run directory {} does not exist or is not a directory",
            root.display()
        );
    }
    let mut out: Vec<u32> = list_names(&run.models())?
        .iter()
        .filter_map(|name| generation_of(name.strip_suffix(".safetensors")?))
        .collect();
    if out.is_empty() {
        bail!(
            "{} is not a run directory: no models in {} (make one with `loazero run --dir {}`)",
            root.display(),
            run.models().display(),
            root.display()
        );
    }
    out.sort_unstable();
    Ok(out)
}

/// `generations` with their training times from the run's generation records
/// (`elapsed_s` of the record of the same generation; generation 0 is minute 0).
pub fn with_times(generations: &[u32], records: &[GenerationPoint]) -> Vec<Checkpoint> {
    let minutes: BTreeMap<u64, f64> = records
        .iter()
        .filter_map(|g| Some((g.generation(), g.elapsed_s()? / 60.0)))
        .chain(std::iter::once((0, 0.0)))
        .collect();
    generations
        .iter()
        .map(|&generation| Checkpoint {
            generation,
            minutes: minutes.get(&u64::from(generation)).copied(),
        })
        .collect()
}

/// `points` models spread evenly over the training time: for k = 1 … `points`, the model
/// whose time is nearest k/`points` of the newest model's (ties: the later model), each
/// once, in generation order; so the newest is always last and generation 0 is chosen
/// only when no model is nearer the first mark. Models without a time are passed over.
/// Errors: `points` is 0, or no model has a time.
pub fn spread(checkpoints: &[Checkpoint], points: usize) -> Result<Vec<Checkpoint>> {
    if points == 0 {
        bail!("--points must be at least 1");
    }
    let timed: Vec<(&Checkpoint, f64)> = checkpoints
        .iter()
        .filter_map(|c| Some((c, c.minutes?)))
        .collect();
    let Some(&(_, newest)) = timed.iter().max_by_key(|(c, _)| c.generation) else {
        bail!("no model has a training time (no generation records in metrics.jsonl)");
    };
    let mut chosen: Vec<Checkpoint> = Vec::new();
    for k in 1..=points {
        let mark = newest * k as f64 / points as f64;
        // The last of the nearest: later models win ties.
        let (best, _) = timed
            .iter()
            .rev()
            .min_by(|a, b| (a.1 - mark).abs().total_cmp(&(b.1 - mark).abs()))
            .expect("at least one timed model");
        if !chosen.iter().any(|c| c.generation == best.generation) {
            chosen.push((*best).clone());
        }
    }
    chosen.sort_by_key(|c| c.generation);
    Ok(chosen)
}

/// The models of `generations` (sorted, each once). Errors name the generation and
/// `run`: no such model, or no training time for it in `metrics.jsonl`.
pub fn pick(
    run: &RunDir,
    checkpoints: &[Checkpoint],
    generations: &[u32],
) -> Result<Vec<Checkpoint>> {
    if generations.is_empty() {
        bail!("--generations: no generation given");
    }
    let mut wanted = generations.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let range = match (checkpoints.first(), checkpoints.last()) {
        (Some(a), Some(b)) => format!(
            "{} models, {} … {}",
            checkpoints.len(),
            model_name(a.generation),
            model_name(b.generation)
        ),
        _ => "no models".to_string(),
    };
    wanted
        .into_iter()
        .map(|g| {
            let Some(c) = checkpoints.iter().find(|c| c.generation == g) else {
                bail!(
                    "--generations: generation {g} has no promoted model {} (the run has {range})",
                    run.model(g).display()
                );
            };
            if c.minutes.is_none() {
                bail!(
                    "--generations: generation {g} has no training time in {} (no generation \
                     record with elapsed_s)",
                    run.metrics().display()
                );
            }
            Ok(c.clone())
        })
        .collect()
}

/// One player at one time per move: a row of `ladder.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rung {
    /// The model, or the learned alpha-beta.
    pub climber: Climber,
    /// Its training time in minutes (the learned alpha-beta's: the run's last).
    pub minutes: f64,
    /// Its timed pairing against `alphabeta:ms=T`.
    pub result: PairingResult,
}

impl Rung {
    /// The time per move of both sides in milliseconds (0 for a depth pairing, which a
    /// ladder does not play).
    pub fn ms(&self) -> u64 {
        match self.result.level {
            Level::Time(ms) => ms,
            Level::Depth(_) => 0,
        }
    }
}

/// `rungs` in the order of the tables: by time per move, then by training time (one
/// block per line of the plot).
pub fn in_table_order(rungs: &[Rung]) -> Vec<Rung> {
    let mut sorted = rungs.to_vec();
    sorted.sort_by(|a, b| {
        (a.ms(), a.climber)
            .cmp(&(b.ms(), b.climber))
            .then(a.minutes.total_cmp(&b.minutes))
    });
    sorted
}

/// The header of `ladder.csv`.
pub const CSV_HEADER: &str = "name,generation,training_minutes,ms,model,baseline,games,wins,\
draws,losses,score,elo,elo_lower,elo_upper,model_ms_per_move,alphabeta_ms_per_move";

/// `ladder.csv`: [`CSV_HEADER`], then one row per rung (`name` is `gen-NNNN` or the
/// learned alpha-beta's `nnue-NNNN`, whose `generation` is empty; `model` is the spec that
/// played; `ms` is the time per move each side was given; the last two columns the mean
/// time each used; infinite Elo bounds read `inf` / `-inf`).
pub fn csv(rungs: &[Rung]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rungs {
        s += &format!(
            "{},{},{:.2},{},{}\n",
            r.climber.name(),
            r.climber
                .generation()
                .map_or(String::new(), |g| g.to_string()),
            r.minutes,
            r.ms(),
            r.result.csv_columns()
        );
    }
    s
}

const HEADERS: [&str; 8] = [
    "model",
    "trained",
    "time/move",
    "W-D-L",
    "score",
    "Elo [95%]",
    "ms/move model",
    "ms/move alpha-beta",
];

fn rows(rungs: &[Rung]) -> Vec<Vec<String>> {
    rungs
        .iter()
        .map(|r| {
            let rung = [
                match r.climber {
                    Climber::Model(_) => r.climber.name(),
                    Climber::Learned(_) => format!("{} (learned alpha-beta)", r.climber.name()),
                },
                format!("{:.1} min", r.minutes),
                format!("{} ms", r.ms()),
            ];
            rung.into_iter().chain(r.result.table_cells()).collect()
        })
        .collect()
}

/// The rungs as an aligned text table (what `loazero ladder` prints).
pub fn table(rungs: &[Rung]) -> String {
    strength::text_table(&HEADERS, &rows(rungs))
}

/// `ladder.md`: what was played, then the table in Markdown.
pub fn markdown(run: &Path, games: usize, rungs: &[Rung]) -> String {
    let mut s = format!("# {}\n\n", title(rungs));
    s += &format!("- run: `{}`\n", run.display());
    s += &format!(
        "- each model plays `alphabeta:ms=T` at the same T per move, {games} games from the \
         same balanced openings, each with both colours, one game at a time\n"
    );
    s += "- Elo of the model over alpha-beta with its 95% interval; trained: the run's active \
          minutes when the model was made (the learned alpha-beta, made at the run's end: \
          the last model's); ms/move: the mean thinking time measured by the arena\n\n";
    s += &strength::markdown_table(&HEADERS, &rows(rungs));
    s
}

/// The times per move of `rungs`, ascending, each once.
fn times(rungs: &[Rung]) -> Vec<u64> {
    let mut t: Vec<u64> = rungs.iter().map(Rung::ms).collect();
    t.sort_unstable();
    t.dedup();
    t
}

/// "Elo at 200 ms per move against training time" (times joined by "," and "and").
pub fn title(rungs: &[Rung]) -> String {
    let t: Vec<String> = times(rungs).iter().map(u64::to_string).collect();
    let list = match t.as_slice() {
        [] => "equal time".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    format!("Elo at {list} ms per move against training time")
}

/// `ladder.png`: Elo ± 95% of every rung against training time, one line per time per
/// move, each point labelled with its generation; Elo 0 is alpha-beta's level.
fn draw(root: &Root, rungs: &[Rung]) -> Result<()> {
    let title = title(rungs);
    if rungs.is_empty() {
        return draw_note(root, &title, "no pairing finished yet");
    }
    let s = scale(root);
    let x = padded_range(rungs.iter().map(|r| r.minutes).chain([0.0]), 0.0..1.0);
    // Room on the right for the last point's label.
    let x = x.start..(x.end + 0.06 * (x.end - x.start));
    let mut chart = ChartBuilder::on(root)
        .caption(&title, ("sans-serif", px(28.0, s)))
        .margin(px(15.0, s))
        .x_label_area_size(px(55.0, s))
        .y_label_area_size(px(75.0, s))
        .build_cartesian_2d(
            x.clone(),
            elo_axis_range(rungs.iter().map(|r| r.result.elo_estimate())),
        )?;
    chart
        .configure_mesh()
        // No rotated y description (plotters spaces rotated text unevenly): the title
        // says what the y axis is.
        .x_desc(format!(
            "training time of the model (minutes). Elo over alpha-beta at equal time, ±95%; \
             beyond ±{ELO_CLIP:.0} at the edge"
        ))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", px(16.0, s)))
        .axis_desc_style(("sans-serif", px(18.0, s)))
        .draw()?;
    draw_even_line(&mut chart, &x, s)?;
    let span = x.end - x.start;
    let times = times(rungs);
    let mut labelled: Vec<Climber> = Vec::new();
    // Names right of the last line's points.
    let label_dx = (times.len() as f64 - 1.0) * 0.003 * span + 0.012 * span;
    for (i, &ms) in times.iter().enumerate() {
        let c = color(i);
        // The lines of several times side by side, so that equal points stay visible.
        let dodge = (i as f64 - (times.len() - 1) as f64 / 2.0) * 0.006 * span;
        let mut line: Vec<&Rung> = rungs
            .iter()
            .filter(|r| r.ms() == ms && matches!(r.climber, Climber::Model(_)))
            .collect();
        line.sort_by(|a, b| a.minutes.total_cmp(&b.minutes));
        let points: Vec<(f64, EloEstimate)> = line
            .iter()
            .map(|r| (r.minutes + dodge, r.result.elo_estimate()))
            .collect();
        let label = format!("{ms} ms per move vs alphabeta:ms={ms}");
        if !points.is_empty() {
            draw_elo_curve(&mut chart, &points, c, s, Some(&label))?;
        }
        // The learned alpha-beta: its own marks (a triangle) in the time's colour.
        for r in rungs
            .iter()
            .filter(|r| r.ms() == ms && matches!(r.climber, Climber::Learned(_)))
        {
            let e = r.result.elo_estimate();
            let x = r.minutes + dodge;
            chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                x,
                clip_elo(e.lower),
                clip_elo(e.elo),
                clip_elo(e.upper),
                c.stroke_width(px(1.5, s)),
                px(10.0, s),
            )))?;
            chart
                .draw_series(std::iter::once(TriangleMarker::new(
                    (x, clip_elo(e.elo)),
                    px(9.0, s),
                    c.filled(),
                )))?
                .label(format!("learned alpha-beta {}, {ms} ms", r.climber.name()))
                .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 6, c.filled()));
        }
        // Each model is named once, beside its first point.
        let style = TextStyle::from(("sans-serif", px(13.0, s)).into_font())
            .color(&c)
            .pos(Pos::new(HPos::Left, VPos::Top));
        let unnamed: Vec<&Rung> = line
            .into_iter()
            .filter(|r| !labelled.contains(&r.climber))
            .collect();
        labelled.extend(unnamed.iter().map(|r| r.climber));
        chart.draw_series(unnamed.iter().filter_map(|r| {
            let g = r.climber.generation()?;
            Some(Text::new(
                format!("gen {g}"),
                (r.minutes + label_dx, clip_elo(r.result.elo)),
                style.clone(),
            ))
        }))?;
    }
    // Elo usually climbs with training: the upper left is the emptiest corner.
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", px(16.0, s)))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
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
    write_png(out, "ladder.png", (1200, 800), |root| draw(root, rungs))?;
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
            Climber::Learned(_) => eval::PlayerSpec::parse("alphabeta")?.with(
                "eval",
                Some(eval::player::spec::Value::File(file_of(climber))),
            )?,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(generation: u32, minutes: f64) -> Checkpoint {
        Checkpoint {
            generation,
            minutes: Some(minutes),
        }
    }

    fn generations(chosen: &[Checkpoint]) -> Vec<u32> {
        chosen.iter().map(|c| c.generation).collect()
    }

    #[test]
    fn spread_is_even_over_training_time_and_ends_at_the_newest() {
        // 31 models one minute apart: the marks 6, 12, … 30 minutes hit them exactly.
        let all: Vec<Checkpoint> = (0..=30).map(|g| at(g, g as f64)).collect();
        assert_eq!(generations(&spread(&all, 5).unwrap()), [6, 12, 18, 24, 30]);
        assert_eq!(generations(&spread(&all, 1).unwrap()), [30]);
        // Spread over time, not over generations: fast early generations, slow late ones.
        let all: Vec<Checkpoint> = [0.0, 1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0]
            .iter()
            .enumerate()
            .map(|(g, &m)| at(g as u32, m))
            .collect();
        // Marks 10, 20, 30, 40 minutes.
        assert_eq!(generations(&spread(&all, 4).unwrap()), [5, 6, 7, 8]);
        // The newest is always last, whatever the marks.
        let all = [at(0, 0.0), at(3, 2.9), at(7, 7.4), at(9, 30.0)];
        let chosen = spread(&all, 3).unwrap();
        assert_eq!(generations(&chosen).last(), Some(&9));
        // Marks 10 and 20: 7 (7.4) is nearest both, chosen once; then 9.
        assert_eq!(generations(&chosen), [7, 9]);
        assert_eq!(chosen[0], at(7, 7.4));
    }

    #[test]
    fn spread_with_few_models_takes_each_once_and_ties_go_to_the_later() {
        let all = [at(0, 0.0), at(1, 1.0), at(2, 2.0)];
        // Marks 0.4, 0.8, 1.2, 1.6, 2.0: gen 0 is nearest 0.4, gen 1 0.8 and 1.2, …
        assert_eq!(generations(&spread(&all, 5).unwrap()), [0, 1, 2]);
        // Marks 1.0 and 2.0 with models at 0.5 and 1.5: 1.0 is as near both; the later wins.
        let all = [at(0, 0.0), at(1, 0.5), at(2, 1.5), at(3, 2.0)];
        assert_eq!(generations(&spread(&all, 2).unwrap()), [2, 3]);
        // Only the untrained network.
        assert_eq!(generations(&spread(&[at(0, 0.0)], 5).unwrap()), [0]);
    }

    #[test]
    fn spread_passes_over_models_without_a_time() {
        let all = [
            at(0, 0.0),
            at(1, 5.0),
            Checkpoint {
                generation: 2,
                minutes: None,
            },
            at(3, 10.0),
            Checkpoint {
                generation: 4,
                minutes: None,
            },
        ];
        assert_eq!(generations(&spread(&all, 2).unwrap()), [1, 3]);
        let untimed = [Checkpoint {
            generation: 4,
            minutes: None,
        }];
        assert!(spread(&untimed, 2)
            .unwrap_err()
            .to_string()
            .contains("training time"));
        assert!(spread(&all, 0)
            .unwrap_err()
            .to_string()
            .contains("--points"));
    }

    #[test]
    fn explicit_generations_are_sorted_checked_and_named_in_errors() {
        let run = RunDir::new("runs/x");
        let all = [
            at(0, 0.0),
            at(4, 2.0),
            at(8, 4.0),
            Checkpoint {
                generation: 9,
                minutes: None,
            },
        ];
        let chosen = pick(&run, &all, &[8, 0, 8]).unwrap();
        assert_eq!(chosen, [at(0, 0.0), at(8, 4.0)]);
        let e = pick(&run, &all, &[4, 7]).unwrap_err().to_string();
        assert!(
            e.contains("generation 7") && e.contains("runs/x/models/gen-0007.safetensors"),
            "{e}"
        );
        assert!(e.contains("4 models, gen-0000 … gen-0009"), "{e}");
        let e = pick(&run, &all, &[9]).unwrap_err().to_string();
        assert!(
            e.contains("generation 9") && e.contains("runs/x/metrics.jsonl"),
            "{e}"
        );
        assert!(pick(&run, &all, &[])
            .unwrap_err()
            .to_string()
            .contains("--generations"));
    }

    #[test]
    fn checkpoints_are_the_promoted_models_with_their_times() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let e = promoted_generations(&run).unwrap_err().to_string();
        assert!(
            e.contains("not a run directory") && e.contains("models"),
            "{e}"
        );
        std::fs::create_dir_all(run.models()).unwrap();
        for name in [
            "gen-0000.safetensors",
            "gen-0002.safetensors",
            "gen-0001.safetensors",
            "gen-0005.safetensors",
            "notes.txt",
            ".gen-0003.safetensors.tmp",
        ] {
            std::fs::write(run.models().join(name), b"").unwrap();
        }
        assert_eq!(promoted_generations(&run).unwrap(), [0, 1, 2, 5]);
        let metrics = crate::metrics_view::parse_metrics(
            r#"{"kind":"generation","generation":1,"elapsed_s":30.0}
{"kind":"generation","generation":2,"elapsed_s":90.0}
{"kind":"generation","generation":3,"elapsed_s":120.0}
"#,
            "metrics.jsonl",
        );
        let all = with_times(&[0, 1, 2, 5], &metrics.generations);
        let five = Checkpoint {
            generation: 5,
            minutes: None,
        };
        assert_eq!(all, [at(0, 0.0), at(1, 0.5), at(2, 1.5), five]);
        let e = promoted_generations(&RunDir::new(dir.path().join("nope")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }

    fn rung(generation: u32, minutes: f64, ms: u64, wins: u32, losses: u32) -> Rung {
        let tally = eval::elo::Tally {
            wins,
            draws: 0,
            losses,
        };
        let elo = EloEstimate::from_tally(&tally);
        Rung {
            climber: Climber::Model(generation),
            minutes,
            result: PairingResult {
                pairing: Level::Time(ms).label(),
                level: Level::Time(ms),
                player: format!("model:path=m{generation}.safetensors,ms={ms}"),
                baseline: format!("alphabeta:ms={ms}"),
                tally,
                elo: elo.elo,
                elo_lower: elo.lower,
                elo_upper: elo.upper,
                player_ms_per_move: ms as f64 * 0.8,
                baseline_ms_per_move: ms as f64 * 0.7,
            },
        }
    }

    #[test]
    fn tables_and_titles() {
        let rungs = [rung(4, 2.0, 200, 1, 3), rung(8, 4.25, 200, 4, 0)];
        let text = csv(&rungs);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert!(
            lines[1].starts_with(
                "gen-0004,4,2.00,200,\"model:path=m4.safetensors,ms=200\",alphabeta:ms=200,4,1,0,3,0.2500,"
            ),
            "{}",
            lines[1]
        );
        assert!(lines[2].contains(",inf,160.00,140.00"), "{}", lines[2]);
        let t = table(&rungs);
        assert!(t.starts_with("model"), "{t}");
        assert!(t.contains("gen-0008  4.2 min"), "{t}");
        assert!(markdown(Path::new("runs/x"), 4, &rungs)
            .contains("| gen-0004 | 2.0 min | 200 ms | 1-0-3 |"));
        assert_eq!(
            title(&rungs),
            "Elo at 200 ms per move against training time"
        );
        let played = [
            rung(4, 2.0, 200, 1, 1),
            rung(4, 2.0, 50, 1, 1),
            rung(8, 4.0, 200, 1, 1),
            rung(8, 4.0, 50, 1, 1),
        ];
        let order: Vec<(u64, Climber)> = in_table_order(&played)
            .iter()
            .map(|r| (r.ms(), r.climber))
            .collect();
        let m = Climber::Model;
        assert_eq!(order, [(50, m(4)), (50, m(8)), (200, m(4)), (200, m(8))]);
        // The learned alpha-beta: its own rows after the models of its time, named by its
        // file, its generation column empty.
        let learned = Rung {
            climber: Climber::Learned(1),
            ..rung(8, 4.0, 200, 3, 1)
        };
        let with_learned = in_table_order(&[learned.clone(), played[2].clone(), played[0].clone()]);
        assert_eq!(with_learned.last(), Some(&learned));
        let text = csv(&with_learned);
        assert!(
            text.lines()
                .last()
                .unwrap()
                .starts_with("nnue-0001,,4.00,200,"),
            "{text}"
        );
        assert!(table(&with_learned).contains("nnue-0001 (learned alpha-beta)"));
        let more = [
            rung(4, 2.0, 200, 1, 1),
            rung(4, 2.0, 50, 1, 1),
            rung(4, 2.0, 1000, 1, 1),
        ];
        assert_eq!(
            title(&more),
            "Elo at 50, 200 and 1000 ms per move against training time"
        );
    }
}
