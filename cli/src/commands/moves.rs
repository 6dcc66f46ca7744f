//! `loazero moves`: legal moves of positions, for scripts.

use crate::args::GameArgs;
use anyhow::Result;
use loa::Position;
use std::io::{BufRead, Write};

/// Arguments of `loazero moves`.
#[derive(clap::Args)]
pub struct Args {
    /// The variant and rules (`--variant`, `--rules`).
    #[command(flatten)]
    pub game: GameArgs,
    /// The position (position text). Without it, positions are read from stdin, one per
    /// line, and each gets one output line (an error line `error: …` for a bad one).
    #[arg(long)]
    pub position: Option<String>,
}

fn moves_line(pos: &Position, args: &Args) -> String {
    if pos.outcome(&args.game.rules).is_some() {
        return String::new();
    }
    pos.legal_moves(&args.game.rules)
        .iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints the legal moves space-separated on one line per position (an empty line for a
/// finished game). With stdin input the exit status is non-zero if any line was bad.
pub fn run(args: Args) -> Result<()> {
    if let Some(text) = &args.position {
        let pos = args.game.position(Some(text))?;
        println!("{}", moves_line(&pos, &args));
        return Ok(());
    }
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut bad = 0usize;
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line?;
        match Position::from_text(&line, args.game.variant) {
            Ok(pos) => writeln!(out, "{}", moves_line(&pos, &args))?,
            Err(e) => {
                bad += 1;
                writeln!(out, "error: line {}: {e}", i + 1)?;
            }
        }
    }
    out.flush()?;
    if bad > 0 {
        anyhow::bail!("{bad} input line(s) were not valid positions");
    }
    Ok(())
}
