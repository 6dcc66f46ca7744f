//! Players behind one interface, described by text specs and built by a [`PlayerFactory`].
//!
//! Spec grammar: `KIND[:key=value[,key=value]...]`:
//! * `random[:seed=S]` — a uniformly random legal move.
//! * `alphabeta:depth=D` / `alphabeta:ms=T` / `alphabeta:nodes=N` (limits combine; with
//!   none, depth 4; late move reductions default on without a depth limit, off with
//!   one), plus `tt=MiB`, `lmr=on|off`, `leafwin=on|off`, `threat=on|off`,
//!   `aspiration=N`, `weights=FILE.json`
//!   (an [`EvalWeights`] object) and single weights as `w.NAME=VALUE`
//!   (e.g. `w.mobility=0`).
//! * `mcts:evaluator=heuristic|uniform[,sims=N][,ms=T]` — the selfplay crate's MCTS.
//! * `model:path=P[,sims=N][,ms=T][,device=cpu|cuda]` — MCTS with a trained network; the
//!   binary supplies the network loader ([`PlayerFactory::with_model_loader`]) so this crate
//!   stays free of torch.
//! * Both MCTS kinds take search options ([`SearchOptions`]) over the defaults of
//!   [`MctsConfig`]: `cpuct=C`, `fpu=R` (first-play urgency reduction), `gumbel=on|off`
//!   (Gumbel root with sequential halving, no noise), `topk=K` (its root moves).
//!
//! MCTS players (`mcts`, `model`) search `sims` simulations per move (default 800); with
//! `ms=T` they search for T milliseconds per move instead, and `sims`, if given, caps the
//! simulations ([`NO_SIM_CAP`] when not).
//!
//! Time controls ([`Player::choose_move_within`], used by the engine protocol's `go
//! movetime` and `time`): the budget replaces the spec's `ms`. A spec with `ms` keeps its
//! other limits (`depth`, `nodes`, `sims`) as caps; a spec without `ms` (a fixed depth,
//! node or simulation count) searches by the budget alone.

use crate::config::{AlphaBetaConfig, EvalWeights};
use crate::search::{AlphaBeta, SearchLimits, SearchResult};
use anyhow::{anyhow, bail, Context, Result};
use loa::{Game, Move};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use selfplay::{Evaluator, MctsConfig};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The `sims` of an MCTS spec with `ms` and no `sims`: no simulation cap.
pub const NO_SIM_CAP: u32 = u32::MAX;

/// Simulations per move of an MCTS spec with neither `sims` nor `ms`.
pub const DEFAULT_SIMS: u32 = 800;

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
}

impl SearchOptions {
    /// Takes `key=value` if it is a search option; `Ok(false)` if the key is another one.
    fn parse(&mut self, spec: &str, key: &str, value: &str) -> Result<bool> {
        match key {
            "cpuct" => self.cpuct = Some(non_negative(spec, key, value)?),
            "fpu" => self.fpu = Some(non_negative(spec, key, value)?),
            "gumbel" => self.gumbel = Some(on_off(spec, key, value)?),
            "topk" => self.top_k = Some(positive(spec, key, value)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The search config of a player: the defaults with these options.
    pub fn mcts_config(&self) -> MctsConfig {
        let mut c = MctsConfig::default();
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
        c
    }
}

impl fmt::Display for SearchOptions {
    /// `,key=value` for each option set, in a fixed order (empty when none is).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(x) = self.cpuct {
            write!(f, ",cpuct={x}")?;
        }
        if let Some(x) = self.fpu {
            write!(f, ",fpu={x}")?;
        }
        if let Some(x) = self.gumbel {
            write!(f, ",gumbel={}", if x { "on" } else { "off" })?;
        }
        if let Some(x) = self.top_k {
            write!(f, ",topk={x}")?;
        }
        Ok(())
    }
}

fn non_negative(spec: &str, key: &str, value: &str) -> Result<f32> {
    let x: f32 = number(spec, key, value)?;
    if !(x.is_finite() && x >= 0.0) {
        bail!("player spec '{spec}': {key} must be a finite number ≥ 0");
    }
    Ok(x)
}

/// A parsed player spec (see the module docs for the grammar).
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    /// Uniformly random legal moves.
    Random {
        /// Fixed seed (otherwise from the factory's seed).
        seed: Option<u64>,
    },
    /// The alpha-beta baseline.
    AlphaBeta {
        /// Search limits per move.
        limits: SearchLimits,
        /// Search options and weights.
        config: AlphaBetaConfig,
        /// The spec text it was parsed from (its name).
        text: String,
    },
    /// MCTS with a built-in evaluator.
    Mcts {
        /// `heuristic` or `uniform`.
        evaluator: String,
        /// Simulations per move; with `ms`, the cap ([`NO_SIM_CAP`]: none).
        sims: u32,
        /// Thinking time per move in milliseconds (searches by time when set).
        ms: Option<u64>,
        /// Search settings.
        search: SearchOptions,
    },
    /// MCTS with a trained network.
    Model {
        /// The model file.
        path: PathBuf,
        /// Simulations per move; with `ms`, the cap ([`NO_SIM_CAP`]: none).
        sims: u32,
        /// `cpu` or `cuda`.
        device: String,
        /// Thinking time per move in milliseconds (searches by time when set).
        ms: Option<u64>,
        /// Search settings.
        search: SearchOptions,
    },
}

fn split_spec(text: &str) -> (String, Vec<(String, String)>, Vec<String>) {
    let text = text.trim();
    let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
    let mut pairs = Vec::new();
    let mut bare = Vec::new();
    for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('=') {
            Some((k, v)) => pairs.push((k.trim().to_ascii_lowercase(), v.trim().to_string())),
            None => bare.push(part.to_string()),
        }
    }
    (kind.trim().to_ascii_lowercase(), pairs, bare)
}

fn number<T: std::str::FromStr>(spec: &str, key: &str, value: &str) -> Result<T> {
    value
        .parse()
        .map_err(|_| anyhow!("player spec '{spec}': {key}={value} is not a valid number"))
}

fn on_off(spec: &str, key: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => bail!("player spec '{spec}': {key}={value} should be on or off"),
    }
}

impl PlayerSpec {
    /// Parses a spec; errors name the spec and the offending part.
    pub fn parse(text: &str) -> Result<PlayerSpec> {
        let spec = text.trim();
        let (kind, pairs, bare) = split_spec(spec);
        if let Some(b) = bare.first() {
            bail!("player spec '{spec}': '{b}' should be key=value");
        }
        let unknown = |k: &str, allowed: &str| {
            anyhow!("player spec '{spec}': unknown key '{k}' for {kind} (allowed: {allowed})")
        };
        match kind.as_str() {
            "random" => {
                let mut seed = None;
                for (k, v) in &pairs {
                    match k.as_str() {
                        "seed" => seed = Some(number(spec, k, v)?),
                        _ => return Err(unknown(k, "seed")),
                    }
                }
                Ok(PlayerSpec::Random { seed })
            }
            "alphabeta" | "ab" => {
                let mut limits = SearchLimits::default();
                let mut config = AlphaBetaConfig::default();
                let mut weight_overrides = Vec::new();
                let mut lmr_given = false;
                for (k, v) in &pairs {
                    match k.as_str() {
                        "depth" => {
                            let d: u32 = number(spec, k, v)?;
                            if d == 0 || d > 60 {
                                bail!("player spec '{spec}': depth must be 1..=60");
                            }
                            limits.depth = Some(d);
                        }
                        "ms" => {
                            let ms: u64 = number(spec, k, v)?;
                            if ms == 0 {
                                bail!("player spec '{spec}': ms must be positive");
                            }
                            limits.time = Some(Duration::from_millis(ms));
                        }
                        "nodes" => {
                            let n: u64 = number(spec, k, v)?;
                            if n == 0 {
                                bail!("player spec '{spec}': nodes must be positive");
                            }
                            limits.nodes = Some(n);
                        }
                        "tt" => config.tt_mib = number(spec, k, v)?,
                        "aspiration" => config.aspiration = number(spec, k, v)?,
                        "lmr" => {
                            config.late_move_reductions = on_off(spec, k, v)?;
                            lmr_given = true;
                        }
                        "leafwin" => config.leaf_win_check = on_off(spec, k, v)?,
                        "threat" => config.threat_extension = on_off(spec, k, v)?,
                        "weights" => {
                            let text = std::fs::read_to_string(v).with_context(|| {
                                format!("player spec '{spec}': cannot read weights file {v}")
                            })?;
                            config.weights = serde_json::from_str(&text).with_context(|| {
                                format!("player spec '{spec}': bad weights file {v}")
                            })?;
                        }
                        w if w.starts_with("w.") => {
                            let value: f64 = number(spec, k, v)?;
                            weight_overrides.push((w[2..].to_string(), value));
                        }
                        _ => {
                            return Err(unknown(
                                k,
                                "depth, ms, nodes, tt, lmr, leafwin, threat, aspiration, weights, w.NAME",
                            ))
                        }
                    }
                }
                if !weight_overrides.is_empty() {
                    let mut value = serde_json::to_value(&config.weights)?;
                    for (name, w) in weight_overrides {
                        let obj = value.as_object_mut().expect("weights are an object");
                        if !obj.contains_key(&name) {
                            bail!(
                                "player spec '{spec}': unknown weight '{name}' (known: {})",
                                obj.keys().cloned().collect::<Vec<_>>().join(", ")
                            );
                        }
                        obj.insert(name, serde_json::json!(w));
                    }
                    config.weights = serde_json::from_value::<EvalWeights>(value)?;
                }
                if limits == SearchLimits::default() {
                    limits.depth = Some(4);
                }
                // Reductions cost strength at a fixed depth but pay at a fixed time or node
                // budget (ms=50: +76 Elo [-10, +173] over 60 games).
                if !lmr_given && limits.depth.is_none() {
                    config.late_move_reductions = true;
                }
                Ok(PlayerSpec::AlphaBeta {
                    limits,
                    config,
                    text: canonical(spec),
                })
            }
            "mcts" => {
                let mut evaluator = "heuristic".to_string();
                let mut sims = None;
                let mut ms = None;
                let mut search = SearchOptions::default();
                for (k, v) in &pairs {
                    if search.parse(spec, k, v)? {
                        continue;
                    }
                    match k.as_str() {
                        "evaluator" | "eval" => {
                            evaluator = v.to_ascii_lowercase();
                            if evaluator != "heuristic" && evaluator != "uniform" {
                                bail!("player spec '{spec}': evaluator must be heuristic or uniform");
                            }
                        }
                        "sims" => sims = Some(positive(spec, k, v)?),
                        "ms" => ms = Some(milliseconds(spec, k, v)?),
                        _ => {
                            return Err(unknown(k, "evaluator, sims, ms, cpuct, fpu, gumbel, topk"))
                        }
                    }
                }
                let sims = mcts_sims(sims, ms);
                Ok(PlayerSpec::Mcts {
                    evaluator,
                    sims,
                    ms,
                    search,
                })
            }
            "model" => {
                let mut path = None;
                let mut sims = None;
                let mut ms = None;
                let mut device = "cpu".to_string();
                let mut search = SearchOptions::default();
                for (k, v) in &pairs {
                    if search.parse(spec, k, v)? {
                        continue;
                    }
                    match k.as_str() {
                        "path" => path = Some(PathBuf::from(v)),
                        "sims" => sims = Some(positive(spec, k, v)?),
                        "ms" => ms = Some(milliseconds(spec, k, v)?),
                        "device" => device = v.to_ascii_lowercase(),
                        _ => {
                            return Err(unknown(
                                k,
                                "path, sims, ms, device, cpuct, fpu, gumbel, topk",
                            ))
                        }
                    }
                }
                let path =
                    path.ok_or_else(|| anyhow!("player spec '{spec}': model needs path=FILE"))?;
                let sims = mcts_sims(sims, ms);
                Ok(PlayerSpec::Model {
                    path,
                    sims,
                    device,
                    ms,
                    search,
                })
            }
            "" => bail!("empty player spec"),
            other => bail!(
                "player spec '{spec}': unknown player kind '{other}' (expected random, alphabeta, mcts or model)"
            ),
        }
    }

    /// The canonical name of the player (used in results and ratings).
    pub fn name(&self) -> String {
        self.to_string()
    }
}

/// The `sims` field of an MCTS spec from its `sims` and `ms` keys.
fn mcts_sims(sims: Option<u32>, ms: Option<u64>) -> u32 {
    match (sims, ms) {
        (Some(n), _) => n,
        (None, Some(_)) => NO_SIM_CAP,
        (None, None) => DEFAULT_SIMS,
    }
}

fn milliseconds(spec: &str, key: &str, value: &str) -> Result<u64> {
    let ms: u64 = number(spec, key, value)?;
    if ms == 0 {
        bail!("player spec '{spec}': {key} must be positive");
    }
    Ok(ms)
}

/// `,sims=N` and `,ms=T` as the spec shows them (`sims` omitted when it is no cap).
fn mcts_limits(sims: u32, ms: Option<u64>) -> String {
    let mut s = String::new();
    if !(ms.is_some() && sims == NO_SIM_CAP) {
        s += &format!(",sims={sims}");
    }
    if let Some(ms) = ms {
        s += &format!(",ms={ms}");
    }
    s
}

fn positive(spec: &str, key: &str, value: &str) -> Result<u32> {
    let n: u32 = number(spec, key, value)?;
    if n == 0 {
        bail!("player spec '{spec}': {key} must be positive");
    }
    Ok(n)
}

/// Lower-cases the kind and trims spaces around parts: `AlphaBeta: depth=4` → `alphabeta:depth=4`.
fn canonical(spec: &str) -> String {
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let parts: Vec<String> = rest
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => format!("{}={}", k.trim().to_ascii_lowercase(), v.trim()),
            None => p.to_string(),
        })
        .collect();
    let kind = match kind.trim().to_ascii_lowercase().as_str() {
        "ab" => "alphabeta".to_string(),
        k => k.to_string(),
    };
    if parts.is_empty() {
        kind
    } else {
        format!("{kind}:{}", parts.join(","))
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random { seed: None } => write!(f, "random"),
            PlayerSpec::Random { seed: Some(s) } => write!(f, "random:seed={s}"),
            PlayerSpec::AlphaBeta { text, .. } => write!(f, "{text}"),
            PlayerSpec::Mcts {
                evaluator,
                sims,
                ms,
                search,
            } => {
                write!(
                    f,
                    "mcts:evaluator={evaluator}{}{search}",
                    mcts_limits(*sims, *ms)
                )
            }
            PlayerSpec::Model {
                path,
                sims,
                device,
                ms,
                search,
            } => {
                write!(
                    f,
                    "model:path={}{}{search}",
                    path.display(),
                    mcts_limits(*sims, *ms)
                )?;
                if device != "cpu" {
                    write!(f, ",device={device}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::str::FromStr for PlayerSpec {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        PlayerSpec::parse(s)
    }
}

/// Loads a trained network as an evaluator: `(model path, device)`. Supplied by the binary
/// (which links torch); must be callable from any thread.
pub type ModelLoader = Arc<dyn Fn(&Path, &str) -> Result<Arc<dyn Evaluator>> + Send + Sync>;

/// Builds players from specs. Thread-safe (`Sync`): arena threads share one factory, and
/// model evaluators are loaded once per (path, device) and shared by every player using them.
#[derive(Default)]
pub struct PlayerFactory {
    model_loader: Option<ModelLoader>,
    models: Mutex<HashMap<(PathBuf, String), Arc<dyn Evaluator>>>,
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
                let ev = crate::mcts::builtin_evaluator(evaluator)?;
                crate::mcts::build(spec.name(), ev, search.mcts_config(), *sims, *ms, seed)
            }
            PlayerSpec::Model {
                path,
                sims,
                device,
                ms,
                search,
            } => {
                let loader = self.model_loader.as_ref().ok_or_else(|| {
                    anyhow!(
                        "player '{spec}': model players need the network loader, which this \
                         build of loazero does not provide yet"
                    )
                })?;
                let key = (path.clone(), device.clone());
                let ev = {
                    let mut models = self.models.lock().expect("model cache lock");
                    match models.get(&key) {
                        Some(ev) => ev.clone(),
                        None => {
                            let ev = loader(path, device)
                                .with_context(|| format!("player '{spec}': cannot load model"))?;
                            models.insert(key, ev.clone());
                            ev
                        }
                    }
                };
                crate::mcts::build(spec.name(), ev, search.mcts_config(), *sims, *ms, seed)
            }
        }
    }
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
        Ok(moves[self.rng.gen_range(0..moves.len())])
    }
    fn name(&self) -> String {
        "random".into()
    }
}

/// The alpha-beta baseline as a player.
pub struct AlphaBetaPlayer {
    name: String,
    search: AlphaBeta,
    limits: SearchLimits,
    last: Option<SearchResult>,
}

impl AlphaBetaPlayer {
    /// A player searching within `limits` per move.
    pub fn new(name: String, config: AlphaBetaConfig, limits: SearchLimits) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            name,
            search: AlphaBeta::new(config),
            limits,
            last: None,
        }
    }

    /// The last search's result.
    pub fn last_result(&self) -> Option<&SearchResult> {
        self.last.as_ref()
    }
}

impl Player for AlphaBetaPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        let r = self.search.search_game(game, self.limits)?;
        let mv = r.best_move;
        self.last = Some(r);
        Ok(mv)
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn choose_move_within(&mut self, game: &Game, budget: Duration) -> Result<Move> {
        let limits = if self.limits.time.is_some() {
            SearchLimits {
                time: Some(budget),
                ..self.limits
            }
        } else {
            SearchLimits {
                time: Some(budget),
                ..SearchLimits::default()
            }
        };
        let r = self.search.search_game(game, limits)?;
        let mv = r.best_move;
        self.last = Some(r);
        Ok(mv)
    }
    fn last_info(&self) -> Option<String> {
        self.last.as_ref().map(|r| {
            format!(
                "depth {} score {} nodes {} time {} ms nps {:.0} pv {}",
                r.depth,
                crate::search::score_text(r.score),
                r.nodes,
                r.elapsed.as_millis(),
                r.nodes as f64 / r.elapsed.as_secs_f64().max(1e-6),
                r.pv()
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print() {
        assert_eq!(PlayerSpec::parse("random").unwrap().name(), "random");
        let s = PlayerSpec::parse("AlphaBeta: depth=3, w.mobility=0").unwrap();
        assert_eq!(s.name(), "alphabeta:depth=3,w.mobility=0");
        match s {
            PlayerSpec::AlphaBeta { limits, config, .. } => {
                assert_eq!(limits.depth, Some(3));
                assert_eq!(config.weights.mobility, 0.0);
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
        let c = search.mcts_config();
        assert!(c.gumbel && c.cpuct == 2.5);
        assert_eq!(c.fpu_reduction, MctsConfig::default().fpu_reduction);
        let plain = PlayerSpec::parse("mcts:evaluator=uniform,sims=8,fpu=0,topk=4").unwrap();
        assert_eq!(plain.name(), "mcts:evaluator=uniform,sims=8,fpu=0,topk=4");
        // Such a player plays.
        let mut p = PlayerFactory::new().build(&plain, 1).unwrap();
        let game = Game::new(loa::Variant::Standard, loa::Rules::classic());
        let mv = p.choose_move(&game).unwrap();
        assert!(game.legal_moves().contains(&mv));
        let gumbel = PlayerSpec::parse("mcts:evaluator=uniform,sims=16,gumbel=on").unwrap();
        let mv = PlayerFactory::new().build(&gumbel, 1).unwrap().choose_move(&game).unwrap();
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
        ] {
            let e = PlayerSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
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
