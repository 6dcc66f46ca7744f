//! The newcomer's path through the README, run as pasted: every command of its "From zero
//! to a trained model" and "Playing it" sections, read from README.md itself, in a scratch
//! folder laid out as a fresh clone after `make build` (`target/release/` with the two
//! binaries, `data/`, `configs/`). Once before `make run` (the "Playing it" section alone:
//! it must play the shipped model, `data/shipped`), once after (both sections in order).
//!
//! Four things are changed, each for a reason a test has, and nothing else: `make run` (30
//! minutes of training) becomes what it leaves for the commands after it, the shipped run
//! copied to `runs/default` and plotted as `make run` ends (`loazero plot --dir
//! runs/default`); a match's `--games N` becomes `--games 2`; `serve` listens on a free
//! port (`--port 0`, not 8080, which another program may hold) and is stopped once it
//! prints its URL (its output: the URL and the line naming the run it serves); the
//! engine's commented lines (`#   play b1-b3`) are its input.

mod common;

use std::path::Path;
use std::process::Command;

/// The shell code blocks (```sh) of the README section headed `## {heading}`.
fn section_blocks(readme: &str, heading: &str) -> Vec<Vec<String>> {
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no section `## {heading}`"));
    let body = &readme[start + heading.len() + 5..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in body.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(lines), l) => lines.push(l.to_string()),
            (None, _) => {}
        }
    }
    assert!(
        current.is_none(),
        "an unclosed code block in `## {heading}`"
    );
    blocks
}

/// The bash script that runs `lines` (one block's) as the module doc says: each command
/// echoed, then run; the script stops at the first that fails.
fn script_of(lines: &[String]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // The engine's input: the commented lines that follow it.
        let mut input = Vec::new();
        while let Some(next) = lines.get(i).and_then(|l| l.trim().strip_prefix("#   ")) {
            input.push(next.trim().to_string());
            i += 1;
        }
        let command = if line.starts_with("make run") {
            "mkdir -p runs && cp -r data/shipped runs/default && \
             target/release/loazero plot --dir runs/default"
                .to_string()
        } else if line.starts_with("$B serve") {
            // Listens, prints its URL, is stopped.
            "{ $B serve --port 0 > serve.log 2>&1 & pid=$!; \
               for _ in $(seq 600); do grep -q 'http://' serve.log && break; sleep 0.1; done; \
               kill $pid; wait $pid || true; grep -E '^(loazero serve: http://|serving )' serve.log; }"
                .to_string()
        } else {
            replace_games(line)
        };
        let command = if input.is_empty() {
            command
        } else {
            format!("printf '%s\\n' {} | {command}", shell_words(&input))
        };
        out.push_str(&format!(
            "echo {} >&2\n{command}\n",
            shell_word(&format!("+ {line}"))
        ));
    }
    out
}

/// `line` with the number after `--games` replaced by 2.
fn replace_games(line: &str) -> String {
    let mut words: Vec<&str> = line.split(' ').collect();
    for k in 1..words.len() {
        if words[k - 1] == "--games" {
            words[k] = "2";
        }
    }
    words.join(" ")
}

/// `word` quoted for bash.
fn shell_word(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A scratch folder laid out as a fresh clone after `make build`.
fn fresh_clone() -> tempfile::TempDir {
    let tmp = common::temp_dir();
    let root = tmp.path();
    let release = root.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    let light = Path::new(common::bin());
    std::os::unix::fs::symlink(light, release.join("loazero")).unwrap();
    std::os::unix::fs::symlink(
        light.with_file_name("loazero-torch"),
        release.join("loazero-torch"),
    )
    .unwrap();
    for dir in ["data", "configs"] {
        std::os::unix::fs::symlink(common::repo_path(dir), root.join(dir)).unwrap();
    }
    tmp
}

/// Runs the blocks of the README sections `headings` in order, in one bash process in
/// `dir`; returns what it printed, failing the test with it when a command fails.
fn run_sections(dir: &Path, headings: &[&str]) -> String {
    let readme = std::fs::read_to_string(common::repo_path("README.md")).unwrap();
    let mut script = String::from("set -eu\n");
    for heading in headings {
        let blocks = section_blocks(&readme, heading);
        assert!(!blocks.is_empty(), "`## {heading}` has no sh block");
        for block in blocks {
            script.push_str(&script_of(&block));
        }
    }
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = common::text(&out);
    assert!(
        out.status.success(),
        "a README command failed (the last `+` line):\n{text}\n--- the script:\n{script}"
    );
    text
}

#[test]
fn the_play_section_plays_the_shipped_model_on_a_fresh_clone() {
    let clone = fresh_clone();
    let text = run_sections(clone.path(), &["Playing it"]);
    assert!(text.contains("loazero serve: http://"), "{text}");
    assert!(
        text.contains("data/shipped"),
        "serve names what it serves: {text}"
    );
    assert!(!clone.path().join("runs/default").exists());
}

#[test]
fn the_readme_path_runs_as_pasted_after_make_run() {
    let clone = fresh_clone();
    let text = run_sections(
        clone.path(),
        &["From zero to a trained model", "Playing it"],
    );
    let root = clone.path();
    assert!(root.join("runs/default/plots/elo.png").is_file(), "{text}");
    assert!(root.join("runs/vs-ab2").is_dir(), "{text}");
    assert!(root.join("runs/export/model.pt").is_file(), "{text}");
    assert!(text.contains("serving runs/default"), "{text}");
}
