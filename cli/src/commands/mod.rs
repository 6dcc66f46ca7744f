//! The subcommands that need no torch, one module each (`Args` and `run`). The `loazero`
//! binary parses and runs exactly these itself, so they start without loading libtorch;
//! `loazero-torch` flattens [`Command`] into its own and runs them with players that can
//! load networks. A command does not import another command: what two share lives below
//! them ([`crate::args`], [`crate::players`], the library crates).

pub mod bestmove;
pub mod engine;
pub mod match_cmd;
pub mod moves;
pub mod perft;
pub mod ratings;
pub mod replay;
pub mod show;

use crate::players::Players;
use clap::Subcommand;
use eval::PlayerSpec;

/// Every torch-free subcommand.
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
    /// Play a match between two players: records, results file, W/D/L and Elo.
    #[command(name = "match")]
    Match(match_cmd::Args),
    /// Bradley–Terry Elo ratings over every game in a directory of results files.
    Ratings(ratings::Args),
    /// Print the move a player chooses in a position (the move is the last line).
    Bestmove(bestmove::Args),
    /// Line protocol on stdin/stdout for GUIs and scripts (see eval/PROTOCOL.md).
    Engine(engine::Args),
}

impl Command {
    /// The player specs the command line gives, as typed (`match`'s `--a` and `--b`,
    /// `bestmove`'s and `engine`'s `--player`).
    pub fn player_specs(&self) -> Vec<&str> {
        match self {
            Command::Match(a) => vec![&a.a, &a.b],
            Command::Bestmove(a) => vec![&a.player],
            Command::Engine(a) => vec![&a.player],
            Command::Perft(_)
            | Command::Moves(_)
            | Command::Replay(_)
            | Command::Show(_)
            | Command::Ratings(_) => Vec::new(),
        }
    }

    /// Whether a player of the command line loads a network ([`PlayerSpec::network`]), so
    /// that the command needs torch. A spec that does not parse loads nothing: the command
    /// reports it wherever it runs.
    pub fn loads_network(&self) -> bool {
        self.player_specs()
            .into_iter()
            .any(|text| PlayerSpec::parse(text).is_ok_and(|spec| spec.network().is_some()))
    }
}

/// True if `name` is one of [`Command`]'s subcommands (aliases not included).
pub fn is_torch_free(name: &str) -> bool {
    Command::augment_subcommands(clap::Command::new("loazero"))
        .get_subcommands()
        .any(|c| c.get_name() == name)
}

/// Runs one torch-free subcommand; the commands that play build their players with
/// `players`.
pub fn run(command: Command, players: Players) -> anyhow::Result<()> {
    match command {
        Command::Perft(a) => perft::run(a),
        Command::Moves(a) => moves::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Show(a) => show::run(a),
        Command::Match(a) => match_cmd::run(a, players),
        Command::Ratings(a) => ratings::run(a),
        Command::Bestmove(a) => bestmove::run(a, players),
        Command::Engine(a) => engine::run(a, players),
    }
}

#[cfg(test)]
mod tests {
    use super::{is_torch_free, Command};
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[command(subcommand)]
        command: Command,
    }

    fn loads_network(args: &[&str]) -> bool {
        Line::try_parse_from(std::iter::once("loazero").chain(args.iter().copied()))
            .unwrap()
            .command
            .loads_network()
    }

    /// The dispatch reads the parsed player specs: a learned alpha-beta evaluation under a
    /// run's `models/` loads no network, a `model:` or `ubfm:path=` player does.
    #[test]
    fn network_players_are_found_in_the_parsed_specs() {
        let learned = "alphabeta:depth=2,eval=runs/default/models/nnue-0001.safetensors";
        for (args, network) in [
            (vec!["engine", "--player", learned], false),
            (vec!["bestmove", "--player", learned], false),
            (
                vec!["engine", "--player", "ubfm:evaluator=heuristic,ms=20"],
                false,
            ),
            (vec!["match", "--a", "random", "--b", learned], false),
            (vec!["perft", "--depth", "1"], false),
            (vec!["engine", "--player", "model:path=m.safetensors"], true),
            (
                vec!["bestmove", "--player", "UBFM:PATH=m.safetensors"],
                true,
            ),
            (
                vec!["match", "--a", "model:path=m.st", "--b", learned],
                true,
            ),
            (vec!["match", "--a", learned, "--b", "ubfm:path=m.st"], true),
            // Not a spec: it runs here and reports the error.
            (vec!["engine", "--player", "model:path=m.st,bogus=1"], false),
        ] {
            assert_eq!(loads_network(&args), network, "{args:?}");
        }
    }

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
