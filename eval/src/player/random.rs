//! The random player.

use super::kind::{Key, Network, Order, PlayerKind, Serve, Shown, ValueType};
use super::{Player, PlayerFactory, PlayerSpec};
use anyhow::{bail, Result};
use loa::{Game, Move};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// `random[:seed=S]`.
pub static KIND: PlayerKind = PlayerKind {
    name: "random",
    aliases: &[],
    summary: "a uniformly random legal move",
    keys: &[Key {
        name: "seed",
        aliases: &[],
        value: ValueType::Int {
            min: 0,
            max: i64::MAX,
        },
        default: "",
        help: "fixed seed of its random stream (default: the match's seed)",
        shown: Shown::Always,
        limit: false,
        serve: Serve::Any,
    }],
    order: Order::Declared,
    network: Network::Never,
    served: true,
    opponents: &[("random", "Random")],
    complete: |_| Ok(()),
    build,
};

fn build(spec: &PlayerSpec, _: &PlayerFactory, seed: u64) -> Result<Box<dyn Player>> {
    let seed = spec.int("seed").map_or(seed, |s| s as u64);
    Ok(Box::new(RandomPlayer::new(seed)))
}

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
