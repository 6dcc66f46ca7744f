//! Players behind one interface, described by text specs ([`spec`]) and built by a
//! [`PlayerFactory`]: [`random`], [`alphabeta`] (the baseline), [`mcts`] (with a
//! built-in evaluator or a trained network) and [`ubfm`] (unbounded best-first minimax
//! with completion, on the same values).
//!
//! Spec grammar: `KIND[:key=value[,key=value]...]`:
//! * `random[:seed=S]` — a uniformly random legal move.
//! * `alphabeta:depth=D` / `alphabeta:ms=T` / `alphabeta:nodes=N` (limits combine; with
//!   none, depth 4; late move reductions default on without a depth limit, off with
//!   one), plus `tt=MiB` (1 to 65536), `lmr=on|off`, `leafwin=on|off`, `threat=on|off`,
//!   `aspiration=N`, `weights=FILE.json`
//!   (an [`crate::EvalWeights`] object) and single weights as `w.NAME=VALUE`
//!   (e.g. `w.mobility=0`).
//! * `mcts:evaluator=heuristic|uniform[,sims=N][,ms=T]` — the selfplay crate's MCTS.
//! * `model:path=P[,sims=N][,ms=T][,device=cpu|cuda][,precision=auto|float|half|bfloat16]`
//!   — MCTS with a trained network (precision: of its inference, default the command's
//!   setting, `train.inference.precision`); the binary supplies the network loader
//!   ([`PlayerFactory::with_model_loader`]) so this crate
//!   stays free of torch.
//! * Both MCTS kinds take search options ([`SearchOptions`]) over the defaults of
//!   [`selfplay::MctsConfig`]: `cpuct=C`, `fpu=R` (first-play urgency reduction), `gumbel=on|off`
//!   (Gumbel root with sequential halving, no noise), `topk=K` (its root moves). `model`
//!   players search a fixed number of simulations with the Gumbel root unless `gumbel=off`:
//!   it is how their networks were trained to be searched (self-play's policy targets are
//!   the Gumbel root's), and it measured +247 Elo over PUCT at 64 simulations against
//!   `alphabeta:depth=2` (`docs/experiments.md`, batch 4). Against the clock (`ms=T`, the
//!   engine's time controls) they search with PUCT unless `gumbel=on`: at 200 ms per move
//!   against `alphabeta:ms=200` PUCT scored 67.5% and the Gumbel root 49% over 80 games
//!   each (`docs/experiments.md`, play-time search). `mcts` players (the built-in
//!   evaluators, the run's anchors) keep PUCT unless `gumbel=on`, so the anchors never
//!   change.
//!
//! * `ubfm:evaluator=heuristic|uniform[,nodes=N][,ms=T][,completion=on|off]` and
//!   `ubfm:path=P[,nodes=N][,ms=T][,device=…][,precision=…][,completion=on|off]` —
//!   [`selfplay::Ubfm`], unbounded best-first minimax with completion, on a built-in
//!   evaluator's values or a trained network's (loaded like a `model` player's, so
//!   `path=` needs the binary's network loader); no evaluator and no path: `heuristic`.
//!   `completion=off` is the papers' plain UBFM, for comparisons. The move played is
//!   the papers' safest action (see [`selfplay::ubfm`]).
//!
//! MCTS players (`mcts`, `model`) search `sims` simulations per move (default 800); with
//! `ms=T` they search for T milliseconds per move instead, and `sims`, if given, caps the
//! simulations ([`NO_SIM_CAP`] when not). UBFM players likewise search `nodes` iterations
//! per move (each expands one position and evaluates all its children in one batch;
//! default [`DEFAULT_UBFM_NODES`]), or for `ms` milliseconds with `nodes` as the cap
//! ([`NO_NODE_CAP`] when not given); they stop early once the position is proven.
//!
//! Time controls ([`Player::choose_move_within`], used by the engine protocol's `go
//! movetime` and `time`): the budget replaces the spec's `ms`. A spec with `ms` keeps its
//! other limits (`depth`, `nodes`, `sims`) as caps; a spec without `ms` (a fixed depth,
//! node, simulation or iteration count) searches by the budget alone.

pub mod alphabeta;
pub mod mcts;
pub mod random;
pub mod spec;
pub mod ubfm;

pub use alphabeta::AlphaBetaPlayer;
pub use random::RandomPlayer;
pub use spec::{mentions_network, NetOptions, PlayerSpec, SearchOptions, UbfmValues};

use anyhow::{anyhow, Context, Result};
use loa::{Game, Move};
use selfplay::Evaluator;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The `sims` of an MCTS spec with `ms` and no `sims`: no simulation cap.
pub const NO_SIM_CAP: u32 = u32::MAX;

/// Simulations per move of an MCTS spec with neither `sims` nor `ms`.
pub const DEFAULT_SIMS: u32 = 800;

/// The `nodes` of a UBFM spec with `ms` and no `nodes`: no iteration cap.
pub const NO_NODE_CAP: u32 = u32::MAX;

/// Iterations per move of a UBFM spec with neither `nodes` nor `ms`: each evaluates the
/// children of one position (about 30 in the standard game), so about 6 000 evaluations,
/// a few times the default MCTS player's 800 and a fraction of a second with the
/// heuristic evaluator.
pub const DEFAULT_UBFM_NODES: u32 = 200;

/// Something that picks moves. A player may keep state between moves (search tables,
/// trees); it is used by one thread at a time.
pub trait Player: Send {
    /// A legal move of the current position of `game`, which is not over.
    fn choose_move(&mut self, game: &Game) -> Result<Move>;
    /// The player's name (its canonical spec).
    fn name(&self) -> String;
    /// A legal move of the current position of `game`, which is not over, chosen in about
    /// `budget` of thinking time (see the module docs for how the budget combines with the
    /// spec's limits). Players that do not search ignore the budget.
    fn choose_move_within(&mut self, game: &Game, budget: Duration) -> Result<Move> {
        let _ = budget;
        self.choose_move(game)
    }
    /// A one-line summary of the last search (depth, score, nodes), if the player searches.
    fn last_info(&self) -> Option<String> {
        None
    }
}

/// Loads a trained network as an evaluator: `(model path, where and how it runs)`.
/// Supplied by the binary (which links torch); must be callable from any thread.
pub type ModelLoader = Arc<dyn Fn(&Path, &NetOptions) -> Result<Arc<dyn Evaluator>> + Send + Sync>;

/// Builds players from specs. Thread-safe (`Sync`): arena threads share one factory, and
/// model evaluators are loaded once per (path, [`NetOptions`]) and shared by every player
/// using them.
#[derive(Default)]
pub struct PlayerFactory {
    model_loader: Option<ModelLoader>,
    models: Mutex<HashMap<(PathBuf, NetOptions), Arc<dyn Evaluator>>>,
}

impl PlayerFactory {
    /// A factory for every kind but `model`.
    pub fn new() -> PlayerFactory {
        PlayerFactory::default()
    }

    /// Adds the network loader that makes `model:` specs work.
    pub fn with_model_loader(mut self, loader: ModelLoader) -> PlayerFactory {
        self.model_loader = Some(loader);
        self
    }

    /// Builds a fresh player (with its own tables and random stream seeded by `seed`).
    pub fn build(&self, spec: &PlayerSpec, seed: u64) -> Result<Box<dyn Player>> {
        match spec {
            PlayerSpec::Random { seed: fixed } => {
                Ok(Box::new(RandomPlayer::new(fixed.unwrap_or(seed))))
            }
            PlayerSpec::AlphaBeta {
                limits,
                config,
                text,
            } => Ok(Box::new(AlphaBetaPlayer::new(
                text.clone(),
                config.clone(),
                *limits,
            ))),
            PlayerSpec::Mcts {
                evaluator,
                sims,
                ms,
                search,
            } => {
                let ev = mcts::builtin_evaluator(evaluator)?;
                mcts::build(
                    spec.name(),
                    ev,
                    search.mcts_configs(false),
                    *sims,
                    *ms,
                    seed,
                )
            }
            PlayerSpec::Model {
                path,
                sims,
                net,
                ms,
                search,
            } => {
                let ev = self.network(spec, path, net)?;
                mcts::build(spec.name(), ev, search.mcts_configs(true), *sims, *ms, seed)
            }
            PlayerSpec::Ubfm {
                values,
                nodes,
                ms,
                completion,
            } => {
                let ev = match values {
                    UbfmValues::Builtin(name) => mcts::builtin_evaluator(name)?,
                    UbfmValues::Network { path, net } => self.network(spec, path, net)?,
                };
                let config = selfplay::UbfmConfig {
                    completion: *completion,
                    ..selfplay::UbfmConfig::default()
                };
                Ok(ubfm::build(spec.name(), ev, config, *nodes, *ms))
            }
        }
    }

    /// The network at `path` as `net` says, loaded once and shared (for `spec`'s errors).
    fn network(
        &self,
        spec: &PlayerSpec,
        path: &Path,
        net: &NetOptions,
    ) -> Result<Arc<dyn Evaluator>> {
        let loader = self.model_loader.as_ref().ok_or_else(|| {
            anyhow!(
                "player '{spec}': players with a network need the network loader, which this \
                 build of loazero does not provide yet"
            )
        })?;
        let key = (path.to_path_buf(), net.clone());
        let mut models = self.models.lock().expect("model cache lock");
        if let Some(ev) = models.get(&key) {
            return Ok(ev.clone());
        }
        let ev =
            loader(path, net).with_context(|| format!("player '{spec}': cannot load model"))?;
        models.insert(key, ev.clone());
        Ok(ev)
    }
}

#[cfg(test)]
mod root_check_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use selfplay::MctsConfig;

    #[test]
    fn specs_parse_and_print() {
        assert_eq!(PlayerSpec::parse("random").unwrap().name(), "random");
        let s = PlayerSpec::parse("AlphaBeta: depth=3, w.mobility=0").unwrap();
        assert_eq!(s.name(), "alphabeta:depth=3,w.mobility=0");
        match s {
            PlayerSpec::AlphaBeta { limits, config, .. } => {
                assert_eq!(limits.depth, Some(3));
                assert_eq!(config.weights.features[crate::Feature::Mobility], 0.0);
            }
            _ => panic!(),
        }
        match PlayerSpec::parse("alphabeta:ms=50").unwrap() {
            PlayerSpec::AlphaBeta { limits, config, .. } => {
                assert_eq!(limits.time, Some(Duration::from_millis(50)));
                assert_eq!(limits.depth, None);
                assert!(config.late_move_reductions);
            }
            _ => panic!(),
        }
        assert_eq!(
            PlayerSpec::parse("mcts:evaluator=heuristic,sims=1000")
                .unwrap()
                .name(),
            "mcts:evaluator=heuristic,sims=1000"
        );
        assert_eq!(
            PlayerSpec::parse("model:path=m.safetensors,sims=64,device=cuda")
                .unwrap()
                .name(),
            "model:path=m.safetensors,sims=64,device=cuda"
        );
        // Precision: kept, printed, and part of what tells two model players apart.
        let spec = PlayerSpec::parse("model:path=m.st,sims=64,precision=BFloat16").unwrap();
        assert_eq!(spec.name(), "model:path=m.st,sims=64,precision=bfloat16");
        assert_eq!(PlayerSpec::parse(&spec.name()).unwrap(), spec);
        let PlayerSpec::Model { net, .. } = &spec else {
            panic!("{spec}")
        };
        assert_eq!(
            (net.device.as_str(), net.precision.as_deref()),
            ("cpu", Some("bfloat16"))
        );
        let err = PlayerSpec::parse("model:path=m.st,precision=fp8")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("precision 'fp8'") && err.contains("bfloat16"),
            "{err}"
        );
    }

    #[test]
    fn timed_mcts_specs_round_trip() {
        for (text, sims, ms) in [
            ("mcts:evaluator=heuristic,ms=50", NO_SIM_CAP, Some(50)),
            ("mcts:evaluator=uniform,sims=64,ms=5", 64, Some(5)),
            ("mcts:evaluator=heuristic,sims=800", DEFAULT_SIMS, None),
        ] {
            let spec = PlayerSpec::parse(text).unwrap();
            assert_eq!(spec.name(), text);
            assert_eq!(PlayerSpec::parse(&spec.name()).unwrap(), spec);
            match spec {
                PlayerSpec::Mcts { sims: s, ms: m, .. } => assert_eq!((s, m), (sims, ms)),
                _ => panic!(),
            }
        }
        assert_eq!(
            PlayerSpec::parse("mcts").unwrap().name(),
            "mcts:evaluator=heuristic,sims=800"
        );
        for (text, canonical, sims, ms) in [
            (
                "model:path=m.st,ms=200",
                "model:path=m.st,ms=200",
                NO_SIM_CAP,
                Some(200),
            ),
            (
                "model: ms=200, sims=9, path=m.st, device=cuda",
                "model:path=m.st,sims=9,ms=200,device=cuda",
                9,
                Some(200),
            ),
            (
                "model:path=m.st",
                "model:path=m.st,sims=800",
                DEFAULT_SIMS,
                None,
            ),
        ] {
            let spec = PlayerSpec::parse(text).unwrap();
            assert_eq!(spec.name(), canonical);
            assert_eq!(PlayerSpec::parse(&spec.name()).unwrap(), spec);
            match spec {
                PlayerSpec::Model { sims: s, ms: m, .. } => assert_eq!((s, m), (sims, ms)),
                _ => panic!(),
            }
        }
    }

    #[test]
    fn timed_players_answer_with_legal_moves() {
        let f = PlayerFactory::new();
        let game = Game::new(loa::Variant::Six, loa::Rules::classic());
        for text in [
            "mcts:evaluator=heuristic,ms=5",
            "mcts:evaluator=heuristic,sims=20,ms=1000",
            "mcts:evaluator=uniform,sims=20",
            "alphabeta:depth=2",
            "alphabeta:ms=5,depth=3",
            "random",
        ] {
            let spec = PlayerSpec::parse(text).unwrap();
            let mut p = f.build(&spec, 3).unwrap();
            let legal = game.legal_moves();
            assert!(legal.contains(&p.choose_move(&game).unwrap()), "{text}");
            let mv = p
                .choose_move_within(&game, Duration::from_millis(5))
                .unwrap();
            assert!(legal.contains(&mv), "{text}");
        }
    }

    /// Search options parse in any order, print in a fixed one, and reach the search.
    #[test]
    fn search_options_round_trip() {
        let spec = PlayerSpec::parse("model:gumbel=on,path=m.st,cpuct=2.5,sims=64").unwrap();
        assert_eq!(spec.name(), "model:path=m.st,sims=64,cpuct=2.5,gumbel=on");
        assert_eq!(PlayerSpec::parse(&spec.name()).unwrap(), spec);
        let PlayerSpec::Model { search, .. } = spec else {
            panic!("{spec:?}")
        };
        let c = search.mcts_config(false);
        assert!(c.gumbel && c.cpuct == 2.5);
        // Model players search a fixed number of simulations with the Gumbel root and
        // against the clock with PUCT, unless told otherwise; mcts players (the anchors)
        // always with PUCT unless told otherwise.
        let model = |t: &str| match PlayerSpec::parse(t).unwrap() {
            PlayerSpec::Model { search, .. } => search.mcts_configs(true),
            other => panic!("{other:?}"),
        };
        let c64 = model("model:path=m.st,sims=64");
        assert!(c64.fixed.gumbel && !c64.timed.gumbel);
        let off = model("model:path=m.st,sims=64,gumbel=off");
        assert!(!off.fixed.gumbel && !off.timed.gumbel);
        let on = model("model:path=m.st,ms=200,gumbel=on");
        assert!(on.fixed.gumbel && on.timed.gumbel);
        let anchor = match PlayerSpec::parse("mcts:evaluator=heuristic,sims=64").unwrap() {
            PlayerSpec::Mcts { search, .. } => search.mcts_configs(false),
            other => panic!("{other:?}"),
        };
        assert!(!anchor.fixed.gumbel && !anchor.timed.gumbel);
        assert_eq!(c.fpu_reduction, MctsConfig::default().fpu_reduction);
        let plain = PlayerSpec::parse("mcts:evaluator=uniform,sims=8,fpu=0,topk=4").unwrap();
        assert_eq!(plain.name(), "mcts:evaluator=uniform,sims=8,fpu=0,topk=4");
        // Such a player plays.
        let mut p = PlayerFactory::new().build(&plain, 1).unwrap();
        let game = Game::new(loa::Variant::Standard, loa::Rules::classic());
        let mv = p.choose_move(&game).unwrap();
        assert!(game.legal_moves().contains(&mv));
        let gumbel = PlayerSpec::parse("mcts:evaluator=uniform,sims=16,gumbel=on").unwrap();
        let mv = PlayerFactory::new()
            .build(&gumbel, 1)
            .unwrap()
            .choose_move(&game)
            .unwrap();
        assert!(game.legal_moves().contains(&mv));
    }

    #[test]
    fn bad_specs_name_the_problem() {
        for (spec, needle) in [
            ("", "empty"),
            ("minimax", "minimax"),
            ("alphabeta:depth=x", "depth=x"),
            ("alphabeta:depth=0", "depth"),
            ("alphabeta:speed=3", "speed"),
            ("alphabeta:w.nonsense=1", "nonsense"),
            ("mcts:sims=0", "sims"),
            ("mcts:ms=0", "ms"),
            ("mcts:ms=fast", "ms=fast"),
            ("mcts:depth=3", "depth"),
            ("model:path=m.st,ms=-5", "ms=-5"),
            ("model:path=m.st,ms=0", "ms"),
            ("mcts:evaluator=oracle", "evaluator"),
            ("model:sims=3", "path"),
            ("random:depth", "depth"),
            ("mcts:cpuct=-1", "cpuct"),
            ("model:path=m.st,gumbel=maybe", "gumbel=maybe"),
            ("model:path=m.st,topk=0", "topk"),
            ("mcts:fpu=nan", "fpu"),
            // Found by the audit for fuzz/: `tt` sized a table of tt × 2^20 bytes
            // unchecked (an overflow panic, or an abort allocating terabytes).
            ("alphabeta:tt=18446744073709551615", "tt must be"),
            ("alphabeta:tt=1000000", "tt must be"),
            ("alphabeta:tt=0", "tt must be"),
            ("ubfm:nodes=0", "nodes"),
            ("minimax", "ubfm"),
        ] {
            let e = PlayerSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }

    /// Command lines that name a network go to the torch binary (`src/light.rs`).
    #[test]
    fn network_players_are_recognised_on_command_lines() {
        for (arg, network) in [
            ("model:path=m.st,sims=8", true),
            ("--player=ubfm:path=m.st,ms=200", true),
            ("UBFM:PATH=m.st", true),
            ("runs/default/models/gen-0003.safetensors", true),
            ("ubfm:evaluator=heuristic,ms=20", false),
            ("mcts:evaluator=uniform", false),
            ("alphabeta:depth=3", false),
        ] {
            assert_eq!(mentions_network(arg), network, "{arg}");
            if let Ok(spec) = PlayerSpec::parse(arg) {
                // Every spec that loads a network is recognised.
                assert!(spec.network().is_none() || mentions_network(arg), "{arg}");
            }
        }
    }

    #[test]
    fn model_players_need_a_loader() {
        let spec = PlayerSpec::parse("model:path=x.pt,sims=8").unwrap();
        let e = PlayerFactory::new()
            .build(&spec, 1)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("network loader"), "{e}");
    }
}
