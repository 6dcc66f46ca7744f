//! The game requests of `loazero serve`'s JSON API, in process: `src/serve/{error,game,
//! files}.rs` compiled in with `#[path]`. Input byte 0 picks the request: a `GameSpec`
//! body as `/api/position` reads it, `/api/export` of such a game (then imported back),
//! or `/api/import` of a text (whose game must then replay as a `GameSpec`). Every
//! failure is a 4xx naming the problem; no input panics. The searching endpoints
//! (`/api/play`, `/api/analyse`) and the rest of the HTTP stack are fuzzed through the
//! real server by tests/cli_serve.rs (see docs/fuzzing.md).
#![no_main]
use libfuzzer_sys::fuzz_target;
use loa::Color;

// At the crate root, so that their `super::error` is this `error`.
#[allow(dead_code, missing_docs)]
#[path = "../../src/serve/error.rs"]
mod error;
#[allow(dead_code, missing_docs)]
#[path = "../../src/serve/files.rs"]
mod files;
#[allow(dead_code, missing_docs)]
#[path = "../../src/serve/game.rs"]
mod game;
use error::ApiError;
use files::{export_text, import_text};
use game::{position_json, GameSpec};

fn client_error(e: ApiError) {
    assert!(
        e.status.is_client_error(),
        "{} for client input: {}",
        e.status,
        e.message
    );
}

/// The game spec of an import's JSON.
fn spec_of(v: &serde_json::Value) -> GameSpec {
    let s = |k: &str| v[k].as_str().map(str::to_string);
    GameSpec {
        variant: s("variant"),
        rules: s("rules"),
        start: s("start"),
        moves: v["moves"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 | 1 => {
            let spec: GameSpec = match serde_json::from_slice(body) {
                Ok(s) => s,
                Err(_) => return,
            };
            let game = match spec.replay() {
                Ok(g) => g,
                Err(e) => return client_error(e),
            };
            let _ = position_json(&game);
            if mode % 3 == 1 {
                let resigned =
                    [None, Some(Color::Black), Some(Color::White)][(mode / 3 % 3) as usize];
                let format = if mode / 9 % 2 == 0 { "sgf" } else { "record" };
                let (text, _) = export_text(&game, format, resigned, Some("b ]\\".into()), None)
                    .expect("sgf and record export");
                let back = import_text(&text, None)
                    .unwrap_or_else(|e| panic!("export does not import: {e}\n{text}"));
                let again = spec_of(&back).replay().expect("imported game replays");
                assert_eq!(again.moves(), game.moves(), "{text}");
            }
        }
        _ => {
            let Ok(text) = std::str::from_utf8(body) else {
                return;
            };
            match import_text(text, None) {
                Ok(v) => {
                    spec_of(&v).replay().expect("an imported game replays");
                }
                Err(e) => client_error(e),
            }
        }
    }
});
