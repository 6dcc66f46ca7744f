//! One module per subcommand that needs torch; each exposes `Args` (clap) and
//! `run(Args)`. The torch-free subcommands are the `loazero` crate's
//! ([`loazero::commands`]), flattened into [`Command`] and run with players that load
//! networks. A command does not import another command: what two share lives below them
//! (`crate::pairings`, `crate::run`, `loazero::args`, the library crates).

pub mod bench;
pub mod benchmark;
pub mod export;
pub mod heldout;
pub mod info;
pub mod ladder;
pub mod plot;
pub mod run;
pub mod selfplay;
pub mod serve;
pub mod train_eval;

use clap::Subcommand;
use loazero::players::Players;

/// Every subcommand.
#[derive(Subcommand)]
pub enum Command {
    /// The subcommands that need no torch (run by the `loazero` binary itself).
    #[command(flatten)]
    TorchFree(loazero::commands::Command),
    /// How fast? (`benchmark` asks how strong.) movegen (perft leaves/s), mcts
    /// (simulations/s; with --model the self-play/raw-forward ratio), alphabeta (nodes/s),
    /// net (forward and training throughput, % of the CPU peak).
    Bench(bench::Args),
    /// Is the model stronger than alpha-beta? Equal-time and fixed-depth matches, a table,
    /// results.csv/results.md and a PNG of Elo against time per move.
    Benchmark(benchmark::Args),
    /// Does more training still pay? A run's models from several training times against
    /// alpha-beta at equal time per move: a table, ladder.csv/ladder.md and a PNG of Elo
    /// against training time (resumable).
    Ladder(ladder::Args),
    /// Play self-play games with MCTS; write training shards and game records.
    Selfplay(selfplay::Args),
    /// Versions, the torch library in use, threads and CUDA availability.
    Info(info::Args),
    /// Export a model: safetensors weights, TorchScript module, model.json.
    Export(export::Args),
    /// Held-out move matching: score a model's policy against alpha-beta's best moves
    /// (`--score MODEL`), or make the set (`--out FILE`).
    Heldout(heldout::Args),
    /// The training loop: self-play → train → gate → rate, resumable (see README).
    Run(run::Args),
    /// Train the learned alpha-beta evaluation (alphabeta:eval=FILE) from a run's
    /// self-play shards into its models/nnue-NNNN.safetensors.
    TrainEval(train_eval::Args),
    /// Write PNG learning curves of a run directory (Elo, losses, throughput).
    Plot(plot::Args),
    /// The web app: play, analyse, replay games and watch runs in the browser, and its
    /// JSON API (docs/api.md).
    Serve(serve::Args),
}

/// Runs one subcommand.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::TorchFree(c) => loazero::commands::run(c, players()),
        Command::Bench(a) => bench::run(a),
        Command::Benchmark(a) => benchmark::run(a),
        Command::Ladder(a) => ladder::run(a),
        Command::Selfplay(a) => selfplay::run(a),
        Command::Info(a) => info::run(a),
        Command::Export(a) => export::run(a),
        Command::Heldout(a) => heldout::run(a),
        Command::Run(a) => run::run(a),
        Command::TrainEval(a) => train_eval::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Serve(a) => serve::run(a),
    }
}

/// The players of this binary: model players load their networks
/// ([`train::players::eval_player_factory`]).
pub fn players() -> Players {
    Players {
        factory: train::players::eval_player_factory,
        loads_networks: true,
    }
}
