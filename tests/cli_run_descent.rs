//! End-to-end test of a `run.algorithm = "descent"` run: a tiny 6×6 run cut by kill -9
//! at random moments resumes and ends like an uninterrupted one; its shards hold played
//! and tree-only samples that the existing trainer reads and trains on; a joined
//! `selfplay --dir` plays Descent too.

mod common;
use common::run_files::*;
use common::{bin, loazero, temp_dir, text, tiny_run_sets};

use loa::Variant;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use train::{ReplayWindow, Trainer};

/// The tiny test run with Descent self-play.
fn descent_args(dir: &Path, generations: u32) -> Vec<String> {
    let mut sets = tiny_run_sets();
    sets.extend(
        [
            "run.algorithm=descent",
            "selfplay.descent.iterations=2",
            "selfplay.descent.games_per_worker=3",
            "selfplay.max_game_plies=60",
        ]
        .map(String::from),
    );
    common::run_args(dir, generations, &sets)
}

/// The samples of the shards in `dir` whose names start with `prefix`: (played,
/// tree-only).
fn sample_kinds(dir: &Path, prefix: &str) -> (usize, usize) {
    let mut kinds = (0, 0);
    for name in names(&dir.join("shards")) {
        if !name.starts_with(prefix) || !name.ends_with(".shard") {
            continue;
        }
        for s in selfplay::read_shard(&dir.join("shards").join(&name)).unwrap() {
            if s.tree_only {
                assert!(s.policy.is_empty() && s.moves.is_empty());
                kinds.1 += 1;
            } else {
                assert_eq!(s.policy.len(), s.moves.len());
                kinds.0 += 1;
            }
        }
    }
    kinds
}

#[test]
fn a_descent_run_resumes_after_kill_9_and_its_shards_train() {
    let tmp = temp_dir();
    let base = tmp.path().to_path_buf();
    let straight = base.join("straight");
    let t0 = Instant::now();
    let out = loazero(&descent_args(&straight, 3));
    let whole = t0.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    let reference = counts(&straight);
    assert_eq!(reference.loop_games, 18);
    assert_eq!(reference.generation_records, [1, 2, 3]);
    assert_eq!(reference.rated, [0, 2, 3]);
    assert_eq!(reference.train_step_in_metrics, 18);
    let config = std::fs::read_to_string(straight.join("config.toml")).unwrap();
    assert!(config.contains("algorithm = \"descent\""), "{config}");
    // Tree learning: many more samples than moves played.
    let (played, tree) = sample_kinds(&straight, "loop-");
    assert!(
        played > 0 && tree > 3 * played,
        "{played} played, {tree} tree-only"
    );

    let killed = base.join("killed");
    let args = descent_args(&killed, 3);
    let targets = [
        "selfplay+",
        "train+",
        "selfplay",
        "rate",
        "selfplay+",
        "train",
    ];
    let kills = kill_9_during(&killed, &args, &targets, 6, 0x9e37_79b9_7f4a_7c15);
    eprintln!(
        "{} kills (a whole run: {whole:?}), finished before a kill: {}",
        kills.count, kills.finished
    );
    kills.assert_resume_ends_like(&killed, &args, &reference, 3);

    // The shards load in the existing trainer, which trains on them.
    let mut window = ReplayWindow::new(1 << 20, Variant::Six);
    let report = window.refresh(&killed.join("shards")).unwrap();
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let (played, tree) = sample_kinds(&killed, "");
    assert_eq!(window.len(), played + tree);
    let mut trainer =
        Trainer::resume(&killed.join("checkpoints/latest.safetensors"), None).unwrap();
    let before = trainer.step();
    let summary = trainer.train(&window, 2, None).unwrap();
    assert_eq!(trainer.step(), before + 2);
    assert!(summary.stats.value_loss.is_finite() && summary.stats.value_loss > 0.0);

    // A joined `selfplay --dir` follows the run's algorithm: its shards have tree-only
    // samples too.
    let out = loazero(&[
        "selfplay",
        "--dir",
        killed.to_str().unwrap(),
        "--games",
        "2",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let (played, tree) = sample_kinds(&killed, "ext-");
    assert!(
        played > 0 && tree > played,
        "{played} played, {tree} tree-only"
    );
}

/// The last record of `dir/metrics.jsonl`.
fn last_metrics_record(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    serde_json::from_str(text.lines().last().expect("a record")).unwrap()
}

/// Rating anchors whose games last far longer than the test waits (about 0.3 s a move):
/// only a stop between moves ends their match within seconds.
const SLOW_ANCHORS: &str = "rating.anchors=[\"mcts:evaluator=uniform,sims=200000\", \
                            \"mcts:evaluator=uniform,sims=200001\"]";
/// Descent moves of many seconds each: only a stop between expansions ends a game
/// within seconds.
const SLOW_DESCENT: &str = "selfplay.descent.iterations=20000";
/// The tiny run's own (fast) settings of the two.
const FAST: [&str; 2] = [
    "rating.anchors=[\"random\", \"alphabeta:depth=1\"]",
    "selfplay.descent.iterations=2",
];

/// [`descent_args`] with `sets` added.
fn args_with(dir: &Path, generations: u32, sets: &[&str]) -> Vec<String> {
    let mut args = descent_args(dir, generations);
    for s in sets {
        args.push("--set".into());
        args.push(s.to_string());
    }
    args
}

/// Starts `loazero ARGS` with its output piped, once it catches SIGINT and SIGTERM.
fn start(args: &[String]) -> std::process::Child {
    let child = Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_signal_handlers(&child);
    child
}

/// Waits (up to 60 s) until `ready` holds for the run in `dir`, then a second more.
fn wait_until(dir: &Path, what: &str, ready: impl Fn(&Path) -> bool) {
    let t = Instant::now();
    while !ready(dir) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "never reached {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(1));
}

/// Sends SIGTERM to `child` and asserts that it exits within `prompt` with the
/// interrupted status (130); `what` names the phase it was in. Its output.
fn sigterm_stops(child: std::process::Child, prompt: Duration, what: &str) -> std::process::Output {
    signal(&child, libc::SIGTERM);
    let t = Instant::now();
    let out = wait_within(child, Duration::from_secs(300));
    let took = t.elapsed();
    assert!(took < prompt, "stopped {took:?} after SIGTERM in {what}");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    out
}

/// SIGTERM stops a run within seconds in the middle of a rating game of the initial
/// rating and in the middle of a Descent self-play game (whose games and moves last far
/// longer), and the run resumes to its end; the time budget cuts both phases as
/// promptly, keeps the time used, and a resumed run with a larger budget goes on.
#[test]
fn sigterm_and_the_time_budget_stop_ratings_and_descent_games_within_seconds() {
    let tmp = temp_dir();
    let prompt = Duration::from_secs(6);

    // SIGTERM in the initial rating's first anchor match.
    let dir = tmp.path().join("signalled");
    let child = start(&args_with(&dir, 1, &[SLOW_ANCHORS, SLOW_DESCENT]));
    wait_until(&dir, "the anchor match", |d| {
        d.join("matches/anchors-0/results.jsonl").exists()
    });
    let out = sigterm_stops(child, prompt, "a rating game");
    assert!(text(&out).contains("run the same command again to resume"));
    assert_eq!(last_metrics_record(&dir)["reason"], "interrupted");

    // Resumed with fast anchors: SIGTERM in the middle of the first Descent game.
    let child = start(&args_with(&dir, 1, &[FAST[0], SLOW_DESCENT]));
    wait_until(&dir, "self-play", |d| run_is_inside(d, "selfplay", 6));
    sigterm_stops(child, prompt, "a Descent game");
    assert_eq!(run_position(&dir), Some((1, "selfplay".into())));
    assert_eq!(counts(&dir).loop_games, 0, "no game can have finished");
    // Resumed with fast Descent: the run ends.
    let out = loazero(&args_with(&dir, 1, &FAST));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(counts(&dir).loop_games, 6);
    assert_eq!(last_metrics_record(&dir)["reason"], "generations");

    let elapsed = |dir: &Path| -> f64 {
        let state = std::fs::read_to_string(dir.join("state.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&state).unwrap()["elapsed_s"]
            .as_f64()
            .unwrap()
    };
    // With 20 s more and a second generation, the time budget cuts its first Descent
    // game.
    let before = elapsed(&dir);
    let minutes = format!("run.minutes={}", (before + 20.0) / 60.0);
    let out = loazero(&args_with(&dir, 2, &[FAST[0], SLOW_DESCENT, &minutes]));
    assert!(out.status.success(), "{}", text(&out));
    // Measured by the run's own clock, which starts with the loop (not with the process,
    // whose start and torch load a busy machine slows): the budget's end, then the cut.
    let took = elapsed(&dir) - before;
    assert!(took < 20.0 + prompt.as_secs_f64(), "{took} s");
    let t = text(&out);
    assert!(
        t.contains("ran out in generation 2's Selfplay phase"),
        "{t}"
    );
    assert_eq!(run_position(&dir), Some((2, "selfplay".into())));
    assert_eq!(last_metrics_record(&dir)["reason"], "time-budget");
    assert!(elapsed(&dir) >= before + 19.9, "the time used is kept");

    // The time budget (6 s) cuts the initial rating of a new run ... (20 anchor games: the
    // slow anchors' 2 games took only 4.4 s on a 2-core Xeon, where the MCTS-solver settles
    // 6x6 games early, so the rating ended inside the budget and nothing was cut).
    let dir = tmp.path().join("budget");
    let sets = [
        SLOW_ANCHORS,
        SLOW_DESCENT,
        "run.minutes=0.1",
        "rating.anchor_games=20",
    ];
    let t = Instant::now();
    let out = loazero(&args_with(&dir, 0, &sets));
    let took = t.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    assert!(took < Duration::from_secs(6) + prompt, "{took:?}");
    let t = text(&out);
    assert!(t.contains("ran out in generation 0's Rate phase"), "{t}");
    assert_eq!(last_metrics_record(&dir)["reason"], "time-budget");
    assert!(elapsed(&dir) >= 6.0, "the time used is kept");
    // ... and a run with the same budget stops at once.
    let t = Instant::now();
    let out = loazero(&args_with(&dir, 0, &sets));
    assert!(out.status.success(), "{}", text(&out));
    assert!(t.elapsed() < prompt, "{:?}", t.elapsed());
}
