//! The subcommands that need no torch. The `loazero` binary (`src/light.rs`) parses and
//! runs exactly these itself, so they start without loading libtorch; `loazero-torch`
//! (`src/main.rs`) flattens them into its `commands::Command`.

use clap::Subcommand;

/// Every torch-free subcommand.
#[derive(Subcommand)]
pub enum Command {
    /// Count the leaves of the legal game tree (move generator check and benchmark).
    Perft(super::perft::Args),
    /// Print the legal moves of positions given as text (one line per position).
    Moves(super::moves::Args),
    /// Replay a game record, checking every move, and print the result.
    Replay(super::replay::Args),
    /// Draw a position for a human.
    Show(super::show::Args),
    /// Play a match between two players: records, results file, W/D/L and Elo.
    #[command(name = "match")]
    Match(super::match_cmd::Args),
    /// Bradley–Terry Elo ratings over every game in a directory of results files.
    Ratings(super::ratings::Args),
    /// Print the move a player chooses in a position (the move is the last line).
    Bestmove(super::bestmove::Args),
    /// Line protocol on stdin/stdout for GUIs and scripts (see eval/PROTOCOL.md).
    Engine(super::engine::Args),
}

/// True if `name` is one of [`Command`]'s subcommands (aliases not included).
#[allow(dead_code)] // used by src/light.rs only; loazero-torch runs everything itself
pub fn is_torch_free(name: &str) -> bool {
    Command::augment_subcommands(clap::Command::new("loazero"))
        .get_subcommands()
        .any(|c| c.get_name() == name)
}

/// Runs one torch-free subcommand.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Perft(a) => super::perft::run(a),
        Command::Moves(a) => super::moves::run(a),
        Command::Replay(a) => super::replay::run(a),
        Command::Show(a) => super::show::run(a),
        Command::Match(a) => super::match_cmd::run(a),
        Command::Ratings(a) => super::ratings::run(a),
        Command::Bestmove(a) => super::bestmove::run(a),
        Command::Engine(a) => super::engine::run(a),
    }
}

#[cfg(test)]
mod tests {
    use super::is_torch_free;

    #[test]
    fn torch_free_names() {
        for name in [
            "perft", "moves", "replay", "show", "match", "ratings", "bestmove", "engine",
        ] {
            assert!(is_torch_free(name), "{name}");
        }
        for name in [
            "run",
            "selfplay",
            "info",
            "export",
            "bench",
            "benchmark",
            "ladder",
            "plot",
            "serve",
            "help",
            "--help",
            "",
        ] {
            assert!(!is_torch_free(name), "{name}");
        }
    }
}
