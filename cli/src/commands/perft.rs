//! `loazero perft`: leaf counts of the legal game tree.

use crate::args::GameArgs;
use anyhow::Result;
use std::time::Instant;

/// Arguments of `loazero perft`.
#[derive(clap::Args)]
pub struct Args {
    /// Depth in plies.
    #[arg(long)]
    pub depth: u32,
    /// The variant and rules (`--variant`, `--rules`).
    #[command(flatten)]
    pub game: GameArgs,
    /// Start from this position (position text, e.g.
    /// "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b") instead of the variant's start.
    #[arg(long)]
    pub position: Option<String>,
    /// Also print the leaf count below each root move.
    #[arg(long)]
    pub divide: bool,
}

/// Prints timing to stderr and the leaf count alone as the last line of stdout.
pub fn run(args: Args) -> Result<()> {
    let pos = args.game.position(args.position.as_deref())?;
    let rules = args.game.rules;
    let start = Instant::now();
    let total = if args.divide {
        let mut total = 0;
        for (mv, n) in loa::perft::perft_divide(&pos, &rules, args.depth) {
            println!("{mv}: {n}");
            total += n;
        }
        total
    } else {
        loa::perft::perft(&pos, &rules, args.depth)
    };
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "perft({}) = {total} in {secs:.3} s ({:.1} M leaves/s)",
        args.depth,
        total as f64 / secs.max(1e-9) / 1e6
    );
    println!("{total}");
    Ok(())
}
