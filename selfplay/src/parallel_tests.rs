//! Tests of several batches in flight in one search ([`Search::gather_leaves`]) and of
//! several threads over one tree ([`Search::run_parallel`], [`MctsPlayer::set_threads`]).
//! None depends on timing to pass.

use super::*;
use crate::evaluators::{HeuristicEvaluator, UniformEvaluator};
use crate::player::MctsPlayer;
use loa::{Color, Variant};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sleeps `delay` in every call before answering as the heuristic evaluator does, so
/// that the batches of several threads overlap.
struct Sleepy {
    delay: Duration,
}

impl Evaluator for Sleepy {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        std::thread::sleep(self.delay);
        HeuristicEvaluator::new().evaluate(batch)
    }
    fn name(&self) -> String {
        "sleepy".into()
    }
}

/// Answers as the heuristic evaluator does (after `delay`), except on its `fail_on`-th
/// call (counted from 1), which fails (or panics, with `panic`).
struct FailsOnce {
    calls: AtomicUsize,
    fail_on: usize,
    delay: Duration,
    panic: bool,
}

impl FailsOnce {
    fn new(fail_on: usize, delay: Duration) -> FailsOnce {
        FailsOnce {
            calls: AtomicUsize::new(0),
            fail_on,
            delay,
            panic: false,
        }
    }
}

impl Evaluator for FailsOnce {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        std::thread::sleep(self.delay);
        if self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.fail_on {
            if self.panic {
                panic!("the evaluator panics on call {}", self.fail_on);
            }
            return Err(Error::Eval(format!("fails on call {}", self.fail_on)));
        }
        HeuristicEvaluator::new().evaluate(batch)
    }
    fn name(&self) -> String {
        "fails-once".into()
    }
}

fn evaluators() -> Vec<Arc<dyn Evaluator>> {
    vec![
        Arc::new(UniformEvaluator::new()),
        Arc::new(HeuristicEvaluator::new()),
        Arc::new(Sleepy {
            delay: Duration::from_millis(1),
        }),
    ]
}

fn config(gumbel: bool) -> MctsConfig {
    MctsConfig {
        gumbel,
        ..MctsConfig::default()
    }
}

fn batches(n: usize) -> Vec<EvalBatch> {
    (0..n).map(|_| EvalBatch::new()).collect()
}

/// The tree under the root is consistent after a search: nothing in flight or pending,
/// and every expanded unproven edge has one visit (its own evaluation) plus its
/// children's (a proven edge may have more: simulations stop there).
fn assert_consistent(search: &Search) {
    assert_eq!(search.batches_in_flight(), 0);
    assert!(search.current.is_empty());
    let edges = &search.tree.edges;
    let mut stack = vec![search.tree.root as usize];
    while let Some(e) = stack.pop() {
        let edge = &edges[e];
        assert_eq!(edge.in_flight, 0, "edge {e} keeps a virtual loss");
        assert_ne!(edge.state, EdgeState::Pending, "edge {e} is still pending");
        if edge.state == EdgeState::Expanded {
            let below: u32 = edges[edge.child_range()].iter().map(|c| c.visits).sum();
            if edge.proof.is_none() {
                let own = u32::from(e != search.tree.root as usize || edge.visits > below);
                assert_eq!(edge.visits, below + own, "edge {e}: visits");
            } else {
                assert!(edge.visits >= below, "edge {e}: visits");
            }
            stack.extend(edge.child_range());
        }
    }
}

fn root_visits(search: &Search) -> u32 {
    search.root_moves().iter().map(|m| m.visits).sum()
}

/// 2 and 4 threads, PUCT and Gumbel roots, quick and sleeping evaluators: the search
/// finishes with exactly its budget of simulations, every one backed up through the
/// root, a consistent tree and a legal best move; with a Gumbel root every halving phase
/// ran (the budget is spent through the phases).
#[test]
fn parallel_searches_spend_their_budget_on_a_consistent_tree() {
    let rules = Rules::classic();
    let mut game = Game::new(Variant::Standard, rules);
    for k in [3, 7] {
        game.play(game.legal_moves()[k]).unwrap();
    }
    for threads in [1, 2, 4] {
        for gumbel in [false, true] {
            for evaluator in evaluators() {
                let name = evaluator.name();
                let sims = if name == "sleepy" { 150 } else { 400 };
                let mut search = Search::new(config(gumbel), rules, 5);
                search.set_root(&game);
                search.begin(sims, false);
                search
                    .run_parallel(evaluator.as_ref(), &mut batches(threads), None)
                    .unwrap();
                let what = format!("{threads} threads, gumbel {gumbel}, {name}");
                assert!(search.is_finished(), "{what}");
                assert_eq!(search.stats().simulations, sims, "{what}");
                assert_eq!(root_visits(&search), sims, "{what}");
                assert_consistent(&search);
                let best = search.best_move().unwrap();
                assert!(game.legal_moves().contains(&best), "{what}");
                if gumbel {
                    let g = search.gumbel.as_ref().unwrap();
                    assert_eq!(g.phases_and_schedule(), (1, 0), "{what}");
                }
                // The player: the same through set_threads, by simulations and by a far
                // deadline (the cap ends it).
                let mut player = MctsPlayer::new(config(gumbel), sims, evaluator.clone());
                player.set_threads(threads);
                assert_eq!(player.threads(), threads);
                let mv = player.choose_move(&game).unwrap();
                assert!(game.legal_moves().contains(&mv), "{what}");
                assert_eq!(player.last_stats().simulations, sims, "{what}");
                assert_consistent(player.search());
                let far = Instant::now() + Duration::from_secs(3600);
                let mv = player.choose_move_until(&game, far, 200).unwrap();
                assert!(game.legal_moves().contains(&mv), "{what}");
                assert_consistent(player.search());
            }
        }
    }
}

/// Tickets come back in any order: two batches gathered before either is absorbed,
/// absorbed last-first, leave the same accounting as batches absorbed one by one; a
/// Gumbel root does not halve while a batch is in flight.
#[test]
fn tickets_are_absorbed_in_any_order() {
    let rules = Rules::classic();
    let game = Game::new(Variant::Standard, rules);
    for gumbel in [false, true] {
        let mut search = Search::new(config(gumbel), rules, 9);
        search.set_root(&game);
        search.begin(300, false);
        let mut a = EvalBatch::new();
        let mut b = EvalBatch::new();
        // The root first: a second gather meets the pending root and has nothing.
        let root = search.gather_leaves(&mut a);
        assert_eq!(root.len(), 1);
        assert!(search.gather_leaves(&mut b).is_empty());
        assert!(!search.is_finished());
        HeuristicEvaluator::new().evaluate(&mut a).unwrap();
        search.absorb_leaves(&a, root).unwrap();
        while !search.is_finished() {
            a.clear();
            b.clear();
            let first = search.gather_leaves(&mut a);
            let second = search.gather_leaves(&mut b);
            assert_eq!(
                search.batches_in_flight(),
                usize::from(!first.is_empty()) + usize::from(!second.is_empty())
            );
            assert!(!search.is_finished());
            HeuristicEvaluator::new().evaluate(&mut b).unwrap();
            search.absorb_leaves(&b, second).unwrap();
            HeuristicEvaluator::new().evaluate(&mut a).unwrap();
            search.absorb_leaves(&a, first).unwrap();
        }
        assert_eq!(search.stats().simulations, 300, "gumbel {gumbel}");
        assert_eq!(root_visits(&search), 300, "gumbel {gumbel}");
        assert_consistent(&search);
        // An abandoned ticket leaves nothing behind: its simulations are not counted.
        search.begin(50, false);
        a.clear();
        let ticket = search.gather_leaves(&mut a);
        assert!(!ticket.is_empty());
        let before = root_visits(&search);
        search.abandon_leaves(ticket);
        assert_consistent(&search);
        assert_eq!(root_visits(&search), before);
        search
            .run(&UniformEvaluator, &mut EvalBatch::new())
            .unwrap();
        assert_eq!(search.stats().simulations, 50);
        assert_consistent(&search);
    }
}

/// The solver proves a forced win with several threads, and the player plays a win in
/// one (its root check settles it; the search is made to run on its own too).
#[test]
fn parallel_solver_proves_forced_wins() {
    let rules = Rules::classic();
    for text in super::tests::WIN_IN_3 {
        let p = Position::from_text(text, Variant::Standard).unwrap();
        for threads in [2, 4] {
            let mut search = Search::new(MctsConfig::default(), rules, 17);
            search.set_root(&Game::from_position(p, rules));
            search.begin(20_000, false);
            search
                .run_parallel(&HeuristicEvaluator::new(), &mut batches(threads), None)
                .unwrap();
            assert_eq!(search.root_proof(), Some(Proof::Win), "{text} ({threads})");
            assert!(search.stats().simulations < 20_000);
            assert_consistent(&search);
            let mv = search.best_move().unwrap();
            assert_eq!(
                search
                    .root_moves()
                    .iter()
                    .find(|m| m.mv == mv)
                    .unwrap()
                    .proof,
                Some(Proof::Win)
            );
        }
    }
    // Black c3, c4 and f6: f6-d4 connects.
    let p = Position::from_text("w5w1/8/5b2/8/2b5/2b5/8/7w b", Variant::Standard).unwrap();
    for threads in [2, 4] {
        let mut search = Search::new(MctsConfig::default(), rules, 3);
        search.set_root(&Game::from_position(p, rules));
        search.begin(400, false);
        search
            .run_parallel(&UniformEvaluator, &mut batches(threads), None)
            .unwrap();
        assert_eq!(search.root_proof(), Some(Proof::Win));
        let mv = search.best_move().unwrap();
        assert_eq!(
            p.after(mv).outcome(&rules),
            Some(Outcome::Win(Color::Black))
        );
        let mut player = MctsPlayer::new(MctsConfig::default(), 400, Arc::new(UniformEvaluator));
        player.set_threads(threads);
        let mv = player.choose_move(&Game::from_position(p, rules)).unwrap();
        assert_eq!(
            p.after(mv).outcome(&rules),
            Some(Outcome::Win(Color::Black))
        );
    }
}

/// Tree reuse with several threads: the subtree of the moves played survives, and the
/// next search adds its budget on top of it; a whole game between a threaded player and
/// a single-threaded one reaches its end with legal moves.
#[test]
fn parallel_searches_reuse_the_tree_across_moves() {
    let rules = Rules::classic();
    let mut game = Game::new(Variant::Standard, rules);
    let evaluator = Sleepy {
        delay: Duration::from_millis(1),
    };
    let mut search = Search::new(MctsConfig::default(), rules, 3);
    for _ in 0..3 {
        search.set_root(&game);
        let kept = root_visits(&search);
        search.begin(200, false);
        search
            .run_parallel(&evaluator, &mut batches(3), None)
            .unwrap();
        assert_eq!(root_visits(&search), kept + 200);
        assert_consistent(&search);
        let best = search.best_move().unwrap();
        let subtree = search
            .root_moves()
            .iter()
            .find(|m| m.mv == best)
            .unwrap()
            .visits;
        game.play(best).unwrap();
        search.set_root(&game);
        assert_eq!(root_visits(&search) + 1, subtree, "the subtree survives");
        let reply = search.best_move().unwrap_or(game.legal_moves()[0]);
        game.play(reply).unwrap();
    }
    for gumbel in [false, true] {
        let mut game = Game::new(Variant::Standard, rules);
        let mut threaded = MctsPlayer::new(config(gumbel), 64, Arc::new(HeuristicEvaluator::new()));
        threaded.set_threads(2);
        let mut single = MctsPlayer::new(config(gumbel), 64, Arc::new(HeuristicEvaluator::new()));
        while !game.is_over() && game.moves().len() < 300 {
            let player = if game.moves().len().is_multiple_of(2) {
                &mut threaded
            } else {
                &mut single
            };
            let mv = player.choose_move(&game).unwrap();
            assert!(game.legal_moves().contains(&mv));
            game.play(mv).unwrap();
        }
        assert_consistent(threaded.search());
    }
}

/// An evaluator that fails (or answers wrongly) in any thread makes the search return
/// the error: no hang, no panic, nothing left in flight; the same player then searches
/// on. An evaluator that panics makes the call panic (no hang).
#[test]
fn an_evaluator_failure_in_any_thread_is_returned() {
    let rules = Rules::classic();
    let game = Game::new(Variant::Standard, rules);
    for threads in [2, 4] {
        for gumbel in [false, true] {
            for fail_on in [1, 2, 5, 12] {
                for delay in [Duration::ZERO, Duration::from_millis(1)] {
                    let evaluator = Arc::new(FailsOnce::new(fail_on, delay));
                    let mut player = MctsPlayer::new(config(gumbel), 400, evaluator.clone());
                    player.set_threads(threads);
                    let err = player.choose_move(&game).unwrap_err();
                    assert!(err.to_string().contains("fails on call"), "{err}");
                    assert_consistent(player.search());
                    // The next call's evaluations succeed.
                    let mv = player.choose_move(&game).unwrap();
                    assert!(game.legal_moves().contains(&mv));
                    assert_consistent(player.search());
                }
            }
        }
    }
    struct Lazy;
    impl Evaluator for Lazy {
        fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
            batch.values.clear();
            Ok(())
        }
        fn name(&self) -> String {
            "lazy".into()
        }
    }
    let mut search = Search::new(MctsConfig::default(), rules, 1);
    search.set_root(&game);
    search.begin(100, false);
    let err = search
        .run_parallel(&Lazy, &mut batches(3), None)
        .unwrap_err();
    assert!(err.to_string().contains("evaluat"), "{err}");
    assert_consistent(&search);
    // No batch at all is a configuration error, not a hang.
    assert!(search.run_parallel(&Lazy, &mut [], None).is_err());
    let mut panicking = FailsOnce::new(3, Duration::from_millis(1));
    panicking.panic = true;
    let mut player = MctsPlayer::new(MctsConfig::default(), 400, Arc::new(panicking));
    player.set_threads(3);
    let caught =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| player.choose_move(&game)));
    assert!(caught.is_err());
}

/// Everything a search says after it ran, floats by their bits (so that a value that is
/// NaN compares equal to itself): the root moves (visits, values, priors, proofs), the
/// statistics, the best move and its principal variation, the root value and proof, the
/// policy target and the tree's size.
fn search_state(search: &Search) -> String {
    let moves: Vec<_> = search
        .root_moves()
        .iter()
        .map(|m| (m.mv, m.visits, m.q.to_bits(), m.prior.to_bits(), m.proof))
        .collect();
    let best = search.best_move();
    let pv = best.map(|mv| search.principal_variation(mv));
    let policy: Vec<u32> = search.policy_target().iter().map(|p| p.to_bits()).collect();
    format!(
        "{moves:?} {:?} {best:?} {pv:?} {} {:?} {policy:?} {}",
        search.stats(),
        search.root_value().to_bits(),
        search.root_proof(),
        search.tree_size()
    )
}

/// A game of `plies` plies of the heuristic evaluator's most likely moves from the start
/// (the same game every time): the positions the one-thread tests search.
fn opening(plies: usize) -> Game {
    let rules = Rules::classic();
    let mut game = Game::new(Variant::Standard, rules);
    let mut search = Search::new(MctsConfig::default(), rules, 11);
    for _ in 0..plies {
        search.set_root(&game);
        search.begin(32, false);
        search
            .run(&HeuristicEvaluator::new(), &mut EvalBatch::new())
            .unwrap();
        game.play(search.best_move().unwrap()).unwrap();
    }
    game
}

/// [`Search::run_parallel`] with one batch (one thread) is the single-threaded search,
/// simulation for simulation: from the same seed, it leaves the same tree as
/// [`Search::run`] (no deadline) and as [`Search::run_until`] (a deadline far away) —
/// the same root moves with the same visits, values, priors and proofs, statistics, best
/// move, principal variation, policy target and tree size ([`search_state`]), and the
/// same random stream after (a sampled move) — with PUCT and Gumbel roots, with and
/// without root noise, over the moves of a game with tree reuse and over positions with
/// forced wins in three plies (where the solver works). Fails if the one-thread path of
/// `run_parallel` searches otherwise than `run` (another budget, another loop, a
/// deadline read otherwise, another batch size, another random stream).
#[test]
fn run_parallel_with_one_batch_is_the_single_threaded_search() {
    let rules = Rules::classic();
    let evaluator = HeuristicEvaluator::new();
    let far = Instant::now() + Duration::from_secs(3600);
    let mut roots: Vec<Vec<Game>> = vec![[0, 7, 20].iter().map(|&plies| opening(plies)).collect()];
    roots.push(
        super::tests::WIN_IN_3
            .iter()
            .map(|t| Game::from_position(Position::from_text(t, Variant::Standard).unwrap(), rules))
            .collect(),
    );
    let mut compared = 0;
    for games in &roots {
        for gumbel in [false, true] {
            for noise in [false, true] {
                for deadline in [None, Some(far)] {
                    let mut single = Search::new(config(gumbel), rules, 23);
                    let mut threaded = Search::new(config(gumbel), rules, 23);
                    let mut batch = EvalBatch::new();
                    let mut one = batches(1);
                    for game in games {
                        // Each root twice: the second search reuses the first one's tree.
                        for _ in 0..2 {
                            let what = format!(
                                "{} gumbel {gumbel}, noise {noise}, deadline {}",
                                game.position().to_text(),
                                deadline.is_some()
                            );
                            for s in [&mut single, &mut threaded] {
                                s.set_root(game);
                                s.begin(300, noise);
                            }
                            match deadline {
                                None => single.run(&evaluator, &mut batch).unwrap(),
                                Some(d) => single.run_until(&evaluator, &mut batch, d).unwrap(),
                            }
                            threaded
                                .run_parallel(&evaluator, &mut one, deadline)
                                .unwrap();
                            assert!(threaded.is_finished(), "{what}");
                            assert_consistent(&threaded);
                            assert_eq!(search_state(&threaded), search_state(&single), "{what}");
                            assert_eq!(
                                threaded.sample_move(1.0),
                                single.sample_move(1.0),
                                "{what}"
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(compared, 2 * 2 * 2 * 2 * (3 + super::tests::WIN_IN_3.len()));
}

/// A player told one thread ([`MctsPlayer::set_threads`] 1, or 0, which counts as 1)
/// searches exactly as the single-threaded search: over the moves of a game with tree
/// reuse, with PUCT and Gumbel roots, it plays the move of a player never told, and after
/// every move it searched, its search holds the same tree ([`search_state`]) as a search
/// driven by hand from the same root with [`Search::run`] (the player's own root check
/// settles some moves without a search; the hand-driven search skips those too). Fails if
/// the player's one-thread path runs another search than `run` (several batches in
/// flight, another budget).
#[test]
fn one_thread_plays_exactly_the_single_threaded_search() {
    let rules = Rules::classic();
    let evaluator: Arc<dyn Evaluator> = Arc::new(HeuristicEvaluator::new());
    for gumbel in [false, true] {
        let mut plain = MctsPlayer::new(config(gumbel), 150, evaluator.clone());
        let mut one = MctsPlayer::new(config(gumbel), 150, evaluator.clone());
        one.set_threads(1);
        let mut zero = MctsPlayer::new(config(gumbel), 150, evaluator.clone());
        zero.set_threads(0);
        assert_eq!((plain.threads(), one.threads(), zero.threads()), (1, 1, 1));
        // The players search without noise: their random seeds do not matter.
        let mut by_hand = Search::new(config(gumbel), rules, 1);
        let mut batch = EvalBatch::new();
        let mut game = Game::new(Variant::Standard, rules);
        let mut searched = 0;
        while !game.is_over() && game.moves().len() < 40 {
            let what = format!("gumbel {gumbel}, ply {}", game.moves().len());
            let mv = plain.choose_move(&game).unwrap();
            assert_eq!(one.choose_move(&game).unwrap(), mv, "{what}");
            assert_eq!(zero.choose_move(&game).unwrap(), mv, "{what}");
            if crate::root_tactics::RootCheck::of(&game)
                .settled()
                .is_none()
            {
                by_hand.set_root(&game);
                by_hand.begin(150, false);
                by_hand.run(evaluator.as_ref(), &mut batch).unwrap();
                let expected = search_state(&by_hand);
                for p in [&plain, &one, &zero] {
                    assert_eq!(search_state(p.search()), expected, "{what}");
                }
                searched += 1;
            }
            game.play(mv).unwrap();
        }
        assert!(searched >= 20, "gumbel {gumbel}: {searched} searches");
    }
}

/// A deadline already past with several threads: the root is still expanded (a move is
/// known) and nothing is left in flight; a short one ends the search with its
/// simulations backed up.
#[test]
fn parallel_run_until_a_deadline() {
    let rules = Rules::classic();
    let game = Game::new(Variant::Standard, rules);
    let evaluator = Sleepy {
        delay: Duration::from_millis(1),
    };
    for gumbel in [false, true] {
        let mut search = Search::new(config(gumbel), rules, 1);
        search.set_root(&game);
        search.begin(u32::MAX, false);
        search
            .run_parallel(&evaluator, &mut batches(2), Some(Instant::now()))
            .unwrap();
        assert!(search.best_move().is_some());
        assert_consistent(&search);
        search.begin(u32::MAX, false);
        let soon = Instant::now() + Duration::from_millis(20);
        search
            .run_parallel(&evaluator, &mut batches(2), Some(soon))
            .unwrap();
        assert_consistent(&search);
        assert_eq!(root_visits(&search), search.stats().simulations);
        let mut player = MctsPlayer::new(config(gumbel), 1, Arc::new(HeuristicEvaluator::new()));
        player.set_threads(2);
        let mv = player
            .choose_move_until(&game, Instant::now() + Duration::from_millis(20), 100_000)
            .unwrap();
        assert!(game.legal_moves().contains(&mv));
        assert_consistent(player.search());
    }
}

/// Not a test: simulations per second with 1, 2 and 4 threads on one position, with a
/// quick and a sleeping evaluator (`cargo test --release -p selfplay -- --ignored
/// --nocapture threads_speed_probe`). A probe on a shared machine, not a benchmark.
#[test]
#[ignore]
fn threads_speed_probe() {
    let rules = Rules::classic();
    let game = Game::new(Variant::Standard, rules);
    let sleepy = Sleepy {
        delay: Duration::from_millis(2),
    };
    let heuristic = HeuristicEvaluator::new();
    for (evaluator, name) in [
        (&heuristic as &dyn Evaluator, "heuristic"),
        (&sleepy, "sleep 2 ms"),
    ] {
        for threads in [1, 2, 4] {
            let mut search = Search::new(MctsConfig::default(), rules, 1);
            search.set_root(&game);
            search.begin(u32::MAX, false);
            let t = Instant::now();
            let deadline = t + Duration::from_secs(2);
            search
                .run_parallel(evaluator, &mut batches(threads), Some(deadline))
                .unwrap();
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{name:<10} {threads} threads: {:>9.0} simulations/s ({} in {secs:.2} s)",
                search.stats().simulations as f64 / secs,
                search.stats().simulations
            );
        }
    }
}
