//! The `loazero bench alphabeta` workload (speed: `bench` measures speed, `benchmark`
//! strength): a fixed set of positions searched for a fixed time each; reports nodes per
//! second and the depth reached. [`threads`] measures one player's search on 1, 2, …
//! threads over the same positions (`bench alphabeta --threads`, `bench mcts`).

use crate::config::AlphaBetaConfig;
use crate::learned::LearnedEval;
use crate::player::spec::Value;
use crate::player::{PlayerFactory, PlayerSpec};
use crate::search::{score_text, AlphaBeta, SearchLimits};
use anyhow::{Context, Result};
use loa::{Game, Rules, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
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
pub fn run(ms: u64, config: &AlphaBetaConfig, row: impl FnMut(&BenchRow)) -> Vec<BenchRow> {
    run_with(ms, config, None, false, row)
}

/// [`run`] with the leaves valued by `learned` (if given), and only over the positions of
/// the variants the learned evaluation covers when `covered_only` (so that the
/// hand-written evaluation can be measured on the same positions).
pub fn run_with(
    ms: u64,
    config: &AlphaBetaConfig,
    learned: Option<&Arc<LearnedEval>>,
    covered_only: bool,
    mut row: impl FnMut(&BenchRow),
) -> Vec<BenchRow> {
    let mut rows = Vec::new();
    for game in positions() {
        if covered_only && !crate::learned::supports(game.position().variant()) {
            continue;
        }
        let mut search = match learned {
            Some(net) => AlphaBeta::with_learned(config.clone(), net.clone()),
            None => AlphaBeta::new(config.clone()),
        };
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

/// One player's search on a number of threads over the bench positions.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadsRow {
    /// Threads of each search.
    pub threads: usize,
    /// Positions searched.
    pub positions: usize,
    /// Nodes (alpha-beta positions, MCTS simulations) of all searches.
    pub nodes: u64,
    /// Wall time of all searches in seconds.
    pub seconds: f64,
    /// Mean depth of the searches (alpha-beta: last completed iteration; MCTS: the
    /// principal variation's length).
    pub depth: f64,
}

impl ThreadsRow {
    /// Nodes a second.
    pub fn nodes_per_second(&self) -> f64 {
        self.nodes as f64 / self.seconds.max(1e-9)
    }
}

/// Searches every bench position of a variant in `variants` once with `spec` (a
/// searching player with its own limit, e.g. `ms=1000`) set to each thread count of
/// `threads`, a fresh player per position, and reports the totals of each count (calling
/// `row` after each). The same positions for every count, so the rows compare.
pub fn threads(
    spec: &PlayerSpec,
    factory: &PlayerFactory,
    threads: &[usize],
    variants: &[Variant],
    mut row: impl FnMut(&ThreadsRow),
) -> Result<Vec<ThreadsRow>> {
    let games: Vec<Game> = positions()
        .into_iter()
        .filter(|g| variants.contains(&g.position().variant()))
        .collect();
    anyhow::ensure!(!games.is_empty(), "no bench position of {variants:?}");
    let mut rows = Vec::new();
    for &n in threads {
        let spec = spec.with("threads", Some(Value::Int(n as i64)))?;
        let (mut nodes, mut seconds, mut depth) = (0u64, 0.0f64, 0.0f64);
        for game in &games {
            let mut player = factory.build(&spec, 1)?;
            let t = std::time::Instant::now();
            player
                .choose_move(game)
                .with_context(|| format!("{spec} at {}", game.position().to_text()))?;
            seconds += t.elapsed().as_secs_f64();
            let info = player
                .last_info()
                .with_context(|| format!("{spec} reports no search"))?;
            nodes += info.nodes;
            depth += info.depth.unwrap_or(0) as f64;
        }
        let line = ThreadsRow {
            threads: n,
            positions: games.len(),
            nodes,
            seconds,
            depth: depth / games.len() as f64,
        };
        row(&line);
        rows.push(line);
    }
    Ok(rows)
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

    #[test]
    fn threads_rows_count_every_position_for_every_thread_count() {
        let spec = PlayerSpec::parse("alphabeta:nodes=2000,tt=1").unwrap();
        let mut seen = Vec::new();
        let rows = threads(
            &spec,
            &PlayerFactory::new(),
            &[1, 2],
            &[Variant::Standard],
            |r| seen.push(r.threads),
        )
        .unwrap();
        assert_eq!(seen, vec![1, 2]);
        for r in &rows {
            assert_eq!(r.positions, 4);
            // Each search stops within a few nodes of its budget (shared out between the
            // threads); a forced or winning move is played without a search.
            assert!(r.nodes > 0 && r.nodes <= 4 * 2_002, "{r:?}");
            assert!(r.depth >= 1.0 && r.nodes_per_second() > 0.0, "{r:?}");
        }
        let err = threads(&spec, &PlayerFactory::new(), &[1], &[], |_| {}).unwrap_err();
        assert!(err.to_string().contains("no bench position"), "{err}");
    }
}

/// Nanoseconds per call of each evaluation step, over the positions of random games of the
/// covered variants (see [`evaluation_costs`]).
#[derive(Clone, Debug)]
pub struct EvaluationCosts {
    /// Positions timed.
    pub positions: usize,
    /// The hand-written evaluation.
    pub hand_written: f64,
    /// The learned evaluation with its accumulator refreshed from the pieces.
    pub learned_refreshed: f64,
    /// The learned evaluation with its accumulator updated by the last move.
    pub learned_updated: f64,
    /// Of those: the global terms alone (the hand-written features of both sides).
    pub global_terms: f64,
    /// Of those: the accumulator refresh alone.
    pub refresh: f64,
    /// Of those: the accumulator update alone.
    pub update: f64,
}

/// Times each step of the learned evaluation `net` and the hand-written evaluation on the
/// same positions (a few thousand, from random games; each step repeated over all of them
/// `rounds` times).
pub fn evaluation_costs(net: &LearnedEval, rounds: usize) -> EvaluationCosts {
    use crate::learned::features::global_inputs;
    use crate::learned::Accumulator;
    use std::hint::black_box;
    use std::time::Instant;
    let rules = Rules::classic();
    let mut rng = SmallRng::seed_from_u64(7);
    // (position before, move, position after) triples of random games.
    let mut steps = Vec::new();
    for variant in Variant::ALL
        .into_iter()
        .filter(|v| crate::learned::supports(*v))
    {
        for _ in 0..40 {
            let mut pos = loa::Position::start(variant, &rules);
            for _ in 0..60 {
                if pos.outcome(&rules).is_some() {
                    break;
                }
                let moves = pos.legal_moves(&rules);
                let mv = moves[rng.random_range(0..moves.len())];
                let after = pos.after(mv);
                if after.outcome(&rules).is_none() {
                    steps.push((pos, mv, after));
                }
                pos = after;
            }
        }
    }
    let weights = crate::config::EvalWeights::default();
    let accs: Vec<Accumulator> = steps
        .iter()
        .map(|(b, _, _)| Accumulator::refresh(net, b))
        .collect();
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        for _ in 0..rounds.max(1) {
            f();
        }
        t.elapsed().as_secs_f64() * 1e9 / (rounds.max(1) * steps.len()) as f64
    };
    let hand_written = time(&mut || {
        for (_, _, a) in &steps {
            black_box(crate::evaluation::static_evaluation(a, &weights));
        }
    });
    let learned_refreshed = time(&mut || {
        for (_, _, a) in &steps {
            black_box(net.evaluate(black_box(a)));
        }
    });
    let learned_updated = time(&mut || {
        for ((b, mv, a), acc) in steps.iter().zip(&accs) {
            let mut acc = acc.clone();
            acc.update(net, b, *mv);
            black_box(net.logit_with(&acc, a));
        }
    });
    let global_terms = time(&mut || {
        for (_, _, a) in &steps {
            black_box(global_inputs(black_box(a)));
        }
    });
    let refresh = time(&mut || {
        for (_, _, a) in &steps {
            black_box(Accumulator::refresh(net, black_box(a)));
        }
    });
    let update = time(&mut || {
        for ((b, mv, _), acc) in steps.iter().zip(&accs) {
            let mut acc = acc.clone();
            acc.update(net, b, *mv);
            black_box(&acc);
        }
    });
    EvaluationCosts {
        positions: steps.len(),
        hand_written,
        learned_refreshed,
        learned_updated,
        global_terms,
        refresh,
        update,
    }
}
