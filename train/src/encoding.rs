//! Network input encoding: a position as `NUM_PLANES` planes of `N×N` cells for an `N×N`
//! board, from the side to move's point of view.
//!
//! Planes (in this order, see [`PLANE_NAMES`]):
//!
//! | plane | content | stored value | network sees |
//! |-------|---------|--------------|--------------|
//! | 0 | pieces of the side to move | 0/1 | 0/1 |
//! | 1 | pieces of the opponent | 0/1 | 0/1 |
//! | 2 | pieces (both sides) on the file through the cell | count | count / N |
//! | 3 | pieces on the diagonal through the cell | count | count / N |
//! | 4 | pieces on the rank through the cell | count | count / N |
//! | 5 | pieces on the anti-diagonal through the cell | count | count / N |
//! | 6 | ones (marks board cells, lets convolutions see the edge) | 1 | 1 |
//!
//! The line counts are the move distances along each axis, the quantity LOA moves depend
//! on. Planes are stored as `u8` (small transfers to the device) and scaled on the device
//! by [`plane_scales`]. Cell `(col, row)` of the board is element `[plane][row][col]`, so
//! the flattened cell index equals the geometry's dense index (row-major from a1) and the
//! policy planes line up with [`Position::policy_index`].
//!
//! New planes (e.g. variant or rule planes) are appended and bump [`ENCODING_VERSION`];
//! models record the version they were trained with and refuse a mismatch.

use loa::{Color, Position};

/// Version of this encoding; stored in every model and checkpoint.
pub const ENCODING_VERSION: u32 = 1;

/// Number of input planes.
pub const NUM_PLANES: usize = 7;

/// Human-readable plane names, in plane order (written into `model.json`).
pub const PLANE_NAMES: [&str; NUM_PLANES] = [
    "own",
    "opponent",
    "line_count_file",
    "line_count_diagonal",
    "line_count_rank",
    "line_count_anti_diagonal",
    "ones",
];

/// Number of `u8` values that encode one position of an `n×n` board.
pub const fn input_len(board_size: usize) -> usize {
    NUM_PLANES * board_size * board_size
}

/// The factor each stored `u8` plane is multiplied by before entering the network.
pub fn plane_scales(board_size: usize) -> [f32; NUM_PLANES] {
    let inv = 1.0 / board_size as f32;
    [1.0, 1.0, inv, inv, inv, inv, 1.0]
}

/// Writes the planes of `pos` into `out` (length [`input_len`] of its board size), every
/// entry overwritten. Pure and thread-safe.
///
/// # Panics
/// If `out` has the wrong length (a caller bug, not a data error).
pub fn encode_into(pos: &Position, out: &mut [u8]) {
    let g = pos.geometry();
    let n = g.size as usize;
    let cells = n * n;
    assert_eq!(out.len(), input_len(n), "encoding buffer length");
    out.fill(0);
    let me: Color = pos.to_move();
    let own = pos.pieces(me);
    let opp = pos.pieces(me.opponent());
    let occupied = own | opp;
    let mut bits = g.cells;
    while bits != 0 {
        let sq = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let (col, row) = g.coords(sq as u8);
        let cell = row as usize * n + col as usize;
        let mask = 1u64 << sq;
        out[cell] = (own & mask != 0) as u8;
        out[cells + cell] = (opp & mask != 0) as u8;
        for axis in 0..4 {
            out[(2 + axis) * cells + cell] = (g.line[sq][axis] & occupied).count_ones() as u8;
        }
        out[6 * cells + cell] = 1;
    }
}

/// The planes of `pos` as a new vector.
pub fn encode(pos: &Position) -> Vec<u8> {
    let mut out = vec![0; input_len(pos.geometry().size as usize)];
    encode_into(pos, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::policy::{policy_size, transform_policy_index};
    use loa::{Rules, Variant};

    fn plane(enc: &[u8], n: usize, p: usize) -> &[u8] {
        &enc[p * n * n..(p + 1) * n * n]
    }

    #[test]
    fn start_position_planes() {
        let rules = Rules::classic();
        let pos = Position::start(Variant::Standard, &rules);
        let enc = encode(&pos);
        assert_eq!(enc.len(), 7 * 64);
        // Black (to move) has b1..g1 and b8..g8.
        let own = plane(&enc, 8, 0);
        assert_eq!(own.iter().map(|&x| x as u32).sum::<u32>(), 12);
        assert_eq!(own[1], 1); // b1
        assert_eq!(own[0], 0); // a1 empty
        assert_eq!(own[7 * 8 + 6], 1); // g8
        let opp = plane(&enc, 8, 1);
        assert_eq!(opp[8], 1); // a2 is white
                               // File count at b1: b1 and b8 -> 2. Rank count at b1: b1..g1 -> 6.
        assert_eq!(plane(&enc, 8, 2)[1], 2);
        assert_eq!(plane(&enc, 8, 4)[1], 6);
        // Rank 2 (a2, h2): 2 pieces; a1 diagonal a1..h8: empty.
        assert_eq!(plane(&enc, 8, 4)[8 + 3], 2);
        assert_eq!(plane(&enc, 8, 3)[0], 0);
        assert!(plane(&enc, 8, 6).iter().all(|&x| x == 1));
    }

    #[test]
    fn point_of_view_swaps_with_side_to_move() {
        let rules = Rules::classic();
        let pos = Position::start(Variant::Standard, &rules);
        let mv = pos.legal_moves(&rules)[0];
        let after = pos.after(mv);
        let enc = encode(&after);
        // Now white is to move: own plane = white pieces.
        let own = plane(&enc, 8, 0);
        assert_eq!(own[8], 1);
        assert_eq!(own[1], 0);
    }

    #[test]
    fn six_by_six_is_six_by_six() {
        let rules = Rules::classic();
        let pos = Position::start(Variant::Six, &rules);
        let enc = encode(&pos);
        assert_eq!(enc.len(), 7 * 36);
        assert_eq!(plane(&enc, 6, 0).iter().map(|&x| x as u32).sum::<u32>(), 8);
        assert_eq!(plane(&enc, 6, 1).iter().map(|&x| x as u32).sum::<u32>(), 8);
        assert!(plane(&enc, 6, 6).iter().all(|&x| x == 1));
        assert_eq!(plane_scales(6)[2], 1.0 / 6.0);
    }

    /// Encoding commutes with symmetries: the planes of the transformed position are the
    /// planes of the position with cells permuted, and policy indices follow moves.
    #[test]
    fn symmetries_permute_planes_and_policy() {
        let rules = Rules::classic();
        for variant in [Variant::Standard, Variant::Six] {
            let mut pos = Position::start(variant, &rules);
            for k in 0..6 {
                let moves = pos.legal_moves(&rules);
                pos.play(moves[(k * 5) % moves.len()]);
            }
            let g = pos.geometry();
            let n = g.size as usize;
            let enc = encode(&pos);
            for s in 0..8 {
                let t = pos.transformed(s);
                let enc_t = encode(&t);
                for sq in 0..64u8 {
                    if !g.contains(sq) {
                        continue;
                    }
                    let (c, r) = g.coords(sq);
                    let (c2, r2) = g.coords(g.symmetry_square[s][sq as usize]);
                    for p in [0, 1, 6] {
                        assert_eq!(
                            enc[p * n * n + r as usize * n + c as usize],
                            enc_t[p * n * n + r2 as usize * n + c2 as usize]
                        );
                    }
                    // Line counts: the multiset over the four axes is preserved.
                    let mut a: Vec<u8> = (2..6)
                        .map(|p| enc[p * n * n + r as usize * n + c as usize])
                        .collect();
                    let mut b: Vec<u8> = (2..6)
                        .map(|p| enc_t[p * n * n + r2 as usize * n + c2 as usize])
                        .collect();
                    a.sort();
                    b.sort();
                    assert_eq!(a, b);
                }
                for mv in pos.legal_moves(&rules).iter() {
                    let idx = pos.policy_index(*mv).unwrap();
                    let idx_t = t.policy_index(pos.transform_move(*mv, s)).unwrap();
                    assert_eq!(transform_policy_index(variant, idx, s), idx_t);
                    assert!(idx < policy_size(variant));
                }
            }
        }
    }
}
