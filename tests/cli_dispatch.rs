//! The two binaries (src/light.rs): `loazero` runs the torch-free commands itself without
//! libtorch in the process, and replaces itself by `loazero-torch` for anything that uses a
//! network; a missing `loazero-torch` is a clear error naming its path.

mod common;
use common::{last_line, text, tiny_model, BIN};

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running `loazero engine`, stopped on drop.
struct Engine {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Engine {
    fn start(player: &str) -> Engine {
        let mut child = Command::new(BIN)
            .args(["engine", "--player", player])
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Engine {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends `line` and returns the first answer line that is not `info …`.
    fn ask(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut s = String::new();
            self.stdout.read_line(&mut s).unwrap();
            assert!(!s.is_empty(), "engine closed its output");
            if !s.starts_with("info ") {
                return s.trim_end().to_string();
            }
        }
    }

    /// The file name of the running executable and whether libtorch is mapped into it.
    fn exe_and_torch(&self) -> (String, bool) {
        let proc = PathBuf::from(format!("/proc/{}", self.child.id()));
        let exe = std::fs::read_link(proc.join("exe")).unwrap();
        let maps = std::fs::read_to_string(proc.join("maps")).unwrap();
        (
            exe.file_name().unwrap().to_string_lossy().into_owned(),
            maps.contains("libtorch"),
        )
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
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
    assert!(o.status.success(), "{}", text(&o));
    let start = loa::Position::start(loa::Variant::Standard, &loa::Rules::classic());
    assert!(
        start
            .parse_move(&last_line(&o), &loa::Rules::classic())
            .is_ok(),
        "{}",
        text(&o)
    );

    let mut e = Engine::start("alphabeta:depth=1");
    assert_eq!(e.ask("isready"), "readyok");
    assert_eq!(e.exe_and_torch(), ("loazero".to_string(), false));
    assert!(e.ask("genmove").starts_with("move "));
    // A model player asked for after start cannot be loaded here: a clear error line.
    let reply = e.ask("player model:path=m.safetensors,sims=2");
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
    assert!(o.status.success(), "{}", text(&o));
    let start = loa::Position::start(loa::Variant::Standard, &loa::Rules::classic());
    assert!(
        start
            .parse_move(&last_line(&o), &loa::Rules::classic())
            .is_ok(),
        "{}",
        text(&o)
    );

    let mut e = Engine::start(&player);
    assert_eq!(e.ask("isready"), "readyok");
    assert_eq!(e.exe_and_torch(), ("loazero-torch".to_string(), true));
    assert!(e.ask("genmove").starts_with("move "));
}

#[test]
fn a_missing_loazero_torch_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("loazero");
    std::fs::copy(BIN, &alone).unwrap();
    // Torch-free commands do not need the sibling ...
    let o = Command::new(&alone)
        .args(["perft", "--depth", "2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(last_line(&o), "1244");
    // ... the others name the path they tried.
    for args in [
        &["info"][..],
        &["bestmove", "--player", "model:path=m.pt"][..],
    ] {
        let o = Command::new(&alone).args(args).output().unwrap();
        let t = text(&o);
        assert!(!o.status.success(), "{args:?}: {t}");
        let want = dir.path().join("loazero-torch");
        assert!(
            t.starts_with("error: cannot run ") && t.contains(&want.display().to_string()),
            "{args:?}: {t}"
        );
    }
}
