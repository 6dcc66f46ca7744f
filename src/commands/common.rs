//! Arguments shared by several subcommands.

use anyhow::{anyhow, Result};
use clap::Args;
use eval::arena::MatchConfig;
use loa::{Position, Rules, Variant};

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
