//! `loazero ratings`: Bradley–Terry Elo over every game in results files.

use anyhow::{bail, Result};
use eval::arena::read_results;
use eval::ratings::{fit, RatedGame};
use std::path::PathBuf;

/// Arguments of `loazero ratings`.
#[derive(clap::Args)]
pub struct Args {
    /// A directory searched recursively for results files (*.jsonl written by
    /// `loazero match`), or one such file.
    pub dir: PathBuf,
    /// Where to write the table as CSV (default DIR/ratings.csv, or beside the file).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Virtual draws added per pair of players that met (keeps ratings finite after a
    /// clean sweep).
    #[arg(long, default_value_t = 0.5)]
    pub prior_draws: f64,
}

/// Prints the table (anchor `random` = 0 when present) and writes the CSV.
pub fn run(args: Args) -> Result<()> {
    let results = read_results(&args.dir)?;
    if results.is_empty() {
        bail!("no game results found under {}", args.dir.display());
    }
    let games: Vec<RatedGame> = results
        .iter()
        .map(|r| {
            let (first, second) = r.first_and_second();
            RatedGame {
                first: first.to_string(),
                second: second.to_string(),
                score_first: r.score_first(),
            }
        })
        .collect();
    let table = fit(&games, args.prior_draws)?;
    println!("{} games", games.len());
    println!("{table}");
    let csv = args.csv.unwrap_or_else(|| {
        if args.dir.is_dir() {
            args.dir.join("ratings.csv")
        } else {
            args.dir.with_file_name("ratings.csv")
        }
    });
    selfplay::data::write_atomically(&csv, table.to_csv().as_bytes())?;
    println!("written: {}", csv.display());
    Ok(())
}
