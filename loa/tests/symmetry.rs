//! Property tests of the board symmetries and the policy index over positions reached by
//! pseudo-random play in every variant.

use loa::policy::{policy_size, transform_policy_index};
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
fn every_legal_move_round_trips_through_its_policy_index() {
    let rules = Rules::classic();
    for v in Variant::ALL {
        let size = policy_size(v);
        for p in sample_positions(v, 20, 7) {
            let mut seen = HashSet::new();
            for &mv in p.legal_moves(&rules).iter().filter(|m| !m.is_pass()) {
                let idx = p.policy_index(mv).expect("normal move has an index");
                assert!(idx < size);
                assert!(seen.insert(idx), "two moves share index {idx}");
                assert_eq!(p.move_from_policy(idx), Some(mv));
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
                for &m in &moves {
                    if let Some(idx) = p.policy_index(m) {
                        let qm = p.transform_move(m, s);
                        assert_eq!(
                            transform_policy_index(v, idx, s),
                            q.policy_index(qm).unwrap()
                        );
                    }
                }
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
