//! Move counting by whole lines, for square boards.
//!
//! Every legal move runs along one line (rank, file, diagonal or anti-diagonal) and depends
//! only on the pieces of that line. So the number of moves a side has is the sum, over the
//! board's lines, of a table entry indexed by the line's own-piece and enemy-piece patterns.
//! Patterns are gathered with shifts and carry-free multiplications (no BMI2 needed), and
//! the sum has no data-dependent branches: this is the leaf counter of perft.
//!
//! Only valid when no cell is forbidden other than own pieces (true for the standard,
//! scrambled-eggs and 6×6 variants); other cases use [`crate::movegen::count_moves`].

use crate::geometry::{Geometry, Shape};
use std::sync::OnceLock;

const FILE_A: u64 = 0x0101_0101_0101_0101;
/// Gathers the a-file bits (after shifting the file down to a) into the top byte, rank r
/// landing on bit 7 − r (reversed order, which move counts do not mind).
const FILE_GATHER: u64 = 0x8040_2010_0804_0201;
/// Gathers the bits of a diagonal (at most one per file) into the top byte by file.
const DIAG_GATHER: u64 = 0x0101_0101_0101_0101;

/// One line: how to gather its pattern (`a` and `b` depend on the line family, see
/// [`LineCounter::count`]), its length and where its table section starts.
#[derive(Clone, Copy, Debug)]
struct Line {
    a: u64,
    shift: u32,
    len: u32,
    offset: u32,
}

/// The lines of a square board by family, and the pattern → move-count table.
pub struct LineCounter {
    ranks: Vec<Line>,
    files: Vec<Line>,
    diagonals: Vec<Line>,
    table: &'static CountTable,
}

/// The line counter of `g`, built on first use; `None` if `g` has none (non-square shapes).
pub fn line_counter(g: &'static Geometry) -> Option<&'static LineCounter> {
    use crate::geometry::{SQUARE6, SQUARE8};
    static C8: OnceLock<LineCounter> = OnceLock::new();
    static C6: OnceLock<LineCounter> = OnceLock::new();
    if std::ptr::eq(g, &SQUARE8) {
        Some(C8.get_or_init(|| LineCounter::new(g).expect("square board")))
    } else if std::ptr::eq(g, &SQUARE6) {
        Some(C6.get_or_init(|| LineCounter::new(g).expect("square board")))
    } else {
        None
    }
}

/// `COUNTS[OFFSET[len] + own | enemy << len]`: moves of the own pieces along a line.
struct CountTable {
    counts: Vec<u8>,
    offset: [usize; 10],
}

fn count_table() -> &'static CountTable {
    static TABLE: OnceLock<CountTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut offset = [0usize; 10];
        let mut counts = Vec::new();
        for len in 1..=8usize {
            offset[len] = counts.len();
            let size = 1usize << (2 * len);
            counts.resize(counts.len() + size, 0);
            for own in 0..1usize << len {
                for enemy in 0..1usize << len {
                    if own & enemy != 0 {
                        continue;
                    }
                    counts[offset[len] + (own | enemy << len)] = line_moves(len, own, enemy);
                }
            }
        }
        CountTable { counts, offset }
    })
}

/// Moves of `own` pieces along a line of `len` cells (plain reference computation).
fn line_moves(len: usize, own: usize, enemy: usize) -> u8 {
    let n = (own | enemy).count_ones() as i32;
    let mut moves = 0;
    for from in 0..len as i32 {
        if own >> from & 1 == 0 {
            continue;
        }
        for step in [-1i32, 1] {
            let to = from + step * n;
            if to < 0 || to >= len as i32 || own >> to & 1 != 0 {
                continue;
            }
            let blocked = (1..n).any(|k| enemy >> (from + step * k) & 1 != 0);
            if !blocked {
                moves += 1;
            }
        }
    }
    moves
}

impl LineCounter {
    /// The counter of a square geometry; `None` for other shapes.
    pub fn new(g: &Geometry) -> Option<LineCounter> {
        if g.shape != Shape::Square {
            return None;
        }
        let table = count_table();
        let n = g.size as u32;
        let line = |a: u64, shift: u32, len: u32| Line {
            a,
            shift,
            len,
            offset: table.offset[len as usize] as u32,
        };
        let ranks = (0..n).map(|r| line((1 << n) - 1, 8 * r, n)).collect();
        let files = (0..n).map(|f| line(f as u64, 64 - n, n)).collect();
        // Diagonals (axis 1) and anti-diagonals (axis 3) of length ≥ 2.
        let mut diagonals = Vec::new();
        for axis in [1usize, 3] {
            let mut seen = 0u64;
            for sq in 0..64u8 {
                if !g.contains(sq) || seen & (1 << sq) != 0 {
                    continue;
                }
                let mask = g.line[sq as usize][axis];
                seen |= mask;
                let len = mask.count_ones();
                if len < 2 {
                    continue;
                }
                let low_file = (0..8u32)
                    .find(|f| mask & (FILE_A << f) != 0)
                    .expect("line is not empty");
                diagonals.push(line(mask, 56 + low_file, len));
            }
        }
        Some(LineCounter {
            ranks,
            files,
            diagonals,
            table,
        })
    }

    /// Number of lines (for tests).
    #[cfg(test)]
    fn num_lines(&self) -> usize {
        self.ranks.len() + self.files.len() + self.diagonals.len()
    }

    /// Number of moves of `own` against `enemy` (no other forbidden cells).
    #[inline]
    pub fn count(&self, own: u64, enemy: u64) -> u32 {
        let counts = &self.table.counts[..];
        let mut total = 0u32;
        let mut add = |l: &Line, o: u64, e: u64| {
            total += counts[l.offset as usize + (o | e << l.len) as usize] as u32;
        };
        for l in &self.ranks {
            add(l, (own >> l.shift) & l.a, (enemy >> l.shift) & l.a);
        }
        for l in &self.files {
            let o = ((own >> l.a) & FILE_A).wrapping_mul(FILE_GATHER) >> l.shift;
            let e = ((enemy >> l.a) & FILE_A).wrapping_mul(FILE_GATHER) >> l.shift;
            add(l, o, e);
        }
        for l in &self.diagonals {
            let o = (own & l.a).wrapping_mul(DIAG_GATHER) >> l.shift;
            let e = (enemy & l.a).wrapping_mul(DIAG_GATHER) >> l.shift;
            add(l, o, e);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{SQUARE6, SQUARE8};
    use crate::movegen;

    #[test]
    fn line_counter_matches_generator_on_random_boards() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for g in [&SQUARE8, &SQUARE6] {
            let counter = LineCounter::new(g).unwrap();
            assert_eq!(
                counter.num_lines(),
                if g.size == 8 {
                    8 + 8 + 13 + 13
                } else {
                    6 + 6 + 9 + 9
                }
            );
            for _ in 0..20_000 {
                let a = next() & next() & g.cells;
                let b = next() & next() & g.cells & !a;
                let expected = movegen::count_moves(g, a, a | b, b, a);
                assert_eq!(counter.count(a, b), expected);
            }
        }
    }
}
