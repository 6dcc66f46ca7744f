//! Where a command's players come from. Player specs are parsed and built by `eval`; what
//! differs between the two binaries is whether a network can be loaded: `loazero` links no
//! torch ([`Players::torch_free`]), `loazero-torch` loads models through
//! `train::players::eval_player_factory`. A command that plays takes a [`Players`] from the
//! binary that runs it and builds its factory with one of the three methods (one per way a
//! command plays), so no command names the other binary's loader.

use eval::player::threads::all_cores;
use eval::PlayerFactory;
use std::sync::Arc;

/// How the running binary makes a player factory (module doc).
#[derive(Clone, Copy)]
pub struct Players {
    /// The factory for players that search side by side in a match (`timed = false`) or
    /// that think against a clock (`timed = true`: `model:` players infer on one torch
    /// thread without waiting for more requests).
    pub factory: fn(timed: bool) -> PlayerFactory,
    /// Whether its factories load networks (`false`: `loazero`, whose `engine` hands a
    /// session that asks for a network player over to `loazero-torch`).
    pub loads_networks: bool,
}

impl Players {
    /// The players of the torch-free `loazero` binary: every kind, but a player that needs a
    /// network fails to build with an error that says to run it through `loazero-torch`.
    pub fn torch_free() -> Players {
        Players {
            factory: torch_free_factory,
            loads_networks: false,
        }
    }

    /// The factory `match` builds players with: one thread a search unless a spec says
    /// otherwise, as games are played side by side.
    pub fn match_factory(&self) -> PlayerFactory {
        (self.factory)(false)
    }

    /// The factory of players that think against a clock, one thread a search unless a spec
    /// says otherwise (`bench`'s timed searches).
    pub fn timed_factory(&self) -> PlayerFactory {
        (self.factory)(true)
    }

    /// The factory of one game that has the machine to itself (`engine`, `bestmove`):
    /// [`Players::timed_factory`] with every core for a search whose spec gives no
    /// `threads=`.
    pub fn whole_machine_factory(&self) -> PlayerFactory {
        self.timed_factory().with_default_threads(all_cores())
    }
}

/// A factory whose players that need a network fail to load, naming the way out.
fn torch_free_factory(_timed: bool) -> PlayerFactory {
    PlayerFactory::new().with_model_loader(Arc::new(|path, _net| {
        anyhow::bail!(
            "cannot load model {}: this process runs without torch; start it with a model \
             player on its command line (e.g. `loazero engine --player model:…`) or run \
             loazero-torch",
            path.display()
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval::PlayerSpec;

    fn spec(text: &str) -> PlayerSpec {
        PlayerSpec::parse(text).unwrap()
    }

    /// A search without `threads=` gets one thread in a match (games side by side) and every
    /// core where one game has the machine (`engine`, `bestmove`); a spec's own count wins.
    #[test]
    fn one_game_gets_every_core_and_a_match_one_per_search() {
        let players = Players::torch_free();
        for kind in ["alphabeta:ms=300", "model:path=m.safetensors,ms=300"] {
            assert_eq!(players.match_factory().threads_of(&spec(kind)), 1, "{kind}");
            assert_eq!(players.timed_factory().threads_of(&spec(kind)), 1, "{kind}");
            assert_eq!(
                players.whole_machine_factory().threads_of(&spec(kind)),
                all_cores(),
                "{kind}"
            );
            let given = spec(&format!("{kind},threads=3"));
            assert_eq!(
                players.whole_machine_factory().threads_of(&given),
                3,
                "{kind}"
            );
            assert_eq!(players.match_factory().threads_of(&given), 3, "{kind}");
        }
    }

    /// The torch-free players build every kind without a network and refuse a model player
    /// with a message that names the model and the binary that can load it.
    #[test]
    fn torch_free_players_refuse_models_by_name() {
        let factory = Players::torch_free().match_factory();
        factory.build(&spec("alphabeta:depth=1"), 1).unwrap();
        let err = factory
            .build(&spec("model:path=some/net.safetensors,sims=8"), 1)
            .err()
            .expect("a model player needs torch");
        let text = format!("{err:#}");
        assert!(text.contains("some/net.safetensors"), "{text}");
        assert!(text.contains("loazero-torch"), "{text}");
    }
}
