//! Tests of parallel self-play: legal games, the continuous and deterministic schedules,
//! every variant, resignation, shards and records, cancels, evaluator and sink errors.

use super::*;
use crate::evaluators::{HeuristicEvaluator, UniformEvaluator};
use crate::output::{game_record_text, GameWriter};

fn small_config() -> SelfplayConfig {
    SelfplayConfig {
        simulations: 48,
        games_per_worker: 4,
        threads: 2,
        seed: Some(9),
        mcts: crate::MctsConfig {
            cheap_simulations: 16,
            full_search_probability: 0.5,
            ..crate::MctsConfig::default()
        },
        ..SelfplayConfig::default()
    }
}

/// `games` games of self-play under `config` with the heuristic evaluator, and the
/// final progress.
fn heuristic_games(config: &SelfplayConfig, games: u64) -> (Vec<FinishedGame>, Progress) {
    let mut finished = Vec::new();
    let progress = run_selfplay(
        config,
        Arc::new(HeuristicEvaluator::new()),
        games,
        Schedule::RunOut,
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

#[test]
fn games_are_legal_and_samples_consistent() {
    let config = small_config();
    let mut finished = Vec::new();
    let mut calls = 0;
    let progress = run_selfplay(
        &config,
        Arc::new(HeuristicEvaluator::new()),
        10,
        Schedule::RunOut,
        &Cancel::never(),
        |g| {
            finished.push(g);
            Ok(())
        },
        |_| calls += 1,
    )
    .unwrap();
    assert_eq!(finished.len(), 10);
    assert_eq!(progress.games, 10);
    assert!(calls >= 1);
    let (positions, full) = check_games(&finished);
    assert_eq!(progress.positions, positions);
    assert!(
        full > 0 && full < positions,
        "playout cap: {full} of {positions}"
    );
}

/// Continuous self-play: every call hands exactly the requested number of games to
/// its sink, parks what is in flight, and the next call finishes the parked games
/// (with its own evaluator); every game, parked or not, is complete and legal.
#[test]
fn continuous_self_play_parks_games_and_finishes_them_next_call() {
    let config = small_config();
    let mut parked = ParkedGames::default();
    let mut all = Vec::new();
    let mut played = 0u64;
    for round in 0..3 {
        let mut finished = Vec::new();
        let evaluator: Arc<dyn Evaluator> = if round == 1 {
            Arc::new(UniformEvaluator::new())
        } else {
            Arc::new(HeuristicEvaluator::new())
        };
        let progress = run_selfplay(
            &config,
            evaluator,
            5,
            Schedule::Continuous(&mut parked),
            &Cancel::never(),
            |g| {
                finished.push(g);
                Ok(())
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(finished.len(), 5, "round {round}");
        assert_eq!(progress.games, 5);
        // Two workers of four slots each: at most eight carried over.
        let carried = parked.in_flight() + parked.finished();
        assert!((1..=8).contains(&carried), "round {round}: {carried}");
        played += progress.positions;
        all.extend(finished);
    }
    let (delivered, _) = check_games(&all);
    // No move is lost or played twice: every move played is in a delivered game or
    // in a game still parked.
    assert_eq!(played, delivered + parked.positions() as u64);
    // A call with nothing to play hands over parked finished games only.
    let mut parked = ParkedGames::default();
    run_selfplay(
        &config,
        Arc::new(HeuristicEvaluator::new()),
        0,
        Schedule::Continuous(&mut parked),
        &Cancel::never(),
        |_| Err("no game expected".into()),
        |_| {},
    )
    .unwrap();
    assert_eq!(parked.in_flight(), 0);
}

/// Checks finished games: the moves replay to the recorded end (unless resigned or
/// adjudicated), each sample holds its position, exactly its legal moves, a policy
/// summing to 1 over them (full searches) and the outcome for its side to move; the
/// text record replays. Returns (samples, samples with a policy).
fn check_games(finished: &[FinishedGame]) -> (u64, u64) {
    let mut full = 0;
    let mut positions = 0;
    for g in finished {
        positions += g.samples.len() as u64;
        let mut game = Game::from_position(g.start, g.rules);
        assert_eq!(
            g.samples.len(),
            g.moves.len() + g.resigned.is_some() as usize
        );
        for (i, s) in g.samples.iter().enumerate() {
            assert_eq!(s.position, *game.position());
            assert_eq!(s.position.ply(), game.position().ply());
            let mut legal: Vec<u16> = game.legal_moves().iter().map(|m| m.to_bits()).collect();
            let mut moves: Vec<u16> = s.moves.iter().map(|m| m.to_bits()).collect();
            legal.sort_unstable();
            moves.sort_unstable();
            assert_eq!(moves, legal, "{}", s.position.to_text());
            if !s.policy.is_empty() {
                full += 1;
                assert_eq!(s.policy.len(), s.moves.len());
                assert!(s.policy.iter().all(|&p| p >= 0.0));
                assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-3);
            }
            assert!((-1.0..=1.0).contains(&s.search_value));
            assert_eq!(s.outcome, g.outcome.score_for(s.position.to_move()));
            if let Some(&mv) = g.moves.get(i) {
                assert!(s.moves.contains(&mv));
                game.play(mv).unwrap();
            }
        }
        // Every sample's occupancy target is the last position, from its side.
        for s in &g.samples {
            let side = s.position.to_move();
            let want = [
                game.position().pieces(side),
                game.position().pieces(side.opponent()),
            ];
            assert_eq!(s.final_pieces, Some(want));
        }
        if g.resigned.is_none() && !g.adjudicated {
            assert_eq!(game.outcome(), Some(g.outcome));
        } else {
            assert!(!game.is_over());
        }
        // The text record replays.
        let text = game_record_text(g);
        let record = loa::GameRecord::parse(&text).unwrap();
        assert_eq!(record.moves.len(), g.moves.len());
        let mut replay = Game::from_position(g.start, g.rules);
        for m in &record.moves {
            replay.play_text(m).unwrap();
        }
        assert_eq!(replay.position(), game.position());
    }
    (positions, full)
}

/// Everything a game consists of, as text: its record and every sample's position,
/// moves, policy and value bits.
fn game_digest(g: &FinishedGame) -> String {
    let mut s = game_record_text(g);
    for x in &g.samples {
        let policy: Vec<u32> = x.policy.iter().map(|p| p.to_bits()).collect();
        let moves: Vec<u16> = x.moves.iter().map(|m| m.to_bits()).collect();
        s.push_str(&format!(
            "{} {moves:?} {policy:?} {} {} {:?}\n",
            x.position.to_text(),
            x.search_value.to_bits(),
            x.outcome.to_bits(),
            x.final_pieces
        ));
    }
    s
}

fn deterministic_games(config: &SelfplayConfig, evaluator: Arc<dyn Evaluator>) -> Vec<String> {
    let mut games = Vec::new();
    let p = run_selfplay(
        config,
        evaluator,
        9,
        Schedule::Deterministic,
        &Cancel::never(),
        |g| {
            games.push(game_digest(&g));
            Ok(())
        },
        |_| {},
    )
    .unwrap();
    assert_eq!(p.games, 9);
    games
}

/// An evaluator like a batching service whose float rounding depends on the batch:
/// its values change with the size of the call's batch and with the number of calls
/// in flight at once (which a service would merge), and it answers after a delay
/// taken from the clock. Timing, or merged calls, would change the games.
struct BatchSensitive(HeuristicEvaluator, AtomicU64);

impl Evaluator for BatchSensitive {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        self.1.fetch_add(1, Ordering::SeqCst);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        std::thread::sleep(Duration::from_micros(nanos as u64 % 400));
        let merged = self.1.load(Ordering::SeqCst);
        self.0.evaluate(batch)?;
        let scale = 1.0 - 1e-3 * batch.len() as f32 - 1e-2 * merged as f32;
        batch.values.iter_mut().for_each(|v| *v *= scale);
        self.1.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    }
    fn name(&self) -> String {
        "batch-sensitive".into()
    }
}

/// Deterministic self-play on three workers plays the same games, handed over in the
/// same order, whatever the timing, even with an evaluator whose answers depend on
/// the batch; it needs a seed.
#[test]
fn deterministic_self_play_does_not_depend_on_thread_timing() {
    let config = SelfplayConfig {
        threads: 3,
        games_per_worker: 2,
        resign_disabled_fraction: 0.5,
        resign_min_ply: 10,
        ..small_config()
    };
    let evaluator = || -> Arc<dyn Evaluator> {
        Arc::new(BatchSensitive(HeuristicEvaluator::new(), AtomicU64::new(0)))
    };
    let first = deterministic_games(&config, evaluator());
    for _ in 0..2 {
        assert!(first == deterministic_games(&config, evaluator()));
    }
    let other_seed = SelfplayConfig {
        seed: Some(10),
        ..config.clone()
    };
    assert!(first != deterministic_games(&other_seed, evaluator()));
    let unseeded = SelfplayConfig {
        seed: None,
        ..config
    };
    let e = run_selfplay(
        &unseeded,
        evaluator(),
        1,
        Schedule::Deterministic,
        &Cancel::never(),
        |_| Ok(()),
        |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("seed"), "{e}");
}

/// Each game has its own seed: with an evaluator that answers each position alone,
/// one worker or three play the same games.
#[test]
fn deterministic_games_do_not_depend_on_the_number_of_workers() {
    let one = SelfplayConfig {
        threads: 1,
        games_per_worker: 4,
        ..small_config()
    };
    let three = SelfplayConfig {
        threads: 3,
        games_per_worker: 2,
        ..small_config()
    };
    let evaluator = || -> Arc<dyn Evaluator> { Arc::new(HeuristicEvaluator::new()) };
    assert!(deterministic_games(&one, evaluator()) == deterministic_games(&three, evaluator()));
}

#[test]
fn every_variant_self_plays_complete_games() {
    for variant in loa::Variant::ALL {
        for gumbel in [false, true] {
            let mut config = SelfplayConfig {
                variant,
                resign_disabled_fraction: 0.5,
                resign_min_ply: 10,
                ..small_config()
            };
            config.mcts.gumbel = gumbel;
            let (finished, progress) = heuristic_games(&config, 4);
            assert_eq!(finished.len(), 4);
            assert!(finished.iter().all(|g| g.start.variant() == variant));
            let (positions, full) = check_games(&finished);
            assert_eq!(progress.positions, positions);
            assert!(full > 0, "{variant}");
            // Games end by the rules (or resignation), not at the ply cap.
            assert!(finished.iter().all(|g| !g.adjudicated), "{variant}");
            if variant == loa::Variant::Parachute {
                // Compound turns: moves then drops, so the side to move repeats.
                let pending = finished
                    .iter()
                    .flat_map(|g| &g.samples)
                    .filter(|s| s.position.drop_pending())
                    .count();
                assert!(pending >= 4 * 6, "{pending}");
            }
        }
    }
}

#[test]
fn resignation_disabled_games_count_false_resignations() {
    let config = SelfplayConfig {
        resign_threshold: 0.5, // absurdly high: both sides "want" to resign
        resign_disabled_fraction: 1.0,
        resign_min_ply: 0,
        ..small_config()
    };
    let (finished, p) = heuristic_games(&config, 6);
    assert!(finished
        .iter()
        .all(|g| g.resign_disabled && g.resigned.is_none()));
    assert!(p.would_resign > 0);
    // With a threshold above 0, the winner's side also "wanted" to resign sometime.
    assert!(p.false_resignations > 0);
    let config = SelfplayConfig {
        resign_threshold: 0.5,
        resign_disabled_fraction: 0.0,
        resign_min_ply: 4,
        ..small_config()
    };
    let mut resigned = 0;
    run_selfplay(
        &config,
        Arc::new(HeuristicEvaluator::new()),
        4,
        Schedule::RunOut,
        &Cancel::never(),
        |g| {
            resigned += g.resigned.is_some() as u32;
            assert!(g.moves.len() >= 4);
            Ok(())
        },
        |_| {},
    )
    .unwrap();
    assert_eq!(resigned, 4);
}

#[test]
fn writer_produces_readable_shards_and_records() {
    let dir = tempfile::tempdir().unwrap();
    let config = SelfplayConfig {
        shard_samples: 50,
        ..small_config()
    };
    let mut writer = GameWriter::new(dir.path(), config.shard_samples, true).unwrap();
    let p = run_selfplay(
        &config,
        Arc::new(UniformEvaluator::new()),
        5,
        Schedule::RunOut,
        &Cancel::never(),
        |g| writer.add(g).map_err(|e| e.to_string()),
        |_| {},
    )
    .unwrap();
    writer.flush().unwrap();
    let scan = crate::data::read_recent_shards(&dir.path().join("shards"), None).unwrap();
    assert!(scan.skipped.is_empty());
    assert_eq!(scan.samples.len() as u64, p.positions);
    assert_eq!(writer.samples_written, p.positions);
    assert!(writer.shards_written.len() >= 2);
    let records = std::fs::read_dir(dir.path().join("games")).unwrap().count();
    assert_eq!(records, 5);
}

#[test]
fn gumbel_self_play_runs() {
    let mut config = small_config();
    config.mcts.gumbel = true;
    config.mcts.full_search_probability = 1.0;
    let mut samples = 0;
    run_selfplay(
        &config,
        Arc::new(HeuristicEvaluator::new()),
        3,
        Schedule::RunOut,
        &Cancel::never(),
        |g| {
            for s in &g.samples {
                assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-3);
                samples += 1;
            }
            Ok(())
        },
        |_| {},
    )
    .unwrap();
    assert!(samples > 0);
}

/// A cancel stops MCTS self-play within about half a second of the moment it is asked
/// for (here: once the first game has finished, however long a busy machine takes to
/// get there): the games finished before it reach the sink, the call fails with
/// `Error::Cancelled`; a call with nothing left to play succeeds whatever its cancel
/// says.
#[test]
fn a_cancel_stops_self_play_and_keeps_the_finished_games() {
    let asked = Arc::new(std::sync::OnceLock::<Instant>::new());
    let seen = asked.clone();
    let cancel = Cancel::when(move || seen.get().is_some());
    let mut finished = 0;
    let e = run_selfplay(
        &small_config(),
        Arc::new(HeuristicEvaluator::new()),
        1_000_000,
        Schedule::RunOut,
        &cancel,
        |_| {
            finished += 1;
            asked.get_or_init(Instant::now);
            Ok(())
        },
        |_| {},
    )
    .unwrap_err();
    let took = asked.get().expect("a game finished").elapsed();
    assert!(matches!(e, Error::Cancelled), "{e}");
    assert!(finished > 0);
    assert!(took < Duration::from_millis(1500), "{took:?}");
    let always = Cancel::when(|| true);
    let mut parked = ParkedGames::default();
    let p = run_selfplay(
        &small_config(),
        Arc::new(HeuristicEvaluator::new()),
        0,
        Schedule::Continuous(&mut parked),
        &always,
        |_| Ok(()),
        |_| {},
    )
    .unwrap();
    assert_eq!(p.games, 0);
}

#[test]
fn evaluator_errors_stop_the_run() {
    struct Broken;
    impl Evaluator for Broken {
        fn evaluate(&self, _: &mut EvalBatch) -> Result<(), Error> {
            Err(Error::Eval("device lost".into()))
        }
        fn name(&self) -> String {
            "broken".into()
        }
    }
    let e = run_selfplay(
        &small_config(),
        Arc::new(Broken),
        3,
        Schedule::RunOut,
        &Cancel::never(),
        |_| Ok(()),
        |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("device lost"), "{e}");
    let e = run_selfplay(
        &small_config(),
        Arc::new(UniformEvaluator::new()),
        3,
        Schedule::RunOut,
        &Cancel::never(),
        |_| Err("disk full".into()),
        |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("disk full"), "{e}");
}
