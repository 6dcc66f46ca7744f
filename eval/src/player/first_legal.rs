//! The first-legal player: the first legal move in the move generator's order
//! ([`loa::Position::legal_moves`]). A fixed, instant, weakest-but-deterministic opponent:
//! a floor below `random` for tests and sanity checks.

use super::kind::{Network, Order, PlayerKind};
use super::{Player, PlayerFactory, PlayerSpec};
use anyhow::{bail, Result};
use loa::{Game, Move};

/// `first-legal` (no keys).
pub static KIND: PlayerKind = PlayerKind {
    name: "first-legal",
    aliases: &[],
    summary: "the first legal move in the move generator's order (deterministic, instant)",
    keys: &[],
    order: Order::Declared,
    network: Network::Never,
    served: true,
    opponents: &[("first-legal", "First legal move")],
    complete: |_| Ok(()),
    build,
};

fn build(_: &PlayerSpec, _: &PlayerFactory, _seed: u64) -> Result<Box<dyn Player>> {
    Ok(Box::new(FirstLegalPlayer))
}

/// Plays the first legal move.
struct FirstLegalPlayer;

impl Player for FirstLegalPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        match game.legal_moves().first() {
            Some(&mv) => Ok(mv),
            None => bail!("the game is over; there is no move to choose"),
        }
    }
    fn name(&self) -> String {
        KIND.name.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Rules, Variant};

    /// In positions of every variant it plays the generator's first move, under its name,
    /// and says when the game is over.
    #[test]
    fn plays_the_first_generated_move() {
        let spec = PlayerSpec::parse("First-Legal").unwrap();
        assert_eq!(spec.name(), "first-legal");
        assert!(PlayerSpec::parse("first-legal:seed=1").is_err());
        let mut player = PlayerFactory::new().build(&spec, 7).unwrap();
        assert_eq!(player.name(), "first-legal");
        let games = loa::testing::random_games(&Variant::ALL, Rules::classic(), 5, 30, 3);
        for game in &games {
            let first = game.position().legal_moves(game.rules())[0];
            assert_eq!(player.choose_move(game).unwrap(), first);
        }
        let mut game = Game::new(Variant::Six, Rules::classic());
        while !game.is_over() {
            let mv = player.choose_move(&game).unwrap();
            game.play(mv).unwrap();
        }
        assert!(player.choose_move(&game).is_err());
    }
}
