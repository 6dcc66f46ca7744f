//! End-to-end tests of a run kept in a store: `loazero run --store` (a trainer, stopped and
//! resumed by a second trainer that rebuilds its working copy from the store) with one
//! `loazero selfplay --store` worker beside it, on a directory store and on a real S3 server
//! (`s3s-fs` on 127.0.0.1, started by the test; skipped with a notice when it is missing,
//! failed under `CI`). Guarantees relied on: sequential create-only conflicts and
//! read-after-write (both back ends; no two trainers race here).
//!
//! At the end: `store::commit::verify` finds the log contiguous, one entry per generation,
//! every model with its recorded sha256 and every added shard added once; the worker's shards
//! were added; each committed shard holds its games' records; the second trainer resumed
//! where the first stopped.

mod common;
#[allow(dead_code)] // the S3 helpers of the store crate's tests; this file uses some
#[path = "../store/tests/s3_server/mod.rs"]
mod s3_server;

use common::{temp_dir, tiny_run_sets, BIN};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::Store;

/// The `--set`s of the tiny run, with self-play records on.
fn sets() -> Vec<String> {
    let mut sets = tiny_run_sets();
    sets.push("selfplay.write_game_records=true".into());
    sets
}

fn command(args: &[String], env: &[(String, String)]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn run(args: &[String], env: &[(String, String)]) -> Output {
    command(args, env).output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn trainer_args(spec: &str, cache: &Path, generations: u32) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        "--store".into(),
        spec.into(),
        "--cache".into(),
        cache.display().to_string(),
        "--generations".into(),
        generations.to_string(),
    ];
    for s in sets() {
        args.push("--set".into());
        args.push(s);
    }
    args
}

/// Stops a worker as Ctrl-C would and returns what it printed.
fn stop(mut worker: Child) -> Output {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(worker.id() as libc::pid_t, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(120);
    while worker.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the worker did not stop in 120 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    worker.wait_with_output().unwrap()
}

/// The files of a shard bundle (`src/run/bundle.rs`): (name, size), the shard first.
fn bundle_files(bytes: &[u8]) -> Vec<(String, usize)> {
    let mut rest = bytes
        .strip_prefix(b"loazero-shard-bundle 1\n".as_slice())
        .expect("a shard bundle");
    let mut files = Vec::new();
    while !rest.is_empty() {
        let len = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
        let name = String::from_utf8(rest[4..4 + len].to_vec()).unwrap();
        rest = &rest[4 + len..];
        let size = u64::from_le_bytes(rest[..8].try_into().unwrap()) as usize;
        rest = &rest[8 + size..];
        files.push((name, size));
    }
    files
}

/// The whole scenario on the store `spec` (opened by the test with `open`), with `env` for
/// the processes: a worker started before the run, a trainer for 2 generations, a second
/// trainer (another cache: its working copy is rebuilt from the store) to generation 4.
fn trainer_and_worker(spec: &str, env: &[(String, String)], open: &dyn Fn() -> Arc<dyn Store>) {
    let tmp = temp_dir();
    let worker = command(
        &[
            "selfplay".into(),
            "--store".into(),
            spec.into(),
            "--cache".into(),
            tmp.path().join("w").display().to_string(),
        ],
        env,
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let first = run(&trainer_args(spec, &tmp.path().join("t1"), 2), env);
    assert!(first.status.success(), "{}", text(&first));
    assert!(text(&first).contains("trainer epoch 1"), "{}", text(&first));
    // The second trainer adds the worker's shards committed by then (the tiny generations
    // take a second or two, so wait for some).
    let deadline = Instant::now() + Duration::from_secs(120);
    while open().list("shards").unwrap().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the worker committed no shard in 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let second = run(&trainer_args(spec, &tmp.path().join("t2"), 4), env);
    let printed = text(&second);
    assert!(second.status.success(), "{printed}");
    assert!(printed.contains("trainer epoch 2"), "{printed}");
    assert!(printed.contains("workers' shards from"), "{printed}");
    assert!(
        printed.contains("generation 3 (Selfplay)"),
        "resumed where the first stopped: {printed}"
    );
    assert!(
        printed.contains(" | store ")
            && printed.contains(" mirror ")
            && printed.contains(" publish "),
        "the progress lines say the seconds in store operations: {printed}"
    );
    let worker = stop(worker);
    let printed = text(&worker);
    assert!(
        printed.contains("every finished game is committed"),
        "{printed}"
    );
    assert!(
        printed.contains(" games with gen-"),
        "the worker played: {printed}"
    );

    let store = open();
    let audit = store::commit::verify(store.as_ref()).unwrap();
    assert!(audit.is_clean(), "{:?}", audit.violations);
    assert_eq!(
        audit.generations, 5,
        "gen-0000 … gen-0004 once each: {audit:?}"
    );
    assert_eq!(audit.takeovers, 2, "{audit:?}");
    assert!(
        audit.shards_added >= 1,
        "the worker's shards were trained on: {audit:?}"
    );
    assert_eq!(audit.shards_stale, 0, "{audit:?}");
    for listed in store.list("shards").unwrap() {
        let files = bundle_files(&store.get(&listed.key).unwrap());
        let shard = &files[0].0;
        let games: usize = shard
            .trim_end_matches(".shard")
            .rsplit('-')
            .nth(3)
            .and_then(|k| k.strip_prefix('n'))
            .and_then(|k| k.parse().ok())
            .unwrap_or_else(|| panic!("{}: shard {shard}", listed.key));
        assert_eq!(
            files.len(),
            1 + games,
            "{}: a record per game: {files:?}",
            listed.key
        );
        assert!(files.iter().all(|(_, size)| *size > 0), "{files:?}");
    }
    let metrics = store
        .get(&store::Key::new("loop/e00000002/metrics.jsonl").unwrap())
        .unwrap();
    let metrics = String::from_utf8_lossy(&metrics);
    assert!(metrics.contains("\"stop\""), "the second trainer's metrics");
    let generations: Vec<serde_json::Value> = metrics
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["kind"] == "generation")
        .collect();
    // The first trainer's records (restored from its loop files) and the second's.
    let numbers: Vec<u64> = generations
        .iter()
        .map(|r| r["generation"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4], "{metrics}");
    for record in &generations {
        for field in [
            "store_pull_seconds",
            "store_mirror_seconds",
            "store_publish_seconds",
        ] {
            let seconds = record[field].as_f64();
            assert!(
                seconds.is_some_and(|s| (0.0..60.0).contains(&s)),
                "{field} of a store run's generation record: {record}"
            );
        }
    }
    assert!(store
        .size(&store::Key::new("loop/e00000002/state.json").unwrap())
        .unwrap()
        .is_some());
}

#[test]
fn a_trainer_and_a_worker_share_a_file_store() {
    let tmp = temp_dir();
    let spec = format!("file://{}/store", tmp.path().display());
    trainer_and_worker(&spec, &[], &|| store::open(&spec).unwrap());
}

#[test]
fn a_trainer_and_a_worker_share_an_s3_server() {
    let Some(binary) = s3_server::binary_or_skip("a_trainer_and_a_worker_share_an_s3_server")
    else {
        return;
    };
    let server = s3_server::S3Server::start(&binary, true);
    let env: Vec<(String, String)> = server
        .options(server.port)
        .into_iter()
        .map(|(k, v)| (k.to_ascii_uppercase(), v))
        .collect();
    let spec = format!("s3://{}/runs/e2e", s3_server::BUCKET);
    trainer_and_worker(&spec, &env, &|| server.open("runs/e2e"));
}
