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
//!
//! Then the read-only commands on the same store (`read_only_views`): `plot`, `ratings`,
//! `replay` (a worker's game and one of the trainer's own) and `serve --store`, which shows
//! the run's generations, leave the store's listing (keys and sizes) exactly as it was; a
//! third trainer, started on the second one's cache, downloads none of the shards that cache
//! holds, and `serve` shows the generation it publishes.

mod common;
#[allow(dead_code)] // the S3 helpers of the store crate's tests; this file uses some
#[path = "../store/tests/s3_server/mod.rs"]
mod s3_server;

use common::{bin, bundle_files, temp_dir, tiny_run_sets, Server};
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
    let mut c = Command::new(bin());
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

/// The whole scenario on the store `spec` (opened by the test with `open`), with `env` for
/// the processes and their caches in `tmp`: a worker started before the run, a trainer for 2
/// generations, a second trainer (another cache, `tmp/t2`: its working copy is rebuilt from
/// the store) to generation 4.
fn trainer_and_worker(
    spec: &str,
    env: &[(String, String)],
    open: &dyn Fn() -> Arc<dyn Store>,
    tmp: &tempfile::TempDir,
) {
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

/// Every object of the store: key and size.
fn listing(store: &dyn Store) -> Vec<(String, u64)> {
    store
        .list("")
        .unwrap()
        .into_iter()
        .map(|l| (l.key.to_string(), l.size))
        .collect()
}

/// `loazero ARGS --store SPEC --cache CACHE` to its end, which must succeed: what it
/// printed.
fn read_only(args: &[&str], spec: &str, cache: &Path, env: &[(String, String)]) -> String {
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.extend([
        "--store".into(),
        spec.into(),
        "--cache".into(),
        cache.display().to_string(),
    ]);
    let out = run(&all, env);
    let printed = text(&out);
    assert!(out.status.success(), "loazero {all:?}:\n{printed}");
    printed
}

/// The read-only commands on the store of [`trainer_and_worker`] (module doc). `name` is
/// the run's name in the web app (the store's last path segment).
fn read_only_views(
    spec: &str,
    name: &str,
    env: &[(String, String)],
    open: &dyn Fn() -> Arc<dyn Store>,
    tmp: &tempfile::TempDir,
) {
    let store = open();
    let before = listing(store.as_ref());
    let cache = tmp.path().join("view-cache");

    let printed = read_only(&["plot"], spec, &cache, env);
    assert!(printed.contains("trainer epoch 2"), "{printed}");
    for png in ["elo.png", "losses.png", "throughput.png"] {
        assert!(cache.join("plots").join(png).is_file(), "{png}: {printed}");
    }
    let printed = read_only(&["ratings"], spec, &cache, env);
    assert!(
        printed.contains(", 0 changed)") && printed.contains("0 files removed"),
        "the second command downloads only what may have changed, and nothing had: {printed}"
    );
    assert!(
        printed.contains("gen-0004") && printed.contains("random"),
        "{printed}"
    );

    // A worker's game (its name as in the trainer's working copy) and one of the trainer's.
    let shard = store.list("shards").unwrap()[0].key.clone();
    let worker_record = &bundle_files(&store.get(&shard).unwrap())[1].0;
    let worker_game = format!("games/joined-{worker_record}");
    let own_game = store
        .list("loop/e00000002/games")
        .unwrap()
        .first()
        .map(|l| {
            l.key
                .as_str()
                .trim_start_matches("loop/e00000002/")
                .to_string()
        })
        .expect("the trainer's own game records");
    for game in [&worker_game, &own_game] {
        let printed = read_only(&["replay", game.as_str()], spec, &cache, env);
        assert!(printed.contains("result: "), "{game}: {printed}");
    }
    let missing = run(
        &[
            "replay".into(),
            "games/none.txt".into(),
            "--store".into(),
            spec.into(),
            "--cache".into(),
            cache.display().to_string(),
        ],
        env,
    );
    assert!(
        !missing.status.success()
            && text(&missing).contains(&format!(
                "--store {spec}: the run has no file games/none.txt"
            )),
        "{}",
        text(&missing)
    );

    let log = tmp.path().join("serve.log");
    let server = Server::start_with(
        &[
            "--store",
            spec,
            "--cache",
            &cache.display().to_string(),
            "--refresh",
            "0.5",
        ],
        env,
        Stdio::from(std::fs::File::create(&log).unwrap()),
    );
    let models = |server: &Server| -> Vec<String> {
        let runs = server.get_json("/api/runs");
        assert_eq!(runs["runs"][0]["name"], name, "{runs}");
        assert_eq!(runs["runs"][0]["dir"], spec, "{runs}");
        runs["runs"][0]["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        models(&server),
        ["gen-0000", "gen-0001", "gen-0002", "gen-0003", "gen-0004"]
    );
    let metrics = server.get_json(&format!("/api/runs/{name}/metrics"));
    let generations: Vec<u64> = metrics["generations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["generation"].as_u64().unwrap())
        .collect();
    assert_eq!(generations, [1, 2, 3, 4], "{metrics}");
    assert!(!metrics["elo"].as_array().unwrap().is_empty(), "{metrics}");
    let game = server.get_json(&format!("/api/runs/{name}/game?path={worker_game}"));
    assert!(
        game["moves"].as_array().is_some_and(|m| !m.is_empty()),
        "{game}"
    );
    // Let the view refresh a few times: still nothing written to the store.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        listing(store.as_ref()),
        before,
        "the read-only commands changed the store"
    );

    // One more generation, by a trainer on the second one's cache: it keeps the shards it
    // holds, and serve picks the new model up.
    let third = run(&trainer_args(spec, &tmp.path().join("t2"), 5), env);
    let printed = text(&third);
    assert!(third.status.success(), "{printed}");
    assert!(printed.contains("trainer epoch 3"), "{printed}");
    let kept: usize = printed
        .split(" kept from the cache")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no rebuild report: {printed}"));
    assert!(kept > audit_shards(store.as_ref()), "{printed}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while models(&server).len() < 6 {
        assert!(
            Instant::now() < deadline,
            "serve did not show gen-0005 within 60 s: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let metrics = server.get_json(&format!("/api/runs/{name}/metrics"));
    assert!(
        metrics["generations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["generation"] == 5),
        "{metrics}"
    );
}

/// The shards some generation added.
fn audit_shards(store: &dyn Store) -> usize {
    store::commit::verify(store).unwrap().shards_added
}

#[test]
fn a_trainer_and_a_worker_share_a_file_store() {
    let tmp = temp_dir();
    let spec = format!("file://{}/store", tmp.path().display());
    let open = || store::open(&spec).unwrap();
    trainer_and_worker(&spec, &[], &open, &tmp);
    read_only_views(&spec, "store", &[], &open, &tmp);
}

/// The read-only commands name a store that is malformed, missing or holds no run, and
/// write nothing there.
#[test]
fn read_only_commands_name_a_bad_missing_or_empty_store() {
    let tmp = temp_dir();
    let cache = tmp.path().join("cache").display().to_string();
    let missing = tmp.path().join("missing");
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for (spec, expected) in [
        (
            "ftp://host/x".to_string(),
            "unknown scheme ftp://".to_string(),
        ),
        (
            format!("file://{}", missing.display()),
            format!("--store file://{}: no such directory", missing.display()),
        ),
        (
            empty.display().to_string(),
            format!("--store {} holds no run", empty.display()),
        ),
    ] {
        for command in [vec!["plot"], vec!["ratings"], vec!["replay", "games/x.txt"]] {
            let mut args: Vec<String> = command.iter().map(|a| a.to_string()).collect();
            args.extend([
                "--store".into(),
                spec.clone(),
                "--cache".into(),
                cache.clone(),
            ]);
            let out = run(&args, &[]);
            let printed = text(&out);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {printed}");
            assert!(printed.contains(&expected), "{args:?}: {printed}");
            assert!(!printed.contains("panicked"), "{printed}");
        }
    }
    assert!(
        !missing.exists(),
        "a read-only command created the store's directory"
    );
    assert_eq!(
        std::fs::read_dir(&empty).unwrap().count(),
        0,
        "nothing written"
    );
}

/// `run --store --print-config` takes `--minutes` and `--generations` as `run --dir` does,
/// for a new run and for one in the store.
#[test]
fn print_config_of_a_store_run_takes_minutes_and_generations() {
    let tmp = temp_dir();
    let spec = format!("file://{}/store", tmp.path().display());
    let print = |extra: &[&str]| -> String {
        let mut args: Vec<String> = ["run", "--store", spec.as_str(), "--print-config"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        args.extend(extra.iter().map(|a| a.to_string()));
        let out = run(&args, &[]);
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let printed = print(&["--minutes", "7.5", "--generations", "3"]);
    assert!(printed.contains("minutes = 7.5"), "{printed}");
    assert!(printed.contains("generations = 3"), "{printed}");
    let printed = print(&["--variant", "6x6"]);
    assert!(printed.contains("variant = \"6x6\""), "{printed}");
    store::open(&spec)
        .unwrap()
        .put(
            &store::Key::new("config.toml").unwrap(),
            b"[selfplay]\nvariant = \"6x6\"\n[run]\nminutes = 2.0\n",
        )
        .unwrap();
    let printed = print(&["--generations", "9"]);
    assert!(
        printed.contains("minutes = 2.0") && printed.contains("generations = 9"),
        "{printed}"
    );
    let mut args: Vec<String> = [
        "run",
        "--store",
        spec.as_str(),
        "--print-config",
        "--variant",
        "standard",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.push("--minutes".into());
    args.push("1".into());
    let out = run(&args, &[]);
    assert!(
        !out.status.success() && text(&out).contains("is a 6x6 run"),
        "{}",
        text(&out)
    );
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
    let tmp = temp_dir();
    let open = || server.open("runs/e2e");
    trainer_and_worker(&spec, &env, &open, &tmp);
    read_only_views(&spec, "e2e", &env, &open, &tmp);
}
