//! `threads=N`: how many threads one search of a player uses (alpha-beta: Lazy SMP over a
//! shared transposition table; MCTS: simulations of one tree with virtual loss, each thread
//! with its own network batch in flight). An `alphabeta` or `model` spec without it gets
//! its factory's default ([`super::PlayerFactory::with_default_threads`]): 1 where games
//! are played side by side (`match`, `benchmark`, `ladder`, the run's ratings: one game
//! per core), every core where one game has the machine (`bestmove`, `engine`), and the
//! cores the `serve` pool leaves each search ([`threads_per_search`]). An `mcts` spec
//! (a built-in evaluator) searches on one thread unless it says otherwise
//! ([`BUILTIN_EVALUATOR_THREADS`]).

use super::kind::{Key, Serve, Shown, ValueType};

/// Most threads a spec may ask for.
pub const MAX_THREADS: i64 = 256;

/// `threads=`: threads of one search, by default the factory's.
pub const THREADS: Key = threads_key(
    "1 in match, benchmark and ladder; every core in bestmove and engine; the cores per \
     search in serve",
);

/// `threads=` of a search whose evaluator is built in (`mcts`): 1 unless given. Its
/// evaluations cost less than the tree work, which the threads take turns at (one lock
/// over the tree), so more threads search fewer nodes a second (`loazero bench mcts`
/// shows it with the heuristic evaluator).
pub const BUILTIN_EVALUATOR_THREADS: Key =
    threads_key("1 (its threads share one lock over the tree; they pay with a network)");

const fn threads_key(default: &'static str) -> Key {
    Key {
        name: "threads",
        aliases: &[],
        value: ValueType::positive(MAX_THREADS),
        default,
        help: "threads of one search (its results then vary from run to run)",
        shown: Shown::Always,
        limit: false,
        serve: Serve::Refused("the server gives each search its share of the cores"),
    }
}

/// The logical cores of this machine (1 if unknown).
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Threads of each search when `cores` cores serve up to `searches` searches at once:
/// `cores / searches`, at least 1.
pub fn threads_per_search(cores: usize, searches: usize) -> usize {
    (cores / searches.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cores_are_shared_out_between_searches() {
        assert_eq!(threads_per_search(8, 1), 8);
        assert_eq!(threads_per_search(8, 2), 4);
        assert_eq!(threads_per_search(8, 3), 2);
        assert_eq!(threads_per_search(2, 4), 1);
        assert_eq!(threads_per_search(2, 0), 2);
        assert!(all_cores() >= 1);
    }
}
