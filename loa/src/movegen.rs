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

use crate::geometry::{Geometry, Square};
use crate::moves::{Move, MoveList};

/// The rule of a normal move, once, for the three walks below: for each piece of `movers`
/// and each direction, binds `from`, `dir`, `to` (the cell the piece lands on: it moves as
/// many cells as the line holds pieces; `OFF_BOARD` past the edge), `to_bit` (its bit, 0
/// off the board) and `legal` (the landing cell is on the board and not `forbidden`, and
/// no `enemy` piece lies strictly between) and runs `body`. Branch-free per direction. A
/// macro, not a function taking a closure: expanded in place, each walk compiles as if
/// written out, as they were before the rule had one home (`bench movegen` unchanged,
/// `docs/experiments.md` batch 30).
macro_rules! each_direction {
    ($g:expr, $movers:expr, $occupied:expr, $enemy:expr, $forbidden:expr,
     |$from:ident, $dir:ident, $to:ident, $to_bit:ident, $legal:ident| $body:block) => {{
        let g: &Geometry = $g;
        let (occupied, enemy, forbidden): (u64, u64, u64) = ($occupied, $enemy, $forbidden);
        let axes = g.axes as usize;
        let mut bits: u64 = $movers;
        while bits != 0 {
            let $from = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let lines = &g.line[$from];
            let rays = &g.ray[$from];
            let targets = &g.target[$from];
            for (axis, &line) in lines.iter().enumerate().take(axes) {
                let n = (occupied & line).count_ones() as usize;
                for $dir in [axis, axis + axes] {
                    let $to = targets[$dir][n] as usize;
                    // Zero when `to` is OFF_BOARD (64).
                    let $to_bit = ((($to < 64) as u64) << ($to & 63));
                    // Cells from `from` (exclusive) to `to` (inclusive).
                    let reach = rays[$dir] & !g.ray[$to][$dir];
                    let $legal = ($to_bit != 0)
                        & ($to_bit & forbidden == 0)
                        & (reach & enemy & !$to_bit == 0);
                    $body
                }
            }
        }
    }};
}

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
    each_direction!(
        g,
        movers,
        occupied,
        enemy,
        forbidden,
        |from, dir, to, to_bit, legal| {
            if legal {
                f(from as Square, dir as u8, to as Square, enemy & to_bit != 0);
            }
        }
    );
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
    let flag = g.move_flag;
    each_direction!(
        g,
        movers,
        occupied,
        enemy,
        forbidden,
        |from, _dir, to, to_bit, legal| {
            let capture = enemy & to_bit != 0;
            list.push_if(
                Move::new_on(from as Square, (to & 63) as Square, capture, flag),
                legal,
            );
        }
    );
}

/// Number of normal moves (see [`for_each_move`] for the masks). Branch-free per
/// direction: this is the leaf counter of perft and the mobility term of evaluations.
#[inline]
pub fn count_moves(g: &Geometry, movers: u64, occupied: u64, enemy: u64, forbidden: u64) -> u32 {
    let mut count = 0u32;
    each_direction!(
        g,
        movers,
        occupied,
        enemy,
        forbidden,
        |_from, _dir, _to, _to_bit, legal| {
            count += legal as u32;
        }
    );
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
