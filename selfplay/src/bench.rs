//! Search speed measurement behind `loazero bench mcts`.

use crate::config::MctsConfig;
use crate::evaluator::{EvalBatch, Evaluator};
use crate::search::Search;
use loa::{Game, Rules, Variant};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Figures of one benchmark run.
#[derive(Clone, Copy, Debug)]
pub struct BenchResult {
    /// Threads searching.
    pub threads: usize,
    /// Simulations completed, all threads.
    pub simulations: u64,
    /// Positions evaluated, all threads.
    pub evaluations: u64,
    /// Evaluator calls, all threads.
    pub batches: u64,
    /// Moves searched, all threads.
    pub moves: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// CPU seconds used by the search threads (less than `threads · seconds` when the
    /// machine is shared).
    pub cpu_seconds: f64,
}

impl BenchResult {
    /// Simulations per second and thread.
    pub fn sims_per_second_per_thread(&self) -> f64 {
        self.simulations as f64 / self.seconds.max(1e-9) / self.threads.max(1) as f64
    }

    /// Simulations per CPU second of the search threads.
    pub fn sims_per_cpu_second(&self) -> f64 {
        self.simulations as f64 / self.cpu_seconds.max(1e-9)
    }
}

/// CPU time of the calling thread, in seconds.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Each of `threads` threads plays games (standard variant, classic rules) by searching
/// `sims_per_move` simulations per move (tree reuse on, no noise) and playing the best
/// move, for about `seconds`. Counts completed simulations.
pub fn bench_search(
    evaluator: Arc<dyn Evaluator>,
    config: &MctsConfig,
    sims_per_move: u32,
    seconds: f64,
    threads: usize,
) -> BenchResult {
    let threads = threads.max(1);
    let deadline = Duration::from_secs_f64(seconds.max(0.01));
    let t0 = Instant::now();
    let totals: Vec<(u64, u64, u64, u64, f64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let evaluator = evaluator.clone();
                let config = config.clone();
                s.spawn(move || {
                    let rules = Rules::classic();
                    let mut search = Search::new(config, rules, t as u64 + 1);
                    let mut batch = EvalBatch::new();
                    let mut game = Game::new(Variant::Standard, rules);
                    let cpu0 = thread_cpu_seconds();
                    let (mut sims, mut evals, mut batches, mut moves) = (0u64, 0u64, 0u64, 0u64);
                    while t0.elapsed() < deadline {
                        if game.is_over() || game.moves().len() > 300 {
                            game = Game::new(Variant::Standard, rules);
                        }
                        search.set_root(&game);
                        search.begin(sims_per_move, false);
                        while !search.is_finished() {
                            batch.clear();
                            search.gather(&mut batch);
                            if !batch.is_empty() {
                                evaluator.evaluate(&mut batch).expect("evaluator failed");
                                batches += 1;
                            }
                            search.absorb(&batch).expect("evaluator returned NaN");
                        }
                        let st = search.stats();
                        sims += st.simulations as u64;
                        evals += st.evaluations as u64;
                        moves += 1;
                        let mv = search.best_move().expect("live game has moves");
                        game.play(mv).expect("legal");
                    }
                    (sims, evals, batches, moves, thread_cpu_seconds() - cpu0)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench thread"))
            .collect()
    });
    let seconds = t0.elapsed().as_secs_f64();
    BenchResult {
        threads,
        simulations: totals.iter().map(|t| t.0).sum(),
        evaluations: totals.iter().map(|t| t.1).sum(),
        batches: totals.iter().map(|t| t.2).sum(),
        moves: totals.iter().map(|t| t.3).sum(),
        seconds,
        cpu_seconds: totals.iter().map(|t| t.4).sum(),
    }
}
