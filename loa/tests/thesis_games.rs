//! The 16 game records in `data/winands-thesis-games/` replay legally; the 15
//! complete games end in a connection win for the side that made the last move, exactly at
//! their last move, and the `_incomplete` one does not end.

use loa::{Color, Game, GameRecord, Outcome, Rules, Variant};

use loa::testing::thesis_games_dir as testdata;

#[test]
fn thesis_games_replay_to_the_right_result() {
    let dir = testdata();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 16, "expected 16 records in {}", dir.display());
    let mut complete = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let record = GameRecord::parse(&text).unwrap();
        let mut game = Game::new(Variant::Standard, Rules::classic());
        for (i, token) in record.moves.iter().enumerate() {
            game.play_text(token)
                .unwrap_or_else(|e| panic!("{}: ply {}: {e}", path.display(), i + 1));
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.contains("incomplete") {
            assert_eq!(game.outcome(), None, "{name}");
        } else {
            // Black moves on odd plies.
            let last_mover = if record.moves.len() % 2 == 1 {
                Color::Black
            } else {
                Color::White
            };
            assert_eq!(game.outcome(), Some(Outcome::Win(last_mover)), "{name}");
            complete += 1;
        }
    }
    assert_eq!(complete, 15);
}
