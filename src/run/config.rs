//! [`RunConfig`]: the configuration of `loazero run`, one table per crate plus the loop's
//! own `[run]` and `[rating]` tables.
//!
//! A config file lists only what it changes: it is merged over the embedded default
//! (`configs/default.toml`, which documents every key), then `--set key=value`
//! overrides are applied. Unknown keys are errors naming the key (and the line, for
//! files). The merged config is what a run uses and saves in its directory.

use super::algorithm::Algorithm;
use super::net_schedule::{self, NetChange, NetGrowth};
use anyhow::{anyhow, bail, Context, Result};
use eval::GateConfig;
use selfplay::SelfplayConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;
use train::TrainConfig;

/// The embedded default config (`configs/default.toml`).
pub const DEFAULT_TOML: &str = include_str!("../../configs/default.toml");

/// The embedded `configs/<variant>.toml` of `variant` (its tuned settings, merged over the
/// default like any config file); the default itself for `standard`.
pub fn variant_toml(variant: loa::Variant) -> &'static str {
    use loa::Variant;
    match variant {
        Variant::Standard => DEFAULT_TOML,
        Variant::ScrambledEggs => include_str!("../../configs/scrambled-eggs.toml"),
        Variant::Six => include_str!("../../configs/6x6.toml"),
        Variant::Parachute => include_str!("../../configs/parachute.toml"),
        Variant::Gemma => include_str!("../../configs/gemma.toml"),
        Variant::Ambiloa => include_str!("../../configs/ambiloa.toml"),
        Variant::Alveole => include_str!("../../configs/alveole.toml"),
    }
}

/// The loop's own settings (`[run]`). Defaults: those of `configs/default.toml` (a test
/// checks that the two agree).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoopConfig {
    /// Total training time of the run in minutes, across restarts (0 = no limit). No
    /// generation is started that would not end in time; the last best model is rated
    /// at the end. A phase still running when the time is used up stops within about a
    /// second (`super::driver`).
    pub minutes: f64,
    /// Stop after this generation (0 = no limit). Counted across restarts.
    pub generations: u32,
    /// Self-play algorithm: `alphazero` (MCTS, `[selfplay.mcts]`) or `descent`
    /// (minimax down to the end of the game with tree learning, `[selfplay.descent]`).
    pub algorithm: Algorithm,
    /// Self-play games per generation. The loop plays them itself, less those its
    /// background self-play (`background_selfplay_threads`) finished since the previous
    /// generation's self-play; external `selfplay --dir` processes add on top.
    pub games_per_generation: u64,
    /// Training steps per generation.
    pub train_steps_per_generation: u64,
    /// Trainer checkpoint interval in steps (and at the end of every training phase).
    pub checkpoint_every: u64,
    /// Continuous self-play: keep every worker's batch full until the generation's games
    /// are done and carry the games still in flight into the next generation (they switch
    /// to the new best model at a move boundary; see `selfplay::Schedule::Continuous`).
    /// false: lockstep generations whose last games run out alone. AlphaZero only:
    /// Descent self-play is always lockstep.
    pub continuous_selfplay: bool,
    /// Self-play worker threads that play all the time in the background of the loop, as
    /// a joined `selfplay --dir` process would (`ext-…` shards with the newest promoted
    /// model, switching between rounds), while the loop trains, gates and rates. Their
    /// games count toward `games_per_generation`: the loop plays only what they have not
    /// played since its previous self-play phase, so when they keep up, self-play and
    /// training run side by side and neither waits for the other. Their games and
    /// positions are `background_games` and `background_positions` in each generation
    /// record. 0 = off. A `deterministic` run plays none (their games depend on timing).
    pub background_selfplay_threads: usize,
    /// Gate candidates against the best model (false: every candidate is promoted).
    pub gate: bool,
    /// Simulations per move of both models in gate games.
    pub gate_simulations: u32,
    /// Plies of the random balanced openings of gate games.
    pub gate_opening_plies: u32,
    /// Parallel games in gate and rating matches (0 = one per core).
    pub match_threads: usize,
    /// Score every candidate's policy on the shipped held-out move-matching set of the
    /// variant (`train::heldout`; a few milliseconds), into `metrics.jsonl` and the plots.
    pub heldout: bool,
    /// Seed of the run (gate and rating openings; self-play seeds derive from it and the
    /// generation).
    pub seed: u64,
    /// Reproducible runs (CPU): the same config and seed give the same self-play games,
    /// shards and trained weights, bit for bit, across runs and across a kill -9 and resume
    /// (docs/training.md, "Reproducibility"). Self-play is lockstep (`continuous_selfplay`
    /// is ignored) with per-game seeds, one evaluator call at a time and games written in a
    /// fixed order under fixed names; an interrupted generation's self-play is replayed
    /// from its first game; the evaluation cache is off; the replay window orders shards by
    /// name; matches are played on one thread. Default false.
    pub deterministic: bool,
    /// A run kept in a store (`--store`): shards played with a model more than this many
    /// generations older than the newest published one are dropped and counted, by the
    /// worker that played them (a worker that was cut off from the store) and by the
    /// trainer that would add them.
    pub max_shard_staleness: u64,
    /// The network grows as the run goes on ([`super::net_schedule`]): each stage, once
    /// the run has produced its `after_positions` self-play positions, grows the trainer's
    /// network into its `net` ([`train::grow`]; keys it leaves out keep the network's
    /// values), which then trains on. Empty: `train.net` throughout. Default: two more
    /// blocks after 850 000 positions, where the 4×32 network's curve has flattened.
    pub net_schedule: Vec<NetGrowth>,
}

/// `rating.anchors`: player specs, each parsed once here; an error names the key.
fn anchor_specs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<eval::PlayerSpec>, D::Error> {
    let texts = Vec::<String>::deserialize(d)?;
    texts
        .iter()
        .map(|t| {
            eval::PlayerSpec::parse(t)
                .map_err(|e| serde::de::Error::custom(format!("rating.anchors: {e:#}")))
        })
        .collect()
}

/// Rating against fixed anchors (`[rating]`). Defaults: those of `configs/default.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RatingConfig {
    /// Rate the best model every this many generations (0 = only generation 0 and the
    /// end of the run).
    pub every: u32,
    /// The anchors: player specs that never change (`random`, `alphabeta:depth=D`, …),
    /// parsed when the config loads (errors name `rating.anchors`). The first one is fixed
    /// at Elo 0 when it is `random`.
    #[serde(deserialize_with = "anchor_specs")]
    pub anchors: Vec<eval::PlayerSpec>,
    /// Games of a rated model against each anchor.
    pub games: usize,
    /// Games between each pair of neighbouring anchors (played once per run).
    pub anchor_games: usize,
    /// Simulations per move of rated models.
    pub simulations: u32,
    /// Plies of the random balanced openings.
    pub opening_plies: u32,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            minutes: 30.0,
            generations: 0,
            algorithm: Algorithm::Alphazero,
            games_per_generation: 128,
            train_steps_per_generation: 200,
            checkpoint_every: 100,
            continuous_selfplay: true,
            background_selfplay_threads: 0,
            gate: false,
            gate_simulations: 48,
            gate_opening_plies: 4,
            match_threads: 0,
            heldout: true,
            seed: 1,
            deterministic: false,
            max_shard_staleness: 4,
            net_schedule: vec![NetGrowth {
                after_positions: 850_000,
                net: NetChange {
                    blocks: Some(6),
                    ..NetChange::default()
                },
            }],
        }
    }
}

impl Default for RatingConfig {
    fn default() -> Self {
        RatingConfig {
            every: 8,
            anchors: [
                "random",
                "mcts:evaluator=uniform,sims=64",
                "alphabeta:depth=1",
                "alphabeta:depth=2",
                "alphabeta:depth=3",
                "alphabeta:depth=4",
            ]
            .map(|a| eval::PlayerSpec::parse(a).expect("a built-in anchor spec parses"))
            .to_vec(),
            games: 20,
            anchor_games: 20,
            simulations: 64,
            opening_plies: 4,
        }
    }
}

/// The learned alpha-beta evaluation the run trains at the end of its time budget
/// (`[learned_eval]`, [`super::learned_stage`]). Defaults: those of `configs/default.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LearnedEvalConfig {
    /// Fraction of `run.minutes` kept for the stage at the end of the run (0 = no stage).
    /// A run without a time limit plays `generations` learned generations after its last
    /// generation.
    pub share: f64,
    /// Most learned generations per stage.
    pub generations: u32,
    /// Alpha-beta self-play games of one learned generation (played with the best
    /// learned evaluation so far, the hand-written one for the first): fewer when the
    /// stage's time runs short.
    pub games: usize,
    /// A learned generation with fewer games finished in time is not trained.
    pub min_games: usize,
    /// Depth of those games' searches, whose scores are the labels.
    pub depth: u32,
    /// Weight λ of the searched value in the labels `λ·search + (1 − λ)·result` (of the
    /// alpha-beta games' scores and of the shards' MCTS values).
    pub search_weight: f32,
    /// Weight τ of the run's best MCTS network's value (its value head, the teacher) in the
    /// labels of the alpha-beta games' positions: `(1 − τ)·label + τ·value`.
    pub teacher_weight: f32,
    /// The newest self-play positions (the run's shards, valued by the MCTS teacher) added
    /// to the games of a learned generation trained from random weights; later ones learn
    /// from their own games alone; 0 = none.
    pub shard_positions: usize,
    /// Training passes over a generation's positions (`epochs` before the rename: an
    /// epoch is a store trainer's fencing token here).
    pub passes: usize,
    /// Games of the promotion match (at `depth`) of a learned generation against the best
    /// one before it (the first: against the hand-written evaluation); promoted when it
    /// scores more than half.
    pub promotion_games: usize,
    /// Depth of the learned alpha-beta rated against `rating.anchors`.
    pub rating_depth: u32,
}

impl Default for LearnedEvalConfig {
    fn default() -> Self {
        LearnedEvalConfig {
            share: 0.2,
            generations: 4,
            games: 8000,
            min_games: 1000,
            depth: 3,
            search_weight: 0.75,
            teacher_weight: 0.0,
            shard_positions: 2_000_000,
            passes: 20,
            promotion_games: 200,
            rating_depth: 3,
        }
    }
}

/// Everything `loazero run` is configured with. Every table and key is optional in a file
/// and takes the documented default (`configs/default.toml`, which equals the Rust
/// defaults of each crate's config struct: one default per setting).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// The loop.
    pub run: LoopConfig,
    /// Self-play (the selfplay crate's config).
    pub selfplay: SelfplayConfig,
    /// Network, training and inference (the train crate's config).
    pub train: TrainConfig,
    /// The gate's decision rule (the eval crate's config).
    pub gate: GateConfig,
    /// Rating against anchors.
    pub rating: RatingConfig,
    /// The learned alpha-beta evaluation trained at the end of the run.
    pub learned_eval: LearnedEvalConfig,
}

/// What a derived seed is for (each use gets its own stream).
#[derive(Clone, Copy, Debug)]
pub enum SeedUse {
    /// Openings of an anchor-against-anchor match.
    AnchorMatch = 1,
    /// Openings of a rating match.
    RatingMatch = 2,
    /// Self-play of a generation (resumed self-play passes the games already played).
    Selfplay = 3,
    /// Openings of a gate match.
    GateMatch = 4,
    /// Alpha-beta self-play of a learned generation.
    LearnedGames = 5,
    /// Openings of a learned generation's promotion match.
    LearnedPromotion = 6,
    /// Openings of a learned evaluation's rating match.
    LearnedRating = 7,
}

/// A seed for use `what`, generation `generation`, item `k`, derived from `base`
/// (splitmix-style mixing): every match and self-play round of a run gets its own.
pub fn derive_seed(base: u64, what: SeedUse, generation: u32, k: u64) -> u64 {
    let mut x = base ^ (what as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ ((generation as u64) << 20) ^ k;
    x ^ (x >> 29)
}

/// Recursively merges `over` into `base` (tables merge, other values replace).
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Keys renamed since configs were first written: (old dotted key, new dotted key), each
/// pair in one table. A file (a run directory's `config.toml` included) or a `--set`
/// that uses an old key is read as if it used the new one.
const RENAMED_KEYS: &[(&str, &str)] = &[
    ("train.net.input_features", "train.net.plane_set"),
    ("learned_eval.epochs", "learned_eval.passes"),
];

/// Moves the old keys of [`RENAMED_KEYS`] in `table` to their new names; an error names
/// both when a table gives both.
fn rename_old_keys(table: &mut toml::Table) -> std::result::Result<(), String> {
    for (old, new) in RENAMED_KEYS {
        let (parent, old_leaf) = old.rsplit_once('.').unwrap_or(("", old));
        let new_leaf = new.rsplit_once('.').map_or(*new, |(_, leaf)| leaf);
        let Some(t) = table_at(table, parent) else {
            continue;
        };
        if let Some(value) = t.remove(old_leaf) {
            if t.contains_key(new_leaf) {
                return Err(format!(
                    "`{old}` is the old name of `{new}`: give only `{new}`"
                ));
            }
            t.insert(new_leaf.to_string(), value);
        }
    }
    Ok(())
}

/// The table at the dotted `path` in `table` (`table` itself for ""), if there is one.
fn table_at<'a>(table: &'a mut toml::Table, path: &str) -> Option<&'a mut toml::Table> {
    let mut t = table;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        t = t.get_mut(part)?.as_table_mut()?;
    }
    Some(t)
}

/// One `--set key=value` as a table holding only that key: `key = value` read as TOML
/// (dotted keys make the nested tables), the value read as a string when it is not a
/// TOML value (`selfplay.variant=6x6`).
fn set_table(set: &str) -> Result<toml::Table> {
    let (key, value) = set
        .split_once('=')
        .ok_or_else(|| anyhow!("--set {set}: expected key=value, e.g. selfplay.simulations=100"))?;
    let (key, value) = (key.trim(), value.trim());
    if key.is_empty() || key.split('.').any(|p| p.trim().is_empty()) {
        bail!("--set {set}: bad key `{key}`");
    }
    toml::from_str::<toml::Table>(&format!("{key} = {value}"))
        .or_else(|_| {
            let quoted = toml::Value::String(value.to_string()).to_string();
            toml::from_str::<toml::Table>(&format!("{key} = {quoted}"))
        })
        .map_err(|e| anyhow!("--set {set}: bad key `{key}`: {}", e.message()))
}

/// Checks that `table` uses only known keys with values of the right type, by reading it
/// over the embedded default.
fn check_partial(table: &toml::Table) -> std::result::Result<(), String> {
    let mut base: toml::Table = toml::from_str(DEFAULT_TOML).map_err(|e| e.to_string())?;
    merge(&mut base, table.clone());
    toml::Value::Table(base)
        .try_into::<RunConfig>()
        .map(|_| ())
        .map_err(|e| e.message().to_string())
}

impl RunConfig {
    /// Reads a config file merged over the embedded default, then applies `sets`
    /// (`key=value`). Errors name the file (and line) or the `--set`.
    pub fn load(path: Option<&Path>, sets: &[String]) -> Result<RunConfig> {
        match path {
            None => RunConfig::from_toml_str(DEFAULT_TOML, "configs/default.toml", sets),
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read config {}", p.display()))?;
                RunConfig::from_toml_str(&text, &p.display().to_string(), sets)
            }
        }
    }

    /// [`RunConfig::load`] from text; `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str, sets: &[String]) -> Result<RunConfig> {
        let mut file: toml::Table = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
        rename_old_keys(&mut file).map_err(|e| anyhow!("{origin}: {e}"))?;
        // Unknown keys and wrong types, reported against the file's own text (with the
        // line) rather than the merged table.
        if let Err(e) = check_partial(&file) {
            // Every key is optional, so reading the file alone locates the bad key.
            let located = toml::from_str::<RunConfig>(text).err();
            match located {
                Some(l) => bail!("{origin}: {l}"),
                None => bail!("{origin}: {e}"),
            }
        }
        let mut merged: toml::Table =
            toml::from_str(DEFAULT_TOML).map_err(|e| anyhow!("embedded default: {e}"))?;
        merge(&mut merged, file);
        for set in sets {
            let mut t = set_table(set)?;
            rename_old_keys(&mut t).map_err(|e| anyhow!("--set {set}: {e}"))?;
            check_partial(&t).map_err(|e| anyhow!("--set {set}: {e}"))?;
            merge(&mut merged, t);
        }
        let config: RunConfig = toml::Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| anyhow!("{origin}: {}", e.message()))?;
        config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
        Ok(config)
    }

    /// The config as TOML (every key), as saved in a run directory.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a config always serialises")
    }

    /// The background self-play threads the loop starts: `run.background_selfplay_threads`,
    /// or none in a deterministic run.
    pub fn background_selfplay_threads(&self) -> usize {
        if self.run.deterministic {
            0
        } else {
            self.run.background_selfplay_threads
        }
    }

    /// Resolves torch's automatic thread counts for a run on `cores` cores: with
    /// background self-play on and `train.threads` at 0 (auto), the loop's training and
    /// every evaluator (`train.inference.threads` at 0 too) get the cores the background's
    /// workers leave, at least one, so that training does not fight them for cores. torch's
    /// setting is process-wide, so the background's evaluator gets the same count. Without
    /// background self-play, or with the counts set, nothing changes. For the running
    /// loop only: the saved config keeps 0 (auto).
    pub fn resolve_auto_threads(&mut self, cores: usize) {
        let background = self.background_selfplay_threads();
        if background == 0 || self.train.threads > 0 {
            return;
        }
        let rest = cores.saturating_sub(background).max(1);
        self.train.threads = rest;
        if self.train.inference.threads == 0 {
            self.train.inference.threads = rest;
        }
    }

    /// A deterministic run (`run.deterministic`) fixes the torch thread counts left at 0
    /// (auto) to `torch_default`, torch's own count: auto counts follow the machine's
    /// load (`train::auto_threads`), and a count that changes changes the kernels'
    /// rounding. Otherwise nothing changes. For the running loop only, like
    /// [`RunConfig::resolve_auto_threads`].
    pub fn fix_threads_if_deterministic(&mut self, torch_default: usize) {
        if !self.run.deterministic {
            return;
        }
        let fixed = torch_default.max(1);
        if self.train.threads == 0 {
            self.train.threads = fixed;
        }
        if self.train.inference.threads == 0 {
            self.train.inference.threads = self.train.threads;
        }
    }

    /// Checks every value; the message names the key.
    pub fn validate(&self) -> std::result::Result<(), String> {
        // The message alone: the caller names the file.
        self.selfplay.validate().map_err(|e| match e {
            selfplay::Error::Config(message) => message,
            e => e.to_string(),
        })?;
        self.train.validate().map_err(|e| format!("train: {e}"))?;
        let r = &self.run;
        if !(r.minutes.is_finite() && r.minutes >= 0.0) {
            return Err(format!("run.minutes = {}: must be ≥ 0", r.minutes));
        }
        if r.games_per_generation == 0 {
            return Err("run.games_per_generation must be ≥ 1".into());
        }
        if r.train_steps_per_generation == 0 {
            return Err("run.train_steps_per_generation must be ≥ 1".into());
        }
        if r.checkpoint_every == 0 {
            return Err("run.checkpoint_every must be ≥ 1".into());
        }
        if r.gate_simulations == 0 {
            return Err("run.gate_simulations must be ≥ 1".into());
        }
        if r.deterministic && r.algorithm == Algorithm::Descent && self.selfplay.descent.ms > 0 {
            return Err(format!(
                "selfplay.descent.ms = {}: a time limit makes the games depend on the \
                 machine's speed, which run.deterministic rules out (use 0)",
                self.selfplay.descent.ms
            ));
        }
        net_schedule::validate(&self.train.net, &r.net_schedule)?;
        let g = &self.gate;
        if g.max_games == 0 {
            return Err("gate.max_games must be ≥ 1".into());
        }
        if !(0.0..=1.0).contains(&g.threshold) {
            return Err(format!(
                "gate.threshold = {}: must lie in [0, 1]",
                g.threshold
            ));
        }
        if !(g.alpha > 0.0 && g.alpha < 1.0 && g.beta > 0.0 && g.beta < 1.0) {
            return Err("gate.alpha and gate.beta must lie in (0, 1)".into());
        }
        let q = &self.rating;
        if q.anchors.is_empty() {
            return Err("rating.anchors: at least one anchor is needed".into());
        }
        for a in &q.anchors {
            if a.network().is_some() || a.file("eval").is_some() {
                return Err(format!(
                    "rating.anchors: `{a}`: anchors must not change, so no players with a \
                     network (model:, ubfm:path=) or a learned evaluation (eval=)"
                ));
            }
        }
        if q.games == 0 {
            return Err("rating.games must be ≥ 1".into());
        }
        if q.simulations == 0 {
            return Err("rating.simulations must be ≥ 1".into());
        }
        let l = &self.learned_eval;
        if !(0.0..0.9).contains(&l.share) {
            return Err(format!(
                "learned_eval.share = {}: must lie in [0, 0.9)",
                l.share
            ));
        }
        for (key, w) in [
            ("search_weight", l.search_weight),
            ("teacher_weight", l.teacher_weight),
        ] {
            if !(0.0..=1.0).contains(&w) {
                return Err(format!("learned_eval.{key} = {w}: must lie in [0, 1]"));
            }
        }
        for (key, value) in [
            ("generations", l.generations as usize),
            ("games", l.games),
            ("min_games", l.min_games),
            ("depth", l.depth as usize),
            ("passes", l.passes),
            ("promotion_games", l.promotion_games),
            ("rating_depth", l.rating_depth as usize),
        ] {
            if value == 0 {
                return Err(format!("learned_eval.{key} must be ≥ 1"));
            }
        }
        if l.min_games > l.games {
            return Err(format!(
                "learned_eval.min_games = {} is more than learned_eval.games = {}",
                l.min_games, l.games
            ));
        }
        Ok(())
    }

    /// The variant of the run.
    pub fn variant(&self) -> loa::Variant {
        self.selfplay.variant
    }

    /// The rules of the run.
    pub fn rules(&self) -> loa::Rules {
        self.selfplay.rules
    }
}

#[cfg(test)]
mod tests {
    use super::RunConfig;

    /// `(train.threads, train.inference.threads)` after [`RunConfig::resolve_auto_threads`]
    /// on `cores` cores, from auto inference threads and the given settings.
    fn resolved(
        background: usize,
        deterministic: bool,
        train: usize,
        cores: usize,
    ) -> (usize, usize) {
        let mut c = RunConfig::default();
        c.run.background_selfplay_threads = background;
        c.run.deterministic = deterministic;
        c.train.threads = train;
        c.train.inference.threads = 0;
        c.resolve_auto_threads(cores);
        (c.train.threads, c.train.inference.threads)
    }

    #[test]
    fn a_deterministic_run_fixes_auto_torch_threads() {
        let mut c = RunConfig::default();
        c.fix_threads_if_deterministic(2);
        assert_eq!((c.train.threads, c.train.inference.threads), (0, 0));
        c.run.deterministic = true;
        c.fix_threads_if_deterministic(2);
        assert_eq!((c.train.threads, c.train.inference.threads), (2, 2));
        let mut c = RunConfig::default();
        c.run.deterministic = true;
        c.train.threads = 1;
        c.fix_threads_if_deterministic(4);
        assert_eq!((c.train.threads, c.train.inference.threads), (1, 1));
        c.train.inference.threads = 3;
        c.fix_threads_if_deterministic(4);
        assert_eq!((c.train.threads, c.train.inference.threads), (1, 3));
    }

    #[test]
    fn background_selfplay_leaves_the_other_cores_to_auto_torch_threads() {
        assert_eq!(resolved(0, false, 0, 8), (0, 0), "off: unchanged");
        assert_eq!(resolved(3, false, 0, 8), (5, 5));
        assert_eq!(resolved(2, false, 0, 2), (1, 1), "at least one");
        assert_eq!(resolved(1, true, 0, 2), (0, 0), "deterministic: off");
        assert_eq!(resolved(1, false, 4, 2), (4, 0), "set: kept");
        let mut c = RunConfig::default();
        c.run.background_selfplay_threads = 1;
        c.run.deterministic = true;
        assert_eq!(c.background_selfplay_threads(), 0);
    }

    #[test]
    fn every_variant_has_an_embedded_config_of_its_own_variant() {
        for v in loa::Variant::ALL {
            let c = RunConfig::from_toml_str(variant_toml(v), v.name(), &[]).unwrap();
            assert_eq!(c.variant(), v);
        }
    }

    use super::*;

    /// Every leaf of a TOML table in order: its key path (`a.b.c`) and value.
    fn leaves(t: &toml::Table, prefix: &str, out: &mut Vec<(String, toml::Value)>) {
        for (k, v) in t {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(inner) => leaves(inner, &path, out),
                _ => out.push((path, v.clone())),
            }
        }
    }

    /// Every key path of a TOML table (`a.b.c`).
    fn keys(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
        let mut all = vec![];
        leaves(t, prefix, &mut all);
        out.extend(all.into_iter().map(|(k, _)| k));
    }

    /// Every `key = value` of a TOML table, in order.
    fn keys_values(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
        let mut all = vec![];
        leaves(t, prefix, &mut all);
        out.extend(all.into_iter().map(|(k, v)| format!("{k} = {v}")));
    }

    #[test]
    fn the_rust_defaults_are_the_embedded_default() {
        let from_file: RunConfig = toml::from_str(DEFAULT_TOML).unwrap();
        let rust = RunConfig::default();
        if from_file != rust {
            // Name the keys that differ.
            let (mut a, mut b) = (vec![], vec![]);
            let fa: toml::Table = toml::from_str(&from_file.to_toml()).unwrap();
            let fb: toml::Table = toml::from_str(&rust.to_toml()).unwrap();
            keys_values(&fa, "", &mut a);
            keys_values(&fb, "", &mut b);
            let diff: Vec<String> = a
                .iter()
                .zip(&b)
                .filter(|(x, y)| x != y)
                .map(|(x, y)| format!("default.toml {x} / Rust {y}"))
                .collect();
            panic!("defaults differ:\n{}", diff.join("\n"));
        }
    }

    #[test]
    fn the_embedded_default_documents_every_key() {
        let config = RunConfig::default();
        let full: toml::Table = toml::from_str(&config.to_toml()).unwrap();
        let written: toml::Table = toml::from_str(DEFAULT_TOML).unwrap();
        let (mut all, mut present) = (vec![], vec![]);
        keys(&full, "", &mut all);
        keys(&written, "", &mut present);
        for k in &all {
            assert!(present.contains(k), "configs/default.toml lacks `{k}`");
        }
        // Each key line is preceded by a comment.
        let lines: Vec<&str> = DEFAULT_TOML.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim();
            // Key lines only (not array continuation lines, comments or tables).
            if !t.starts_with(|c: char| c.is_ascii_alphabetic()) {
                continue;
            }
            assert!(
                i > 0 && lines[i - 1].trim().starts_with('#'),
                "configs/default.toml line {}: `{t}` has no comment above it",
                i + 1
            );
        }
    }

    #[test]
    fn files_merge_over_the_default_and_unknown_keys_fail_with_their_line() {
        let c = RunConfig::from_toml_str("[selfplay]\nsimulations = 7\n", "x.toml", &[]).unwrap();
        assert_eq!(c.selfplay.simulations, 7);
        assert_eq!(c.train, RunConfig::default().train);
        let e = RunConfig::from_toml_str("[selfplay]\n\nsimulatoins = 7\n", "x.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.toml") && e.contains("simulatoins") && e.contains("line 3"),
            "{e}"
        );
        let e = RunConfig::from_toml_str("[trian]\nlr = 1\n", "x.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("trian"), "{e}");
        let e = RunConfig::from_toml_str("[run]\ngames_per_generation = \"many\"\n", "x", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
        let e = RunConfig::from_toml_str("[run]\ngames_per_generation = 0\n", "x", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("games_per_generation"), "{e}");
        // A bad device is refused where the file is read, with its line and key.
        let e = RunConfig::from_toml_str("[train.inference]\ndevice = \"tpu\"\n", "x.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.toml")
                && e.contains("line 2")
                && e.contains("device = \"tpu\"")
                && e.contains("expected cpu, cuda or cuda:N"),
            "{e}"
        );
        let c = RunConfig::from_toml_str("[train]\ndevice = \"cuda:1\"\n", "x", &[]).unwrap();
        assert_eq!(c.train.device, selfplay::Device::Cuda(Some(1)));
    }

    #[test]
    fn sets_override_any_key_and_name_bad_ones() {
        let sets = vec![
            "selfplay.mcts.cpuct=2.5".to_string(),
            "train.net.blocks=2".to_string(),
            "rating.anchors=[\"random\"]".to_string(),
            "selfplay.variant=6x6".to_string(),
            "run.gate=false".to_string(),
        ];
        let c = RunConfig::from_toml_str("", "x", &sets).unwrap();
        assert_eq!(c.selfplay.mcts.cpuct, 2.5);
        assert_eq!(c.train.net.blocks, 2);
        assert_eq!(
            c.rating.anchors,
            vec![eval::PlayerSpec::parse("random").unwrap()]
        );
        assert_eq!(c.variant(), loa::Variant::Six);
        assert!(!c.run.gate);
        for (bad, needle) in [
            ("selfplay.mcts.cpcut=1", "cpcut"),
            ("nokey", "key=value"),
            ("run..x=1", "bad key"),
            ("train.lr=\"fast\"", "train.lr"),
            ("rating.anchors=[\"model:path=x\"]", "anchors"),
            (
                "rating.anchors=[\"alphabeta:depth=0\"]",
                "rating.anchors: player 'alphabeta:depth=0'",
            ),
            ("selfplay.variant=chess", "variant"),
            ("train.device=tpu", "--set train.device=tpu: device 'tpu'"),
            (
                "train.inference.device=cuda:x",
                "--set train.inference.device=cuda:x: device 'cuda:x'",
            ),
        ] {
            let e = RunConfig::from_toml_str("", "x", &[bad.to_string()])
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn descent_exploration_parses_and_time_limits_are_refused_in_deterministic_runs() {
        let sets = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let descent = [
            "run.algorithm=descent",
            "selfplay.descent.ms=50",
            "selfplay.descent.exploration=ordinal",
        ];
        let c = RunConfig::from_toml_str("", "x", &sets(&descent)).unwrap();
        assert_eq!(
            c.selfplay.descent.exploration,
            selfplay::Exploration::Ordinal
        );
        assert_eq!(c.selfplay.descent.ms, 50);
        let mut deterministic = descent.to_vec();
        deterministic.push("run.deterministic=true");
        let e = RunConfig::from_toml_str("", "x", &sets(&deterministic))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("selfplay.descent.ms") && e.contains("run.deterministic"),
            "{e}"
        );
        let e = RunConfig::from_toml_str("", "x", &sets(&["selfplay.descent.exploration=greedy"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exploration") || e.contains("greedy"), "{e}");
    }

    #[test]
    fn the_saved_form_reads_back_identically() {
        let c = RunConfig::from_toml_str("", "x", &["train.lr=0.1".into()]).unwrap();
        let back = RunConfig::from_toml_str(&c.to_toml(), "saved", &[]).unwrap();
        assert_eq!(back, c);
    }

    /// A renamed key still reads under its old name, in a file, in a run directory's
    /// saved config.toml and in a `--set`; giving both names is an error naming both.
    #[test]
    fn old_key_names_still_load() {
        let c =
            RunConfig::from_toml_str("[train.net]\ninput_features = \"loa\"\n", "x", &[]).unwrap();
        assert_eq!(c.train.net.plane_set, train::encoding::PlaneSet::Loa);
        let c = RunConfig::from_toml_str("", "x", &["train.net.input_features=loa-nearest".into()])
            .unwrap();
        assert_eq!(c.train.net.plane_set, train::encoding::PlaneSet::LoaNearest);
        // A run directory saved before the rename.
        let saved = RunConfig::from_toml_str("", "x", &["train.net.plane_set=loa".into()]).unwrap();
        let old = saved.to_toml().replace("plane_set = ", "input_features = ");
        assert!(old.contains("input_features = \"loa\""), "{old}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, old).unwrap();
        assert_eq!(RunConfig::load(Some(&path), &[]).unwrap(), saved);
        let e = RunConfig::from_toml_str(
            "[train.net]\ninput_features = \"loa\"\nplane_set = \"board\"\n",
            "x.toml",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("x.toml")
                && e.contains("train.net.input_features")
                && e.contains("train.net.plane_set"),
            "{e}"
        );
    }

    /// `learned_eval.epochs`, the former name of `passes`, is read in a file and a `--set`.
    #[test]
    fn learned_eval_epochs_is_read_as_passes() {
        let c = RunConfig::from_toml_str("[learned_eval]\nepochs = 3\n", "x", &[]).unwrap();
        assert_eq!(c.learned_eval.passes, 3);
        let c = RunConfig::from_toml_str("", "x", &["learned_eval.epochs=5".into()]).unwrap();
        assert_eq!(c.learned_eval.passes, 5);
        assert!(!c.to_toml().contains("epochs"));
    }
    #[test]
    fn every_shipped_config_loads() {
        // Where the test runs, not where it was built (cargo sets it for each test process).
        let dir = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .expect("CARGO_MANIFEST_DIR: run the tests with cargo"),
        )
        .join("configs");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                RunConfig::load(Some(&path), &[]).unwrap_or_else(|e| panic!("{e:#}"));
                n += 1;
            }
        }
        assert!(n >= 5, "{n} configs");
    }
}
