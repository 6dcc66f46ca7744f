//! MCTS players: the selfplay crate's [`selfplay::MctsPlayer`] behind the [`Player`]
//! interface; the `mcts` kind (a built-in evaluator) and what it shares with the `model`
//! kind ([`super::model`]): the limit keys, the search options, the player.

use super::info::{Proven, Score, SearchInfo};
use super::kind::{joined, Key, Network, Order, PlayerKind, Serve, Shown, ValueType, SERVE_MAX_MS};
use super::spec::{Settings, Value};
use super::{Player, PlayerSpec, DEFAULT_SIMS, NO_SIM_CAP};
use anyhow::Result;
use loa::{Game, Move};
use selfplay::{Evaluator, HeuristicEvaluator, MctsConfig, MctsPlayer, Proof, UniformEvaluator};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A built-in evaluator (an implementation of the [`Evaluator`] trait without a network),
/// as a spec's `evaluator=` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinEvaluator {
    /// Concentration / centre-of-mass evaluation ([`HeuristicEvaluator`]).
    Heuristic,
    /// Uniform priors, value 0 ([`UniformEvaluator`]).
    Uniform,
}

impl BuiltinEvaluator {
    /// Every built-in evaluator.
    pub const ALL: [BuiltinEvaluator; 2] = [BuiltinEvaluator::Heuristic, BuiltinEvaluator::Uniform];

    /// Its name in specs.
    pub const fn name(self) -> &'static str {
        match self {
            BuiltinEvaluator::Heuristic => "heuristic",
            BuiltinEvaluator::Uniform => "uniform",
        }
    }

    /// A fresh evaluator of this kind.
    pub fn evaluator(self) -> Arc<dyn Evaluator> {
        match self {
            BuiltinEvaluator::Heuristic => Arc::new(HeuristicEvaluator::new()),
            BuiltinEvaluator::Uniform => Arc::new(UniformEvaluator::new()),
        }
    }
}

impl std::str::FromStr for BuiltinEvaluator {
    type Err = String;
    fn from_str(text: &str) -> Result<BuiltinEvaluator, String> {
        let lower = text.trim().to_ascii_lowercase();
        BuiltinEvaluator::ALL
            .into_iter()
            .find(|e| e.name() == lower)
            .ok_or_else(|| {
                format!("unknown built-in evaluator '{text}' (expected heuristic or uniform)")
            })
    }
}

impl std::fmt::Display for BuiltinEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The names a spec's `evaluator=` takes (`mcts`, `ubfm`).
pub const BUILTIN_EVALUATORS: &[&str] = &[
    BuiltinEvaluator::Heuristic.name(),
    BuiltinEvaluator::Uniform.name(),
];

/// `evaluator=`: a built-in evaluator, default `heuristic`.
pub const EVALUATOR: Key = Key {
    name: "evaluator",
    aliases: &["eval"],
    value: ValueType::Choice(BUILTIN_EVALUATORS),
    default: "heuristic",
    help: "the built-in evaluator of positions (the Evaluator its search calls)",
    shown: Shown::Always,
    limit: false,
    serve: Serve::Any,
};

/// `sims=`: simulations per move; with `ms`, the cap.
pub const SIMS: Key = Key {
    name: "sims",
    aliases: &[],
    value: ValueType::positive(u32::MAX as i64),
    default: "800 without ms; no cap with ms",
    help: "simulations per move (with ms: their cap)",
    shown: Shown::Always,
    limit: true,
    serve: Serve::AtMost {
        max: 20_000,
        unless: &["ms"],
    },
};

/// `ms=`: thinking time per move (searches by time when given).
pub const MS: Key = Key {
    name: "ms",
    aliases: &[],
    value: ValueType::positive(i64::MAX),
    default: "",
    help: "thinking time per move in milliseconds (searches by time)",
    shown: Shown::Always,
    limit: true,
    serve: Serve::AtMost {
        max: SERVE_MAX_MS,
        unless: &[],
    },
};

/// `cpuct=`, `fpu=`, `gumbel=`, `topk=`, `leaves=`: the search options ([`SearchOptions`]).
pub const SEARCH_OPTIONS: [Key; 5] = [
    Key {
        name: "cpuct",
        aliases: &[],
        value: ValueType::NonNegative,
        default: "",
        help: "the PUCT exploration constant (default: selfplay's MctsConfig)",
        shown: Shown::Always,
        limit: false,
        serve: Serve::Any,
    },
    Key {
        name: "fpu",
        aliases: &[],
        value: ValueType::NonNegative,
        default: "",
        help: "first-play urgency reduction below the parent's value",
        shown: Shown::Always,
        limit: false,
        serve: Serve::Any,
    },
    Key {
        name: "gumbel",
        aliases: &[],
        value: ValueType::Switch,
        default: "",
        help: "Gumbel root with sequential halving instead of PUCT at the root (model \
               players: on at fixed simulations, off against the clock)",
        shown: Shown::Always,
        limit: false,
        serve: Serve::Any,
    },
    Key {
        name: "topk",
        aliases: &[],
        value: ValueType::positive(u32::MAX as i64),
        default: "",
        help: "root moves the Gumbel root considers",
        shown: Shown::Always,
        limit: false,
        serve: Serve::Any,
    },
    Key {
        name: "leaves",
        aliases: &[],
        value: ValueType::positive(1024),
        default: "",
        help: "leaves per evaluator call (simulations with virtual loss: more fill the \
               network's batches, fewer search sharper; default: 16 for a model player \
               against the clock, else selfplay's MctsConfig)",
        shown: Shown::Always,
        limit: false,
        serve: Serve::Any,
    },
];

/// The keys `mcts` and `model` share, in their canonical forms' order: the limits, then
/// the search options. (Each kind adds its own `threads=`, whose defaults differ.)
pub const SEARCH_KEYS: [Key; 7] = joined(&[&[SIMS, MS], &SEARCH_OPTIONS]);

/// `mcts[:evaluator=heuristic|uniform][,sims=N][,ms=T][,cpuct=C]...`.
pub static KIND: PlayerKind = PlayerKind {
    name: "mcts",
    aliases: &[],
    summary: "the selfplay crate's MCTS with a built-in evaluator (PUCT unless gumbel=on)",
    keys: &joined::<9>(&[
        &[EVALUATOR],
        &SEARCH_KEYS,
        &[super::threads::BUILTIN_EVALUATOR_THREADS],
    ]),
    order: Order::Declared,
    network: Network::Never,
    served: true,
    opponents: &[("mcts:evaluator=heuristic", "MCTS heuristic, time per move")],
    complete: |settings| {
        settings.fill("evaluator", Value::Word("heuristic"))?;
        fill_sims(settings)
    },
    build: |spec, _, seed| {
        let evaluator = builtin_evaluator(spec.word("evaluator").unwrap_or("heuristic"))?;
        let configs = SearchOptions::of(spec).mcts_configs(false);
        let threads = spec.int("threads").map_or(1, |n| n as usize);
        build(spec, evaluator, configs, threads, seed)
    },
};

/// The default simulations of a spec with neither `sims` nor `ms`.
pub fn fill_sims(settings: &mut Settings) -> Result<(), String> {
    if !settings.has("ms") {
        settings.fill("sims", Value::Int(DEFAULT_SIMS as i64))?;
    }
    Ok(())
}

/// Search settings of an MCTS player that differ from [`MctsConfig::default`] (`None`:
/// the default). Part of the player's name, so two settings are two players.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchOptions {
    /// `cpuct=C`: the PUCT exploration constant.
    pub cpuct: Option<f32>,
    /// `fpu=R`: first-play urgency reduction below the parent's value.
    pub fpu: Option<f32>,
    /// `gumbel=on|off`: Gumbel root (sequential halving) instead of PUCT at the root.
    pub gumbel: Option<bool>,
    /// `topk=K`: root moves considered by the Gumbel root.
    pub top_k: Option<u32>,
    /// `leaves=N`: leaves per evaluator call.
    pub leaves: Option<u32>,
}

impl SearchOptions {
    /// The options a spec gives.
    pub fn of(spec: &PlayerSpec) -> SearchOptions {
        SearchOptions {
            cpuct: spec.real("cpuct").map(|x| x as f32),
            fpu: spec.real("fpu").map(|x| x as f32),
            gumbel: spec.switch("gumbel"),
            top_k: spec.int("topk").map(|k| k as u32),
            leaves: spec.int("leaves").map(|n| n as u32),
        }
    }

    /// The search configs of a player, fixed-simulation and timed searches: the defaults
    /// of [`MctsConfig`], for a model player (`model_player`) with the Gumbel root on at
    /// fixed simulations and [`TIMED_MODEL_LEAVES`] leaves a call against the clock; then
    /// these options (an explicit `gumbel=` or `leaves=` sets both).
    pub fn mcts_configs(&self, model_player: bool) -> MctsConfigs {
        let timed = MctsConfig {
            leaves_per_batch: if model_player {
                TIMED_MODEL_LEAVES
            } else {
                MctsConfig::default().leaves_per_batch
            },
            ..MctsConfig::default()
        };
        MctsConfigs {
            fixed: self.mcts_config(model_player),
            timed: self.applied_to(timed),
        }
    }

    /// One search config: the defaults of [`MctsConfig`] with the Gumbel root on when
    /// `gumbel_by_default`, then these options.
    pub fn mcts_config(&self, gumbel_by_default: bool) -> MctsConfig {
        self.applied_to(MctsConfig {
            gumbel: gumbel_by_default,
            ..MctsConfig::default()
        })
    }

    /// `c` with these options set.
    fn applied_to(&self, mut c: MctsConfig) -> MctsConfig {
        if let Some(x) = self.cpuct {
            c.cpuct = x;
        }
        if let Some(x) = self.fpu {
            c.fpu_reduction = x;
        }
        if let Some(x) = self.gumbel {
            c.gumbel = x;
        }
        if let Some(x) = self.top_k {
            c.gumbel_top_k = x;
        }
        if let Some(x) = self.leaves {
            c.leaves_per_batch = x;
        }
        c
    }
}

/// Leaves per evaluator call of a model player's search against the clock (`ms=T`), where
/// [`MctsConfig`]'s 8 leave the network's batches small: with 16 a timed search makes
/// more nodes a second and played stronger at equal time (`docs/experiments.md`, batch
/// 26). Fixed-simulation searches (the ratings, the anchors, self-play) keep 8, so the
/// ratings stay as measured.
pub const TIMED_MODEL_LEAVES: u32 = 16;

/// The built-in evaluator called `name` (`heuristic` or `uniform`).
pub fn builtin_evaluator(name: &str) -> Result<Arc<dyn Evaluator>> {
    let kind: BuiltinEvaluator = name.parse().map_err(anyhow::Error::msg)?;
    Ok(kind.evaluator())
}

/// The search settings of an MCTS player: one for searches of a fixed number of
/// simulations, one for searches against the clock (`ms=T`, the engine's time controls).
/// They differ for model players, whose Gumbel root wins at fixed simulations and loses
/// at equal time (see [`super`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MctsConfigs {
    /// Searches of `sims` simulations.
    pub fixed: MctsConfig,
    /// Searches until a deadline.
    pub timed: MctsConfig,
}

/// An MCTS player for `spec` (its `sims` and `ms`) with `evaluator` and the search settings
/// `configs` (players use no root noise and play the most-visited move), searching on
/// `threads` threads. Without `ms` it runs `sims` simulations per move; with `ms` it
/// searches for `ms` milliseconds per move (the clock starts when the move is asked for),
/// stopping early at `sims` simulations if given.
pub fn build(
    spec: &PlayerSpec,
    evaluator: Arc<dyn Evaluator>,
    configs: MctsConfigs,
    threads: usize,
    _seed: u64,
) -> Result<Box<dyn Player>> {
    let ms = spec.int("ms").map(|ms| ms as u64);
    let sims = spec.int("sims").map_or(NO_SIM_CAP, |n| n as u32);
    Ok(Box::new(MctsMatchPlayer {
        name: spec.name(),
        sims,
        time: ms.map(Duration::from_millis),
        configs,
        evaluator,
        threads: threads.max(1),
        fixed: None,
        timed: None,
        last_timed: false,
        last_info: None,
    }))
}

/// Holds one [`MctsPlayer`] per kind of search, made on first use (each keeps its own
/// tree between moves).
struct MctsMatchPlayer {
    name: String,
    sims: u32,
    time: Option<Duration>,
    configs: MctsConfigs,
    evaluator: Arc<dyn Evaluator>,
    /// Threads of each search.
    threads: usize,
    fixed: Option<MctsPlayer>,
    timed: Option<MctsPlayer>,
    /// Whether the last search was a timed one.
    last_timed: bool,
    /// The report of the last move.
    last_info: Option<SearchInfo>,
}

impl MctsMatchPlayer {
    fn fixed(&mut self) -> &mut MctsPlayer {
        self.last_timed = false;
        let (config, sims, ev) = (&self.configs.fixed, self.sims, &self.evaluator);
        let threads = self.threads;
        self.fixed
            .get_or_insert_with(|| new_player(config, sims, ev, threads))
    }

    fn timed(&mut self) -> &mut MctsPlayer {
        self.last_timed = true;
        let (config, sims, ev) = (&self.configs.timed, self.sims, &self.evaluator);
        let threads = self.threads;
        self.timed
            .get_or_insert_with(|| new_player(config, sims, ev, threads))
    }

    /// The player of the last search.
    fn last(&self) -> Option<&MctsPlayer> {
        if self.last_timed {
            self.timed.as_ref()
        } else {
            self.fixed.as_ref()
        }
    }
}

/// An [`MctsPlayer`] searching on `threads` threads.
fn new_player(
    config: &MctsConfig,
    sims: u32,
    evaluator: &Arc<dyn Evaluator>,
    threads: usize,
) -> MctsPlayer {
    let mut player = MctsPlayer::new(config.clone(), sims, evaluator.clone());
    player.set_threads(threads);
    player
}

impl MctsMatchPlayer {
    /// The report of the move `mv` just chosen for `game` in `elapsed`: the search's, or,
    /// when the root check settled the move without a search (the search's root is
    /// another position), no nodes and no score.
    fn report(&mut self, game: &Game, mv: Move, elapsed: Duration) {
        let searched = self
            .last()
            .filter(|p| p.search().root_position() == game.position());
        self.last_info = Some(match searched {
            Some(p) => {
                let search = p.search();
                let score = match search.root_proof() {
                    Some(Proof::Win) => Score::Proven(Proven::Win),
                    Some(Proof::Loss) => Score::Proven(Proven::Loss),
                    Some(Proof::Draw) => Score::Proven(Proven::Draw),
                    None => Score::Value(search.root_value()),
                };
                let stats = p.last_stats();
                let pv = search.principal_variation(mv);
                let depth = pv.len() as u32;
                let pv = pv.iter().map(Move::to_string).collect();
                let nodes = u64::from(stats.simulations);
                SearchInfo::new(Some(depth), nodes, elapsed, Some(score), pv)
                    .with_seldepth(stats.max_depth.max(depth))
            }
            None => SearchInfo::new(Some(0), 0, elapsed, None, vec![mv.to_string()]),
        });
    }

    fn choose(&mut self, game: &Game) -> Result<Move> {
        match self.time {
            Some(t) => {
                let cap = self.sims;
                Ok(self
                    .timed()
                    .choose_move_until(game, Instant::now() + t, cap)?)
            }
            None => Ok(self.fixed().choose_move(game)?),
        }
    }
}

impl Player for MctsMatchPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        let started = Instant::now();
        let mv = self.choose(game)?;
        self.report(game, mv, started.elapsed());
        Ok(mv)
    }
    fn choose_move_within(&mut self, game: &Game, budget: Duration) -> Result<Move> {
        let started = Instant::now();
        let cap = if self.time.is_some() {
            self.sims
        } else {
            NO_SIM_CAP
        };
        let mv = self
            .timed()
            .choose_move_until(game, started + budget, cap)?;
        self.report(game, mv, started.elapsed());
        Ok(mv)
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn last_info(&self) -> Option<SearchInfo> {
        self.last_info.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_evaluators_parse_and_print() {
        for e in BuiltinEvaluator::ALL {
            assert_eq!(e.to_string().parse::<BuiltinEvaluator>(), Ok(e));
            assert!(BUILTIN_EVALUATORS.contains(&e.name()));
            assert_eq!(
                e.evaluator().name(),
                builtin_evaluator(e.name()).unwrap().name()
            );
        }
        assert_eq!("Uniform".parse(), Ok(BuiltinEvaluator::Uniform));
        let e = "oracle".parse::<BuiltinEvaluator>().unwrap_err();
        assert!(e.contains("'oracle'") && e.contains("heuristic"), "{e}");
    }
}
