//! End-to-end tests of `loazero run` (and `selfplay --dir`, `plot` on a run): a tiny
//! configuration on 6×6, resumption after kill -9 at random moments, corrupted files,
//! config errors.

mod common;
use common::run_files::*;
use common::{bin, loazero, temp_dir, text, tiny_run_sets};

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `loazero run` on `dir` for `generations`, with the tiny test config when `with_sets`.
fn run_args(dir: &Path, generations: u32, with_sets: bool) -> Vec<String> {
    let sets = if with_sets { tiny_run_sets() } else { vec![] };
    common::run_args(dir, generations, &sets)
}

#[test]
fn kill_9_at_random_moments_loses_nothing_and_ends_like_an_uninterrupted_run() {
    let tmp = temp_dir();
    let base = tmp.path().to_path_buf();
    let straight = base.join("straight");
    let t0 = Instant::now();
    let out = loazero(&run_args(&straight, 3, true));
    let whole = t0.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    let reference = counts(&straight);
    assert_eq!(
        reference.models,
        ["gen-0000", "gen-0001", "gen-0002", "gen-0003"].map(|m| format!("{m}.safetensors"))
    );
    assert_eq!(reference.loop_games, 18);
    assert_eq!(reference.records, 18);
    assert_eq!(reference.generation_records, [1, 2, 3]);
    assert_eq!(reference.rated, [0, 2, 3]);
    assert_eq!(reference.train_step_in_metrics, 18);
    assert!(text(&out).contains("gen-0003"), "{}", text(&out));

    let killed = base.join("killed");
    let started = Instant::now();
    // Each start is killed once its saved state shows it inside the target phase of a
    // generation ≥ 1 (plus a random few milliseconds), so the cuts land mid-generation.
    // `selfplay+` waits for a shard of the generation (some games committed, others not),
    // `train+` for a training record of the generation (some steps done, others not).
    // Every start passes the same overrides: a kill before config.toml was saved must not
    // fall back to the (big) default.
    let targets = [
        "selfplay+",
        "train+",
        "selfplay",
        "train",
        "rate",
        "selfplay+",
        "train+",
    ];
    let args = run_args(&killed, 3, true);
    let kills = kill_9_during(&killed, &args, &targets, 6, 0x2545_f491_4f6c_dd1d);
    eprintln!("cut in {:?}", kills.cut_at);
    eprintln!(
        "{} kills in {:?} (a whole run: {whole:?}), finished before a kill: {}; \
         {} artefacts committed",
        kills.count,
        started.elapsed(),
        kills.finished,
        kills.committed.len()
    );
    kills.assert_resume_ends_like(&killed, &args, &reference, 5);
}

/// SIGINT or SIGTERM in self-play, training and rating stops the run within seconds at
/// a safe point (exit 130, saying where and how to resume); resuming ends exactly like an
/// uninterrupted run. A second SIGINT stops at once.
/// The last record of `dir/metrics.jsonl`.
fn last_metrics_record(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    serde_json::from_str(text.lines().last().expect("a record")).unwrap()
}

#[test]
fn signals_stop_the_run_at_a_safe_point_and_it_resumes() {
    let tmp = temp_dir();
    let base = tmp.path().to_path_buf();
    let straight = base.join("straight");
    let out = loazero(&run_args(&straight, 3, true));
    assert!(out.status.success(), "{}", text(&out));
    let reference = counts(&straight);

    let dir = base.join("signalled");
    let mut stops = Vec::new();
    for (target, sig) in [
        ("selfplay+", libc::SIGINT),
        ("train+", libc::SIGTERM),
        ("rate", libc::SIGINT),
        ("selfplay", libc::SIGTERM),
    ] {
        let child = Command::new(bin())
            .args(run_args(&dir, 3, true))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A state.json left by the previous stop may already name the target phase.
        wait_for_signal_handlers(&child);
        let t = Instant::now();
        let mut sent = false;
        while t.elapsed() < Duration::from_secs(60) {
            let inside = run_is_inside(&dir, target, 6);
            if inside {
                signal(&child, sig);
                sent = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let out = wait_within(child, Duration::from_secs(20));
        if !sent {
            // The run ended before reaching the phase: nothing to stop.
            assert!(out.status.success(), "{}", text(&out));
            break;
        }
        let t = text(&out);
        if out.status.success() {
            // The signal came as the run was finishing its last step.
            break;
        }
        assert_eq!(out.status.code(), Some(130), "{t}");
        assert!(t.contains("run the same command again to resume"), "{t}");
        // metrics.jsonl says so (what `serve`'s dashboard shows).
        let stop = last_metrics_record(&dir);
        assert_eq!(
            (&stop["kind"], &stop["reason"]),
            (&"stop".into(), &"interrupted".into()),
            "{stop}"
        );
        stops.push(target);
    }
    assert!(stops.len() >= 2, "too few stops: {stops:?}");
    let out = loazero(&run_args(&dir, 3, true));
    assert!(out.status.success(), "{}", text(&out));
    let resumed = counts(&dir);
    assert_eq!(resumed, reference, "after stops in {stops:?}");
    // Finished: its generations are done, the last of them generation 3.
    let stop = last_metrics_record(&dir);
    assert_eq!(
        (&stop["kind"], &stop["reason"], &stop["generation"]),
        (&"stop".into(), &"generations".into(), &3.into()),
        "{stop}"
    );

    // Two signals: the second ends the process at once.
    let again = base.join("twice");
    let child = Command::new(bin())
        .args(run_args(&again, 50, true))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while !again.join("state.json").exists() {
        std::thread::sleep(Duration::from_millis(5));
    }
    wait_for_signal_handlers(&child);
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGINT);
    let out = wait_within(child, Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
}

#[test]
fn corrupt_shards_are_skipped_and_corrupt_models_stop_the_run_cleanly() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let out = loazero(&run_args(&dir, 1, true));
    assert!(out.status.success(), "{}", text(&out));
    // A damaged shard: named, skipped, the run goes on.
    let shard = names(&dir.join("shards"))
        .into_iter()
        .find(|n| n.ends_with(".shard"))
        .unwrap();
    let path = dir.join("shards").join(&shard);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let out = loazero(&run_args(&dir, 2, false));
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains(&shard) && t.contains("skipping"), "{t}");
    assert!(dir.join("models/gen-0002.safetensors").exists());

    // A damaged best model: a clear error naming it, no panic.
    let model = dir.join("models/gen-0002.safetensors");
    std::fs::write(&model, b"not a model").unwrap();
    let out = loazero(&run_args(&dir, 3, false));
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("gen-0002.safetensors"), "{t}");
    assert!(!t.contains("panicked"), "{t}");

    // A damaged checkpoint, likewise.
    std::fs::copy(dir.join("candidates/gen-0002.safetensors"), &model).unwrap();
    std::fs::write(dir.join("checkpoints/latest.safetensors"), b"garbage").unwrap();
    let out = loazero(&run_args(&dir, 3, false));
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("latest.safetensors"), "{t}");
    assert!(!t.contains("panicked"), "{t}");

    // A damaged state file.
    std::fs::write(dir.join("state.json"), b"{\"format\":").unwrap();
    let out = loazero(&run_args(&dir, 3, false));
    let t = text(&out);
    assert!(!out.status.success() && t.contains("state.json"), "{t}");
}

#[test]
fn joined_selfplay_writes_shards_the_loop_trains_on_and_plot_draws_the_run() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let out = loazero(&run_args(&dir, 1, true));
    assert!(out.status.success(), "{}", text(&out));
    let out = Command::new(bin())
        .args(["selfplay", "--dir"])
        .arg(&dir)
        .args(["--games", "3", "--threads", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let ext: Vec<String> = names(&dir.join("shards"))
        .into_iter()
        .filter(|n| n.starts_with("ext-g0001-"))
        .collect();
    assert!(!ext.is_empty(), "{:?}", names(&dir.join("shards")));
    let ext_games: u64 = ext.iter().map(|n| games_in_shard_name(n)).sum();
    assert_eq!(ext_games, 3);
    // The loop's own game count is unaffected; its window includes the joined games.
    let out = loazero(&run_args(&dir, 2, false));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(counts(&dir).loop_games, 12);
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    let window = metrics
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "generation" && v["generation"] == 2)
        .map(|v| v["window"].as_u64().unwrap())
        .next_back()
        .unwrap();
    let samples: usize = names(&dir.join("shards"))
        .iter()
        .map(|n| {
            selfplay::read_shard(&dir.join("shards").join(n))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(
        window as usize, samples,
        "the window holds every shard, joined ones too"
    );
    // No held-out set ships for 6x6: no scores, and the plot says so.
    assert!(metrics
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "generation")
        .all(|v| v["heldout"].is_null()));
    let out = Command::new(bin()).arg("plot").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    for f in ["elo.png", "losses.png", "throughput.png", "policy.png"] {
        let b = std::fs::read(dir.join("plots").join(f)).unwrap();
        assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
    }
    // Not a run directory.
    let out = Command::new(bin())
        .args(["selfplay", "--dir"])
        .arg(dir.join("nothing"))
        .output()
        .unwrap();
    assert!(!out.status.success() && text(&out).contains("not a run directory"));
}

/// `run.background_selfplay_threads`: joined (`ext-…`) shards are written beside the loop;
/// each generation record counts their games and positions; their games count toward
/// `run.games_per_generation`, so the loop plays only the rest; the window trains on
/// both; nothing of the background is left when the run ends. A deterministic run plays
/// none.
#[test]
fn background_selfplay_games_count_toward_each_generation() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let mut args = run_args(&dir, 3, true);
    args.extend(["--set".into(), "run.background_selfplay_threads=1".into()]);
    let out = loazero(&args);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("background self-play: 1 worker threads"),
        "{}",
        text(&out)
    );
    let c = counts(&dir);
    assert_eq!(c.temp_files, 0, "{c:?}");
    let shards = dir.join("shards");
    let ext: Vec<String> = names(&shards)
        .into_iter()
        .filter(|n| n.starts_with("ext-") && n.ends_with(".shard"))
        .collect();
    let ext_positions: usize = ext
        .iter()
        .map(|n| selfplay::read_shard(&shards.join(n)).unwrap().len())
        .sum();
    let generations: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "generation")
        .collect();
    assert_eq!(generations.len(), 3);
    let field = |v: &serde_json::Value, key: &str| {
        v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
    };
    let mut loop_games = 0;
    for v in &generations {
        let own = field(v, "selfplay_games");
        // Restarts aside, the loop plays exactly what the background has not.
        assert_eq!(
            own,
            6u64.saturating_sub(field(v, "background_games")),
            "{v}"
        );
        loop_games += own;
    }
    assert_eq!(c.loop_games, loop_games, "{c:?}");
    let counted: u64 = generations
        .iter()
        .map(|v| {
            v["background_positions"]
                .as_u64()
                .expect("background_positions")
        })
        .sum();
    // Games written after the last generation record (during the final rating) are in
    // the shards but in no record.
    assert!(
        counted > 0 && counted as usize <= ext_positions,
        "{counted} of {ext_positions}"
    );
    let last_window = generations[2]["window"].as_u64().unwrap();
    assert!(
        last_window as usize > 18 * 4,
        "the window holds joined games: {last_window}"
    );

    let other = tmp.path().join("deterministic");
    let mut args = run_args(&other, 1, true);
    for set in [
        "run.background_selfplay_threads=1",
        "run.deterministic=true",
    ] {
        args.extend(["--set".into(), set.into()]);
    }
    let out = loazero(&args);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("background self-play is off: run.deterministic"),
        "{}",
        text(&out)
    );
    let c = counts(&other);
    assert_eq!(c.loop_games, 6, "{c:?}");
    assert!(
        !names(&other.join("shards"))
            .iter()
            .any(|n| n.starts_with("ext-")),
        "no background games in a deterministic run"
    );
}

#[test]
fn config_errors_name_the_key_and_the_used_config_is_saved() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let out = Command::new(bin())
        .args([
            "run",
            "--print-config",
            "--set",
            "selfplay.simulations=7",
            "--dir",
        ])
        .arg(dir.join("r"))
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        t.contains("simulations = 7") && t.contains("[train.net]"),
        "{t}"
    );
    assert!(!dir.join("r").exists(), "--print-config creates nothing");

    let out = Command::new(bin())
        .args(["run", "--set", "selfplay.mcts.cpcut=1", "--dir"])
        .arg(dir.join("r"))
        .output()
        .unwrap();
    assert!(
        !out.status.success() && text(&out).contains("cpcut"),
        "{}",
        text(&out)
    );

    // A negative budget is a clear error (clap once took `-1` for a flag: "unexpected
    // argument"), and nothing is created.
    for minutes in ["-1", "-0.5", "NaN"] {
        let out = Command::new(bin())
            .args(["run", "--minutes", minutes, "--dir"])
            .arg(dir.join("r"))
            .output()
            .unwrap();
        let t = text(&out);
        assert!(!out.status.success(), "{t}");
        assert!(
            t.contains(&format!("--minutes {}", minutes.parse::<f64>().unwrap()))
                && t.contains("must be a number of minutes ≥ 0"),
            "{t}"
        );
        assert!(
            !dir.join("r").exists(),
            "a refused --minutes creates nothing"
        );
    }

    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[run]\ngames_per_generation = 4\n\n[rating]\nevry = 2\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .args(["run", "--config"])
        .arg(&bad)
        .arg("--dir")
        .arg(dir.join("r"))
        .output()
        .unwrap();
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("bad.toml") && t.contains("evry") && t.contains("line 5"),
        "{t}"
    );

    // The saved config holds every key and the overrides.
    let r = dir.join("saved");
    let out = loazero(&run_args(&r, 1, true));
    assert!(out.status.success(), "{}", text(&out));
    let saved = std::fs::read_to_string(r.join("config.toml")).unwrap();
    assert!(
        saved.contains("games_per_generation = 6") && saved.contains("cpuct"),
        "{saved}"
    );
    // A different --config for an existing run is refused.
    let other = dir.join("other.toml");
    std::fs::write(&other, "[selfplay]\nsimulations = 3\n").unwrap();
    let out = Command::new(bin())
        .args(["run", "--config"])
        .arg(&other)
        .arg("--dir")
        .arg(&r)
        .output()
        .unwrap();
    assert!(!out.status.success() && text(&out).contains("already has its config"));
}

#[test]
fn a_standard_run_scores_every_candidate_on_the_held_out_set() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let mut args = run_args(&dir, 2, true);
    for a in args.iter_mut() {
        if a == "selfplay.variant=6x6" {
            *a = "selfplay.variant=standard".into();
        }
    }
    args.extend(["--set".into(), "selfplay.max_game_plies=40".into()]);
    let out = loazero(&args);
    assert!(out.status.success(), "{}", text(&out));
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = metrics
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let heldout: Vec<&serde_json::Value> = records
        .iter()
        .filter(|v| v["kind"] == "generation")
        .map(|v| &v["heldout"])
        .collect();
    assert_eq!(heldout.len(), 2);
    for h in heldout {
        let (top1, top3) = (h["top1"].as_f64().unwrap(), h["top3"].as_f64().unwrap());
        let chance = h["chance_top1"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&top1) && top3 >= top1, "{h}");
        assert!(chance > 0.0 && chance < 0.2, "{h}");
        assert!(h["positions"].as_u64().unwrap() >= 200, "{h}");
    }
    // Generation records carry the self-play batch figures (continuous self-play parks
    // the games still in flight).
    for g in records.iter().filter(|v| v["kind"] == "generation") {
        assert!(g["mean_batch"].as_f64().is_some_and(|b| b >= 1.0), "{g}");
        assert!(
            g["forward_efficiency"].as_f64().is_some_and(|e| e > 0.0),
            "{g}"
        );
        assert!(g["selfplay_in_flight"].as_u64().is_some(), "{g}");
    }
    // Training records carry the policy KL (≥ 0 up to rounding).
    assert!(records
        .iter()
        .filter(|v| v["kind"] == "train")
        .all(|v| v["policy_kl"].as_f64().is_some_and(|kl| kl > -1e-3)));
    let out = Command::new(bin()).arg("plot").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let b = std::fs::read(dir.join("plots").join("policy.png")).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
}

/// SIGTERM stops a joined `selfplay --dir` after it wrote its finished games (exit 130,
/// saying so); every shard it wrote is whole. Two Ctrl-Cs stop it at once.
#[test]
fn signals_stop_joined_selfplay_after_writing_its_finished_games() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let out = loazero(&run_args(&dir, 1, true));
    assert!(out.status.success(), "{}", text(&out));
    let join = || {
        Command::new(bin())
            .args(["selfplay", "--dir"])
            .arg(&dir)
            .args(["--threads", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let ext = || -> Vec<String> {
        names(&dir.join("shards"))
            .into_iter()
            .filter(|n| n.starts_with("ext-"))
            .collect()
    };
    let child = join();
    wait_for_signal_handlers(&child);
    let t = Instant::now();
    while ext().is_empty() {
        assert!(t.elapsed() < Duration::from_secs(60), "no shard written");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, libc::SIGTERM);
    let out = wait_within(child, Duration::from_secs(10));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(
        said.contains("stopped after") && said.contains("run the same command again"),
        "{said}"
    );
    let games: u64 = ext().iter().map(|n| games_in_shard_name(n)).sum();
    assert!(games >= 1);
    for n in ext() {
        selfplay::read_shard(&dir.join("shards").join(&n)).unwrap();
    }
    let records = names(&dir.join("games"))
        .iter()
        .filter(|n| n.starts_with("ext-") && n.ends_with(".txt"))
        .count();
    assert_eq!(records as u64, games, "one record per committed game");

    let child = join();
    wait_for_signal_handlers(&child);
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGINT);
    let out = wait_within(child, Duration::from_secs(3));
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
}

/// `run.net_schedule`: the tiny run's 1×8 network grows into a 2×12 one with an occupancy
/// head in the first training phase (after 1 position); the metrics name the shape of
/// every generation and its occupancy loss (self-play's shards carry the final pieces),
/// and the run resumes from the grown checkpoint.
#[test]
fn a_run_grows_its_network_on_schedule_and_resumes_with_the_grown_one() {
    let tmp = temp_dir();
    let dir = tmp.path().join("grows");
    let mut sets = tiny_run_sets();
    sets.push(
        "run.net_schedule=[{ after_positions = 1, net = { blocks = 2, channels = 12, \
         global_pool_every = 1, policy_channels = 4, value_channels = 6, value_hidden = 8, \
         occupancy_head = true } }]"
            .into(),
    );
    let out = loazero(&common::run_args(&dir, 2, &sets));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("the network grows from 1x8 to 2x12+occupancy"),
        "{}",
        text(&out)
    );
    let nets = |dir: &Path| -> Vec<String> {
        std::fs::read_to_string(dir.join("metrics.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["kind"] == "generation")
            .map(|v| {
                v["net"]
                    .as_str()
                    .expect("net in a generation record")
                    .to_string()
            })
            .collect()
    };
    assert_eq!(nets(&dir), ["2x12+occupancy", "2x12+occupancy"]);
    let occupancy: Vec<f64> = std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == "generation")
        .map(|v| v["occupancy_loss"].as_f64().expect("an occupancy loss"))
        .collect();
    assert_eq!(occupancy.len(), 2);
    assert!(
        occupancy.iter().all(|&o| o > 0.0 && o.is_finite()),
        "{occupancy:?}"
    );
    // Resumed (the saved config has the schedule): the grown checkpoint trains on.
    let out = loazero(&common::run_args(&dir, 3, &sets));
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("the network grows"), "{}", text(&out));
    assert_eq!(
        nets(&dir),
        ["2x12+occupancy", "2x12+occupancy", "2x12+occupancy"]
    );
    // Without the schedule the grown checkpoint is refused, by name.
    sets.push("run.net_schedule=[]".into());
    let out = loazero(&common::run_args(&dir, 4, &sets));
    assert!(!out.status.success());
    assert!(text(&out).contains("run.net_schedule"), "{}", text(&out));
}

/// `--minutes` counts the whole run: a resume with a budget the run already used is
/// refused with the `--minutes` that goes on, and the run's config keeps its budget
/// (it used to stop at once, print the ratings and save the smaller budget).
#[test]
fn a_resume_with_a_used_up_budget_says_how_to_go_on_and_keeps_the_config() {
    let tmp = temp_dir();
    let dir = tmp.path().join("r");
    let mut args = run_args(&dir, 1, true);
    args.extend(["--minutes".into(), "30".into()]);
    let out = loazero(&args);
    assert!(out.status.success(), "{}", text(&out));
    let config = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(config.contains("minutes = 30.0"), "{config}");
    let mut again = run_args(&dir, 2, true);
    again.extend(["--minutes".into(), "0.001".into()]);
    let out = loazero(&again);
    assert!(!out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("counts the whole run"), "{t}");
    let suggested: f64 = t
        .split("pass --minutes ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no --minutes to pass: {t}"));
    assert!(suggested > 0.0, "{t}");
    assert_eq!(
        std::fs::read_to_string(dir.join("config.toml")).unwrap(),
        config
    );
}

/// The quick recipe of the README (`--config configs/quick.toml`) on a generation budget:
/// each generation self-plays, trains, is gated and scored on the held-out positions, the
/// rating rounds its config asks for happen, and the run ends by rating its best model.
/// Nothing here depends on the machine's speed (a time budget would: under the other
/// tests of this file a 1.5-minute run once ran out before its last rating); how many
/// generations the recipe's 3 minutes hold is a speed figure, measured by `make
/// bench-quick` (scripts/bench_quick.sh).
#[test]
fn the_quick_recipe_trains_gates_and_rates_its_generations() {
    let tmp = temp_dir();
    let dir = tmp.path().join("quick");
    let config = common::repo_path("configs/quick.toml");
    let out = loazero(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
        "--minutes",
        "0",
        "--generations",
        "4",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("no time limit"), "{t}");
    let c = counts(&dir);
    assert_eq!(c.generation_records, [1, 2, 3, 4], "{t}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    let promoted = state["promoted"].as_u64().unwrap();
    let rejected = state["rejected"].as_u64().unwrap();
    assert_eq!(promoted + rejected, 4, "every generation is gated: {state}");
    let best = state["best"].as_u64().unwrap();
    // quick.toml rates every 4 generations: generation 0, the best at generation 4, and
    // the best at the end (the same model when nothing was promoted since).
    assert_eq!(c.rated.first(), Some(&0), "{state}");
    assert_eq!(
        c.rated.last(),
        Some(&best),
        "the best model is rated at the end: {state}"
    );
    let ratings = std::fs::read_to_string(dir.join("ratings.csv")).unwrap();
    let best_name = format!("gen-{best:04}");
    assert!(
        ratings
            .lines()
            .any(|l| l.starts_with(&format!("{best_name},"))),
        "{best_name} not in ratings.csv:\n{ratings}"
    );
    // Every generation is scored on the held-out positions (the learning signal the run
    // prints: top-1 against chance).
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    let heldout: Vec<f64> = metrics
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == "generation")
        .map(|v| v["heldout"]["top1"].as_f64().expect("a held-out top-1"))
        .collect();
    assert_eq!(heldout.len(), 4, "{metrics}");
    let printed = t
        .lines()
        .filter(|l| l.contains("| held-out top-1 ") && l.contains("% (chance "))
        .count();
    assert_eq!(
        printed, 4,
        "each generation's line prints its held-out top-1: {t}"
    );
}

/// Without a terminal every match's progress line counts its own games: the anchors'
/// `rating.anchor_games`, the models' `rating.games` (both used to show the larger).
#[test]
fn match_progress_lines_count_each_matchs_games() {
    let tmp = temp_dir();
    let dir = tmp.path().join("r");
    let mut args = run_args(&dir, 1, true);
    args.extend(["--set".into(), "rating.anchor_games=4".into()]);
    let out = loazero(&args);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("random vs alphabeta:depth=1 (0/4)"), "{t}");
    assert!(t.contains("gen-0000 vs random (0/2)"), "{t}");
}
