//! The feature transformer's sums for both perspectives: refreshed from the pieces, or
//! updated by a move (its from, to and captured squares). Integer arithmetic, so the two
//! agree exactly: the sums wrap like `i16`, and the loader refuses weights whose sums
//! could leave its range, so no intermediate order matters.

use super::features::{for_each_active, psq_index};
use super::network::LearnedEval;
use super::{Simd, HIDDEN};
use loa::moves::MoveKind;
use loa::{Color, Move, Position};

/// The sums of the feature transformer (bias included), `[perspective][unit]`, indexed by
/// [`Color::index`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Accumulator {
    pub(super) sums: [[i16; HIDDEN]; 2],
}

#[inline(always)]
fn add(acc: &mut [i16; HIDDEN], column: &[i16; HIDDEN]) {
    for i in 0..HIDDEN {
        acc[i] = acc[i].wrapping_add(column[i]);
    }
}

#[inline(always)]
fn sub(acc: &mut [i16; HIDDEN], column: &[i16; HIDDEN]) {
    for i in 0..HIDDEN {
        acc[i] = acc[i].wrapping_sub(column[i]);
    }
}

#[inline(always)]
fn refresh_kernel(net: &LearnedEval, pos: &Position) -> Accumulator {
    let mut acc = Accumulator {
        sums: [net.ft_bias; 2],
    };
    for c in [Color::Black, Color::White] {
        let sums = &mut acc.sums[c.index()];
        for_each_active(pos, c, |i| add(sums, &net.ft_weight[i]));
    }
    acc
}

#[inline(always)]
fn update_kernel(acc: &mut Accumulator, net: &LearnedEval, mover: Color, mv: Move) {
    for c in [Color::Black, Color::White] {
        let sums = &mut acc.sums[c.index()];
        sub(sums, &net.ft_weight[psq_index(c, mover, mv.from())]);
        add(sums, &net.ft_weight[psq_index(c, mover, mv.to())]);
        if mv.is_capture() {
            sub(
                sums,
                &net.ft_weight[psq_index(c, mover.opponent(), mv.to())],
            );
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn refresh_avx2(net: &LearnedEval, pos: &Position) -> Accumulator {
    refresh_kernel(net, pos)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
unsafe fn refresh_avx512(net: &LearnedEval, pos: &Position) -> Accumulator {
    refresh_kernel(net, pos)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update_avx2(acc: &mut Accumulator, net: &LearnedEval, mover: Color, mv: Move) {
    update_kernel(acc, net, mover, mv)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
unsafe fn update_avx512(acc: &mut Accumulator, net: &LearnedEval, mover: Color, mv: Move) {
    update_kernel(acc, net, mover, mv)
}

impl Accumulator {
    /// The sums of `pos`, from its pieces.
    pub fn refresh(net: &LearnedEval, pos: &Position) -> Accumulator {
        match net.simd() {
            // SAFETY: the path was checked available when `net` was made.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { refresh_avx2(net, pos) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { refresh_avx512(net, pos) },
            _ => refresh_kernel(net, pos),
        }
    }

    /// The sums after `mv` is played in `before` (whose sums these are). A pass changes
    /// nothing; drops and removals do not occur in the variants the feature set covers
    /// (refresh instead).
    pub fn update(&mut self, net: &LearnedEval, before: &Position, mv: Move) {
        match mv.kind() {
            MoveKind::Quiet | MoveKind::Capture => {}
            MoveKind::Pass => return,
            MoveKind::Drop | MoveKind::Remove => {
                *self = Accumulator::refresh(net, &before.after(mv));
                return;
            }
        }
        let mover = before.to_move();
        match net.simd() {
            // SAFETY: the path was checked available when `net` was made.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { update_avx2(self, net, mover, mv) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { update_avx512(self, net, mover, mv) },
            _ => update_kernel(self, net, mover, mv),
        }
    }
}
