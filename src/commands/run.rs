//! `loazero run`: the self-play → train → gate → rate loop over a run directory.

use crate::run::config::RunConfig;
use crate::run::display::LoopDisplay;
use crate::run::driver::Driver;
use crate::run::store_trainer::{self, StoreTrainer};
use anyhow::{anyhow, bail, Context, Result};
use rundir::layout::{truncate_torn_line, RunDir};
use std::path::PathBuf;

/// Arguments of `loazero run`.
#[derive(clap::Args)]
pub struct Args {
    /// Config file, merged over the embedded default (configs/default.toml). Only for a
    /// new run: a run directory keeps its own config.toml (change keys with --set).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Variant of a new run: without --config, the embedded `configs/<variant>.toml` (its
    /// tuned settings over the default); with --config, that file with
    /// selfplay.variant set. A resumed run must name its own variant.
    #[arg(long)]
    pub variant: Option<loa::Variant>,
    /// Run directory; restarting with the same directory resumes the run.
    #[arg(long, value_name = "RUN_DIR", default_value = "runs/default")]
    pub dir: PathBuf,
    #[arg(
        long,
        value_name = "URL",
        conflicts_with = "dir",
        help = concat!(
            "Keep the run in a store instead of a directory: ", loazero::store_forms!(),
            ". Restarting with the same store resumes the run; `loazero selfplay --store` \
             workers join it. The loop works in a local cache (--cache), rebuilt from the \
             store at every start"
        )
    )]
    pub store: Option<String>,
    #[arg(
        long,
        value_name = "DIR",
        requires = "store",
        help = concat!(
            "With --store: the local cache directory (the loop's working copy in \
             CACHE/trainer, torch reads and writes files there; one trainer per cache). ",
            loazero::cache_default!()
        )
    )]
    pub cache: Option<PathBuf>,
    /// Override a config key, e.g. `--set selfplay.simulations=100` (repeatable). On a
    /// resumed run the change is saved in its config.toml.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Total training minutes of the run, counted across restarts (run.minutes; 0 = no
    /// time limit, said at the start; a negative number is refused).
    #[arg(long, allow_negative_numbers = true)]
    pub minutes: Option<f64>,
    /// Stop after this generation (run.generations; 0 = no limit).
    #[arg(long)]
    pub generations: Option<u32>,
    /// Print the config the run would use and exit.
    #[arg(long)]
    pub print_config: bool,
}

/// A run's saved config: its text and where it is, for messages (`RUN_DIR/config.toml`,
/// `URL/config.toml`).
struct Saved {
    text: String,
    origin: String,
}

/// The config the run uses: its saved one (`saved`, a run that goes on) with `--set`,
/// `--minutes` and `--generations` over it, checked against `--config` and `--variant`;
/// or, for a new run, the one `--config`, `--variant` and those options make. `name`
/// names the run in messages.
fn config_of(args: &Args, saved: Option<&Saved>, name: &str) -> Result<RunConfig> {
    let mut sets = args.sets.clone();
    if let Some(m) = args.minutes {
        if !(m.is_finite() && m >= 0.0) {
            bail!("--minutes {m}: must be a number of minutes ≥ 0 (0 = no time limit)");
        }
        sets.push(format!("run.minutes={m:?}"));
    }
    if let Some(g) = args.generations {
        sets.push(format!("run.generations={g}"));
    }
    let Some(saved) = saved else {
        return match (args.variant, &args.config) {
            (Some(v), None) => RunConfig::from_toml_str(
                crate::run::config::variant_toml(v),
                &format!("configs/{}.toml (embedded)", v.name()),
                &sets,
            ),
            (Some(v), Some(_)) => {
                sets.insert(0, format!("selfplay.variant={:?}", v.name()));
                RunConfig::load(args.config.as_deref(), &sets)
            }
            (None, _) => RunConfig::load(args.config.as_deref(), &sets),
        };
    };
    let place = if args.store.is_some() {
        "--store"
    } else {
        "--dir"
    };
    if let Some(c) = &args.config {
        let given = RunConfig::load(Some(c), &[])?;
        let mine = RunConfig::from_toml_str(&saved.text, &saved.origin, &[])?;
        if given != mine {
            bail!(
                "{} already has its config ({}), which differs from {}: resume without \
                 --config (change single keys with --set), or choose another {place}",
                name,
                saved.origin,
                c.display()
            );
        }
    }
    let config = RunConfig::from_toml_str(&saved.text, &saved.origin, &sets)?;
    if let Some(v) = args.variant {
        if v != config.variant() {
            bail!(
                "{} is a {} run; it cannot go on as {v} (choose another {place})",
                name,
                config.variant()
            );
        }
    }
    Ok(config)
}

/// A resumed run's `--minutes` counts the whole run: one the run has already used would
/// only rate its best model again and rewrite its budget, so it is refused (before the
/// config is saved) with the `--minutes` that goes on for that long.
fn check_resumed_budget(args: &Args, dir: &RunDir, name: &str) -> Result<()> {
    let Some(minutes) = args.minutes.filter(|&m| m > 0.0) else {
        return Ok(());
    };
    let Ok(state) = rundir::state::LoopState::load(&dir.state()) else {
        // No state yet (a run cut before its first save) or one the driver will refuse.
        return Ok(());
    };
    let used = state.elapsed_s / 60.0;
    if minutes <= used {
        // Hundredths, rounded up: the suggestion always lies beyond what was used.
        let suggested = ((used + minutes) * 100.0).ceil() / 100.0;
        bail!(
            "{name} has already run {used:.2} minutes, and --minutes counts the whole run \
             (across restarts): --minutes {minutes} would stop it at once. To go on for \
             {minutes} more minutes pass --minutes {suggested:.2}; its config keeps its budget"
        );
    }
    Ok(())
}

/// Starts or resumes the run.
pub fn run(args: Args) -> Result<()> {
    // Before anything is written: a signal is then always a stop at a safe point.
    loazero::interrupt::install();
    let mut store_trainer = None;
    let (dir, name) = match &args.store {
        None => (RunDir::new(&args.dir), args.dir.display().to_string()),
        Some(spec) if args.print_config => {
            // Print only: no epoch is claimed, so a running trainer is not fenced.
            let store = store::open(spec).map_err(|e| anyhow!("--store {spec}: {e}"))?;
            let saved = store_trainer::read_config(store.as_ref())?.map(|text| Saved {
                text,
                origin: format!("{spec}/config.toml"),
            });
            print!("{}", config_of(&args, saved.as_ref(), spec)?.to_toml());
            return Ok(());
        }
        Some(spec) => {
            // Checked on the store itself; then outages are waited out (run::patient).
            let store = store::Patient::wrap(
                store_trainer::open_checked(spec)?,
                format!("run --store {spec}"),
                loazero::interrupt::requested,
            );
            let cache = args
                .cache
                .clone()
                .unwrap_or_else(|| store_trainer::default_cache(store.as_ref()));
            let started = std::time::Instant::now();
            let (trainer, working_copy) = StoreTrainer::start(store, &cache)?;
            println!(
                "run --store {spec}: trainer epoch {}, working copy {} (rebuilt from the \
                 store in {:.1} s: {})",
                trainer.epoch(),
                working_copy.root().display(),
                started.elapsed().as_secs_f64(),
                trainer.restored()
            );
            store_trainer = Some(trainer);
            (working_copy, spec.clone())
        }
    };
    let saved_path = dir.config();
    let saved = match std::fs::read_to_string(&saved_path) {
        Ok(text) => Some(Saved {
            text,
            origin: saved_path.display().to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read config {}", saved_path.display()))
        }
    };
    let resuming = saved.is_some();
    let config = config_of(&args, saved.as_ref(), &name)?;
    if args.print_config {
        print!("{}", config.to_toml());
        return Ok(());
    }
    if resuming {
        check_resumed_budget(&args, &dir, &name)?;
    }
    dir.create()?;
    let _lock = dir.lock()?;
    let display = LoopDisplay::new();
    if resuming {
        let removed = dir.clean_after_crash()?;
        if removed > 0 {
            display.line(&format!(
                "removed {removed} unfinished files left by a crash"
            ));
        }
        if truncate_torn_line(&dir.metrics())? {
            display.line("cut a torn last line off metrics.jsonl");
        }
    }
    let text = format!(
        "# The config of this run (every key; see configs/default.toml for their meaning).\n{}",
        config.to_toml()
    );
    rundir::layout::write_atomically(&saved_path, text.as_bytes())
        .with_context(|| "cannot save the run config")?;
    if let Some(trainer) = &store_trainer {
        trainer.put_config(&text)?;
    }
    let mut config = config;
    config.resolve_auto_threads(std::thread::available_parallelism().map_or(1, |n| n.get()));
    config.fix_threads_if_deterministic(tch::get_num_threads().max(1) as usize);
    train::device::set_threads(config.train.threads);
    if config.run.minutes == 0.0 {
        display.line(&match config.run.generations {
            0 => "no time limit (run.minutes = 0): the run goes on until Ctrl-C".to_string(),
            g => format!("no time limit (run.minutes = 0): the run stops after generation {g}"),
        });
    }
    let driver = Driver::open(dir, config, display)?;
    match store_trainer {
        Some(trainer) => driver.attach_store(trainer)?.run(),
        None => driver.run(),
    }
}
