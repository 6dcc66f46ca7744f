//! End-to-end test of a `run.algorithm = "descent"` run: a tiny 6×6 run cut by kill -9
//! at random moments resumes and ends like an uninterrupted one; its shards hold played
//! and tree-only samples that the existing trainer reads and trains on; a joined
//! `selfplay --dir` plays Descent too.

mod common;
use common::run_files::*;
use common::{loazero, temp_dir, text, tiny_run_sets};

use loa::Variant;
use std::path::Path;
use std::time::Instant;
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
