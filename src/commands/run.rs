//! `loazero run`: the self-play → train → gate → rate loop over a run directory.

use crate::run::config::RunConfig;
use crate::run::display::LoopDisplay;
use crate::run::driver::Driver;
use crate::run::layout::{truncate_torn_line, RunDir};
use anyhow::{bail, Context, Result};
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
    /// Override a config key, e.g. `--set selfplay.simulations=100` (repeatable). On a
    /// resumed run the change is saved in its config.toml.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Total training minutes of the run, counted across restarts (run.minutes; 0 = no
    /// limit).
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Stop after this generation (run.generations; 0 = no limit).
    #[arg(long)]
    pub generations: Option<u32>,
    /// Print the config the run would use and exit.
    #[arg(long)]
    pub print_config: bool,
}

/// Starts or resumes the run.
pub fn run(args: Args) -> Result<()> {
    // Before anything is written: a signal is then always a stop at a safe point.
    crate::interrupt::install();
    let dir = RunDir::new(&args.dir);
    let saved = dir.config();
    let mut sets = args.sets.clone();
    if let Some(m) = args.minutes {
        sets.push(format!("run.minutes={m:?}"));
    }
    if let Some(g) = args.generations {
        sets.push(format!("run.generations={g}"));
    }
    let resuming = saved.exists();
    let config = if resuming {
        if let Some(c) = &args.config {
            let given = RunConfig::load(Some(c), &[])?;
            let mine = RunConfig::load(Some(&saved), &[])?;
            if given != mine {
                bail!(
                    "{} already has its config ({}), which differs from {}: resume without \
                     --config (change single keys with --set), or choose another --dir",
                    args.dir.display(),
                    saved.display(),
                    c.display()
                );
            }
        }
        let config = RunConfig::load(Some(&saved), &sets)?;
        if let Some(v) = args.variant {
            if v != config.variant() {
                bail!(
                    "{} is a {} run; it cannot go on as {v} (choose another --dir)",
                    args.dir.display(),
                    config.variant()
                );
            }
        }
        config
    } else {
        match (args.variant, &args.config) {
            (Some(v), None) => RunConfig::from_toml_str(
                crate::run::config::variant_toml(v),
                &format!("configs/{}.toml (embedded)", v.name()),
                &sets,
            )?,
            (Some(v), Some(_)) => {
                sets.insert(0, format!("selfplay.variant={:?}", v.name()));
                RunConfig::load(args.config.as_deref(), &sets)?
            }
            (None, _) => RunConfig::load(args.config.as_deref(), &sets)?,
        }
    };
    if args.print_config {
        print!("{}", config.to_toml());
        return Ok(());
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
    crate::run::layout::write_atomically(&saved, text.as_bytes())
        .with_context(|| "cannot save the run config")?;
    let mut config = config;
    config.resolve_auto_threads(std::thread::available_parallelism().map_or(1, |n| n.get()));
    config.fix_threads_if_deterministic(tch::get_num_threads().max(1) as usize);
    train::device::set_threads(config.train.threads);
    Driver::open(dir, config, display)?.run()
}
