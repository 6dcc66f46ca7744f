//! Arguments shared by several subcommands.

use anyhow::{anyhow, Result};
use clap::Args;
use loa::{Position, Rules, Variant};

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

impl GameArgs {
    /// The start position, or `text` parsed as a position of the variant.
    pub fn position(&self, text: Option<&str>) -> Result<Position> {
        match text {
            None => Ok(Position::start(self.variant, &self.rules)),
            Some(t) => Position::from_text(t, self.variant).map_err(|e| anyhow!("{e}")),
        }
    }
}
