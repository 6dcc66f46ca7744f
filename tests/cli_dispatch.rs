//! The two binaries (`cli/src/main.rs`): `loazero` runs the torch-free commands itself
//! without libtorch in the process, and replaces itself by `loazero-torch` for anything that
//! uses a network (a missing `loazero-torch`: `cli/tests/alone.rs`).

mod common;
use common::{bin, last_line, text, tiny_model, Engine};

use std::path::PathBuf;
use std::process::{Command, Output};

/// The file name of `engine`'s running executable and whether libtorch is mapped into it.
fn exe_and_torch(engine: &Engine) -> (String, bool) {
    let proc = PathBuf::from(format!("/proc/{}", engine.child.id()));
    let exe = std::fs::read_link(proc.join("exe")).unwrap();
    let maps = std::fs::read_to_string(proc.join("maps")).unwrap();
    (
        exe.file_name().unwrap().to_string_lossy().into_owned(),
        maps.contains("libtorch"),
    )
}

/// Asserts that `bestmove` succeeded with a legal move from the standard start.
fn assert_a_first_move(o: &Output) {
    assert!(o.status.success(), "{}", text(o));
    let rules = loa::Rules::classic();
    let start = loa::Position::start(loa::Variant::Standard, &rules);
    assert!(
        start.parse_move(&last_line(o), &rules).is_ok(),
        "{}",
        text(o)
    );
}

#[test]
fn torch_free_commands_run_without_libtorch() {
    let o = Command::new(bin())
        .args(["perft", "--depth", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(last_line(&o), "36");
    let o = Command::new(bin())
        .args(["bestmove", "--player", "alphabeta:depth=1"])
        .output()
        .unwrap();
    assert_a_first_move(&o);

    let mut e = Engine::start("alphabeta:depth=1");
    assert_eq!(e.ask_last("isready"), "readyok");
    assert_eq!(exe_and_torch(&e), ("loazero".to_string(), false));
    assert!(e.ask_last("genmove").starts_with("move "));
}

/// A learned alpha-beta evaluation under a run's `models/` loads no network: the command
/// line mentions "models" but stays in the torch-free binary.
#[test]
fn a_learned_evaluation_stays_torch_free() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("runs/default/models");
    std::fs::create_dir_all(&models).unwrap();
    let nnue = models.join("nnue-0001.safetensors");
    let shipped = common::repo_path("data/shipped/models/nnue-0001.safetensors");
    std::fs::copy(shipped, &nnue).unwrap();
    let mut e = Engine::start(&format!("alphabeta:depth=1,eval={}", nnue.display()));
    assert_eq!(e.ask_last("isready"), "readyok");
    assert_eq!(exe_and_torch(&e), ("loazero".to_string(), false));
    assert!(e.ask_last("genmove").starts_with("move "));
}

/// The process ids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// The torch-free engine asked for a model player hands the session over to
/// `loazero-torch engine`, its child, with the position and the rest replayed; the
/// session goes on there, and a missing model file is named, the old player kept.
#[test]
fn the_torch_free_engine_hands_a_model_player_over() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let model = tiny_model(dir.path());
    let mut e = Engine::start("alphabeta:depth=1");
    assert_eq!(e.ask_last("play b1-b3"), "ok");
    let show = e.ask_last("show");
    assert!(children(e.child.id()).is_empty());
    let missing = dir.path().join("gone.safetensors");
    let reply = e.ask_last(&format!("player model:path={},sims=4", missing.display()));
    assert!(
        reply.starts_with("error player '") && reply.contains("gone.safetensors"),
        "{reply}"
    );
    // The old player stays, in the child now.
    let out = e.ask("genmove");
    assert!(out[0].starts_with("info depth 1 "), "{out:?}");
    assert!(out.last().unwrap().starts_with("move "), "{out:?}");
    assert_eq!(e.ask_last("undo"), "ok");
    assert_eq!(e.ask_last("show"), show);
    assert_eq!(
        e.ask_last(&format!("player model:path={},sims=4", model.display())),
        "ok"
    );
    assert_eq!(e.ask_last("isready"), "readyok");
    let out = e.ask("genmove");
    assert!(out[0].starts_with("info "), "{out:?}");
    assert!(out.last().unwrap().starts_with("move "), "{out:?}");
    assert_eq!(exe_and_torch(&e), ("loazero".to_string(), false));
    let child = children(e.child.id());
    assert_eq!(child.len(), 1, "{child:?}");
    let exe = std::fs::read_link(format!("/proc/{}/exe", child[0])).unwrap();
    assert_eq!(exe.file_name().unwrap(), "loazero-torch");
    assert_eq!(e.ask("quit"), ["ok bye"]);
    assert!(e.child.wait().unwrap().success());
}

/// The engine's strength levels (`level`): the rated players of the run given with
/// `--levels` (here a copy of the shipped run) listed weakest first, each as its rating
/// played it; `level 1` plays random in the torch-free engine, and a model's level hands
/// the session over to `loazero-torch` and plays there.
#[test]
fn the_engine_plays_a_runs_rated_players_as_levels() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("shipped");
    std::fs::create_dir_all(run.join("models")).unwrap();
    let shipped = common::repo_path("data/shipped");
    for file in [
        "ratings.csv",
        "config.toml",
        "models/gen-0099.safetensors",
        "models/nnue-0001.safetensors",
    ] {
        std::fs::copy(shipped.join(file), run.join(file)).unwrap();
    }
    let mut e = Engine::start_with(&[
        "--player",
        "alphabeta:depth=1",
        "--levels",
        run.to_str().unwrap(),
    ]);
    e.send("level");
    let mut levels = Vec::new();
    loop {
        let line = e.line();
        if line == "end" {
            break;
        }
        assert!(
            line.starts_with(&format!("level {} ", levels.len() + 1)),
            "{line}"
        );
        levels.push(line);
    }
    assert!(levels[0].starts_with("level 1 random elo 0 "), "{levels:?}");
    let model = run.join("models/gen-0099.safetensors");
    let model_level = levels
        .iter()
        .position(|l| {
            l.contains(" gen-0099 ")
                && l.ends_with(&format!("model:path={},sims=64", model.display()))
        })
        .unwrap_or_else(|| panic!("no gen-0099 level: {levels:?}"));
    assert!(
        levels
            .iter()
            .any(|l| l.contains(" nnue-0001 ") && l.ends_with(",depth=3")),
        "{levels:?}"
    );
    assert_eq!(e.ask_last("level 1"), "ok");
    assert!(e.ask_last("genmove").starts_with("move "));
    assert!(children(e.child.id()).is_empty());
    assert_eq!(e.ask_last(&format!("level {}", model_level + 1)), "ok");
    assert!(e.ask_last("genmove").starts_with("move "));
    assert_eq!(exe_and_torch(&e), ("loazero".to_string(), false));
    assert_eq!(children(e.child.id()).len(), 1);
    // The child took the table's run with it.
    assert_eq!(e.ask_last("level 1"), "ok");
    assert!(e
        .ask_last("level 99")
        .starts_with("error level '99': expected 1 (the weakest) to "));
}

#[test]
fn model_commands_run_in_loazero_torch() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let model = tiny_model(dir.path());
    let player = format!("model:path={},sims=4", model.display());
    let o = Command::new(bin())
        .args(["bestmove", "--player", &player])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert_a_first_move(&o);

    let mut e = Engine::start(&player);
    assert_eq!(e.ask_last("isready"), "readyok");
    assert_eq!(exe_and_torch(&e), ("loazero-torch".to_string(), true));
    assert!(e.ask_last("genmove").starts_with("move "));
}

/// The model that ships with loazero (`data/shipped`) works before any training: `bestmove`
/// plays it and its learned alpha-beta, and `export` writes both.
#[test]
fn the_shipped_model_plays_and_exports_before_any_training() {
    let shipped = common::repo_path("data/shipped/models");
    for player in [
        format!(
            "model:path={},sims=16",
            shipped.join("gen-0099.safetensors").display()
        ),
        format!(
            "alphabeta:depth=2,eval={}",
            shipped.join("nnue-0001.safetensors").display()
        ),
    ] {
        let o = Command::new(bin())
            .args(["bestmove", "--player", &player])
            .output()
            .unwrap();
        assert_a_first_move(&o);
    }
    let out = tempfile::tempdir().unwrap();
    for file in ["gen-0099.safetensors", "nnue-0001.safetensors"] {
        let o = Command::new(bin())
            .arg("export")
            .arg(shipped.join(file))
            .arg("--out")
            .arg(out.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{file}: {}", text(&o));
    }
    assert!(out.path().join("model.safetensors").is_file());
    assert!(out.path().join("nnue-0001.safetensors").is_file());
}
