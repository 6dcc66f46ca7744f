//! Static evaluation of a position with the classical LOA features (MIA-style).
//!
//! All features are computed from the bitboards in a few dozen word operations plus one
//! pass of the move generator per side (mobility and blocked pieces); no allocation.
//! Pure functions: thread-safe.

use crate::config::EvalWeights;
use loa::{Color, Geometry, Position};

/// Largest magnitude of a static evaluation; search win scores are far above it.
pub const EVAL_LIMIT: i32 = 2000;

const FILE_A: u64 = 0x0101_0101_0101_0101;
const NOT_FILE_A: u64 = !FILE_A;
const NOT_FILE_H: u64 = !(FILE_A << 7);
/// Anchors of 2×2 windows lying wholly inside the 8×8 layout (file ≤ 6, rank ≤ 6).
const QUAD_ANCHORS: u64 = 0x007F_7F7F_7F7F_7F7F;

/// Per-board tables used by the evaluation.
struct BoardTables {
    /// Ring index from the edge inwards (edge 0).
    centrality: [u8; 64],
    /// Cells on the edge of the board.
    edge: u64,
    /// Board centre coordinate (both axes), doubled to stay integral.
    centre2: i32,
}

#[allow(clippy::needless_range_loop)]
fn board_tables(size: u8) -> BoardTables {
    let n = size as i32;
    let mut centrality = [0u8; 64];
    let mut edge = 0u64;
    for sq in 0..64usize {
        let (x, y) = ((sq % 8) as i32, (sq / 8) as i32);
        if x >= n || y >= n {
            continue;
        }
        let ring = x.min(y).min(n - 1 - x).min(n - 1 - y);
        centrality[sq] = ring as u8;
        if ring == 0 {
            edge |= 1u64 << sq;
        }
    }
    BoardTables {
        centrality,
        edge,
        centre2: n - 1,
    }
}

fn tables(g: &Geometry) -> &'static BoardTables {
    use std::sync::OnceLock;
    static T8: OnceLock<BoardTables> = OnceLock::new();
    static T6: OnceLock<BoardTables> = OnceLock::new();
    match g.size {
        6 => T6.get_or_init(|| board_tables(6)),
        _ => T8.get_or_init(|| board_tables(8)),
    }
}

/// Smallest possible sum of Chebyshev distances of `n` pieces to one cell (a packed
/// group: 1 piece at distance 0, 8 at distance 1, 16 at distance 2, ...).
fn min_distance_sum(n: u32) -> u32 {
    let mut left = n.saturating_sub(1);
    let mut sum = 0;
    let mut ring = 1;
    while left > 0 {
        let k = left.min(8 * ring);
        sum += k * ring;
        left -= k;
        ring += 1;
    }
    sum
}

/// Quad counts of a set of cells over every 2×2 window touching the board (windows hanging
/// over the 8×8 layout's edge included; cells outside a smaller board are empty anyway).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quads {
    /// Windows holding exactly one cell of the set.
    pub q1: u32,
    /// Windows holding exactly three.
    pub q3: u32,
    /// Windows holding all four.
    pub q4: u32,
    /// Windows holding two diagonally opposite cells.
    pub qd: u32,
}

impl Quads {
    /// Euler number under 8-connectivity, times 4: `Q1 - Q3 - 2·Qd` (= 4·(groups − holes)).
    pub fn euler4(&self) -> i32 {
        self.q1 as i32 - self.q3 as i32 - 2 * self.qd as i32
    }
}

/// The eight bits of file A of `p` packed into one byte (in some fixed order).
#[inline]
fn file_a_byte(p: u64) -> u32 {
    (((p & FILE_A).wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u32
}

/// Counts the quads of `p` (see [`Quads`]).
pub fn quads(p: u64) -> Quads {
    let a = p & QUAD_ANCHORS;
    let b = (p >> 1) & QUAD_ANCHORS;
    let c = (p >> 8) & QUAD_ANCHORS;
    let d = (p >> 9) & QUAD_ANCHORS;
    let odd = a ^ b ^ c ^ d;
    let pair = (a & b) | (c & d);
    let q1 = odd & !pair;
    let q3 = odd & pair;
    let q4 = a & b & c & d;
    let qd = (a & d & !b & !c) | (b & c & !a & !d);
    // Windows over the edges hold at most two adjacent cells: a Q1 exactly when one is set.
    let transitions9 = |x: u32| (x ^ (x << 1)).count_ones();
    let inner_transitions = |x: u32| ((x ^ (x >> 1)) & 0x7F).count_ones();
    let border = transitions9(file_a_byte(p))
        + transitions9(file_a_byte(p >> 7))
        + inner_transitions((p & 0xFF) as u32)
        + inner_transitions((p >> 56) as u32);
    Quads {
        q1: q1.count_ones() + border,
        q3: q3.count_ones(),
        q4: q4.count_ones(),
        qd: qd.count_ones(),
    }
}

/// Adjacent pairs of cells in `p` (8-neighbourhood, each pair once).
#[inline]
pub fn adjacent_pairs(p: u64) -> u32 {
    (p & (p >> 1) & NOT_FILE_H).count_ones()
        + (p & (p >> 8)).count_ones()
        + (p & (p >> 9) & NOT_FILE_H).count_ones()
        + (p & (p >> 7) & NOT_FILE_A).count_ones()
}

/// The raw features of one side, before weighting (see [`EvalWeights`] for their meaning).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SideFeatures {
    pub pieces: u32,
    pub concentration: f32,
    pub centralisation: f32,
    pub com_position: f32,
    pub euler: f32,
    pub quads: f32,
    pub mobility: f32,
    pub blocked: f32,
    pub walls: f32,
    pub connectedness: f32,
    pub groups: f32,
    pub uniformity: f32,
}

/// Computes the features of `color` in `pos` (features whose weight in `w` is zero and
/// that cost extra work are left at 0).
pub fn side_features(pos: &Position, color: Color, w: &EvalWeights) -> SideFeatures {
    let g = pos.geometry();
    let t = tables(g);
    let own = pos.pieces(color);
    let enemy = pos.pieces(color.opponent());
    let occupied = own | enemy;
    let n = own.count_ones();
    if n == 0 {
        return SideFeatures::default();
    }

    // Centre of mass, centralisation, bounding box.
    let (mut sx, mut sy, mut central) = (0i32, 0i32, 0u32);
    let mut bits = own;
    while bits != 0 {
        let sq = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        sx += (sq % 8) as i32;
        sy += (sq / 8) as i32;
        central += t.centrality[sq] as u32;
    }
    let ni = n as i32;
    // Exact centre of mass (symmetric under board symmetries, unlike a rounded one).
    let cx = sx as f32 / n as f32;
    let cy = sy as f32 / n as f32;
    let mut dist = 0.0f32;
    let mut bits = own;
    while bits != 0 {
        let sq = bits.trailing_zeros() as i32;
        bits &= bits - 1;
        dist += ((sq % 8) as f32 - cx)
            .abs()
            .max(((sq / 8) as f32 - cy).abs());
    }
    let surplus = (dist - min_distance_sum(n) as f32).max(0.0) / n as f32;
    // Distance of the exact centre of mass to the centre, in half cells.
    let com_dx = (2 * sx - t.centre2 * ni).abs() as f32 / (2 * ni) as f32;
    let com_dy = (2 * sy - t.centre2 * ni).abs() as f32 / (2 * ni) as f32;

    let min_rank = own.trailing_zeros() / 8;
    let max_rank = (63 - own.leading_zeros()) / 8;
    let mut files = own | (own >> 32);
    files |= files >> 16;
    files |= files >> 8;
    let files = (files & 0xFF) as u32;
    let min_file = files.trailing_zeros();
    let max_file = 31 - files.leading_zeros();
    let area = (max_rank - min_rank + 1) * (max_file - min_file + 1);

    let q = quads(own);

    // Mobility (capture 2, to an edge cell ½, else 1; in half units) and blocked pieces.
    let mut mobility2 = 0u32;
    let mut movers = 0u64;
    loa::movegen::for_each_move(g, own, occupied, enemy, own, |from, _, to, capture| {
        movers |= 1u64 << from;
        mobility2 += if capture {
            4
        } else if t.edge & (1u64 << to) != 0 {
            1
        } else {
            2
        };
    });
    let blocked = (own & !movers).count_ones();

    // Walls: edge pieces whose inward neighbours are all enemy pieces.
    let mut walls = 0;
    let mut edge_pieces = own & t.edge;
    while edge_pieces != 0 {
        let sq = edge_pieces.trailing_zeros() as usize;
        edge_pieces &= edge_pieces - 1;
        let inward = g.neighbours[sq] & !t.edge & g.cells;
        if inward != 0 && inward & !enemy == 0 {
            walls += 1;
        }
    }

    let nf = n as f32;
    SideFeatures {
        pieces: n,
        concentration: 4.0 / (1.0 + surplus),
        centralisation: central as f32 / nf,
        com_position: -com_dx.max(com_dy),
        euler: -(q.euler4() as f32) / 4.0,
        quads: (q.q3 + q.q4) as f32 / nf,
        mobility: mobility2 as f32 / (2.0 * nf),
        blocked: -(blocked as f32),
        walls: -(walls as f32),
        connectedness: adjacent_pairs(own) as f32 / nf,
        groups: if w.groups != 0.0 {
            -(g.count_groups(own) as f32)
        } else {
            0.0
        },
        uniformity: -(area as f32) * 10.0 / g.num_cells as f32,
    }
}

impl SideFeatures {
    /// The weighted sum of the features (without the side-to-move bonus).
    pub fn weighted(&self, w: &EvalWeights) -> f32 {
        w.concentration * self.concentration
            + w.centralisation * self.centralisation
            + w.com_position * self.com_position
            + w.euler * self.euler
            + w.quads * self.quads
            + w.mobility * self.mobility
            + w.blocked * self.blocked
            + w.walls * self.walls
            + w.connectedness * self.connectedness
            + w.groups * self.groups
            + w.uniformity * self.uniformity
    }
}

/// The static evaluation of `pos` for the side to move, in `[-EVAL_LIMIT, EVAL_LIMIT]`.
/// Assumes the game is not over (the search scores finished games itself).
pub fn evaluate(pos: &Position, w: &EvalWeights) -> i32 {
    let us = pos.to_move();
    let ours = side_features(pos, us, w).weighted(w);
    let theirs = side_features(pos, us.opponent(), w).weighted(w);
    let score = ours - theirs + w.side_to_move;
    (score.round() as i32).clamp(-EVAL_LIMIT, EVAL_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Rules, Variant};

    #[test]
    fn min_distance_sums() {
        assert_eq!(min_distance_sum(1), 0);
        assert_eq!(min_distance_sum(9), 8);
        assert_eq!(min_distance_sum(12), 14);
    }

    fn naive_quads(p: u64) -> Quads {
        let at = |f: i32, r: i32| {
            (0..8).contains(&f) && (0..8).contains(&r) && p >> (r * 8 + f) & 1 != 0
        };
        let mut q = Quads::default();
        for f in -1..8 {
            for r in -1..8 {
                let (a, b, c, d) = (at(f, r), at(f + 1, r), at(f, r + 1), at(f + 1, r + 1));
                match a as u32 + b as u32 + c as u32 + d as u32 {
                    1 => q.q1 += 1,
                    3 => q.q3 += 1,
                    4 => q.q4 += 1,
                    2 if a == d => q.qd += 1,
                    _ => {}
                }
            }
        }
        q
    }

    #[test]
    fn quads_match_a_naive_count_and_euler_counts_groups() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = x & x.rotate_left(19) & x.rotate_left(41);
            assert_eq!(quads(p), naive_quads(p), "{p:#x}");
        }
        // Without holes the Euler number is the group count.
        let g = Variant::Standard.geometry();
        for p in [
            1u64,
            0x81,
            0x8100_0000_0000_0081,
            0x0303,
            0x0000_0018_1800_0000,
        ] {
            assert_eq!(quads(p).euler4(), 4 * g.count_groups(p) as i32, "{p:#x}");
        }
        // A ring has one hole.
        assert_eq!(quads(0x0007_0507).euler4(), 0);
    }

    #[test]
    fn adjacency_count() {
        assert_eq!(adjacent_pairs(0b11), 1);
        assert_eq!(adjacent_pairs(0x0303), 6);
        // h1 and a2 are not adjacent.
        assert_eq!(adjacent_pairs((1 << 7) | (1 << 8)), 0);
    }

    #[test]
    fn evaluation_is_antisymmetric_in_the_side_to_move_and_symmetric_under_symmetries() {
        let w = EvalWeights::default();
        for variant in Variant::ALL {
            let rules = Rules::classic();
            let start = Position::start(variant, &rules);
            let e = evaluate(&start, &w);
            for s in 0..8 {
                assert_eq!(evaluate(&start.transformed(s), &w), e);
            }
            // Swap the side to move: the position-dependent part changes sign.
            let flipped = Position::new(
                variant,
                start.pieces(Color::Black),
                start.pieces(Color::White),
                Color::White,
            )
            .unwrap();
            let f = evaluate(&flipped, &w);
            assert!((e - w.side_to_move as i32) + (f - w.side_to_move as i32) <= 1);
        }
    }

    #[test]
    fn a_compact_group_beats_a_scattered_one() {
        let w = EvalWeights::default();
        // Black: compact 2x3 block in the centre; White: scattered corners and edges.
        let pos =
            Position::from_text("w6w/8/8/2bbb3/2bbb3/8/8/w2w3w b", Variant::Standard).unwrap();
        assert!(evaluate(&pos, &w) > 100, "{}", evaluate(&pos, &w));
    }
}
