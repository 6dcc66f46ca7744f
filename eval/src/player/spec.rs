//! Player specs: `KIND[:key=value,...]` text ⇄ [`PlayerSpec`] (grammar in [`super`]).

use super::mcts::MctsConfigs;
use super::{DEFAULT_SIMS, DEFAULT_UBFM_NODES, NO_NODE_CAP, NO_SIM_CAP};
use crate::config::AlphaBetaConfig;
use crate::search::SearchLimits;
use anyhow::{anyhow, bail, Context, Result};
use selfplay::MctsConfig;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

    /// The search configs of a player, fixed-simulation and timed searches: the defaults
    /// of [`MctsConfig`] with the Gumbel root on for a model player's fixed-simulation
    /// searches (`model_player`), then these options (an explicit `gumbel=` sets both).
    pub fn mcts_configs(&self, model_player: bool) -> MctsConfigs {
        MctsConfigs {
            fixed: self.mcts_config(model_player),
            timed: self.mcts_config(false),
        }
    }

    /// One search config: the defaults of [`MctsConfig`] with the Gumbel root on when
    /// `gumbel_by_default`, then these options.
    pub fn mcts_config(&self, gumbel_by_default: bool) -> MctsConfig {
        let mut c = MctsConfig {
            gumbel: gumbel_by_default,
            ..MctsConfig::default()
        };
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

/// Largest transposition table a spec may ask for (`tt=`, MiB): 64 GiB.
pub const MAX_TT_MIB: usize = 1 << 16;

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
        /// Where and in what precision its network runs.
        net: NetOptions,
        /// Thinking time per move in milliseconds (searches by time when set).
        ms: Option<u64>,
        /// Search settings.
        search: SearchOptions,
    },
    /// Unbounded best-first minimax with completion ([`selfplay::Ubfm`]).
    Ubfm {
        /// Its value function.
        values: UbfmValues,
        /// Iterations per move (each expands one state); with `ms`, the cap
        /// ([`NO_NODE_CAP`]: none).
        nodes: u32,
        /// Thinking time per move in milliseconds (searches by time when set).
        ms: Option<u64>,
        /// `completion=on|off` (default on; off is the papers' plain UBFM).
        completion: bool,
    },
}

/// The value function of a `ubfm` player.
#[derive(Clone, Debug, PartialEq)]
pub enum UbfmValues {
    /// A built-in evaluator: `heuristic` or `uniform` (`evaluator=`).
    Builtin(String),
    /// A trained network's value head (`path=`, with `device=` and `precision=`).
    Network {
        /// The model file.
        path: PathBuf,
        /// Where and in what precision it runs.
        net: NetOptions,
    },
}

/// Where and in what precision a `model` player's network runs: its spec's `device=` and
/// `precision=`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NetOptions {
    /// `cpu`, `cuda` or `cuda:N` (lower case). Default `cpu`.
    pub device: String,
    /// `auto`, `float`, `half` or `bfloat16`; `None` (the default): the command's own
    /// inference setting.
    pub precision: Option<String>,
}

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            device: "cpu".into(),
            precision: None,
        }
    }
}

impl NetOptions {
    /// On `device`, in the command's precision.
    pub fn on(device: &str) -> NetOptions {
        NetOptions {
            device: device.to_ascii_lowercase(),
            precision: None,
        }
    }
}

/// The precision names a `model` spec accepts (the binary maps them onto its inference
/// settings).
const PRECISIONS: [&str; 4] = ["auto", "float", "half", "bfloat16"];

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
                        "tt" => {
                            let mib: usize = number(spec, k, v)?;
                            if !(1..=MAX_TT_MIB).contains(&mib) {
                                bail!("player spec '{spec}': tt must be 1..={MAX_TT_MIB} (MiB)");
                            }
                            config.tt_mib = mib;
                        }
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
                for (name, w) in weight_overrides {
                    config
                        .weights
                        .set(&name, w as f32)
                        .map_err(|e| anyhow!("player spec '{spec}': {e}"))?;
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
                let mut net = NetOptions::default();
                let mut search = SearchOptions::default();
                for (k, v) in &pairs {
                    if search.parse(spec, k, v)? {
                        continue;
                    }
                    match k.as_str() {
                        "path" => path = Some(PathBuf::from(v)),
                        "sims" => sims = Some(positive(spec, k, v)?),
                        "ms" => ms = Some(milliseconds(spec, k, v)?),
                        "device" => net.device = v.to_ascii_lowercase(),
                        "precision" => net.precision = Some(precision(spec, v)?),
                        _ => {
                            return Err(unknown(
                                k,
                                "path, sims, ms, device, precision, cpuct, fpu, gumbel, topk",
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
                    net,
                    ms,
                    search,
                })
            }
            "ubfm" => {
                let mut evaluator = None;
                let mut path = None;
                let mut nodes = None;
                let mut ms = None;
                let mut net = NetOptions::default();
                let mut net_given = false;
                let mut completion = true;
                for (k, v) in &pairs {
                    match k.as_str() {
                        "evaluator" | "eval" => {
                            let e = v.to_ascii_lowercase();
                            if e != "heuristic" && e != "uniform" {
                                bail!("player spec '{spec}': evaluator must be heuristic or uniform");
                            }
                            evaluator = Some(e);
                        }
                        "path" => path = Some(PathBuf::from(v)),
                        "nodes" => nodes = Some(positive(spec, k, v)?),
                        "ms" => ms = Some(milliseconds(spec, k, v)?),
                        "device" => {
                            net.device = v.to_ascii_lowercase();
                            net_given = true;
                        }
                        "precision" => {
                            net.precision = Some(precision(spec, v)?);
                            net_given = true;
                        }
                        "completion" => completion = on_off(spec, k, v)?,
                        _ => {
                            return Err(unknown(
                                k,
                                "evaluator, path, nodes, ms, device, precision, completion",
                            ))
                        }
                    }
                }
                let values = match (evaluator, path) {
                    (Some(_), Some(_)) => bail!(
                        "player spec '{spec}': ubfm takes either evaluator= or path=, not both"
                    ),
                    (_, Some(path)) => UbfmValues::Network { path, net },
                    (evaluator, None) => {
                        if net_given {
                            bail!(
                                "player spec '{spec}': device= and precision= need a network (path=FILE)"
                            );
                        }
                        UbfmValues::Builtin(evaluator.unwrap_or_else(|| "heuristic".into()))
                    }
                };
                let nodes = match (nodes, ms) {
                    (Some(n), _) => n,
                    (None, Some(_)) => NO_NODE_CAP,
                    (None, None) => DEFAULT_UBFM_NODES,
                };
                Ok(PlayerSpec::Ubfm {
                    values,
                    nodes,
                    ms,
                    completion,
                })
            }
            "" => bail!("empty player spec"),
            other => bail!(
                "player spec '{spec}': unknown player kind '{other}' (expected random, alphabeta, mcts, model or ubfm)"
            ),
        }
    }

    /// The canonical name of the player (used in results and ratings).
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// The trained network the player loads, if any (`model` players and `ubfm` players
    /// with `path=`), with where and how it runs.
    pub fn network(&self) -> Option<(&Path, &NetOptions)> {
        match self {
            PlayerSpec::Model { path, net, .. }
            | PlayerSpec::Ubfm {
                values: UbfmValues::Network { path, net },
                ..
            } => Some((path, net)),
            _ => None,
        }
    }
}

/// Whether a command-line argument may name a player that loads a network, so that the
/// command needs torch: it mentions `model` (every `model:` spec) or `path=` (only the
/// kinds that load a network take it: `model`, `ubfm`). Errs towards yes: a false yes
/// costs the torch binary's start, a false no an error.
pub fn mentions_network(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    lower.contains("model") || lower.contains("path=")
}

/// A `precision=` value, checked against [`PRECISIONS`].
fn precision(spec: &str, value: &str) -> Result<String> {
    let p = value.to_ascii_lowercase();
    if !PRECISIONS.contains(&p.as_str()) {
        bail!(
            "player spec '{spec}': precision '{value}': expected one of {}",
            PRECISIONS.join(", ")
        );
    }
    Ok(p)
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
                net,
                ms,
                search,
            } => {
                write!(
                    f,
                    "model:path={}{}{search}",
                    path.display(),
                    mcts_limits(*sims, *ms)
                )?;
                if net.device != "cpu" {
                    write!(f, ",device={}", net.device)?;
                }
                if let Some(p) = &net.precision {
                    write!(f, ",precision={p}")?;
                }
                Ok(())
            }
            PlayerSpec::Ubfm {
                values,
                nodes,
                ms,
                completion,
            } => {
                match values {
                    UbfmValues::Builtin(e) => write!(f, "ubfm:evaluator={e}")?,
                    UbfmValues::Network { path, .. } => write!(f, "ubfm:path={}", path.display())?,
                }
                if !(ms.is_some() && *nodes == NO_NODE_CAP) {
                    write!(f, ",nodes={nodes}")?;
                }
                if let Some(ms) = ms {
                    write!(f, ",ms={ms}")?;
                }
                if let UbfmValues::Network { net, .. } = values {
                    if net.device != "cpu" {
                        write!(f, ",device={}", net.device)?;
                    }
                    if let Some(p) = &net.precision {
                        write!(f, ",precision={p}")?;
                    }
                }
                if !completion {
                    write!(f, ",completion=off")?;
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
