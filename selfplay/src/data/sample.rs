//! One training position with its search targets and the game's outcome.

use loa::{Move, Position, Rules};

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position (with its ply counter).
    pub position: Position,
    /// The rules the game was played under.
    pub rules: Rules,
    /// The legal moves searched, in the order `policy` uses (empty for a `tree_only`
    /// sample).
    pub moves: Vec<Move>,
    /// Visit distribution over `moves` (sums to 1); empty when the move was not chosen by a
    /// full search (playout-cap randomisation): then only the value is a target.
    pub policy: Vec<f32>,
    /// Root value of the search for the side to move, in `[-1, 1]`.
    pub search_value: f32,
    /// Final result of the game for the side to move: 1, 0 or −1 (0 and not a target
    /// for a `tree_only` sample).
    pub outcome: f32,
    /// Tree learning (Descent): a position the search valued but the game did not
    /// play. Its only target is its value, `search_value` (its backed-up minimax
    /// value): no game outcome reaches it, and it has no policy target (`policy` and
    /// `moves` are empty).
    pub tree_only: bool,
    /// Where the pieces stood when the game ended: `[own, opponent]` bitboards of the
    /// game's last position, for this sample's side (team) to move; the target of the
    /// network's occupancy head (KataGo's ownership target, for LOA: where the winning
    /// group formed). `None` for a tree-only sample and for samples of shards written
    /// before format version 4.
    pub final_pieces: Option<[u64; 2]>,
}

impl Sample {
    /// `final_pieces` of a sample whose side (team) to move is `side` in a game whose last
    /// position is `last`.
    pub fn final_pieces_of(last: &Position, side: loa::Color) -> [u64; 2] {
        [last.pieces(side), last.pieces(side.opponent())]
    }
}
