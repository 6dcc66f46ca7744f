//! `loazero engine`: the line protocol of eval/PROTOCOL.md on stdin/stdout.

use crate::players::Players;
use anyhow::Result;
use eval::protocol::{Reply, Session};
use eval::PlayerSpec;
use std::io::{BufRead, Write};

/// Arguments of `loazero engine`.
#[derive(clap::Args)]
#[command(after_help = eval::player::kind::spec_help())]
pub struct Args {
    /// The engine's player (a player spec: every kind and key below) until a `player`
    /// command changes it.
    #[arg(long, default_value = eval::protocol::DEFAULT_PLAYER)]
    pub player: String,
}

/// Reads commands until `quit` or end of input; answers every command (errors as
/// `error …` lines), flushing after each.
pub fn run(args: Args, players: Players) -> Result<()> {
    let spec = PlayerSpec::parse(&args.player)?;
    let factory = players.whole_machine_factory();
    let mut session = Session::new(&factory, spec);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                writeln!(out, "error cannot read input: {e}")?;
                out.flush()?;
                continue;
            }
        };
        let (lines, quit) = match session.handle(&line) {
            Reply::Lines(l) => (l, false),
            Reply::Quit(l) => (l, true),
        };
        for l in lines {
            writeln!(out, "{l}")?;
        }
        out.flush()?;
        if quit {
            break;
        }
    }
    Ok(())
}
