//! Where the games of a match start: given positions, or random balanced openings.

use crate::search::{AlphaBeta, SearchLimits};
use crate::AlphaBetaConfig;
use anyhow::{anyhow, bail, Context, Result};
use loa::{Game, GameRecord, Move, Rules, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::path::Path;

/// Where openings come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Openings {
    /// Random balanced openings of this many plies: random legal plies from the start,
    /// rejected if the game is over, if the position was already drawn, or if a depth-2
    /// alpha-beta search scores it beyond ±`max_eval` for the side to move.
    Random {
        /// Plies per opening.
        plies: u32,
        /// Largest accepted |score| of the quick search (evaluation units). Default 150.
        max_eval: i32,
    },
    /// Given move sequences (each played from the variant's start).
    List(Vec<Vec<Move>>),
}

impl std::fmt::Display for Openings {
    /// `random:K` as [`Openings::parse`] reads it back, or the number of given openings.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Openings::Random { plies, .. } => write!(f, "random:{plies}"),
            Openings::List(list) => write!(f, "{} given openings", list.len()),
        }
    }
}

impl Openings {
    /// Parses `random:K` or a file name (one opening per line as a move sequence; `#`
    /// comments), checking every move under `variant` and `rules`.
    pub fn parse(text: &str, variant: Variant, rules: Rules) -> Result<Openings> {
        if let Some(k) = text.strip_prefix("random:") {
            let plies = k
                .trim()
                .parse()
                .map_err(|_| anyhow!("openings '{text}': '{k}' is not a number of plies"))?;
            return Ok(Openings::Random {
                plies,
                max_eval: 150,
            });
        }
        let path = Path::new(text);
        let content = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read openings file {}", path.display()))?;
        let mut list = Vec::new();
        for (i, line) in content.lines().enumerate() {
            let record = GameRecord::parse(line)
                .map_err(|e| anyhow!("{} line {}: {e}", path.display(), i + 1))?;
            if record.moves.is_empty() {
                continue;
            }
            let mut game = Game::new(variant, rules);
            for m in &record.moves {
                game.play_text(m)
                    .map_err(|e| anyhow!("{} line {}: {e}", path.display(), i + 1))?;
            }
            if game.is_over() {
                bail!(
                    "{} line {}: the opening ends the game",
                    path.display(),
                    i + 1
                );
            }
            list.push(game.moves().to_vec());
        }
        if list.is_empty() {
            bail!("openings file {} holds no opening", path.display());
        }
        Ok(Openings::List(list))
    }

    /// `count` openings (cycling through a list if it is shorter).
    pub fn generate(
        &self,
        count: usize,
        variant: Variant,
        rules: Rules,
        seed: u64,
    ) -> Vec<Vec<Move>> {
        match self {
            Openings::List(list) => (0..count).map(|i| list[i % list.len()].clone()).collect(),
            Openings::Random { plies, max_eval } => {
                random_openings(count, *plies, *max_eval, variant, rules, seed)
            }
        }
    }
}

fn random_openings(
    count: usize,
    plies: u32,
    max_eval: i32,
    variant: Variant,
    rules: Rules,
    seed: u64,
) -> Vec<Vec<Move>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut search = AlphaBeta::new(AlphaBetaConfig {
        tt_mib: 1,
        ..Default::default()
    });
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    let mut attempts = 0usize;
    while out.len() < count {
        attempts += 1;
        let mut game = Game::new(variant, rules);
        for _ in 0..plies {
            if game.is_over() {
                break;
            }
            let moves = game.legal_moves();
            let mv = moves[rng.random_range(0..moves.len())];
            game.play(mv).expect("legal");
        }
        if game.is_over() {
            continue;
        }
        // Past many attempts (few distinct openings exist), accept duplicates.
        let fresh = seen.insert(game.position().hash());
        if !fresh && attempts < 50 * count + 1000 {
            continue;
        }
        if attempts < 50 * count + 1000 {
            match search.search_game(&game, SearchLimits::depth(2)) {
                Ok(r) if r.score.abs() <= max_eval => {}
                _ => continue,
            }
        }
        out.push(game.moves().to_vec());
    }
    out
}
