//! The learned evaluation of alpha-beta: a small network (NNUE-style) that the training loop
//! distils from the policy-value network, called by [`crate::search::AlphaBeta`] in place of
//! the hand-written [`crate::evaluation::static_evaluation`] (player spec
//! `alphabeta:eval=FILE`).
//!
//! The network ([`FEATURE_SET`], one fixed architecture named in every weights file):
//! * **Piece-square inputs, both perspectives** ([`features`]): for each colour's
//!   perspective, 64 squares of its own pieces and 64 of the other's, seen from that colour
//!   (White's board transposed, so both colours start on the first and last rows): at most 24
//!   of 128 inputs are active.
//! * **Feature transformer**: 128 → [`HIDDEN`] per perspective, shared weights, quantised to
//!   `i16` on load (scale [`QA`]); the sums (the [`Accumulator`]) are exact integers,
//!   refreshed from the pieces or updated by a move (at most three columns: from, to,
//!   captured), with the same result.
//! * **Global terms**: the hand-written evaluation's features of both sides
//!   ([`crate::evaluation::side_features`], every feature computed), scaled to about unit
//!   size ([`features::global_inputs`]): connectivity is global, which piece-squares learn
//!   poorly.
//! * **Dense layers** in `f32`: `[acc(mover), acc(other)]` clipped to `[0, 1]`, then the
//!   global terms → [`L1`] → [`L2`] → 1, clipped ReLU between; the output is a win
//!   logit for the side to move, scaled by [`SCORE_SCALE`] to evaluation units.
//!
//! Arithmetic is chosen once, at load, by measuring nothing but the CPU's instruction sets:
//! AVX-512 where present, else AVX2 (with FMA), else the portable build ([`Simd`];
//! `LOAZERO_SIMD=avx512|avx2|scalar` forces one, so the AVX2 figures can be taken on any
//! machine).
//!
//! Weights are a safetensors file ([`file`]): the float weights as trained, with a header
//! naming the format and the feature set; a file of another feature set, shape or a corrupt
//! file is refused with an error naming the file and what is wrong.
//!
//! The feature set covers the 8×8 two-player variants without vanished cells or reserves
//! (`standard`, `scrambled-eggs`); [`supports`] says which.

mod accumulator;
pub mod features;
pub mod file;
mod network;
mod simd;
mod transformer;

pub use accumulator::Accumulator;
pub use file::Weights;
pub use network::{reference_logit, to_score, LearnedEval};
pub use simd::Simd;

/// The scored games moved to [`crate::scored_games`] (they play searches, which use this
/// module); this path stays for the callers outside the crate until they name the new one.
pub use crate::scored_games as games;

use loa::geometry::Shape;
use loa::{Position, Variant};

/// The name of the feature set and architecture; weights files carry it and a file naming
/// another is refused.
pub const FEATURE_SET: &str = "loa8-psq128x2-side24-h128-32-32-v1";

/// Piece-square inputs per perspective: 64 own squares, 64 of the opponent's.
pub const PSQ_INPUTS: usize = 128;

/// Accumulator width per perspective.
pub const HIDDEN: usize = 128;

/// Global inputs: 12 per side (the 11 hand-written features and the piece count), the
/// mover's first.
pub const GLOBAL_INPUTS: usize = 24;

/// Inputs of the first dense layer: both accumulators, then the global terms.
pub const L1_INPUTS: usize = 2 * HIDDEN + GLOBAL_INPUTS;

/// Width of the first dense layer.
pub const L1: usize = 32;

/// Width of the second dense layer.
pub const L2: usize = 32;

/// Quantisation scale of the feature transformer: a float weight `w` is stored as
/// `round(w · QA)`, and the clipped activation `[0, 1]` is `[0, QA]`.
pub const QA: i32 = 255;

/// Evaluation units per unit of the output logit (a logit of 1, a 73% expected score, is
/// 200 units; the hand-written evaluation's side-to-move bonus is 30).
pub const SCORE_SCALE: f32 = 200.0;

/// Whether the feature set covers positions of `variant` (8×8, two players, no vanished
/// cells, no reserves).
pub fn supports(variant: Variant) -> bool {
    matches!(variant, Variant::Standard | Variant::ScrambledEggs)
}

/// Errors unless the feature set covers `pos` (see [`supports`]).
pub fn check_supported(pos: &Position) -> anyhow::Result<()> {
    let g = pos.geometry();
    if !supports(pos.variant()) || g.shape != Shape::Square || g.size != 8 {
        anyhow::bail!(
            "the learned evaluation ({FEATURE_SET}) covers the variants standard and \
             scrambled-eggs, not {}",
            pos.variant().name()
        );
    }
    Ok(())
}
