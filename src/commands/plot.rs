//! `loazero plot`: PNG learning curves of a run directory or of a run kept in a store (see
//! [`crate::plot`]).

use anyhow::Result;
use loazero::args::StoreViewArgs;
use std::path::PathBuf;

/// Arguments of `loazero plot`.
#[derive(clap::Args)]
pub struct Args {
    /// The run directory (as written by `loazero run`); its `metrics.jsonl` is read. Also
    /// `plot RUN_DIR`.
    #[arg(
        long = "dir",
        value_name = "RUN_DIR",
        required_unless_present_any = ["store", "dir_positional"],
        conflicts_with_all = ["store", "dir_positional"]
    )]
    pub dir: Option<PathBuf>,
    /// The run directory, as older versions took it (`--dir` is the spelling of every
    /// command).
    #[arg(value_name = "RUN_DIR", conflicts_with = "store", hide = true)]
    pub dir_positional: Option<PathBuf>,
    /// `--store` and `--cache`: a run kept in a store.
    #[command(flatten)]
    pub view: StoreViewArgs,
    /// Where to write the PNG files (default RUN_DIR/plots, or CACHE/plots with --store;
    /// created if missing).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Width of every image in pixels.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(200..=10000))]
    pub width: u32,
    /// Height of every image in pixels.
    #[arg(long, default_value_t = 800, value_parser = clap::value_parser!(u32).range(200..=10000))]
    pub height: u32,
}

/// Writes the plots and prints the path of each.
pub fn run(mut args: Args) -> Result<()> {
    if args.dir.is_none() && args.dir_positional.is_some() {
        loazero::args::note_older_spelling("plot RUN_DIR", "plot --dir RUN_DIR");
        args.dir = args.dir_positional.take();
    }
    let (dir, out) = match (&args.view.store, &args.dir) {
        (Some(spec), _) => {
            let view = rundir::store_view::materialise(spec, args.view.cache.as_deref())?;
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| view.cache().join("plots"));
            (view.root().to_path_buf(), Some(out))
        }
        (None, Some(dir)) => (dir.clone(), args.out.clone()),
        (None, None) => anyhow::bail!("name a run directory or --store URL"),
    };
    let written = crate::plot::write_plots(&dir, out.as_deref(), (args.width, args.height))?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}
