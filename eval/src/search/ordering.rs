//! Move-ordering helpers of the searcher: drop ordering, centrality, history indices,
//! and which moves make earlier positions unrepeatable.

use crate::evaluation::{centrality, distance_to_centre_of_mass_n};
use loa::{Move, Position, Square};

/// Ordering of the drops of a pending compound turn: an opponent's piece hurts it most far
/// from its centre of mass and away from its pieces.
pub(crate) struct DropOrder {
    geometry: &'static loa::Geometry,
    opponent: u64,
    near: u64,
}

impl DropOrder {
    /// The ordering for `pos`, if a drop is pending there.
    pub(crate) fn new(pos: &Position) -> Option<DropOrder> {
        if !pos.drop_pending() {
            return None;
        }
        let g = pos.geometry();
        let opponent = pos.pieces(pos.to_move().opponent());
        Some(DropOrder {
            geometry: g,
            opponent,
            near: g.dilate(opponent),
        })
    }

    /// Ordering bonus of a drop on `sq` (0..=256, below killers and history).
    #[inline]
    pub(crate) fn score(&self, sq: Square) -> i32 {
        let n = self.opponent.count_ones().max(1) as i32;
        let far = distance_to_centre_of_mass_n(self.geometry, sq, self.opponent) * 16 / n;
        far.min(128)
            + if self.near & (1u64 << sq) == 0 {
                128
            } else {
                0
            }
    }
}

/// Small ordering bonus for moves towards the centre (ties among quiet moves).
#[inline]
pub(crate) fn centrality_bonus(pos: &Position, mv: Move) -> i32 {
    if !mv.is_step() {
        return 0;
    }
    let g = pos.geometry();
    centrality(g, mv.to()) - centrality(g, mv.from())
}

/// Whether no later position can repeat one from before `mv` is played in `pos`: a
/// capture, drop or removal changes the material, and in `gemma` every move makes a cell
/// vanish.
#[inline]
pub(crate) fn irreversible(pos: &Position, mv: Move) -> bool {
    mv.is_capture() || mv.is_drop() || mv.is_remove() || pos.variant().has_vanishing()
}

#[inline]
pub(crate) fn history_index(color: usize, mv: Move) -> usize {
    (color << 12) | ((mv.from() as usize) << 6) | mv.to() as usize
}
