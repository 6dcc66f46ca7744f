//! The learned evaluation's inputs: piece-square indices per perspective and the scaled
//! global terms. The trainer builds its batches with these same functions, so training and
//! play cannot disagree on an input.

use super::{GLOBAL_INPUTS, PSQ_INPUTS};
use crate::config::{EvalWeights, Feature, PerFeature};
use crate::evaluation::side_features;
use loa::{Color, Position, Square};

/// `sq` as `perspective` sees the board: Black's as is, White's transposed (file ↔ rank),
/// so that in the standard start both colours' pieces stand on the first and last rows.
#[inline]
pub fn view_square(perspective: Color, sq: Square) -> usize {
    let sq = sq as usize;
    match perspective {
        Color::Black => sq,
        Color::White => (sq & 7) << 3 | sq >> 3,
    }
}

/// The input of a piece of `owner` on `sq` in the accumulator of `perspective`: its own
/// pieces at `0..64`, the other colour's at `64..128`.
#[inline]
pub fn psq_index(perspective: Color, owner: Color, sq: Square) -> usize {
    let base = if owner == perspective { 0 } else { 64 };
    base + view_square(perspective, sq)
}

/// Calls `f` with the index of every active piece-square input of `perspective` in `pos`.
#[inline]
pub fn for_each_active(pos: &Position, perspective: Color, mut f: impl FnMut(usize)) {
    for owner in [Color::Black, Color::White] {
        let mut bits = pos.pieces(owner);
        while bits != 0 {
            let sq = bits.trailing_zeros() as Square;
            bits &= bits - 1;
            f(psq_index(perspective, owner, sq));
        }
    }
}

/// The active inputs of `perspective` as a 0/1 vector (for the trainer).
pub fn psq_dense(pos: &Position, perspective: Color) -> [f32; PSQ_INPUTS] {
    let mut v = [0.0; PSQ_INPUTS];
    for_each_active(pos, perspective, |i| v[i] = 1.0);
    v
}

/// Every hand-written feature weighted non-zero, so that [`side_features`] computes all of
/// them (groups and uniformity are skipped at weight 0).
static ALL_FEATURES: EvalWeights = EvalWeights {
    features: PerFeature([1.0; Feature::COUNT]),
    side_to_move: 0.0,
};

/// Divisors bringing each feature to about unit size (in [`Feature::ALL`] order), then the
/// piece count's.
const SCALE: [f32; Feature::COUNT + 1] = [
    4.0,  // concentration: 0..4
    3.0,  // centralisation: 0..3
    4.0,  // com_position: -5..0
    4.0,  // euler: about -12..2
    1.0,  // quads: 0..~1
    4.0,  // mobility: 0..~6
    4.0,  // blocked: -12..0
    4.0,  // walls: -12..0
    4.0,  // connectedness: 0..4
    4.0,  // groups: -12..-1
    10.0, // uniformity: -10..0
    12.0, // pieces: 1..12
];

/// The global inputs of `pos`: the side to move's 11 features and piece count, then the
/// other side's, each divided by its scale.
pub fn global_inputs(pos: &Position) -> [f32; GLOBAL_INPUTS] {
    let mut out = [0.0; GLOBAL_INPUTS];
    let us = pos.to_move();
    for (k, side) in [us, us.opponent()].into_iter().enumerate() {
        let f = side_features(pos, side, &ALL_FEATURES);
        let o = &mut out[k * 12..(k + 1) * 12];
        for i in 0..Feature::COUNT {
            o[i] = f.values.0[i] / SCALE[i];
        }
        o[Feature::COUNT] = f.pieces as f32 / SCALE[Feature::COUNT];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Rules, Variant};

    #[test]
    fn views_put_both_colours_on_the_first_and_last_rows_at_the_start() {
        let pos = Position::start(Variant::Standard, &Rules::classic());
        let rows = |c: Color| {
            let mut v = Vec::new();
            for_each_active(&pos, c, |i| {
                if i < 64 {
                    v.push(i)
                }
            });
            v.sort();
            v
        };
        assert_eq!(rows(Color::Black), rows(Color::White));
        assert!(rows(Color::Black).iter().all(|&i| !(8..56).contains(&i)));
        assert_eq!(rows(Color::Black).len(), 12);
        for sq in 0..64 {
            assert_eq!(
                view_square(Color::White, view_square(Color::White, sq) as Square),
                sq as usize
            );
        }
    }

    #[test]
    fn global_inputs_are_the_side_features_scaled() {
        let pos = Position::start(Variant::Standard, &Rules::classic());
        let g = global_inputs(&pos);
        // The start is symmetric: both sides' terms agree.
        assert_eq!(g[..12], g[12..]);
        assert_eq!(g[11], 1.0); // 12 pieces / 12
        assert!(g.iter().all(|x| x.is_finite() && x.abs() <= 4.0), "{g:?}");
    }
}
