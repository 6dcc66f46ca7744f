//! The random player.

use super::Player;
use anyhow::{bail, Result};
use loa::{Game, Move};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Plays a uniformly random legal move.
pub struct RandomPlayer {
    rng: SmallRng,
}

impl RandomPlayer {
    /// A player with its own random stream.
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Player for RandomPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        let moves = game.legal_moves();
        if moves.is_empty() {
            bail!("the game is over; there is no move to choose");
        }
        Ok(moves[self.rng.random_range(0..moves.len())])
    }
    fn name(&self) -> String {
        "random".into()
    }
}
