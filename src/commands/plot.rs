//! `loazero plot`: PNG learning curves of a run directory (see [`crate::plot`]).

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `loazero plot`.
#[derive(clap::Args)]
pub struct Args {
    /// The run directory (as written by `loazero run`); its `metrics.jsonl` is read.
    #[arg(value_name = "RUN_DIR")]
    pub dir: PathBuf,
    /// Where to write the PNG files (default RUN_DIR/plots; created if missing).
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
pub fn run(args: Args) -> Result<()> {
    let written =
        crate::plot::write_plots(&args.dir, args.out.as_deref(), (args.width, args.height))?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}
