//! `loazero replay`: replays a game record, checking every move.

use super::common::GameArgs;
use anyhow::{anyhow, bail, Context, Result};
use loa::{Game, GameRecord};
use std::path::PathBuf;

/// Arguments of `loazero replay`.
#[derive(clap::Args)]
pub struct Args {
    /// The game record (numbered move pairs, e.g. "1. c8-c6 h4-f2 2. g8-g6 h2-e2").
    pub file: PathBuf,
    #[command(flatten)]
    pub game: GameArgs,
    /// Start from this position (position text) instead of the variant's start.
    #[arg(long)]
    pub position: Option<String>,
    /// Print the position after every ply.
    #[arg(long)]
    pub verbose: bool,
}

/// Prints `result: black|white|draw|none` as the last line; an illegal move is an error
/// naming its ply and the position.
pub fn run(args: Args) -> Result<()> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read game record {}", args.file.display()))?;
    let record = GameRecord::parse(&text).map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
    let start = args.game.position(args.position.as_deref())?;
    let mut game = Game::from_position(start, args.game.rules);
    if args.verbose {
        println!("ply 0: {}", game.position().to_text());
    }
    for (i, token) in record.moves.iter().enumerate() {
        let ply = i + 1;
        let before = game.position().to_text();
        if let Err(e) = game.play_text(token) {
            bail!(
                "{}: ply {ply} ({} {token}): {e}\nposition before ply {ply}: {before}",
                args.file.display(),
                game.position().to_move()
            );
        }
        if args.verbose {
            println!("ply {ply}: {token} -> {}", game.position().to_text());
        }
    }
    let result = game.outcome().map_or("none", |o| o.name());
    println!("result: {result}");
    Ok(())
}
