//! Board geometry: which cells exist, the lines through them, and the precomputed
//! tables that move generation and connection tests read.
//!
//! Every board is addressed by *squares* `0..64` of one `u64` bitboard. Square boards of
//! side `n ≤ 8` use the 8×8 layout `square = rank * 8 + file` (a1 = 0, h8 = 63) with the
//! cells outside `n×n` masked off, so shift-based bit tricks keep working. The tables are
//! generic (line masks per axis, rays per direction, targets by distance, neighbour masks),
//! so a board with another cell layout (the hexagonal 61-cell board, which also fits in 64
//! bits) only needs its own constructor and symmetry tables: [`HEX5`] numbers its 61
//! cells row-major from the bottom row (`a1` = 0 … `i5` = 60) and keeps axial
//! coordinates `(col, row)` in a 9×9 grid for networks ([`Geometry::coords`]).
//!
//! All geometries are `static` and computed at compile time; they are `Sync` and free to
//! share between threads.

/// A square index `0..64` (see the module docs for the layout).
pub type Square = u8;

/// Marks "no square" in the dense/sparse and symmetry tables.
pub const NO_SQUARE: Square = 0xFF;

/// Marks a target off the board in [`Geometry::target`]. It indexes an all-zero row of
/// [`Geometry::ray`], so move generation can stay branch-free.
pub const OFF_BOARD: Square = 64;

/// The shape family of a board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// An `n×n` square board embedded in the 8×8 layout.
    Square,
    /// A hexagonal board (side 5, 61 cells), squares numbered row-major from the bottom
    /// row; 3 line axes, 6 move directions, 6-neighbour adjacency.
    Hex,
}

/// Direction names of the hexagonal board, in index order. Direction `d` lies on axis
/// `d % 3` and its opposite is `(d + 3) % 6`. In grid coordinates (col, row) the steps are
/// E (1,0), NE (1,1), NW (0,1), W (−1,0), SW (−1,−1), SE (0,−1).
pub const HEX_DIRECTIONS: [&str; 6] = ["E", "NE", "NW", "W", "SW", "SE"];

/// (col step, row step) of the hexagonal directions in axial grid coordinates.
const HEX_STEPS: [(i8, i8); 6] = [(1, 0), (1, 1), (0, 1), (-1, 0), (-1, -1), (0, -1)];

/// Side length of [`HEX5`].
const HEX_SIDE: i32 = 5;

/// Direction names of square boards, in index order. A direction `d` lies on axis `d % 4`
/// and its opposite is `d ^ 4`.
pub const SQUARE_DIRECTIONS: [&str; 8] = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

/// (file step, rank step) of the square-board directions, in index order.
const SQUARE_STEPS: [(i8, i8); 8] = [
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
];

/// Precomputed description of one board.
///
/// Axis `a` is one family of lines (for square boards: 0 = files, 1 = diagonals,
/// 2 = ranks, 3 = anti-diagonals); its two directions are `a` and `a + axes`.
#[derive(Debug)]
pub struct Geometry {
    /// Short name, e.g. `"8x8"`.
    pub name: &'static str,
    /// Shape family.
    pub shape: Shape,
    /// Side of the square grid the board is drawn in and that networks see: `n` for an
    /// `n×n` board, 9 for the hexagonal board (its rows, in axial coordinates).
    pub size: u8,
    /// Bitboard of the squares that exist.
    pub cells: u64,
    /// Number of existing cells.
    pub num_cells: u8,
    /// Number of line families (4 on square boards, 3 on the hexagonal one); there are
    /// `2 * axes` directions.
    pub axes: u8,
    /// `line[sq][axis]`: every cell on the line of that axis through `sq`, `sq` included.
    pub line: [[u64; 4]; 64],
    /// `ray[sq][dir]`: the cells strictly beyond `sq` in direction `dir`; row
    /// [`OFF_BOARD`] is all zeros.
    pub ray: [[u64; 8]; 65],
    /// `target[sq][dir][n]`: the cell `n` steps from `sq` in direction `dir`, or
    /// [`OFF_BOARD`] if that leaves the board. Index 0 is always `OFF_BOARD`.
    pub target: [[[Square; 10]; 8]; 64],
    /// `neighbours[sq]`: the adjacent cells (connection adjacency).
    pub neighbours: [u64; 64],
    /// Square → dense cell index `0..num_cells` (row-major from a1), or `NO_SQUARE`.
    pub dense: [u8; 64],
    /// Dense cell index → square.
    pub sparse: [Square; 64],
    /// Square → cell of the `size × size` grid (`row * size + col`, see
    /// [`Geometry::coords`]); equals `dense` on square boards.
    pub grid_cell: [u8; 64],
    /// Grid cell → square, or `NO_SQUARE` for grid cells that are not on the board.
    pub grid_square: [Square; 81],
    /// Bits that every [`crate::Move`] made on this board carries (how its squares are
    /// named: 0 on square boards, [`crate::moves::HEX_FLAG`] on the hexagonal one).
    pub move_flag: u16,
    /// Number of board symmetries in `symmetry_square`/`symmetry_direction`.
    pub num_symmetries: u8,
    /// `symmetry_square[s][sq]`: the image of square `sq` under symmetry `s`
    /// (symmetry 0 is the identity); 8 on square boards, 12 on the hexagonal one.
    pub symmetry_square: [[Square; 64]; MAX_SYMMETRIES],
    /// `symmetry_direction[s][d]`: the image of direction `d` under symmetry `s`.
    pub symmetry_direction: [[u8; 8]; MAX_SYMMETRIES],
}

/// Most symmetries of any board (the hexagon's 12).
pub const MAX_SYMMETRIES: usize = 12;

/// The 8×8 board of `standard` and `scrambled-eggs`.
pub static SQUARE8: Geometry = Geometry::square(8, "8x8");
/// The 6×6 board of the Italian "Pergolazione".
pub static SQUARE6: Geometry = Geometry::square(6, "6x6");
/// The 61-cell hexagonal board of `alveole`.
pub static HEX5: Geometry = Geometry::hex();

/// Whether axial grid cell (col, row) lies on the side-5 hexagon.
const fn on_hex_board(col: i32, row: i32) -> bool {
    col >= 0 && row >= 0 && col < 2 * HEX_SIDE - 1 && row < 2 * HEX_SIDE - 1 && {
        let d = col - row;
        d > -HEX_SIDE && d < HEX_SIDE
    }
}

/// First grid column of hexagon row `row`.
const fn hex_row_start(row: i32) -> i32 {
    if row < HEX_SIDE {
        0
    } else {
        row - (HEX_SIDE - 1)
    }
}

/// Number of cells in hexagon row `row`.
const fn hex_row_len(row: i32) -> i32 {
    let d = row - (HEX_SIDE - 1);
    2 * HEX_SIDE - 1 - if d < 0 { -d } else { d }
}

/// Square of axial grid cell (col, row) on [`HEX5`] (which must be on the board).
const fn hex_square(col: i32, row: i32) -> usize {
    let mut sq = 0;
    let mut r = 0;
    while r < row {
        sq += hex_row_len(r);
        r += 1;
    }
    (sq + col - hex_row_start(row)) as usize
}

/// Image of axial grid cell (col, row) under hexagon symmetry `s` (`0..12`): rotation by
/// `60° × (s % 6)`, preceded by a reflection when `s >= 6`. Works on displacements too
/// when `translate` is false.
const fn hex_symmetry(s: usize, col: i32, row: i32, translate: bool) -> (i32, i32) {
    let c = if translate { HEX_SIDE - 1 } else { 0 };
    // Cube coordinates of the standard axial system (neighbour (1,-1)): a = col, b = -row.
    let mut x = col - c;
    let mut z = -(row - c);
    let mut y = -x - z;
    if s >= 6 {
        let t = y;
        y = z;
        z = t;
    }
    let mut k = 0;
    while k < s % 6 {
        let (nx, ny, nz) = (-z, -x, -y);
        x = nx;
        y = ny;
        z = nz;
        k += 1;
    }
    let _ = y;
    (x + c, c - z)
}

const fn on_square_board(n: u8, file: i32, rank: i32) -> bool {
    file >= 0 && rank >= 0 && file < n as i32 && rank < n as i32
}

/// Image of (file, rank) under dihedral symmetry `s` of an `n×n` board.
/// Bit 0: mirror files, bit 1: mirror ranks, bit 2: transpose (applied first).
const fn square_symmetry(s: usize, n: i32, file: i32, rank: i32) -> (i32, i32) {
    let (mut f, mut r) = if s & 4 != 0 {
        (rank, file)
    } else {
        (file, rank)
    };
    if s & 1 != 0 {
        f = n - 1 - f;
    }
    if s & 2 != 0 {
        r = n - 1 - r;
    }
    (f, r)
}

/// The square at grid cell (col, row) of board `g` (whose `shape` and `size` are set), if
/// that cell is on the board.
const fn cell_at(g: &Geometry, col: i32, row: i32) -> Option<usize> {
    match g.shape {
        Shape::Square if on_square_board(g.size, col, row) => Some((row * 8 + col) as usize),
        Shape::Hex if on_hex_board(col, row) => Some(hex_square(col, row)),
        _ => None,
    }
}

/// Fills the rays, targets, neighbours and lines of square `sq` at grid cell (col, row),
/// for the board's move directions `steps` (direction `d` and `d + steps.len() / 2` share
/// an axis).
const fn add_lines(g: &mut Geometry, sq: usize, col: i32, row: i32, steps: &[(i8, i8)]) {
    let dirs = steps.len();
    let mut d = 0;
    while d < dirs {
        let (dc, dr) = steps[d];
        let mut k = 1;
        while let Some(t) = cell_at(g, col + dc as i32 * k, row + dr as i32 * k) {
            g.ray[sq][d] |= 1u64 << t;
            g.target[sq][d][k as usize] = t as u8;
            if k == 1 {
                g.neighbours[sq] |= 1u64 << t;
            }
            k += 1;
        }
        d += 1;
    }
    let axes = dirs / 2;
    let mut a = 0;
    while a < axes {
        g.line[sq][a] = g.ray[sq][a] | g.ray[sq][a + axes] | (1u64 << sq);
        a += 1;
    }
}

impl Geometry {
    /// Builds the tables of an `n×n` square board (`2 ≤ n ≤ 8`).
    pub const fn square(n: u8, name: &'static str) -> Geometry {
        let mut g = Geometry {
            name,
            shape: Shape::Square,
            size: n,
            cells: 0,
            num_cells: n * n,
            axes: 4,
            line: [[0; 4]; 64],
            ray: [[0; 8]; 65],
            target: [[[OFF_BOARD; 10]; 8]; 64],
            neighbours: [0; 64],
            dense: [NO_SQUARE; 64],
            sparse: [NO_SQUARE; 64],
            grid_cell: [NO_SQUARE; 64],
            grid_square: [NO_SQUARE; 81],
            move_flag: 0,
            num_symmetries: 8,
            symmetry_square: [[NO_SQUARE; 64]; MAX_SYMMETRIES],
            symmetry_direction: [[0; 8]; MAX_SYMMETRIES],
        };
        let mut sq = 0;
        while sq < 64 {
            let file = (sq % 8) as i32;
            let rank = (sq / 8) as i32;
            if on_square_board(n, file, rank) {
                g.cells |= 1u64 << sq;
                let idx = (rank * n as i32 + file) as u8;
                g.dense[sq] = idx;
                g.sparse[idx as usize] = sq as u8;
                g.grid_cell[sq] = idx;
                g.grid_square[idx as usize] = sq as u8;
                add_lines(&mut g, sq, file, rank, &SQUARE_STEPS);
                let mut s = 0;
                while s < 8 {
                    let (f, r) = square_symmetry(s, n as i32, file, rank);
                    g.symmetry_square[s][sq] = (r * 8 + f) as u8;
                    s += 1;
                }
            }
            sq += 1;
        }
        let mut s = 0;
        while s < 8 {
            let mut d = 0;
            while d < 8 {
                let (df, dr) = SQUARE_STEPS[d];
                // Map the step vector like a displacement (no translation).
                let (mut f, mut r) = if s & 4 != 0 {
                    (dr as i32, df as i32)
                } else {
                    (df as i32, dr as i32)
                };
                if s & 1 != 0 {
                    f = -f;
                }
                if s & 2 != 0 {
                    r = -r;
                }
                let mut e = 0;
                while e < 8 {
                    if SQUARE_STEPS[e].0 as i32 == f && SQUARE_STEPS[e].1 as i32 == r {
                        g.symmetry_direction[s][d] = e as u8;
                    }
                    e += 1;
                }
                d += 1;
            }
            s += 1;
        }
        g
    }

    /// Builds the tables of the 61-cell hexagonal board (side 5).
    pub const fn hex() -> Geometry {
        let mut g = Geometry {
            name: "hex5",
            shape: Shape::Hex,
            size: (2 * HEX_SIDE - 1) as u8,
            cells: 0,
            num_cells: 0,
            axes: 3,
            line: [[0; 4]; 64],
            ray: [[0; 8]; 65],
            target: [[[OFF_BOARD; 10]; 8]; 64],
            neighbours: [0; 64],
            dense: [NO_SQUARE; 64],
            sparse: [NO_SQUARE; 64],
            grid_cell: [NO_SQUARE; 64],
            grid_square: [NO_SQUARE; 81],
            move_flag: crate::moves::HEX_FLAG,
            num_symmetries: 12,
            symmetry_square: [[NO_SQUARE; 64]; MAX_SYMMETRIES],
            symmetry_direction: [[0; 8]; MAX_SYMMETRIES],
        };
        let n = 2 * HEX_SIDE - 1;
        let mut row = 0;
        while row < n {
            let mut col = 0;
            while col < n {
                if on_hex_board(col, row) {
                    let sq = hex_square(col, row);
                    g.cells |= 1u64 << sq;
                    g.num_cells += 1;
                    g.dense[sq] = sq as u8;
                    g.sparse[sq] = sq as u8;
                    g.grid_cell[sq] = (row * n + col) as u8;
                    g.grid_square[(row * n + col) as usize] = sq as u8;
                    add_lines(&mut g, sq, col, row, &HEX_STEPS);
                    let mut s = 0;
                    while s < 12 {
                        let (c2, r2) = hex_symmetry(s, col, row, true);
                        g.symmetry_square[s][sq] = hex_square(c2, r2) as u8;
                        s += 1;
                    }
                }
                col += 1;
            }
            row += 1;
        }
        let mut s = 0;
        while s < 12 {
            let mut d = 0;
            while d < 6 {
                let (dc, dr) = HEX_STEPS[d];
                let (c2, r2) = hex_symmetry(s, dc as i32, dr as i32, false);
                let mut e = 0;
                while e < 6 {
                    if HEX_STEPS[e].0 as i32 == c2 && HEX_STEPS[e].1 as i32 == r2 {
                        g.symmetry_direction[s][d] = e as u8;
                    }
                    e += 1;
                }
                d += 1;
            }
            s += 1;
        }
        g
    }

    /// Direction names of this board, in index order.
    pub fn direction_names(&self) -> &'static [&'static str] {
        match self.shape {
            Shape::Square => &SQUARE_DIRECTIONS,
            Shape::Hex => &HEX_DIRECTIONS,
        }
    }

    /// The direction opposite to `d`.
    #[inline]
    pub const fn opposite(&self, d: u8) -> u8 {
        (d + self.axes) % (2 * self.axes)
    }

    /// Number of move directions (`2 * axes`).
    #[inline]
    pub const fn directions(&self) -> u8 {
        self.axes * 2
    }

    /// Whether `sq` is a cell of this board.
    #[inline]
    pub const fn contains(&self, sq: Square) -> bool {
        sq < 64 && self.cells & (1u64 << sq) != 0
    }

    /// The direction that leads from `from` to `to`, if they share a line.
    pub fn direction_between(&self, from: Square, to: Square) -> Option<u8> {
        if !self.contains(from) || !self.contains(to) {
            return None;
        }
        (0..self.directions()).find(|&d| self.ray[from as usize][d as usize] & (1u64 << to) != 0)
    }

    /// All cells adjacent to a cell of `set`, together with `set` itself.
    #[inline]
    pub fn dilate(&self, set: u64) -> u64 {
        match self.shape {
            Shape::Square => {
                const NOT_A: u64 = !0x0101_0101_0101_0101;
                const NOT_H: u64 = !0x8080_8080_8080_8080;
                let h = set | ((set << 1) & NOT_A) | ((set >> 1) & NOT_H);
                (h | (h << 8) | (h >> 8)) & self.cells
            }
            Shape::Hex => {
                let mut out = set;
                let mut bits = set;
                while bits != 0 {
                    out |= self.neighbours[bits.trailing_zeros() as usize];
                    bits &= bits - 1;
                }
                out
            }
        }
    }

    /// Whether the (non-empty) set of cells forms one connected group under the board's
    /// adjacency. The empty set is not connected.
    #[inline]
    pub fn is_connected(&self, set: u64) -> bool {
        if set == 0 {
            return false;
        }
        let mut group = set & set.wrapping_neg();
        loop {
            let grown = self.dilate(group) & set;
            if grown == group {
                return group == set;
            }
            group = grown;
        }
    }

    /// Number of connected groups in `set`.
    pub fn count_groups(&self, set: u64) -> u32 {
        self.groups(set).count() as u32
    }

    /// The connected groups of `set` under the board's adjacency, as disjoint cell sets,
    /// lowest cell first. The one place where groups are grown (the searches, the
    /// evaluations and the network features all use it).
    pub fn groups(&self, set: u64) -> Groups<'_> {
        Groups {
            geometry: self,
            rest: set,
        }
    }

    /// (column, row) of a cell in the board's grid (file and rank from 0 on square boards;
    /// axial coordinates in the 9×9 grid on the hexagonal board, row 0 = row `a`).
    pub const fn coords(&self, sq: Square) -> (u8, u8) {
        match self.shape {
            Shape::Square => (sq % 8, sq / 8),
            Shape::Hex => {
                let cell = self.grid_cell[sq as usize];
                (cell % self.size, cell / self.size)
            }
        }
    }

    /// The cell at (column, row), if it exists.
    pub const fn square_at(&self, col: u8, row: u8) -> Option<Square> {
        match self.shape {
            Shape::Square => {
                if col < self.size && row < self.size {
                    Some(row * 8 + col)
                } else {
                    None
                }
            }
            Shape::Hex => {
                if on_hex_board(col as i32, row as i32) {
                    Some(hex_square(col as i32, row as i32) as Square)
                } else {
                    None
                }
            }
        }
    }

    /// The grid cells ([`Geometry::grid_cell`]) of the board's cells in `set`, lowest
    /// square first; bits off the board are skipped. The one place where a bitboard is
    /// spread onto the `size × size` grid (network input planes and training targets).
    pub fn grid_cells(&self, set: u64) -> impl Iterator<Item = usize> + '_ {
        let mut bits = set & self.cells;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let sq = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(self.grid_cell[sq] as usize)
        })
    }

    /// Maps a bitboard through symmetry `s`.
    pub fn map_bitboard(&self, s: usize, mut set: u64) -> u64 {
        let mut out = 0;
        while set != 0 {
            let sq = set.trailing_zeros() as usize;
            set &= set - 1;
            out |= 1u64 << self.symmetry_square[s][sq];
        }
        out
    }

    /// Index of the symmetry that undoes `s`.
    pub fn inverse_symmetry(&self, s: usize) -> usize {
        (0..self.num_symmetries as usize)
            .find(|&t| {
                let mut bits = self.cells;
                while bits != 0 {
                    let sq = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if self.symmetry_square[t][self.symmetry_square[s][sq] as usize] as usize != sq
                    {
                        return false;
                    }
                }
                true
            })
            .expect("every symmetry has an inverse")
    }
}

/// Iterator over the connected groups of a cell set ([`Geometry::groups`]).
pub struct Groups<'a> {
    geometry: &'a Geometry,
    rest: u64,
}

impl Iterator for Groups<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.rest == 0 {
            return None;
        }
        let mut group = self.rest & self.rest.wrapping_neg();
        loop {
            let grown = self.geometry.dilate(group) & self.rest;
            if grown == group {
                break;
            }
            group = grown;
        }
        self.rest &= !group;
        Some(group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square8_tables() {
        let g = &SQUARE8;
        assert_eq!(g.cells, u64::MAX);
        assert_eq!(g.num_cells, 64);
        // a1 north ray is the a-file above a1.
        assert_eq!(g.ray[0][0], 0x0101_0101_0101_0100);
        assert_eq!(g.target[0][1][7], 63);
        assert_eq!(g.target[0][1][8], OFF_BOARD);
        assert_eq!(g.target[0][5][1], OFF_BOARD);
        assert_eq!(g.line[0][2], 0xFF);
        assert_eq!(g.neighbours[9].count_ones(), 8);
        assert_eq!(g.neighbours[0].count_ones(), 3);
    }

    #[test]
    fn square6_is_masked() {
        let g = &SQUARE6;
        assert_eq!(g.cells.count_ones(), 36);
        assert!(!g.contains(6));
        assert!(g.contains(5));
        assert_eq!(g.target[0][2][5], 5);
        assert_eq!(g.target[0][2][6], OFF_BOARD);
        assert_eq!(
            g.dilate(1 << 5),
            (1 << 4) | (1 << 5) | (1 << 12) | (1 << 13)
        );
    }

    #[test]
    fn symmetries_are_bijections_and_map_lines_to_lines() {
        for g in [&SQUARE8, &SQUARE6] {
            for s in 0..8 {
                assert_eq!(g.map_bitboard(s, g.cells), g.cells);
                let inv = g.inverse_symmetry(s);
                for sq in 0..64u8 {
                    if !g.contains(sq) {
                        continue;
                    }
                    let img = g.symmetry_square[s][sq as usize];
                    assert_eq!(g.symmetry_square[inv][img as usize], sq);
                    for d in 0..8 {
                        let dd = g.symmetry_direction[s][d] as usize;
                        assert_eq!(
                            g.map_bitboard(s, g.ray[sq as usize][d]),
                            g.ray[img as usize][dd]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn grid_cells_spread_the_board_cells_of_a_set_onto_the_grid() {
        for g in [&SQUARE8, &SQUARE6, &HEX5] {
            // Every board cell, each once, at its grid cell; the grid's cells round-trip.
            let all: Vec<usize> = g.grid_cells(g.cells).collect();
            assert_eq!(all.len(), g.num_cells as usize);
            for &cell in &all {
                let sq = g.grid_square[cell];
                assert_ne!(sq, NO_SQUARE);
                assert_eq!(g.grid_cell[sq as usize] as usize, cell);
            }
            let mut distinct = all.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), all.len());
            // Bits off the board are skipped; the empty set has no cells.
            assert_eq!(g.grid_cells(!g.cells).count(), 0);
            assert_eq!(g.grid_cells(0).count(), 0);
            let one = g.sparse[g.num_cells as usize - 1];
            assert_eq!(
                g.grid_cells((1 << one) | !g.cells).collect::<Vec<_>>(),
                [g.grid_cell[one as usize] as usize]
            );
        }
    }

    #[test]
    fn hex5_tables() {
        let g = &HEX5;
        assert_eq!(g.num_cells, 61);
        assert_eq!(g.cells.count_ones(), 61);
        assert_eq!(g.directions(), 6);
        // Row lengths 5,6,7,8,9,8,7,6,5.
        let rows: Vec<u32> = (0..9)
            .map(|r| (0..9).filter(|&c| g.square_at(c, r).is_some()).count() as u32)
            .collect();
        assert_eq!(rows, [5, 6, 7, 8, 9, 8, 7, 6, 5]);
        // Corners have 3 neighbours, the centre 6.
        assert_eq!(g.neighbours[0].count_ones(), 3);
        let centre = g.square_at(4, 4).unwrap();
        assert_eq!(g.neighbours[centre as usize].count_ones(), 6);
        for sq in 0..61u8 {
            let (c, r) = g.coords(sq);
            assert_eq!(g.square_at(c, r), Some(sq));
            // Adjacency is symmetric and matches the direction-1 targets.
            let mut bits = g.neighbours[sq as usize];
            while bits != 0 {
                let t = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                assert!(g.neighbours[t] & (1 << sq) != 0);
            }
            for d in 0..6u8 {
                let t = g.target[sq as usize][d as usize][1];
                if t != OFF_BOARD {
                    assert_eq!(g.target[t as usize][g.opposite(d) as usize][1], sq);
                }
            }
        }
        // Lines through the centre are 9 long on every axis.
        for a in 0..3 {
            assert_eq!(g.line[centre as usize][a].count_ones(), 9);
        }
        assert!(g.is_connected(g.neighbours[centre as usize] | (1 << centre)));
        assert!(!g.is_connected(1 | (1 << 2)));
    }

    #[test]
    fn hex_symmetries_are_distinct_bijections() {
        let g = &HEX5;
        let mut images = std::collections::HashSet::new();
        for s in 0..12 {
            assert_eq!(g.map_bitboard(s, g.cells), g.cells);
            images.insert(g.symmetry_square[s]);
            let inv = g.inverse_symmetry(s);
            for sq in 0..61u8 {
                let img = g.symmetry_square[s][sq as usize];
                assert_eq!(g.symmetry_square[inv][img as usize], sq);
                assert_eq!(
                    g.map_bitboard(s, g.neighbours[sq as usize]),
                    g.neighbours[img as usize]
                );
                for d in 0..6 {
                    let dd = g.symmetry_direction[s][d] as usize;
                    assert_eq!(
                        g.map_bitboard(s, g.ray[sq as usize][d]),
                        g.ray[img as usize][dd]
                    );
                }
            }
        }
        assert_eq!(images.len(), 12);
    }

    #[test]
    fn connection() {
        let g = &SQUARE8;
        assert!(g.is_connected(1));
        assert!(g.is_connected(0b11));
        assert!(g.is_connected(1 | (1 << 9) | (1 << 18)));
        assert!(!g.is_connected(1 | (1 << 2)));
        assert!(!g.is_connected(0));
        // h1 and a2 are not neighbours (no wrap-around).
        assert!(!g.is_connected((1 << 7) | (1 << 8)));
        assert_eq!(g.count_groups(1 | (1 << 2) | (1 << 63)), 3);
        let groups: Vec<u64> = g.groups(1 | (1 << 9) | (1 << 4) | (1 << 63)).collect();
        assert_eq!(groups, vec![1 | (1 << 9), 1 << 4, 1 << 63]);
    }
}
