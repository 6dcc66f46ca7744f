//! `loazero-torch`: every subcommand, linked with libtorch (the `loazero` binary execs it
//! for the commands that need torch; see `cli/src/main.rs`). One subcommand per file in
//! `commands/` (the torch-free ones in the `loazero` crate's), each a thin layer that
//! parses arguments and calls the crates; `run/` is the training loop, `serve/` the web
//! app, `plot.rs` the PNG figures.

mod commands;
mod memory;
mod metrics_view;
mod pairings;
mod plot;
mod run;
mod serve;

use clap::Parser;
use loazero::interrupt;

#[derive(Parser)]
#[command(
    name = "loazero",
    version,
    about = "AlphaZero-style self-play trainer for Lines of Action",
    long_about = "AlphaZero-style self-play trainer for Lines of Action.\n\n\
        Train with `loazero run`, play and rate models with `match`, `ratings`, `bestmove` \
        and `engine`, check the rules engine with `perft`, `moves`, `replay` and `show`."
)]
struct Cli {
    #[command(subcommand)]
    command: commands::Command,
}

fn main() {
    let cli: Cli = loazero::usage::parse_or_exit(std::env::args_os().collect());
    if let Err(err) = commands::run(cli.command) {
        if interrupt::is_interrupted(&err) {
            eprintln!("{err:#}");
            std::process::exit(130);
        }
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}
