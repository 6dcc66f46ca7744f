//! The launchers of `examples/distributed/` (Kubernetes, Slurm, systemd, Ray) and the command
//! lines of `docs/distributed.md` cannot rot: every file is checked by its own tool (YAML
//! parsed, `bash -n`, Python compiled, `systemd-analyze verify` where it is installed), and
//! every loazero command line in them is run with the real binary, its store and cache
//! replaced by a `file://` store holding a tiny run and a temporary directory: each
//! trainer and worker must start (its "working copy" line), then stop on SIGTERM as the
//! scheduler would stop it (exit 130, the stop message). The Slurm scripts run whole,
//! with `SLURM_*` set by hand; the Ray launcher gives its command lines with
//! `--print-commands` (Ray itself is not needed). Consistency checks: the Kubernetes
//! containers request as many CPUs as their threads, refer to ConfigMap keys that exist
//! and run the binary the Dockerfile installs; the docs name every example file, and every
//! example path they name exists.
//!
//! Tools: bash and python3 (with PyYAML for the manifests; a missing one is a failure under
//! CI, else a skip, [`common::skip_or_fail`]); so is `systemd-analyze` (systemd), which
//! `.ci/run` installs where it is missing (the units' command lines are run either way).

mod common;

use common::{bin, skip_or_fail, temp_dir, tiny_run_sets};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where the examples install the binary (`container/Dockerfile`, the units, the scripts).
const INSTALLED_BIN: &str = "/opt/loazero/target/release/loazero";

fn examples() -> PathBuf {
    common::repo_path("examples/distributed")
}

/// The files of the examples, relative to `examples/distributed`, sorted.
fn example_files() -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut files = Vec::new();
    walk(&examples(), &examples(), &mut files);
    files.sort();
    files
}

fn with_extension(ext: &str) -> Vec<PathBuf> {
    example_files()
        .into_iter()
        .filter(|f| f.ends_with(ext))
        .map(|f| examples().join(f))
        .collect()
}

fn text(o: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A python3 that has PyYAML, or `None` (after [`skip_or_fail`]).
fn python_with_yaml() -> Option<String> {
    let has_yaml = |python: &str| {
        Command::new(python)
            .args(["-c", "import yaml"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has_yaml("python3") {
        return Some("python3".into());
    }
    skip_or_fail("python3 with PyYAML (pip install pyyaml) parses the Kubernetes manifests");
    None
}

/// The documents of every YAML file of the examples, by file.
fn yaml_documents(python: &str) -> BTreeMap<String, Vec<Value>> {
    let files = with_extension(".yaml");
    assert!(!files.is_empty(), "the Kubernetes examples");
    let out = Command::new(python)
        .args([
            "-c",
            "import json, sys, yaml\n\
             json.dump({f: list(yaml.safe_load_all(open(f))) for f in sys.argv[1:]}, sys.stdout)",
        ])
        .args(&files)
        .output()
        .unwrap();
    assert!(out.status.success(), "YAML: {}", text(&out));
    let parsed: BTreeMap<String, Vec<Value>> = serde_json::from_slice(&out.stdout).unwrap();
    parsed
}

/// Splits a command line into words as a shell (or systemd) does for plain words and
/// quotes: whitespace separates, '…' and "…" quote, a backslash escapes the next character
/// outside single quotes. A trailing `&` is dropped.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        q => w.push(q),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    if words.last().is_some_and(|w| w == "&") {
        words.pop();
    }
    words
}

/// `text` with `$NAME`, `${NAME}` (and, with `kubernetes`, only `$(NAME)`) replaced from
/// `vars`; a name that is not there is an error naming it and `what`.
fn expand(text: &str, vars: &BTreeMap<String, String>, kubernetes: bool, what: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = if kubernetes {
            match after
                .strip_prefix('(')
                .and_then(|a| a.find(')').map(|e| &a[..e]))
            {
                Some(name) => (name, name.len() + 2),
                None => ("", 0),
            }
        } else if let Some(braced) = after.strip_prefix('{') {
            let end = braced
                .find('}')
                .unwrap_or_else(|| panic!("{what}: unclosed ${{"));
            (&braced[..end], end + 2)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        if len == 0 {
            out.push('$');
            rest = after;
            continue;
        }
        let value = vars
            .get(name)
            .unwrap_or_else(|| panic!("{what}: ${name} is not defined there"));
        out.push_str(value);
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// A loazero process that is killed (and reaped) if the test fails while it runs.
struct Running {
    child: Option<Child>,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Running {
    fn start(mut command: Command, logs: &Path) -> Running {
        std::fs::create_dir_all(logs).unwrap();
        let (stdout, stderr) = (logs.join("stdout"), logs.join("stderr"));
        let child = command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Running {
            child: Some(child),
            stdout,
            stderr,
        }
    }

    fn printed(&self) -> String {
        format!(
            "--- stdout\n{}\n--- stderr\n{}",
            std::fs::read_to_string(&self.stdout).unwrap_or_default(),
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        )
    }

    /// Waits until `ready` (given what the process printed so far) says yes, sends it
    /// SIGTERM and waits for its end: (exit code, what it printed).
    fn started_then_stopped(
        mut self,
        ready: impl Fn(&str) -> bool,
        what: &str,
    ) -> (Option<i32>, String) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let printed = self.printed();
            if ready(&printed) {
                break;
            }
            let child = self.child.as_mut().unwrap();
            if let Some(status) = child.try_wait().unwrap() {
                panic!("{what} ended before it started ({status}):\n{printed}");
            }
            assert!(
                Instant::now() < deadline,
                "{what} was not ready in 120 s:\n{printed}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut child = self.child.take().unwrap();
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(120);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{what} did not stop within 120 s of SIGTERM:\n{}",
                    self.printed()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        (status.code(), self.printed())
    }
}

/// A `file://` store with a tiny run in it (generation 1 published) and the place for the
/// processes' caches and logs.
struct Sandbox {
    dir: tempfile::TempDir,
    spec: String,
    runs: usize,
}

impl Sandbox {
    /// Starts the tiny run (no generation limit, as the examples' trainers resume it) and
    /// stops it with SIGTERM once generation 1 is published.
    fn new() -> Sandbox {
        let dir = temp_dir();
        let spec = format!("file://{}/store", dir.path().display());
        let cache = dir.path().join("first").display().to_string();
        let mut args: Vec<String> = ["run", "--store", &spec, "--cache", &cache]
            .map(String::from)
            .to_vec();
        for s in tiny_run_sets() {
            args.push("--set".into());
            args.push(s);
        }
        let mut command = Command::new(bin());
        command.args(&args);
        let store = store::open(&spec).unwrap();
        let published = store::Key::new("log/00000002.json").unwrap();
        let (code, printed) = Running::start(command, &dir.path().join("first-logs"))
            .started_then_stopped(
                |_| store.size(&published).is_ok_and(|s| s.is_some()),
                "the tiny run",
            );
        assert_eq!(code, Some(130), "the tiny run:\n{printed}");
        Sandbox { dir, spec, runs: 0 }
    }

    fn next_dir(&mut self, name: &str) -> PathBuf {
        self.runs += 1;
        self.dir.path().join(format!("{:02}-{name}", self.runs))
    }

    /// Runs the loazero command line `argv` of `what` (`argv[0]` is the binary, whatever
    /// its path) with this store and a fresh cache, starts it and stops it with SIGTERM.
    fn run_and_stop(&mut self, argv: &[String], what: &str) {
        assert!(
            argv.first().is_some_and(|b| b.ends_with("loazero")),
            "{what}: not a loazero command: {argv:?}"
        );
        let cache = self.next_dir("cache");
        let mut args: Vec<String> = Vec::new();
        let mut has_cache = false;
        let mut rest = argv[1..].iter();
        while let Some(a) = rest.next() {
            if a == "--store" || a == "--cache" {
                rest.next()
                    .unwrap_or_else(|| panic!("{what}: {a} without a value: {argv:?}"));
            }
            match a.split_once('=').map_or(a.as_str(), |(flag, _)| flag) {
                "--store" => args.extend(["--store".into(), self.spec.clone()]),
                "--cache" => {
                    has_cache = true;
                    args.extend(["--cache".into(), cache.display().to_string()]);
                }
                _ => args.push(a.clone()),
            }
        }
        assert!(
            args.iter().any(|a| a == "--store"),
            "{what}: no --store: {argv:?}"
        );
        if !has_cache {
            args.extend(["--cache".into(), cache.display().to_string()]);
        }
        let mut command = Command::new(bin());
        command.args(&args);
        self.start_and_stop(command, &args[0], what);
    }

    /// Starts `command` (a `run` or `selfplay` process, by `verb`), stops it with SIGTERM
    /// once it works and checks that it stopped as a scheduler expects.
    fn start_and_stop(&mut self, command: Command, verb: &str, what: &str) {
        let logs = self.next_dir("logs");
        let (code, printed) = Running::start(command, &logs)
            .started_then_stopped(|p| p.contains("working copy"), what);
        let stopped = match verb {
            "run" => "stopped at generation",
            "selfplay" => "every finished game is committed",
            other => panic!("{what}: loazero {other} is not a command of a run in a store"),
        };
        assert_eq!(
            code,
            Some(130),
            "{what}: the exit status after SIGTERM:\n{printed}"
        );
        assert!(printed.contains(stopped), "{what}: {stopped:?}:\n{printed}");
        println!("{what}: started and stopped (130)");
    }

    fn verify(&self) {
        let store = store::open(&self.spec).unwrap();
        let audit = store::commit::verify(store.as_ref()).unwrap();
        assert!(audit.is_clean(), "{:?}", audit.violations);
    }
}

/// The loazero command lines of the Kubernetes manifests: (what, argv). Checks on the way
/// that each container's `$(VAR)`s come from its env (ConfigMap keys that exist), that a
/// worker requests and is limited to as many CPUs as its --threads, that torch's threads
/// match the CPUs, and that the cache is a mounted volume.
fn kubernetes_commands(docs: &BTreeMap<String, Vec<Value>>) -> Vec<(String, Vec<String>)> {
    let mut config_maps: BTreeMap<String, &serde_json::Map<String, Value>> = BTreeMap::new();
    for doc in docs.values().flatten() {
        if doc["kind"] == "ConfigMap" {
            config_maps.insert(
                doc["metadata"]["name"].as_str().unwrap().into(),
                doc["data"].as_object().unwrap(),
            );
        }
    }
    let mut commands = Vec::new();
    for (file, documents) in docs {
        for doc in documents {
            let kind = doc["kind"]
                .as_str()
                .unwrap_or_else(|| panic!("{file}: no kind"));
            assert!(
                doc["apiVersion"].is_string(),
                "{file}: {kind} without apiVersion"
            );
            assert!(
                doc["metadata"]["name"].is_string(),
                "{file}: {kind} without a name"
            );
            let pod = &doc["spec"]["template"]["spec"];
            let Some(containers) = pod["containers"].as_array() else {
                continue;
            };
            for c in containers {
                let what = format!("{file}: {kind} {}", c["name"]);
                let mut env = BTreeMap::new();
                for e in c["env"].as_array().into_iter().flatten() {
                    let name = e["name"].as_str().unwrap().to_string();
                    let value = if let Some(v) = e["value"].as_str() {
                        v.to_string()
                    } else {
                        let r = &e["valueFrom"]["configMapKeyRef"];
                        let map = config_maps
                            .get(r["name"].as_str().unwrap_or(""))
                            .unwrap_or_else(|| panic!("{what}: env {name}: no such ConfigMap"));
                        map.get(r["key"].as_str().unwrap_or(""))
                            .and_then(Value::as_str)
                            .unwrap_or_else(|| panic!("{what}: env {name}: no such key"))
                            .to_string()
                    };
                    env.insert(name, value);
                }
                let argv: Vec<String> = c["command"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(c["args"].as_array().into_iter().flatten())
                    .map(|a| expand(a.as_str().unwrap(), &env, true, &what))
                    .collect();
                assert_eq!(argv[0], INSTALLED_BIN, "{what}: the image's binary");
                let flag = |name: &str| {
                    argv.iter()
                        .position(|a| a == name)
                        .map(|i| argv[i + 1].clone())
                };
                let cpu = |kind: &str| c["resources"][kind]["cpu"].as_str().map(String::from);
                let cpus = cpu("requests").unwrap_or_else(|| panic!("{what}: no CPU request"));
                assert_eq!(cpu("limits"), Some(cpus.clone()), "{what}: CPU limit");
                assert_eq!(
                    env.get("OMP_NUM_THREADS"),
                    Some(&cpus),
                    "{what}: torch's threads"
                );
                if argv[1] == "selfplay" {
                    assert_eq!(flag("--threads"), Some(cpus.clone()), "{what}: --threads");
                    let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap_or(30);
                    assert!(grace >= 70, "{what}: the commit at SIGTERM may take 60 s");
                }
                let cache = flag("--cache").unwrap_or_else(|| panic!("{what}: no --cache"));
                assert!(
                    c["volumeMounts"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|m| m["mountPath"] == cache.as_str()),
                    "{what}: the cache {cache} is a mounted volume"
                );
                commands.push((what, argv));
            }
        }
    }
    commands
}

/// The `Key=Value` lines of a systemd unit (comments and sections left out), in order.
fn unit_settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('['))
        .map(|l| {
            let (k, v) = l
                .split_once('=')
                .unwrap_or_else(|| panic!("not Key=Value: {l}"));
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect()
}

/// The loazero command line of a systemd unit: its ExecStart with `%i` as instance 1 and
/// `${VAR}` from its Environment= lines and the example environment file beside it.
fn systemd_command(unit: &Path) -> Vec<String> {
    let what = unit.display().to_string();
    let text = std::fs::read_to_string(unit).unwrap();
    let settings = unit_settings(&text);
    let mut vars = BTreeMap::new();
    for (k, v) in &settings {
        match k.as_str() {
            "Environment" => {
                for word in split_words(v) {
                    let (name, value) = word.split_once('=').unwrap();
                    vars.insert(name.to_string(), value.to_string());
                }
            }
            "EnvironmentFile" => {
                let name = Path::new(v.trim_start_matches('-')).file_name().unwrap();
                let file = unit.with_file_name(name);
                let env = std::fs::read_to_string(&file)
                    .unwrap_or_else(|e| panic!("{what}: {v} has no example beside it: {e}"));
                for line in env.lines().map(str::trim) {
                    if let Some((name, value)) =
                        line.split_once('=').filter(|_| !line.starts_with('#'))
                    {
                        vars.insert(name.to_string(), value.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    let exec: Vec<&String> = settings
        .iter()
        .filter(|(k, _)| k == "ExecStart")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(exec.len(), 1, "{what}: one ExecStart");
    split_words(&exec[0].replace("%i", "1"))
        .iter()
        .map(|w| expand(w, &vars, false, &what))
        .collect()
}

/// The loazero command lines of the `sh` code blocks of docs/distributed.md (`$B` is the
/// binary), joined over `\` continuations.
fn docs_commands(doc: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut in_block = false;
    let mut line = String::new();
    for raw in doc.lines() {
        if raw.trim_start().starts_with("```") {
            in_block = !in_block && raw.trim() == "```sh";
            continue;
        }
        if !in_block {
            continue;
        }
        line.push_str(raw.trim_end());
        if line.ends_with('\\') {
            line.pop();
            line.push(' ');
            continue;
        }
        let words = split_words(line.split('#').next().unwrap_or(""));
        line.clear();
        if words.len() > 1
            && (words[0] == "$B" || words[0].ends_with("/loazero"))
            && ["run", "selfplay"].contains(&words[1].as_str())
        {
            let vars = BTreeMap::from([("B".to_string(), bin().to_string())]);
            commands.push(
                words
                    .iter()
                    .map(|w| expand(w, &vars, false, "docs/distributed.md"))
                    .collect(),
            );
        }
    }
    commands
}

#[test]
fn the_examples_parse_and_the_docs_name_each() {
    let doc = std::fs::read_to_string(common::repo_path("docs/distributed.md")).unwrap();
    let files = example_files();
    for file in &files {
        assert!(
            doc.contains(&format!("examples/distributed/{file}")),
            "docs/distributed.md does not name examples/distributed/{file}"
        );
    }
    for (at, _) in doc.match_indices("examples/distributed/") {
        let named: String = doc[at + "examples/distributed/".len()..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, '`' | ')' | ',' | ':'))
            .collect();
        let named = named.trim_end_matches('.');
        assert!(
            examples().join(named).exists(),
            "docs/distributed.md names examples/distributed/{named}, which does not exist"
        );
    }
    let dockerfile = std::fs::read_to_string(examples().join("container/Dockerfile")).unwrap();
    assert!(
        dockerfile.contains(INSTALLED_BIN),
        "the Dockerfile installs {INSTALLED_BIN}"
    );

    for script in with_extension(".sbatch") {
        let out = Command::new("bash")
            .arg("-n")
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "bash -n {}: {}",
            script.display(),
            text(&out)
        );
    }
    let compiled = temp_dir();
    for script in with_extension(".py") {
        let out = Command::new("python3")
            .args([
                "-c",
                "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)",
            ])
            .arg(&script)
            .arg(compiled.path().join("out.pyc"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "compiling {}: {}",
            script.display(),
            text(&out)
        );
    }
    if let Some(python) = python_with_yaml() {
        let kubernetes = kubernetes_commands(&yaml_documents(&python));
        let verbs: Vec<&str> = kubernetes.iter().map(|(_, a)| a[1].as_str()).collect();
        assert_eq!(
            verbs,
            ["run", "selfplay"],
            "the trainer Job and the worker Deployment"
        );
    }
    let units = with_extension(".service");
    assert_eq!(units.len(), 2, "a trainer unit and a worker template");
    let verifier = Command::new("systemd-analyze").arg("--version").output();
    if !verifier.is_ok_and(|o| o.status.success()) {
        // Under CI a failure (`.ci/run` installs systemd where it is missing).
        skip_or_fail(
            "systemd-analyze is not installed: the units were not verified (their ExecStart \
             lines run in the other test; apt-get install systemd)",
        );
        return;
    }
    // The installed paths of the units do not exist here: verify copies that name this
    // binary and the example environment file.
    let env_file = examples().join("systemd/loazero.env");
    let copies = temp_dir();
    for unit in &units {
        let unit_text = std::fs::read_to_string(unit)
            .unwrap()
            .replace(INSTALLED_BIN, bin())
            .replace("/etc/loazero/loazero.env", &env_file.display().to_string());
        let copy = copies.path().join(unit.file_name().unwrap());
        std::fs::write(&copy, unit_text).unwrap();
        let out = Command::new("systemd-analyze")
            .arg("verify")
            .arg(&copy)
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
            "systemd-analyze verify {}: {}",
            unit.display(),
            text(&out)
        );
    }
}

#[test]
fn every_loazero_command_of_the_examples_starts_and_stops_on_sigterm() {
    let mut sandbox = Sandbox::new();
    // Kubernetes: the containers' command and args.
    if let Some(python) = python_with_yaml() {
        for (what, argv) in kubernetes_commands(&yaml_documents(&python)) {
            sandbox.run_and_stop(&argv, &what);
        }
    }
    // systemd: the ExecStart lines.
    for unit in with_extension(".service") {
        let argv = systemd_command(&unit);
        sandbox.run_and_stop(&argv, &unit.display().to_string());
    }
    // Slurm: the scripts themselves, as a job (array task) would run them.
    for script in with_extension(".sbatch") {
        let tmp = sandbox.next_dir("slurm-tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let text = std::fs::read_to_string(&script).unwrap();
        let verb = if text.contains(" selfplay ") {
            "selfplay"
        } else {
            "run"
        };
        let mut command = Command::new("bash");
        command
            .arg(&script)
            .env("LOAZERO_BIN", bin())
            .env("LOAZERO_STORE", &sandbox.spec)
            .env("TMPDIR", &tmp)
            .env("SLURM_JOB_ID", "1001")
            .env("SLURM_ARRAY_JOB_ID", "1000")
            .env("SLURM_ARRAY_TASK_ID", "3")
            .env("SLURM_CPUS_PER_TASK", "1");
        sandbox.start_and_stop(command, verb, &script.display().to_string());
    }
    // Ray: the launcher's command lines.
    let launcher = examples().join("ray/launch.py");
    let out = Command::new("python3")
        .arg(&launcher)
        .args([
            "--store",
            "s3://bucket/run",
            "--workers",
            "2",
            "--threads",
            "1",
        ])
        .args([
            "--minutes",
            "600",
            "--set",
            "train.threads=1",
            "--print-commands",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let lines: BTreeMap<String, Vec<String>> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for (role, argv) in &lines {
        sandbox.run_and_stop(argv, &format!("ray/launch.py's {role}"));
    }
    // The docs' command lines.
    let doc = std::fs::read_to_string(common::repo_path("docs/distributed.md")).unwrap();
    let commands = docs_commands(&doc);
    assert!(commands.len() >= 4, "the docs' command lines: {commands:?}");
    for argv in commands {
        sandbox.run_and_stop(
            &argv,
            &format!("docs/distributed.md: {}", argv[1..].join(" ")),
        );
    }
    sandbox.verify();
}

#[test]
fn command_lines_split_and_expand_as_a_shell_does() {
    assert_eq!(
        split_words(r#"$B run --store "s3://b/p" --set 'a=[1, 2]' x\ y &"#),
        ["$B", "run", "--store", "s3://b/p", "--set", "a=[1, 2]", "x y"]
    );
    let vars = BTreeMap::from([("A".to_string(), "1".to_string())]);
    assert_eq!(expand("x$A-${A}/$(A)", &vars, false, "t"), "x1-1/$(A)");
    assert_eq!(expand("x$(A)$", &vars, true, "t"), "x1$");
}
