//! The feature transformer: the quantised first layer (128 piece-square inputs → [`HIDDEN`]
//! units, shared by both perspectives) and its kernels, which fill an [`Accumulator`] from
//! a position's pieces or add and remove the features a move changes. Integer arithmetic,
//! so the two agree exactly: the sums wrap like `i16`, and [`FeatureTransformer::quantise`]
//! refuses weights whose sums could leave its range, so no intermediate order matters.

use super::accumulator::Accumulator;
use super::features::{for_each_active, psq_index};
use super::file::Weights;
use super::{Simd, HIDDEN, PSQ_INPUTS, QA};
use anyhow::{bail, Result};
use loa::{Color, Move, Position};

/// Largest number of pieces on the board in a covered variant (the feature transformer's
/// sums add at most this many columns).
const MAX_PIECES: i32 = 24;

/// The quantised feature transformer (weights times [`QA`]).
pub(super) struct FeatureTransformer {
    /// Its columns, `[input][unit]`.
    weight: Box<[[i16; HIDDEN]; PSQ_INPUTS]>,
    /// Its bias.
    bias: [i16; HIDDEN],
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
fn refresh_kernel(ft: &FeatureTransformer, pos: &Position) -> Accumulator {
    let mut acc = Accumulator { sums: [ft.bias; 2] };
    for c in [Color::Black, Color::White] {
        let sums = &mut acc.sums[c.index()];
        for_each_active(pos, c, |i| add(sums, &ft.weight[i]));
    }
    acc
}

#[inline(always)]
fn update_kernel(ft: &FeatureTransformer, acc: &mut Accumulator, mover: Color, mv: Move) {
    for c in [Color::Black, Color::White] {
        let sums = &mut acc.sums[c.index()];
        sub(sums, &ft.weight[psq_index(c, mover, mv.from())]);
        add(sums, &ft.weight[psq_index(c, mover, mv.to())]);
        if mv.is_capture() {
            sub(sums, &ft.weight[psq_index(c, mover.opponent(), mv.to())]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn refresh_avx2(ft: &FeatureTransformer, pos: &Position) -> Accumulator {
    refresh_kernel(ft, pos)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
unsafe fn refresh_avx512(ft: &FeatureTransformer, pos: &Position) -> Accumulator {
    refresh_kernel(ft, pos)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update_avx2(ft: &FeatureTransformer, acc: &mut Accumulator, mover: Color, mv: Move) {
    update_kernel(ft, acc, mover, mv)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
unsafe fn update_avx512(ft: &FeatureTransformer, acc: &mut Accumulator, mover: Color, mv: Move) {
    update_kernel(ft, acc, mover, mv)
}

impl FeatureTransformer {
    /// The tensors `ft.weight` and `ft.bias` of `weights`, quantised (errors if a unit's
    /// sums could leave the `i16` range).
    pub(super) fn quantise(weights: &Weights) -> Result<FeatureTransformer> {
        let ft = weights.tensor("ft.weight");
        let ft_b = weights.tensor("ft.bias");
        let mut weight = Box::new([[0i16; HIDDEN]; PSQ_INPUTS]);
        let mut bias = [0i16; HIDDEN];
        let q = |w: f32| (w * QA as f32).round() as i32;
        for h in 0..HIDDEN {
            let mut worst = q(ft_b[h]).abs();
            let mut column: Vec<i32> = (0..PSQ_INPUTS)
                .map(|i| q(ft[h * PSQ_INPUTS + i]).abs())
                .collect();
            column.sort_unstable_by(|a, b| b.cmp(a));
            worst += column.iter().take(MAX_PIECES as usize).sum::<i32>();
            if worst > i16::MAX as i32 {
                bail!(
                    "feature transformer unit {h}: its sums can reach {worst}/{QA}, beyond \
                     the i16 range (weights too large to quantise)"
                );
            }
            bias[h] = q(ft_b[h]) as i16;
            for i in 0..PSQ_INPUTS {
                weight[i][h] = q(ft[h * PSQ_INPUTS + i]) as i16;
            }
        }
        Ok(FeatureTransformer { weight, bias })
    }

    /// The sums of `pos`, from its pieces, on the path `simd` (which this CPU has).
    #[inline]
    pub(super) fn refresh(&self, pos: &Position, simd: Simd) -> Accumulator {
        match simd {
            // SAFETY: the caller's path was checked available when its network was made.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { refresh_avx2(self, pos) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { refresh_avx512(self, pos) },
            _ => refresh_kernel(self, pos),
        }
    }

    /// Removes from `acc` the features of `mover`'s piece leaving `mv`'s from-square (and
    /// of the piece it captures) and adds that of the piece arriving on its to-square, on
    /// the path `simd` (which this CPU has). `mv` is a quiet move or a capture.
    #[inline]
    pub(super) fn apply_move(&self, acc: &mut Accumulator, mover: Color, mv: Move, simd: Simd) {
        match simd {
            // SAFETY: the caller's path was checked available when its network was made.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { update_avx2(self, acc, mover, mv) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { update_avx512(self, acc, mover, mv) },
            _ => update_kernel(self, acc, mover, mv),
        }
    }
}
