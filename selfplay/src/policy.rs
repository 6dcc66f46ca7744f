//! Move ⇄ policy index: the network's output layout (kept beside the input encoding, as
//! lc0 keeps its move index in `neural/`). The policy is a stack of planes over the
//! board's `size × size` grid ([`loa::Geometry::grid_cell`]; the hexagonal board sits in a
//! 9×9 grid whose cells off the board are never legal):
//!
//! * planes `0..directions`: a normal move, by its direction, at its from-cell;
//! * `parachute`: one more plane, a drop at its cell;
//! * `gemma`: one more plane, a removal at its cell.
//!
//! `index = plane * size² + grid_cell(cell)`. On square boards without extra planes this
//! is `direction * cells + dense(from)`, the layout of encoding version 1. Passes have no
//! index (a pass is forced, so no policy is needed for it).

use loa::geometry::{Geometry, NO_SQUARE};
use loa::{Move, MoveList, Position, Variant};

/// Number of policy planes of `variant`: its directions, plus a drop or removal plane.
pub fn policy_planes(variant: Variant) -> usize {
    let g = variant.geometry();
    g.directions() as usize + (variant.has_drops() || variant.has_vanishing()) as usize
}

/// Names of the policy planes of `variant`, in plane order (for `model.json`).
pub fn policy_plane_names(variant: Variant) -> Vec<String> {
    let g = variant.geometry();
    let mut names: Vec<String> = g
        .direction_names()
        .iter()
        .map(|d| format!("move_{d}"))
        .collect();
    if variant.has_drops() {
        names.push("drop".into());
    }
    if variant.has_vanishing() {
        names.push("remove".into());
    }
    names
}

/// Size of the policy vector of `variant`.
pub fn policy_size(variant: Variant) -> usize {
    let n = variant.geometry().size as usize;
    policy_planes(variant) * n * n
}

/// The policy index of a position's moves, and back. Implemented for [`Position`].
pub trait PolicyIndex {
    /// The policy index of a move of this position; `None` for a pass.
    fn policy_index(&self, mv: Move) -> Option<usize>;
    /// The legal move with policy index `index`, if there is one (passes have none).
    fn move_from_policy(&self, index: usize) -> Option<Move>;
}

impl PolicyIndex for Position {
    fn policy_index(&self, mv: Move) -> Option<usize> {
        let g = self.geometry();
        let grid = g.size as usize * g.size as usize;
        let plane = if mv.is_drop() || mv.is_remove() {
            g.directions() as usize
        } else {
            self.move_direction(mv)? as usize
        };
        Some(plane * grid + g.grid_cell[mv.from() as usize] as usize)
    }

    fn move_from_policy(&self, index: usize) -> Option<Move> {
        let g = self.geometry();
        let grid = g.size as usize * g.size as usize;
        if index >= policy_size(self.variant()) {
            return None;
        }
        let plane = index / grid;
        let from = g.grid_square[index % grid];
        if from == NO_SQUARE {
            return None;
        }
        if plane >= g.directions() as usize {
            let mut list = MoveList::new();
            self.generate_moves(&mut list);
            return list
                .iter()
                .copied()
                .find(|m| (m.is_drop() || m.is_remove()) && m.square() == from);
        }
        let mut found = None;
        let flag = g.move_flag;
        self.for_each_move(|f, d, to, capture| {
            if f == from && d as usize == plane {
                found = Some(Move::new_on(f, to, capture, flag));
            }
        });
        found
    }
}

/// The image of policy index `index` of `variant` under board symmetry `s`.
pub fn transform_policy_index(variant: Variant, index: usize, s: usize) -> usize {
    let g: &Geometry = variant.geometry();
    let grid = g.size as usize * g.size as usize;
    let plane = index / grid;
    let from = g.grid_square[index % grid] as usize;
    let new_plane = if plane < g.directions() as usize {
        g.symmetry_direction[s][plane] as usize
    } else {
        plane
    };
    let new_from = g.symmetry_square[s][from] as usize;
    new_plane * grid + g.grid_cell[new_from] as usize
}

/// A policy vector of `variant` (one value per index, [`policy_size`]) seen under board
/// symmetry `s`: the value of index `i` moves to [`transform_policy_index`]`(i)`; grid cells
/// off the board (never legal) keep their place. Errors: a wrong length, a symmetry out of
/// range.
pub fn transform_policy<T: Copy + Default>(
    variant: Variant,
    policy: &[T],
    s: usize,
) -> Result<Vec<T>, String> {
    let g = variant.geometry();
    if policy.len() != policy_size(variant) {
        return Err(format!(
            "policy of length {} for {variant}: expected {}",
            policy.len(),
            policy_size(variant)
        ));
    }
    if s >= g.num_symmetries as usize {
        return Err(format!(
            "symmetry {s} out of range: {variant} has {}",
            g.num_symmetries
        ));
    }
    let grid = g.size as usize * g.size as usize;
    let mut out = vec![T::default(); policy.len()];
    for (i, &x) in policy.iter().enumerate() {
        if g.grid_square[i % grid] == NO_SQUARE {
            out[i] = x;
        } else {
            out[transform_policy_index(variant, i, s)] = x;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::Rules;
    use std::collections::HashSet;

    /// Positions from pseudo-random games of `variant`, every ply.
    fn sample_positions(variant: Variant, games: usize, seed: u64) -> Vec<Position> {
        loa::testing::random_game_positions(variant, &Rules::classic(), games, 200, seed)
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
                }
                assert_eq!(p.move_from_policy(size), None);
            }
        }
    }

    #[test]
    fn symmetries_map_policy_indices_like_moves() {
        let rules = Rules::classic();
        for v in Variant::ALL {
            let g = v.geometry();
            for p in sample_positions(v, 10, 11) {
                for s in 0..g.num_symmetries as usize {
                    let q = p.transformed(s);
                    // The whole vector moves as its indices do (a permutation).
                    let ids: Vec<usize> = (0..policy_size(v)).collect();
                    let moved = transform_policy(v, &ids, s).unwrap();
                    let mut sorted = moved.clone();
                    sorted.sort_unstable();
                    assert_eq!(sorted, ids, "{v} sym {s}: not a permutation");
                    for &m in p.legal_moves(&rules).iter() {
                        if let Some(idx) = p.policy_index(m) {
                            let qm = p.transform_move(m, s);
                            assert_eq!(
                                transform_policy_index(v, idx, s),
                                q.policy_index(qm).unwrap(),
                                "{v} sym {s}"
                            );
                            assert_eq!(moved[q.policy_index(qm).unwrap()], idx);
                        }
                    }
                }
            }
        }
    }
}
