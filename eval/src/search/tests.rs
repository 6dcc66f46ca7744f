//! Tests of the alpha-beta searcher: wins, legality under every rule set, agreement with
//! a plain negamax, limits, Lazy SMP and determinism.

use super::score::{outcome_score, INFINITY};
use super::threads::skips_depth;
use super::worker::Worker;
use super::*;
use loa::tactics::has_connecting_move;
use loa::{Color, ExtraState, Outcome, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

/// One worker alone over a fresh table, searching under `rules` from an empty path.
fn worker(config: AlphaBetaConfig, rules: Rules) -> Worker {
    let tt = Arc::new(TranspositionTable::new(config.tt_mib));
    let mut w = Worker::new(&config, &tt, &Arc::default(), None);
    w.rules = rules;
    w
}

fn searcher() -> AlphaBeta {
    AlphaBeta::new(AlphaBetaConfig {
        tt_mib: 2,
        ..Default::default()
    })
}

/// Random games from every variant's start; calls `f` on each position that is not over
/// (drops pending included).
fn random_positions(count: usize, seed: u64, rules: Rules, mut f: impl FnMut(&Game)) {
    for game in loa::testing::random_games(&Variant::ALL, rules, count, 60, seed) {
        f(&game);
    }
}

/// A sparse random position of `variant` with `pieces` pieces a side at most and random
/// extra state (vanished cells, partners and seat, reserves and a pending drop), or
/// `None` if the draw was not a valid position.
fn sparse_position(variant: Variant, pieces: u32, rng: &mut SmallRng) -> Option<Position> {
    let g = variant.geometry();
    let pick = |n: u32, rng: &mut SmallRng| {
        (0..n)
            .map(|_| 1u64 << g.sparse[rng.random_range(0..g.num_cells as usize)])
            .fold(0, |a, b| a | b)
    };
    let (nb, nw) = (rng.random_range(2..=pieces), rng.random_range(2..=pieces));
    let white = pick(nw, rng);
    let black = pick(nb, rng) & !white;
    let mut extra = ExtraState::default();
    if variant.has_vanishing() {
        let k = rng.random_range(0..12);
        extra.vanished = pick(k, rng) & !(black | white);
    }
    if variant == Variant::Ambiloa {
        extra.partners = (black | white) & pick(20, rng);
        extra.seat = rng.random_range(0..2);
    }
    let to_move = if rng.random_bool(0.5) {
        Color::Black
    } else {
        Color::White
    };
    if variant.has_drops() {
        extra.reserve = [rng.random_range(0..3), rng.random_range(0..3)];
        extra.drop_pending = extra.reserve[to_move.index()] > 0 && rng.random_bool(0.3);
    }
    Position::with_extra(variant, black, white, to_move, extra).ok()
}

/// Brute force: the plies to the first win by connection the side to move can force
/// within its turn (a move, or a move and the drop of a compound turn), per first move.
fn turn_wins(pos: &Position, rules: &Rules) -> Vec<(Move, i32)> {
    let us = pos.to_move();
    let mut wins = Vec::new();
    for &mv in pos.legal_moves(rules).iter() {
        let child = pos.after(mv);
        if child.connection_outcome_after(mv, rules) == Some(Outcome::Win(us)) {
            wins.push((mv, 1));
        } else if child.drop_pending() {
            let drop_wins = child.legal_moves(rules).iter().any(|&d| {
                child.after(d).connection_outcome_after(d, rules) == Some(Outcome::Win(us))
            });
            if drop_wins {
                wins.push((mv, 2));
            }
        }
    }
    wins
}

/// Brute force: whether the opponent of the side to move, at its next turn, has a move
/// (drops aside) after which its pieces are connected.
fn opponent_can_connect(pos: &Position) -> bool {
    let them = pos.to_move().opponent();
    let mut extra = pos.extra();
    extra.reserve = [0, 0];
    extra.drop_pending = false;
    if let Some(p) = pos.player() {
        // Order S, W, N, E.
        extra.seat = if them == Color::White {
            p.seat()
        } else {
            p.seat() ^ 1
        };
    }
    let next = Position::with_extra(
        pos.variant(),
        pos.pieces(Color::Black),
        pos.pieces(Color::White),
        them,
        extra,
    )
    .unwrap();
    let mut moves = MoveList::new();
    next.generate_moves(&mut moves);
    moves.iter().any(|&m| next.after(m).is_connected(them))
}

#[test]
fn immediate_wins_are_found_exactly_when_they_exist() {
    let mut rng = SmallRng::seed_from_u64(11);
    for rules in [Rules::classic(), Rules::icga()] {
        for variant in Variant::ALL {
            let s = worker(AlphaBetaConfig::default(), rules);
            let (mut wins, mut total) = (0, 0);
            while total < 700 {
                // Sparse random positions: few pieces make connecting moves common.
                let Some(pos) = sparse_position(variant, 6, &mut rng) else {
                    continue;
                };
                if pos.outcome(&rules).is_some() {
                    continue;
                }
                total += 1;
                let found = s.winning_move(&pos);
                let brute = turn_wins(&pos, &rules);
                let text = pos.to_text();
                assert_eq!(
                    has_connecting_move(&pos, pos.to_move().opponent()),
                    opponent_can_connect(&pos),
                    "{variant} {text}"
                );
                assert_eq!(found.is_some(), !brute.is_empty(), "{variant} {text}");
                let Some((mv, plies)) = found else {
                    continue;
                };
                wins += 1;
                assert!(brute.contains(&(mv, plies)), "{variant} {text}: {mv}");
                let r = searcher()
                    .search_position(&pos, rules, &[], SearchLimits::depth(2))
                    .unwrap();
                assert_eq!(r.score, WIN - plies, "{variant} {text}");
                assert!(brute.contains(&(r.best_move, plies)), "{variant} {text}");
            }
            assert!(wins > 20, "{variant}: only {wins} positions with a win");
        }
    }
}

/// Plays the searcher's moves from `text` until the turn of the side to move is over and
/// checks that it won, in `plies` plies, with the first search scoring `WIN - plies`.
fn assert_wins_at_once(variant: Variant, pos: Position, rules: Rules, plies: i32) {
    let us = pos.to_move();
    let mut game = Game::from_position(pos, rules);
    let mut s = searcher();
    let first = s.search_game(&game, SearchLimits::depth(3)).unwrap();
    assert_eq!(first.score, WIN - plies, "{variant} {}", pos.to_text());
    game.play(first.best_move).unwrap();
    for _ in 1..plies {
        let r = s.search_game(&game, SearchLimits::depth(3)).unwrap();
        assert_eq!(r.score, WIN - 1, "{variant}");
        game.play(r.best_move).unwrap();
    }
    assert_eq!(game.outcome(), Some(Outcome::Win(us)), "{variant}");
}

#[test]
fn hand_made_wins_in_one_turn_are_found_in_every_new_variant() {
    let classic = Rules::classic();
    // Parachute: g2-e4 connects Black, then any drop away from a1 and h8 wins.
    let p = Position::from_text("7w/8/8/3b4/3b4/8/6b1/w7 b 1:1", Variant::Parachute).unwrap();
    assert_wins_at_once(Variant::Parachute, p, classic, 2);
    assert_wins_at_once(Variant::Parachute, p, Rules::icga(), 2);
    // Parachute, drop pending with Black connected: under ICGA rules a drop on a2 or b2
    // would connect White too (a draw); the search drops elsewhere.
    let p = Position::from_text("8/8/8/3b4/3b4/w7/8/w7 b@ 1:1", Variant::Parachute).unwrap();
    let r = searcher()
        .search_position(&p, Rules::icga(), &[], SearchLimits::depth(3))
        .unwrap();
    assert_eq!(r.score, WIN - 1);
    assert!(!["@a2", "@b2"].contains(&r.best_move.to_string().as_str()));
    assert_wins_at_once(Variant::Parachute, p, Rules::icga(), 1);
    // Gemma: a1 is stuck (a2, b1, b2 vanished); removing it leaves Black connected.
    let p = Position::from_text("7w/5w2/8/3b4/3b4/8/xx6/bx6 b", Variant::Gemma).unwrap();
    let r = searcher()
        .search_position(&p, classic, &[], SearchLimits::depth(2))
        .unwrap();
    assert_eq!(r.best_move.to_string(), "~a1");
    assert_wins_at_once(Variant::Gemma, p, classic, 1);
    // Ambiloa: South's b1 joins North's c3-c4 (b1-b2 or b1-c2).
    let p = Position::from_text("w7/8/8/8/2n5/2n5/8/1s5e s", Variant::Ambiloa).unwrap();
    assert_wins_at_once(Variant::Ambiloa, p, classic, 1);
    // Ambiloa: West to move cannot connect nor stop North's c3-c2 or c3-b2 next.
    let p = Position::from_text("w7/8/8/8/8/2n5/8/1s5e w", Variant::Ambiloa).unwrap();
    for depth in [1, 2, 3] {
        let r = searcher()
            .search_position(&p, classic, &[], SearchLimits::depth(depth))
            .unwrap();
        assert_eq!(r.score, -(WIN - 2), "depth {depth}");
    }
    // Alveole: the piece on col 4, row 1 moves two cells up its line to join the
    // centre pair.
    let g = Variant::Alveole.geometry();
    let at = |c: u8, r: u8| 1u64 << g.square_at(c, r).unwrap();
    let p = Position::new(
        Variant::Alveole,
        at(4, 4) | at(5, 4) | at(4, 1),
        at(0, 0) | at(8, 8),
        Color::Black,
    )
    .unwrap();
    assert_wins_at_once(Variant::Alveole, p, classic, 1);
}

#[test]
fn always_returns_a_legal_move_under_every_rule_set() {
    for (i, spec) in [
        "classic",
        "icga",
        "no-move=loss,repetition=off",
        "ply-limit=30,first=white",
    ]
    .iter()
    .enumerate()
    {
        let rules = Rules::parse(spec).unwrap();
        let mut s = searcher();
        random_positions(280, i as u64, rules, |game| {
            let limits = SearchLimits {
                depth: Some(3),
                nodes: Some(3000),
                time: None,
            };
            let r = s.search_game(game, limits).unwrap();
            assert!(
                game.position().is_legal(r.best_move, &rules),
                "{} {spec}: {}",
                game.position().to_text(),
                r.best_move
            );
            for mv in r.pv() {
                assert_eq!(mv.is_hex(), game.position().geometry().move_flag != 0);
            }
        });
    }
}

/// Plain minimax over connection outcomes only (no pruning, no tables): the exact score
/// if the game is decided within `depth` plies, else None. The sign flips only when the
/// side to move changes.
fn minimax(pos: &Position, rules: &Rules, depth: u32, ply: i32) -> Option<i32> {
    if depth == 0 {
        return None;
    }
    let mut best: Option<i32> = None;
    let mut undecided = false;
    for &mv in pos.legal_moves(rules).iter() {
        let child = pos.after(mv);
        let s = match child.connection_outcome_after(mv, rules) {
            Some(o) => Some(outcome_score(o, pos.to_move(), (ply + 1) as usize)),
            None if child.to_move() == pos.to_move() => minimax(&child, rules, depth - 1, ply + 1),
            None => minimax(&child, rules, depth - 1, ply + 1).map(|s| -s),
        };
        match s {
            Some(v) => best = Some(best.map_or(v, |b: i32| b.max(v))),
            None => undecided = true,
        }
    }
    match best {
        Some(b) if b > WIN_THRESHOLD => Some(b),
        _ if undecided => None,
        b => b,
    }
}

#[test]
fn win_scores_are_exact_and_agree_with_a_plain_minimax() {
    // Plain minimax (depth 3) on endings with few pieces must agree with the searcher
    // about forced wins.
    let rules = Rules::parse("repetition=off").unwrap();
    let mut rng = SmallRng::seed_from_u64(5);
    let mut s = AlphaBeta::new(AlphaBetaConfig {
        tt_mib: 2,
        late_move_reductions: false,
        ..Default::default()
    });
    for variant in Variant::ALL {
        let mut checked = 0;
        let mut decided = 0;
        // Until a few positions were decided within the horizon (wins are rarer on the
        // larger boards).
        while decided < 8 && checked < 500 {
            let Some(pos) = sparse_position(variant, 4, &mut rng) else {
                continue;
            };
            // A forced move is played without a search (its score is not a result).
            if pos.outcome(&rules).is_some() || pos.legal_moves(&rules).len() == 1 {
                continue;
            }
            let truth = minimax(&pos, &rules, 3, 0);
            let r = s
                .search_position(&pos, rules, &[], SearchLimits::depth(3))
                .unwrap();
            if let Some(t) = truth {
                decided += 1;
                if t > WIN_THRESHOLD {
                    assert_eq!(r.score, t, "{variant} {}", pos.to_text());
                }
            }
            if r.score > WIN_THRESHOLD && (WIN - r.score) <= 3 {
                assert_eq!(truth, Some(r.score), "{variant} {}", pos.to_text());
            }
            checked += 1;
        }
        assert!(decided >= 8, "{variant}: {decided} decided in {checked}");
    }
}

/// Fixed-depth negamax without pruning or tables that follows the searcher's own rules
/// (one-turn win check at interior nodes and leaves, static evaluation, pass when
/// stuck), flipping the sign only when the side to move changes.
fn reference(s: &Worker, pos: &Position, depth: i32, ply: usize) -> i32 {
    let rules = s.rules;
    if !pos.has_move(pos.to_move()) {
        if pos.nobody_can_move() {
            return 0;
        }
        if depth <= 0 {
            return match s.winning_move(pos) {
                Some((_, k)) => WIN - ply as i32 - k,
                None => s.evaluate(pos),
            };
        }
    } else {
        if let Some((_, k)) = s.winning_move(pos) {
            return WIN - ply as i32 - k;
        }
        if depth <= 0 {
            return s.evaluate(pos);
        }
    }
    let mut best = -INFINITY;
    for &mv in pos.legal_moves(&rules).iter() {
        let child = pos.after(mv);
        let v = match child.connection_outcome_after(mv, &rules) {
            Some(o) => outcome_score(o, pos.to_move(), ply + 1),
            None if child.to_move() == pos.to_move() => reference(s, &child, depth - 1, ply + 1),
            None => -reference(s, &child, depth - 1, ply + 1),
        };
        best = best.max(v);
    }
    best
}

#[test]
fn search_values_equal_a_plain_negamax_in_every_variant() {
    // Positions from random games, so that parachute compound turns (and roots with a
    // pending drop) are common; repetition off so that values do not depend on paths.
    let rules = Rules::parse("repetition=off").unwrap();
    let config = AlphaBetaConfig {
        tt_mib: 4,
        late_move_reductions: false,
        threat_extension: false,
        ..Default::default()
    };
    let mut rng = SmallRng::seed_from_u64(21);
    let mut pending = 0;
    for variant in Variant::ALL {
        let mut checked = 0;
        while checked < 6 {
            let mut game = Game::new(variant, rules);
            for _ in 0..rng.random_range(0..14) {
                if game.is_over() {
                    break;
                }
                let moves = game.legal_moves();
                game.play(moves[rng.random_range(0..moves.len())]).unwrap();
            }
            if game.is_over() {
                continue;
            }
            let pos = *game.position();
            pending += pos.drop_pending() as u32;
            let depth = if variant.has_drops() { 3 } else { 2 };
            let mut s = worker(config.clone(), rules);
            s.stack = vec![pos.hash()];
            s.root_index = 0;
            s.extension_ply_limit = 0;
            let value = s.search(&pos, depth, -INFINITY, INFINITY, 0, false, true);
            assert_eq!(
                value,
                reference(&s, &pos, depth, 0),
                "{variant} {}",
                pos.to_text()
            );
            checked += 1;
        }
    }
    assert!(pending > 0);
}

#[test]
fn respects_node_and_time_limits() {
    let rules = Rules::classic();
    for variant in Variant::ALL {
        let game = Game::new(variant, rules);
        let mut s = searcher();
        let r = s.search_game(&game, SearchLimits::nodes(5_000)).unwrap();
        assert!(r.nodes <= 5_001, "{variant}: {}", r.nodes);
        let r = s
            .search_game(&game, SearchLimits::time(Duration::from_millis(60)))
            .unwrap();
        assert!(
            r.elapsed < Duration::from_millis(500),
            "{variant}: {:?}",
            r.elapsed
        );
        assert!(r.depth >= 2, "{variant}: depth {}", r.depth);
    }
}

#[test]
fn no_move_loss_is_scored() {
    // Black to move without any move loses at once under no-move=loss: found by random
    // search for a lone black piece boxed in on the 6x6 board.
    let rules = Rules::parse("no-move=loss").unwrap();
    let mut s = worker(
        AlphaBetaConfig {
            tt_mib: 2,
            ..Default::default()
        },
        rules,
    );
    s.stack = vec![0];
    s.root_index = 0;
    let mut rng = SmallRng::seed_from_u64(9);
    let g = Variant::Six.geometry();
    for _ in 0..200_000 {
        let black = 1u64 << g.sparse[rng.random_range(0..36)];
        let white: u64 = (0..6)
            .map(|_| 1u64 << g.sparse[rng.random_range(0..36)])
            .fold(0, |a, b| a | b)
            & !black;
        let Ok(pos) = Position::new(Variant::Six, black, white, Color::Black) else {
            continue;
        };
        if pos.has_move(Color::Black) || g.is_connected(white) {
            continue;
        }
        let score = s.search(&pos, 2, -INFINITY, INFINITY, 0, false, true);
        assert_eq!(score, -WIN);
        return;
    }
    panic!("no blocked position found");
}

fn threaded(threads: usize) -> AlphaBeta {
    AlphaBeta::new(AlphaBetaConfig {
        tt_mib: 2,
        threads,
        ..Default::default()
    })
}

#[test]
fn lazy_smp_helpers_spread_over_neighbouring_depths() {
    // The first helper searches the depths the main thread skips… none; the first two
    // helpers search opposite parities, and every depth is searched by some helper.
    let searched = |h: usize| (1..=12).filter(|&d| !skips_depth(h, d)).collect::<Vec<_>>();
    assert_eq!(searched(0), vec![2, 4, 6, 8, 10, 12]);
    assert_eq!(searched(1), vec![1, 3, 5, 7, 9, 11]);
    assert_eq!(searched(2), vec![1, 4, 5, 8, 9, 12]);
    for d in 1..=40 {
        assert!((0..20).any(|h| !skips_depth(h, d)), "depth {d}");
    }
}

/// Several threads: every move legal under every rule set and variant, the depth limit
/// kept, the node limit shared out (the total stays within a few nodes a thread of it).
#[test]
fn several_threads_play_legal_moves_within_the_limits() {
    for (i, spec) in ["classic", "icga", "no-move=loss,repetition=off"]
        .iter()
        .enumerate()
    {
        let rules = Rules::parse(spec).unwrap();
        let mut s = threaded(3);
        random_positions(60, 40 + i as u64, rules, |game| {
            let r = s.search_game(game, SearchLimits::depth(3)).unwrap();
            assert!(game.position().is_legal(r.best_move, &rules), "{spec}");
            assert!(r.depth <= 3);
            let r = s.search_game(game, SearchLimits::nodes(3_000)).unwrap();
            assert!(game.position().is_legal(r.best_move, &rules), "{spec}");
            assert!(r.nodes <= 3_000 + 3, "{spec}: {} nodes", r.nodes);
            for mv in r.pv() {
                assert_eq!(mv.is_hex(), game.position().geometry().move_flag != 0);
            }
        });
    }
}

/// What one thread proves at a fixed depth, several threads prove too, and they play a
/// winning move.
#[test]
fn several_threads_find_the_wins_one_thread_finds() {
    let rules = Rules::parse("repetition=off").unwrap();
    let mut rng = SmallRng::seed_from_u64(77);
    let (mut one, mut four) = (threaded(1), threaded(4));
    let mut wins = 0;
    for variant in Variant::ALL {
        let mut checked = 0;
        while checked < 40 {
            let Some(pos) = sparse_position(variant, 5, &mut rng) else {
                continue;
            };
            if pos.outcome(&rules).is_some() || pos.legal_moves(&rules).len() == 1 {
                continue;
            }
            checked += 1;
            let a = one
                .search_position(&pos, rules, &[], SearchLimits::depth(3))
                .unwrap();
            let b = four
                .search_position(&pos, rules, &[], SearchLimits::depth(3))
                .unwrap();
            assert!(pos.is_legal(b.best_move, &rules));
            if a.score > WIN_THRESHOLD {
                wins += 1;
                assert!(b.score > WIN_THRESHOLD, "{variant} {}", pos.to_text());
                // The move keeps the win: it connects, or one thread proves the
                // position after it won for the mover.
                let child = pos.after(b.best_move);
                match child.connection_outcome_after(b.best_move, &rules) {
                    Some(o) => assert_eq!(o, Outcome::Win(pos.to_move()), "{variant}"),
                    None if child.outcome(&rules).is_some() => {
                        assert_eq!(child.outcome(&rules), Some(Outcome::Win(pos.to_move())));
                    }
                    // A forced reply is played without a search (score 0).
                    None if child.legal_moves(&rules).len() == 1 => {}
                    None => {
                        let c = one
                            .search_position(&child, rules, &[], SearchLimits::depth(3))
                            .unwrap();
                        let mover = if child.to_move() == pos.to_move() {
                            c.score
                        } else {
                            -c.score
                        };
                        assert!(
                            mover > WIN_THRESHOLD,
                            "{variant} {}: one thread {} {}, four {} {} {}, then {} {}",
                            pos.to_text(),
                            a.best_move,
                            a.score,
                            b.best_move,
                            b.score,
                            b.depth,
                            c.best_move,
                            c.score
                        );
                    }
                }
            }
        }
    }
    assert!(wins > 10, "{wins}");
}

/// A search on one thread is deterministic: the same searcher state and position give
/// the same move, score, depth and node count, twice (the reproducibility contract of
/// `threads=1`).
#[test]
fn one_thread_searches_deterministically() {
    let rules = Rules::classic();
    let mut results = Vec::new();
    for _ in 0..2 {
        let mut s = threaded(1);
        let mut r = Vec::new();
        random_positions(20, 3, rules, |game| {
            let x = s.search_game(game, SearchLimits::nodes(20_000)).unwrap();
            r.push((x.best_move, x.score, x.depth, x.nodes));
        });
        results.push(r);
    }
    assert_eq!(results[0], results[1]);
}
