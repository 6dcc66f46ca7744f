//! End-to-end tests of the rules subcommands on the special variants (parachute, gemma,
//! ambiloa, alveole): perft, moves, replay and show with `--variant`.

mod common;
use common::{last_line, loazero, stderr, stdout};

use std::io::Write;

fn record(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

const ALVEOLE_START: &str = "wb1wb/b4w/7/w6b/b7w/w6b/7/b4w/wb1wb b";
const PARACHUTE_START: &str = "8/b6w/w6b/b6w/w6b/b6w/w6b/8 b 6:6";
const AMBILOA_START: &str = "1nnnnnn1/w6e/w6e/w6e/w6e/w6e/w6e/1ssssss1 s";

/// Alveole's perft figures have no outside source: they are the counts of the independent
/// reference implementation (`loa/tests/reference_variants.rs`, `start_perft_figures`).
#[test]
fn alveole_perft_matches_the_reference_implementation() {
    for (depth, expected) in [("1", "15"), ("2", "219"), ("3", "3936"), ("4", "69492")] {
        let o = loazero(&["perft", "--variant", "alveole", "--depth", depth]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(last_line(&o), expected, "depth {depth}");
    }
    let o = loazero(&[
        "perft",
        "--variant",
        "alveole",
        "--depth",
        "2",
        "--position",
        ALVEOLE_START,
    ]);
    assert_eq!(last_line(&o), "219");
}

#[test]
fn start_positions_print_as_documented() {
    for (variant, text, moves) in [
        ("alveole", ALVEOLE_START, 15),
        ("parachute", PARACHUTE_START, 18),
        ("ambiloa", AMBILOA_START, 18),
    ] {
        let o = loazero(&["moves", "--variant", variant, "--position", text]);
        assert!(o.status.success(), "{variant}: {}", stderr(&o));
        assert_eq!(last_line(&o).split(' ').count(), moves, "{variant}");
    }
    let o = loazero(&["moves", "--variant", "alveole", "--position", ALVEOLE_START]);
    // Hexagonal cell names: row letter, then the cell's number in its row.
    let line = last_line(&o);
    for mv in ["a2-c4", "b1-d3", "e1-e3", "i2-g4", "i5-g5"] {
        assert!(line.split(' ').any(|m| m == mv), "{mv} missing in {line}");
    }
    let o = loazero(&["show", "--variant", "ambiloa"]);
    assert!(
        stdout(&o).contains("south (black) to move"),
        "{}",
        stdout(&o)
    );
    let o = loazero(&["show", "--variant", "parachute"]);
    assert!(
        stdout(&o).contains("reserves black 6 white 6"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn parachute_compound_turns_replay() {
    let f = record("1. a3-c3 @d4 h3-f3 @e4 2. a5-c5\n");
    let o = loazero(&[
        "replay",
        "--variant",
        "parachute",
        "--verbose",
        f.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The drop is Black's (the side stays), it puts a white piece on d4 and spends one of
    // Black's reserve.
    assert!(
        out.contains("ply 1: a3-c3 -> 8/b6w/w6b/b6w/w6b/2b4w/w6b/8 b@ 6:6"),
        "{out}"
    );
    assert!(
        out.contains("ply 2: @d4 -> 8/b6w/w6b/b6w/w2w3b/2b4w/w6b/8 w 5:6"),
        "{out}"
    );
    assert!(
        out.contains("ply 4: @e4 -> 8/b6w/w6b/b6w/w2wb2b/2b2w2/w6b/8 b 5:5"),
        "{out}"
    );
    assert_eq!(last_line(&o), "result: none");
    // A drop where a move is due, and a move where the drop is due, are errors naming the ply.
    for (text, ply) in [("1. @d4", "ply 1"), ("1. a3-c3 h3-f3", "ply 2")] {
        let f = record(text);
        let o = loazero(&[
            "replay",
            "--variant",
            "parachute",
            f.path().to_str().unwrap(),
        ]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains(ply), "{text}: {}", stderr(&o));
    }
}

#[test]
fn gemma_removal_can_win() {
    // a1 is stuck: a2 and c1 vanished, the diagonal is blocked by White's b2.
    let position = "7b/8/8/8/8/8/xw6/bxx4w b";
    let o = loazero(&["moves", "--variant", "gemma", "--position", position]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(last_line(&o), "h8-h6 h8-e5 h8-g8 ~a1");
    let f = record("~a1\n");
    let o = loazero(&[
        "replay",
        "--variant",
        "gemma",
        "--position",
        position,
        f.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(last_line(&o), "result: black");
    // h8 has moves, so it cannot be removed.
    let f = record("~h8\n");
    let o = loazero(&[
        "replay",
        "--variant",
        "gemma",
        "--position",
        position,
        f.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("~h8"), "{}", stderr(&o));
}

#[test]
fn ambiloa_turn_order_and_bad_input() {
    let f = record("1. b1-b3 a2-c2 2. b8-b6 h2-f2\n");
    let o = loazero(&[
        "replay",
        "--variant",
        "ambiloa",
        "--verbose",
        f.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // South, West, North, East, then South again.
    for (ply, mover) in [(1, " w\n"), (2, " n\n"), (3, " e\n"), (4, " s\n")] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("ply {ply}:")))
            .unwrap();
        assert!(format!("{line}\n").ends_with(mover), "{line}");
    }
    // South may not move North's pieces.
    let f = record("1. b8-b6\n");
    let o = loazero(&["replay", "--variant", "ambiloa", f.path().to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("b8-b6"), "{}", stderr(&o));
    // Malformed positions name the problem; never a panic.
    for (variant, text, needle) in [
        (
            "ambiloa",
            "1nnnnnn1/w6e/w6e/w6e/w6e/w6e/w6e/1ssssss1 b",
            "'b'",
        ),
        ("parachute", "8/b6w/w6b/b6w/w6b/b6w/w6b/8 b", "reserves"),
        ("parachute", "8/b6w/w6b/b6w/w6b/b6w/w6b/8 b 9:x", "9:x"),
        ("alveole", "wb1wb/b4w/7/w6b/b7w/w6b/7/b4w b", "rows"),
        ("alveole", "wb1wb/b4w/8/w6b/b7w/w6b/7/b4w/wb1wb b", "row g"),
        ("gemma", "7b/8/8/8/8/8/xw6/bxq4w b", "'q'"),
    ] {
        let o = loazero(&["moves", "--variant", variant, "--position", text]);
        assert!(!o.status.success(), "{variant} {text}");
        let err = stderr(&o);
        assert!(err.contains(needle), "{variant} {text}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn selfplay_plays_every_special_variant_and_its_records_replay() {
    let dir = tempfile::tempdir().unwrap();
    for variant in ["parachute", "gemma", "ambiloa", "alveole"] {
        let out = dir.path().join(variant);
        let o = loazero(&[
            "selfplay",
            "--variant",
            variant,
            "--evaluator",
            "heuristic",
            "--games",
            "2",
            "--simulations",
            "16",
            "--threads",
            "1",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{variant}: {}", stderr(&o));
        let scan = selfplay::data::read_recent_shards(&out.join("shards"), None).unwrap();
        assert!(
            scan.skipped.is_empty() && !scan.samples.is_empty(),
            "{variant}"
        );
        let v: loa::Variant = variant.parse().unwrap();
        assert!(scan.samples.iter().all(|s| s.position.variant() == v));
        for r in std::fs::read_dir(out.join("games")).unwrap() {
            let r = r.unwrap().path();
            let o = loazero(&["replay", "--variant", variant, r.to_str().unwrap()]);
            assert!(
                o.status.success(),
                "{variant} {}: {}",
                r.display(),
                stderr(&o)
            );
            assert!(last_line(&o).starts_with("result: "), "{}", stdout(&o));
        }
    }
}
