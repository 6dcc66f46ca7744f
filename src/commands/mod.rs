//! One module per subcommand. Each exposes `Args` (clap) and `run(Args)`.

pub mod bench;
pub mod common;
pub mod moves;
pub mod perft;
pub mod replay;
pub mod show;

use clap::Subcommand;

/// Every subcommand.
#[derive(Subcommand)]
pub enum Command {
    /// Count the leaves of the legal game tree (move generator check and benchmark).
    Perft(perft::Args),
    /// Print the legal moves of positions given as text (one line per position).
    Moves(moves::Args),
    /// Replay a game record, checking every move, and print the result.
    Replay(replay::Args),
    /// Draw a position for a human.
    Show(show::Args),
    /// Speed benchmarks: movegen (perft leaves/s).
    Bench(bench::Args),
}

/// Runs one subcommand.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Perft(a) => perft::run(a),
        Command::Moves(a) => moves::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Show(a) => show::run(a),
        Command::Bench(a) => bench::run(a),
    }
}
