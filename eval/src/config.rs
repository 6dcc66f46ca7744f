//! Tunables of the alpha-beta baseline: search options and evaluation weights.

use serde::{Deserialize, Serialize};

/// The evaluation's features, each computed per side by
/// [`crate::evaluation::side_features`]: the index into [`PerFeature`] (the values of a
/// side, the weights). A feature's [`Feature::name`] is its weight's key in configs, weights
/// files and player specs (`w.NAME`); its default weight is [`Feature::default_weight`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// Concentration: `4 / (1 + s)` where `s` is the average surplus board distance
    /// (Chebyshev; hex distance on the hexagonal board) of a side's pieces to their centre of
    /// mass over the tightest packing of that many pieces (4 when packed). In `parachute`
    /// the pieces the opponent still holds count too, at the farthest empty cell. Default 60.
    Concentration,
    /// Centralisation: average of a piece-square table that rises towards the centre
    /// (0 on the edge, 1 per ring inwards). Default 12.
    Centralisation,
    /// Centre of mass position: minus the board distance of the centre of mass to the
    /// board centre. Default 0.
    ComPosition,
    /// Euler number from quad counts (`(Q1 - Q3 - 2·Qd) / 4`, "groups minus holes" under
    /// 8-connectivity; on the hexagonal board cells − adjacent pairs + triangles); enters
    /// with a minus sign. Default 0.
    Euler,
    /// Solid quads: 2×2 windows holding 3 or 4 own pieces, per piece (on the hexagonal
    /// board: triangles of three mutually adjacent own pieces, per piece). Default 25.
    Quads,
    /// Mobility: weighted move count per piece (capture 2, to an edge cell ½, else 1).
    /// Default 10.
    Mobility,
    /// Blocked pieces: own pieces without any move; enters with a minus sign. Default 6.
    Blocked,
    /// Walls: own edge pieces whose every inward neighbour holds an enemy piece; minus.
    /// Default 8.
    Walls,
    /// Connectedness: own adjacent pairs per piece. Default 0.
    Connectedness,
    /// Groups: number of separate groups; enters with a minus sign (not computed at 0).
    /// Default 0.
    Groups,
    /// Uniformity: minus the area of the bounding box of a side's pieces (on the hexagonal
    /// board the region bounded by lines of all three axes), per board cell ×10 (not
    /// computed at 0). Default 0.
    Uniformity,
}

impl Feature {
    /// Number of features.
    pub const COUNT: usize = 11;

    /// Every feature, in index order.
    pub const ALL: [Feature; Feature::COUNT] = [
        Feature::Concentration,
        Feature::Centralisation,
        Feature::ComPosition,
        Feature::Euler,
        Feature::Quads,
        Feature::Mobility,
        Feature::Blocked,
        Feature::Walls,
        Feature::Connectedness,
        Feature::Groups,
        Feature::Uniformity,
    ];

    /// The weight's key (`concentration`, `com_position`, …).
    pub fn name(self) -> &'static str {
        match self {
            Feature::Concentration => "concentration",
            Feature::Centralisation => "centralisation",
            Feature::ComPosition => "com_position",
            Feature::Euler => "euler",
            Feature::Quads => "quads",
            Feature::Mobility => "mobility",
            Feature::Blocked => "blocked",
            Feature::Walls => "walls",
            Feature::Connectedness => "connectedness",
            Feature::Groups => "groups",
            Feature::Uniformity => "uniformity",
        }
    }

    /// The feature whose key is `name`, if any.
    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The default weight (how the defaults were chosen: [`EvalWeights`]).
    pub fn default_weight(self) -> f32 {
        match self {
            Feature::Concentration => 60.0,
            Feature::Centralisation => 12.0,
            Feature::Quads => 25.0,
            Feature::Mobility => 10.0,
            Feature::Blocked => 6.0,
            Feature::Walls => 8.0,
            Feature::ComPosition
            | Feature::Euler
            | Feature::Connectedness
            | Feature::Groups
            | Feature::Uniformity => 0.0,
        }
    }
}

/// One value per [`Feature`] (a side's feature values, or their weights), indexed by it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PerFeature(pub [f32; Feature::COUNT]);

impl PerFeature {
    /// `Σ self[f] · other[f]` over every feature.
    #[inline]
    pub fn dot(&self, other: &PerFeature) -> f32 {
        self.0.iter().zip(&other.0).map(|(a, b)| a * b).sum()
    }
}

impl std::ops::Index<Feature> for PerFeature {
    type Output = f32;
    #[inline]
    fn index(&self, f: Feature) -> &f32 {
        &self.0[f as usize]
    }
}

impl std::ops::IndexMut<Feature> for PerFeature {
    #[inline]
    fn index_mut(&mut self, f: Feature) -> &mut f32 {
        &mut self.0[f as usize]
    }
}

/// Key of the side-to-move bonus among the weights.
const SIDE_TO_MOVE: &str = "side_to_move";

/// Weights of the evaluation features (see [`crate::evaluation`] and [`Feature`]).
///
/// Every feature is computed for both sides and enters the score as
/// `weight * (feature(side to move) - feature(opponent))`; the unit is arbitrary (the
/// evaluation is clamped to ±2000, far below the win scores of the search).
///
/// How the defaults were chosen: the feature set follows MIA (Winands' Olympiad winner);
/// the weights were then set by self-play matches of `alphabeta:depth=4` against
/// `mcts:evaluator=heuristic,sims=1000` (100 games each from random balanced 4-ply openings,
/// `loazero match ... --a alphabeta:depth=4,w.NAME=VALUE`), switching features on one at a
/// time on top of concentration alone and keeping what scored better. Found that way:
/// concentration in the inverse form `4/(1+surplus)` (MIA's) beats the linear one;
/// mobility and centralisation help; the Euler number, groups, connectedness, uniformity
/// and the centre-of-mass position did not help at depth 4 with concentration present, so
/// they default to 0 (they stay available); a larger side-to-move bonus helped. The scores
/// are in eval/README.md ("Tuning").
#[derive(Clone, Debug, PartialEq)]
pub struct EvalWeights {
    /// The weight of each feature (documented at [`Feature`]).
    pub features: PerFeature,
    /// Side to move: a flat bonus for having the next normal move (the opponent has it while
    /// a `parachute` drop is pending). Default 30.
    pub side_to_move: f32,
}

impl EvalWeights {
    /// The default weights with `f` set to `weight`.
    pub fn with(mut self, f: Feature, weight: f32) -> EvalWeights {
        self.features[f] = weight;
        self
    }

    /// Sets the weight called `name` (a [`Feature::name`] or `side_to_move`); errors with
    /// the known names if there is none.
    pub fn set(&mut self, name: &str, weight: f32) -> anyhow::Result<()> {
        if name == SIDE_TO_MOVE {
            self.side_to_move = weight;
        } else if let Some(f) = Feature::from_name(name) {
            self.features[f] = weight;
        } else {
            anyhow::bail!(
                "unknown weight '{name}' (known: {}, {SIDE_TO_MOVE})",
                Feature::ALL.map(Feature::name).join(", ")
            );
        }
        Ok(())
    }
}

impl Default for EvalWeights {
    fn default() -> Self {
        EvalWeights {
            features: PerFeature(Feature::ALL.map(Feature::default_weight)),
            side_to_move: 30.0,
        }
    }
}

/// A map from weight name to value: every feature in index order, then `side_to_move`.
impl Serialize for EvalWeights {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(Feature::COUNT + 1))?;
        for f in Feature::ALL {
            map.serialize_entry(f.name(), &self.features[f])?;
        }
        map.serialize_entry(SIDE_TO_MOVE, &self.side_to_move)?;
        map.end()
    }
}

/// A map from weight name to value; missing weights take their defaults, an unknown name
/// is an error naming it.
impl<'de> Deserialize<'de> for EvalWeights {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let given = std::collections::BTreeMap::<String, f32>::deserialize(deserializer)?;
        let mut w = EvalWeights::default();
        for (name, value) in given {
            w.set(&name, value).map_err(serde::de::Error::custom)?;
        }
        Ok(w)
    }
}

/// Options of the alpha-beta search ([`crate::search::AlphaBeta`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlphaBetaConfig {
    /// Transposition table size in MiB (rounded down to a power-of-two number of buckets).
    /// Default 16.
    pub tt_mib: usize,
    /// Late move reductions: quiet moves late in the ordering at depth ≥ 3 are first searched
    /// one ply shallower (re-searched at full depth if they beat alpha). Default false: at a
    /// fixed depth they cost strength (eval/README.md); turn on with `lmr=on` to reach
    /// deeper in fixed time.
    pub late_move_reductions: bool,
    /// At a leaf, look for a move of the side to move that connects (a win one ply on).
    /// Default true.
    pub leaf_win_check: bool,
    /// Threat extension: a leaf where the opponent could connect next move is searched one
    /// ply deeper (along a path, only up to twice the nominal depth). Default true.
    pub threat_extension: bool,
    /// Aspiration window half-width for iterative deepening (0 = full window). Default 50.
    pub aspiration: i32,
    /// Evaluation weights.
    pub weights: EvalWeights,
    /// Threads of one search (Lazy SMP over the shared transposition table, see
    /// [`crate::search::AlphaBeta`]); 1 searches deterministically. Default 1.
    pub threads: usize,
}

impl Default for AlphaBetaConfig {
    fn default() -> Self {
        AlphaBetaConfig {
            tt_mib: 16,
            late_move_reductions: false,
            leaf_win_check: true,
            threat_extension: true,
            aspiration: 50,
            weights: EvalWeights::default(),
            threads: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weights read and write as a map of names (weights files, configs); a missing one
    /// keeps its default, an unknown one is an error naming it.
    #[test]
    fn weights_are_a_map_of_feature_names() {
        let w = EvalWeights::default().with(Feature::Euler, 5.0);
        let json = serde_json::to_value(&w).unwrap();
        let map = json.as_object().unwrap();
        assert_eq!(map.len(), Feature::COUNT + 1);
        assert_eq!(map["euler"], 5.0);
        assert_eq!(map["concentration"], 60.0);
        assert_eq!(map["side_to_move"], 30.0);
        assert_eq!(serde_json::from_value::<EvalWeights>(json).unwrap(), w);
        let partial: EvalWeights = serde_json::from_str(r#"{"mobility": 3}"#).unwrap();
        assert_eq!(partial, EvalWeights::default().with(Feature::Mobility, 3.0));
        let err = serde_json::from_str::<EvalWeights>(r#"{"mobilty": 3}"#).unwrap_err();
        assert!(
            err.to_string().contains("unknown weight 'mobilty'"),
            "{err}"
        );
        for f in Feature::ALL {
            assert_eq!(Feature::from_name(f.name()), Some(f));
            assert_eq!(
                w.features[f],
                if f == Feature::Euler {
                    5.0
                } else {
                    f.default_weight()
                }
            );
        }
    }
}
