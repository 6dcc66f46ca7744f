//! Moves as text (`parse_move_text`, `Position::parse_move`, `Game::play_text`) in
//! positions reached by play in every variant: an accepted move is legal and its own text
//! names it again.
#![no_main]
use libfuzzer_sys::fuzz_target;
use loa::notation::parse_move_text;
use loazero_fuzz::{position_after, rules_of, variant_of};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let (variant, rules) = (variant_of(data[0]), rules_of(data[1]));
    let n = (data[2] as usize % 48).min(data.len() - 3);
    let game = position_after(variant, rules, &data[3..3 + n]);
    let Ok(text) = std::str::from_utf8(&data[3 + n..]) else {
        return;
    };
    let pos = *game.position();
    let _ = parse_move_text(text, pos.geometry());
    if let Ok(mv) = pos.parse_move(text, &rules) {
        assert!(pos.is_legal(mv, &rules), "{text} parsed to illegal {mv}");
        assert_eq!(pos.parse_move(&mv.to_string(), &rules).ok(), Some(mv));
        // `Game` also refuses moves once the game is over; `Position` does not know.
        let mut g = game.clone();
        assert_eq!(g.play_text(text).ok(), (!game.is_over()).then_some(mv));
    }
    for token in text.split_whitespace() {
        let mut g = game.clone();
        if let Ok(mv) = g.play_text(token) {
            assert_eq!(g.moves().last(), Some(&mv));
        }
    }
});
