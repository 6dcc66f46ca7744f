//! `run.deterministic = true` (docs/training.md, "Reproducibility"): two runs of the same
//! config and seed on the CPU write the same shards, game records, models, candidates,
//! checkpoint and gate decisions, byte for byte, and so does a run killed with SIGKILL at
//! random moments of self-play, training and gating and then resumed. The tiny 6×6 run of
//! the other end-to-end tests, with two self-play workers (whose batches would otherwise
//! mix) and a gate that can reject.

mod common;
use common::run_files::kill_9_during;
use common::{loazero, temp_dir, text, tiny_run_sets};

use std::collections::BTreeMap;
use std::path::Path;

const GENERATIONS: u32 = 3;

fn sets() -> Vec<String> {
    let mut sets = tiny_run_sets();
    sets.extend(
        [
            "run.deterministic=true",
            "selfplay.threads=2",
            "selfplay.games_per_worker=2",
            "run.gate=true",
            "run.gate_simulations=8",
            "gate.max_games=2",
            "gate.threshold=0.5",
            "rating.every=0",
        ]
        .map(String::from),
    );
    sets
}

fn run_args(dir: &Path) -> Vec<String> {
    common::run_args(dir, GENERATIONS, &sets())
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// What a deterministic run must reproduce, by path: every shard, game record, promoted
/// model, candidate, the trainer's checkpoint, and every gate decision.
fn artefacts(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for sub in ["shards", "games", "models", "candidates", "checkpoints"] {
        for n in names(&dir.join(sub)) {
            let bytes = std::fs::read(dir.join(sub).join(&n)).unwrap();
            out.insert(format!("{sub}/{n}"), bytes);
        }
    }
    for m in names(&dir.join("matches")) {
        let decision = dir.join("matches").join(&m).join("decision.json");
        if let Ok(b) = std::fs::read(&decision) {
            out.insert(format!("matches/{m}/decision.json"), b);
        }
    }
    out
}

/// The artefacts that differ between two runs (or exist in one only), for messages.
fn differences(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| k.to_string())
        .collect()
}

/// A finished run of [`sets`] in `dir`; its artefacts.
fn straight_run(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let out = loazero(&run_args(dir));
    assert!(out.status.success(), "{}", text(&out));
    let files = artefacts(dir);
    for g in 1..=GENERATIONS {
        let prefix = format!("shards/loop-g{g:04}-");
        assert!(files.keys().any(|k| k.starts_with(&prefix)), "{files:?}");
        assert!(files.contains_key(&format!("candidates/gen-{g:04}.safetensors")));
    }
    files
}

#[test]
fn deterministic_runs_write_the_same_shards_and_weights() {
    let tmp = temp_dir();
    let a = straight_run(&tmp.path().join("a"));
    let b = straight_run(&tmp.path().join("b"));
    assert!(a == b, "differ: {:?}", differences(&a, &b));
}

/// Each start is killed once its saved state shows it inside the target phase of a
/// generation ≥ 1 (`selfplay+`: some of the generation's shards written; `train+`: some
/// of its steps done), after a random few milliseconds; the last start runs to the end.
#[test]
fn a_deterministic_run_killed_and_resumed_ends_bit_for_bit_like_an_uninterrupted_one() {
    let tmp = temp_dir();
    let reference = straight_run(&tmp.path().join("straight"));
    let killed = tmp.path().join("killed");
    let targets = [
        "selfplay+",
        "train+",
        "gate",
        "selfplay+",
        "train+",
        "selfplay",
    ];
    let kills = kill_9_during(
        &killed,
        &run_args(&killed),
        &targets,
        6,
        0x9E37_79B9_7F4A_7C15,
    );
    let cuts: Vec<String> = targets
        .iter()
        .zip(&kills.cut_at)
        .map(|(target, at)| format!("{target} at {at:?}"))
        .collect();
    eprintln!("cut: {cuts:?}");
    assert!(cuts.len() >= 3, "too few cuts: {cuts:?}");
    let out = loazero(&run_args(&killed));
    assert!(out.status.success(), "{}", text(&out));
    let resumed = artefacts(&killed);
    assert!(
        resumed == reference,
        "after cuts {cuts:?}, differ: {:?}",
        differences(&resumed, &reference)
    );
}

/// A deterministic run keeps the precisions it resolved `auto` to in `state.json`
/// (`pinned_precision`), and a resumed process computes in those rather than in what it
/// would measure now (which a busy machine, or a CPU where `float` and `bfloat16` time
/// close, can decide otherwise): the kept inference precision is swapped for the other
/// one by hand, and the resumed run reports inference in it.
#[test]
fn a_deterministic_run_resumes_in_the_precision_it_began_with() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let out = loazero(&common::run_args(&dir, 1, &sets()));
    assert!(out.status.success(), "{}", text(&out));
    let state_path = dir.join("state.json");
    let mut state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state_path).unwrap()).unwrap();
    let pin = state["pinned_precision"].clone();
    let began = pin["inference"]
        .as_str()
        .unwrap_or_else(|| panic!("no pin: {state}"));
    assert!(["float", "bfloat16"].contains(&began), "{pin}");
    assert!(
        ["float", "bfloat16"].contains(&pin["training"].as_str().unwrap()),
        "{pin}"
    );
    let other = if began == "float" {
        "bfloat16"
    } else {
        "float"
    };
    state["pinned_precision"]["inference"] = other.into();
    std::fs::write(&state_path, state.to_string()).unwrap();

    let out = loazero(&common::run_args(&dir, 2, &sets()));
    assert!(out.status.success(), "{}", text(&out));
    let all = text(&out);
    let says =
        |l: &str| l.contains("inference on") && l.trim_end().ends_with(&format!(" in {other}"));
    assert!(all.lines().any(says), "resumed not in {other}: {all}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state_path).unwrap()).unwrap();
    assert_eq!(state["pinned_precision"]["inference"], other, "{state}");
}
