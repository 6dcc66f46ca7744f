//! The batched evaluator interface between search and any model (network, heuristic,
//! uniform). Search code depends only on this trait, never on torch.

use crate::Error;
use loa::{Move, Position};

/// A batch of positions to evaluate, with reusable flat buffers (no allocation per
/// position once the buffers have grown).
///
/// Inputs: `positions[i]` with its legal moves `moves[move_start[i]..move_start[i + 1]]`
/// (in the order the caller chose; every position has at least one move).
/// Outputs, written by [`Evaluator::evaluate`]: `priors[j]` for `moves[j]` (non-negative,
/// summing to 1 over each position's moves) and `values[i]`, the expected score of
/// `positions[i]` for its side to move in `[-1, 1]` (win = 1, draw = 0, loss = −1).
#[derive(Clone, Debug, Default)]
pub struct EvalBatch {
    /// Positions to evaluate.
    pub positions: Vec<Position>,
    /// Offsets into `moves`; has `positions.len() + 1` entries once non-empty.
    pub move_start: Vec<u32>,
    /// Legal moves of all positions, concatenated.
    pub moves: Vec<Move>,
    /// Output: one prior per entry of `moves`.
    pub priors: Vec<f32>,
    /// Output: one value per position.
    pub values: Vec<f32>,
}

impl EvalBatch {
    /// An empty batch.
    pub fn new() -> EvalBatch {
        EvalBatch::default()
    }

    /// Removes every position, keeping the buffers' capacity.
    pub fn clear(&mut self) {
        self.positions.clear();
        self.move_start.clear();
        self.moves.clear();
        self.priors.clear();
        self.values.clear();
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the batch holds no position.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Adds a position and its legal moves; returns its index in the batch.
    pub fn push(&mut self, position: Position, moves: &[Move]) -> usize {
        if self.move_start.is_empty() {
            self.move_start.push(0);
        }
        self.positions.push(position);
        self.moves.extend_from_slice(moves);
        self.move_start.push(self.moves.len() as u32);
        self.positions.len() - 1
    }

    /// The move range of position `i` in `moves` and `priors`.
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.move_start[i] as usize..self.move_start[i + 1] as usize
    }

    /// Sizes the output buffers for the current inputs (filled with zeros).
    pub fn prepare_outputs(&mut self) {
        self.priors.clear();
        self.priors.resize(self.moves.len(), 0.0);
        self.values.clear();
        self.values.resize(self.positions.len(), 0.0);
    }
}

/// Evaluates batches of positions.
///
/// Threading contract: implementations are `Send + Sync`, and `evaluate` may be called
/// concurrently from many worker threads, each with its own batch. An implementation that
/// owns a non-`Sync` model (a torch module) keeps it on inference threads of its own (one,
/// or several with a copy each) and forwards batches to them over channels, merging
/// concurrent callers' batches as it sees fit; the call blocks until this caller's
/// outputs are written. Results must not depend on which
/// other positions share a batch.
pub trait Evaluator: Send + Sync {
    /// Fills `batch.priors` and `batch.values` for every position in `batch` (see
    /// [`EvalBatch`] for the layout). Errors (a dead inference thread, a device failure)
    /// are reported, never swallowed.
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error>;

    /// A short description for logs, e.g. `uniform` or `net:model.safetensors@cuda`.
    fn name(&self) -> String;
}
