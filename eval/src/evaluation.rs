//! Static evaluation of a position with the classical LOA features (MIA-style), on every
//! board and variant.
//!
//! All features are computed from the bitboards, per-board tables and one pass of the move
//! generator per side (mobility and blocked pieces); no allocation. Distances are integers
//! scaled by the piece count (so the evaluation is exactly symmetric under every board
//! symmetry): Chebyshev distance on square boards, hex distance on the hexagonal board.
//! Per variant:
//! * `ambiloa`: a colour is a team; its features are those of the team's pieces (the team's
//!   connection is what wins), mobility counts the moves of both partners (each moving its
//!   own pieces, partner pieces friendly).
//! * `gemma`: vanished cells are never landing cells (mobility, walls).
//! * `parachute`: the pieces of a side the opponent still holds are material still to come,
//!   dropped where they hurt most: concentration counts them at the largest distance from the
//!   side's centre of mass any empty cell has (their surplus distance is added to that of the
//!   pieces on the board). While a drop is pending the side to move's
//!   turn is not over and the next normal move is the opponent's, so the side-to-move bonus
//!   goes to the opponent.
//!
//! Pure functions: thread-safe.

use crate::config::{EvalWeights, Feature, PerFeature};
use loa::features::{board_distance, min_distance_sum, CentreOfMass};
use loa::geometry::Shape;
use loa::{Color, Geometry, Position, Square};

/// Largest magnitude of a static evaluation; search win scores are far above it.
pub const EVAL_LIMIT: i32 = 2000;

const FILE_A: u64 = 0x0101_0101_0101_0101;
const NOT_FILE_A: u64 = !FILE_A;
const NOT_FILE_H: u64 = !(FILE_A << 7);
/// Anchors of 2×2 windows lying wholly inside the 8×8 layout (file ≤ 6, rank ≤ 6).
const QUAD_ANCHORS: u64 = 0x007F_7F7F_7F7F_7F7F;
/// Number of coordinate values a band table holds (hex `col - row + 8` spans 0..=16).
const BAND_VALUES: usize = 17;

/// Per-board tables used by the evaluation (and the search's move ordering).
struct BoardTables {
    hex: bool,
    /// (col, row) of every square of the board (see [`Geometry::coords`]).
    coords: [(i32, i32); 64],
    /// Ring index from the edge inwards (edge 0).
    centrality: [u8; 64],
    /// Cells on the edge of the board.
    edge: u64,
    /// Board centre coordinate (both axes), doubled to stay integral.
    centre2: i32,
    /// `bands[kind][v]`: the cells whose coordinate of that kind is `v` (kinds: col, row,
    /// and on the hexagonal board `col - row + 8`). A bounding region is an intersection of
    /// unions of bands.
    bands: [[u64; BAND_VALUES]; 3],
    /// Number of coordinate kinds in `bands` (2 square, 3 hex).
    kinds: usize,
    /// Hexagonal board: the neighbours in directions E, NE and NW (each adjacent pair is
    /// seen once from its lower cell).
    forward: [u64; 64],
    /// Hexagonal board: the two other cells of the triangles {p, p+E, p+NE} and
    /// {p, p+NE, p+NW} (0 where a triangle leaves the board).
    triangles: [[u64; 2]; 64],
}

impl BoardTables {
    fn new(g: &Geometry) -> BoardTables {
        let hex = g.shape == Shape::Hex;
        let n = g.size as i32;
        let mut t = BoardTables {
            hex,
            coords: [(0, 0); 64],
            centrality: [0; 64],
            edge: 0,
            centre2: n - 1,
            bands: [[0; BAND_VALUES]; 3],
            kinds: if hex { 3 } else { 2 },
            forward: [0; 64],
            triangles: [[0; 2]; 64],
        };
        let mut cells = g.cells;
        while cells != 0 {
            let sq = cells.trailing_zeros() as usize;
            cells &= cells - 1;
            let (c, r) = g.coords(sq as Square);
            let (x, y) = (c as i32, r as i32);
            t.coords[sq] = (x, y);
            let ring = if hex {
                let half = (n - 1) / 2;
                half - board_distance(Shape::Hex, x - half, y - half)
            } else {
                x.min(y).min(n - 1 - x).min(n - 1 - y)
            };
            t.centrality[sq] = ring as u8;
            if ring == 0 {
                t.edge |= 1u64 << sq;
            }
            t.bands[0][x as usize] |= 1u64 << sq;
            t.bands[1][y as usize] |= 1u64 << sq;
            if hex {
                t.bands[2][(x - y + 8) as usize] |= 1u64 << sq;
                let step = |d: usize| {
                    let to = g.target[sq][d][1];
                    if g.contains(to) {
                        1u64 << to
                    } else {
                        0
                    }
                };
                // Hex directions: 0 = E, 1 = NE, 2 = NW.
                let (e, ne, nw) = (step(0), step(1), step(2));
                t.forward[sq] = e | ne | nw;
                t.triangles[sq] = [
                    if e != 0 && ne != 0 { e | ne } else { 0 },
                    if ne != 0 && nw != 0 { ne | nw } else { 0 },
                ];
            }
        }
        t
    }
}

fn tables(g: &Geometry) -> &'static BoardTables {
    use std::sync::OnceLock;
    static T8: OnceLock<BoardTables> = OnceLock::new();
    static T6: OnceLock<BoardTables> = OnceLock::new();
    static HEX: OnceLock<BoardTables> = OnceLock::new();
    let cell = match (g.shape, g.size) {
        (Shape::Hex, _) => &HEX,
        (Shape::Square, 6) => &T6,
        (Shape::Square, 8) => &T8,
        (Shape::Square, n) => panic!("no evaluation tables for a {n}x{n} board"),
    };
    cell.get_or_init(|| BoardTables::new(g))
}

/// Ring of `sq` counted from the board's edge inwards (0 on the edge); 0 for a square that
/// is not on the board.
#[inline]
pub fn centrality(g: &Geometry, sq: Square) -> i32 {
    if g.contains(sq) {
        tables(g).centrality[sq as usize] as i32
    } else {
        0
    }
}

/// Board distance (Chebyshev, or hex distance on the hexagonal board) of `sq` to the centre
/// of mass of `set`, times `set`'s piece count; 0 for an empty set or a square that is not
/// on the board.
pub fn distance_to_centre_of_mass_n(g: &Geometry, sq: Square, set: u64) -> i32 {
    if !g.contains(sq) {
        return 0;
    }
    CentreOfMass::of(g, set).distance_n(g, sq)
}

/// Quad counts of a set of cells of the 8×8 layout over every 2×2 window touching the board
/// (windows hanging over the layout's edge included; cells outside a smaller board are
/// empty anyway). Square boards only.
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

/// Counts the quads of `p` in the 8×8 layout (see [`Quads`]).
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

/// Adjacent pairs of cells in `p` in the 8×8 layout (8-neighbourhood, each pair once).
/// Square boards only; see [`neighbour_pairs`] for any board.
#[inline]
pub fn adjacent_pairs(p: u64) -> u32 {
    (p & (p >> 1) & NOT_FILE_H).count_ones()
        + (p & (p >> 8)).count_ones()
        + (p & (p >> 9) & NOT_FILE_H).count_ones()
        + (p & (p >> 7) & NOT_FILE_A).count_ones()
}

/// Hexagonal board: (adjacent pairs, triangles of three mutually adjacent cells) of `set`.
fn hex_pairs_and_triangles(t: &BoardTables, set: u64) -> (u32, u32) {
    let (mut pairs, mut triangles) = (0, 0);
    let mut bits = set;
    while bits != 0 {
        let sq = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        pairs += (set & t.forward[sq]).count_ones();
        for tri in t.triangles[sq] {
            if tri != 0 && set & tri == tri {
                triangles += 1;
            }
        }
    }
    (pairs, triangles)
}

/// Adjacent pairs of cells of `set` under the board's connection adjacency (each pair once).
pub fn neighbour_pairs(g: &Geometry, set: u64) -> u32 {
    let set = set & g.cells;
    match g.shape {
        Shape::Square => adjacent_pairs(set),
        Shape::Hex => hex_pairs_and_triangles(tables(g), set).0,
    }
}

/// Euler number (groups minus holes) of `set` under the board's connection adjacency:
/// from quads on square boards (8-connectivity), as cells − adjacent pairs + triangles on
/// the hexagonal board (6-connectivity, where both a set and its complement are
/// 6-connected, so the count is exact).
pub fn euler_number(g: &Geometry, set: u64) -> i32 {
    let set = set & g.cells;
    match g.shape {
        Shape::Square => quads(set).euler4() / 4,
        Shape::Hex => {
            let (pairs, triangles) = hex_pairs_and_triangles(tables(g), set);
            set.count_ones() as i32 - pairs as i32 + triangles as i32
        }
    }
}

/// The raw features of one side, before weighting (see [`Feature`] for their meaning and
/// signs: a feature that "enters with a minus sign" is stored negated, so every weight is a
/// reward).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SideFeatures {
    /// Number of pieces.
    pub pieces: u32,
    /// The value of each feature.
    pub values: PerFeature,
}

/// Computes the features of `color` (its team in `ambiloa`) in `pos` (features whose
/// weight in `w` is zero and that cost extra work are left at 0). On the hexagonal board
/// "quads" are solid triangles (three mutually adjacent own pieces) and the Euler number is
/// [`euler_number`]'s; the bounding box is the smallest region bounded by lines of every
/// axis (a box on square boards, a hexagon-like region on the hexagonal one).
pub fn side_features(pos: &Position, color: Color, w: &EvalWeights) -> SideFeatures {
    let g = pos.geometry();
    let t = tables(g);
    let own = pos.pieces(color);
    let enemy = pos.pieces(color.opponent());
    let vanished = pos.vanished();
    let occupied = own | enemy;
    let n = own.count_ones();
    if n == 0 {
        return SideFeatures::default();
    }
    let ni = n as i32;

    // Centre of mass, centralisation, coordinate ranges.
    let (mut sx, mut sy, mut central) = (0i32, 0i32, 0u32);
    let mut lo = [i32::MAX; 3];
    let mut hi = [i32::MIN; 3];
    let mut bits = own;
    while bits != 0 {
        let sq = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let (x, y) = t.coords[sq];
        sx += x;
        sy += y;
        central += t.centrality[sq] as u32;
        for (k, v) in [x, y, x - y + 8].into_iter().enumerate() {
            lo[k] = lo[k].min(v);
            hi[k] = hi[k].max(v);
        }
    }
    // Distances to the exact centre of mass, times n (integers: symmetric under every
    // board symmetry, unlike a rounded centre).
    let com = CentreOfMass {
        sum_col: sx,
        sum_row: sy,
        count: ni,
    };
    let mut dist_n = 0i32;
    let mut bits = own;
    while bits != 0 {
        let sq = bits.trailing_zeros() as Square;
        bits &= bits - 1;
        dist_n += com.distance_n(g, sq);
    }
    // Parachute: the opponent drops the pieces it holds where they hurt most.
    let incoming = pos.reserve(color.opponent()) as u32;
    if incoming > 0 {
        let mut far_n = 0;
        let mut empty = g.cells & !occupied & !vanished;
        while empty != 0 {
            let sq = empty.trailing_zeros() as Square;
            empty &= empty - 1;
            far_n = far_n.max(com.distance_n(g, sq));
        }
        dist_n += incoming as i32 * far_n;
    }
    // The surplus of the pieces to come adds to that of the pieces on the board, per piece
    // on the board (so a held reserve never looks like an improvement).
    let dist = dist_n as f32 / n as f32;
    let packed = min_distance_sum(g, n + incoming) as f32;
    let surplus = (dist - packed).max(0.0) / n as f32;
    // Distance of the exact centre of mass to the centre, in half cells.
    let com_distance = board_distance(g.shape, 2 * sx - t.centre2 * ni, 2 * sy - t.centre2 * ni)
        as f32
        / (2 * ni) as f32;

    let area = if w.features[Feature::Uniformity] != 0.0 {
        let mut region = g.cells;
        for k in 0..t.kinds {
            let mut band = 0;
            for v in lo[k]..=hi[k] {
                band |= t.bands[k][v as usize];
            }
            region &= band;
        }
        region.count_ones()
    } else {
        0
    };

    let (euler, solid, pairs) = if t.hex {
        let (pairs, triangles) = hex_pairs_and_triangles(t, own);
        let euler = n as i32 - pairs as i32 + triangles as i32;
        (euler as f32, triangles, pairs)
    } else {
        let q = quads(own);
        (q.euler4() as f32 / 4.0, q.q3 + q.q4, adjacent_pairs(own))
    };

    // Mobility (capture 2, to an edge cell ½, else 1; in half units) and blocked pieces.
    // In ambiloa the team's pieces move with the same masks whichever partner owns them.
    let mut mobility2 = 0u32;
    let mut movers = 0u64;
    let forbidden = own | vanished;
    loa::movegen::for_each_move(
        g,
        own,
        occupied,
        enemy,
        forbidden,
        |from, _, to, capture| {
            movers |= 1u64 << from;
            mobility2 += if capture {
                4
            } else if t.edge & (1u64 << to) != 0 {
                1
            } else {
                2
            };
        },
    );
    let blocked = (own & !movers).count_ones();

    // Walls: edge pieces whose inward neighbours are all enemy pieces (or vanished cells).
    let mut walls = 0;
    let mut edge_pieces = own & t.edge;
    while edge_pieces != 0 {
        let sq = edge_pieces.trailing_zeros() as usize;
        edge_pieces &= edge_pieces - 1;
        let inward = g.neighbours[sq] & !t.edge & g.cells;
        if inward != 0 && inward & !(enemy | vanished) == 0 {
            walls += 1;
        }
    }

    let nf = n as f32;
    let mut v = PerFeature::default();
    v[Feature::Concentration] = 4.0 / (1.0 + surplus);
    v[Feature::Centralisation] = central as f32 / nf;
    v[Feature::ComPosition] = -com_distance;
    v[Feature::Euler] = -euler;
    v[Feature::Quads] = solid as f32 / nf;
    v[Feature::Mobility] = mobility2 as f32 / (2.0 * nf);
    v[Feature::Blocked] = -(blocked as f32);
    v[Feature::Walls] = -(walls as f32);
    v[Feature::Connectedness] = pairs as f32 / nf;
    if w.features[Feature::Groups] != 0.0 {
        v[Feature::Groups] = -(g.count_groups(own) as f32);
    }
    v[Feature::Uniformity] = -(area as f32) * 10.0 / g.num_cells as f32;
    SideFeatures {
        pieces: n,
        values: v,
    }
}

impl SideFeatures {
    /// The weighted sum of the features (without the side-to-move bonus).
    #[inline]
    pub fn weighted(&self, w: &EvalWeights) -> f32 {
        self.values.dot(&w.features)
    }
}

/// The static evaluation of `pos` for the side to move, in `[-EVAL_LIMIT, EVAL_LIMIT]`.
/// Assumes the game is not over (the search scores finished games itself). The
/// side-to-move bonus goes to the side that makes the next normal move: the opponent while
/// a drop is pending.
pub fn static_evaluation(pos: &Position, w: &EvalWeights) -> i32 {
    let us = pos.to_move();
    let ours = side_features(pos, us, w).weighted(w);
    let theirs = side_features(pos, us.opponent(), w).weighted(w);
    let tempo = if pos.drop_pending() {
        -w.side_to_move
    } else {
        w.side_to_move
    };
    let score = ours - theirs + tempo;
    (score.round() as i32).clamp(-EVAL_LIMIT, EVAL_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{ExtraState, Rules, Variant};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

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
            assert_eq!(euler_number(g, p), g.count_groups(p) as i32, "{p:#x}");
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

    /// Groups minus holes by flood fill: holes are the groups of the complement that do
    /// not reach the edge (on the hexagonal board the complement is 6-connected too).
    fn naive_euler(g: &Geometry, set: u64) -> i32 {
        let rest = g.cells & !set;
        let edge = tables(g).edge;
        let mut outside = rest & edge;
        loop {
            let grown = g.dilate(outside) & rest;
            if grown == outside {
                break;
            }
            outside = grown;
        }
        g.count_groups(set) as i32 - g.count_groups(rest & !outside) as i32
    }

    #[test]
    fn hex_euler_number_and_pairs_match_a_naive_count() {
        let g = Variant::Alveole.geometry();
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..3000 {
            let density = rng.random_range(0.1..0.9);
            let set = (0..64)
                .filter(|&sq| g.contains(sq) && rng.random_bool(density))
                .fold(0u64, |a, sq| a | 1u64 << sq);
            assert_eq!(euler_number(g, set), naive_euler(g, set), "{set:#x}");
            let mut pairs = 0;
            let mut bits = set;
            while bits != 0 {
                let sq = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                pairs += (g.neighbours[sq] & set).count_ones();
            }
            assert_eq!(neighbour_pairs(g, set) * 2, pairs);
        }
        // The six neighbours of the centre e5 form a ring with one hole.
        let centre = g.square_at(4, 4).unwrap() as usize;
        assert_eq!(euler_number(g, g.neighbours[centre]), 0);
        assert_eq!(euler_number(g, g.neighbours[centre] | 1u64 << centre), 1);
        // Centrality: 4 at the centre, 0 on the edge.
        assert_eq!(centrality(g, centre as Square), 4);
        assert_eq!(tables(g).edge.count_ones(), 24);
    }

    /// Positions (not over, drops pending included) from random games of every variant.
    fn random_positions(count: usize, seed: u64) -> Vec<Position> {
        loa::testing::random_games(&Variant::ALL, Rules::classic(), count, 80, seed)
            .iter()
            .map(|g| *g.position())
            .collect()
    }

    #[test]
    fn evaluation_is_symmetric_under_every_board_symmetry() {
        // Every feature on, so that each is checked.
        let w = EvalWeights::default()
            .with(Feature::Euler, 5.0)
            .with(Feature::Connectedness, 7.0)
            .with(Feature::Groups, 11.0)
            .with(Feature::Uniformity, 13.0)
            .with(Feature::ComPosition, 17.0);
        for pos in random_positions(700, 1) {
            let e = static_evaluation(&pos, &w);
            let g = pos.geometry();
            for s in 0..g.num_symmetries as usize {
                assert_eq!(
                    static_evaluation(&pos.transformed(s), &w),
                    e,
                    "{} s={s}",
                    pos.to_text()
                );
            }
        }
    }

    #[test]
    fn evaluation_is_antisymmetric_in_the_side_to_move() {
        let w = EvalWeights::default()
            .with(Feature::Euler, 5.0)
            .with(Feature::Uniformity, 13.0);
        let stm = w.side_to_move as i32;
        for pos in random_positions(700, 2) {
            let mut extra = pos.extra();
            let pending = extra.drop_pending;
            extra.drop_pending = false;
            let flipped = Position::with_extra(
                pos.variant(),
                pos.pieces(Color::Black),
                pos.pieces(Color::White),
                pos.to_move().opponent(),
                extra,
            )
            .unwrap();
            let (e, f) = (static_evaluation(&pos, &w), static_evaluation(&flipped, &w));
            if pending {
                // The opponent makes the next normal move either way: the same value.
                assert!((e + f).abs() <= 1, "{}: {e} {f}", pos.to_text());
            } else if e.abs() < EVAL_LIMIT && f.abs() < EVAL_LIMIT {
                assert!(
                    ((e - stm) + (f - stm)).abs() <= 1,
                    "{}: {e} {f}",
                    pos.to_text()
                );
            }
        }
        // The start positions too (every variant's start is balanced).
        for variant in Variant::ALL {
            let rules = Rules::classic();
            let start = Position::start(variant, &rules);
            assert_eq!(static_evaluation(&start, &w), stm, "{variant}");
        }
    }

    #[test]
    fn a_compact_group_beats_a_scattered_one() {
        let w = EvalWeights::default();
        // Black: compact 2x3 block in the centre; White: scattered corners and edges.
        let pos =
            Position::from_text("w6w/8/8/2bbb3/2bbb3/8/8/w2w3w b", Variant::Standard).unwrap();
        assert!(
            static_evaluation(&pos, &w) > 100,
            "{}",
            static_evaluation(&pos, &w)
        );
        // The same on the hexagonal board: Black packed round the centre, White on corners.
        let g = Variant::Alveole.geometry();
        let at = |c: u8, r: u8| 1u64 << g.square_at(c, r).unwrap();
        let centre = g.square_at(4, 4).unwrap() as usize;
        let black = g.neighbours[centre] | 1u64 << centre;
        let white = at(0, 0) | at(4, 0) | at(8, 4) | at(8, 8) | at(4, 8) | at(0, 4) | at(2, 0);
        let pos = Position::new(Variant::Alveole, black, white, Color::White).unwrap();
        assert!(
            static_evaluation(&pos, &w) < -100,
            "{}",
            static_evaluation(&pos, &w)
        );
    }

    #[test]
    fn parachute_pieces_still_to_come_count_against_their_side() {
        let w = EvalWeights::default();
        let rules = Rules::classic();
        let start = Position::start(Variant::Parachute, &rules);
        let with_reserves = |reserve: [u8; 2]| {
            Position::with_extra(
                Variant::Parachute,
                start.pieces(Color::Black),
                start.pieces(Color::White),
                Color::Black,
                ExtraState {
                    reserve,
                    ..ExtraState::default()
                },
            )
            .unwrap()
        };
        // White holding Black's pieces (reserve of White) is bad for Black.
        let none = static_evaluation(&with_reserves([0, 0]), &w);
        let black_gets_3 = static_evaluation(&with_reserves([0, 3]), &w);
        let white_gets_3 = static_evaluation(&with_reserves([3, 0]), &w);
        assert!(black_gets_3 < none - 10, "{black_gets_3} vs {none}");
        assert!(white_gets_3 > none + 10, "{white_gets_3} vs {none}");
        assert!((black_gets_3 - none) - (none - white_gets_3) <= 1);
    }

    #[test]
    fn gemma_vanished_cells_are_no_landing_cells() {
        let w = EvalWeights::default();
        let g = Variant::Gemma.geometry();
        let start = Position::start(Variant::Gemma, &Rules::classic());
        let (black, white) = (start.pieces(Color::Black), start.pieces(Color::White));
        let inner = g.cells & !(black | white) & 0x0000_3C3C_3C3C_0000;
        let vanished = Position::with_extra(
            Variant::Gemma,
            black,
            white,
            Color::Black,
            ExtraState {
                vanished: inner,
                ..ExtraState::default()
            },
        )
        .unwrap();
        let before = side_features(&start, Color::Black, &w).values[Feature::Mobility];
        let after = side_features(&vanished, Color::Black, &w).values[Feature::Mobility];
        assert!(after < before, "{after} vs {before}");
        // The mobility counted is that of the moves the rules allow.
        let mut moves = loa::MoveList::new();
        vanished.generate_moves(&mut moves);
        assert!(moves.iter().all(|m| inner & (1u64 << m.to()) == 0));
    }

    #[test]
    fn ambiloa_counts_team_pieces_and_both_partners_moves() {
        let w = EvalWeights::default();
        let rules = Rules::classic();
        let start = Position::start(Variant::Ambiloa, &rules);
        let standard = Position::start(Variant::Standard, &rules);
        // The team's pieces stand where Black's stand in standard: the same features.
        for c in Color::ALL {
            assert_eq!(
                side_features(&start, c, &w),
                side_features(&standard, c, &w)
            );
        }
    }
}
