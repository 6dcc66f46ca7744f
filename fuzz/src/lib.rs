//! Helpers shared by the fuzz targets in `fuzz_targets/` (see docs/fuzzing.md).

use loa::{Game, Position, Rules, Variant};

/// The variant chosen by byte `b`.
pub fn variant_of(b: u8) -> Variant {
    Variant::ALL[b as usize % Variant::ALL.len()]
}

/// Rules chosen by byte `b`: both presets, and a ply limit and the other no-move and
/// simultaneous-connection options, so that every rule path is reached.
pub fn rules_of(b: u8) -> Rules {
    let spec = match b % 4 {
        0 => "classic",
        1 => "icga",
        2 => "classic,no-move=loss,ply-limit=30",
        _ => "icga,repetition=off,first=white",
    };
    Rules::parse(spec).expect("fixed rules specs parse")
}

/// A position reached from the start of `variant` under `rules` by playing, for each byte
/// of `choices`, the legal move it picks (stopping at the end of the game).
pub fn position_after(variant: Variant, rules: Rules, choices: &[u8]) -> Game {
    let mut game = Game::new(variant, rules);
    for &c in choices {
        if game.is_over() {
            break;
        }
        let legal = game.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal[c as usize % legal.len()];
        game.play(mv).expect("a legal move plays");
    }
    game
}

/// Asserts that two positions are the same, with a message showing both.
pub fn assert_same(a: &Position, b: &Position, what: &str) {
    assert!(
        a == b && a.to_text() == b.to_text() && a.ply() == b.ply(),
        "{what}: {} (ply {}) != {} (ply {})",
        a.to_text(),
        a.ply(),
        b.to_text(),
        b.ply()
    );
}

/// Replays `moves` (loazero notation) from `start` under `rules`, checking that every move
/// is legal and that each move's own text names it again.
pub fn replay_texts(start: Position, rules: Rules, moves: &[String]) -> Result<Game, String> {
    let mut game = Game::from_position(start, rules);
    for m in moves {
        let before = *game.position();
        let mv = game.play_text(m).map_err(|e| e.message)?;
        assert!(
            before.is_legal(mv, &rules),
            "play_text accepted illegal {mv}"
        );
        assert_eq!(
            before.parse_move(&mv.to_string(), &rules).ok(),
            Some(mv),
            "the text of {mv} does not name it"
        );
    }
    Ok(game)
}
