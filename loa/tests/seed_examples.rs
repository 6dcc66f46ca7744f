//! The worked examples in the seed rule texts (`shared/seeds/`).

use loa::{Color, Game, Position, Rules, Variant};

fn moves_from(pos: &Position, rules: &Rules, square: &str) -> Vec<String> {
    let mut v: Vec<String> = pos
        .legal_moves(rules)
        .iter()
        .map(|m| m.to_string())
        .filter(|m| m.starts_with(square))
        .collect();
    v.sort();
    v
}

/// Seed 000 (Italian): the side on the a- and h-files moves first; a4 has exactly the
/// moves to c6, c4 and c2 (six pieces on the a-file block a1/a8).
#[test]
fn seed_000_a4_options() {
    let rules = Rules::parse("first=white").unwrap();
    let pos = Position::start(Variant::Standard, &rules);
    assert_eq!(pos.to_move(), Color::White);
    assert_eq!(moves_from(&pos, &rules, "a4"), ["a4-c2", "a4-c4", "a4-c6"]);
}

/// Seed 004 (Spanish): c8 may go to c6, e6, or capture on a6; then the figure sequence
/// c8-c6, a6-c4, e8-b5 (jumping an own piece), White may not play a4-c4 (own piece), and
/// h3xf1 captures.
#[test]
fn seed_004_c8_options_and_sequence() {
    let rules = Rules::classic();
    let mut game = Game::new(Variant::Standard, rules);
    assert_eq!(
        moves_from(game.position(), &rules, "c8"),
        ["c8-c6", "c8-e6", "c8xa6"]
    );
    game.play_text("c8-c6").unwrap();
    // a6 along rank 6 would need to jump the black piece on c6 to reach d6.
    assert!(game.position().parse_move("a6-d6", &rules).is_err());
    game.play_text("a6-c4").unwrap();
    game.play_text("e8-b5").unwrap();
    assert!(game.position().parse_move("a4-c4", &rules).is_err());
    let mv = game.play_text("h3xf1").unwrap();
    assert!(mv.is_capture());
    assert_eq!(game.position().pieces(Color::Black).count_ones(), 11);
}

/// Seed 002 (French): the example game 1. b1-b3 h4-f2 2. d1xa4 (jumping b3) h2-e2
/// (jumping f2), then the lines discussed: 3. e1-c3 a5xc3.
#[test]
fn seed_002_example_game() {
    let rules = Rules::classic();
    let mut game = Game::new(Variant::Standard, rules);
    for m in ["b1-b3", "h4-f2", "d1xa4", "h2-e2", "e1-c3", "a5xc3"] {
        game.play_text(m).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    assert_eq!(game.position().pieces(Color::White).count_ones(), 11);
    assert_eq!(game.position().pieces(Color::Black).count_ones(), 11);
    assert_eq!(game.outcome(), None);
}
