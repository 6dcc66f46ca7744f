//! Tunables of the crate: [`MctsConfig`] (one search), [`DescentConfig`] (Descent
//! self-play) and [`SelfplayConfig`] (self-play runs, containing both). All are serde
//! structs with documented defaults; unknown keys are errors.

use crate::Error;
use loa::{Rules, Variant};
use serde::{Deserialize, Serialize};

/// Search parameters. Defaults are listed on each field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MctsConfig {
    /// PUCT exploration constant `c` in `Q + c·P·√N/(1+n)`. Default 1.5.
    pub cpuct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus
    /// `fpu_reduction · √(prior mass of visited children)`. Default 0.25.
    pub fpu_reduction: f32,
    /// The same at the root. Default 0.0 (with root noise, unvisited root moves should
    /// stay attractive).
    pub fpu_reduction_root: f32,
    /// Dirichlet noise concentration α at the root (self-play only). Default 0.3
    /// (about 10 / the typical number of legal moves).
    pub dirichlet_alpha: f32,
    /// Weight ε of the Dirichlet noise mixed into the root priors (self-play only); 0
    /// disables it. Default 0.25.
    pub dirichlet_epsilon: f32,
    /// Temperature of the move choice (visits^(1/T)) during the first
    /// `temperature_plies` plies of a self-play game. Default 1.0.
    pub temperature: f32,
    /// Plies played with `temperature`. Default 16.
    pub temperature_plies: u32,
    /// Temperature after `temperature_plies`; 0 plays the most visited move. Default 0.
    pub temperature_end: f32,
    /// Playout-cap randomisation: probability that a self-play move gets a full search
    /// (its visit distribution becomes a policy target). Default 0.25; 1 disables the
    /// randomisation.
    pub full_search_probability: f32,
    /// Simulations of a cheap (non-full) search. Default 16.
    pub cheap_simulations: u32,
    /// Virtual loss per in-flight simulation through an edge, in value units
    /// (an in-flight visit counts as a result of `-virtual_loss`). Default 1.0.
    pub virtual_loss: f32,
    /// Most leaves one search submits per evaluator call (several simulations with virtual
    /// loss). Default 8.
    pub leaves_per_batch: u32,
    /// MCTS-Solver: propagate proven wins/losses/draws; a proven-won move is played at
    /// once and proven-lost moves are avoided. Default true.
    pub solver: bool,
    /// Gumbel root (sequential halving over the top-k moves by prior + Gumbel noise)
    /// instead of PUCT + Dirichlet at the root. Default false for players (`mcts:`,
    /// `model:`); true in [`SelfplayConfig`]'s default (measured stronger for training,
    /// docs/experiments.md).
    pub gumbel: bool,
    /// Number of root moves considered by the Gumbel root. Default 16.
    pub gumbel_top_k: u32,
    /// σ(q) = (gumbel_c_visit + max visits) · gumbel_c_scale · q. Default 50.
    pub gumbel_c_visit: f32,
    /// See `gumbel_c_visit`. Default 1.0.
    pub gumbel_c_scale: f32,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            cpuct: 1.5,
            fpu_reduction: 0.25,
            fpu_reduction_root: 0.0,
            dirichlet_alpha: 0.3,
            dirichlet_epsilon: 0.25,
            temperature: 1.0,
            temperature_plies: 16,
            temperature_end: 0.0,
            full_search_probability: 0.25,
            cheap_simulations: 16,
            virtual_loss: 1.0,
            leaves_per_batch: 8,
            solver: true,
            gumbel: false,
            gumbel_top_k: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
        }
    }
}

impl MctsConfig {
    /// Checks ranges; the error names the offending key.
    pub fn validate(&self) -> Result<(), Error> {
        self.check().map_err(Error::Config)
    }

    fn check(&self) -> Result<(), String> {
        let finite_nonneg = [
            ("cpuct", self.cpuct),
            ("fpu_reduction", self.fpu_reduction),
            ("fpu_reduction_root", self.fpu_reduction_root),
            ("temperature", self.temperature),
            ("temperature_end", self.temperature_end),
            ("virtual_loss", self.virtual_loss),
            ("gumbel_c_visit", self.gumbel_c_visit),
            ("gumbel_c_scale", self.gumbel_c_scale),
        ];
        for (key, v) in finite_nonneg {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("mcts.{key} = {v}: must be a finite number ≥ 0"));
            }
        }
        if !(self.dirichlet_alpha.is_finite() && self.dirichlet_alpha > 0.0) {
            return Err(format!(
                "mcts.dirichlet_alpha = {}: must be > 0",
                self.dirichlet_alpha
            ));
        }
        for (key, v) in [
            ("dirichlet_epsilon", self.dirichlet_epsilon),
            ("full_search_probability", self.full_search_probability),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("mcts.{key} = {v}: must lie in [0, 1]"));
            }
        }
        if self.leaves_per_batch == 0 || self.leaves_per_batch > 1024 {
            return Err(format!(
                "mcts.leaves_per_batch = {}: must lie in 1..=1024",
                self.leaves_per_batch
            ));
        }
        if self.cheap_simulations == 0 {
            return Err("mcts.cheap_simulations must be ≥ 1".into());
        }
        if self.gumbel_top_k < 1 {
            return Err("mcts.gumbel_top_k must be ≥ 1".into());
        }
        Ok(())
    }
}

/// How Descent self-play explores: which move is played after a move's search
/// ([`DescentConfig::exploration`]; see `selfplay::descent`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Exploration {
    /// ε-greedy: with probability ε a move drawn uniformly from those not proven lost,
    /// else the best.
    #[default]
    Epsilon,
    /// Ordinal: the moves not proven lost ranked by completed value, best first; the
    /// move of rank `r` (0 = the best) of `n` is played with probability `(1 − ε)·ε^r`,
    /// the last one with `ε^(n−1)`: only the order of the values counts, not their
    /// size, and near-best moves are tried far more often than poor ones.
    Ordinal,
}

/// Descent self-play (`selfplay::descent`; chosen by the run's `run.algorithm`).
/// Defaults are listed on each field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DescentConfig {
    /// Descent iterations per move (each follows the best line down to a finished game
    /// or a proven state, expanding every state on its way). Default 8.
    pub iterations: u32,
    /// ε-greedy exploration: with this probability the move played is drawn uniformly
    /// from the moves not proven lost, instead of the best move by completed value (no
    /// exploration where a move is a proven win); with `exploration = ordinal`, the
    /// ε of that distribution. Default 0.1.
    pub epsilon: f32,
    /// The exploration rule: [`Exploration::Epsilon`] or [`Exploration::Ordinal`].
    /// Default epsilon.
    pub exploration: Exploration,
    /// Most milliseconds the search of one move may take, besides `iterations` (the
    /// first limit reached ends it; the time is checked between iterations, so at least
    /// one runs); 0 = no time limit. The games then depend on the machine's speed, so a
    /// deterministic run refuses it. Default 0.
    pub ms: u32,
    /// Games each worker advances in lockstep; every step sends one expansion's
    /// children (about 30 positions) per game to the evaluator in one call. Default 8.
    pub games_per_worker: usize,
    /// Most entries of one game's table (about 70 bytes each); past half of it the
    /// table is harvested (tree learning) and cleared before the next move. Default
    /// 131072.
    pub max_entries: usize,
    /// Tree learning: every state the search valued goes into the shards with its
    /// backed-up minimax value (false: only the played positions). Default true.
    pub tree_learning: bool,
}

impl Default for DescentConfig {
    fn default() -> Self {
        DescentConfig {
            iterations: 8,
            epsilon: 0.1,
            exploration: Exploration::Epsilon,
            ms: 0,
            games_per_worker: 8,
            max_entries: 1 << 17,
            tree_learning: true,
        }
    }
}

impl DescentConfig {
    fn check(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("selfplay.descent.iterations must be ≥ 1".into());
        }
        if !(0.0..=1.0).contains(&self.epsilon) {
            return Err(format!(
                "selfplay.descent.epsilon = {}: must lie in [0, 1]",
                self.epsilon
            ));
        }
        if self.games_per_worker == 0 {
            return Err("selfplay.descent.games_per_worker must be ≥ 1".into());
        }
        if self.max_entries < 1024 {
            return Err(format!(
                "selfplay.descent.max_entries = {}: must be ≥ 1024",
                self.max_entries
            ));
        }
        Ok(())
    }
}

/// Everything a self-play run needs besides the evaluator. Defaults are listed on each
/// field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Search parameters.
    pub mcts: MctsConfig,
    /// Simulations of a full search. Default 64.
    pub simulations: u32,
    /// The variant; in TOML its name (`standard`, `scrambled-eggs`, `6x6`, `parachute`,
    /// `gemma`, `ambiloa`, `alveole`). Default `standard`.
    #[serde(with = "variant_text")]
    pub variant: Variant,
    /// The rules; in TOML a spec that `loa::Rules::parse` reads (`classic`, `icga`,
    /// `classic,ply-limit=200`, …). Default `classic`.
    #[serde(with = "rules_text")]
    pub rules: Rules,
    /// Games each worker advances in lockstep (its leaves share evaluator calls).
    /// Default 32.
    pub games_per_worker: usize,
    /// Worker threads; 0 = one per core. Default 0.
    pub threads: usize,
    /// A side resigns when the searched root value (and the best move's value) is below
    /// this; ≤ −1 disables resignation. Default −0.95.
    pub resign_threshold: f32,
    /// Fraction of games in which resignation is disabled, to count false resignations.
    /// Default 0.1.
    pub resign_disabled_fraction: f32,
    /// No resignation before this ply. Default 20.
    pub resign_min_ply: u32,
    /// A game still running after this many plies is adjudicated a draw (a safety net
    /// on top of the rules' own ply limit). Default 300.
    pub max_game_plies: u32,
    /// Samples per shard file. Default 4096.
    pub shard_samples: usize,
    /// Write each game's move list as text beside the shards. Default true.
    pub write_game_records: bool,
    /// Also write each game as SGF beside its text record (with `write_game_records`).
    /// Default false.
    pub write_sgf: bool,
    /// Random seed; `None` seeds from the OS. Default none.
    pub seed: Option<u64>,
    /// Descent self-play settings (used when the run's algorithm is Descent).
    pub descent: DescentConfig,
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            mcts: MctsConfig {
                gumbel: true,
                ..MctsConfig::default()
            },
            simulations: 64,
            variant: Variant::Standard,
            rules: Rules::classic(),
            games_per_worker: 32,
            threads: 0,
            resign_threshold: -0.95,
            resign_disabled_fraction: 0.1,
            resign_min_ply: 20,
            max_game_plies: 300,
            shard_samples: 4096,
            write_game_records: true,
            write_sgf: false,
            seed: None,
            descent: DescentConfig::default(),
        }
    }
}

impl SelfplayConfig {
    /// Reads a TOML config: either a whole run config, whose `[selfplay]` table is used
    /// (other tables belong to other crates), or a bare self-play config. Unknown keys
    /// and invalid values are errors naming the key.
    pub fn from_toml(text: &str) -> Result<SelfplayConfig, Error> {
        let value: toml::Table = toml::from_str(text).map_err(|e| Error::Config(e.to_string()))?;
        let table = match value.get("selfplay") {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(_) => return Err(Error::Config("`selfplay` must be a table".into())),
            None => value,
        };
        let config: SelfplayConfig = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| Error::Config(format!("[selfplay] {}", e.message())))?;
        config.validate()?;
        Ok(config)
    }

    /// [`SelfplayConfig::from_toml`] of the file at `path` (`loazero selfplay --config`,
    /// `loazero bench mcts --config`); an error names the file.
    pub fn from_file(path: &std::path::Path) -> Result<SelfplayConfig, Error> {
        let text = std::fs::read_to_string(path).map_err(|cause| Error::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        SelfplayConfig::from_toml(&text)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))
    }

    /// Checks every field; the error names the offending key.
    pub fn validate(&self) -> Result<(), Error> {
        self.check().map_err(Error::Config)
    }

    fn check(&self) -> Result<(), String> {
        self.mcts.check()?;
        self.descent.check()?;
        if self.simulations == 0 {
            return Err("selfplay.simulations must be ≥ 1".into());
        }
        if self.games_per_worker == 0 {
            return Err("selfplay.games_per_worker must be ≥ 1".into());
        }
        if !(0.0..=1.0).contains(&self.resign_disabled_fraction) {
            return Err(format!(
                "selfplay.resign_disabled_fraction = {}: must lie in [0, 1]",
                self.resign_disabled_fraction
            ));
        }
        if !self.resign_threshold.is_finite() {
            return Err("selfplay.resign_threshold must be finite".into());
        }
        if self.shard_samples == 0 {
            return Err("selfplay.shard_samples must be ≥ 1".into());
        }
        if self.max_game_plies == 0 {
            return Err("selfplay.max_game_plies must be ≥ 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_configs_parse_with_defaults_and_reject_unknown_keys() {
        let c = SelfplayConfig::from_toml("simulations = 50\n[mcts]\ncpuct = 2.0\n").unwrap();
        assert_eq!(c.simulations, 50);
        assert_eq!(c.mcts.cpuct, 2.0);
        assert_eq!(c.mcts.fpu_reduction, MctsConfig::default().fpu_reduction);
        let c =
            SelfplayConfig::from_toml("[train]\nlr = 1\n[selfplay]\nvariant = \"6x6\"\n").unwrap();
        assert_eq!(c.variant, Variant::Six);
        let e = SelfplayConfig::from_toml("[mcts]\ncpcut = 2.0\n").unwrap_err();
        assert!(e.to_string().contains("cpcut"), "{e}");
        let e = SelfplayConfig::from_toml("variant = \"chess\"").unwrap_err();
        assert!(e.to_string().contains("variant"), "{e}");
        let e = SelfplayConfig::from_toml("[mcts]\nleaves_per_batch = 0").unwrap_err();
        assert!(e.to_string().contains("leaves_per_batch"), "{e}");
        assert_eq!(
            SelfplayConfig::from_toml("").unwrap(),
            SelfplayConfig::default()
        );
    }

    #[test]
    fn variant_and_rules_round_trip_through_toml() {
        let c = SelfplayConfig {
            variant: Variant::Alveole,
            rules: Rules::parse("icga,ply-limit=200").unwrap(),
            ..SelfplayConfig::default()
        };
        let text = toml::to_string(&c).unwrap();
        assert_eq!(SelfplayConfig::from_toml(&text).unwrap(), c);
        let text = toml::to_string(&SelfplayConfig::default()).unwrap();
        assert!(text.contains("rules = \"classic\""), "{text}");
        assert!(text.contains("variant = \"standard\""), "{text}");
        let e = SelfplayConfig::from_toml("rules = \"fide\"").unwrap_err();
        assert!(e.to_string().contains("selfplay.rules"), "{e}");
    }
}

/// `SelfplayConfig::variant` in TOML: the variant's name.
mod variant_text {
    use loa::Variant;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Variant, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|e| serde::de::Error::custom(format!("selfplay.variant: {e}")))
    }
}

/// `SelfplayConfig::rules` in TOML: a preset's name when the rules are a preset, else the
/// canonical spec of `Display`; both read back by `Rules::parse`.
mod rules_text {
    use loa::Rules;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(r: &Rules, s: S) -> Result<S::Ok, S::Error> {
        if *r == Rules::classic() {
            s.serialize_str("classic")
        } else if *r == Rules::icga() {
            s.serialize_str("icga")
        } else {
            s.serialize_str(&r.to_string())
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Rules, D::Error> {
        let text = String::deserialize(d)?;
        Rules::parse(&text).map_err(|e| serde::de::Error::custom(format!("selfplay.rules: {e}")))
    }
}
