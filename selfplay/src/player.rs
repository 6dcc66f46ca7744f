//! [`MctsPlayer`]: a deterministic-strength MCTS player for matches and tools.

use crate::config::MctsConfig;
use crate::evaluator::{EvalBatch, Evaluator};
use crate::root_tactics::RootCheck;
use crate::search::{random_seed, Search, SearchStats};
use crate::Error;
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
/// Every move starts with the root check ([`RootCheck`]): a forced win within three turns,
/// or the latest loss when every move loses, is played without a search (the statistics
/// stay those of the last search), and a searched move that loses within two turns while
/// another does not gives way to the most visited move that does not.
///
/// With [`MctsPlayer::set_threads`] above 1, every search runs that many threads over
/// the one tree ([`Search::run_parallel`]): while the evaluator works on one thread's
/// batch the others gather and back up theirs, so an evaluator that serves concurrent
/// callers at once (several inference threads) multiplies the simulations per second.
/// Such searches are not reproducible; with one thread (the default) they are.
///
/// Not `Sync`: one player per thread; the evaluator may be shared.
pub struct MctsPlayer {
    search: Search,
    sims: u32,
    evaluator: Arc<dyn Evaluator>,
    batch: EvalBatch,
    /// Search threads per move (at least 1).
    threads: usize,
    /// One batch per search thread when `threads > 1`.
    thread_batches: Vec<EvalBatch>,
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
            threads: 1,
            thread_batches: Vec::new(),
            rate: None,
        }
    }

    /// Sets the number of search threads per move (0 counts as 1). With 1 (the default)
    /// the search is the single-threaded one, move for move; with n > 1, n threads
    /// descend the one tree with virtual loss, each with a batch of up to
    /// `leaves_per_batch` leaves in flight ([`Search::run_parallel`]).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The number of search threads per move.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The search behind the player (statistics of the last move, all its threads
    /// together).
    pub fn search(&self) -> &Search {
        &self.search
    }

    /// Counters of the last search (all its threads together).
    pub fn last_stats(&self) -> SearchStats {
        self.search.stats()
    }

    /// Searches the current position of `game` and returns the move to play. Errors if
    /// the game is over or the evaluator fails.
    pub fn choose_move(&mut self, game: &Game) -> Result<Move, Error> {
        let check = RootCheck::of(game);
        if let Some(mv) = check.settled() {
            return Ok(mv);
        }
        self.start(game, self.sims)?;
        self.run(None)?;
        self.best(&check)
    }

    /// Like [`MctsPlayer::choose_move`], but searches until `deadline` (checked between
    /// evaluator calls: see [`Search::run_until`]) or `max_sims` simulations, whichever
    /// comes first; the player's own simulation count is not used.
    ///
    /// A Gumbel root needs its budget in advance. It plans for the simulations the
    /// player's measured speed fits into the time left (at most `max_sims`;
    /// 64 before the first measurement); when its halving ends
    /// with time to spare, a new halving over the same tree (every visit kept) plans for
    /// what this move's own speed fits into the rest, until less than a small plan fits.
    /// So the phases end by the deadline and the time is used.
    pub fn choose_move_until(
        &mut self,
        game: &Game,
        deadline: Instant,
        max_sims: u32,
    ) -> Result<Move, Error> {
        let started = Instant::now();
        let check = RootCheck::of(game);
        if let Some(mv) = check.settled() {
            return Ok(mv);
        }
        let cap = max_sims.max(1);
        if !self.search.config().gumbel {
            self.start(game, cap)?;
            self.run(Some(deadline))?;
            return self.best(&check);
        }
        let left = |now: Instant| deadline.saturating_duration_since(now).as_secs_f64();
        let mut budget = match self.rate {
            Some(rate) => ((rate * left(started) * 0.9) as u32).clamp(1, cap),
            None => FIRST_TIMED_GUMBEL_BUDGET.min(cap),
        };
        self.start(game, budget)?;
        let mut done = 0u32;
        loop {
            self.run(Some(deadline))?;
            done = done.saturating_add(self.search.simulations_done());
            let now = Instant::now();
            let secs = (now - started).as_secs_f64();
            if secs <= 1e-6 || done < 8 {
                break;
            }
            let rate = done as f64 / secs;
            self.rate = Some(self.rate.map_or(rate, |r| 0.5 * r + 0.5 * rate));
            // Stopped by the deadline, a proven or forced root, or the cap: done.
            if now >= deadline || self.search.simulations_done() < budget || done >= cap {
                break;
            }
            let more = ((rate * left(now) * 0.9) as u32).min(cap - done);
            if more < FIRST_TIMED_GUMBEL_BUDGET / 2 {
                break;
            }
            budget = more;
            self.search.begin(budget, false);
        }
        self.best(&check)
    }

    /// Runs the search begun to its end, or until `deadline`, on the player's threads.
    fn run(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        let evaluator = self.evaluator.as_ref();
        if self.threads <= 1 {
            return match deadline {
                None => self.search.run(evaluator, &mut self.batch),
                Some(d) => self.search.run_until(evaluator, &mut self.batch, d),
            };
        }
        self.thread_batches
            .resize_with(self.threads, EvalBatch::new);
        self.search
            .run_parallel(evaluator, &mut self.thread_batches, deadline)
    }

    fn start(&mut self, game: &Game, sims: u32) -> Result<(), Error> {
        if let Some(o) = game.outcome() {
            return Err(Error::Eval(format!(
                "no move to choose: the game is over ({})",
                o.name()
            )));
        }
        self.search.set_root(game);
        self.search.begin(sims, false);
        Ok(())
    }

    /// The search's move, overruled by `check` when the solver refutes it (then the most
    /// visited move it does not refute).
    fn best(&self, check: &RootCheck) -> Result<Move, Error> {
        let searched = self
            .search
            .best_move()
            .ok_or_else(|| Error::Eval("search produced no move".into()))?;
        if !check.refuted().contains(&searched) {
            return Ok(searched);
        }
        let mut ranked = self.search.root_moves();
        ranked.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        Ok(check.overrule(searched, ranked.iter().map(|m| m.mv)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluators::{HeuristicEvaluator, UniformEvaluator};
    use loa::forced_set::{test_set, TacticalPosition};
    use std::time::Duration;

    /// The positions of the tactical set where `choose` does not play a best move (a
    /// shortest forced win; a move that loses latest).
    fn misses(set: &[TacticalPosition], mut choose: impl FnMut(&Game) -> Move) -> Vec<String> {
        set.iter()
            .filter_map(|p| {
                let mv = choose(&p.game);
                (!p.is_best(mv)).then(|| format!("{} played {mv}", p.describe()))
            })
            .collect()
    }

    /// 64 simulations with the Gumbel root (the rating's setting of model players, here
    /// with the heuristic evaluator) and with PUCT, by simulations and by deadline: every
    /// forced win within three turns is played, the shortest first, and no move that
    /// loses sooner than another.
    #[test]
    fn mcts_players_play_every_tactic_of_the_set() {
        let set = test_set();
        for gumbel in [true, false] {
            let config = MctsConfig {
                gumbel,
                ..MctsConfig::default()
            };
            let evaluator: Arc<dyn Evaluator> = if gumbel {
                Arc::new(HeuristicEvaluator::new())
            } else {
                Arc::new(UniformEvaluator::new())
            };
            let mut player = MctsPlayer::new(config, 64, evaluator);
            let missed = misses(&set, |g| player.choose_move(g).unwrap());
            assert!(
                missed.is_empty(),
                "gumbel={gumbel}: {} missed: {missed:#?}",
                missed.len()
            );
            let missed = misses(&set, |g| {
                player
                    .choose_move_until(g, Instant::now() + Duration::from_millis(2), 64)
                    .unwrap()
            });
            assert!(
                missed.is_empty(),
                "gumbel={gumbel}, timed: {} missed: {missed:#?}",
                missed.len()
            );
        }
    }
}
