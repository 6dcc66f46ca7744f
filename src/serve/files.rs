//! Game files in the API: [`import_text`] reads an SGF file or a loazero record into the
//! game JSON the app loads, [`export_text`] writes a game as either. Pure functions of
//! their input (no server state), so that `fuzz/` can drive them directly.

use super::error::{shorten, ApiError, ApiResult};
use super::game::{result_json, GameSpec};
use loa::sgf::SgfGame;
use loa::{Color, Game, GameRecord, Position};
use serde_json::{json, Value};

/// The text of `game` in `format` (`sgf` or `record`) and the file extension; `resigned`
/// (ignored once the game is over) and the player names go into the file. 400 for another
/// format.
pub fn export_text(
    game: &Game,
    format: &str,
    resigned: Option<Color>,
    black: Option<String>,
    white: Option<String>,
) -> ApiResult<(String, &'static str)> {
    match format {
        "sgf" => {
            let mut sgf = SgfGame::new(game.clone());
            sgf.resigned = resigned.filter(|_| !game.is_over());
            sgf.info.black = black;
            sgf.info.white = white;
            sgf.info.event = Some("loazero serve".into());
            Ok((sgf.format(), "sgf"))
        }
        "record" => Ok((record_text(game, resigned), "txt")),
        other => Err(ApiError::bad(format!(
            "format '{}': expected sgf or record",
            shorten(other)
        ))),
    }
}

/// A loazero record of `game` with its `# variant`, `# rules` and `# start` header, and an
/// `# end` line when a side resigned a game its moves do not end.
pub fn record_text(game: &Game, resigned: Option<Color>) -> String {
    let variant = game.position().variant();
    let resigned = resigned.filter(|_| !game.is_over());
    let header = loa::RecordHeader {
        variant: Some(variant.name().to_string()),
        rules: Some(game.rules().to_string()),
        start: Some(game.start().to_text()),
        end: resigned.map(|c| format!("{} ({} resigned)", c.opponent().name(), c.name())),
    };
    let result = match game.outcome().map(|o| o.winner()) {
        Some(Some(Color::Black)) => Some("1-0"),
        Some(Some(Color::White)) => Some("0-1"),
        Some(None) => Some("1/2-1/2"),
        None => match resigned {
            Some(Color::Black) => Some("0-1"),
            Some(Color::White) => Some("1-0"),
            None => None,
        },
    };
    let mut s = header.format();
    s.push_str(&GameRecord::format(game.moves(), result));
    s
}

/// Reads `text` (SGF when it starts with `(`, else a loazero record, whose `# variant`,
/// `# rules` and `# start` headers apply; `variant` for a record without them) into
/// `{"variant", "rules", "start", "moves", "black", "white", "resigned", "result",
/// "format"}`.
pub fn import_text(text: &str, variant: Option<&str>) -> ApiResult<Value> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('(') {
        let sgf = SgfGame::parse(t).map_err(|e| ApiError::bad(format!("SGF: {e}")))?;
        let game = &sgf.game;
        let start_default = *game.start() == Position::start(game.start().variant(), game.rules());
        return Ok(json!({
            "format": "sgf",
            "variant": game.start().variant().name(),
            "rules": game.rules().to_string(),
            "start": (!start_default).then(|| game.start().to_text()),
            "moves": game.moves().iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            "black": sgf.info.black,
            "white": sgf.info.white,
            "resigned": sgf.resigned.map(|c| c.name()),
            "result": result_json(game, sgf.resigned),
        }));
    }
    let record = GameRecord::parse(t).map_err(|e| ApiError::bad(format!("record: {e}")))?;
    // Match records name variant and rules in their first comment line instead.
    let first = t.lines().next().unwrap_or("");
    let from_comment = |key: &str| {
        first
            .split(';')
            .find_map(|part| part.trim().strip_prefix(key).map(|v| v.trim().to_string()))
    };
    let spec = GameSpec {
        variant: record
            .header
            .variant
            .clone()
            .or_else(|| from_comment("variant "))
            .or_else(|| variant.map(str::to_string)),
        rules: record
            .header
            .rules
            .clone()
            .or_else(|| from_comment("rules ")),
        start: record.header.start.clone(),
        moves: record.moves.clone(),
    };
    let game = spec.replay()?;
    let resigned = if game.is_over() {
        None
    } else {
        resigned_of(t, record.result.as_deref())
    };
    let (black, white) = players_of(first);
    Ok(json!({
        "format": "record",
        "variant": game.start().variant().name(),
        "rules": game.rules().to_string(),
        "start": spec.start,
        "moves": spec.moves,
        "black": black,
        "white": white,
        "resigned": resigned.map(|c| c.name()),
        "result": result_json(&game, resigned),
    }))
}

/// Who resigned in a record of an unfinished game: a `(black resigned)` comment, or the
/// result token naming the other side the winner.
fn resigned_of(text: &str, result: Option<&str>) -> Option<Color> {
    for c in Color::ALL {
        if text.contains(&format!("{} resigned", c.name())) {
            return Some(c);
        }
    }
    match result {
        Some("1-0") => Some(Color::White),
        Some("0-1") => Some(Color::Black),
        _ => None,
    }
}

/// The players of a match record's first line `# game N: black A vs white B; …`.
fn players_of(first: &str) -> (Option<String>, Option<String>) {
    let Some(rest) = first.split_once(": black ").map(|(_, r)| r) else {
        return (None, None);
    };
    let rest = rest.split(';').next().unwrap_or("");
    match rest.split_once(" vs white ") {
        Some((b, w)) => (Some(b.trim().to_string()), Some(w.trim().to_string())),
        None => (None, None),
    }
}
