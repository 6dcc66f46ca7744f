//! Tests of SGF files: round trips of every variant, setup starts, the page style, and
//! malformed input refused with errors naming what and where.

use super::*;
use crate::testing::{random_game_positions, XorShift};
use crate::GameRecord;

/// A random game from `start`: up to `max_plies` random moves, so it may end by the
/// rules; some unfinished ones end in a resignation, some have game information.
fn random_sgf(start: Position, rules: Rules, max_plies: usize, rng: &mut XorShift) -> SgfGame {
    let mut game = Game::from_position(start, rules);
    for _ in 0..rng.below(max_plies + 1) {
        if game.is_over() {
            break;
        }
        let moves = game.legal_moves();
        game.play(moves[rng.below(moves.len())]).unwrap();
    }
    let mut sgf = SgfGame::new(game);
    if !sgf.game.is_over() && rng.below(3) == 0 {
        sgf.resigned = Some(Color::ALL[rng.below(2)]);
    }
    if rng.below(2) == 0 {
        sgf.info.black = Some("Mark H.M. Winands [MIA]".into());
        sgf.info.white = Some("back\\slash ]bracket[ \u{e9}".into());
        sgf.info.comment = Some("line 1\nline 2 \\] ;(".into());
        sgf.info.date = Some("2024-05-01".into());
        sgf.info.event = Some("test".into());
    }
    sgf
}

/// The SGF text of `sgf` reads back to the same game and writes the same text.
fn assert_round_trip(sgf: &SgfGame) {
    let text = sgf.format();
    let back = SgfGame::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let (a, b) = (&sgf.game, &back.game);
    assert_eq!(b.start(), a.start(), "{text}");
    assert_eq!(b.start().ply(), a.start().ply(), "{text}");
    assert_eq!(b.rules(), a.rules(), "{text}");
    assert_eq!(b.moves(), a.moves(), "{text}");
    assert_eq!(b.position(), a.position(), "{text}");
    assert_eq!(b.outcome(), a.outcome(), "{text}");
    assert_eq!(back.resigned, sgf.resigned, "{text}");
    assert_eq!(back.result(), sgf.result(), "{text}");
    let info = GameInfo {
        result: back.info.result.clone(),
        ..sgf.info.clone()
    };
    assert_eq!(back.info, info, "{text}");
    assert_eq!(back.format(), text);
}

#[test]
fn random_games_of_every_variant_round_trip() {
    let mut rng = XorShift::new(11);
    let rule_sets = [
        Rules::classic(),
        Rules::icga(),
        Rules::parse("no-move=loss,first=white").unwrap(),
        Rules::parse("repetition=off,ply-limit=30").unwrap(),
    ];
    let mut ended = 0;
    for variant in Variant::ALL {
        for rules in rule_sets {
            for _ in 0..6 {
                let sgf = random_sgf(Position::start(variant, &rules), rules, 150, &mut rng);
                ended += sgf.game.is_over() as usize;
                assert_round_trip(&sgf);
            }
        }
    }
    assert!(ended > 20, "only {ended} games ended");
    for game in crate::testing::random_games(&Variant::ALL, Rules::classic(), 70, 100, 2) {
        assert_round_trip(&SgfGame::new(game));
    }
}

#[test]
fn custom_starts_of_every_variant_round_trip() {
    let mut rng = XorShift::new(5);
    for variant in Variant::ALL {
        let rules = Rules::classic();
        let positions = random_game_positions(variant, &rules, 4, 40, 3);
        for start in positions.iter().step_by(7) {
            let sgf = random_sgf(*start, rules, 30, &mut rng);
            assert_round_trip(&sgf);
            let text = sgf.format();
            assert_eq!(
                text.contains("start="),
                *start != Position::start(variant, &rules)
            );
            assert!(text.contains("PL[") || *start == Position::start(variant, &rules));
        }
    }
    // Parachute with a drop pending: the drop is a node of the same colour.
    let rules = Rules::classic();
    let mut game = Game::new(Variant::Parachute, rules);
    let mv = game.legal_moves()[0];
    game.play(mv).unwrap();
    let drop = game.legal_moves()[0];
    assert!(drop.is_drop());
    game.play(drop).unwrap();
    let text = SgfGame::new(game).format();
    assert!(text.contains(&format!(";B[{mv}];B[{drop}]")), "{text}");
}

/// The page's example style: capitals, `:` for captures, annotations.
const EXAMPLE: &str = "(;FF[4]GM[9]SZ[8]PB[Black]PW[White]
;B[e1-e3] ; W[H3:E3++]
;B[D1-d3!];W[a2-c2?]
;B[d3:a3])";

#[test]
fn reads_the_page_style_case_insensitively() {
    let sgf = SgfGame::parse(EXAMPLE).unwrap();
    let mut game = Game::new(Variant::Standard, Rules::classic());
    for m in ["e1-e3", "h3xe3", "d1-d3", "a2-c2", "d3xa3"] {
        game.play_text(m).unwrap();
    }
    assert_eq!(sgf.game.moves(), game.moves());
    assert_eq!(sgf.game.rules(), &Rules::classic());
    assert_eq!(sgf.info.black.as_deref(), Some("Black"));
    assert_eq!(sgf.resigned, None);
    // A capture written with '-' or 'x', a quiet move written with ':'.
    let loose = EXAMPLE
        .replace("H3:E3++", "h3-e3")
        .replace("D1-d3!", "d1:d3")
        .replace("d3:a3", "d3xa3");
    assert_eq!(SgfGame::parse(&loose).unwrap().game.moves(), game.moves());
    // Lower-case letters in identifiers (old files), whitespace, a BOM.
    let old = format!("\u{feff} \n{}", EXAMPLE.replace("PB[", "PlayerBlack ["));
    assert_eq!(
        SgfGame::parse(&old).unwrap().info.black.as_deref(),
        Some("Black")
    );
    // Passes and resignation.
    let r = SgfGame::parse("(;GM[9];B[e1-e3];W[resign])").unwrap();
    assert_eq!(r.resigned, Some(Color::White));
    assert_eq!(r.result(), Some(Outcome::Win(Color::Black)));
    let r = SgfGame::parse("(;GM[9];B[e1-e3];W[h3:e3];B[RESIGN])").unwrap();
    assert_eq!(r.resigned, Some(Color::Black));
    assert_eq!(r.game.moves().len(), 2);
    let r = SgfGame::parse("(;GM[9]RE[W+R];B[e1-e3])").unwrap();
    assert_eq!(r.resigned, Some(Color::Black));
}

#[test]
fn the_main_line_is_the_first_variation() {
    let text = "(;GM[9];B[e1-e3](;W[h3:e3](;B[d1-d3])(;B[c1-c3]))(;W[a2-c2]))(;GM[1])";
    let sgf = SgfGame::parse(text).unwrap();
    let shown: Vec<String> = sgf.game.moves().iter().map(|m| m.to_string()).collect();
    assert_eq!(shown, ["e1-e3", "h3xe3", "d1-d3"]);
}

#[test]
fn values_unescape_and_escape() {
    let sgf = SgfGame::parse("(;GM[9]C[a \\] b \\\\ c\\\nd]PB[x\\y])").unwrap();
    assert_eq!(sgf.info.comment.as_deref(), Some("a ] b \\ cd"));
    assert_eq!(sgf.info.black.as_deref(), Some("xy"));
    let mut sgf = SgfGame::new(Game::new(Variant::Standard, Rules::classic()));
    sgf.info.comment = Some("]\\]".into());
    assert!(sgf.format().contains("C[\\]\\\\\\]]"), "{}", sgf.format());
    assert_round_trip(&sgf);
}

#[test]
fn setup_properties_give_a_custom_start() {
    let text = "(;GM[9]SZ[8]AE[b1][c1][d1][e1][f1][g1][b8][c8][d8][e8][f8][g8]\
                AB[d4][f6]AW[a2]PL[w];W[a4:d4])";
    let sgf = SgfGame::parse(text).unwrap();
    let expected =
        Position::from_text("8/w6w/w4b1w/w6w/w2b3w/w6w/w6w/8 w", Variant::Standard).unwrap();
    assert_eq!(sgf.game.start(), &expected);
    assert_eq!(sgf.game.moves().len(), 1);
    // Dyer's custom setup starts from an empty board.
    let sgf = SgfGame::parse("(;GM[9]SU[Custom]AB[d4][e5]AW[c3])").unwrap();
    let expected = Position::from_text("8/8/8/4b3/3b4/2w5/8/8 b", Variant::Standard).unwrap();
    assert_eq!(sgf.game.start(), &expected);
    // SU names a variant; SZ[6] without LZ is 6x6.
    let sgf = SgfGame::parse("(;GM[9]SU[Scrambled-eggs])").unwrap();
    assert_eq!(sgf.game.start().variant(), Variant::ScrambledEggs);
    let sgf = SgfGame::parse("(;GM[9]SZ[6];B[b1-b3])").unwrap();
    assert_eq!(sgf.game.start().variant(), Variant::Six);
    // LZ gives variant and rules, and writing shows them.
    let text = "(;GM[9]LZ[variant=parachute;rules=classic,no-move=loss])";
    let sgf = SgfGame::parse(text).unwrap();
    assert_eq!(
        sgf.game.start(),
        &Position::start(Variant::Parachute, &Rules::classic())
    );
    assert_eq!(sgf.game.rules().no_move, crate::rules::NoMove::Loss);
    let written = sgf.format();
    assert!(
        written.starts_with(
            "(;FF[4]GM[9]SZ[8]CA[UTF-8]AP[loazero]\nLZ[variant=parachute;rules=first=black,"
        ),
        "{written}"
    );
    assert!(
        !written.contains("AB[") && !written.contains("PL["),
        "{written}"
    );
    let hex = SgfGame::new(Game::new(Variant::Alveole, Rules::icga())).format();
    assert!(
        hex.contains("SZ[9]") && hex.contains("LZ[variant=alveole;rules=icga]"),
        "{hex}"
    );
}

#[test]
fn a_custom_start_is_written_as_setup() {
    let rules = Rules::classic();
    let start =
        Position::from_text("8/w6w/w4b1w/w6w/w2b3w/w6w/w6w/8 w", Variant::Standard).unwrap();
    let sgf = SgfGame::new(Game::from_position(start, rules));
    let text = sgf.format();
    assert!(
        text.contains("AE[b1][c1][d1][e1][f1][g1][b8][c8][d8][e8][f8][g8]AB[d4][f6]PL[W]"),
        "{text}"
    );
    // Without LZ's start the setup alone gives the same position.
    let plain = text.replace(";start=8/w6w/w4b1w/w6w/w2b3w/w6w/w6w/8 w", "");
    assert_ne!(plain, text);
    assert_eq!(SgfGame::parse(&plain).unwrap().game.start(), &start);
    // Setup that disagrees with LZ's start is an error.
    let e = SgfGame::parse(&text.replace("AB[d4]", "AB[d5]")).unwrap_err();
    assert!(e.message.contains("disagree"), "{e}");
}

/// The error message of `text`, which must not parse.
fn error(text: &str) -> String {
    match SgfGame::parse(text) {
        Ok(_) => panic!("{text:?} parsed"),
        Err(e) => e.message,
    }
}

#[test]
fn illegal_moves_name_their_number() {
    let e = error("(;GM[9]\n;B[e1-e3];W[h3:e3]\n;B[d1-d4])");
    assert!(
        e.contains("move 3") && e.contains("B[d1-d4]") && e.contains("line 3, column 2"),
        "{e}"
    );
    let e = error("(;GM[9];W[a2-c2])");
    assert!(e.contains("move 1") && e.contains("black's turn"), "{e}");
    let e = error("(;GM[9];B[e1-e3];W[z9-a1])");
    assert!(e.contains("move 2") && e.contains("z9"), "{e}");
    let e = error("(;GM[9];B[e1-e3];W[resign];B[d1-d3])");
    assert!(e.contains("move 3") && e.contains("resignation"), "{e}");
    let e = error("(;GM[9];B[pass])");
    assert!(e.contains("move 1") && e.contains("not legal"), "{e}");
    let e = error("(;GM[9];B[])");
    assert!(e.contains("move 1") && e.contains("not legal"), "{e}");
    let e = error("(;GM[9];B[e1-e3]W[a2-c2])");
    assert!(e.contains("both B and W"), "{e}");
    let e = error("(;GM[9];B[e1-e3];AB[d4])");
    assert!(e.contains("setup"), "{e}");
    let e = error("(;GM[9];B[e1-e3][d1-d3])");
    assert!(e.contains("one value"), "{e}");
    // A move after the end of the game.
    let rules = Rules::classic();
    let mut rng = XorShift::new(3);
    let over = loop {
        let sgf = random_sgf(Position::start(Variant::Six, &rules), rules, 400, &mut rng);
        if sgf.game.is_over() {
            break sgf;
        }
    };
    let text = over.format();
    let n = over.game.moves().len();
    let extra = text.replace(")\n", ";B[pass])");
    let e = error(&extra);
    assert!(
        e.contains(&format!("move {}", n + 1)) && e.contains("over"),
        "{e}"
    );
    // RE must agree with the end of the game.
    let winner = over.game.outcome().unwrap().winner();
    let wrong = match winner {
        Some(Color::Black) => "RE[W+]",
        _ => "RE[B+]",
    };
    let re = text.lines().find(|l| l.starts_with("RE[")).unwrap();
    assert!(error(&text.replace(re, wrong)).contains("the moves give"));
}

#[test]
fn forced_passes_read_as_pass_or_empty() {
    let rules = Rules::classic();
    // Black's a1 and h8 are boxed in by White; nobody is connected.
    let pos = Position::from_text("6wb/6ww/8/8/8/8/ww6/bw6 b", Variant::Standard).unwrap();
    assert_eq!(pos.legal_moves(&rules).as_slice(), [Move::PASS]);
    for value in ["pass", "PASS", "", " pass+ "] {
        let mut sgf = SgfGame::new(Game::from_position(pos, rules));
        sgf.game.play(Move::PASS).unwrap();
        let text = sgf.format().replace("[pass]", &format!("[{value}]"));
        assert_eq!(
            SgfGame::parse(&text).unwrap().game.moves(),
            [Move::PASS],
            "{text}"
        );
    }
}

#[test]
fn root_properties_are_checked() {
    for (text, word) in [
        ("(;GM[1])", "GM[1]"),
        ("(;GM[12])", "GM[12]"),
        ("(;GM[nine])", "GM"),
        ("(;FF[5])", "FF[5]"),
        ("(;SZ[19])", "SZ[19]"),
        ("(;SZ[8:6])", "SZ[8:6]"),
        ("(;SZ[99999999999999999999999])", "size"),
        ("(;LZ[variant=gemma]SZ[6])", "gemma"),
        ("(;LZ[variant=alveole]SZ[8])", "size 9"),
        ("(;LZ[variant=chess])", "chess"),
        ("(;LZ[rules=fide])", "fide"),
        ("(;LZ[colour=red])", "colour"),
        ("(;LZ[variant])", "key=value"),
        ("(;LZ[ply=-1])", "ply"),
        ("(;LZ[variant=gemma;variant=6x6])", "twice"),
        ("(;LZ[start=8/8 b])", "rows"),
        ("(;SU[Chess])", "Chess"),
        ("(;AB[z9])", "z9"),
        ("(;AB[a1:c3])", "a1:c3"),
        ("(;PL[x])", "PL[x]"),
        ("(;SU[Custom]AB[d4])", "each side"),
        ("(;AB[d4]AW[D4])", "d4 is set twice"),
        ("(;AB[d4];AW[d4];B[pass])", "move 1"),
        ("(;GM[9]RE[B+];B[e1-e3])", ""),
    ] {
        if word.is_empty() {
            assert!(SgfGame::parse(text).is_ok(), "{text}");
            continue;
        }
        let e = error(text);
        assert!(e.contains(word), "{text}: {e}");
    }
    assert_eq!(
        SgfGame::parse("(;LZ[variant=alveole]SZ[9])")
            .unwrap()
            .game
            .start()
            .variant(),
        Variant::Alveole
    );
}

#[test]
fn syntax_errors_name_what_and_where() {
    for (text, words) in [
        ("", &["no game tree"][..]),
        ("   \n ", &["no game tree"]),
        ("(", &["never closed", "line 1, column 1"]),
        ("(;GM[9]", &["never closed"]),
        ("(;GM[9]\nC[abc", &["never closed", "line 2, column 2"]),
        ("(;GM[9]))", &["without a matching", "column 9"]),
        ("()", &["empty game tree"]),
        ("(;GM[9]()", &["empty game tree"]),
        ("((;GM[9]))", &["before the first node"]),
        ("(;GM[9](;B[e1-e3]);W[a2-c2])", &["after the variations"]),
        (";GM[9]", &["outside a game tree"]),
        ("(GM[9])", &["outside a node"]),
        ("(;gm[9])", &["no capital"]),
        ("(;GM)", &["no value"]),
        ("(;GM 9)", &["no value"]),
        ("(;[9])", &["without a property"]),
        ("(;GM[9]#)", &["unexpected character '#'"]),
        ("(;GM[9]\u{1F600})", &["unexpected character"]),
        ("(;GM[9]C[a]C[b])", &["twice"]),
        ("(;GM[9])x", &["outside a node", "column 9"]),
        ("(;GM[9])?", &["unexpected character '?'"]),
    ] {
        let e = error(text);
        for w in words {
            assert!(e.contains(w), "{text:?}: {e}");
        }
    }
    let huge = format!("(;GM[9]C[{}]", "x".repeat(100_000));
    assert!(error(&huge).contains("never closed"));
    let deep = "(;".repeat(50_000);
    assert!(error(&deep).contains("never closed"));
    let deep = format!("{}{}", "(;GM[9]".repeat(20_000), ")".repeat(20_000));
    assert!(SgfGame::parse(&deep).is_ok());
    let long_id = format!("(;{}[1])", "A".repeat(10_000));
    assert!(SgfGame::parse(&long_id).is_ok());
    let long_move = format!("(;GM[9];B[{}])", "e1-e3".repeat(10_000));
    assert!(error(&long_move).contains("move 1"));
}

#[test]
fn garbage_never_panics() {
    let mut rng = XorShift::new(0x5eed);
    let alphabet = b"();[]\\:-+!xX@~ \n\tBWABAWAEPLGMSZLZRE0123456789abcdefghipassresign=";
    for len in 0..3000usize {
        let mut bytes = Vec::new();
        for _ in 0..(len % 120) {
            let r = rng.next_u64();
            bytes.push(if r.is_multiple_of(5) {
                (r >> 8) as u8
            } else {
                alphabet[(r >> 16) as usize % alphabet.len()]
            });
        }
        let text = String::from_utf8_lossy(&bytes);
        let _ = SgfGame::parse(&text);
        let _ = SgfGame::parse(&format!("(;GM[9]{text})"));
        let _ = SgfGame::parse(&format!("(;GM[9];B[{text}])"));
    }
    // Truncations and single-byte changes of valid files.
    let rules = Rules::classic();
    let mut files = Vec::new();
    for variant in Variant::ALL {
        let start = random_game_positions(variant, &rules, 1, 20, 4)[10];
        let mut sgf = random_sgf(start, rules, 40, &mut rng);
        sgf.info.comment = Some("a ] \\ comment".into());
        files.push(sgf.format());
    }
    for text in &files {
        let end = text.rfind(')').unwrap();
        for cut in 0..text.len() {
            if let Some(prefix) = text.get(..cut) {
                let r = SgfGame::parse(prefix);
                assert_eq!(r.is_ok(), cut > end, "{prefix}");
            }
        }
        for _ in 0..400 {
            let mut bytes = text.as_bytes().to_vec();
            let at = rng.below(bytes.len());
            bytes[at] = if rng.below(2) == 0 {
                rng.next_u64() as u8
            } else {
                alphabet[rng.below(alphabet.len())]
            };
            let _ = SgfGame::parse(&String::from_utf8_lossy(&bytes));
            bytes.remove(rng.below(bytes.len()));
            let _ = SgfGame::parse(&String::from_utf8_lossy(&bytes));
        }
    }
}

#[test]
fn a_thesis_game_round_trips() {
    let path = crate::testing::thesis_games_dir().join("appendix_E_game1.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let record = GameRecord::parse(&text).unwrap();
    let mut game = Game::new(Variant::Standard, Rules::classic());
    for token in &record.moves {
        game.play_text(token).unwrap();
    }
    let winner = game.outcome().and_then(Outcome::winner).unwrap();
    let mut sgf = SgfGame::new(game);
    sgf.info.black = Some("MIA".into());
    sgf.info.white = Some("opponent".into());
    sgf.info.event = Some("Winands thesis, appendix E, game 1".into());
    assert_round_trip(&sgf);
    let written = sgf.format();
    assert!(
        written.contains(&format!("RE[{}+]", color_letter(winner))),
        "{written}"
    );
    assert!(
        written.contains(";B[") && written.contains(":"),
        "{written}"
    );
    let back = SgfGame::parse(&written).unwrap();
    assert_eq!(back.game.moves().len(), record.moves.len());
}
