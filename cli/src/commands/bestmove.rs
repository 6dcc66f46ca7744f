//! `loazero bestmove`: one move for one position, for scripts.

use crate::args::GameArgs;
use crate::players::Players;
use anyhow::{anyhow, bail, Result};
use eval::PlayerSpec;
use loa::Game;

/// Arguments of `loazero bestmove`.
#[derive(clap::Args)]
#[command(after_help = eval::player::kind::spec_help())]
pub struct Args {
    /// The position (position text, e.g. "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b");
    /// default: the variant's start.
    #[arg(long)]
    pub position: Option<String>,
    /// Moves played from the position before searching (space separated).
    #[arg(long)]
    pub moves: Option<String>,
    /// The variant and rules (`--variant`, `--rules`).
    #[command(flatten)]
    pub game: GameArgs,
    /// The player that chooses (a player spec: every kind and key below).
    #[arg(long, default_value = "alphabeta:ms=1000")]
    pub player: String,
    /// Seed of randomised players.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Prints search information (if any) and then the chosen move as the last line.
pub fn run(args: Args, players: Players) -> Result<()> {
    let spec = PlayerSpec::parse(&args.player)?;
    let start = args.game.position(args.position.as_deref())?;
    let mut game = Game::from_position(start, args.game.rules);
    for m in args.moves.as_deref().unwrap_or("").split_whitespace() {
        game.play_text(m).map_err(|e| anyhow!("--moves: {e}"))?;
    }
    if let Some(o) = game.outcome() {
        bail!(
            "the game is over in position {} ({}); there is no move to choose",
            game.position().to_text(),
            o.name()
        );
    }
    let factory = players.whole_machine_factory();
    let mut player = factory.build(&spec, args.seed)?;
    let mv = player.choose_move(&game)?;
    if !game.position().is_legal(mv, game.rules()) {
        bail!(
            "internal error: {} chose the illegal move {mv}",
            player.name()
        );
    }
    if let Some(info) = player.last_info() {
        println!("{}", info.line());
    }
    println!("{mv}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval::PlayerFactory;
    use loa::{Rules, Variant};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// How many factories of each kind were asked for: (match, timed).
    static MADE: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

    fn recording(timed: bool) -> PlayerFactory {
        MADE[timed as usize].fetch_add(1, Ordering::SeqCst);
        PlayerFactory::new()
    }

    /// `bestmove` builds its player as `engine` does (the timed factory, every core): a
    /// model player then infers as soon as its search asks, where the match factory's
    /// would wait for a batch that one search never fills (6–7× slower at `sims=400`).
    #[test]
    fn bestmove_plays_with_the_engines_players() {
        let args = Args {
            position: None,
            moves: Some("b1-b3".into()),
            game: GameArgs {
                variant: Variant::Standard,
                rules: Rules::classic(),
            },
            player: "alphabeta:depth=1".into(),
            seed: 1,
        };
        let players = Players {
            factory: recording,
            loads_networks: false,
        };
        run(args, players).unwrap();
        let made = |i: usize| MADE[i].load(Ordering::SeqCst);
        assert_eq!((made(0), made(1)), (0, 1), "(match, timed) factories made");
    }
}
