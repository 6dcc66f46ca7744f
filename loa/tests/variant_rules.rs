//! Every special rule of `parachute`, `gemma`, `ambiloa` and `alveole` (`docs/rules.md`) on
//! hand-made positions written as position text; text and move notation of every variant;
//! incremental hashes; and `Game` replays of a short scripted game per variant.

use loa::geometry::HEX5;
use loa::notation::{cell_name, parse_square};
use loa::perft::perft;
use loa::{Color, ExtraState, Game, GameRecord, Move, Outcome, Player, Position, Rules, Variant};

fn pos(v: Variant, text: &str) -> Position {
    let p = Position::from_text(text, v).unwrap_or_else(|e| panic!("{v} {text}: {e}"));
    assert_eq!(p.to_text(), text, "{v}: text round trip");
    p
}

fn classic() -> Rules {
    Rules::classic()
}

fn icga() -> Rules {
    Rules::icga()
}

fn loss() -> Rules {
    Rules::parse("no-move=loss").unwrap()
}

/// The legal moves under `rules`, as sorted text.
fn names(p: &Position, rules: &Rules) -> Vec<String> {
    let mut v: Vec<String> = p.legal_moves(rules).iter().map(|m| m.to_string()).collect();
    v.sort();
    v
}

/// The legal normal moves from `cell`, as sorted text.
fn moves_from(p: &Position, cell: &str) -> Vec<String> {
    names(p, &classic())
        .into_iter()
        .filter(|m| m.len() > cell.len() + 1 && m.starts_with(cell))
        .filter(|m| matches!(m.as_bytes()[cell.len()], b'-' | b'x'))
        .collect()
}

/// The position after the move written `text`, which must be legal; checks the hash
/// against the position rebuilt from its text.
fn after(p: &Position, text: &str) -> Position {
    let mv = p
        .parse_move(text, &classic())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let q = p.after(mv);
    assert_hash(&q);
    q
}

fn assert_hash(p: &Position) {
    let text = p.to_text();
    let rebuilt = Position::from_text(&text, p.variant()).unwrap();
    assert_eq!(rebuilt, *p, "{text}");
    assert_eq!(rebuilt.hash(), p.hash(), "hash of {text}");
}

fn sq(v: Variant, name: &str) -> u64 {
    1u64 << parse_square(name, v.geometry()).unwrap()
}

// ---------------------------------------------------------------------------------------
// parachute
// ---------------------------------------------------------------------------------------

const PARACHUTE_START: &str = "8/b6w/w6b/b6w/w6b/b6w/w6b/8 b 6:6";

#[test]
fn parachute_turn_is_a_move_then_a_drop_of_an_opponent_piece() {
    let v = Variant::Parachute;
    let start = Position::start(v, &classic());
    assert_eq!(start.to_text(), PARACHUTE_START);
    assert_eq!(moves_from(&start, "a3"), ["a3-b2", "a3-b4", "a3-c3"]);
    assert!(names(&start, &classic())
        .iter()
        .all(|m| !m.starts_with('@')));

    // The move: the same side stays to move and owes the drop; the reserves are unchanged.
    let moved = after(&start, "a3-c3");
    assert_eq!(moved.to_text(), "8/b6w/w6b/b6w/w6b/2b4w/w6b/8 b@ 6:6");
    assert_eq!(moved.to_move(), Color::Black);
    assert!(moved.drop_pending());
    assert_eq!(moved.previous_mover(), Color::Black);
    let drops = moved.legal_moves(&classic());
    assert_eq!(drops.len(), 64 - 12);
    assert_eq!(moved.count_moves(), 52);
    assert!(drops.iter().all(|m| m.is_drop()));
    assert!(moved.parse_move("@c3", &classic()).is_err(), "occupied");
    assert!(
        moved.parse_move("a5-c5", &classic()).is_err(),
        "no second move"
    );

    // The drop: a White piece from Black's reserve; then White's compound turn.
    let dropped = after(&moved, "@e5");
    assert_eq!(dropped.to_text(), "8/b6w/w6b/b3w2w/w6b/2b4w/w6b/8 w 5:6");
    assert!(dropped.pieces(Color::White) & sq(v, "e5") != 0);
    assert_eq!(dropped.reserve(Color::Black), 5);
    assert_eq!(dropped.previous_mover(), Color::Black);
    let white_moved = after(&dropped, "e5-e6");
    assert_eq!(white_moved.to_move(), Color::White);
    assert!(white_moved.drop_pending());
    let white_dropped = after(&white_moved, "@d4");
    assert!(white_dropped.pieces(Color::Black) & sq(v, "d4") != 0);
    assert_eq!(
        white_dropped.to_text(),
        "8/b6w/w3w2b/b6w/w2b3b/2b4w/w6b/8 b 5:5"
    );
}

#[test]
fn parachute_reserves_count_down_over_six_turns_then_normal_play() {
    let v = Variant::Parachute;
    let rules = classic();
    let mut p = Position::start(v, &rules);
    for turn in 0..12 {
        let side = p.to_move();
        assert_eq!(side, Color::ALL[turn % 2]);
        assert!(!p.drop_pending());
        assert_eq!(p.reserve(side), 6 - (turn / 2) as u8, "turn {turn}");
        let mv = p.legal_moves(&rules)[0];
        assert!(mv.is_step());
        p.play(mv);
        assert_hash(&p);
        assert_eq!((p.to_move(), p.drop_pending()), (side, true), "turn {turn}");
        assert_eq!(p.outcome(&rules), None);
        let drops = p.legal_moves(&rules);
        assert!(drops.iter().all(|m| m.is_drop()));
        // Drop far from the opponent's other pieces: the last empty cell.
        let mv = drops[drops.len() - 1];
        let before = p.pieces(side.opponent()).count_ones();
        p.play(mv);
        assert_hash(&p);
        assert_eq!(p.pieces(side.opponent()).count_ones(), before + 1);
        assert_eq!(p.to_move(), side.opponent());
        assert!(!p.drop_pending());
        assert_eq!(p.reserve(side), 5 - (turn / 2) as u8);
        assert_eq!(p.outcome(&rules), None, "turn {turn}: {}", p.to_text());
    }
    assert!(p.to_text().ends_with(" b 0:0"), "{}", p.to_text());
    // After six turns each, a turn is one move.
    for _ in 0..4 {
        let side = p.to_move();
        let moves = p.legal_moves(&rules);
        assert!(moves.iter().all(|m| m.is_step()));
        p.play(moves[0]);
        assert_hash(&p);
        assert!(!p.drop_pending());
        assert_eq!(p.to_move(), side.opponent());
    }
}

/// Black a1 b1 e2, White h4 h2; Black holds one White piece. e2-c2 (two pieces on rank 2)
/// connects Black; h3 would connect White.
const PARACHUTE_CONNECT: &str = "8/8/8/8/7w/8/4b2w/bb6 b 1:0";

#[test]
fn parachute_connection_is_checked_when_the_turn_is_complete() {
    let v = Variant::Parachute;
    let p = pos(v, PARACHUTE_CONNECT);
    assert_eq!(p.outcome(&classic()), None);

    // The move connects Black, but the turn is not over until the drop.
    let mv = p.parse_move("e2-c2", &classic()).unwrap();
    let moved = p.after(mv);
    assert!(moved.is_connected(Color::Black));
    for rules in [classic(), icga()] {
        assert_eq!(moved.outcome(&rules), None);
        assert_eq!(moved.connection_outcome(&rules), None);
        assert_eq!(moved.connection_outcome_after(mv, &rules), None);
    }

    // A drop that leaves White apart: Black wins at the end of its turn.
    let far = moved.parse_move("@a8", &classic()).unwrap();
    let q = moved.after(far);
    assert!(q.to_text().ends_with(" w 0:0"));
    for rules in [classic(), icga()] {
        assert_eq!(q.outcome(&rules), Some(Outcome::Win(Color::Black)));
        assert_eq!(
            q.connection_outcome_after(far, &rules),
            Some(Outcome::Win(Color::Black))
        );
    }

    // A drop that connects White too: the simultaneous-connection option decides.
    let joining = moved.parse_move("@h3", &classic()).unwrap();
    let q = moved.after(joining);
    assert!(q.is_connected(Color::White) && q.is_connected(Color::Black));
    assert_eq!(q.outcome(&classic()), Some(Outcome::Win(Color::Black)));
    assert_eq!(q.outcome(&icga()), Some(Outcome::Draw));
    assert_eq!(
        q.connection_outcome_after(joining, &icga()),
        Some(Outcome::Draw)
    );

    // A drop that connects only the opponent hands the opponent the win.
    let q = after(&after(&p, "e2-g2"), "@h3");
    assert!(!q.is_connected(Color::Black));
    for rules in [classic(), icga()] {
        assert_eq!(q.outcome(&rules), Some(Outcome::Win(Color::White)));
    }

    // The same through `Game`.
    for (rules, result) in [
        (classic(), Outcome::Win(Color::Black)),
        (icga(), Outcome::Draw),
    ] {
        let mut game = Game::from_position(p, rules);
        game.play_text("e2-c2").unwrap();
        assert_eq!(game.outcome(), None);
        game.play_text("@h3").unwrap();
        assert_eq!(game.outcome(), Some(result));
        assert!(game.play_text("h2-h1").is_err());
    }
}

/// Black's a1 and h8 are walled in by White; Black still holds one White piece.
const PARACHUTE_STUCK: &str = "5wwb/6ww/5w1w/8/8/w1w5/ww6/bww5 b 1:0";

#[test]
fn parachute_forced_pass_in_the_move_part_still_drops() {
    let v = Variant::Parachute;
    let p = pos(v, PARACHUTE_STUCK);
    assert_eq!(p.count_moves(), 0);
    assert!(!p.nobody_can_move());
    assert_eq!(p.outcome(&classic()), None);
    assert_eq!(p.legal_moves(&classic()).as_slice(), &[Move::PASS]);
    // Under no-move=loss the side that cannot make the move of its turn loses.
    assert_eq!(p.outcome(&loss()), Some(Outcome::Win(Color::White)));
    assert!(p.legal_moves(&loss()).is_empty());

    let passed = after(&p, "pass");
    assert_eq!(passed.to_text(), "5wwb/6ww/5w1w/8/8/w1w5/ww6/bww5 b@ 1:0");
    assert_eq!(passed.legal_moves(&classic()).len(), 64 - 14);
    let dropped = after(&passed, "@e5");
    assert_eq!(dropped.to_text(), "5wwb/6ww/5w1w/4w3/8/w1w5/ww6/bww5 w 0:0");
    assert_eq!(dropped.outcome(&classic()), None);

    // Without a reserve the pass is the whole turn.
    let p = pos(v, "5wwb/6ww/5w1w/8/8/w1w5/ww6/bww5 b 0:3");
    assert_eq!(
        after(&p, "pass").to_text(),
        "5wwb/6ww/5w1w/8/8/w1w5/ww6/bww5 w 0:3"
    );
}

#[test]
fn parachute_nobody_can_move_is_a_draw_only_without_reserves() {
    let v = Variant::Parachute;
    let full = "bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw";
    let p = pos(v, &format!("{full} b 0:0"));
    assert!(p.nobody_can_move());
    assert_eq!(p.outcome(&classic()), Some(Outcome::Draw));
    assert_eq!(perft(&p, &classic(), 2), 0);
    // A reserve needs an empty cell for each of its pieces.
    for reserves in ["1:0", "0:1"] {
        let text = format!("{full} b {reserves}");
        let err = Position::from_text(&text, v).unwrap_err().message;
        assert!(err.contains(reserves) && err.contains("empty"), "{err}");
    }
    let err = Position::from_text(&format!("{full} b@ 1:0"), v)
        .unwrap_err()
        .message;
    assert!(err.contains("empty"), "{err}");
    // Files alternate and d4 is empty: no piece can move (every move would jump an enemy,
    // land on an own piece or leave the board), but Black still holds a piece to drop.
    let holed = "bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwb1bwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw";
    let p = pos(v, &format!("{holed} b 1:0"));
    assert_eq!(p.count_moves(), 0);
    // Neither side has a move other than a pass, yet the game goes on.
    assert!(!p.has_move(Color::Black) && !p.has_move(Color::White));
    assert!(!p.nobody_can_move());
    assert_eq!(p.outcome(&classic()), None);
    let q = after(&after(&p, "pass"), "@d4");
    assert_eq!(q.to_text(), format!("{full} w 0:0"));
    assert_eq!(q.outcome(&classic()), Some(Outcome::Draw));
    // White holds the piece: Black passes, then White passes and drops.
    let p = pos(v, &format!("{holed} b 0:1"));
    assert_eq!(p.outcome(&classic()), None);
    let q = after(&after(&p, "pass"), "pass");
    assert_eq!(q.to_text(), format!("{holed} w@ 0:1"));
    assert_eq!(names(&q, &classic()), ["@d4"]);
    // Nothing to drop: a draw.
    let p = pos(v, &format!("{holed} b 0:0"));
    assert!(p.nobody_can_move());
    assert_eq!(p.outcome(&classic()), Some(Outcome::Draw));
}

#[test]
fn parachute_text_errors_name_the_token() {
    let v = Variant::Parachute;
    let board = "8/b6w/w6b/b6w/w6b/b6w/w6b/8";
    let err = |t: &str| Position::from_text(t, v).unwrap_err().message;
    assert!(err(&format!("{board} b")).contains("reserves"));
    assert!(err(&format!("{board} b 6-6")).contains("'6-6'"));
    assert!(err(&format!("{board} b 6:x")).contains("'6:x'"));
    assert!(err(&format!("{board} b 7:6")).contains('7'));
    assert!(err(&format!("{board} b@ 0:6")).contains("pending"));
    assert!(err(&format!("{board} q 6:6")).contains("'q'"));
    assert!(err(&format!("{board} b 6:6 zz")).contains("'zz'"));
    // `@` marks a pending drop only in parachute.
    let e = Position::from_text(
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b@",
        Variant::Standard,
    )
    .unwrap_err()
    .message;
    assert!(e.contains("'b@'"), "{e}");
    let e = Position::from_text(&format!("{board} b 6:6"), Variant::Standard)
        .unwrap_err()
        .message;
    assert!(e.contains("'6:6'"), "{e}");
}

// ---------------------------------------------------------------------------------------
// gemma
// ---------------------------------------------------------------------------------------

#[test]
fn gemma_the_cell_left_vanishes() {
    let v = Variant::Gemma;
    let start = Position::start(v, &classic());
    let p = after(&start, "b1-b3");
    assert_eq!(p.to_text(), "1bbbbbb1/w6w/w6w/w6w/w6w/wb5w/w6w/1xbbbbb1 w");
    assert_eq!(p.vanished(), sq(v, "b1"));
    // The same move in standard leaves an empty square.
    let s = Position::start(Variant::Standard, &classic());
    assert_eq!(
        after(&s, "b1-b3").to_text(),
        "1bbbbbb1/w6w/w6w/w6w/w6w/wb5w/w6w/2bbbbb1 w"
    );
}

/// Black a1 e5 b7, White h1 h6 d7; b1 and c3 vanished.
const GEMMA_CROSS: &str = "8/1b1w4/7w/4b3/8/2x5/8/bx5w b";

#[test]
fn gemma_vanished_cells_are_crossed_and_uncounted_but_never_landed_on() {
    let v = Variant::Gemma;
    let p = pos(v, GEMMA_CROSS);
    // Rank 1 holds a1 and h1 (b1 is not counted): a1-c1 crosses b1. The diagonal holds
    // a1 and e5: its target c3 has vanished. The file holds a1 alone.
    assert_eq!(moves_from(&p, "a1"), ["a1-a2", "a1-c1"]);
    let q = after(&p, "a1-c1");
    assert_eq!(q.to_text(), "8/1b1w4/7w/4b3/8/2x5/8/xxb4w w");
    // A capture: the target keeps the capturer, only the cell left vanishes.
    assert!(moves_from(&p, "b7").contains(&"b7xd7".to_string()));
    let q = after(&p, "b7xd7");
    assert_eq!(q.to_text(), "8/1x1b4/7w/4b3/8/2x5/8/bx5w w");
    assert_eq!(q.vanished() & sq(v, "d7"), 0);
    assert!(q.pieces(Color::Black) & sq(v, "d7") != 0);
    assert!(q.vanished() & sq(v, "b7") != 0);
    // Nothing stands on a vanished cell.
    let extra = ExtraState {
        vanished: sq(v, "a1") | sq(v, "b1"),
        ..ExtraState::default()
    };
    let e = Position::with_extra(
        v,
        sq(v, "a1") | sq(v, "e5"),
        sq(v, "h1"),
        Color::Black,
        extra,
    )
    .unwrap_err();
    assert!(e.message.contains("vanished"), "{e}");
    let err = Position::from_text("8/1b1w4/7w/4b3/8/2x5/8/bx5w b", Variant::Standard)
        .unwrap_err()
        .message;
    assert!(err.contains("'x'"), "{err}");
}

/// Black a1 (walled in by the vanished b1 a2 b2), f4, f5; White g8 h6.
const GEMMA_STUCK_PIECE: &str = "6w1/8/7w/5b2/5b2/8/xx6/bx6 b";

#[test]
fn gemma_removal_only_for_a_piece_without_a_move_and_it_can_win() {
    let v = Variant::Gemma;
    let p = pos(v, GEMMA_STUCK_PIECE);
    assert_eq!(p.outcome(&classic()), None);
    assert!(moves_from(&p, "a1").is_empty());
    let all = names(&p, &classic());
    let removals: Vec<&String> = all.iter().filter(|m| m.starts_with('~')).collect();
    assert_eq!(removals, ["~a1"]);
    assert_eq!(p.count_moves() as usize, all.len());
    assert!(p.parse_move("~f4", &classic()).is_err(), "f4 can move");
    assert!(p.parse_move("~e5", &classic()).is_err(), "no piece");
    // The removal vanishes the cell and leaves f4 f5: Black is connected and wins.
    let mv = p.parse_move("~a1", &classic()).unwrap();
    assert!(mv.is_remove() && !mv.is_step());
    let q = p.after(mv);
    assert_hash(&q);
    assert_eq!(q.to_text(), "6w1/8/7w/5b2/5b2/8/xx6/xx6 w");
    assert_eq!(
        q.connection_outcome_after(mv, &classic()),
        Some(Outcome::Win(Color::Black))
    );
    assert_eq!(q.outcome(&icga()), Some(Outcome::Win(Color::Black)));
    let mut game = Game::from_position(p, classic());
    game.play_text("~a1").unwrap();
    assert_eq!(game.outcome(), Some(Outcome::Win(Color::Black)));
    // h1 (g1 and h2 vanished) has one move left, g2: no removal.
    let p = pos(v, "6w1/8/8/w4b2/5b2/8/7x/6xb b");
    assert_eq!(moves_from(&p, "h1"), ["h1-g2"]);
    assert!(names(&p, &classic()).iter().all(|m| !m.starts_with('~')));
    // Removal is not a move of other variants, even for a piece without a move.
    let s = pos(Variant::Standard, "6w1/8/7w/5b2/5b2/8/ww6/bw6 b");
    assert!(moves_from(&s, "a1").is_empty());
    assert!(s.parse_move("~a1", &classic()).is_err());
}

#[test]
fn gemma_a_side_whose_pieces_are_all_stuck_removes_instead_of_passing() {
    let v = Variant::Gemma;
    // Black a1 and h7 both walled in by vanished cells; White c5 e3.
    let p = pos(v, "6xx/6xb/6xx/2w5/8/4w3/xx6/bx6 b");
    for rules in [classic(), loss()] {
        assert_eq!(p.outcome(&rules), None);
        assert_eq!(names(&p, &rules), ["~a1", "~h7"]);
    }
    assert!(p.has_move(Color::Black));
    // One piece left is a connected side.
    let q = after(&p, "~a1");
    assert_eq!(q.outcome(&classic()), Some(Outcome::Win(Color::Black)));
}

// ---------------------------------------------------------------------------------------
// ambiloa
// ---------------------------------------------------------------------------------------

const AMBILOA_START: &str = "1nnnnnn1/w6e/w6e/w6e/w6e/w6e/w6e/1ssssss1 s";

#[test]
fn ambiloa_turn_order_and_own_pieces() {
    let v = Variant::Ambiloa;
    for (first, order) in [
        (
            Color::Black,
            [Player::South, Player::West, Player::North, Player::East],
        ),
        (
            Color::White,
            [Player::West, Player::North, Player::East, Player::South],
        ),
    ] {
        let rules = Rules {
            first_player: first,
            ..classic()
        };
        let mut p = Position::start(v, &rules);
        if first == Color::Black {
            assert_eq!(p.to_text(), AMBILOA_START);
        } else {
            assert!(p.to_text().ends_with(" w"));
        }
        for turn in 0..9 {
            let player = p.player().unwrap();
            assert_eq!(player, order[turn % 4], "first={first} turn {turn}");
            assert_eq!(p.to_move(), player.team());
            let own = p.player_pieces(player);
            let moves = p.legal_moves(&rules);
            assert!(!moves.is_empty());
            assert!(moves.iter().all(|m| own & (1u64 << m.from()) != 0));
            if turn == 0 {
                // From the start the first player has the 18 moves of its edge.
                assert_eq!(moves.len(), 18, "{player:?}");
            }
            p.play(moves[moves.len() / 2]);
            assert_hash(&p);
        }
    }
}

/// South d1 g1, North d3 b8, West d8 a5, East h4 f3.
const AMBILOA_PARTNERS: &str = "1n1w4/8/8/w7/7e/3n1e2/8/3s2s1 s";

#[test]
fn ambiloa_partners_are_jumped_never_landed_on_enemies_block_and_are_captured() {
    let v = Variant::Ambiloa;
    let p = pos(v, AMBILOA_PARTNERS);
    assert_eq!(p.outcome(&classic()), None);
    // d1: the d-file holds d1 d3 d8, so d1-d4 jumps North's d3; the diagonal holds d1 and
    // East's f3, which d1 captures.
    assert_eq!(
        names(&p, &classic()),
        ["d1-b1", "d1-c2", "d1-d4", "d1-f1", "d1xf3", "g1-e1", "g1-f2", "g1-g2", "g1-h2"]
    );
    // Capturing a partner-marked (East) piece: f3 becomes South's.
    let q = after(&p, "d1xf3");
    assert_eq!(q.to_text(), "1n1w4/8/8/w7/7e/3n1s2/8/6s1 w");
    assert!(q.player_pieces(Player::South) & sq(v, "f3") != 0);
    assert_eq!(q.player_pieces(Player::East), sq(v, "h4"));
    assert_eq!(q.extra().partners & sq(v, "f3"), 0);
    assert_eq!(q.player(), Some(Player::West));

    // North to move: b8xd8 captures West's piece, which becomes North's.
    let p = pos(v, "1n1w4/8/8/w7/7e/3n1e2/8/3s2s1 n");
    assert_eq!(moves_from(&p, "b8"), ["b8-a7", "b8-b7", "b8-c7", "b8xd8"]);
    assert!(moves_from(&p, "d1").is_empty(), "South's piece");
    let q = after(&p, "b8xd8");
    assert_eq!(q.to_text(), "3n4/8/8/w7/7e/3n1e2/8/3s2s1 e");
    assert!(q.player_pieces(Player::North) & sq(v, "d8") != 0);

    // Two pieces on the d-file: d1 would land on its partner at d3.
    let p = pos(v, "1n6/w7/8/w7/7e/3n1e2/8/3s2s1 s");
    assert_eq!(moves_from(&p, "d1"), ["d1-b1", "d1-c2", "d1-f1", "d1xf3"]);
    // West's d2 blocks the d-file (four pieces: d1-d5 would jump an enemy).
    let p = pos(v, "1n1w4/8/8/w7/7e/3n1e2/3w4/3s2s1 s");
    assert_eq!(moves_from(&p, "d1"), ["d1-b1", "d1-c2", "d1-f1", "d1xf3"]);
}

#[test]
fn ambiloa_team_connection_wins() {
    let v = Variant::Ambiloa;
    // South d1, North c3 d4; West a8, East h8 h1. North's two pieces touch, but the team
    // is connected only when South's piece joins them.
    let p = pos(v, "w6e/8/8/8/3n4/2n5/8/3s3e s");
    assert_eq!(p.outcome(&classic()), None);
    let q = after(&p, "d1-d3");
    assert_eq!(q.outcome(&classic()), Some(Outcome::Win(Color::Black)));
    assert_eq!(q.outcome(&icga()), Some(Outcome::Win(Color::Black)));
}

#[test]
fn ambiloa_a_player_without_moves_passes_and_all_stuck_is_a_draw() {
    let v = Variant::Ambiloa;
    // South has no pieces left; North c5 e5, West a1, East h8 h1.
    let p = pos(v, "7e/8/8/2n1n3/8/8/8/w6e s");
    assert_eq!(p.outcome(&classic()), None);
    assert!(!p.nobody_can_move());
    assert!(!p.has_move(Color::Black));
    assert!(p.has_move(Color::White));
    assert_eq!(names(&p, &classic()), ["pass"]);
    assert_eq!(p.outcome(&loss()), Some(Outcome::Win(Color::White)));
    let q = after(&p, "pass");
    assert_eq!(q.player(), Some(Player::West));
    assert_eq!(q.to_text(), "7e/8/8/2n1n3/8/8/8/w6e w");
    // West's move, then North (who has pieces) moves.
    let q = after(&q, "a1-a2");
    assert_eq!(q.player(), Some(Player::North));
    assert!(names(&q, &classic())
        .iter()
        .all(|m| m.starts_with("c5") || m.starts_with("e5")));

    // Every line full: nobody can move; neither team is connected (files alternate).
    let full = ["swneswne"; 8].join("/") + " s";
    let p = pos(v, &full);
    assert!(p.nobody_can_move());
    assert_eq!(p.connection_outcome(&classic()), None);
    assert_eq!(p.outcome(&classic()), Some(Outcome::Draw));
    assert_eq!(p.outcome(&loss()), Some(Outcome::Win(Color::White)));
    assert_eq!(perft(&p, &classic(), 2), 0);
}

#[test]
fn ambiloa_text_errors_name_the_token() {
    let v = Variant::Ambiloa;
    let err = |t: &str| Position::from_text(t, v).unwrap_err().message;
    assert!(err("1nnnnnn1/w6e/w6e/w6e/w6e/w6e/w6e/1ssssss1 b").contains("'b'"));
    assert!(err("1nnnnnn1/w6e/w6e/w6e/w6e/w6e/w6e/1sssbss1 s").contains("'b'"));
    assert!(err("1nnnnnn1/w6e/w6e/w6x/w6e/w6e/w6e/1ssssss1 s").contains("'x'"));
    // Upper-case letters are accepted.
    assert_eq!(
        Position::from_text("1NNNNNN1/W6E/W6E/W6E/W6E/W6E/W6E/1SSSSSS1 S", v).unwrap(),
        Position::start(v, &classic())
    );
}

// ---------------------------------------------------------------------------------------
// alveole
// ---------------------------------------------------------------------------------------

const ALVEOLE_START: &str = "wb1wb/b4w/7/w6b/b7w/w6b/7/b4w/wb1wb b";

#[test]
fn alveole_six_directions_and_counts_along_three_axes() {
    let v = Variant::Alveole;
    // Black e5 c1, White g1 a3: e5 is alone on its row and both diagonals (a1…i5 and
    // a5…i1), so it steps to each of its 6 neighbours.
    let p = pos(v, "5/6/w6/8/4b4/8/b6/6/2w2 b");
    assert_eq!(
        moves_from(&p, "e5"),
        ["e5-d4", "e5-d5", "e5-e4", "e5-e6", "e5-f4", "e5-f5"]
    );
    // White e9 on the row and Black i5 on the a1…i5 diagonal make those counts 2.
    let p = pos(v, "4b/6/w6/8/4b3w/8/b6/6/2w2 b");
    assert_eq!(
        moves_from(&p, "e5"),
        ["e5-c3", "e5-d5", "e5-e3", "e5-e7", "e5-f4", "e5-g5"]
    );
    // White g5 on the diagonal is captured.
    let p = pos(v, "5/6/w3w2/8/4b4/8/b6/6/2w2 b");
    assert_eq!(
        moves_from(&p, "e5"),
        ["e5-c3", "e5-d5", "e5-e4", "e5-e6", "e5-f4", "e5xg5"]
    );
    // White f5 blocks the way to g5.
    let p = pos(v, "5/6/w6/4w3/4b4/8/b6/6/2w2 b");
    assert_eq!(
        moves_from(&p, "e5"),
        ["e5-c3", "e5-d5", "e5-e4", "e5-e6", "e5-f4"]
    );
    let q = after(&p, "e5-c3");
    assert_eq!(q.to_text(), "5/6/w6/4w3/9/8/b1b4/6/2w2 w");
}

#[test]
fn alveole_corners_have_three_neighbours_and_three_moves() {
    let v = Variant::Alveole;
    let g = v.geometry();
    for corner in ["a1", "a5", "e1", "e9", "i1", "i5"] {
        let s = parse_square(corner, g).unwrap();
        assert_eq!(g.neighbours[s as usize].count_ones(), 3, "{corner}");
    }
    assert_eq!(
        (0..64u8)
            .filter(|&s| g.contains(s) && g.neighbours[s as usize].count_ones() == 6)
            .count(),
        37,
        "interior cells"
    );
    // Black a1 g3, White c5 h1: a1 is alone on its three lines.
    let p = pos(v, "5/w5/2b4/8/9/8/4w2/6/b4 b");
    assert_eq!(moves_from(&p, "a1"), ["a1-a2", "a1-b1", "a1-b2"]);
}

#[test]
fn alveole_connection_uses_six_neighbours() {
    let v = Variant::Alveole;
    // e5 and d6 are diagonal neighbours in the 9×9 grid the board is embedded in, but not
    // on the hexagon: Black is not connected.
    let p = pos(v, "5/6/w6/8/4b4/5b2/7/6/2w2 w");
    assert!(!p.is_connected(Color::Black));
    assert_eq!(p.outcome(&classic()), None);
    let (e5, d6) = (sq(v, "e5"), sq(v, "d6"));
    let (c1, r1) = v.geometry().coords(e5.trailing_zeros() as u8);
    let (c2, r2) = v.geometry().coords(d6.trailing_zeros() as u8);
    assert_eq!((c1.abs_diff(c2), r1.abs_diff(r2)), (1, 1));
    // e5 and d5 touch: Black is connected and has won.
    let p = pos(v, "5/6/w6/8/4b4/4b3/7/6/2w2 w");
    assert!(p.is_connected(Color::Black));
    assert_eq!(p.outcome(&classic()), Some(Outcome::Win(Color::Black)));
    // Black c4 steps to d4, next to e5, and wins.
    let p = pos(v, "5/6/w6/8/4b4/8/3b3/6/2w2 b");
    assert_eq!(p.outcome(&classic()), None);
    let q = after(&p, "c4-d4");
    assert_eq!(q.outcome(&classic()), Some(Outcome::Win(Color::Black)));
}

#[test]
fn alveole_cell_names_and_text() {
    let v = Variant::Alveole;
    let g = v.geometry();
    assert_eq!(g.num_cells, 61);
    let row_lengths: Vec<usize> = (b'a'..=b'i')
        .map(|row| {
            (1..=9)
                .filter(|n| parse_square(&format!("{}{n}", row as char), g).is_ok())
                .count()
        })
        .collect();
    assert_eq!(row_lengths, [5, 6, 7, 8, 9, 8, 7, 6, 5]);
    assert_eq!(parse_square("a1", g).unwrap(), 0);
    assert_eq!(parse_square("e9", g).unwrap(), 5 + 6 + 7 + 8 + 8);
    assert_eq!(parse_square("i5", g).unwrap(), 60);
    assert_eq!(
        parse_square("E9", g).unwrap(),
        parse_square("e9", g).unwrap()
    );
    for bad in ["a6", "i6", "e10", "j1", "e0", "a", "", "5e"] {
        let e = parse_square(bad, g).unwrap_err().message;
        assert!(e.contains(&format!("'{bad}'")), "{e}");
    }
    for s in 0..61u8 {
        assert_eq!(parse_square(&cell_name(s, true), g).unwrap(), s);
    }
    assert_eq!(cell_name(0, true), "a1");
    assert_eq!(cell_name(60, true), "i5");

    let start = Position::start(v, &classic());
    assert_eq!(start.to_text(), ALVEOLE_START);
    assert_eq!(Position::from_text(ALVEOLE_START, v).unwrap(), start);
    let err = |t: &str| Position::from_text(t, v).unwrap_err().message;
    assert!(err("wb1wb/b4w/7/w6b/b7w/w6b/7/b4w/wb1wbb b").contains("row a"));
    assert!(err("wb1wbw/b4w/7/w6b/b7w/w6b/7/b4w/wb1wb b").contains("row i"));
    assert!(err("wb1wb/b4w/7/w6b/b7w/w6b/7/b4w b").contains("8 rows"));
    assert!(err("wb1wb/b4w/6/w6b/b7w/w6b/7/b4w/wb1wb b").contains("row g"));
    // Square-board text is not hexagon text.
    assert!(Position::from_text("1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b", v).is_err());
    // Moves name hexagon cells.
    let mv = start.parse_move("e1-e3", &classic()).unwrap();
    assert!(mv.is_hex());
    assert_eq!(mv.to_string(), "e1-e3");
    assert!(start.parse_move("e1-e10", &classic()).is_err());
}

// ---------------------------------------------------------------------------------------
// Every variant: notation, hashes, replays.
// ---------------------------------------------------------------------------------------

#[test]
fn drop_and_removal_notation() {
    let p = pos(Variant::Parachute, "8/b6w/w6b/b6w/w6b/2b4w/w6b/8 b@ 6:6");
    let rules = classic();
    let mv = p.parse_move("@e5", &rules).unwrap();
    assert!(mv.is_drop());
    assert_eq!(mv.to_string(), "@e5");
    assert_eq!(p.parse_move(" @E5 ", &rules).unwrap(), mv);
    assert_eq!(Move::from_bits(mv.to_bits()), Some(mv));
    for bad in ["@", "@z9", "@e", "@e55", "e5@", "@@e5"] {
        let e = p.parse_move(bad, &rules).unwrap_err().message;
        assert!(e.contains(bad.trim()), "{bad}: {e}");
    }
    assert!(p.parse_move("~e5", &rules).is_err());
    assert!(p.parse_move("pass", &rules).is_err());

    let g = pos(Variant::Gemma, GEMMA_STUCK_PIECE);
    let mv = g.parse_move("~A1", &rules).unwrap();
    assert!(mv.is_remove());
    assert_eq!(mv.to_string(), "~a1");
    assert_eq!(Move::from_bits(mv.to_bits()), Some(mv));
    for bad in ["~", "~i9", "~a1a", "@a1"] {
        let e = g.parse_move(bad, &rules).unwrap_err().message;
        assert!(e.contains(bad), "{bad}: {e}");
    }
    // Hexagon drops and removals print hexagon names.
    assert_eq!(Move::drop(60, HEX5.move_flag).to_string(), "@i5");
    assert_eq!(Move::remove(0, HEX5.move_flag).to_string(), "~a1");
}

#[test]
fn garbage_text_never_panics_in_any_variant() {
    let mut rng = loa::testing::XorShift::new(0x2545_F491_4F6C_DD1D);
    let alphabet = b"bwsnexBWSNEX0123456789/ @:~-pass\t";
    let probes = [
        pos(Variant::Parachute, "8/b6w/w6b/b6w/w6b/2b4w/w6b/8 b@ 6:6"),
        pos(Variant::Gemma, GEMMA_STUCK_PIECE),
        pos(Variant::Ambiloa, AMBILOA_PARTNERS),
        pos(Variant::Alveole, ALVEOLE_START),
    ];
    for len in 0..3000usize {
        let mut s = String::new();
        for _ in 0..(len % 60) {
            s.push(alphabet[(rng.next_u64() >> 7) as usize % alphabet.len()] as char);
        }
        for v in Variant::ALL {
            if let Ok(p) = Position::from_text(&s, v) {
                assert_eq!(Position::from_text(&p.to_text(), v).unwrap(), p);
            }
        }
        for p in &probes {
            let _ = p.parse_move(&s, &classic());
        }
        let _ = GameRecord::parse(&s);
    }
}

/// A short game per variant, written as a record, and the position it reaches.
const SCRIPTS: [(Variant, &str, &str); 7] = [
    (
        Variant::Standard,
        "1. c8-c6 a5-c5 2. b1-b3 h4-f2 3. d8-d6 a2-d2 4. c6-g6 d2-d5 5. b8-b6 c5-f5 6. f8-c8 a6-c4",
        "2b1b1b1/w6w/1b1b2bw/3w1w1w/w1w5/wb5w/5w1w/2bbbbb1 b",
    ),
    (
        Variant::ScrambledEggs,
        "1. a3xc1 a2-c2 2. h4-f2 h5-f5 3. h2-f4 a6-c4 4. a7-d4 a4-c6 5. f4-d6 e1-e3 6. d6-b4 h3xh6",
        "1wbwbwb1/7w/2w4w/b4w2/1bwb4/4w3/2w2b2/1bbb1bw1 b",
    ),
    (
        Variant::Six,
        "1. d1xf3 f5-d3 2. b1-b3 a3-c5 3. b3-b5 d3xf3 4. c1-a1 f2-d2 5. a1-c1 f4xd6 6. e6-f5 f3-e2",
        "1bbw2/wbw2b/w5/6/w2ww1/2b1b1 b",
    ),
    (
        Variant::Parachute,
        "1. h6-g5 @g6 g6-e8 @c5 2. c5-c6 @e6 a2-c2 @e4 3. g5-d5 @c4 e6-g4 @g7 \
         4. e4-h1 @c5 g4-e6 @a8",
        "b3w3/b5bw/w1b1w3/b1wb3w/w1w4b/b6w/2w4b/7b b 2:2",
    ),
    (
        Variant::Gemma,
        "1. d8-b6 h2-h8 2. b8xh8 a6xc8 3. f1-f3 a5-c5 4. h8xc8 c5-c2 5. f8-f6 h3-f5 6. g1-d4 h5-h1",
        "1xbxbxbx/w6w/xb3b1w/x1x2w1x/w2b3w/w4b1x/w1w4x/1bbbbxxw b",
    ),
    (
        Variant::Ambiloa,
        "1. b1-b3 a2-c2 c8-e6 h2-f2 2. g1-b1 a5-c7 f8-f5 f2-d2 3. c1xa3 c7-f7 e6-e3 h3xf5",
        "1n1nn1n1/w4w1e/w6e/5e1e/w6e/ss2n3/2we4/1s1sss2 s",
    ),
    (
        Variant::Alveole,
        "1. d8-d6 d1-f2 2. d6-d5 f2-d1 3. e1-e3 i1-f4 4. h1xf1 d1-d3 5. f1xf4 a4-c6 6. f4-i1 d3-g4",
        "bb1wb/5w/3w3/7b/2b5w/4b3/5w1/b4w/wb2b b",
    ),
];

#[test]
fn scripted_games_replay_through_game() {
    for (v, script, end) in SCRIPTS {
        let rules = classic();
        let record = GameRecord::parse(script).unwrap();
        let mut game = Game::new(v, rules);
        let mut p = Position::start(v, &rules);
        for token in &record.moves {
            let mv = game
                .play_text(token)
                .unwrap_or_else(|e| panic!("{v} {token}: {e}"));
            assert_eq!(mv.to_string(), *token, "{v}");
            // Upper case parses to the same move.
            assert_eq!(p.parse_move(&token.to_uppercase(), &rules).unwrap(), mv);
            p.play(mv);
            assert_eq!(*game.position(), p);
            assert_hash(game.position());
            assert_eq!(game.outcome(), None, "{v} {token}");
        }
        assert_eq!(game.moves().len(), record.moves.len());
        assert_eq!(game.position().to_text(), end, "{v}");
        assert_eq!(game.repetition_count(), 1);
        // A move of the wrong kind is refused with its text in the error.
        let wrong = if v == Variant::Parachute {
            "~e5"
        } else {
            "@e5"
        };
        let e = game.play_text(wrong).unwrap_err().message;
        assert!(e.contains(wrong), "{v}: {e}");
        assert_eq!(game.moves().len(), record.moves.len());
    }
}
