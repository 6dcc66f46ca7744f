//! The `loazero` binary alone, without `loazero-torch` beside it: the torch-free commands
//! run, the others are a clear error naming the path it tried. (Having an integration test
//! also makes `cargo test --workspace` build this package's binary, which the end-to-end
//! tests of the root package run: `tests/common`, `bin`.)

use std::process::{Command, Output};

/// Standard output and standard error of `o`, for messages.
fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The last line of standard output ("" when there is none).
fn last_line(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines().last().unwrap_or("").to_string()
}

/// `start()` (the start of a program just written by this process), retried while the
/// program is busy: another test thread that forks while the copy's file is open for
/// writing holds that descriptor until its child execs, and exec of the copy fails with
/// ETXTBSY meanwhile.
fn retried_while_busy<T>(mut start: impl FnMut() -> std::io::Result<T>) -> T {
    let mut tries = 0;
    loop {
        match start() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => return r.unwrap(),
        }
    }
}

/// The output of `cmd`, whose program was just written by this process.
fn output_of_fresh_copy(cmd: &mut Command) -> Output {
    retried_while_busy(|| cmd.output())
}

#[test]
fn a_missing_loazero_torch_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("loazero");
    std::fs::copy(env!("CARGO_BIN_EXE_loazero"), &alone).unwrap();
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

/// `loazero engine` asked for a model player without `loazero-torch` beside it: an error
/// line naming the path, and the session goes on with its player.
#[test]
fn an_engine_without_loazero_torch_keeps_its_session() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("loazero");
    std::fs::copy(env!("CARGO_BIN_EXE_loazero"), &alone).unwrap();
    let mut child = retried_while_busy(|| {
        Command::new(&alone)
            .args(["engine", "--player", "alphabeta:depth=1"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"player model:path=m.safetensors\nisready\ngenmove\nquit\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    let want = dir.path().join("loazero-torch");
    assert!(
        lines[0].starts_with("error cannot run ") && lines[0].contains(&want.display().to_string()),
        "{out}"
    );
    assert_eq!(lines[1], "readyok", "{out}");
    assert!(lines[lines.len() - 2].starts_with("move "), "{out}");
    assert_eq!(lines[lines.len() - 1], "ok bye", "{out}");
    assert!(o.status.success(), "{}", text(&o));
}
