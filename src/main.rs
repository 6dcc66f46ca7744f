//! The `loazero` command line: one subcommand per file in `commands/`, each a thin layer
//! that parses arguments and calls the crates.

mod commands;
mod interrupt;
mod memory;
mod plot;
mod progress;
mod run;
mod serve;

use clap::Parser;

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
    let cli = Cli::parse();
    if let Err(err) = commands::run(cli.command) {
        if interrupt::is_interrupted(&err) {
            eprintln!("{err:#}");
            std::process::exit(130);
        }
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}
