//! Move ⇄ policy index, for networks: a normal move is identified by its from-cell and
//! direction, so the policy has `directions × cells` entries laid out as planes:
//! `index = direction * num_cells + dense(from)`. Passes have no index (a pass is forced,
//! so no policy is needed for it).

use crate::geometry::Geometry;
use crate::{Move, Position};

/// Size of the policy vector of a board.
pub fn policy_size(g: &Geometry) -> usize {
    g.directions() as usize * g.num_cells as usize
}

impl Position {
    /// The policy index of a normal move of this position; `None` for a pass.
    pub fn policy_index(&self, mv: Move) -> Option<usize> {
        let g = self.geometry();
        let dir = self.move_direction(mv)?;
        Some(dir as usize * g.num_cells as usize + g.dense[mv.from() as usize] as usize)
    }

    /// The legal normal move with policy index `index`, if there is one.
    pub fn move_from_policy(&self, index: usize) -> Option<Move> {
        let g = self.geometry();
        let cells = g.num_cells as usize;
        if index >= policy_size(g) {
            return None;
        }
        let dir = (index / cells) as u8;
        let from = g.sparse[index % cells];
        let own = self.pieces(self.to_move());
        if own & (1u64 << from) == 0 {
            return None;
        }
        let mut found = None;
        self.for_each_move(|f, d, to, capture| {
            if f == from && d == dir {
                found = Some(Move::new(f, to, capture));
            }
        });
        found
    }
}

/// The image of policy index `index` under board symmetry `s`.
pub fn transform_policy_index(g: &Geometry, index: usize, s: usize) -> usize {
    let cells = g.num_cells as usize;
    let dir = index / cells;
    let from = g.sparse[index % cells] as usize;
    let new_dir = g.symmetry_direction[s][dir] as usize;
    let new_from = g.symmetry_square[s][from] as usize;
    new_dir * cells + g.dense[new_from] as usize
}
