//! Players behind one interface, described by text specs ([`spec`]) and built by a
//! [`PlayerFactory`]. Every kind of player is one module with one [`kind::PlayerKind`]
//! entry, listed once in [`KINDS`]: its name, keys (types, defaults, limits, help), whether
//! it loads a network, what a `serve` client may ask of it, and how it is built. Parsing,
//! names, `--help` ([`kind::spec_help`]), `docs/api.md` ([`kind::markdown`]), the server's
//! checks and the web app's opponents ([`kind::catalogue`]) come from there.
//!
//! Spec grammar: `KIND[:key=value[,key=value]...]` (kinds and keys: [`KINDS`], or
//! `loazero match --help`).
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
//!
//! Specs built from a file (a model, a learned evaluation) have one home:
//! [`spec_builders`].
//!
//! Every searching player reports its last search as a [`SearchInfo`] (one `info` line
//! format, `eval/PROTOCOL.md`).

pub mod alphabeta;
pub mod analysis;
pub mod first_legal;
pub mod info;
pub mod kind;
pub mod mcts;
pub mod model;
pub mod net_options;
pub mod random;
pub mod spec;
pub mod spec_builders;
pub mod threads;
pub mod ubfm;

pub use alphabeta::AlphaBetaPlayer;
pub use analysis::Analysis;
pub use info::{Score, SearchInfo};
pub use kind::PlayerKind;
pub use mcts::SearchOptions;
pub use net_options::{Device, NetOptions, Precision};
pub use random::RandomPlayer;
pub use spec::PlayerSpec;

use anyhow::{anyhow, Context, Result};
use loa::{Game, Move};
use selfplay::Evaluator;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Every kind of player, in the order help texts and the docs list them: the one place a
/// new kind is registered.
pub static KINDS: &[&PlayerKind] = &[
    &random::KIND,
    &first_legal::KIND,
    &alphabeta::KIND,
    &mcts::KIND,
    &model::KIND,
    &ubfm::KIND,
];

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
    /// The report of the last search ([`SearchInfo`], one `info` line format), if the
    /// player searches and has searched.
    fn last_info(&self) -> Option<SearchInfo> {
        None
    }
    /// Analyses the current position of `game`, which is not over, until `analysis` is
    /// stopped or deeper search can change nothing, passing `report` each principal
    /// variation it completes (with its rank when `analysis.multipv` asks for several);
    /// returns the best move found. Players without an analysis of their own (every kind
    /// but alpha-beta) search once as [`Player::choose_move`] does and report that search.
    fn analyse(
        &mut self,
        game: &Game,
        analysis: &Analysis,
        report: &mut dyn FnMut(SearchInfo),
    ) -> Result<Move> {
        let _ = analysis;
        analysis::search_once(self, game, report)
    }
}

/// Loads a trained network as an evaluator: `(model path, where and how it runs)`.
/// Supplied by the binary (which links torch); must be callable from any thread.
pub type ModelLoader = Arc<dyn Fn(&Path, &NetOptions) -> Result<Arc<dyn Evaluator>> + Send + Sync>;

/// Builds players from specs. Thread-safe (`Sync`): arena threads share one factory, and
/// model evaluators are loaded once per (path, [`NetOptions`]) and shared by every player
/// using them (but see [`PlayerFactory::with_private_timed_networks`]).
#[derive(Default)]
pub struct PlayerFactory {
    model_loader: Option<ModelLoader>,
    models: Mutex<HashMap<(PathBuf, NetOptions), Arc<dyn Evaluator>>>,
    private_timed: bool,
    /// Threads of a search whose spec has no `threads=` (0 until set: 1).
    default_threads: usize,
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

    /// Gives every player that searches by time (`ms=`, [`NetOptions::timed`]) its own
    /// evaluator, loaded when the player is built and dropped with it. For matches that
    /// play several games at once: a shared evaluator would make timed players queue for
    /// one inference thread, and an equal-time match would measure the queue.
    pub fn with_private_timed_networks(mut self) -> PlayerFactory {
        self.private_timed = true;
        self
    }

    /// Sets the threads of one search for specs without `threads=` ([`threads`]: 1 by
    /// default, for games played side by side).
    pub fn with_default_threads(mut self, threads: usize) -> PlayerFactory {
        self.default_threads = threads.max(1);
        self
    }

    /// The threads of one search of `spec`: its `threads=`, else the factory's default.
    pub fn threads_of(&self, spec: &PlayerSpec) -> usize {
        spec.int("threads")
            .map_or(self.default_threads.max(1), |n| n as usize)
    }

    /// Builds a fresh player (with its own tables and random stream seeded by `seed`).
    pub fn build(&self, spec: &PlayerSpec, seed: u64) -> Result<Box<dyn Player>> {
        (spec.kind().build)(spec, self, seed)
    }

    /// The network at `path` as `net` says, loaded once and shared (for `spec`'s errors).
    pub(crate) fn network(
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
        let load = || loader(path, net).with_context(|| format!("player '{spec}'"));
        if self.private_timed && net.timed {
            return load();
        }
        let key = (path.to_path_buf(), *net);
        let mut models = self.models.lock().expect("model cache lock");
        if let Some(ev) = models.get(&key) {
            return Ok(ev.clone());
        }
        let ev = load()?;
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
    use std::time::Duration;

    /// Timed players of a factory with private timed networks load their own evaluator
    /// each; players at fixed counts share one per (path, options).
    #[test]
    fn timed_players_get_private_evaluators_when_asked() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let loads = Arc::new(AtomicUsize::new(0));
        let counter = loads.clone();
        let loader: ModelLoader = Arc::new(move |_path: &Path, _net: &NetOptions| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(Arc::new(selfplay::UniformEvaluator) as Arc<dyn Evaluator>)
        });
        let spec = |text: &str| PlayerSpec::parse(text).unwrap();
        let (timed, counted) = (
            spec("model:path=m.st,ms=50"),
            spec("model:path=m.st,sims=8"),
        );
        assert!(NetOptions::of(&timed).timed && !NetOptions::of(&counted).timed);

        let shared = PlayerFactory::new().with_model_loader(loader.clone());
        for s in [&timed, &timed, &counted, &counted] {
            shared.build(s, 1).unwrap();
        }
        assert_eq!(
            loads.swap(0, Ordering::SeqCst),
            2,
            "one per (path, options)"
        );

        let private = PlayerFactory::new()
            .with_model_loader(loader)
            .with_private_timed_networks();
        for s in [&timed, &timed, &counted, &counted] {
            private.build(s, 1).unwrap();
        }
        assert_eq!(
            loads.load(Ordering::SeqCst),
            3,
            "one per timed player, one shared"
        );
    }

    /// An evaluator that answers as the uniform one and keeps the largest batch it got.
    struct LargestBatch(std::sync::atomic::AtomicUsize);

    impl Evaluator for LargestBatch {
        fn evaluate(
            &self,
            batch: &mut selfplay::EvalBatch,
        ) -> std::result::Result<(), selfplay::Error> {
            self.0
                .fetch_max(batch.len(), std::sync::atomic::Ordering::SeqCst);
            selfplay::UniformEvaluator.evaluate(batch)
        }
        fn name(&self) -> String {
            "largest batch".into()
        }
    }

    /// `leaves=N` is the number of leaves a model player's search sends per evaluator
    /// call, at a fixed count and against the clock: the batches fill up to N, never more.
    #[test]
    fn leaves_sets_the_batches_a_model_player_sends() {
        for spec in ["sims=96", "ms=200"] {
            for leaves in [3usize, 12] {
                let seen = Arc::new(LargestBatch(Default::default()));
                let shared = seen.clone();
                let loader: ModelLoader = Arc::new(move |_: &Path, _: &NetOptions| {
                    Ok(shared.clone() as Arc<dyn Evaluator>)
                });
                let factory = PlayerFactory::new().with_model_loader(loader);
                let text = format!("model:path=m.st,{spec},leaves={leaves}");
                let mut player = factory
                    .build(&PlayerSpec::parse(&text).unwrap(), 1)
                    .unwrap();
                let game = loa::Game::new(loa::Variant::Standard, loa::Rules::classic());
                player.choose_move(&game).unwrap();
                let largest = seen.0.load(std::sync::atomic::Ordering::SeqCst);
                assert_eq!(largest, leaves, "{text}");
            }
        }
    }

    #[test]
    fn specs_parse_and_print() {
        assert_eq!(PlayerSpec::parse("random").unwrap().name(), "random");
        let s = PlayerSpec::parse("AlphaBeta: depth=3, w.mobility=0").unwrap();
        assert_eq!(s.name(), "alphabeta:depth=3,w.mobility=0");
        let (limits, config) = alphabeta::search_settings(&s).unwrap();
        assert_eq!(limits.depth, Some(3));
        assert_eq!(config.weights.features[crate::Feature::Mobility], 0.0);
        let (limits, config) =
            alphabeta::search_settings(&PlayerSpec::parse("alphabeta:ms=50").unwrap()).unwrap();
        assert_eq!(limits.time, Some(Duration::from_millis(50)));
        assert_eq!(limits.depth, None);
        assert!(config.late_move_reductions);
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
        let (_, net) = spec.network().unwrap();
        assert_eq!(
            (net.device, net.precision),
            (Device::Cpu, Some(Precision::Bfloat16))
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
            ("mcts:evaluator=heuristic,ms=50", None, Some(50)),
            ("mcts:evaluator=uniform,sims=64,ms=5", Some(64), Some(5)),
            (
                "mcts:evaluator=heuristic,sims=800",
                Some(DEFAULT_SIMS as i64),
                None,
            ),
        ] {
            let spec = PlayerSpec::parse(text).unwrap();
            assert_eq!(spec.name(), text);
            assert_eq!(PlayerSpec::parse(&spec.name()).unwrap(), spec);
            assert_eq!((spec.int("sims"), spec.int("ms")), (sims, ms));
        }
        assert_eq!(
            PlayerSpec::parse("mcts").unwrap().name(),
            "mcts:evaluator=heuristic,sims=800"
        );
        for (text, canonical, sims, ms) in [
            (
                "model:path=m.st,ms=200",
                "model:path=m.st,ms=200",
                None,
                Some(200),
            ),
            (
                "model: ms=200, sims=9, path=m.st, device=cuda",
                "model:path=m.st,sims=9,ms=200,device=cuda",
                Some(9),
                Some(200),
            ),
            (
                "model:path=m.st",
                "model:path=m.st,sims=800",
                Some(DEFAULT_SIMS as i64),
                None,
            ),
        ] {
            let spec = PlayerSpec::parse(text).unwrap();
            assert_eq!(spec.name(), canonical);
            assert_eq!(PlayerSpec::parse(&spec.name()).unwrap(), spec);
            assert_eq!((spec.int("sims"), spec.int("ms")), (sims, ms));
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

    /// Every searching player reports each search in the one format: the line reads back
    /// to the same report, the principal variation starts with the move played, and the
    /// nodes are what the spec's limit counts. Players that do not search report nothing.
    #[test]
    fn every_searching_player_reports_one_info_format() {
        let f = PlayerFactory::new();
        let game = Game::new(loa::Variant::Standard, loa::Rules::classic());
        for (text, nodes) in [
            ("alphabeta:depth=2", None),
            ("alphabeta:ms=20", None),
            ("mcts:evaluator=heuristic,sims=50", Some(50)),
            ("mcts:evaluator=uniform,ms=20", None),
            ("mcts:evaluator=uniform,sims=32,gumbel=on", Some(32)),
            ("ubfm:evaluator=heuristic,nodes=20", Some(20)),
            ("ubfm:evaluator=heuristic,ms=20", None),
        ] {
            let mut p = f.build(&PlayerSpec::parse(text).unwrap(), 1).unwrap();
            assert_eq!(p.last_info(), None, "{text}");
            for timed in [false, true] {
                let mv = if timed {
                    p.choose_move_within(&game, Duration::from_millis(20))
                } else {
                    p.choose_move(&game)
                }
                .unwrap();
                let info = p.last_info().unwrap();
                let line = info.line();
                assert_eq!(SearchInfo::parse(&line).unwrap(), info, "{text}");
                assert_eq!(info.pv.first(), Some(&mv.to_string()), "{text}: {line}");
                assert!(info.nodes > 0 && info.score.is_some(), "{text}: {line}");
                if let (Some(n), false) = (nodes, timed) {
                    assert_eq!(info.nodes, n, "{text}: {line}");
                }
                if text.starts_with("alphabeta") {
                    assert!(matches!(info.score, Some(Score::Cp(_))), "{line}");
                    assert!(info.depth.is_some_and(|d| d >= 1), "{line}");
                } else {
                    assert!(
                        matches!(info.score, Some(Score::Value(v)) if (-1.0..=1.0).contains(&v)),
                        "{line}"
                    );
                    assert_eq!(info.depth, Some(info.pv.len() as u32), "{line}");
                }
                if text.starts_with("mcts") {
                    assert!(info.pv.len() >= 2, "the tree is walked: {line}");
                    assert!(info.seldepth >= info.depth, "{line}");
                } else {
                    assert_eq!(info.seldepth, None, "{line}");
                }
            }
        }
        for text in ["random", "first-legal"] {
            let mut p = f.build(&PlayerSpec::parse(text).unwrap(), 1).unwrap();
            p.choose_move(&game).unwrap();
            assert_eq!(p.last_info(), None, "{text}");
        }
    }

    /// A spec echoed back states the limit it searched by: a spec without a limit of its
    /// own given a time is the spec with that time, not its default count.
    #[test]
    fn specs_searching_by_time_say_so() {
        for (text, ms, echoed) in [
            ("model:path=m.st", 200, "model:path=m.st,ms=200"),
            ("mcts", 50, "mcts:evaluator=heuristic,ms=50"),
            ("alphabeta", 200, "alphabeta:ms=200"),
            ("ubfm:evaluator=uniform", 30, "ubfm:evaluator=uniform,ms=30"),
            ("random", 30, "random"),
            ("first-legal", 30, "first-legal"),
        ] {
            let spec = PlayerSpec::parse(text).unwrap();
            assert!(!spec.gives_limit(), "{text}");
            let timed = spec.searching_for(ms).unwrap();
            assert_eq!(timed.name(), echoed);
            assert_eq!(PlayerSpec::parse(echoed).unwrap(), timed);
        }
        for text in [
            "model:path=m.st,sims=64",
            "alphabeta:depth=3",
            "ubfm:nodes=9",
            "mcts:ms=5",
        ] {
            assert!(PlayerSpec::parse(text).unwrap().gives_limit(), "{text}");
        }
        let (limits, config) = alphabeta::search_settings(
            &PlayerSpec::parse("alphabeta")
                .unwrap()
                .searching_for(200)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            (limits.depth, limits.time),
            (None, Some(Duration::from_millis(200)))
        );
        assert!(config.late_move_reductions);
    }

    /// Search options parse in any order, print in a fixed one, and reach the search.
    #[test]
    fn search_options_round_trip() {
        let spec = PlayerSpec::parse("model:gumbel=on,path=m.st,cpuct=2.5,sims=64").unwrap();
        assert_eq!(spec.name(), "model:path=m.st,sims=64,cpuct=2.5,gumbel=on");
        assert_eq!(PlayerSpec::parse(&spec.name()).unwrap(), spec);
        let c = SearchOptions::of(&spec).mcts_config(false);
        assert!(c.gumbel && c.cpuct == 2.5);
        // Model players search a fixed number of simulations with the Gumbel root and
        // against the clock with PUCT, unless told otherwise; mcts players (the anchors)
        // always with PUCT unless told otherwise.
        let model = |t: &str| SearchOptions::of(&PlayerSpec::parse(t).unwrap()).mcts_configs(true);
        let c64 = model("model:path=m.st,sims=64");
        assert!(c64.fixed.gumbel && !c64.timed.gumbel);
        let off = model("model:path=m.st,sims=64,gumbel=off");
        assert!(!off.fixed.gumbel && !off.timed.gumbel);
        let on = model("model:path=m.st,ms=200,gumbel=on");
        assert!(on.fixed.gumbel && on.timed.gumbel);
        let anchor =
            SearchOptions::of(&PlayerSpec::parse("mcts:evaluator=heuristic,sims=64").unwrap())
                .mcts_configs(false);
        assert!(!anchor.fixed.gumbel && !anchor.timed.gumbel);
        // Against the clock a model player fills larger batches; the anchors and every
        // fixed-simulation search keep the search's own count.
        let eight = MctsConfig::default().leaves_per_batch;
        assert_eq!(
            (c64.fixed.leaves_per_batch, c64.timed.leaves_per_batch),
            (eight, mcts::TIMED_MODEL_LEAVES)
        );
        assert_ne!(eight, mcts::TIMED_MODEL_LEAVES);
        assert_eq!(
            (anchor.fixed.leaves_per_batch, anchor.timed.leaves_per_batch),
            (eight, eight)
        );
        assert_eq!(c.fpu_reduction, MctsConfig::default().fpu_reduction);
        let plain =
            PlayerSpec::parse("mcts:leaves=2,evaluator=uniform,sims=8,fpu=0,topk=4").unwrap();
        assert_eq!(
            plain.name(),
            "mcts:evaluator=uniform,sims=8,fpu=0,topk=4,leaves=2"
        );
        let leaves = SearchOptions::of(&plain).mcts_configs(true);
        assert_eq!(
            (leaves.fixed.leaves_per_batch, leaves.timed.leaves_per_batch),
            (2, 2)
        );
        assert_eq!(c.leaves_per_batch, MctsConfig::default().leaves_per_batch);
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
            ("model:path=m.st,leaves=0", "leaves"),
            ("mcts:leaves=1025", "leaves"),
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

    /// A valid value of every type, as text (not a default, so that it shows in names).
    fn sample(ty: kind::ValueType) -> &'static str {
        use kind::ValueType::*;
        match ty {
            Int { min: 1, max: 60 } => "7",
            Int { min: 1, .. } => "9",
            Int { .. } => "5",
            NonNegative | Real => "1.5",
            Switch => "off",
            Choice(words) => words[words.len() - 1],
            File => "m.st",
            Device => "cuda:1",
            Precision => "half",
        }
    }

    /// Every key of every kind parses, reaches the spec with the value given, and the name
    /// parses back to the same spec (which names itself the same way).
    #[test]
    fn every_key_of_every_kind_round_trips() {
        for kind in KINDS {
            for key in kind.keys {
                let base = match kind.network {
                    kind::Network::Always if key.name != "path" => {
                        format!("{}:path=m.st", kind.name)
                    }
                    _ => kind.name.to_string(),
                };
                let name = match key.family() {
                    Some(prefix) => format!("{prefix}mobility"),
                    None => key.name.to_string(),
                };
                let value = sample(key.value);
                let mut text = format!("{base},{name}={value}").replacen(
                    ',',
                    ":",
                    usize::from(!base.contains(':')),
                );
                let spec = PlayerSpec::parse(&text).or_else(|e| match kind.network {
                    // Keys that need the network's key (ubfm's device=).
                    kind::Network::WithKey(k)
                        if key.name != k && !text.contains(&format!("{k}=")) =>
                    {
                        text = format!("{text},{k}=m.st");
                        PlayerSpec::parse(&text).map_err(|e2| anyhow!("{e}; {e2}"))
                    }
                    _ => Err(e),
                });
                let spec = match spec {
                    Ok(spec) => spec,
                    // ubfm's evaluator= and path= exclude each other.
                    Err(e) if e.to_string().contains("not both") => continue,
                    Err(e) => panic!("{text}: {e:#}"),
                };
                let expected = spec::Value::parse(key.value, &name, value).unwrap();
                assert_eq!(spec.settings().get(&name), Some(&expected), "{text}");
                let again = PlayerSpec::parse(&spec.name()).unwrap();
                assert_eq!(again, spec, "{text}");
                assert_eq!(again.name(), spec.name(), "{text}");
                assert!(
                    spec.name().contains(&format!("{name}={value}")),
                    "{text} → {spec}"
                );
                // Aliases of the kind and of the key read the same.
                for alias in kind.aliases {
                    let aliased = PlayerSpec::parse(&text.replacen(kind.name, alias, 1)).unwrap();
                    assert_eq!(aliased, spec, "{alias}");
                }
                for alias in key.aliases {
                    let aliased =
                        PlayerSpec::parse(&text.replace(&format!("{name}="), &format!("{alias}=")))
                            .unwrap();
                    assert_eq!(aliased, spec, "{alias}");
                }
            }
        }
    }

    /// What the registry promises clients: every offered opponent is served and parses for
    /// a client, every cap lets the key's default through, and refused keys are refused.
    #[test]
    fn the_registry_keeps_its_promises_to_clients() {
        for kind in KINDS {
            for (text, label) in kind.opponents {
                assert!(kind.served, "{text}");
                let spec = PlayerSpec::parse_for_client(text).unwrap();
                assert_eq!(spec.kind().name, kind.name, "{label}");
            }
            for key in kind.keys {
                if let kind::Serve::AtMost { max, .. } = key.serve {
                    if let Ok(spec::Value::Int(d)) =
                        spec::Value::parse(key.value, key.name, key.default)
                    {
                        assert!(d <= max, "{}.{}", kind.name, key.name);
                    }
                }
            }
        }
        for (text, needle) in [
            ("alphabeta:depth=9", "depth at most 8 without ms or nodes"),
            ("alphabeta:ms=30001", "ms at most 30000"),
            ("alphabeta:tt=65", "tt at most 64"),
            (
                "alphabeta:weights=/etc/passwd",
                "weights=FILE is not accepted",
            ),
            ("mcts:sims=20001", "sims at most 20000"),
            ("model:path=m.st,device=cuda", "cpu only"),
            ("model:path=m.st,precision=half", "chooses the precision"),
            ("ubfm:nodes=20001", "nodes at most 20000"),
        ] {
            let e = PlayerSpec::parse_for_client(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
            PlayerSpec::parse(text).unwrap();
        }
        for text in ["alphabeta:depth=20,ms=100", "mcts:sims=50000,ms=100"] {
            PlayerSpec::parse_for_client(text).unwrap();
        }
    }

    /// The help text and the docs name every kind and key.
    #[test]
    fn help_and_docs_name_every_kind_and_key() {
        let (help, docs, catalogue) = (
            kind::spec_help(),
            kind::markdown(),
            kind::catalogue().to_string(),
        );
        for kind in KINDS {
            for text in [&help, &docs, &catalogue] {
                assert!(text.contains(kind.name), "{}", kind.name);
                for key in kind.keys {
                    assert!(text.contains(key.name), "{}.{}", kind.name, key.name);
                }
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
