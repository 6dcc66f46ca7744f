//! The run handlers of the JSON API: the served run directories, their games (self-play,
//! gate and rating games with players and results), one game's record, and the metrics
//! the dashboard draws. Run files are only read (never locked), so a running `loazero
//! run` is not disturbed; a torn last line of a log being written is skipped.

use super::error::{ApiError, ApiResult};
use super::files::import_text;
use super::state::{run_blocking, AppState, ServedRun};
use axum::extract::{Path as UrlPath, Query, State};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

/// Most games one listing returns.
const MAX_PAGE: usize = 200;
/// Most training records the metrics return (evenly thinned beyond).
const MAX_TRAIN_POINTS: usize = 400;
/// Largest game record the API reads (bytes).
const MAX_RECORD_BYTES: u64 = 4 << 20;

/// The promoted models of `run`, oldest first: `{"name", "generation", "path", "spec"}`
/// with `spec` a player spec that plays it (`model:path=…`).
fn models_of(run: &ServedRun) -> Vec<Value> {
    let mut names: Vec<String> = std::fs::read_dir(run.root.join("models"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("gen-") && n.ends_with(".safetensors"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .iter()
        .map(|n| {
            let stem = n.trim_end_matches(".safetensors");
            let path = run.root.join("models").join(n);
            json!({
                "name": stem,
                "generation": stem.trim_start_matches("gen-").parse::<u32>().ok(),
                "path": path.display().to_string(),
                "spec": format!("model:path={}", path.display()),
            })
        })
        .collect()
}

/// `state.json` of `run`, if it reads.
fn state_of(run: &ServedRun) -> Value {
    std::fs::read_to_string(run.root.join("state.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

/// `GET /api/runs`: every served run with its state and promoted models.
pub async fn runs(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    let st = state.clone();
    run_blocking(&state, move || {
        let runs: Vec<Value> = st
            .runs
            .iter()
            .map(|r| {
                let s = state_of(r);
                let best = s.get("best").and_then(Value::as_u64);
                json!({
                    "name": r.name,
                    "dir": r.given.display().to_string(),
                    "state": s,
                    "best": best.map(|g| format!("gen-{g:04}")),
                    "models": models_of(r),
                    "variant": run_variant(r),
                })
            })
            .collect();
        Ok(Json(json!({ "runs": runs })))
    })
    .await
}

/// The variant of a run, from `selfplay.variant` in its `config.toml` (default standard).
fn run_variant(run: &ServedRun) -> String {
    std::fs::read_to_string(run.root.join("config.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| {
            t.get("selfplay")?
                .get("variant")?
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| "standard".into())
}

/// Query of `GET /api/runs/{run}/games`.
#[derive(Deserialize)]
pub struct GamesQuery {
    /// `selfplay`, `gate`, `rating` or `all` (default).
    #[serde(default)]
    kind: Option<String>,
    /// Games to skip (newest first).
    #[serde(default)]
    offset: Option<usize>,
    /// Games to return (default 50, at most 200).
    #[serde(default)]
    limit: Option<usize>,
}

/// `GET /api/runs/{run}/games`: the run's games, newest first, each `{"kind", "path",
/// "black", "white", "result", "plies", "label"}` (`path` relative to the run
/// directory, for `GET /api/runs/{run}/game`), with `total` games of that kind.
pub async fn games(
    State(state): State<Arc<AppState>>,
    UrlPath(run): UrlPath<String>,
    Query(q): Query<GamesQuery>,
) -> ApiResult<Json<Value>> {
    let run = state.run(&run)?.clone();
    let kind = q.kind.unwrap_or_else(|| "all".into());
    if !["all", "selfplay", "gate", "rating"].contains(&kind.as_str()) {
        return Err(ApiError::bad(format!(
            "kind '{}': expected selfplay, gate, rating or all",
            super::state::shorten(&kind)
        )));
    }
    let offset = q.offset.unwrap_or(0);
    let limit = q.limit.unwrap_or(50).clamp(1, MAX_PAGE);
    run_blocking(&state, move || {
        let mut all = Vec::new();
        if kind == "all" || kind == "gate" || kind == "rating" {
            all.extend(match_games(&run.root, &kind));
        }
        let mut selfplay = Vec::new();
        if kind == "all" || kind == "selfplay" {
            selfplay = selfplay_names(&run.root);
        }
        let total = all.len() + selfplay.len();
        let end = offset.saturating_add(limit).min(total);
        let page: Vec<Value> = (offset.min(end)..end)
            .map(|i| match all.get(i) {
                Some(g) => g.clone(),
                None => selfplay_entry(&run.root, &selfplay[i - all.len()]),
            })
            .collect();
        Ok(Json(
            json!({ "total": total, "offset": offset, "games": page }),
        ))
    })
    .await
}

/// Names of the self-play records in `games/`, newest first.
fn selfplay_names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("games"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".txt") && !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort_unstable_by(|a, b| b.cmp(a));
    names
}

/// One self-play game: players and result from its record's `# end` line.
fn selfplay_entry(root: &Path, name: &str) -> Value {
    let text = std::fs::read_to_string(root.join("games").join(name)).unwrap_or_default();
    let record = loa::GameRecord::parse(&text).ok();
    let end = record
        .as_ref()
        .and_then(|r| r.header.end.clone())
        .unwrap_or_default();
    let result = record
        .as_ref()
        .and_then(|r| r.header.end_outcome().ok().flatten())
        .map(|(outcome, _)| outcome.name());
    let plies = record.as_ref().map(|r| r.moves.len());
    let generation = name
        .strip_prefix("loop-g")
        .and_then(|r| r.get(..4))
        .and_then(|g| g.parse::<u32>().ok());
    let player = match generation {
        Some(g) => format!("self-play gen-{g:04}"),
        None => "self-play".to_string(),
    };
    json!({
        "kind": "selfplay",
        "path": format!("games/{name}"),
        "black": player,
        "white": player,
        "result": result,
        "detail": end,
        "plies": plies,
        "label": name,
    })
}

/// The gate (`kind` gate), rating (rating) or all match games of the run, newest match
/// first, from each match's `results.jsonl`.
fn match_games(root: &Path, kind: &str) -> Vec<Value> {
    let mut dirs: Vec<String> = std::fs::read_dir(root.join("matches"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort_unstable_by(|a, b| b.cmp(a));
    let mut out = Vec::new();
    for dir in dirs {
        let k = if dir.starts_with("gate-") {
            "gate"
        } else if dir.starts_with("rate-") || dir.starts_with("anchors-") {
            "rating"
        } else {
            continue;
        };
        if kind != "all" && kind != k {
            continue;
        }
        let text = std::fs::read_to_string(root.join("matches").join(&dir).join("results.jsonl"))
            .unwrap_or_default();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue; // a torn last line while the match is written
            };
            let Some(record) = v.get("record").and_then(Value::as_str) else {
                continue;
            };
            out.push(json!({
                "kind": k,
                "path": format!("matches/{dir}/{record}"),
                "black": v.get("black"),
                "white": v.get("white"),
                "result": v.get("result"),
                "detail": if v.get("adjudicated").and_then(Value::as_bool) == Some(true) {
                    "adjudicated"
                } else {
                    ""
                },
                "plies": v.get("plies"),
                "label": format!("{dir} #{}", v.get("game").and_then(Value::as_u64).unwrap_or(0)),
                "variant": v.get("variant"),
                "rules": v.get("rules"),
            }));
        }
    }
    out
}

/// Query of `GET /api/runs/{run}/game`.
#[derive(Deserialize)]
pub struct GameQuery {
    /// The record's path relative to the run directory.
    path: String,
}

/// `GET /api/runs/{run}/game?path=P`: the record's text and the game it holds (as
/// `POST /api/import`). 403 for a path leaving the run directory.
pub async fn game(
    State(state): State<Arc<AppState>>,
    UrlPath(run): UrlPath<String>,
    Query(q): Query<GameQuery>,
) -> ApiResult<Json<Value>> {
    let run = state.run(&run)?.clone();
    let file = state.run_file(&run, &q.path)?;
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext != "txt" && ext != "sgf" {
        return Err(ApiError::forbidden(format!(
            "{}: only game records (.txt, .sgf) can be read",
            super::state::shorten(&q.path)
        )));
    }
    let shown = q.path.clone();
    run_blocking(&state, move || {
        let len = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        if len > MAX_RECORD_BYTES {
            return Err(ApiError::bad(format!(
                "{shown}: larger than {MAX_RECORD_BYTES} bytes"
            )));
        }
        let text =
            std::fs::read_to_string(&file).map_err(|e| ApiError::bad(format!("{shown}: {e}")))?;
        let mut game = import_text(&text, None)?;
        game["text"] = json!(text);
        game["path"] = json!(shown);
        Ok(Json(game))
    })
    .await
}

/// `GET /api/runs/{run}/metrics`: what the dashboard draws: the loop state, the Elo of
/// every rated model over training time (with standard errors) and the anchors, the
/// training losses, the throughput of every generation, and the promoted models.
pub async fn metrics(
    State(state): State<Arc<AppState>>,
    UrlPath(run): UrlPath<String>,
) -> ApiResult<Json<Value>> {
    let run = state.run(&run)?.clone();
    run_blocking(&state, move || Ok(Json(metrics_of(&run)))).await
}

/// The dashboard data of `run` (see [`metrics`]).
fn metrics_of(run: &ServedRun) -> Value {
    let text = std::fs::read_to_string(run.root.join("metrics.jsonl")).unwrap_or_default();
    let mut train = Vec::new();
    let mut generations = Vec::new();
    let mut last_rating: Option<Value> = None;
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match v.get("kind").and_then(Value::as_str) {
            Some("train") => train.push(json!({
                "step": v.get("step"),
                "time": v.get("time"),
                "loss": v.get("loss"),
                "policy_loss": v.get("policy_loss"),
                "value_loss": v.get("value_loss"),
                "samples_per_sec": v.get("samples_per_sec"),
            })),
            Some("generation") => generations.push(json!({
                "generation": v.get("generation"),
                "elapsed_s": v.get("elapsed_s"),
                "selfplay_games": v.get("selfplay_games"),
                "positions_per_sec": v.get("positions_per_sec"),
                "evals_per_sec": v.get("evals_per_sec"),
                "train_samples_per_sec": v.get("train_samples_per_sec"),
                "loss": v.get("loss"),
                "policy_loss": v.get("policy_loss"),
                "value_loss": v.get("value_loss"),
                "promoted": v.get("promoted"),
                "best": v.get("best"),
                "gate_score": v.get("gate_score"),
                "heldout_top1": v.pointer("/heldout/top1"),
            })),
            Some("rating") => last_rating = Some(v),
            _ => {}
        }
    }
    if train.len() > MAX_TRAIN_POINTS {
        let n = train.len();
        train = (0..MAX_TRAIN_POINTS)
            .map(|i| train[i * (n - 1) / (MAX_TRAIN_POINTS - 1)].clone())
            .collect();
    }
    // Elo over training time: each rated model at the time its generation ended.
    let elapsed_of = |g: u64| -> Option<f64> {
        if g == 0 {
            return Some(0.0);
        }
        generations
            .iter()
            .find(|r| r.get("generation").and_then(Value::as_u64) == Some(g))
            .and_then(|r| r.get("elapsed_s").and_then(Value::as_f64))
    };
    let mut elo = Vec::new();
    let mut anchors = Vec::new();
    if let Some(r) = &last_rating {
        for e in r
            .get("ratings")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let point = json!({
                "name": e.get("name"),
                "elo": e.get("elo"),
                "stderr": e.get("stderr"),
                "games": e.get("games"),
            });
            match e.get("generation").and_then(Value::as_u64) {
                Some(g) => {
                    let mut p = point;
                    p["generation"] = json!(g);
                    p["elapsed_s"] = json!(elapsed_of(g));
                    elo.push(p);
                }
                None => anchors.push(point),
            }
        }
    }
    elo.sort_by_key(|p| p.get("generation").and_then(Value::as_u64));
    let state_age_s = std::fs::metadata(run.root.join("state.json"))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .map(|d| d.as_secs_f64());
    json!({
        "run": run.name,
        "state": state_of(run),
        "state_age_s": state_age_s,
        "elo": elo,
        "anchors": anchors,
        "rated_at_s": last_rating.as_ref().and_then(|r| r.get("elapsed_s")),
        "train": train,
        "generations": generations,
        "models": models_of(run),
    })
}
