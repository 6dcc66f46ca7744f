//! Each rule option changes exactly what it should, on small constructed positions.

use loa::{Color, Game, Move, Outcome, Position, Rules, Variant};

fn pos(text: &str) -> Position {
    Position::from_text(text, Variant::Standard).unwrap()
}

/// White e5xh8 jumps g7, captures Black's h8: White {g7, h8} connects and Black is left
/// with the single piece b1, which is connected too.
const SIMULTANEOUS: &str = "7b/6w1/8/4w3/8/8/8/1b6 w";

#[test]
fn simultaneous_connection_mover_wins_or_draw() {
    for (spec, expected) in [
        ("classic", Outcome::Win(Color::White)),
        ("icga", Outcome::Draw),
        ("classic,simultaneous=draw", Outcome::Draw),
    ] {
        let rules = Rules::parse(spec).unwrap();
        let mut game = Game::from_position(pos(SIMULTANEOUS), rules);
        assert_eq!(game.outcome(), None);
        game.play_text("e5xh8").unwrap();
        assert!(game.position().is_connected(Color::White));
        assert!(game.position().is_connected(Color::Black));
        assert_eq!(game.outcome(), Some(expected), "{spec}");
    }
}

#[test]
fn single_connection_wins_for_the_connected_side_only() {
    // Black a1 | h1 h2, White a2 | c2: nobody connected. Under icga rules too, a move
    // that connects only the mover wins.
    let rules = Rules::icga();
    let mut game = Game::from_position(pos("8/8/8/8/8/8/w1w4b/b6b b"), rules);
    assert_eq!(game.outcome(), None);
    // Black a1 along rank 1 (a1, h1: 2 pieces) to c1 — still apart from h1/h2.
    game.play_text("a1-c1").unwrap();
    assert_eq!(game.outcome(), None);
    // White a2 along rank 2 (a2, c2, h2: 3 pieces) to d2 jumping c2: {c2, d2} connect.
    game.play_text("a2-d2").unwrap();
    assert_eq!(game.outcome(), Some(Outcome::Win(Color::White)));
}

/// Black's a1 and h8 are walled in by White: Black has no legal move.
const STUCK: &str = "5wwb/6ww/5w1w/8/8/w1w5/ww6/bww5 b";

#[test]
fn no_move_pass_or_loss() {
    let p = pos(STUCK);
    assert_eq!(p.count_moves(), 0);
    assert!(p.has_move(Color::White));

    let pass = Rules::classic();
    assert_eq!(p.outcome(&pass), None);
    assert_eq!(p.legal_moves(&pass).as_slice(), &[Move::PASS]);
    let mut game = Game::from_position(p, pass);
    game.play_text("pass").unwrap();
    assert_eq!(game.position().to_move(), Color::White);
    assert_eq!(game.outcome(), None);

    let loss = Rules::parse("no-move=loss").unwrap();
    assert_eq!(p.outcome(&loss), Some(Outcome::Win(Color::White)));
    assert!(p.legal_moves(&loss).is_empty());
    assert!(Game::from_position(p, loss).play_text("pass").is_err());
}

/// A full board, files alternating black and white: every line holds as many pieces as it
/// has cells, so every move would leave the board; neither side is connected.
const FULL: &str = "bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw/bwbwbwbw b";

#[test]
fn neither_side_can_move_is_a_draw_under_pass() {
    let p = pos(FULL);
    assert!(!p.has_move(Color::Black) && !p.has_move(Color::White));
    assert_eq!(p.connection_outcome(&Rules::classic()), None);
    assert_eq!(p.outcome(&Rules::classic()), Some(Outcome::Draw));
    assert_eq!(
        p.outcome(&Rules::parse("no-move=loss").unwrap()),
        Some(Outcome::Win(Color::White))
    );
    assert_eq!(loa::perft::perft(&p, &Rules::classic(), 2), 0);
}

/// Finds four reversible moves from the start: Black m, White w, Black back, White back.
fn shuffle(rules: &Rules) -> [Move; 4] {
    let start = Position::start(Variant::Standard, rules);
    for &m in start.legal_moves(rules).iter() {
        let p1 = start.after(m);
        for &w in p1.legal_moves(rules).iter() {
            let p2 = p1.after(w);
            let back = p2
                .legal_moves(rules)
                .iter()
                .copied()
                .find(|b| b.from() == m.to() && b.to() == m.from() && !b.is_capture());
            if let Some(b) = back {
                let p3 = p2.after(b);
                if let Some(wb) = p3
                    .legal_moves(rules)
                    .iter()
                    .copied()
                    .find(|x| x.from() == w.to() && x.to() == w.from() && !x.is_capture())
                {
                    if !m.is_capture() && !w.is_capture() {
                        return [m, w, b, wb];
                    }
                }
            }
        }
    }
    panic!("no reversible shuffle from the start");
}

#[test]
fn threefold_repetition_draws_only_when_on() {
    let on = Rules::classic();
    let cycle = shuffle(&on);
    let mut game = Game::new(Variant::Standard, on);
    for (i, mv) in cycle.iter().chain(cycle.iter()).enumerate() {
        assert_eq!(game.outcome(), None, "ply {i}");
        game.play(*mv).unwrap();
    }
    // The start position now stands for the third time.
    assert_eq!(game.repetition_count(), 3);
    assert_eq!(game.outcome(), Some(Outcome::Draw));

    let off = Rules::parse("repetition=off").unwrap();
    let mut game = Game::new(Variant::Standard, off);
    for _ in 0..3 {
        for mv in cycle {
            game.play(mv).unwrap();
        }
    }
    assert_eq!(game.repetition_count(), 4);
    assert_eq!(game.outcome(), None);
}

#[test]
fn ply_limit_draws() {
    let rules = Rules::parse("ply-limit=3").unwrap();
    let mut game = Game::new(Variant::Standard, rules);
    for _ in 0..3 {
        let mv = game.legal_moves()[0];
        game.play(mv).unwrap();
    }
    assert_eq!(game.outcome(), Some(Outcome::Draw));
    assert!(game.legal_moves().is_empty());
    let unlimited = Game::new(Variant::Standard, Rules::classic());
    assert_eq!(unlimited.outcome(), None);
}

#[test]
fn first_player_option() {
    let white_first = Rules::parse("first=white").unwrap();
    for v in Variant::ALL {
        assert_eq!(Position::start(v, &white_first).to_move(), Color::White);
        assert_eq!(
            Position::start(v, &Rules::classic()).to_move(),
            Color::Black
        );
    }
}
