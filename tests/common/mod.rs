//! What the end-to-end tests of the `loazero` binary share: running it, reading what it
//! printed, temporary directories that are removed when the test ends (passing or not),
//! and tiny models. Each `tests/cli_*.rs` says `mod common;` and uses what it needs.
#![allow(dead_code)] // every test binary uses a different part

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The light `loazero` binary (it execs `loazero-torch` for the commands that need torch).
pub const BIN: &str = env!("CARGO_BIN_EXE_loazero");

/// The thesis games beside the checkout (`../shared/testdata`).
pub const THESIS_GAMES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/testdata/winands-thesis-games"
);

/// Runs `loazero ARGS` to its end.
pub fn loazero<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(BIN).args(args).output().expect("run loazero")
}

/// Runs `loazero ARGS` with `input` on its standard input.
pub fn loazero_with_input<S: AsRef<OsStr>>(args: &[S], input: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run loazero");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output then standard error, for assertions and failure messages.
pub fn text(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

/// The last line of standard output ("" when there is none).
pub fn last_line(o: &Output) -> String {
    stdout(o).lines().last().unwrap_or("").to_string()
}

/// A fresh temporary directory, removed with everything in it when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("loazero-test-")
        .tempdir()
        .expect("temporary directory")
}

/// Saves an untrained [`train::NetConfig::tiny`] model of `variant` at `path`.
pub fn tiny_model_at(path: &Path, variant: loa::Variant) {
    tch::set_num_threads(1);
    let model = train::Model::new(
        train::ModelInfo::new(&train::NetConfig::tiny(), variant),
        tch::Device::Cpu,
    );
    model.save(path).unwrap();
}

/// An untrained tiny `standard` model saved as `dir/m.safetensors`; its path.
pub fn tiny_model(dir: &Path) -> PathBuf {
    let path = dir.join("m.safetensors");
    tiny_model_at(&path, loa::Variant::Standard);
    path
}
