//! End-to-end tests of the rules-engine subcommands: perft, moves, replay, show.

mod common;
use common::{last_line, loazero, loazero_with_input, stderr, stdout, temp_dir, thesis_games};

const START: &str = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b";

/// The figures are the rules note's (`docs/rules.md`, "Perft").
#[test]
fn perft_prints_leaf_count_last() {
    let o = loazero(&["perft", "--depth", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(last_line(&o), "44952");
    let o = loazero(&["perft", "--depth", "2", "--variant", "6x6"]);
    assert_eq!(last_line(&o), "524");
    let o = loazero(&["perft", "--depth", "2", "--divide", "--position", START]);
    assert_eq!(last_line(&o), "1244");
    assert_eq!(stdout(&o).lines().count(), 37);
    let o = loazero(&[
        "perft",
        "--depth",
        "2",
        "--variant",
        "scrambled-eggs",
        "--rules",
        "icga",
    ]);
    assert_eq!(last_line(&o), "992");
}

#[test]
fn moves_for_one_position_and_a_stream() {
    let o = loazero(&["moves", "--position", START]);
    assert!(o.status.success());
    assert_eq!(last_line(&o).split(' ').count(), 36);

    let input = format!("{START}\n{}\nnot a position\n", START.replace(" b", " w"));
    let o = loazero_with_input(&["moves"], &input);
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0].split(' ').count(), 36);
    assert!(lines[1].starts_with("a2-"));
    assert!(lines[2].starts_with("error: line 3"), "{}", lines[2]);
    assert!(!o.status.success());
}

#[test]
fn replay_thesis_game_and_incomplete_game() {
    let o = loazero(&[
        "replay",
        &format!("{}/appendix_E_game1.txt", thesis_games()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(last_line(&o), "result: white");
    let o = loazero(&[
        "replay",
        &format!("{}/appendix_F_game1_incomplete.txt", thesis_games()),
        "--verbose",
    ]);
    assert_eq!(last_line(&o), "result: none");
    assert!(stdout(&o).contains("ply 1: "));
}

#[test]
fn replay_reports_illegal_move_with_ply_and_position() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let file = dir.join("bad.txt");
    std::fs::write(&file, "1. c8-c6 h4-f2\n2. g8-g2 h2-e2\n").unwrap();
    let o = loazero(&["replay", file.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("ply 3") && err.contains("g8-g2"), "{err}");
    assert!(err.contains("/"), "position text expected in: {err}");
}

/// A record whose moves do not end the game says how it ended in its `# end` line (as
/// self-play and the web app write it); replay prints that result.
#[test]
fn replay_of_a_resigned_record_prints_its_result() {
    let tmp = temp_dir();
    let file = tmp.path().join("resigned.txt");
    std::fs::write(
        &file,
        "# variant standard\n# rules classic\n# end white (black resigned)\n1. b1-b3 h2-f2 *\n",
    )
    .unwrap();
    let o = loazero(&["replay", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("black resigned\n"), "{out}");
    assert_eq!(last_line(&o), "result: white", "{out}");
    // An `# end` line naming no outcome is an error that quotes it.
    std::fs::write(&file, "# end purple (black resigned)\n1. b1-b3 *\n").unwrap();
    let o = loazero(&["replay", file.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("'purple'"), "{}", stderr(&o));
}

#[test]
fn replay_reads_sgf_and_record_headers() {
    let tmp = temp_dir();
    let dir = tmp.path();
    // The LOA SGF page's notation: ':' captures, annotations, any case.
    let sgf = dir.join("game.sgf");
    std::fs::write(
        &sgf,
        "(;FF[4]GM[9]SZ[8]PB[me]PW[you]\n;B[E1-E3];W[h5-f5!];B[d8-D6];W[resign])",
    )
    .unwrap();
    let o = loazero(&["replay", sgf.to_str().unwrap(), "--verbose"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("ply 3: "), "{}", stdout(&o));
    assert!(stdout(&o).contains("white resigned"), "{}", stdout(&o));
    assert_eq!(last_line(&o), "result: black");
    // SGF names its own variant; an illegal move names its number.
    let o = loazero(&["replay", sgf.to_str().unwrap(), "--variant", "6x6"]);
    assert!(
        !o.status.success() && stderr(&o).contains("SGF"),
        "{}",
        stderr(&o)
    );
    std::fs::write(&sgf, "(;GM[9];B[e1-e3];W[h5-h1])").unwrap();
    let o = loazero(&["replay", sgf.to_str().unwrap()]);
    assert!(
        !o.status.success() && stderr(&o).contains("move 2"),
        "{}",
        stderr(&o)
    );
    std::fs::write(&sgf, "(;GM[9];B[e1-e3]").unwrap();
    let o = loazero(&["replay", sgf.to_str().unwrap()]);
    assert!(
        !o.status.success() && !stderr(&o).contains("panicked"),
        "{}",
        stderr(&o)
    );
    // A record's header lines choose variant and rules; a bad one is named.
    let record = dir.join("six.txt");
    std::fs::write(&record, "# variant 6x6\n# rules icga\n1. b1-b3\n").unwrap();
    let o = loazero(&["replay", record.to_str().unwrap(), "--verbose"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("ply 0: 1bbbb1/"), "{}", stdout(&o));
    std::fs::write(&record, "# variant hexagonal\n1. b1-b3\n").unwrap();
    let o = loazero(&["replay", record.to_str().unwrap()]);
    assert!(stderr(&o).contains("# variant hexagonal"), "{}", stderr(&o));
}

#[test]
fn show_draws_a_labelled_board() {
    let o = loazero(&["show", "--position", START]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("a b c d e f g h"));
    assert!(out.contains("8  . x x x x x x .  8"), "{out}");
    assert!(out.contains("36 legal moves"));
}

#[test]
fn malformed_input_is_a_clear_error_never_a_panic() {
    let cases: &[&[&str]] = &[
        &["perft", "--depth", "2", "--position", "1bbbbbb1/w6w b"],
        &["perft", "--depth", "2", "--variant", "hexagonal"],
        &["perft", "--depth", "2", "--rules", "fide"],
        &["perft", "--depth", "x"],
        &[
            "moves",
            "--position",
            "1bbbqbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
        ],
        &["show", "--position", ""],
        &["replay", "/nonexistent/game.txt"],
        &["show", "--position", "8/8/8/8/8/8/8/8 b"],
    ];
    for args in cases {
        let o = loazero(args);
        assert!(!o.status.success(), "{args:?} should fail");
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        assert!(err.contains("error"), "{args:?}: {err}");
    }
    let o = loazero(&["perft", "--depth", "2", "--variant", "hexagonal"]);
    assert!(stderr(&o).contains("hexagonal"));
    let o = loazero(&[
        "moves",
        "--position",
        "1bbbqbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
    ]);
    assert!(stderr(&o).contains("'q'"));
}
