//! What a UBFM search has proven of a state ([`Resolution`]) and the completion order
//! that ranks (resolution, value) pairs ([`completed_order`]).

use super::{MAX_DISTANCE, PLY_DISCOUNT};
use loa::{Color, Outcome};
use std::cmp::Ordering;

/// The game-theoretic status of a state for its side to move, as far as the search has
/// proven it; distances count plies to the end of the game under best play.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// Not proven.
    #[default]
    Unresolved,
    /// A forced win in this many plies.
    Win(u16),
    /// A forced draw.
    Draw,
    /// A forced loss in this many plies.
    Loss(u16),
}

impl Resolution {
    /// Whether the result is proven.
    pub fn is_resolved(self) -> bool {
        self != Resolution::Unresolved
    }

    /// The value of a proven result (see the module docs' terminal reward); `None` when
    /// unresolved.
    pub fn value(self) -> Option<f32> {
        let worth = |d: u16| 1.0 - d.min(MAX_DISTANCE) as f32 * PLY_DISCOUNT;
        match self {
            Resolution::Unresolved => None,
            Resolution::Win(d) => Some(worth(d)),
            Resolution::Draw => Some(0.0),
            Resolution::Loss(d) => Some(-worth(d)),
        }
    }

    /// The same result one ply earlier, for the side that moves into this state:
    /// the opponent of its side to move (`flip`) or the same side (a `parachute` drop).
    pub fn one_ply_before(self, flip: bool) -> Resolution {
        let d = |d: u16| d.saturating_add(1);
        match (self, flip) {
            (Resolution::Win(n), false) | (Resolution::Loss(n), true) => Resolution::Win(d(n)),
            (Resolution::Loss(n), false) | (Resolution::Win(n), true) => Resolution::Loss(d(n)),
            (r, _) => r,
        }
    }

    /// The completed value's class: 2 for a proven win, 0 for a proven loss, 1 otherwise.
    pub(super) fn class(self) -> u8 {
        match self {
            Resolution::Win(_) => 2,
            Resolution::Loss(_) => 0,
            Resolution::Unresolved | Resolution::Draw => 1,
        }
    }

    /// `Win(d)` for `Outcome::Win(side)` etc.: a finished game for `side`, in 0 plies.
    pub(super) fn of(outcome: Outcome, side: Color) -> Resolution {
        match outcome {
            Outcome::Draw => Resolution::Draw,
            Outcome::Win(c) if c == side => Resolution::Win(0),
            Outcome::Win(_) => Resolution::Loss(0),
        }
    }
}

/// Ranks two (resolution, value) pairs for the same side as the papers' completion does:
/// completed value first (a proven win above anything unresolved or drawn, a proven loss
/// below), the fastest win and the slowest loss first, then the value (`0.0` and `-0.0`
/// are equal).
pub fn completed_order(a: (Resolution, f32), b: (Resolution, f32)) -> Ordering {
    let distance_order = match (a.0, b.0) {
        (Resolution::Win(x), Resolution::Win(y)) => y.cmp(&x),
        (Resolution::Loss(x), Resolution::Loss(y)) => x.cmp(&y),
        _ => Ordering::Equal,
    };
    a.0.class()
        .cmp(&b.0.class())
        .then(distance_order)
        .then(a.1.partial_cmp(&b.1).unwrap_or(Ordering::Equal))
}
