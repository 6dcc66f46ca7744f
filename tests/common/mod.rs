//! What the end-to-end tests of the `loazero` binary share: running it, reading what it
//! printed, temporary directories that are removed when the test ends (passing or not),
//! tiny models, and what a test does when a tool it needs is missing
//! ([`skip_or_fail`]).
//! Each `tests/cli_*.rs` says `mod common;` and uses what it needs.
#![allow(dead_code)] // every test binary uses a different part

pub mod run_files;

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The torch binary of this package, built by cargo for these tests.
const TORCH_BIN: &str = env!("CARGO_BIN_EXE_loazero-torch");

/// The light `loazero` binary (it execs `loazero-torch` for the commands that need torch):
/// the `cli` package's, in the same target directory as [`TORCH_BIN`]. `cargo test
/// --workspace` (`make test`) builds it, before any test runs, for that package's own
/// integration tests; a missing one fails the test with how to build it.
pub fn bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let light = Path::new(TORCH_BIN).with_file_name("loazero");
        assert!(
            light.is_file(),
            "{} is missing: build both binaries with `cargo build --release --workspace --bins` \
             or run the tests with `cargo test --release --workspace` (make test)",
            light.display()
        );
        light.to_string_lossy().into_owned()
    })
}

/// `relative` under the repository root, found when the test runs (cargo sets
/// `CARGO_MANIFEST_DIR` for the tests it runs), not where the test binary was built: a
/// binary built in another checkout still reads this checkout's files.
pub fn repo_path(relative: &str) -> std::path::PathBuf {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("CARGO_MANIFEST_DIR: run the tests with cargo (make test)");
    std::path::Path::new(&root).join(relative)
}

/// The thesis games of the repository (`data/winands-thesis-games`), as text.
pub fn thesis_games() -> String {
    repo_path("data/winands-thesis-games")
        .to_string_lossy()
        .into_owned()
}

/// Whether the tests run under CI (`CI` set, as `.ci/run` sets it): there a test whose tool
/// is missing fails instead of skipping.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// What a test does when a tool it needs is missing (`why` names the tool and how to
/// install it): under CI ([`under_ci`]) it panics with `why`, since a skip there would let
/// a broken test pass; elsewhere it says SKIPPED ([`say_skipped`]) and returns (the test
/// then returns). (`store/tests/s3_server` follows the same rule on its own: the store
/// crate has no access to this harness.)
pub fn skip_or_fail(why: &str) {
    if under_ci() {
        panic!("{why}: under CI this is a failure, not a skip");
    }
    say_skipped(why);
}

/// Writes `SKIPPED: why` to the process's standard error itself, past the test harness's
/// capture (which takes only `print!` and `eprint!`), so that a passing test's skip shows
/// in the output of `cargo test`.
pub fn say_skipped(why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {why}");
}

/// Runs `loazero ARGS` to its end.
pub fn loazero<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("run loazero")
}

/// Runs `loazero ARGS` with `input` on its standard input.
pub fn loazero_with_input<S: AsRef<OsStr>>(args: &[S], input: &str) -> Output {
    let mut child = Command::new(bin())
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

/// The `--set` options of a run small enough for a test: 6×6, a 1×8 net, 6 games and 6
/// steps a generation, no gate (so that every count is deterministic), rated every second
/// generation against two anchors.
pub fn tiny_run_sets() -> Vec<String> {
    [
        "selfplay.variant=6x6",
        "selfplay.simulations=16",
        "selfplay.mcts.cheap_simulations=4",
        "selfplay.mcts.leaves_per_batch=4",
        "selfplay.games_per_worker=3",
        "selfplay.threads=1",
        "selfplay.shard_samples=60",
        "run.minutes=0",
        "run.games_per_generation=6",
        "run.train_steps_per_generation=6",
        "run.checkpoint_every=2",
        "run.gate=false",
        "run.match_threads=1",
        "train.log_every=2",
        "train.batch_size=16",
        "train.threads=1",
        "train.net.blocks=1",
        "train.net.channels=8",
        "train.net.global_pool_every=1",
        "train.net.policy_channels=4",
        "train.net.value_channels=4",
        "train.net.value_hidden=8",
        "rating.anchors=[\"random\", \"alphabeta:depth=1\"]",
        "rating.games=2",
        "rating.anchor_games=2",
        "rating.simulations=8",
        "rating.every=2",
        // The learned evaluation's stage is tested on its own (cli_learned_eval.rs); a
        // test that turns this run into a standard one does not want 4 × 8 000 games.
        "learned_eval.share=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// [`tiny_run_sets`] with a gate that promotes every candidate (threshold 0, 2 games, so
/// that gate games exist) and a rating of every generation: the run the `serve` tests
/// browse.
pub fn tiny_gated_run_sets() -> Vec<String> {
    let mut sets = tiny_run_sets();
    sets.extend(
        [
            "run.gate=true",
            "run.gate_simulations=8",
            "gate.max_games=2",
            "gate.threshold=0",
            "rating.every=1",
        ]
        .map(String::from),
    );
    sets
}

/// The arguments of `loazero run --dir DIR --generations N` with `--set S` for each of
/// `sets`.
pub fn run_args(dir: &Path, generations: u32, sets: &[String]) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        "--dir".into(),
        dir.display().to_string(),
        "--generations".into(),
        generations.to_string(),
    ];
    for s in sets {
        args.push("--set".into());
        args.push(s.clone());
    }
    args
}

/// Makes a finished tiny run of `generations` generations in `dir`
/// ([`tiny_gated_run_sets`]); panics with the run's output if it fails.
pub fn tiny_run(dir: &Path, generations: u32) {
    let out = loazero(&run_args(dir, generations, &tiny_gated_run_sets()));
    assert!(out.status.success(), "tiny run failed:\n{}", text(&out));
}

/// A `loazero serve` process listening on a free port of 127.0.0.1, killed (and reaped)
/// when dropped.
pub struct Server {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Server {
    /// Starts `loazero serve --port 0` over `dirs` and waits for the URL it prints.
    pub fn start(dirs: &[&Path]) -> Server {
        Server::start_with_stderr(dirs, Stdio::null())
    }

    /// [`Server::start`] with the server's standard error going to `stderr`.
    pub fn start_with_stderr(dirs: &[&Path], stderr: Stdio) -> Server {
        let mut args: Vec<OsString> = Vec::new();
        for d in dirs {
            args.push("--dir".into());
            args.push(d.as_os_str().to_owned());
        }
        Server::start_with(&args, &[], stderr)
    }

    /// Starts `loazero serve --port 0 ARGS` with `env` added to its environment and its
    /// standard error going to `stderr`, and waits for the URL it prints.
    pub fn start_with<S: AsRef<OsStr>>(
        args: &[S],
        env: &[(String, String)],
        stderr: Stdio,
    ) -> Server {
        let mut cmd = Command::new(bin());
        cmd.args(["serve", "--port", "0"]).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Server::from_command(cmd, stderr)
    }

    /// Starts `loazero serve --port 0` without a run directory, in the working directory
    /// `cwd` (where it looks for `runs/default`).
    pub fn start_in(cwd: &Path) -> Server {
        let mut cmd = Command::new(bin());
        // The shipped model, when served, is unpacked under the working directory, not
        // into the user's cache.
        cmd.args(["serve", "--port", "0"])
            .current_dir(cwd)
            .env("XDG_CACHE_HOME", cwd.join(".cache"));
        Server::from_command(cmd, Stdio::null())
    }

    /// Spawns `cmd` (a `serve` command line) and waits for the URL it prints.
    fn from_command(mut cmd: Command, stderr: Stdio) -> Server {
        use std::io::BufRead;
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start loazero serve");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the URL");
        let url = line
            .trim()
            .strip_prefix("loazero serve: ")
            .unwrap_or_else(|| panic!("serve printed {line:?}, not its URL"))
            .to_string();
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        Server { child, url, addr }
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the server process.
    pub fn signal(&self, signal: libc::c_int) {
        run_files::signal(&self.child, signal);
    }

    /// Waits up to `limit` for the server to exit: its exit status, or `None` if it still
    /// runs.
    pub fn wait_within(&mut self, limit: std::time::Duration) -> Option<std::process::ExitStatus> {
        let t = std::time::Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if t.elapsed() > limit {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Sends `raw` (a whole HTTP request) and returns the status and body, or `None` when
    /// the server closed the connection without a parsable response.
    pub fn raw(&self, raw: &[u8]) -> Option<(u16, String)> {
        use std::io::Read;
        let mut s = std::net::TcpStream::connect(&self.addr).expect("connect to serve");
        s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
            .unwrap();
        // A server may answer (413) and close before reading all of a huge body.
        let _ = s.write_all(raw);
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        parse_response(&buf)
    }

    /// `METHOD path` with an optional JSON body: status and body.
    pub fn request(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let body = body.unwrap_or("");
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        self.raw(req.as_bytes())
            .unwrap_or_else(|| panic!("no response to {method} {path}"))
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> (u16, String) {
        self.request("GET", path, None)
    }

    /// `POST path` with a JSON body.
    pub fn post(&self, path: &str, body: &str) -> (u16, String) {
        self.request("POST", path, Some(body))
    }

    /// `GET path` that must answer 200 with JSON: the JSON.
    pub fn get_json(&self, path: &str) -> serde_json::Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
    }

    /// `POST path` that must answer 200 with JSON: the JSON.
    pub fn post_json(&self, path: &str, body: &serde_json::Value) -> serde_json::Value {
        let (status, text) = self.post(path, &body.to_string());
        assert_eq!(status, 200, "POST {path} {body}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("POST {path}: {e}: {text}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Status and body of an HTTP/1.1 response (plain or chunked body).
fn parse_response(buf: &[u8]) -> Option<(u16, String)> {
    let text = String::from_utf8_lossy(buf);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status: u16 = head.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    if !chunked {
        return Some((status, body.to_string()));
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).ok()?;
        if n == 0 {
            break;
        }
        out.push_str(after.get(..n)?);
        rest = after.get(n + 2..)?;
    }
    Some((status, out))
}

/// A running `loazero engine --player PLAYER` over pipes (without `LD_LIBRARY_PATH`: the
/// binaries find libtorch by their rpath); sent `quit` and waited for when dropped.
pub struct Engine {
    /// The process.
    pub child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Engine {
    /// Starts the engine with `player`.
    pub fn start(player: &str) -> Engine {
        Engine::start_with(&["--player", player])
    }

    /// Starts `loazero engine ARGS`.
    pub fn start_with(args: &[&str]) -> Engine {
        let mut child = Command::new(bin())
            .arg("engine")
            .args(args)
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start loazero engine");
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Engine {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends one line.
    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next output line (without its line end); fails if the engine closed its output.
    pub fn line(&mut self) -> String {
        use std::io::BufRead;
        let mut s = String::new();
        self.stdout.read_line(&mut s).unwrap();
        assert!(!s.is_empty(), "engine closed its output");
        s.trim_end().to_string()
    }

    /// Sends a command and returns its answer lines up to the first final line (not
    /// `info …`).
    pub fn ask(&mut self, line: &str) -> Vec<String> {
        self.send(line);
        let mut out = Vec::new();
        loop {
            let l = self.line();
            let last = !l.starts_with("info ");
            out.push(l);
            if last {
                return out;
            }
        }
    }

    /// Sends a command and returns its final answer line (the `info …` lines skipped).
    pub fn ask_last(&mut self, line: &str) -> String {
        self.ask(line).pop().unwrap()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

/// The files of a shard bundle (`rundir/src/bundle.rs`): (name, size), the shard first.
pub fn bundle_files(bytes: &[u8]) -> Vec<(String, usize)> {
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
