//! The two binaries (src/light.rs): `loazero` runs the torch-free commands itself without
//! libtorch in the process, and replaces itself by `loazero-torch` for anything that uses a
//! network; a missing `loazero-torch` is a clear error naming its path.

mod common;
use common::{last_line, text, tiny_model, Engine, BIN};

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
    let o = Command::new(BIN)
        .args(["perft", "--depth", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(last_line(&o), "36");
    let o = Command::new(BIN)
        .args(["bestmove", "--player", "alphabeta:depth=1"])
        .output()
        .unwrap();
    assert_a_first_move(&o);

    let mut e = Engine::start("alphabeta:depth=1");
    assert_eq!(e.ask_last("isready"), "readyok");
    assert_eq!(exe_and_torch(&e), ("loazero".to_string(), false));
    assert!(e.ask_last("genmove").starts_with("move "));
    // A model player asked for after start cannot be loaded here: a clear error line.
    let reply = e.ask_last("player model:path=m.safetensors,sims=2");
    assert!(
        reply.starts_with("error ") && reply.contains("without torch"),
        "{reply}"
    );
}

#[test]
fn model_commands_run_in_loazero_torch() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let model = tiny_model(dir.path());
    let player = format!("model:path={},sims=4", model.display());
    let o = Command::new(BIN)
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

/// The output of `cmd`, whose program was just written by this process. Another test
/// thread that forks while the copy's file is open for writing holds that descriptor
/// until its child execs, and exec of the copy fails with ETXTBSY meanwhile: retried.
fn output_of_fresh_copy(cmd: &mut Command) -> std::process::Output {
    let mut tries = 0;
    loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => return r.unwrap(),
        }
    }
}

#[test]
fn a_missing_loazero_torch_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("loazero");
    std::fs::copy(BIN, &alone).unwrap();
    // Torch-free commands do not need the sibling ...
    let o = output_of_fresh_copy(Command::new(&alone).args(["perft", "--depth", "2"]));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(last_line(&o), "1244");
    // ... the others name the path they tried.
    for args in [
        &["info"][..],
        &["bestmove", "--player", "model:path=m.pt"][..],
    ] {
        let o = output_of_fresh_copy(Command::new(&alone).args(args));
        let t = text(&o);
        assert!(!o.status.success(), "{args:?}: {t}");
        let want = dir.path().join("loazero-torch");
        assert!(
            t.starts_with("error: cannot run ") && t.contains(&want.display().to_string()),
            "{args:?}: {t}"
        );
    }
}
