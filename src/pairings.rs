//! A model's pairings against alpha-beta, as `benchmark` and `ladder` play them: how the
//! model plays ([`PairingArgs`], [`Search`]) and the progress lines of their games.

use crate::run::algorithm::Algorithm;
use anyhow::Result;
use eval::arena::GameResult;
use eval::elo::Tally;
use eval::player::spec_builders;
use eval::strength::{self, PairingResult};
use loazero::args::MatchGameArgs;
use std::sync::Mutex;
use std::time::Instant;

/// How a model's pairings against alpha-beta are played: shared by `benchmark` and
/// `ladder`.
#[derive(clap::Args)]
pub struct PairingArgs {
    /// Device of the model: cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    pub device: selfplay::Device,
    /// The model's search: mcts (the `model:` player, policy and value heads) or ubfm (the
    /// `ubfm:` player, the value head alone). Default: mcts, or, in `ladder`, the search
    /// of the run's `run.algorithm` (ubfm for descent).
    #[arg(long, value_enum)]
    pub search: Option<Search>,
    #[command(flatten)]
    pub play: MatchGameArgs,
}

/// The search a model plays with against alpha-beta.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Search {
    /// MCTS with the policy and value heads (the `model:` player): AlphaZero models.
    Mcts,
    /// Unbounded best-first minimax on the value head (the `ubfm:` player): Descent models.
    Ubfm,
}

impl Search {
    /// The search that plays a model of `algorithm` by default.
    pub fn of(algorithm: Algorithm) -> Search {
        match algorithm {
            Algorithm::Alphazero => Search::Mcts,
            Algorithm::Descent => Search::Ubfm,
        }
    }

    /// The player spec of the model at `path` with this search, `count` simulations or
    /// iterations per move, on `device`.
    pub fn spec(
        self,
        path: &std::path::Path,
        count: u32,
        device: selfplay::Device,
    ) -> Result<eval::player::PlayerSpec> {
        match self {
            Search::Mcts => spec_builders::model_spec(path, count, device),
            Search::Ubfm => spec_builders::ubfm_spec(path, count, device),
        }
    }
}

/// The progress of a pairing's games on stderr, each line opening with `prefix` and the
/// pairing: every game when a pairing has at most 50 (`games`), else one line every 10 s
/// and the last.
pub fn game_progress(
    games: usize,
    prefix: &str,
) -> impl Fn(&strength::Pairing, &GameResult, &Tally) + Sync + '_ {
    let last_line = Mutex::new(Instant::now());
    move |p, g, t| {
        let mut last = last_line.lock().expect("progress lock");
        if games <= 50 || last.elapsed().as_secs() >= 10 || t.games() as usize == games {
            *last = Instant::now();
            eprintln!(
                "{prefix}{}: game {}/{games}: {} ({} plies); model {}-{}-{} ({:.1}%)",
                p.level.label(),
                t.games(),
                g.result,
                g.plies,
                t.wins,
                t.draws,
                t.losses,
                100.0 * t.score()
            );
        }
    }
}

/// Says on stderr that a pairing is done or was reused from an earlier run (`reused`),
/// with its W-D-L and Elo (the last of `all`), the line opening with `prefix`.
pub fn report_pairing(prefix: &str, p: &strength::Pairing, all: &[PairingResult], reused: bool) {
    let r = all.last().expect("one result per pairing");
    eprintln!(
        "{prefix}{} {}: {}-{}-{}, Elo {}",
        p.level.label(),
        if reused { "(reused)" } else { "done" },
        r.tally.wins,
        r.tally.draws,
        r.tally.losses,
        r.elo_estimate()
    );
}
