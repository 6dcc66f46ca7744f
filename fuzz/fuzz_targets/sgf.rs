//! SGF files (`SgfGame::parse`, `sgf::parse_main_line`): a file that parses replays
//! legally, and `SgfGame::format` writes a file that parses to the same game.
#![no_main]
use libfuzzer_sys::fuzz_target;
use loa::sgf::{parse_main_line, SgfGame};
use loa::Game;
use loazero_fuzz::assert_same;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_main_line(text);
    let Ok(sgf) = SgfGame::parse(text) else {
        return;
    };
    let rules = *sgf.game.rules();
    let mut replay = Game::from_position(*sgf.game.start(), rules);
    for &mv in sgf.game.moves() {
        replay.play(mv).expect("a parsed SGF game replays legally");
    }
    let out = sgf.format();
    let again = SgfGame::parse(&out).unwrap_or_else(|e| panic!("{out}\n{e}"));
    assert_same(again.game.start(), sgf.game.start(), "start");
    assert_eq!(*again.game.rules(), rules);
    assert_eq!(again.game.moves(), sgf.game.moves());
    assert_eq!(again.result(), sgf.result());
    assert_eq!(again.format(), out);
});
