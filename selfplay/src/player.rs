//! [`MctsPlayer`]: a deterministic-strength MCTS player for matches and tools.

use crate::config::MctsConfig;
use crate::evaluator::{EvalBatch, EvalError, Evaluator};
use crate::search::{random_seed, Search, SearchStats};
use loa::{Game, Move};
use std::sync::Arc;
use std::time::Instant;

/// Plays moves by MCTS with a fixed number of simulations per move: no root noise, the
/// most visited move (a proven win at once, proven losses avoided). Keeps its tree between
/// calls when the game continued from the last searched position.
///
/// Not `Sync`: one player per thread; the evaluator may be shared.
pub struct MctsPlayer {
    search: Search,
    sims: u32,
    evaluator: Arc<dyn Evaluator>,
    batch: EvalBatch,
}

impl MctsPlayer {
    /// A player running `sims` simulations per move with `evaluator`.
    pub fn new(config: MctsConfig, sims: u32, evaluator: Arc<dyn Evaluator>) -> MctsPlayer {
        MctsPlayer {
            search: Search::new(config, loa::Rules::classic(), random_seed()),
            sims: sims.max(1),
            evaluator,
            batch: EvalBatch::new(),
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
    /// comes first; the player's own simulation count is not used.
    pub fn choose_move_until(
        &mut self,
        game: &Game,
        deadline: Instant,
        max_sims: u32,
    ) -> Result<Move, EvalError> {
        self.start(game, max_sims.max(1))?;
        self.search
            .run_until(self.evaluator.as_ref(), &mut self.batch, deadline)?;
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
