//! `loazero show`: draws a position for a human.

use crate::args::GameArgs;
use anyhow::Result;

/// Arguments of `loazero show`.
#[derive(clap::Args)]
pub struct Args {
    /// The position (position text); the variant's start position if omitted.
    #[arg(long)]
    pub position: Option<String>,
    /// The variant and rules (`--variant`, `--rules`).
    #[command(flatten)]
    pub game: GameArgs,
}

/// Prints the board with ranks and files labelled, then the position's status.
pub fn run(args: Args) -> Result<()> {
    let pos = args.game.position(args.position.as_deref())?;
    println!("{}", pos.to_diagram());
    match pos.outcome(&args.game.rules) {
        Some(o) => println!("game over: {}", o.name()),
        None => println!("{} legal moves", pos.legal_moves(&args.game.rules).len()),
    }
    Ok(())
}
