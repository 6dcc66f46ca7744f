//! Concentration features of a side's pieces — the knowledge behind every LOA evaluation:
//! board distances, the centre of mass and distances to it, and the tightest possible
//! packing of `n` pieces. The heuristic MCTS evaluator (`selfplay`) and the alpha-beta
//! evaluation (`eval`) both build on these; they live here once. Pure functions.

use crate::geometry::{Geometry, Shape, Square};

/// Board distance of a grid displacement `(dx, dy)` (see [`Geometry::coords`]): Chebyshev
/// distance on square boards, hex distance on the hexagonal board's axial grid (steps
/// (±1, 0), (0, ±1) and ±(1, 1) cost 1). Homogeneous: `distance(k·dx, k·dy) = k ·
/// distance(dx, dy)`, which lets callers work with coordinates scaled by a piece count.
#[inline]
pub fn board_distance(shape: Shape, dx: i32, dy: i32) -> i32 {
    match shape {
        Shape::Square => dx.abs().max(dy.abs()),
        Shape::Hex => dx.abs().max(dy.abs()).max((dx - dy).abs()),
    }
}

/// The centre of mass of a set of cells, kept as integer coordinate sums so that
/// distances to it are exact integers when scaled by the piece count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CentreOfMass {
    /// Sum of the cells' columns.
    pub sum_col: i32,
    /// Sum of the cells' rows.
    pub sum_row: i32,
    /// Number of cells.
    pub count: i32,
}

impl CentreOfMass {
    /// The centre of mass of the cells of `set` that lie on `g`'s board.
    pub fn of(g: &Geometry, set: u64) -> CentreOfMass {
        let mut com = CentreOfMass {
            sum_col: 0,
            sum_row: 0,
            count: 0,
        };
        let mut bits = set & g.cells;
        while bits != 0 {
            let (c, r) = g.coords(bits.trailing_zeros() as Square);
            bits &= bits - 1;
            com.sum_col += c as i32;
            com.sum_row += r as i32;
            com.count += 1;
        }
        com
    }

    /// (column, row) of the centre; (0, 0) for an empty set.
    pub fn centre(&self) -> (f32, f32) {
        let n = self.count.max(1) as f32;
        (self.sum_col as f32 / n, self.sum_row as f32 / n)
    }

    /// Board distance of cell `sq` to the centre, times the cell count (an exact integer);
    /// 0 for an empty set.
    #[inline]
    pub fn distance_n(&self, g: &Geometry, sq: Square) -> i32 {
        let (c, r) = g.coords(sq);
        board_distance(
            g.shape,
            self.count * c as i32 - self.sum_col,
            self.count * r as i32 - self.sum_row,
        )
    }

    /// Board distance of cell `sq` to the centre; 0 for an empty set.
    #[inline]
    pub fn distance(&self, g: &Geometry, sq: Square) -> f32 {
        self.distance_n(g, sq) as f32 / self.count.max(1) as f32
    }

    /// Sum of the board distances of the cells of `set` (on `g`'s board) to the centre:
    /// the concentration of a side when `set` is the set the centre was taken of.
    pub fn distance_sum(&self, g: &Geometry, set: u64) -> f32 {
        let mut sum = 0;
        let mut bits = set & g.cells;
        while bits != 0 {
            sum += self.distance_n(g, bits.trailing_zeros() as Square);
            bits &= bits - 1;
        }
        sum as f32 / self.count.max(1) as f32
    }
}

/// Mean board distance of the pieces of `set` to their centre of mass above the least
/// that as many pieces can have on an unbounded board ([`min_distance_sum`]): 0 for a
/// tightly packed group, growing as the pieces spread. 0 for fewer than two pieces.
pub fn excess_distance(g: &Geometry, set: u64) -> f32 {
    let com = CentreOfMass::of(g, set);
    let n = com.count as u32;
    if n <= 1 {
        return 0.0;
    }
    (com.distance_sum(g, set) - min_distance_sum(g, n) as f32).max(0.0) / n as f32
}

/// Smallest possible sum of board distances of `n` pieces to one cell of an unbounded
/// board (a packed group: 1 piece at distance 0, `ring` cells at distance 1, `2·ring` at
/// distance 2, …; `ring` is 8 on square boards and 6 on the hexagonal one).
pub fn min_distance_sum(g: &Geometry, n: u32) -> u32 {
    let ring_cells = 2 * g.axes as u32;
    let mut left = n.saturating_sub(1);
    let mut sum = 0;
    let mut ring = 1;
    while left > 0 {
        let k = left.min(ring_cells * ring);
        sum += k * ring;
        left -= k;
        ring += 1;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn packings_match_hand_counts() {
        let square = Variant::Standard.geometry();
        let hex = Variant::Alveole.geometry();
        assert_eq!(min_distance_sum(square, 0), 0);
        assert_eq!(min_distance_sum(square, 1), 0);
        assert_eq!(min_distance_sum(square, 9), 8);
        assert_eq!(min_distance_sum(square, 12), 14);
        assert_eq!(min_distance_sum(hex, 7), 6);
        assert_eq!(min_distance_sum(hex, 9), 10);
        assert_eq!(min_distance_sum(hex, 19), 30);
    }

    #[test]
    fn centre_of_mass_distances_are_exact_and_symmetric() {
        let g = Variant::Standard.geometry();
        // a1 and c3: centre b2; a1 is at distance 1 from it, d4 at distance 2.
        let com = CentreOfMass::of(g, 1 | (1 << 18));
        assert_eq!(com.centre(), (1.0, 1.0));
        assert_eq!(com.distance_n(g, 0), 2);
        assert_eq!(com.distance(g, 27), 2.0);
        // Hex distance: (1, 1) is one step, (1, -1) two.
        assert_eq!(board_distance(Shape::Hex, 1, 1), 1);
        assert_eq!(board_distance(Shape::Hex, 1, -1), 2);
        assert_eq!(board_distance(Shape::Square, 1, -1), 1);
        assert_eq!(CentreOfMass::of(g, 0).distance(g, 5), 0.0);
        // a1 + c3: distances 1 and 1 to b2; the tightest pair has 1/2 + 1/2.
        assert_eq!(com.distance_sum(g, 1 | (1 << 18)), 2.0);
    }

    #[test]
    fn excess_distance_is_zero_when_packed_and_grows_with_spread() {
        let g = Variant::Standard.geometry();
        // A 3x3 block (a1..c3) is the tightest packing of 9 pieces.
        let block = 0b111 | (0b111 << 8) | (0b111 << 16);
        assert_eq!(excess_distance(g, block), 0.0);
        assert_eq!(excess_distance(g, 1), 0.0);
        assert_eq!(excess_distance(g, 0), 0.0);
        // Two opposite corners: each at distance 3.5 from the centre, the tightest pair
        // at 0.5 each: excess (7 - 1) / 2 = 3.
        assert_eq!(excess_distance(g, 1 | (1 << 63)), 3.0);
        let spread = 1 | (1 << 7) | (1 << 56) | (1 << 63) | (1 << 27);
        assert!(excess_distance(g, spread) > excess_distance(g, block | (1 << 27)));
    }
}
