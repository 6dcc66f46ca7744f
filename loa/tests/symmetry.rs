//! Property tests of the board symmetries over positions reached by pseudo-random play in
//! every variant (the policy index's own tests are in the train crate).

use loa::{Move, Position, Rules, Variant};
use std::collections::HashSet;

/// Positions from random games (every ply of each game, games ended by the rules).
fn sample_positions(variant: Variant, games: usize, seed: u64) -> Vec<Position> {
    loa::testing::random_game_positions(variant, &Rules::classic(), games, 200, seed)
}

#[test]
fn moves_survive_their_bit_encoding() {
    let rules = Rules::classic();
    for v in Variant::ALL {
        for p in sample_positions(v, 20, 7) {
            for &mv in p.legal_moves(&rules).iter() {
                assert_eq!(Move::from_bits(mv.to_bits()), Some(mv));
            }
        }
    }
}

#[test]
fn symmetries_map_legal_moves_to_legal_moves() {
    let rules = Rules::classic();
    for v in Variant::ALL {
        let g = v.geometry();
        for p in sample_positions(v, 10, 11) {
            let moves: HashSet<Move> = p.legal_moves(&rules).iter().copied().collect();
            for s in 0..g.num_symmetries as usize {
                let q = p.transformed(s);
                let mapped: HashSet<Move> = moves.iter().map(|&m| p.transform_move(m, s)).collect();
                let actual: HashSet<Move> = q.legal_moves(&rules).iter().copied().collect();
                assert_eq!(mapped, actual, "{v} sym {s} {}", p.to_text());
                assert_eq!(q.outcome(&rules), p.outcome(&rules));
            }
        }
    }
}

#[test]
fn perft_is_invariant_under_every_symmetry() {
    let rules = Rules::classic();
    for v in Variant::ALL {
        let g = v.geometry();
        for p in sample_positions(v, 3, 5).into_iter().step_by(9).take(8) {
            let base = loa::perft::perft(&p, &rules, 3);
            for s in 1..g.num_symmetries as usize {
                assert_eq!(loa::perft::perft(&p.transformed(s), &rules, 3), base);
            }
        }
    }
}
