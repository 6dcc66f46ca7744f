//! MCTS players: the selfplay crate's [`selfplay::MctsPlayer`] behind the [`Player`]
//! interface.

use super::{Player, NO_SIM_CAP};
use anyhow::{bail, Result};
use loa::{Game, Move};
use selfplay::{Evaluator, HeuristicEvaluator, MctsConfig, MctsPlayer, UniformEvaluator};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The built-in evaluator called `name` (`heuristic` or `uniform`).
pub fn builtin_evaluator(name: &str) -> Result<Arc<dyn Evaluator>> {
    Ok(match name {
        "heuristic" => Arc::new(HeuristicEvaluator::new()),
        "uniform" => Arc::new(UniformEvaluator::new()),
        other => bail!("unknown built-in evaluator '{other}' (expected heuristic or uniform)"),
    })
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

/// An MCTS player named `name` with `evaluator` and the search settings `configs` (players
/// use no root noise and play the most-visited move). Without `ms` it runs `sims`
/// simulations per move; with `ms` it searches for `ms` milliseconds per move (the clock
/// starts when the move is asked for), stopping early at `sims` simulations unless `sims`
/// is [`NO_SIM_CAP`].
pub fn build(
    name: String,
    evaluator: Arc<dyn Evaluator>,
    configs: MctsConfigs,
    sims: u32,
    ms: Option<u64>,
    _seed: u64,
) -> Result<Box<dyn Player>> {
    Ok(Box::new(MctsMatchPlayer {
        name,
        sims,
        time: ms.map(Duration::from_millis),
        configs,
        evaluator,
        fixed: None,
        timed: None,
        last_timed: false,
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
    fixed: Option<MctsPlayer>,
    timed: Option<MctsPlayer>,
    /// Whether the last search was a timed one.
    last_timed: bool,
}

impl MctsMatchPlayer {
    fn fixed(&mut self) -> &mut MctsPlayer {
        self.last_timed = false;
        let (config, sims, ev) = (&self.configs.fixed, self.sims, &self.evaluator);
        self.fixed
            .get_or_insert_with(|| MctsPlayer::new(config.clone(), sims, ev.clone()))
    }

    fn timed(&mut self) -> &mut MctsPlayer {
        self.last_timed = true;
        let (config, sims, ev) = (&self.configs.timed, self.sims, &self.evaluator);
        self.timed
            .get_or_insert_with(|| MctsPlayer::new(config.clone(), sims, ev.clone()))
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

impl Player for MctsMatchPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
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
    fn choose_move_within(&mut self, game: &Game, budget: Duration) -> Result<Move> {
        let cap = if self.time.is_some() {
            self.sims
        } else {
            NO_SIM_CAP
        };
        Ok(self
            .timed()
            .choose_move_until(game, Instant::now() + budget, cap)?)
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn last_info(&self) -> Option<String> {
        self.last().map(|p| format!("{:?}", p.last_stats()))
    }
}
