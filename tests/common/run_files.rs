//! What the tests of a run directory share: file names and counts, the committed
//! artefacts of a run, signals to a child process and waiting for it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// The sorted file names in `dir` (none if it does not exist).
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The game count of a shard name `<prefix>-n<K>-<millis>-<pid>-<seq>.shard`.
pub fn games_in_shard_name(name: &str) -> u64 {
    let k = name.trim_end_matches(".shard").rsplit('-').nth(3).unwrap();
    k.strip_prefix('n').unwrap().parse().unwrap()
}

/// What must be equal between an interrupted and an uninterrupted run.
#[derive(Debug, PartialEq)]
pub struct Counts {
    pub models: Vec<String>,
    pub candidates: Vec<String>,
    pub loop_games: u64,
    pub records: usize,
    pub generation_records: Vec<u64>,
    pub rated: Vec<u64>,
    pub generation: u64,
    pub train_step_in_metrics: u64,
    pub temp_files: usize,
}

pub fn counts(dir: &Path) -> Counts {
    let loop_games = names(&dir.join("shards"))
        .iter()
        .filter(|n| n.starts_with("loop-") && n.ends_with(".shard"))
        .map(|n| games_in_shard_name(n))
        .sum();
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    let mut gens = std::collections::BTreeSet::new();
    let mut step = 0;
    for line in metrics.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("whole metrics lines");
        match v["kind"].as_str() {
            Some("generation") => {
                gens.insert(v["generation"].as_u64().unwrap());
            }
            Some("train") => step = step.max(v["step"].as_u64().unwrap()),
            _ => {}
        }
    }
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    let temp_files = ["shards", "games", "models", "candidates", "checkpoints"]
        .iter()
        .flat_map(|d| names(&dir.join(d)))
        .filter(|n| n.contains(".tmp"))
        .count();
    Counts {
        models: names(&dir.join("models")),
        candidates: names(&dir.join("candidates")),
        loop_games,
        records: names(&dir.join("games")).len(),
        generation_records: gens.into_iter().collect(),
        rated: state["rated"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect(),
        generation: state["generation"].as_u64().unwrap(),
        train_step_in_metrics: step,
        temp_files,
    }
}

/// Committed artefacts and their bytes: shards, promoted models, candidates, records
/// of written shards, finished matches.
pub fn artefacts(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let shards = names(&dir.join("shards"));
    for sub in ["shards", "models", "candidates", "games"] {
        for n in names(&dir.join(sub)) {
            if n.starts_with('.') {
                continue;
            }
            if sub == "games" {
                let stem = n.rsplit_once('-').unwrap().0;
                if !shards.contains(&format!("{stem}.shard")) {
                    continue; // records of a shard never written: not committed
                }
            }
            let p = dir.join(sub).join(&n);
            out.insert(format!("{sub}/{n}"), std::fs::read(p).unwrap());
        }
    }
    for m in names(&dir.join("matches")) {
        let done = dir.join("matches").join(&m).join("done.json");
        if let Ok(b) = std::fs::read(&done) {
            out.insert(format!("matches/{m}/done.json"), b);
            let r = dir.join("matches").join(&m).join("results.jsonl");
            out.insert(
                format!("matches/{m}/results.jsonl"),
                std::fs::read(r).unwrap(),
            );
        }
    }
    out
}

/// The highest step of the training records in `metrics.jsonl` (0 if none).
pub fn max_train_step(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "train")
        .filter_map(|v| v["step"].as_u64())
        .max()
        .unwrap_or(0)
}

/// A small deterministic pseudo-random sequence for kill times.
pub fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Sends `signal` to a child process.
pub fn signal(child: &std::process::Child, signal: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
}

/// Waits until `child` catches SIGINT and SIGTERM (bits of `SigCgt` in
/// `/proc/PID/status`), so a signal sent next reaches the run's handler rather than
/// killing a process still starting up.
pub fn wait_for_signal_handlers(child: &std::process::Child) {
    let status = format!("/proc/{}/status", child.id());
    let wanted = (1u64 << (libc::SIGINT - 1)) | (1u64 << (libc::SIGTERM - 1));
    let t = Instant::now();
    loop {
        let caught = std::fs::read_to_string(&status)
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("SigCgt:"))
                    .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            })
            .unwrap_or(0);
        if caught & wanted == wanted {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the run did not install its signal handlers within 20 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Waits up to `limit` for `child` to exit; its output, or a failure naming the limit.
pub fn wait_within(mut child: std::process::Child, limit: Duration) -> Output {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("the process did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Where the run in `dir` stands by its `state.json`: (generation, phase), if readable.
pub fn run_position(dir: &Path) -> Option<(u64, String)> {
    let text = std::fs::read_to_string(dir.join("state.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some((
        v["generation"].as_u64().unwrap_or(0),
        v["phase"].as_str().unwrap_or("").to_string(),
    ))
}

/// Whether the run in `dir` is inside `target` of a generation ≥ 1: a phase (`selfplay`,
/// `train`, `gate`, `rate`), or `selfplay+` (some of the generation's shards written) or
/// `train+` (some of its steps done, with `steps_per_generation` steps a generation).
pub fn run_is_inside(dir: &Path, target: &str, steps_per_generation: u64) -> bool {
    let Some((g, phase)) = run_position(dir) else {
        return false;
    };
    let want = target.trim_end_matches('+');
    let deep = !target.ends_with('+')
        || match want {
            "selfplay" => names(&dir.join("shards"))
                .iter()
                .any(|n| n.starts_with(&format!("loop-g{g:04}-"))),
            _ => max_train_step(dir) > (g.max(1) - 1) * steps_per_generation,
        };
    phase == want && g >= 1 && deep
}

/// What [`kill_9_during`] did to a run.
pub struct Kills {
    /// Starts killed.
    pub count: usize,
    /// Whether a start finished before its kill (no later start was made then).
    pub finished: bool,
    /// Where the run stood ([`run_position`]) just before each kill.
    pub cut_at: Vec<Option<(u64, String)>>,
    /// The targets a start never reached within 30 s (it was killed there all the same).
    pub missed: Vec<String>,
    /// Every artefact committed between the kills, as last seen.
    pub committed: BTreeMap<String, Vec<u8>>,
}

/// Starts `loazero args` (a run in `dir`) once per target of `targets` and kills it with
/// SIGKILL a pseudo-random 0 to 59 ms (drawn from `seed`) after it is inside that target
/// ([`run_is_inside`] with `steps_per_generation`), or after 30 s; stops early when a start
/// finishes before its kill. After each kill, asserts that no artefact committed before
/// was rewritten with other content.
pub fn kill_9_during(
    dir: &Path,
    args: &[String],
    targets: &[&str],
    steps_per_generation: u64,
    mut seed: u64,
) -> Kills {
    let mut kills = Kills {
        count: 0,
        finished: false,
        cut_at: Vec::new(),
        missed: Vec::new(),
        committed: BTreeMap::new(),
    };
    for &target in targets {
        let mut child = std::process::Command::new(super::bin())
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let t = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                kills.finished = true;
                return kills;
            }
            let at = run_position(dir);
            let inside = run_is_inside(dir, target, steps_per_generation);
            if inside || t.elapsed() > Duration::from_secs(30) {
                if !inside {
                    kills.missed.push(target.to_string());
                }
                std::thread::sleep(Duration::from_millis(next(&mut seed) % 60));
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                kills.count += 1;
                kills.cut_at.push(at);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        for (name, bytes) in artefacts(dir) {
            if let Some(old) = kills.committed.get(&name) {
                assert_eq!(old, &bytes, "{name} was rewritten with other content");
            }
            kills.committed.insert(name, bytes);
        }
    }
    kills
}

impl Kills {
    /// Asserts that at least `min_kills` starts were killed (fewer: the run ends too fast
    /// to be cut) and that every kill landed in the phase it targeted, then that one more
    /// start of `loazero args` runs to the end and leaves
    /// `dir` as an uninterrupted run left it (its `reference` counts), with no temporary
    /// file and every artefact committed before any of the kills unchanged.
    pub fn assert_resume_ends_like(
        &self,
        dir: &Path,
        args: &[String],
        reference: &Counts,
        min_kills: usize,
    ) {
        assert!(
            self.count >= min_kills,
            "too few kills ({}): the run ends too fast to be cut",
            self.count
        );
        assert!(
            self.missed.is_empty(),
            "kills that never reached their target phase: {:?} (cut in {:?})",
            self.missed,
            self.cut_at
        );
        let out = super::loazero(args);
        assert!(out.status.success(), "{}", super::text(&out));
        let resumed = counts(dir);
        assert_eq!(
            &resumed, reference,
            "after {} kills, cut in {:?}",
            self.count, self.cut_at
        );
        assert_eq!(resumed.temp_files, 0);
        let now = artefacts(dir);
        for (name, bytes) in &self.committed {
            assert_eq!(now.get(name), Some(bytes), "{name} changed or vanished");
        }
    }
}
