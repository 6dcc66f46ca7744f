//! Games as the API sees them: a [`GameSpec`] (variant, rules, start, moves) that every
//! request carries (the server keeps no game state), its replay into a [`loa::Game`], and
//! the JSON description of a position ([`position_json`]) that the web app draws.

use super::error::{ApiError, ApiResult};
use loa::geometry::Shape;
use loa::notation::name_on;
use loa::{Color, Game, Outcome, Position, Rules, Variant};
use serde::Deserialize;
use serde_json::{json, Value};

/// Most moves a request may carry (a game longer than this is not a game of LOA).
pub const MAX_MOVES: usize = 2000;

/// A game named by a request: everything optional but the moves default to none.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameSpec {
    /// Variant name (default `standard`).
    #[serde(default)]
    pub variant: Option<String>,
    /// Rules spec, as `loazero match --rules` (default `classic`).
    #[serde(default)]
    pub rules: Option<String>,
    /// Start position text (default: the variant's start under the rules).
    #[serde(default)]
    pub start: Option<String>,
    /// Moves played from the start, in loazero notation.
    #[serde(default)]
    pub moves: Vec<String>,
}

impl GameSpec {
    /// Replays the spec: the game after every move, or a 400 naming the bad field or the
    /// illegal move (by its ply).
    pub fn replay(&self) -> ApiResult<Game> {
        let variant = parse_variant(self.variant.as_deref())?;
        let rules = parse_rules(self.rules.as_deref())?;
        let start = match self.start.as_deref().map(str::trim) {
            None | Some("") => Position::start(variant, &rules),
            Some(text) => {
                if text.len() > 400 {
                    return Err(ApiError::bad("start: position text longer than 400 bytes"));
                }
                Position::from_text(text, variant)
                    .map_err(|e| ApiError::bad(format!("start: {e}")))?
            }
        };
        if self.moves.len() > MAX_MOVES {
            return Err(ApiError::bad(format!(
                "moves: {} moves; at most {MAX_MOVES}",
                self.moves.len()
            )));
        }
        let mut game = Game::from_position(start, rules);
        for (i, text) in self.moves.iter().enumerate() {
            if text.len() > 16 {
                return Err(ApiError::bad(format!(
                    "moves[{i}]: '{}…' is not a move",
                    text.chars().take(16).collect::<String>()
                )));
            }
            game.play_text(text)
                .map_err(|e| ApiError::bad(format!("moves[{i}] (ply {}): {e}", i + 1)))?;
        }
        Ok(game)
    }
}

/// A variant by name (`None`: standard); 400 naming the choices.
pub fn parse_variant(name: Option<&str>) -> ApiResult<Variant> {
    match name.map(str::trim) {
        None | Some("") => Ok(Variant::Standard),
        Some(n) => n
            .parse()
            .map_err(|e: loa::Error| ApiError::bad(format!("variant: {e}"))),
    }
}

/// Rules by spec (`None`: classic); 400 naming the problem.
pub fn parse_rules(spec: Option<&str>) -> ApiResult<Rules> {
    match spec.map(str::trim) {
        None | Some("") => Ok(Rules::classic()),
        Some(s) if s.len() > 200 => Err(ApiError::bad("rules: spec longer than 200 bytes")),
        Some(s) => Rules::parse(s).map_err(|e| ApiError::bad(format!("rules: {e}"))),
    }
}

/// How a finished game ended and the rule that decided it, as JSON: `{"outcome":
/// "black"|"white"|"draw", "winner": "black"|"white"|null, "rule": KEY, "text": SENTENCE}`
/// with KEY one of `connection`, `simultaneous-connection`, `no-move`, `nobody-can-move`,
/// `ply-limit`, `repetition`, `resignation`; `null` while the game goes on.
pub fn result_json(game: &Game, resigned: Option<Color>) -> Value {
    let Some(outcome) = game.outcome() else {
        return match resigned {
            Some(c) => json!({
                "outcome": c.opponent().name(),
                "winner": c.opponent().name(),
                "rule": "resignation",
                "text": format!("{} resigned", capital(c.name())),
            }),
            None => Value::Null,
        };
    };
    let pos = game.position();
    let rules = game.rules();
    let (rule, text) = if let Some(o) = pos.connection_outcome(rules) {
        let mover = pos.to_move().opponent();
        if pos.is_connected(mover) && pos.is_connected(pos.to_move()) {
            let how = match o {
                Outcome::Draw => "a draw under simultaneous=draw".to_string(),
                Outcome::Win(c) => format!(
                    "the mover, {}, wins under simultaneous=mover-wins",
                    c.name()
                ),
            };
            (
                "simultaneous-connection",
                format!("Both sides connected at once: {how}"),
            )
        } else {
            let c = o.winner().unwrap_or(mover);
            (
                "connection",
                format!("{} connected all its pieces", capital(c.name())),
            )
        }
    } else if rules.ply_limit.is_some_and(|l| pos.ply() >= l) {
        (
            "ply-limit",
            format!("Draw: the ply limit ({}) was reached", pos.ply()),
        )
    } else if pos.non_connection_outcome(rules).is_some() {
        match outcome {
            Outcome::Draw => ("nobody-can-move", "Draw: nobody can move".to_string()),
            Outcome::Win(c) => (
                "no-move",
                format!(
                    "{} has no legal move and loses (no-move=loss)",
                    capital(c.opponent().name())
                ),
            ),
        }
    } else {
        ("repetition", "Draw by threefold repetition".to_string())
    };
    json!({
        "outcome": outcome.name(),
        "winner": outcome.winner().map(|c| c.name()),
        "rule": rule,
        "text": text,
    })
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// The cells of `variant`'s board for drawing: name and grid coordinates (column, row
/// from the bottom; axial on the hexagonal board, see [`loa::Geometry::coords`]).
pub fn cells_json(variant: Variant) -> Value {
    let g = variant.geometry();
    let mut cells = Vec::with_capacity(g.num_cells as usize);
    for i in 0..g.num_cells {
        let sq = g.sparse[i as usize];
        let (col, row) = g.coords(sq);
        cells.push(json!({"name": name_on(sq, g), "col": col, "row": row}));
    }
    Value::Array(cells)
}

/// The variant's board as JSON: `{"shape": "square"|"hex", "size": N, "cells": […]}`.
pub fn board_json(variant: Variant) -> Value {
    let g = variant.geometry();
    json!({
        "shape": match g.shape { Shape::Square => "square", Shape::Hex => "hex" },
        "size": g.size,
        "cells": cells_json(variant),
    })
}

/// The pieces of `pos` as a map from cell name to `{"color", "player"}` (`player`: the
/// `ambiloa` player owning it, else null), and the vanished cells.
fn pieces_json(pos: &Position) -> (Value, Vec<String>) {
    let g = pos.geometry();
    let mut pieces = serde_json::Map::new();
    let mut vanished = Vec::new();
    let partners = pos.extra().partners;
    for i in 0..g.num_cells {
        let sq = g.sparse[i as usize];
        let bit = 1u64 << sq;
        if pos.vanished() & bit != 0 {
            vanished.push(name_on(sq, g));
        }
        if let Some(c) = pos.piece_at(sq) {
            let player = (pos.variant() == Variant::Ambiloa)
                .then(|| loa::Player::of(c, (partners & bit != 0) as u8).name());
            pieces.insert(name_on(sq, g), json!({"color": c.name(), "player": player}));
        }
    }
    (Value::Object(pieces), vanished)
}

/// Everything the web app draws of the game's current position: board, pieces, side and
/// player to move, reserves, legal moves (each with its `from`/`to` cells or its `cell`),
/// the moves played, the last move and the result with its rule.
pub fn position_json(game: &Game) -> Value {
    let pos = game.position();
    let g = pos.geometry();
    let (pieces, vanished) = pieces_json(pos);
    let legal: Vec<Value> = game
        .legal_moves()
        .iter()
        .map(|&m| move_json(m, g))
        .collect();
    let moves: Vec<String> = game.moves().iter().map(|m| m.to_string()).collect();
    json!({
        "variant": pos.variant().name(),
        "rules": game.rules().to_string(),
        "board": board_json(pos.variant()),
        "start": game.start().to_text(),
        "text": pos.to_text(),
        "ply": moves.len(),
        "to_move": pos.to_move().name(),
        "player": pos.player().map(|p| p.name()),
        "reserve": pos.variant().has_drops().then(|| json!({
            "black": pos.reserve(Color::Black),
            "white": pos.reserve(Color::White),
        })),
        "drop_pending": pos.drop_pending(),
        "pieces": pieces,
        "vanished": vanished,
        "legal": legal,
        "moves": moves,
        "last_move": game.moves().last().map(|&m| move_json(m, g)),
        "result": result_json(game, None),
    })
}

/// One move as JSON: `{"text", "kind": "move"|"capture"|"drop"|"remove"|"pass", "from",
/// "to"}` (`from`/`to` cell names for normal moves, `to` the cell of a drop or removal).
pub fn move_json(m: loa::Move, g: &loa::Geometry) -> Value {
    use loa::MoveKind;
    let (kind, from, to) = match m.kind() {
        MoveKind::Pass => ("pass", None, None),
        MoveKind::Drop => ("drop", None, Some(name_on(m.square(), g))),
        MoveKind::Remove => ("remove", None, Some(name_on(m.square(), g))),
        MoveKind::Quiet => ("move", Some(name_on(m.from(), g)), Some(name_on(m.to(), g))),
        MoveKind::Capture => (
            "capture",
            Some(name_on(m.from(), g)),
            Some(name_on(m.to(), g)),
        ),
    };
    json!({"text": m.to_string(), "kind": kind, "from": from, "to": to})
}
