//! [`MctsPlayer`]: a deterministic-strength MCTS player for matches and tools.

use crate::config::MctsConfig;
use crate::evaluator::{EvalBatch, EvalError, Evaluator};
use crate::search::{random_seed, Search, SearchStats};
use loa::{Game, Move};
use std::sync::Arc;
use std::time::Instant;

/// Simulations a Gumbel root plans for the first timed move, before the player has
/// measured its speed.
const FIRST_TIMED_GUMBEL_BUDGET: u32 = 64;

/// Plays moves by MCTS with a fixed number of simulations per move: no root noise, the
/// most visited move (a proven win at once, proven losses avoided; with a Gumbel root, the
/// sequential-halving choice). Keeps its tree between calls when the game continued from
/// the last searched position.
///
/// Not `Sync`: one player per thread; the evaluator may be shared.
pub struct MctsPlayer {
    search: Search,
    sims: u32,
    evaluator: Arc<dyn Evaluator>,
    batch: EvalBatch,
    /// Simulations per second measured over the last timed searches (a moving average),
    /// which size a Gumbel root's plan to the time it has.
    rate: Option<f64>,
}

impl MctsPlayer {
    /// A player running `sims` simulations per move with `evaluator`.
    pub fn new(config: MctsConfig, sims: u32, evaluator: Arc<dyn Evaluator>) -> MctsPlayer {
        MctsPlayer {
            search: Search::new(config, loa::Rules::classic(), random_seed()),
            sims: sims.max(1),
            evaluator,
            batch: EvalBatch::new(),
            rate: None,
        }
    }

    /// The search behind the player (statistics of the last move).
    pub fn search(&self) -> &Search {
        &self.search
    }

    /// Counters of the last search.
    pub fn last_stats(&self) -> SearchStats {
        self.search.stats()
    }

    /// Searches the current position of `game` and returns the move to play. Errors if
    /// the game is over or the evaluator fails.
    pub fn choose_move(&mut self, game: &Game) -> Result<Move, EvalError> {
        self.start(game, self.sims)?;
        self.search.run(self.evaluator.as_ref(), &mut self.batch)?;
        self.best()
    }

    /// Like [`MctsPlayer::choose_move`], but searches until `deadline` (checked between
    /// evaluator calls: see [`Search::run_until`]) or `max_sims` simulations, whichever
    /// comes first; the player's own simulation count is not used. A Gumbel root needs its
    /// budget in advance: it plans for the simulations the player's measured speed fits
    /// into the time left (at most `max_sims`; [`FIRST_TIMED_GUMBEL_BUDGET`] before the
    /// first measurement), so that its halving phases end by the deadline.
    pub fn choose_move_until(
        &mut self,
        game: &Game,
        deadline: Instant,
        max_sims: u32,
    ) -> Result<Move, EvalError> {
        let started = Instant::now();
        let budget = if self.search.config().gumbel {
            let left = deadline.saturating_duration_since(started).as_secs_f64();
            match self.rate {
                Some(rate) => ((rate * left * 0.9) as u32).clamp(1, max_sims.max(1)),
                None => FIRST_TIMED_GUMBEL_BUDGET.min(max_sims.max(1)),
            }
        } else {
            max_sims.max(1)
        };
        self.start(game, budget)?;
        self.search
            .run_until(self.evaluator.as_ref(), &mut self.batch, deadline)?;
        let secs = started.elapsed().as_secs_f64();
        let sims = self.search.simulations_done() as f64;
        if secs > 1e-6 && sims >= 8.0 {
            let now = sims / secs;
            self.rate = Some(self.rate.map_or(now, |r| 0.5 * r + 0.5 * now));
        }
        self.best()
    }

    fn start(&mut self, game: &Game, sims: u32) -> Result<(), EvalError> {
        if let Some(o) = game.outcome() {
            return Err(EvalError(format!(
                "no move to choose: the game is over ({})",
                o.name()
            )));
        }
        self.search.set_root(game);
        self.search.begin(sims, false);
        Ok(())
    }

    fn best(&self) -> Result<Move, EvalError> {
        self.search
            .best_move()
            .ok_or_else(|| EvalError("search produced no move".into()))
    }
}
