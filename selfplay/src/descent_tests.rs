use super::*;
use crate::evaluators::HeuristicEvaluator;
use crate::output::GameWriter;
use crate::ubfm::MAX_DISTANCE;
use loa::Variant;

/// The heuristic's values scaled into [−0.4, 0.4]: any value beyond 0.5 in a sample is
/// then a proven result.
struct Damped(HeuristicEvaluator);

impl Evaluator for Damped {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        self.0.evaluate(batch)?;
        for v in &mut batch.values {
            *v *= 0.4;
        }
        Ok(())
    }
    fn name(&self) -> String {
        "damped heuristic".into()
    }
}

fn config(games_per_worker: usize, threads: usize) -> SelfplayConfig {
    SelfplayConfig {
        threads,
        seed: Some(7),
        max_game_plies: 120,
        descent: DescentConfig {
            iterations: 2,
            games_per_worker,
            ..DescentConfig::default()
        },
        ..SelfplayConfig::default()
    }
}

fn play(config: &SelfplayConfig, games: u64, deterministic: bool) -> (Vec<FinishedGame>, Progress) {
    let mut finished = Vec::new();
    let progress = run_descent_selfplay(
        config,
        Arc::new(Damped(HeuristicEvaluator::new())),
        games,
        deterministic,
        &Cancel::never(),
        |g| {
            finished.push(g);
            Ok(())
        },
        |_| {},
    )
    .unwrap();
    (finished, progress)
}

/// Whether `v` is the terminal reward ±(1 − d/1000) of some distance d.
fn is_terminal_reward(v: f32) -> bool {
    (0..=MAX_DISTANCE).any(|d| v.abs() == 1.0 - d as f32 / 1000.0)
}

/// Games are legal and end by the rules or the ply cap; every move played has a
/// sample with its policy target and the outcome; every other valued state is a
/// tree-only sample (value only), once per game, many more than the moves; proven
/// values follow the terminal reward.
#[test]
fn descent_games_record_played_and_tree_samples() {
    let (games, progress) = play(&config(3, 1), 3, false);
    assert_eq!(games.len(), 3);
    assert_eq!(progress.games, 3);
    let moves: usize = games.iter().map(|g| g.moves.len()).sum();
    assert_eq!(progress.positions as usize, moves);
    let mut proven = 0;
    for g in &games {
        let rules = g.rules;
        let mut replay = Game::new(Variant::Standard, rules);
        let played: Vec<&Sample> = g.samples.iter().filter(|s| !s.tree_only).collect();
        assert_eq!(played.len(), g.moves.len());
        for (s, &mv) in played.iter().zip(&g.moves) {
            assert_eq!(&s.position, replay.position());
            let mut legal = s.moves.clone();
            legal.sort_by_key(|m| m.to_bits());
            let mut expected = replay.legal_moves().as_slice().to_vec();
            expected.sort_by_key(|m| m.to_bits());
            assert_eq!(legal, expected);
            assert_eq!(s.policy.len(), s.moves.len());
            assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert_eq!(s.outcome, g.outcome.score_for(s.position.to_move()));
            replay.play(mv).unwrap();
        }
        assert_eq!(
            replay.outcome().is_some(),
            !g.adjudicated,
            "a game ends by the rules or at the cap"
        );
        // A played position's occupancy target is the last position, from its side.
        for s in &played {
            let side = s.position.to_move();
            let last = replay.position();
            assert_eq!(
                s.final_pieces,
                Some([last.pieces(side), last.pieces(side.opponent())])
            );
        }
        let tree: Vec<&Sample> = g.samples.iter().filter(|s| s.tree_only).collect();
        assert!(
            tree.len() > 5 * played.len(),
            "{} tree samples for {} moves",
            tree.len(),
            played.len()
        );
        let mut seen = HashSet::new();
        let played_keys: HashSet<u64> = played.iter().map(|s| s.position.hash()).collect();
        for s in &tree {
            assert!(s.moves.is_empty() && s.policy.is_empty());
            assert_eq!(s.final_pieces, None, "no game ended from a tree-only state");
            assert!((-1.0..=1.0).contains(&s.search_value));
            assert!(seen.insert(s.position.hash()), "a state recorded twice");
            assert!(!played_keys.contains(&s.position.hash()));
            assert!(
                s.position.outcome(&rules).is_none(),
                "finished games are no states"
            );
            if s.search_value.abs() > 0.5 {
                assert!(is_terminal_reward(s.search_value), "{}", s.search_value);
                proven += 1;
            }
        }
    }
    assert!(proven > 0, "lines to the end of the game prove states");
}

/// Tree learning off: only the played positions.
#[test]
fn without_tree_learning_only_played_positions_are_recorded() {
    let mut c = config(2, 1);
    c.descent.tree_learning = false;
    let (games, _) = play(&c, 2, false);
    for g in &games {
        assert_eq!(g.samples.len(), g.moves.len());
        assert!(g.samples.iter().all(|s| !s.tree_only));
    }
}

/// The worker's games share evaluator calls: with 4 games in lockstep the batches are
/// several times those of one game at a time.
#[test]
fn lockstep_games_share_evaluator_batches() {
    let (_, alone) = play(&config(1, 1), 2, false);
    let (_, together) = play(&config(4, 1), 4, false);
    assert!(
        together.mean_batch() > 2.0 * alone.mean_batch(),
        "mean batch {:.1} with 4 games, {:.1} with 1",
        together.mean_batch(),
        alone.mean_batch()
    );
}

/// Deterministic mode: the same games whatever the thread timing; the samples go
/// through a shard and back unchanged.
#[test]
fn deterministic_descent_games_repeat_and_their_shards_read_back() {
    let digest = |games: &[FinishedGame]| -> Vec<String> {
        games
            .iter()
            .map(|g| {
                let moves: Vec<String> = g.moves.iter().map(|m| m.to_string()).collect();
                format!("{} {}", moves.join(" "), g.samples.len())
            })
            .collect()
    };
    let c = config(2, 2);
    let (a, _) = play(&c, 3, true);
    let (b, _) = play(&c, 3, true);
    assert_eq!(digest(&a), digest(&b));
    assert_eq!(a[0].samples, b[0].samples);

    let dir = tempfile::tempdir().unwrap();
    let mut writer = GameWriter::new(dir.path(), 1 << 20, false).unwrap();
    let samples: Vec<Sample> = a.iter().flat_map(|g| g.samples.clone()).collect();
    for g in a {
        writer.add(g).unwrap();
    }
    writer.flush().unwrap();
    let scan = crate::data::read_recent_shards(&dir.path().join("shards"), None).unwrap();
    assert!(scan.skipped.is_empty());
    assert_eq!(scan.samples, samples);
}

/// An evaluator that takes `delay` for every batch.
struct Slow(Damped, std::time::Duration);

impl Evaluator for Slow {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        std::thread::sleep(self.1);
        self.0.evaluate(batch)
    }
    fn name(&self) -> String {
        "slow".into()
    }
}

/// A cancel stops Descent self-play within about half a second even in the middle of
/// a game (here a game of 2 000 iterations a move, minutes long): the games under way
/// are dropped, the call fails with `Error::Cancelled`, and nothing reaches the sink.
#[test]
fn a_cancel_stops_descent_self_play_in_the_middle_of_a_game() {
    let mut c = config(2, 1);
    c.descent.iterations = 2000;
    // Asked 300 ms in; the time is measured from when the cancel first says so.
    let started = std::time::Instant::now();
    let asked = Arc::new(std::sync::OnceLock::<std::time::Instant>::new());
    let seen = asked.clone();
    let cancel = Cancel::when(move || {
        started.elapsed() > std::time::Duration::from_millis(300) && {
            seen.get_or_init(std::time::Instant::now);
            true
        }
    });
    let evaluator = Slow(
        Damped(HeuristicEvaluator::new()),
        std::time::Duration::from_millis(2),
    );
    let mut delivered = 0;
    let e = run_descent_selfplay(
        &c,
        Arc::new(evaluator),
        2,
        false,
        &cancel,
        |_| {
            delivered += 1;
            Ok(())
        },
        |_| {},
    )
    .unwrap_err();
    let took = asked.get().expect("the cancel was asked").elapsed();
    assert!(matches!(e, Error::Cancelled), "{e}");
    assert!(crate::is_cancelled(&e));
    assert_eq!(delivered, 0);
    assert!(took < std::time::Duration::from_millis(1200), "{took:?}");
}

/// The ordinal rule's ranks follow `(1 − ε)·ε^r`, the last rank taking the rest; with
/// ε = 0 the best move always, with one move that move.
#[test]
fn ordinal_ranks_follow_their_distribution() {
    let mut rng = StdRng::seed_from_u64(5);
    let (n, epsilon, draws) = (4, 0.3f32, 200_000);
    let mut counts = [0u32; 4];
    for _ in 0..draws {
        counts[ordinal_rank(&mut rng, n, epsilon)] += 1;
    }
    let e = epsilon as f64;
    let expected = [1.0 - e, (1.0 - e) * e, (1.0 - e) * e * e, e * e * e];
    assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    for (r, (&c, p)) in counts.iter().zip(expected).enumerate() {
        let seen = c as f64 / draws as f64;
        // Four standard deviations of a binomial share.
        let tolerance = 4.0 * (p * (1.0 - p) / draws as f64).sqrt();
        assert!(
            (seen - p).abs() < tolerance,
            "rank {r}: {seen:.4} against {p:.4}"
        );
    }
    assert!((0..1000).all(|_| ordinal_rank(&mut rng, 30, 0.0) == 0));
    assert!((0..1000).all(|_| ordinal_rank(&mut rng, 1, 0.9) == 0));
}

/// Ordinal exploration plays legal, complete games, and explores: its games differ
/// from the greedy ones (ε = 0) of the same seed.
#[test]
fn ordinal_exploration_plays_complete_games() {
    let mut c = config(2, 1);
    c.descent.epsilon = 0.0;
    let (greedy, _) = play(&c, 2, true);
    c.descent.exploration = Exploration::Ordinal;
    c.descent.epsilon = 0.5;
    let (ordinal, _) = play(&c, 2, true);
    for g in &ordinal {
        let mut replay = Game::new(Variant::Standard, g.rules);
        for &mv in &g.moves {
            replay.play(mv).unwrap();
        }
        assert_eq!(replay.outcome().is_some(), !g.adjudicated);
        let played = g.samples.iter().filter(|s| !s.tree_only).count();
        assert_eq!(played, g.moves.len());
    }
    let moves = |games: &[FinishedGame]| -> Vec<Vec<Move>> {
        games.iter().map(|g| g.moves.clone()).collect()
    };
    assert_ne!(moves(&ordinal), moves(&greedy));
}

/// A time limit ends each move's search before its iterations (a million here): the
/// games still finish, moves taking about the limit.
#[test]
fn a_time_limit_ends_each_moves_search() {
    let mut c = config(1, 1);
    c.descent.iterations = 1_000_000;
    c.descent.ms = 20;
    c.max_game_plies = 20;
    let started = std::time::Instant::now();
    let (games, progress) = play(&c, 1, false);
    let took = started.elapsed().as_secs_f64();
    assert_eq!(games.len(), 1);
    let moves = progress.positions as f64;
    assert!(moves >= 1.0);
    assert!(took / moves < 0.5, "{:.3} s a move", took / moves);
    let e = run_descent_selfplay(
        &c,
        Arc::new(Damped(HeuristicEvaluator::new())),
        1,
        true,
        &Cancel::never(),
        |_| Ok(()),
        |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("selfplay.descent.ms"), "{e}");
}
