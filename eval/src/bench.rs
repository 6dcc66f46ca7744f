//! The `loazero bench alphabeta` workload (speed: `bench` measures speed, `benchmark`
//! strength): a fixed set of positions searched for a fixed time each; reports nodes per
//! second and the depth reached.

use crate::config::AlphaBetaConfig;
use crate::search::{score_text, AlphaBeta, SearchLimits};
use loa::{Game, Rules, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

/// The bench positions: each variant's start and positions after 8, 16 and 24 random
/// plies (fixed seed, so the set never changes).
pub fn positions() -> Vec<Game> {
    let rules = Rules::classic();
    let mut rng = SmallRng::seed_from_u64(2024);
    let mut out = Vec::new();
    for variant in Variant::ALL {
        out.push(Game::new(variant, rules));
        for plies in [8, 16, 24] {
            loop {
                let mut g = Game::new(variant, rules);
                for _ in 0..plies {
                    if g.is_over() {
                        break;
                    }
                    let moves = g.legal_moves();
                    g.play(moves[rng.random_range(0..moves.len())])
                        .expect("legal");
                }
                if !g.is_over() {
                    out.push(g);
                    break;
                }
            }
        }
    }
    out
}

/// One bench line.
#[derive(Clone, Debug)]
pub struct BenchRow {
    /// The position's variant.
    pub variant: Variant,
    /// The position (text form).
    pub position: String,
    /// Depth of the last completed iteration.
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
    /// Wall time of the search in seconds.
    pub seconds: f64,
    /// Score for the side to move.
    pub score: i32,
}

impl std::fmt::Display for BenchRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:<15} depth {:>2}  {:>10} nodes  {:>6.3} s  {:>6.2} M nodes/s  score {:<10} {}",
            self.variant.name(),
            self.depth,
            self.nodes,
            self.seconds,
            self.nodes as f64 / self.seconds.max(1e-9) / 1e6,
            score_text(self.score),
            self.position
        )
    }
}

/// Searches every bench position for `ms` milliseconds (fresh tables each) with
/// `config`, calling `row` after each.
pub fn run(ms: u64, config: &AlphaBetaConfig, mut row: impl FnMut(&BenchRow)) -> Vec<BenchRow> {
    let mut rows = Vec::new();
    for game in positions() {
        let mut search = AlphaBeta::new(config.clone());
        let r = search
            .search_game(&game, SearchLimits::time(Duration::from_millis(ms)))
            .expect("bench positions are not over");
        let line = BenchRow {
            variant: game.position().variant(),
            position: game.position().to_text(),
            depth: r.depth,
            nodes: r.nodes,
            seconds: r.elapsed.as_secs_f64(),
            score: r.score,
        };
        row(&line);
        rows.push(line);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_benched() {
        let rows = run(
            3,
            &AlphaBetaConfig {
                tt_mib: 1,
                ..Default::default()
            },
            |_| {},
        );
        assert_eq!(rows.len(), 4 * Variant::ALL.len());
        for variant in Variant::ALL {
            let mine: Vec<_> = rows.iter().filter(|r| r.variant == variant).collect();
            assert_eq!(mine.len(), 4, "{variant}");
            assert!(
                mine.iter().all(|r| r.nodes > 0 && r.depth >= 1),
                "{variant}"
            );
        }
    }
}
