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
        "heldout",
        "--out",
        s,
        "--records",
        g,
        "--every",
        "1",
        "--mixed",
        "3",
        "--depth",
        "2",
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
        vec!["heldout", "--score", m, "--positions", s],
        // The old name of --positions still works.
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
        (vec!["heldout", "--score", m, "--positions", s], "line 1"),
        (
            vec!["heldout", "--score", "/nonexistent.safetensors"],
            "nonexistent",
        ),
        (vec!["heldout"], "--score"),
        (
            vec!["heldout", "--out", s, "--records", "/no/such/dir"],
            "/no/such/dir",
        ),
    ] {
        let o = loazero(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }
}

/// `loazero heldout --out FILE` as a user types it first, from the repository's root with
/// no game records named: it takes the repository's own records (`data/`), and the old
/// option name `--games DIR` still works.
#[test]
fn a_new_set_from_the_repository_records_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("set.txt");
    let s = set.to_str().unwrap();
    let o = std::process::Command::new(common::bin())
        .current_dir(common::repo_path(""))
        .args([
            "heldout", "--out", s, "--mixed", "0", "--depth", "1", "--every", "16",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let written = std::fs::read_to_string(&set).unwrap();
    assert!(
        written.contains("--records data/winands-thesis-games"),
        "{written}"
    );
    let positions = written.lines().filter(|l| !l.starts_with('#')).count();
    // 16 records of 10 to 60 plies, one position every 16 plies.
    assert!((16..=80).contains(&positions), "{positions}: {written}");

    let records = common::thesis_games();
    let records = records.as_str();
    let o = loazero(&[
        "heldout", "--out", s, "--games", records, "--mixed", "0", "--depth", "1", "--every", "16",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let labelled = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        labelled(&std::fs::read_to_string(&set).unwrap()),
        labelled(&written)
    );

    // Elsewhere the default is not found, and the error says where it is looked for.
    let o = std::process::Command::new(common::bin())
        .current_dir(dir.path())
        .args(["heldout", "--out", s, "--mixed", "0"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        text(&o).contains("data/winands-thesis-games") && text(&o).contains("--records"),
        "{}",
        text(&o)
    );
}
