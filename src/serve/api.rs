//! The game handlers of the JSON API (see `docs/api.md`): variants, positions, the
//! opponent's move, analysis, and record import/export. Each request carries the whole
//! game ([`GameSpec`]); searches run on the bounded pool ([`run_blocking`]).

use super::error::{ApiError, ApiResult};
use super::files::{export_text, import_text};
use super::game::{board_json, move_json, position_json, GameSpec};
use super::state::{run_blocking, AppState, MAX_DEPTH, MAX_MS, MAX_SIMS};
use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use eval::SearchLimits;
use loa::{Color, Position, Rules, Variant};
use selfplay::{EvalBatch, MctsConfig, Search};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Parses a JSON request body; 400 naming the JSON error otherwise, or the first key that
/// no field of the request takes (a typo such as `move` for `moves` is refused, not
/// ignored).
pub fn parse_body<T: DeserializeOwned + RequestBody>(body: &[u8]) -> ApiResult<T> {
    let request: T = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad(format!("bad JSON request: {e}")))?;
    match request.unknown_keys().first() {
        Some(key) => Err(ApiError::bad(format!(
            "bad JSON request: unknown field `{key}` (docs/api.md lists each request's fields)"
        ))),
        None => Ok(request),
    }
}

/// A JSON request body. Bodies that embed a [`GameSpec`] with `#[serde(flatten)]` (which
/// serde's `deny_unknown_fields` does not cover) collect the keys no field takes in a last
/// flattened map and return them here; the others deny unknown fields themselves.
pub trait RequestBody {
    /// The keys of the body that no field took.
    fn unknown_keys(&self) -> Vec<&str> {
        Vec::new()
    }
}

impl RequestBody for GameSpec {}

/// Implements [`RequestBody`] for a body whose keys no field takes are in `self.unknown`.
macro_rules! unknown_keys_in_field {
    ($($t:ty),*) => {
        $(impl RequestBody for $t {
            fn unknown_keys(&self) -> Vec<&str> {
                self.unknown.keys().map(String::as_str).collect()
            }
        })*
    };
}
unknown_keys_in_field!(PlayRequest, AnalyseRequest, ExportRequest);

/// `GET /api/players`: the registry of player kinds (keys, defaults, what a client may
/// ask for, the opponents each offers the Play screen; `docs/api.md`).
pub async fn players() -> Json<Value> {
    Json(eval::player::kind::catalogue())
}

/// `GET /api/variants`: every variant with its board, players, drops/vanishing flags and
/// start position, and the rule presets.
pub async fn variants() -> Json<Value> {
    let variants: Vec<Value> = Variant::ALL
        .iter()
        .map(|&v| {
            json!({
                "name": v.name(),
                "players": v.players(),
                "drops": v.has_drops(),
                "vanishing": v.has_vanishing(),
                "board": board_json(v),
                "start": Position::start(v, &Rules::classic()).to_text(),
            })
        })
        .collect();
    Json(json!({
        "variants": variants,
        "rules_presets": loa::rules::PRESETS,
        "default_rules": Rules::classic().to_string(),
    }))
}

/// `POST /api/position`: a [`GameSpec`] → [`position_json`] of its current position.
pub async fn position(body: Bytes) -> ApiResult<Json<Value>> {
    let spec: GameSpec = parse_body(&body)?;
    let game = spec.replay()?;
    Ok(Json(position_json(&game)))
}

/// The body of `POST /api/play`.
#[derive(Deserialize)]
struct PlayRequest {
    #[serde(flatten)]
    game: GameSpec,
    /// The player spec that moves.
    player: String,
    /// Thinking time for a spec that sets no limit of its own.
    #[serde(default)]
    ms: Option<u64>,
    /// Seed of randomised players.
    #[serde(default)]
    seed: Option<u64>,
    /// Keys no field takes: refused by [`parse_body`].
    #[serde(flatten)]
    unknown: serde_json::Map<String, Value>,
}

/// `POST /api/play`: the move of `player` in the game's position, the time it used, its
/// search summary and the position after the move.
pub async fn play(State(state): State<Arc<AppState>>, body: Bytes) -> ApiResult<Json<Value>> {
    let req: PlayRequest = parse_body(&body)?;
    if req.ms.is_some_and(|ms| ms == 0 || ms > MAX_MS) {
        return Err(ApiError::bad(format!("ms must be 1..={MAX_MS}")));
    }
    let spec = state.vet_spec(&req.player)?;
    // A spec without a limit of its own searches for the request's time, as the spec that
    // says so (echoed back as the player: the limit actually used).
    let spec = match req.ms {
        Some(ms) if !spec.gives_limit() => spec
            .searching_for(ms)
            .map_err(|e| ApiError::bad(format!("player: {e:#}")))?,
        _ => spec,
    };
    let mut game = req.game.replay()?;
    if let Some(o) = game.outcome() {
        return Err(ApiError::bad(format!(
            "the game is over ({}); there is no move to play",
            o.name()
        )));
    }
    let st = state.clone();
    run_blocking(&state, move || {
        if let Some((path, net)) = spec.network() {
            check_model_variant(&st, path, net.device, game.position().variant())?;
        }
        let mut player = st
            .factory
            .build(&spec, req.seed.unwrap_or(1))
            .map_err(|e| ApiError::bad(format!("player: {e:#}")))?;
        let started = Instant::now();
        let chosen = player.choose_move(&game);
        let mv = chosen.map_err(|e| ApiError::bad(format!("player {}: {e:#}", spec)))?;
        let elapsed = started.elapsed();
        let g = game.position().geometry();
        let m = move_json(mv, g);
        game.play(mv)
            .map_err(|e| ApiError::internal(format!("{} chose an illegal move: {e}", spec)))?;
        Ok(Json(json!({
            "player": player.name(),
            "move": m,
            "time_ms": elapsed.as_secs_f64() * 1000.0,
            "info": player.last_info(),
            "position": position_json(&game),
        })))
    })
    .await
}

/// Loads the model at `path` (400 if it does not load) and checks that it plays
/// `variant` (400 naming both otherwise).
fn check_model_variant(
    state: &AppState,
    path: &std::path::Path,
    device: selfplay::Device,
    variant: Variant,
) -> ApiResult<()> {
    let m = state
        .model(path, device)
        .map_err(|e| ApiError::bad(format!("model: {e:#}")))?;
    m.net
        .info()
        .check_variant(variant)
        .map_err(|e| ApiError::bad(format!("model: {e:#}")))
}

/// The body of `POST /api/analyse`.
#[derive(Deserialize)]
struct AnalyseRequest {
    #[serde(flatten)]
    game: GameSpec,
    /// A model file under a served directory (default: the heuristic evaluator).
    #[serde(default)]
    model: Option<String>,
    /// MCTS simulations (default 400).
    #[serde(default)]
    sims: Option<u32>,
    /// Alpha-beta depth limit (default none; with neither, 300 ms).
    #[serde(default)]
    ab_depth: Option<u32>,
    /// Alpha-beta time limit in ms.
    #[serde(default)]
    ab_ms: Option<u64>,
    /// A learned evaluation file under a served directory valuing alpha-beta's leaves
    /// (`models/nnue-NNNN.safetensors`; default: the hand-written evaluation).
    #[serde(default)]
    ab_eval: Option<String>,
    /// How many MCTS moves to report (default 8).
    #[serde(default)]
    top: Option<usize>,
    /// Keys no field takes: refused by [`parse_body`].
    #[serde(flatten)]
    unknown: serde_json::Map<String, Value>,
}

/// `POST /api/analyse`: the evaluator's policy (percentages over the legal moves) and
/// value (win/draw/loss with a network), MCTS visits and Q of the top moves after `sims`
/// simulations, and alpha-beta's score and principal variation.
pub async fn analyse(State(state): State<Arc<AppState>>, body: Bytes) -> ApiResult<Json<Value>> {
    let req: AnalyseRequest = parse_body(&body)?;
    let game = req.game.replay()?;
    if let Some(o) = game.outcome() {
        return Err(ApiError::bad(format!(
            "the game is over ({}); there is nothing to analyse",
            o.name()
        )));
    }
    let sims = req.sims.unwrap_or(400);
    if sims == 0 || sims > MAX_SIMS {
        return Err(ApiError::bad(format!("sims must be 1..={MAX_SIMS}")));
    }
    if req.ab_depth.is_some_and(|d| d == 0 || d > MAX_DEPTH) {
        return Err(ApiError::bad(format!("ab_depth must be 1..={MAX_DEPTH}")));
    }
    if req.ab_ms.is_some_and(|ms| ms == 0 || ms > MAX_MS) {
        return Err(ApiError::bad(format!("ab_ms must be 1..={MAX_MS}")));
    }
    let model = match req.model.as_deref().map(str::trim) {
        None | Some("") | Some("heuristic") => None,
        Some(p) => Some(state.served_file(std::path::Path::new(p))?),
    };
    let ab_eval = match req.ab_eval.as_deref().map(str::trim) {
        None | Some("") | Some("hand-written") => None,
        Some(p) => Some(state.served_file(std::path::Path::new(p))?),
    };
    let top = req.top.unwrap_or(8).clamp(1, 64);
    let st = state.clone();
    run_blocking(&state, move || {
        let pos = *game.position();
        let (evaluator, loaded, source) = match &model {
            Some(path) => {
                check_model_variant(&st, path, selfplay::Device::Cpu, pos.variant())?;
                let m = st
                    .model(path, selfplay::Device::Cpu)
                    .map_err(|e| ApiError::bad(format!("model: {e:#}")))?;
                (m.evaluator(), Some(m), path.display().to_string())
            }
            None => (
                eval::player::mcts::builtin_evaluator("heuristic")
                    .map_err(|e| ApiError::internal(e.to_string()))?,
                None,
                "heuristic".to_string(),
            ),
        };
        let g = pos.geometry();
        // Policy and value of the evaluator.
        let legal = game.legal_moves();
        let mut batch = EvalBatch::new();
        batch.push(pos, &legal);
        let failed = |e: selfplay::Error| ApiError::internal(format!("evaluation failed: {e}"));
        // A model's win/draw/loss split comes from the pass that gives its policy and value.
        let wdl = match &loaded {
            Some(m) => {
                let rows = m.net.evaluate_with_wdl(&mut batch).map_err(failed)?;
                let [win, draw, loss] = *rows
                    .first()
                    .ok_or_else(|| ApiError::internal("network output: no win/draw/loss"))?;
                Some(json!({"win": win, "draw": draw, "loss": loss}))
            }
            None => {
                evaluator.evaluate(&mut batch).map_err(failed)?;
                None
            }
        };
        let mut policy: Vec<(f32, loa::Move)> = legal
            .iter()
            .zip(&batch.priors)
            .map(|(&m, &p)| (p, m))
            .collect();
        policy.sort_by(|a, b| b.0.total_cmp(&a.0));
        let policy_json: Vec<Value> = policy
            .iter()
            .map(|&(p, m)| json!({"move": move_json(m, g), "percent": p as f64 * 100.0}))
            .collect();
        let value = batch.values[0];
        // MCTS.
        let started = Instant::now();
        let mut search = Search::new(MctsConfig::default(), *game.rules(), 1);
        search.set_root(&game);
        search.begin(sims, false);
        search
            .run(evaluator.as_ref(), &mut batch)
            .map_err(|e| ApiError::internal(format!("search failed: {e}")))?;
        let mut roots = search.root_moves();
        roots.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.q.total_cmp(&a.q)));
        let mcts_top: Vec<Value> = roots
            .iter()
            .take(top)
            .map(|r| {
                json!({
                    "move": move_json(r.mv, g),
                    "visits": r.visits,
                    "q": r.q,
                    "prior": r.prior,
                    "proof": r.proof.map(|p| format!("{p:?}").to_lowercase()),
                })
            })
            .collect();
        let mcts_ms = started.elapsed().as_secs_f64() * 1000.0;
        // Alpha-beta.
        let limits = SearchLimits {
            depth: req.ab_depth,
            time: match (req.ab_depth, req.ab_ms) {
                (_, Some(ms)) => Some(Duration::from_millis(ms)),
                (None, None) => Some(Duration::from_millis(300)),
                (Some(_), None) => None,
            },
            nodes: None,
        };
        let (mut ab, ab_eval_name) = match &ab_eval {
            Some(path) => {
                let net = eval::learned::LearnedEval::load(path)
                    .map_err(|e| ApiError::bad(format!("ab_eval: {e:#}")))?;
                if !eval::learned::supports(pos.variant()) {
                    return Err(ApiError::bad(format!(
                        "ab_eval: the learned evaluation covers standard and scrambled-eggs, \
                         not {}",
                        pos.variant().name()
                    )));
                }
                let name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                (
                    eval::AlphaBeta::with_learned(
                        eval::AlphaBetaConfig::default(),
                        std::sync::Arc::new(net),
                    ),
                    name,
                )
            }
            None => (eval::AlphaBeta::new(eval::AlphaBetaConfig::default()), None),
        };
        let r = ab
            .search_game(&game, limits)
            .map_err(|e| ApiError::bad(format!("alpha-beta: {e:#}")))?;
        Ok(Json(json!({
            "position": position_json(&game),
            "to_move": pos.to_move().name(),
            "evaluator": source,
            "policy": policy_json,
            "value": value,
            "wdl": wdl,
            "mcts": {
                "simulations": search.stats().simulations,
                "value": search.root_value(),
                "ms": mcts_ms,
                "top": mcts_top,
            },
            "alphabeta": {
                "move": move_json(r.best_move, g),
                "score": r.score,
                "score_text": eval::search::score_text(r.score),
                "depth": r.depth,
                "nodes": r.nodes,
                "ms": r.elapsed.as_secs_f64() * 1000.0,
                "pv": r.pv().iter().map(|m| m.to_string()).collect::<Vec<_>>(),
                "eval": ab_eval_name.unwrap_or_else(|| "hand-written".into()),
            },
        })))
    })
    .await
}

/// The body of `POST /api/export`.
#[derive(Deserialize)]
struct ExportRequest {
    #[serde(flatten)]
    game: GameSpec,
    /// `sgf` (default) or `record`.
    #[serde(default)]
    format: Option<String>,
    /// Black's player name.
    #[serde(default)]
    black: Option<String>,
    /// White's player name.
    #[serde(default)]
    white: Option<String>,
    /// `black` or `white`: that side resigned after the moves.
    #[serde(default)]
    resigned: Option<String>,
    /// Keys no field takes: refused by [`parse_body`].
    #[serde(flatten)]
    unknown: serde_json::Map<String, Value>,
}

/// `POST /api/export`: the game as an SGF file or a loazero record (`{"format", "text",
/// "filename"}`).
pub async fn export(body: Bytes) -> ApiResult<Json<Value>> {
    let req: ExportRequest = parse_body(&body)?;
    let game = req.game.replay()?;
    let resigned = match req.resigned.as_deref() {
        None | Some("") => None,
        Some(c) => Some(
            c.parse::<Color>()
                .map_err(|e| ApiError::bad(format!("resigned: {e}")))?,
        ),
    };
    let limit = |s: Option<String>| s.map(|s| super::state::shorten(&s));
    let format = req.format.as_deref().unwrap_or("sgf");
    let (black, white) = (limit(req.black), limit(req.white));
    let (text, ext) = export_text(&game, format, resigned, black, white)?;
    Ok(Json(json!({
        "format": format,
        "text": text,
        "filename": format!("loazero-{}-{}plies.{ext}", game.position().variant().name(), game.moves().len()),
    })))
}

/// The body of `POST /api/import`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportRequest {
    /// An SGF file or a loazero record.
    text: String,
    /// Variant of a record without `# variant` (default standard).
    #[serde(default)]
    variant: Option<String>,
}

impl RequestBody for ImportRequest {}

/// `POST /api/import`: an SGF file or loazero record → the game it holds (a [`GameSpec`]
/// with players and result), every move checked.
pub async fn import(body: Bytes) -> ApiResult<Json<Value>> {
    let req: ImportRequest = parse_body(&body)?;
    Ok(Json(import_text(&req.text, req.variant.as_deref())?))
}
