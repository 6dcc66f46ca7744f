//! The feature transformer's sums for both perspectives: refreshed from the pieces, or
//! updated by a move (its from, to and captured squares). The transformer
//! ([`super::transformer`]) owns the weights and the kernels; the accumulator holds the
//! sums and decides, by the kind of move, whether a move updates them or refreshes them.

use super::network::LearnedEval;
use super::HIDDEN;
use loa::moves::MoveKind;
use loa::{Move, Position};

/// The sums of the feature transformer (bias included), `[perspective][unit]`, indexed by
/// [`loa::Color::index`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Accumulator {
    pub(super) sums: [[i16; HIDDEN]; 2],
}

impl Accumulator {
    /// The sums of `pos`, from its pieces.
    pub fn refresh(net: &LearnedEval, pos: &Position) -> Accumulator {
        net.transformer().refresh(pos, net.simd())
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
        net.transformer()
            .apply_move(self, before.to_move(), mv, net.simd());
    }
}
