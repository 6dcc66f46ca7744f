//! The run handlers of the JSON API: the served run directories, their games (self-play,
//! gate and rating games with players and results), one game's record, and the metrics
//! the dashboard draws (read with `train::metrics::Record`, the type that writes them). Run files are only read (never locked), so a running `loazero
//! run` is not disturbed; a torn last line of a log being written is skipped.

use super::error::{ApiError, ApiResult};
use super::files::import_text;
use super::state::{run_blocking, AppState, ServedRun};
use crate::metrics_view::{charts_json, MetricsView};
use crate::run::config::RunConfig;
use axum::extract::{Path as UrlPath, Query, State};
use axum::Json;
use loa::Variant;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use train::metrics::{GenerationRecord, RatingRecord, Record};

/// Most games one listing returns.
const MAX_PAGE: usize = 200;
/// Most training records the metrics return (evenly thinned beyond).
const MAX_TRAIN_POINTS: usize = 400;
/// Largest game record the API reads (bytes).
const MAX_RECORD_BYTES: u64 = 4 << 20;

/// The files `models/PREFIX*.safetensors` of `run`, sorted: (stem, path).
fn model_files(run: &ServedRun, prefix: &str) -> Vec<(String, std::path::PathBuf)> {
    let models = run.root.join("models");
    let mut names: Vec<String> = std::fs::read_dir(&models)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(prefix) && n.ends_with(".safetensors"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            (
                n.trim_end_matches(".safetensors").to_string(),
                models.join(&n),
            )
        })
        .collect()
}

/// The promoted models of `run`, oldest first: `{"name", "generation", "path", "spec"}`
/// with `spec` a player spec that plays it (`model:path=…`).
fn models_of(run: &ServedRun) -> Vec<Value> {
    model_files(run, "gen-")
        .into_iter()
        .map(|(stem, path)| {
            json!({
                "generation": stem.trim_start_matches("gen-").parse::<u32>().ok(),
                "name": stem,
                "path": path.display().to_string(),
                "spec": format!("model:path={}", path.display()),
            })
        })
        .collect()
}

/// The promoted learned evaluations of `run` (`models/nnue-k.safetensors`, the run's last
/// stage), oldest first: `{"name", "path", "spec"}` with `spec` the learned alpha-beta
/// (`alphabeta:eval=…`, no limit of its own: Play gives it the time per move).
fn learned_of(run: &ServedRun) -> Vec<Value> {
    model_files(run, "nnue-")
        .into_iter()
        .map(|(stem, path)| {
            json!({
                "name": stem,
                "path": path.display().to_string(),
                "spec": format!("alphabeta:eval={}", path.display()),
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

/// `GET /api/runs`: every served run with its state, its best model by its ratings, the
/// model its self-play plays now, and its promoted models.
pub async fn runs(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    let st = state.clone();
    run_blocking(&state, move || {
        let runs: Vec<Value> = st
            .runs
            .iter()
            .map(|r| {
                let s = state_of(r);
                let config = config_of(r);
                let records = records_of(r);
                let rating = last_rating(&records);
                let best = best_by_ratings(rating);
                let current = current_model(&s, config.as_ref());
                json!({
                    "name": r.name,
                    "dir": r.given,
                    "state": s,
                    "best": best.get("name"),
                    "current": current.get("name"),
                    "current_label": current.get("label"),
                    "models": models_of(r),
                    "learned": learned_of(r),
                    "levels": levels_of(r, rating, config.as_ref()),
                    "variant": config.as_ref().map_or(Variant::Standard, RunConfig::variant).name(),
                })
            })
            .collect();
        Ok(Json(json!({ "runs": runs })))
    })
    .await
}

/// The run's `config.toml` as `loazero run` reads it (over the embedded default), if it
/// reads.
fn config_of(run: &ServedRun) -> Option<RunConfig> {
    RunConfig::load(Some(&run.root.join("config.toml")), &[]).ok()
}

/// The records of the run's `metrics.jsonl`, read with the type that writes them
/// ([`Record`], as `loazero plot` reads them). A line that does not read (a torn last
/// line while the run writes it) is skipped.
fn records_of(run: &ServedRun) -> Vec<Record> {
    std::fs::read_to_string(run.root.join("metrics.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The last rating round of `records`.
fn last_rating(records: &[Record]) -> Option<&RatingRecord> {
    records.iter().rev().find_map(|r| match r {
        Record::Rating(r) => Some(r),
        _ => None,
    })
}

/// The run's best model by its ratings: the model rated highest in its last rating round
/// (the table `ratings.csv` holds), `{"name", "generation", "elo", "stderr"}`; null before
/// a model is rated.
fn best_by_ratings(rating: Option<&RatingRecord>) -> Value {
    rating
        .into_iter()
        .flat_map(|r| &r.ratings)
        .filter(|row| row.generation.is_some() && row.elo.is_finite())
        .max_by(|a, b| a.elo.total_cmp(&b.elo))
        .map_or(Value::Null, |row| {
            json!({
                "name": row.name,
                "generation": row.generation,
                "elo": row.elo,
                "stderr": row.stderr,
            })
        })
}

/// The Play screen's calibrated levels of `run` ([`rundir::levels`]: the players of its
/// last rating round as they were rated, weakest first): `{"name", "spec", "elo",
/// "interval"}` with `elo` the Bradley–Terry Elo (random = 0) and `interval` the
/// half-width of its 95% interval (null when unknown).
fn levels_of(
    run: &ServedRun,
    rating: Option<&RatingRecord>,
    config: Option<&RunConfig>,
) -> Vec<Value> {
    let defaults = RunConfig::default();
    let config = config.unwrap_or(&defaults);
    let rated: Vec<rundir::levels::Rated> = rating
        .into_iter()
        .flat_map(|r| &r.ratings)
        .map(|row| rundir::levels::Rated {
            name: row.name.clone(),
            elo: row.elo,
            stderr: row.stderr,
        })
        .collect();
    let rated_as = rundir::levels::RatedAs {
        simulations: config.rating.simulations,
        learned_depth: config.learned_eval.rating_depth,
    };
    rundir::levels::levels(&run.root, &rated, rated_as)
        .into_iter()
        .map(|l| json!({"name": l.name, "spec": l.spec, "elo": l.elo, "interval": l.interval}))
        .collect()
}

/// The model the run's self-play plays now (`state.json`'s `best`), `{"name", "label"}`:
/// labelled `newest` when the run has no gate (every candidate is promoted, so it is the
/// newest model, whatever the ratings say), `best by gate` when it has one; null before
/// `state.json`.
fn current_model(state: &Value, config: Option<&RunConfig>) -> Value {
    let Some(generation) = state.get("best").and_then(Value::as_u64) else {
        return Value::Null;
    };
    let gated = config.is_some_and(|c| c.run.gate);
    json!({
        "name": format!("gen-{generation:04}"),
        "label": if gated { "best by gate" } else { "newest" },
    })
}

/// How the run stopped, if its last record says so (a later record means it was
/// resumed): `{"reason", "finished", "generation", "elapsed_s"}` with `finished` true
/// when it reached a limit (`time-budget`, `generations`) rather than being
/// `interrupted`; null while the run goes on (or after it was killed without a word).
fn stop_of(records: &[Record]) -> Value {
    match records.last() {
        Some(Record::Stop(s)) => json!({
            "reason": s.reason,
            "finished": s.reason.is_finished(),
            "generation": s.generation,
            "elapsed_s": s.elapsed_s,
        }),
        _ => Value::Null,
    }
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
    // The loop's `loop-gNNNN-…`, a joined process's `ext-gNNNN-…`, a store worker's
    // `joined-ext-gNNNN-…` (rundir::store_copy).
    let unjoined = name
        .strip_prefix(rundir::store_copy::JOINED_PREFIX)
        .unwrap_or(name);
    let generation = unjoined
        .strip_prefix("loop-g")
        .or_else(|| unjoined.strip_prefix("ext-g"))
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
    let records = records_of(run);
    let mut train = Vec::new();
    let mut generations: Vec<&GenerationRecord> = Vec::new();
    for record in &records {
        match record {
            Record::Train(t) => train.push(json!({
                "step": t.step,
                "time": t.time,
                "loss": t.stats.loss,
                "policy_loss": t.stats.policy_loss,
                "value_loss": t.stats.value_loss,
                "samples_per_sec": t.samples_per_sec,
            })),
            Record::Generation(g) => generations.push(g),
            Record::Rating(_) | Record::Stop(_) => {}
        }
    }
    if train.len() > MAX_TRAIN_POINTS {
        let n = train.len();
        train = (0..MAX_TRAIN_POINTS)
            .map(|i| train[i * (n - 1) / (MAX_TRAIN_POINTS - 1)].clone())
            .collect();
    }
    let last_rating = last_rating(&records);
    // Elo over training time: each rated model at the time its generation ended.
    let elapsed_of = |g: u32| -> Option<f64> {
        if g == 0 {
            return Some(0.0);
        }
        generations
            .iter()
            .find(|r| r.generation == g)
            .and_then(|r| r.elapsed_s)
    };
    let mut elo = Vec::new();
    let mut anchors = Vec::new();
    for row in last_rating.into_iter().flat_map(|r| &r.ratings) {
        let mut point = json!({
            "name": row.name,
            "elo": row.elo,
            "stderr": row.stderr,
            "games": row.games,
        });
        match row.generation {
            Some(g) => {
                point["generation"] = json!(g);
                point["elapsed_s"] = json!(elapsed_of(g));
                elo.push(point);
            }
            None => anchors.push(point),
        }
    }
    elo.sort_by_key(|p| p.get("generation").and_then(Value::as_u64));
    let generations: Vec<Value> = generations
        .iter()
        .map(|g| {
            json!({
                "generation": g.generation,
                "elapsed_s": g.elapsed_s,
                "selfplay_games": g.selfplay_games,
                "positions_per_sec": g.positions_per_sec,
                "evals_per_sec": g.evals_per_sec,
                "train_samples_per_sec": g.train_samples_per_sec,
                "loss": g.loss,
                "policy_loss": g.policy_loss,
                "value_loss": g.value_loss,
                "promoted": g.promoted,
                "best": g.best,
                "gate_score": g.gate_score,
                "heldout_top1": g.heldout.as_ref().map(|h| h.top1),
            })
        })
        .collect();
    let state_age_s = std::fs::metadata(run.root.join("state.json"))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .map(|d| d.as_secs_f64());
    let state = state_of(run);
    let config = config_of(run);
    json!({
        "run": run.name,
        "state": state,
        "state_age_s": state_age_s,
        "stop": stop_of(&records),
        "best": best_by_ratings(last_rating),
        "current": current_model(&state, config.as_ref()),
        "gate": config.map(|c| c.run.gate),
        "elo": elo,
        "anchors": anchors,
        "rated_at_s": last_rating.map(|r| r.elapsed_s),
        "train": train,
        "generations": generations,
        // Every chart `loazero plot` draws but the Elo one (crate::metrics_view).
        "charts": charts_json(&MetricsView::of_records(records.iter().cloned()), MAX_TRAIN_POINTS),
        "models": models_of(run),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use train::metrics::{RatingRow, StopReason, StopRecord};

    /// A rated model (or an anchor, without a generation) of a rating round.
    fn row(name: &str, generation: Option<u32>, elo: f64) -> RatingRow {
        RatingRow {
            name: name.into(),
            generation,
            elo,
            stderr: 40.0,
            games: 20,
            score: 0.5,
        }
    }

    /// A run directory like the one the issue describes: no gate, stopped by its time
    /// budget in generation 49's self-play, with gen-0024 rated above gen-0048.
    fn stopped_run(gate: bool) -> (tempfile::TempDir, ServedRun) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let mut config = RunConfig::default();
        config.run.gate = gate;
        std::fs::write(root.join("config.toml"), config.to_toml()).unwrap();
        let mut state = rundir::state::LoopState::new();
        state.generation = 49;
        state.phase = rundir::state::Phase::Selfplay;
        state.best = 48;
        state.save(&root.join("state.json")).unwrap();
        let mut lines = Vec::new();
        for generation in [24, 48] {
            lines.push(Record::Generation(Box::new(GenerationRecord {
                generation,
                elapsed_s: Some(generation as f64 * 36.0),
                promoted: true,
                best: format!("gen-{generation:04}"),
                ..GenerationRecord::default()
            })));
        }
        lines.push(Record::Rating(RatingRecord {
            time: 1.0,
            elapsed_s: 1750.0,
            generation: 48,
            ratings: vec![
                row("gen-0024", Some(24), 1320.0),
                row("alphabeta:depth=3", None, 1335.0),
                row("gen-0048", Some(48), 1250.0),
                row("random", None, 0.0),
            ],
        }));
        lines.push(Record::Stop(StopRecord {
            time: 2.0,
            elapsed_s: 1790.0,
            generation: 48,
            reason: StopReason::TimeBudget,
        }));
        let mut text: String = lines
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        text.push_str(r#"{"kind":"train","st"#); // torn while written
        std::fs::write(root.join("metrics.jsonl"), text).unwrap();
        let run = ServedRun {
            name: "default".into(),
            given: root.display().to_string(),
            root,
        };
        (dir, run)
    }

    #[test]
    fn the_dashboard_says_finished_and_best_by_the_ratings() {
        let (_dir, run) = stopped_run(false);
        let m = metrics_of(&run);
        assert_eq!(m["stop"]["reason"], "time-budget", "{m}");
        assert_eq!(m["stop"]["finished"], true);
        assert_eq!(m["stop"]["generation"], 48);
        assert_eq!(m["best"]["name"], "gen-0024", "{m}");
        assert_eq!(m["best"]["elo"], 1320.0);
        assert_eq!(m["current"]["name"], "gen-0048");
        assert_eq!(m["current"]["label"], "newest");
        assert_eq!(m["gate"], false);
        assert_eq!(m["elo"].as_array().unwrap().len(), 2);
        assert_eq!(m["elo"][1]["elapsed_s"], 48.0 * 36.0);
        assert_eq!(m["anchors"].as_array().unwrap().len(), 2);
        assert_eq!(m["generations"][0]["best"], "gen-0024");

        // With a gate, the model self-play plays is the gate's best.
        let (_dir, gated) = stopped_run(true);
        assert_eq!(metrics_of(&gated)["current"]["label"], "best by gate");

        // Resumed: a record after the stop means the run goes on.
        let path = run.root.join("metrics.jsonl");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push('\n');
        text.push_str(r#"{"kind":"train","step":900,"loss":2.0}"#);
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        let m = metrics_of(&run);
        assert!(m["stop"].is_null(), "{m}");
        assert_eq!(m["train"][0]["step"], 900);
        assert_eq!(m["best"]["name"], "gen-0024");
    }

    /// The run's promoted learned evaluations are listed with a spec that plays them;
    /// candidates and MCTS models are not among them.
    #[test]
    fn learned_evaluations_are_listed_with_their_spec() {
        let (_dir, run) = stopped_run(false);
        assert_eq!(learned_of(&run), Vec::<Value>::new());
        let models = run.root.join("models");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::create_dir_all(run.root.join("candidates")).unwrap();
        for f in [
            "models/nnue-0002.safetensors",
            "models/nnue-0001.safetensors",
            "models/gen-0003.safetensors",
            "candidates/nnue-0003.safetensors",
        ] {
            std::fs::write(run.root.join(f), b"x").unwrap();
        }
        let listed = learned_of(&run);
        let names: Vec<&str> = listed.iter().map(|l| l["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["nnue-0001", "nnue-0002"]);
        let path = models.join("nnue-0002.safetensors");
        assert_eq!(
            listed[1]["spec"],
            format!("alphabeta:eval={}", path.display())
        );
        assert_eq!(models_of(&run).len(), 1);
    }

    /// Play's levels are the rated players, weakest first, each with the spec that plays
    /// as it was rated (a model at the rating's simulations, the learned alpha-beta at its
    /// rating depth) and its Elo with the 95% interval; a rated model whose file is gone is
    /// not offered.
    #[test]
    fn levels_are_the_rated_players_weakest_first_as_rated() {
        let (_dir, run) = stopped_run(false);
        let models = run.root.join("models");
        std::fs::create_dir_all(&models).unwrap();
        for f in ["gen-0024", "nnue-0001"] {
            std::fs::write(models.join(format!("{f}.safetensors")), b"x").unwrap();
        }
        let mut records = records_of(&run);
        let Some(Record::Rating(r)) = records.iter_mut().find(|r| matches!(r, Record::Rating(_)))
        else {
            panic!("no rating round")
        };
        r.ratings.push(row("nnue-0001", None, 1400.0));
        r.ratings.push(row("(first move advantage)", None, 40.0));
        let config = RunConfig::default();
        let levels = levels_of(&run, last_rating(&records), Some(&config));
        let names: Vec<&str> = levels.iter().map(|l| l["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["random", "gen-0024", "alphabeta:depth=3", "nnue-0001"],
            "{levels:?}"
        );
        let elos: Vec<f64> = levels.iter().map(|l| l["elo"].as_f64().unwrap()).collect();
        assert_eq!(elos, [0.0, 1320.0, 1335.0, 1400.0]);
        assert_eq!(levels[1]["interval"], 1.96 * 40.0);
        assert_eq!(
            levels[1]["spec"],
            format!(
                "model:path={},sims={}",
                models.join("gen-0024.safetensors").display(),
                config.rating.simulations
            )
        );
        assert_eq!(
            levels[3]["spec"],
            format!(
                "alphabeta:eval={},depth={}",
                models.join("nnue-0001.safetensors").display(),
                config.learned_eval.rating_depth
            )
        );
        assert_eq!(levels[2]["spec"], "alphabeta:depth=3");
    }

    #[test]
    fn an_interrupted_run_is_stopped_not_finished_and_nothing_rated_has_no_best() {
        let records = vec![Record::Stop(StopRecord {
            time: 0.0,
            elapsed_s: 5.0,
            generation: 0,
            reason: StopReason::Interrupted,
        })];
        let stop = stop_of(&records);
        assert_eq!(stop["reason"], "interrupted");
        assert_eq!(stop["finished"], false);
        assert!(best_by_ratings(last_rating(&records)).is_null());
        assert!(current_model(&Value::Null, None).is_null());
    }
}
