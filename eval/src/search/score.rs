//! Search scores: win scores by distance, their text, and their transposition-table form.

use loa::{Color, Outcome};

/// Score of a win at the root; a win `k` plies away scores `WIN - k`.
pub const WIN: i32 = 30_000;
/// Scores beyond this magnitude are wins or losses found by the search.
pub const WIN_THRESHOLD: i32 = WIN - 1_000;
pub(crate) const INFINITY: i32 = 31_000;
pub(crate) const MAX_PLY: usize = 200;

/// Human-readable form of a search score: `+123`, `win in 3`, `loss in 4`.
pub fn score_text(score: i32) -> String {
    if score > WIN_THRESHOLD {
        format!("win in {}", WIN - score)
    } else if score < -WIN_THRESHOLD {
        format!("loss in {}", WIN + score)
    } else {
        format!("{score:+}")
    }
}

/// Score of a finished game for `mover` (who made the last move), found at `ply`.
#[inline]
pub(crate) fn outcome_score(o: Outcome, mover: Color, ply: usize) -> i32 {
    match o {
        Outcome::Draw => 0,
        Outcome::Win(c) if c == mover => WIN - ply as i32,
        Outcome::Win(_) => -(WIN - ply as i32),
    }
}

#[inline]
pub(crate) fn score_to_tt(s: i32, ply: usize) -> i32 {
    if s > WIN_THRESHOLD {
        s + ply as i32
    } else if s < -WIN_THRESHOLD {
        s - ply as i32
    } else {
        s
    }
}

#[inline]
pub(crate) fn score_from_tt(s: i32, ply: usize) -> i32 {
    if s > WIN_THRESHOLD {
        s - ply as i32
    } else if s < -WIN_THRESHOLD {
        s + ply as i32
    } else {
        s
    }
}
