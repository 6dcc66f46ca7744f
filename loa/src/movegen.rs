//! Bitboard move generation.
//!
//! A piece on `sq` moving along axis `a` travels exactly `n = popcount(occupied & line)`
//! cells; the target comes from a table, and the path is checked against enemy pieces with
//! one ray mask. There is no per-square scan in the hot path: the work is four popcounts
//! and eight table look-ups per piece.
//!
//! The generator is phrased over three masks — the pieces that may move, the cells they may
//! never land on, and the enemy pieces that block — so variants with partners or vanished
//! cells only change how the masks are built.

use crate::geometry::{Geometry, Square, OFF_BOARD};
use crate::moves::{Move, MoveList};

/// Calls `f(from, direction, to, capture)` for every normal move.
///
/// * `movers`: the pieces that may move.
/// * `occupied`: every piece on the board (all line counts use it).
/// * `enemy`: pieces that block a path and are captured by landing on them.
/// * `forbidden`: cells no piece may land on (own and friendly pieces, vanished cells).
#[inline(always)]
pub fn for_each_move(
    g: &Geometry,
    movers: u64,
    occupied: u64,
    enemy: u64,
    forbidden: u64,
    mut f: impl FnMut(Square, u8, Square, bool),
) {
    let axes = g.axes as usize;
    let mut bits = movers;
    while bits != 0 {
        let from = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let lines = &g.line[from];
        let rays = &g.ray[from];
        let targets = &g.target[from];
        for (axis, &line) in lines.iter().enumerate().take(axes) {
            let n = (occupied & line).count_ones() as usize;
            for dir in [axis, axis + axes] {
                let to = targets[dir][n];
                if to == OFF_BOARD {
                    continue;
                }
                let to_bit = 1u64 << to;
                if forbidden & to_bit != 0 {
                    continue;
                }
                // Cells strictly between `from` and `to`.
                let path = rays[dir] & !g.ray[to as usize][dir] & !to_bit;
                if path & enemy != 0 {
                    continue;
                }
                f(from as Square, dir as u8, to, enemy & to_bit != 0);
            }
        }
    }
}

/// Appends every normal move to `list` (see [`for_each_move`] for the masks), branch-free
/// per direction. Same moves, same order as [`for_each_move`].
#[inline]
pub fn generate(
    g: &Geometry,
    movers: u64,
    occupied: u64,
    enemy: u64,
    forbidden: u64,
    list: &mut MoveList,
) {
    let axes = g.axes as usize;
    let flag = g.move_flag;
    let mut bits = movers;
    while bits != 0 {
        let from = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let lines = &g.line[from];
        let rays = &g.ray[from];
        let targets = &g.target[from];
        for (axis, &line) in lines.iter().enumerate().take(axes) {
            let n = (occupied & line).count_ones() as usize;
            for dir in [axis, axis + axes] {
                let to = targets[dir][n] as usize;
                let to_bit = ((to < 64) as u64) << (to & 63);
                let reach = rays[dir] & !g.ray[to][dir];
                let ok = (to_bit != 0) & (to_bit & forbidden == 0) & (reach & enemy & !to_bit == 0);
                let capture = enemy & to_bit != 0;
                let mv = Move::new_on(from as Square, (to & 63) as Square, capture, flag);
                list.push_if(mv, ok);
            }
        }
    }
}

/// Number of normal moves (see [`for_each_move`] for the masks). Branch-free per
/// direction: this is the leaf counter of perft and the mobility term of evaluations.
#[inline]
pub fn count_moves(g: &Geometry, movers: u64, occupied: u64, enemy: u64, forbidden: u64) -> u32 {
    let axes = g.axes as usize;
    let mut count = 0u32;
    let mut bits = movers;
    while bits != 0 {
        let from = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let lines = &g.line[from];
        let rays = &g.ray[from];
        let targets = &g.target[from];
        for (axis, &line) in lines.iter().enumerate().take(axes) {
            let n = (occupied & line).count_ones() as usize;
            for dir in [axis, axis + axes] {
                let to = targets[dir][n] as usize;
                // Zero when `to` is OFF_BOARD (64).
                let to_bit = ((to < 64) as u64) << (to & 63);
                // Cells from `from` (exclusive) to `to` (inclusive).
                let reach = rays[dir] & !g.ray[to][dir];
                let ok = (to_bit != 0) & (to_bit & forbidden == 0) & (reach & enemy & !to_bit == 0);
                count += ok as u32;
            }
        }
    }
    count
}

/// Whether at least one normal move exists; stops at the first one found.
pub fn has_move(g: &Geometry, movers: u64, occupied: u64, enemy: u64, forbidden: u64) -> bool {
    let mut bits = movers;
    while bits != 0 {
        let piece = bits & bits.wrapping_neg();
        bits &= bits - 1;
        if count_moves(g, piece, occupied, enemy, forbidden) > 0 {
            return true;
        }
    }
    false
}
