//! One training position with its search targets and the game's outcome.

use loa::{Move, Position, Rules};

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position (with its ply counter).
    pub position: Position,
    /// The rules the game was played under.
    pub rules: Rules,
    /// The legal moves searched, in the order `policy` uses.
    pub moves: Vec<Move>,
    /// Visit distribution over `moves` (sums to 1); empty when the move was not chosen by a
    /// full search (playout-cap randomisation): then only the value is a target.
    pub policy: Vec<f32>,
    /// Root value of the search for the side to move, in `[-1, 1]`.
    pub search_value: f32,
    /// Final result of the game for the side to move: 1, 0 or −1.
    pub outcome: f32,
}
