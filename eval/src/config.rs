//! Tunables of the alpha-beta baseline: search options and evaluation weights.

use serde::{Deserialize, Serialize};

/// Weights of the evaluation features (see [`crate::evaluation`]).
///
/// Every feature is computed for both sides and enters the score as
/// `weight * (feature(side to move) - feature(opponent))`; the score unit is roughly
/// "a hundredth of a decisive advantage" (the evaluation is clamped to ±2000, far below
/// the win scores of the search).
///
/// How the defaults were chosen: the feature set and the rough proportions follow MIA
/// (Winands' Olympiad winner: concentration dominates, then centralisation, quads and
/// mobility); the magnitudes were then adjusted with short self-play matches between weight
/// sets at fixed depth (`loazero match --a alphabeta:depth=3 --b
/// alphabeta:depth=3,weights=...`, 100–200 games from random 4-ply openings), keeping a change
/// when it scored ≥ 55%. See eval/README.md ("Tuning") for the matches and figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalWeights {
    /// Concentration: minus the average surplus Chebyshev distance of a side's pieces to its
    /// centre of mass (surplus over the tightest packing of that many pieces). Default 60.
    pub concentration: f32,
    /// Centralisation: average of a piece-square table that rises towards the centre
    /// (0 on the edge, 1 per ring inwards). Default 12.
    pub centralisation: f32,
    /// Centre of mass position: minus the Chebyshev distance of the centre of mass to the
    /// board centre (a centred group is easier to connect and harder to block). Default 6.
    pub com_position: f32,
    /// Euler number from quad counts (`(Q1 - Q3 - 2·Qd) / 4`, about "groups minus holes" under
    /// 8-connectivity); enters with a minus sign, fewer is better. Default 10.
    pub euler: f32,
    /// Solid quads: 2×2 windows holding 3 or 4 own pieces, per piece. Default 25.
    pub quads: f32,
    /// Mobility: weighted move count per piece (capture 2, to an edge cell ½, else 1).
    /// Default 10.
    pub mobility: f32,
    /// Blocked pieces: own pieces without any move; enters with a minus sign. Default 6.
    pub blocked: f32,
    /// Walls: own edge pieces whose every inward neighbour holds an enemy piece; minus.
    /// Default 8.
    pub walls: f32,
    /// Connectedness: own adjacent pairs per piece. Default 8.
    pub connectedness: f32,
    /// Groups: number of separate groups; enters with a minus sign. Default 6.
    pub groups: f32,
    /// Uniformity: minus the area of the bounding box of a side's pieces, per board cell
    /// ×10. Default 4.
    pub uniformity: f32,
    /// Side to move: a flat bonus for having the move. Default 8.
    pub side_to_move: f32,
}

impl Default for EvalWeights {
    fn default() -> Self {
        EvalWeights {
            concentration: 60.0,
            centralisation: 12.0,
            com_position: 6.0,
            euler: 10.0,
            quads: 25.0,
            mobility: 10.0,
            blocked: 6.0,
            walls: 8.0,
            connectedness: 8.0,
            groups: 6.0,
            uniformity: 4.0,
            side_to_move: 8.0,
        }
    }
}

/// Options of the alpha-beta search ([`crate::search::AlphaBeta`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlphaBetaConfig {
    /// Transposition table size in MiB (rounded down to a power-of-two number of buckets).
    /// Default 16.
    pub tt_mib: usize,
    /// Late move reductions: quiet moves late in the ordering at depth ≥ 3 are first searched
    /// one ply shallower (re-searched at full depth if they beat alpha). Default true.
    pub late_move_reductions: bool,
    /// At a leaf, look for a move of the side to move that connects (a win one ply on).
    /// Default true.
    pub leaf_win_check: bool,
    /// Aspiration window half-width for iterative deepening (0 = full window). Default 50.
    pub aspiration: i32,
    /// Evaluation weights.
    pub weights: EvalWeights,
}

impl Default for AlphaBetaConfig {
    fn default() -> Self {
        AlphaBetaConfig {
            tt_mib: 16,
            late_move_reductions: true,
            leaf_win_check: true,
            aspiration: 50,
            weights: EvalWeights::default(),
        }
    }
}
