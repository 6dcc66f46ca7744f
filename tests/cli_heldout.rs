//! `loazero heldout`: making a held-out set from game records and scoring a model on it.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_loazero");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn tiny_model(path: &Path) {
    tch::set_num_threads(1);
    let net = train::NetConfig::tiny();
    let model = train::Model::new(
        train::ModelInfo::new(&net, loa::Variant::Standard),
        tch::Device::Cpu,
    );
    model.save(path).unwrap();
}

#[test]
fn a_made_set_scores_and_bad_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games");
    std::fs::create_dir(&games).unwrap();
    std::fs::write(games.join("g1.txt"), "1. b1-b3 a2-c2 2. g8-g6 h7-f7\n").unwrap();
    let set = dir.path().join("set.txt");
    let (g, s) = (games.to_str().unwrap(), set.to_str().unwrap());
    let o = run(&[
        "heldout", "--out", s, "--games", g, "--every", "1", "--mixed", "3", "--depth", "2",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let written = std::fs::read_to_string(&set).unwrap();
    let lines: Vec<&str> = written.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 4 + 3, "{written}");
    assert!(written.contains("alphabeta:depth=2"), "{written}");

    let model = dir.path().join("m.safetensors");
    tiny_model(&model);
    let m = model.to_str().unwrap();
    for args in [
        vec!["heldout", "--score", m],
        vec!["heldout", "--score", m, "--set", s],
    ] {
        let o = run(&args);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            text(&o).contains("top-1") && text(&o).contains("chance"),
            "{}",
            text(&o)
        );
    }
    std::fs::write(&set, "8/8 b ; b1-b3 ; 0\n").unwrap();
    for (args, needle) in [
        (vec!["heldout", "--score", m, "--set", s], "line 1"),
        (
            vec!["heldout", "--score", "/nonexistent.safetensors"],
            "nonexistent",
        ),
        (vec!["heldout"], "--score"),
        (
            vec!["heldout", "--out", s, "--games", "/no/such/dir"],
            "/no/such/dir",
        ),
    ] {
        let o = run(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }
}
