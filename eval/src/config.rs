//! Tunables of the alpha-beta baseline: search options and evaluation weights.

use serde::{Deserialize, Serialize};

/// Weights of the evaluation features (see [`crate::evaluation`]).
///
/// Every feature is computed for both sides and enters the score as
/// `weight * (feature(side to move) - feature(opponent))`; the unit is arbitrary (the
/// evaluation is clamped to ±2000, far below the win scores of the search).
///
/// How the defaults were chosen: the feature set follows MIA (Winands' Olympiad winner);
/// the weights were then set by self-play matches of `alphabeta:depth=4` against
/// `mcts:evaluator=heuristic,sims=1000` (100 games each from random balanced 4-ply openings,
/// `loazero match ... --a alphabeta:depth=4,w.NAME=VALUE`), switching features on one at a
/// time on top of concentration alone and keeping what scored better. Found that way:
/// concentration in the inverse form `4/(1+surplus)` (MIA's) beats the linear one (76% vs
/// 70%); mobility (+10%) and centralisation (+5%) help; the Euler number (−35%!), groups,
/// connectedness, uniformity and the centre-of-mass position did not help at depth 4 with
/// concentration present, so they default to 0 (they stay available); a larger
/// side-to-move bonus helped (79% at 30). Differences below ~10% are within the noise of
/// 100-game matches. See eval/README.md ("Tuning").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalWeights {
    /// Concentration: `4 / (1 + s)` where `s` is the average surplus board distance
    /// (Chebyshev; hex distance on the hexagonal board) of a side's pieces to their centre of
    /// mass over the tightest packing of that many pieces (4 when packed). In `parachute`
    /// the pieces the opponent still holds count too, at the farthest empty cell. Default 60.
    pub concentration: f32,
    /// Centralisation: average of a piece-square table that rises towards the centre
    /// (0 on the edge, 1 per ring inwards). Default 12.
    pub centralisation: f32,
    /// Centre of mass position: minus the board distance of the centre of mass to the
    /// board centre. Default 0.
    pub com_position: f32,
    /// Euler number from quad counts (`(Q1 - Q3 - 2·Qd) / 4`, "groups minus holes" under
    /// 8-connectivity; on the hexagonal board cells − adjacent pairs + triangles); enters
    /// with a minus sign. Default 0.
    pub euler: f32,
    /// Solid quads: 2×2 windows holding 3 or 4 own pieces, per piece (on the hexagonal
    /// board: triangles of three mutually adjacent own pieces, per piece). Default 25.
    pub quads: f32,
    /// Mobility: weighted move count per piece (capture 2, to an edge cell ½, else 1).
    /// Default 10.
    pub mobility: f32,
    /// Blocked pieces: own pieces without any move; enters with a minus sign. Default 6.
    pub blocked: f32,
    /// Walls: own edge pieces whose every inward neighbour holds an enemy piece; minus.
    /// Default 8.
    pub walls: f32,
    /// Connectedness: own adjacent pairs per piece. Default 0.
    pub connectedness: f32,
    /// Groups: number of separate groups; enters with a minus sign (not computed at 0).
    /// Default 0.
    pub groups: f32,
    /// Uniformity: minus the area of the bounding box of a side's pieces (on the hexagonal
    /// board the region bounded by lines of all three axes), per board cell ×10. Default 0.
    pub uniformity: f32,
    /// Side to move: a flat bonus for having the next normal move (the opponent has it while
    /// a `parachute` drop is pending). Default 30.
    pub side_to_move: f32,
}

impl Default for EvalWeights {
    fn default() -> Self {
        EvalWeights {
            concentration: 60.0,
            centralisation: 12.0,
            com_position: 0.0,
            euler: 0.0,
            quads: 25.0,
            mobility: 10.0,
            blocked: 6.0,
            walls: 8.0,
            connectedness: 0.0,
            groups: 0.0,
            uniformity: 0.0,
            side_to_move: 30.0,
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
    /// one ply shallower (re-searched at full depth if they beat alpha). Default false: at a
    /// fixed depth they cost strength (depth 4 vs MCTS-heuristic-1000: 74.8% with, 82.2%
    /// without, 200 games each); turn on with `lmr=on` to reach deeper in fixed time.
    pub late_move_reductions: bool,
    /// At a leaf, look for a move of the side to move that connects (a win one ply on).
    /// Default true.
    pub leaf_win_check: bool,
    /// Threat extension: a leaf where the opponent could connect next move is searched one
    /// ply deeper (along a path, only up to twice the nominal depth). Default true.
    pub threat_extension: bool,
    /// Aspiration window half-width for iterative deepening (0 = full window). Default 50.
    pub aspiration: i32,
    /// Evaluation weights.
    pub weights: EvalWeights,
}

impl Default for AlphaBetaConfig {
    fn default() -> Self {
        AlphaBetaConfig {
            tt_mib: 16,
            late_move_reductions: false,
            leaf_win_check: true,
            threat_extension: true,
            aspiration: 50,
            weights: EvalWeights::default(),
        }
    }
}
