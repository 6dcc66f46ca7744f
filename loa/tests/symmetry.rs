//! Property tests of the board symmetries over positions reached by pseudo-random play in
//! every variant (the policy index's own tests are in the train crate).

use loa::{Move, Position, Rules, Variant};
use std::collections::HashSet;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Positions from random games (every ply of each game, games ended by the rules).
fn sample_positions(variant: Variant, games: usize, seed: u64) -> Vec<Position> {
    let rules = Rules::classic();
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut p = Position::start(variant, &rules);
        for _ in 0..200 {
            if p.outcome(&rules).is_some() {
                break;
            }
            out.push(p);
            let moves = p.legal_moves(&rules);
            p.play(moves[rng.next() as usize % moves.len()]);
        }
    }
    out
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
