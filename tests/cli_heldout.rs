//! `loazero heldout`: making a held-out set from game records and scoring a model on it.

mod common;
use common::{loazero, text, tiny_model_at};

#[test]
fn a_made_set_scores_and_bad_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games");
    std::fs::create_dir(&games).unwrap();
    std::fs::write(games.join("g1.txt"), "1. b1-b3 a2-c2 2. g8-g6 h7-f7\n").unwrap();
    let set = dir.path().join("set.txt");
    let (g, s) = (games.to_str().unwrap(), set.to_str().unwrap());
    let o = loazero(&[
        "heldout", "--out", s, "--games", g, "--every", "1", "--mixed", "3", "--depth", "2",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let written = std::fs::read_to_string(&set).unwrap();
    let lines: Vec<&str> = written.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 4 + 3, "{written}");
    assert!(written.contains("alphabeta:depth=2"), "{written}");

    let model = dir.path().join("m.safetensors");
    tiny_model_at(&model, loa::Variant::Standard);
    let m = model.to_str().unwrap();
    for args in [
        vec!["heldout", "--score", m],
        vec!["heldout", "--score", m, "--set", s],
    ] {
        let o = loazero(&args);
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
        let o = loazero(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }
}
