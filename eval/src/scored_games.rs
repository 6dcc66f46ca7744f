//! Positions scored by alpha-beta self-play: the learned evaluation's searched labels.
//! (Above both the search and the learned evaluation: it plays games with the one valued
//! by the other.)
//!
//! Games of alpha-beta against itself at a fixed depth (valuing its leaves with a learned
//! evaluation or the hand-written one), from the standard start with a few random opening
//! plies and, later, a random move now and then, so that the positions cover what a search
//! meets, blunders included. Every position of a game is kept with the score its search
//! found and, once the game ends, the game's result. Deterministic for a seed; games run on
//! several threads.

use crate::config::AlphaBetaConfig;
use crate::learned::LearnedEval;
use crate::search::{AlphaBeta, SearchLimits};
use loa::{Position, Rules, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use selfplay::Cancel;
use std::sync::Arc;

/// How the scored games are played.
#[derive(Clone, Debug)]
pub struct ScoredGames {
    /// Games to play.
    pub games: usize,
    /// Depth of every search.
    pub depth: u32,
    /// Random plies at the start of each game.
    pub opening_plies: usize,
    /// Chance of a random move at each later ply (the position is still scored).
    pub random_move: f64,
    /// A game longer than this is stopped (its positions get result 0).
    pub max_plies: usize,
    /// Threads playing games.
    pub threads: usize,
    /// Seed of the random moves.
    pub seed: u64,
    /// The variant.
    pub variant: Variant,
    /// Stops the games before their next search when asked: the games under way are
    /// dropped, the finished ones kept.
    pub stop: Cancel,
}

impl Default for ScoredGames {
    fn default() -> Self {
        ScoredGames {
            games: 1000,
            depth: 3,
            opening_plies: 4,
            random_move: 0.1,
            max_plies: 200,
            threads: 1,
            seed: 1,
            variant: Variant::Standard,
            stop: Cancel::never(),
        }
    }
}

/// A position with its searched score and the game's result, both for the side to move.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredPosition {
    /// The position.
    pub position: Position,
    /// The search's score (evaluation units; beyond the evaluation's range for a found
    /// win or loss).
    pub score: i32,
    /// The game's result: 1 win, 0 draw or unfinished, −1 loss.
    pub outcome: f32,
}

/// One game's scored positions; `None` when `config.stop` stopped it.
fn play_game(
    search: &mut AlphaBeta,
    config: &ScoredGames,
    rng: &mut SmallRng,
) -> Option<Vec<ScoredPosition>> {
    let rules = Rules::classic();
    let mut game = loa::Game::new(config.variant, rules);
    let mut out: Vec<ScoredPosition> = Vec::new();
    while game.outcome().is_none() && game.moves().len() < config.max_plies {
        let legal = game.position().legal_moves(&rules);
        if game.moves().len() < config.opening_plies {
            let mv = legal[rng.random_range(0..legal.len())];
            game.play(mv).expect("a legal move");
            continue;
        }
        if config.stop.requested() {
            return None;
        }
        let Ok(r) = search.search_game(&game, SearchLimits::depth(config.depth)) else {
            break;
        };
        out.push(ScoredPosition {
            position: *game.position(),
            score: r.score,
            outcome: 0.0,
        });
        let mv = if rng.random_bool(config.random_move) {
            legal[rng.random_range(0..legal.len())]
        } else {
            r.best_move
        };
        game.play(mv).expect("a legal move");
    }
    if let Some(winner) = game.outcome().and_then(|o| o.winner()) {
        for p in &mut out {
            p.outcome = if p.position.to_move() == winner {
                1.0
            } else {
                -1.0
            };
        }
    }
    Some(out)
}

/// Plays `config.games` scored games, valuing leaves with `learned` (or the hand-written
/// evaluation), and returns their positions, game by game in game order, with the number
/// of games finished (fewer than `config.games` when `config.stop` stopped them; a game is
/// kept whole or not at all).
pub fn play_scored_games(
    learned: Option<Arc<LearnedEval>>,
    config: &ScoredGames,
) -> (Vec<ScoredPosition>, usize) {
    let threads = config.threads.max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut per_game: Vec<Option<Vec<ScoredPosition>>> = vec![None; config.games];
    let results = std::sync::Mutex::new(&mut per_game);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let search_config = AlphaBetaConfig::default();
                let mut search = match &learned {
                    Some(net) => AlphaBeta::with_learned(search_config, net.clone()),
                    None => AlphaBeta::new(search_config),
                };
                loop {
                    let g = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if g >= config.games || config.stop.requested() {
                        break;
                    }
                    let mut rng = SmallRng::seed_from_u64(
                        config.seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    );
                    search.clear();
                    let positions = play_game(&mut search, config, &mut rng);
                    results.lock().expect("no panic")[g] = positions;
                }
            });
        }
    });
    let finished = per_game.iter().filter(|g| g.is_some()).count();
    (per_game.into_iter().flatten().flatten().collect(), finished)
}

/// How [`rescore`] labels positions again with a deeper search (labels deeper than play:
/// the games are played at a cheap depth, a share of their positions scored with a larger
/// node budget or depth).
#[derive(Clone, Debug)]
pub struct Rescore {
    /// The new searches' limits (a node budget bounds their cost whatever the position; set
    /// at least one).
    pub limits: SearchLimits,
    /// Share of the positions rescored, in `[0, 1]`; which ones is decided by `seed`.
    pub share: f64,
    /// Threads searching.
    pub threads: usize,
    /// Seed of the choice of positions.
    pub seed: u64,
    /// Stops before the next search when asked: the positions not reached keep their
    /// labels.
    pub stop: Cancel,
}

/// Scores again, with a search within `config.limits` valuing leaves with `learned` (or
/// the hand-written evaluation), the share `config.share` of `positions` chosen by
/// `config.seed`; each search starts from the position alone (no game history) with a
/// cleared table. Returns the index of each position rescored, in order, with the depth of
/// the search's last completed iteration (fewer than chosen when `config.stop` stopped
/// it). Deterministic for a seed, whatever the threads.
pub fn rescore(
    learned: Option<Arc<LearnedEval>>,
    positions: &mut [ScoredPosition],
    config: &Rescore,
) -> Vec<(usize, u32)> {
    let mut rng = SmallRng::seed_from_u64(config.seed);
    let share = config.share.clamp(0.0, 1.0);
    let chosen: Vec<usize> = (0..positions.len())
        .filter(|_| rng.random_bool(share))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let scores: Vec<std::sync::atomic::AtomicI64> = chosen
        .iter()
        .map(|_| std::sync::atomic::AtomicI64::new(i64::MIN))
        .collect();
    let depths: Vec<std::sync::atomic::AtomicU32> = chosen
        .iter()
        .map(|_| std::sync::atomic::AtomicU32::new(0))
        .collect();
    let snapshot: &[ScoredPosition] = positions;
    std::thread::scope(|scope| {
        for _ in 0..config.threads.max(1) {
            scope.spawn(|| {
                let search_config = AlphaBetaConfig::default();
                let mut search = match &learned {
                    Some(net) => AlphaBeta::with_learned(search_config, net.clone()),
                    None => AlphaBeta::new(search_config),
                };
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= chosen.len() || config.stop.requested() {
                        break;
                    }
                    let game =
                        loa::Game::from_position(snapshot[chosen[i]].position, Rules::classic());
                    if game.outcome().is_some() {
                        continue;
                    }
                    search.clear();
                    if let Ok(r) = search.search_game(&game, config.limits) {
                        depths[i].store(r.depth, std::sync::atomic::Ordering::Relaxed);
                        scores[i].store(r.score as i64, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let mut rescored = Vec::new();
    for ((&at, score), depth) in chosen.iter().zip(&scores).zip(&depths) {
        let score = score.load(std::sync::atomic::Ordering::Relaxed);
        if score != i64::MIN {
            positions[at].score = score as i32;
            rescored.push((at, depth.load(std::sync::atomic::Ordering::Relaxed)));
        }
    }
    rescored
}

/// The scale `k` that best predicts the results from the scores, `P(win) = σ(score / k)`
/// (maximum likelihood over the decided games' positions whose score is within the
/// evaluation's range; a grid from 20 to 2000 units): how many evaluation units an
/// evaluation's logit is worth.
pub fn fit_score_scale(positions: &[ScoredPosition]) -> f32 {
    let data: Vec<(f32, f32)> = positions
        .iter()
        .filter(|p| p.outcome != 0.0 && p.score.abs() <= crate::evaluation::EVAL_LIMIT)
        .map(|p| (p.score as f32, (p.outcome + 1.0) / 2.0))
        .collect();
    let loss = |k: f32| -> f64 {
        data.iter()
            .map(|&(s, y)| {
                let p = (1.0 / (1.0 + (-s / k).exp())).clamp(1e-6, 1.0 - 1e-6) as f64;
                -(y as f64 * p.ln() + (1.0 - y as f64) * (1.0 - p).ln())
            })
            .sum()
    };
    let mut best = (f64::INFINITY, 200.0);
    let mut k = 20.0f32;
    while k <= 2000.0 {
        let l = loss(k);
        if l < best.0 {
            best = (l, k);
        }
        k *= 1.05;
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scored_games_are_deterministic_and_carry_their_results() {
        let config = ScoredGames {
            games: 6,
            depth: 1,
            threads: 2,
            ..Default::default()
        };
        let (a, finished) = play_scored_games(None, &config);
        assert_eq!(finished, 6);
        let (b, _) = play_scored_games(
            None,
            &ScoredGames {
                threads: 1,
                ..config.clone()
            },
        );
        assert_eq!(a.len(), b.len());
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| x.position == y.position && x.score == y.score));
        assert!(a.iter().any(|p| p.outcome == 1.0) && a.iter().any(|p| p.outcome == -1.0));
        // Consecutive positions of a decided game alternate results with the mover.
        for w in a.windows(2) {
            if w[0].outcome != 0.0
                && w[1].outcome != 0.0
                && w[0].position.ply() + 1 == w[1].position.ply()
            {
                assert_eq!(w[0].outcome, -w[1].outcome);
            }
        }
    }

    /// A stop keeps the games finished before it, whole, and drops the one under way.
    #[test]
    fn a_stop_keeps_only_whole_games() {
        let whole = ScoredGames {
            games: 3,
            depth: 1,
            ..Default::default()
        };
        let (all, _) = play_scored_games(None, &whole);
        // The stop is asked before every game and every search: it answers yes once the
        // first game's searches and the second game's start have asked, so the second
        // game stops before its first search.
        let searches = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = searches.clone();
        let first_game = {
            let (one, _) = play_scored_games(
                None,
                &ScoredGames {
                    games: 1,
                    ..whole.clone()
                },
            );
            one.len()
        };
        let limit = first_game + 2;
        let config = ScoredGames {
            stop: Cancel::when(move || {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= limit
            }),
            ..whole
        };
        let (kept, finished) = play_scored_games(None, &config);
        assert_eq!(finished, 1);
        assert_eq!(kept.len(), first_game);
        assert!(kept
            .iter()
            .zip(&all)
            .all(|(x, y)| x.position == y.position && x.score == y.score));
        assert!(searches.load(std::sync::atomic::Ordering::Relaxed) > limit);
    }

    #[test]
    fn the_fitted_scale_recovers_a_known_one() {
        let mut rng = SmallRng::seed_from_u64(3);
        let pos = Position::start(Variant::Standard, &Rules::classic());
        let data: Vec<ScoredPosition> = (0..20000)
            .map(|_| {
                let score = rng.random_range(-1500..1500);
                let p = 1.0 / (1.0 + (-(score as f64) / 300.0).exp());
                ScoredPosition {
                    position: pos,
                    score,
                    outcome: if rng.random_bool(p) { 1.0 } else { -1.0 },
                }
            })
            .collect();
        // The fit's grid steps by 5% (…, 278.9, 292.8, 307.4, 322.8, …); 20 000 outcomes
        // put the best likelihood within about ±4 (one standard error) of 300, so the fit
        // is one of the two grid points around it.
        let k = fit_score_scale(&data);
        assert!((285.0..315.0).contains(&k), "{k}");
    }

    /// Rescoring a share chooses the same positions for a seed whatever the threads, and
    /// gives each chosen one the score of a fresh search at the new depth; the others keep
    /// theirs.
    #[test]
    fn rescoring_gives_the_chosen_positions_a_deeper_search() {
        let (played, _) = play_scored_games(
            None,
            &ScoredGames {
                games: 4,
                depth: 1,
                ..Default::default()
            },
        );
        let config = |threads| Rescore {
            limits: SearchLimits::depth(3),
            share: 0.5,
            threads,
            seed: 9,
            stop: Cancel::never(),
        };
        let mut one = played.clone();
        let chosen = rescore(None, &mut one, &config(1));
        let mut two = played.clone();
        assert_eq!(rescore(None, &mut two, &config(2)), chosen);
        // Depth 3 but where the search ended sooner (a proven result, one legal move).
        assert!(chosen.iter().all(|&(_, depth)| depth <= 3));
        assert!(chosen.iter().filter(|&&(_, depth)| depth == 3).count() * 2 > chosen.len());
        let n = chosen.len();
        assert!(
            n > played.len() / 4 && n < played.len() * 3 / 4,
            "{n} of {}",
            played.len()
        );
        assert!(one.iter().zip(&two).all(|(a, b)| a.score == b.score));
        let mut search = AlphaBeta::new(AlphaBetaConfig::default());
        let mut changed = 0;
        for (i, (before, after)) in played.iter().zip(&one).enumerate() {
            assert_eq!(before.position, after.position);
            assert_eq!(before.outcome, after.outcome);
            if let Some(&(_, depth)) = chosen.iter().find(|&&(at, _)| at == i) {
                search.clear();
                let game = loa::Game::from_position(before.position, Rules::classic());
                let deep = search.search_game(&game, SearchLimits::depth(3)).unwrap();
                assert_eq!((after.score, depth), (deep.score, deep.depth));
            } else {
                assert_eq!(after.score, before.score);
            }
            changed += usize::from(after.score != before.score);
        }
        assert!(changed > 0);
        let mut none = played.clone();
        let stopped = Rescore {
            stop: Cancel::when(|| true),
            ..config(2)
        };
        assert!(rescore(None, &mut none, &stopped).is_empty());
        // A node budget: each chosen position gets the score and the completed depth of a
        // fresh search within it.
        let mut budget = played.clone();
        let nodes = Rescore {
            limits: SearchLimits::nodes(3000),
            ..config(2)
        };
        for (i, depth) in rescore(None, &mut budget, &nodes) {
            search.clear();
            let game = loa::Game::from_position(played[i].position, Rules::classic());
            let r = search
                .search_game(&game, SearchLimits::nodes(3000))
                .unwrap();
            assert_eq!((budget[i].score, depth), (r.score, r.depth));
        }
        assert!(none.iter().zip(&played).all(|(a, b)| a.score == b.score));
    }
}
