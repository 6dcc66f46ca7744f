//! Arguments shared by several subcommands, of both binaries: each flag is declared once
//! here and flattened (`#[command(flatten)]`) where it is taken.

use anyhow::{anyhow, Result};
use clap::Args;
use eval::arena::MatchConfig;
use loa::{Position, Rules, Variant};
use std::path::PathBuf;

/// How the games of a match start and end, with the defaults of [`MatchConfig`] (one
/// default each): `match`, `benchmark` and `ladder` flatten it.
#[derive(Args, Clone, Debug)]
pub struct MatchGameArgs {
    /// Openings: random:K (random balanced openings of K plies) or a file with one move
    /// sequence per line.
    #[arg(long, default_value_t = MatchConfig::default().openings.to_string())]
    pub openings: String,
    /// Games still running after this many plies are scored a draw.
    #[arg(long, default_value_t = MatchConfig::default().max_plies)]
    pub max_plies: u32,
    /// Seed of the openings (every pairing, and every model, plays the same openings).
    #[arg(long, default_value_t = MatchConfig::default().seed)]
    pub seed: u64,
}

/// `--variant` and `--rules`.
#[derive(Args, Clone, Debug)]
pub struct GameArgs {
    /// Variant: standard, scrambled-eggs, 6x6, parachute, gemma, ambiloa or alveole.
    #[arg(long, default_value = "standard")]
    pub variant: Variant,
    /// Rules: a preset (classic = black first, mover wins a simultaneous connection, pass
    /// when stuck, draw on 3-fold repetition; icga = the same but a simultaneous connection
    /// is a draw), optionally followed by overrides, e.g.
    /// `classic,no-move=loss,repetition=off,ply-limit=300,first=white,simultaneous=draw`.
    #[arg(long, default_value = "classic")]
    pub rules: Rules,
}

/// The forms a `--store` value takes, for every help text that names them (one list).
#[macro_export]
macro_rules! store_forms {
    () => {
        "s3://BUCKET/PREFIX (endpoint, region and credentials from AWS_* variables), gs://…, \
         az://…, file:///PATH or a directory; docs/distributed.md"
    };
}

/// Where a `--cache` is by default, for every help text that says it.
#[macro_export]
macro_rules! cache_default {
    () => {
        "Default: ~/.cache/loazero/stores/<hash of the store URL> ($XDG_CACHE_HOME if set)."
    };
}

/// `--store URL` and `--cache DIR` of the commands that read a run kept in a store
/// (`plot`, `ratings`, `replay`): they read a local, read-only view of it
/// (`rundir::store_view`) as they read a run directory.
#[derive(Args, Clone, Debug, Default)]
#[allow(missing_docs)] // each field's clap help is its doc (built from the macros above)
pub struct StoreViewArgs {
    #[arg(
        long,
        value_name = "URL",
        help = concat!(
            "Read the run kept in this store (", store_forms!(), "), read-only: a local \
             view of the run (--cache) is brought up to date first"
        )
    )]
    pub store: Option<String>,
    #[arg(
        long,
        value_name = "DIR",
        requires = "store",
        help = concat!("With --store: the local cache of the view (CACHE/view). ", cache_default!())
    )]
    pub cache: Option<PathBuf>,
}

/// Says on standard error that `old` is an older spelling of `new`, still read, so that
/// scripts keep working and their authors learn the one spelling (every command that keeps
/// an older spelling says it this way).
pub fn note_older_spelling(old: &str, new: &str) {
    eprintln!(
        "note: `{old}` is an older spelling, still read; the spelling of every command is `{new}`"
    );
}

/// What `--threads N` means wherever it counts things that run at once (games, workers,
/// searches): N of them; absent or 0, one per core.
pub fn threads_or_all_cores(threads: Option<usize>) -> usize {
    match threads {
        None | Some(0) => eval::player::threads::all_cores(),
        Some(n) => n,
    }
}

/// Games of a match by default ([`MatchConfig`]'s), for every `--games` of a match.
pub fn default_match_games() -> usize {
    MatchConfig::default().games
}

impl GameArgs {
    /// The start position, or `text` parsed as a position of the variant.
    pub fn position(&self, text: Option<&str>) -> Result<Position> {
        match text {
            None => Ok(Position::start(self.variant, &self.rules)),
            Some(t) => Position::from_text(t, self.variant).map_err(|e| anyhow!("{e}")),
        }
    }
}

/// The comma-separated whole numbers of `text` (empty or `none`: no number); an error
/// names `flag`, the text and the part that is not a number.
pub fn parse_list<T: std::str::FromStr>(flag: &str, text: &str) -> Result<Vec<T>> {
    let text = text.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("none") {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|p| {
            p.trim()
                .parse()
                .map_err(|_| anyhow!("{flag} {text}: '{}' is not a whole number", p.trim()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        play: MatchGameArgs,
    }

    /// With no option given, the games are those of `MatchConfig::default()`.
    #[test]
    fn match_defaults_are_match_configs() {
        let cli = Cli::parse_from(["x"]);
        let default = MatchConfig::default();
        let openings =
            eval::Openings::parse(&cli.play.openings, Variant::Standard, Rules::classic()).unwrap();
        assert_eq!(openings, default.openings);
        assert_eq!(
            (cli.play.max_plies, cli.play.seed),
            (default.max_plies, default.seed)
        );
        assert_eq!(default_match_games(), default.games);
    }
}
