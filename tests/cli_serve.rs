//! End-to-end tests of `loazero serve`'s JSON API (docs/api.md) over a tiny run made in the
//! test: positions and results with their rules, moves of players (alpha-beta, the run's
//! models), analysis, SGF/record export and import, the run's games and metrics, bad
//! requests (4xx with a JSON error naming the problem), and a robustness run of random and
//! malformed requests (no 5xx, the server keeps answering).

mod common;
use common::{temp_dir, tiny_run, Server};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// One tiny run (2 generations) shared by the tests of this binary, in a temporary
/// directory removed when the test process exits (statics are never dropped, so an
/// `atexit` handler removes it; it is registered before the run is made, so a failed run
/// is removed too).
fn run_dir() -> &'static Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    static MADE: OnceLock<()> = OnceLock::new();
    extern "C" fn remove_dir() {
        if let Some(dir) = DIR.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    let dir = DIR.get_or_init(|| {
        // SAFETY: registers a plain function without arguments, called once at exit.
        unsafe { libc::atexit(remove_dir) };
        temp_dir().keep()
    });
    MADE.get_or_init(|| tiny_run(&dir.join("tiny"), 2));
    dir
}

fn tiny() -> std::path::PathBuf {
    run_dir().join("tiny")
}

fn error_of(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error field: {body}"))
        .to_string()
}

#[test]
fn variants_and_positions() {
    let s = Server::start(&[]);
    let v = s.get_json("/api/variants");
    let variants = v["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 7);
    let alveole = variants.iter().find(|x| x["name"] == "alveole").unwrap();
    assert_eq!(alveole["board"]["shape"], "hex");
    assert_eq!(alveole["board"]["cells"].as_array().unwrap().len(), 61);
    let ambiloa = variants.iter().find(|x| x["name"] == "ambiloa").unwrap();
    assert_eq!(ambiloa["players"], 4);

    // The start: 12 pieces each, Black to move, 36 legal moves, no result.
    let p = s.post_json("/api/position", &json!({}));
    assert_eq!(p["to_move"], "black");
    assert_eq!(p["pieces"].as_object().unwrap().len(), 24);
    assert_eq!(p["legal"].as_array().unwrap().len(), 36);
    assert!(p["result"].is_null());
    let p = s.post_json("/api/position", &json!({"moves": ["b1-b3", "a2-c2"]}));
    assert_eq!(p["ply"], 2);
    assert_eq!(p["last_move"]["text"], "a2-c2");
    assert_eq!(p["pieces"]["c2"]["color"], "white");

    // A connection win, with its rule.
    let p = s.post_json(
        "/api/position",
        &json!({"start": "7w/8/7w/8/8/8/8/b1b5 b", "moves": ["c1-b2"]}),
    );
    assert_eq!(p["result"]["winner"], "black");
    assert_eq!(p["result"]["rule"], "connection");
    assert!(p["legal"].as_array().unwrap().is_empty());

    // Ambiloa names the player to move; parachute has reserves and drops.
    let p = s.post_json("/api/position", &json!({"variant": "ambiloa"}));
    assert_eq!(p["player"], "south");
    assert_eq!(p["pieces"]["b8"]["player"], "north");
    let p = s.post_json(
        "/api/position",
        &json!({"variant": "parachute", "moves": ["a3-c3"]}),
    );
    assert_eq!(p["drop_pending"], true);
    assert!(p["legal"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["kind"] == "drop"));

    // Bad requests name the problem.
    for (body, needle) in [
        (r#"{"moves": ["b1-b9"]}"#, "b9"),
        (r#"{"moves": ["b1-b2"]}"#, "b1-b2"),
        (r#"{"variant": "chess"}"#, "chess"),
        (r#"{"rules": "nonsense=1"}"#, "rules"),
        (r#"{"start": "8/8 b"}"#, "start"),
        (r#"{"moves": "b1-b3"}"#, "JSON"),
        (r#"{"move": ["b1-b3"]}"#, "unknown field `move`"),
        (r#"{"moves": ["b1-b3""#, "JSON"),
        ("", "JSON"),
    ] {
        let (status, text) = s.post("/api/position", body);
        assert_eq!(status, 400, "{body}: {text}");
        assert!(error_of(&text).contains(needle), "{body}: {text}");
    }
    let (status, text) = s.get("/api/nothing");
    assert_eq!(status, 404, "{text}");
    assert!(error_of(&text).contains("/api/nothing"));
    let (status, text) = s.request("DELETE", "/api/position", None);
    assert_eq!(status, 405, "{text}");
    error_of(&text);
    // A body over the limit: 413 with a JSON error.
    let big = format!("{{\"moves\": [\"{}\"]}}", "x".repeat(2 << 20));
    let (status, text) = s.post("/api/position", &big);
    assert_eq!(status, 413, "{}", &text[..text.len().min(200)]);
    error_of(&text);
}

/// The registry of players, as the web app reads it: every served kind's opponents play a
/// move, and the kinds that search report it in the one info format.
#[test]
fn the_player_registry_is_served_and_its_opponents_play() {
    let s = Server::start(&[&tiny()]);
    let r = s.get_json("/api/players");
    let kinds = r["kinds"].as_array().unwrap();
    let names: Vec<&str> = kinds.iter().map(|k| k["name"].as_str().unwrap()).collect();
    for name in [
        "random",
        "first-legal",
        "alphabeta",
        "mcts",
        "model",
        "ubfm",
    ] {
        assert!(names.contains(&name), "{names:?}");
    }
    for kind in kinds.iter().filter(|k| k["served"] == true) {
        for o in kind["opponents"].as_array().unwrap() {
            let spec = o["spec"].as_str().unwrap();
            let r = s.post_json(
                "/api/play",
                &json!({"variant": "6x6", "player": spec, "ms": 20}),
            );
            assert_eq!(r["position"]["ply"], 1, "{spec}: {r}");
            let searches = !["random", "first-legal"].contains(&kind["name"].as_str().unwrap());
            assert_eq!(r["info"].is_object(), searches, "{spec}: {r}");
            if searches {
                assert_eq!(r["info"]["pv"][0], r["move"]["text"], "{spec}: {r}");
            }
        }
    }
    // first-legal plays the first legal move the position lists.
    let r = s.post_json("/api/play", &json!({"player": "first-legal"}));
    let p = s.post_json("/api/position", &json!({}));
    assert_eq!(r["move"]["text"], p["legal"][0]["text"], "{r}");
}

#[test]
fn players_move_and_bad_players_are_refused() {
    let s = Server::start(&[&tiny()]);
    let r = s.post_json(
        "/api/play",
        &json!({"moves": ["b1-b3"], "player": "alphabeta:depth=1"}),
    );
    let mv = r["move"]["text"].as_str().unwrap().to_string();
    let p = s.post_json("/api/position", &json!({"moves": ["b1-b3"]}));
    assert!(
        p["legal"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["text"] == mv.as_str()),
        "{mv} is not legal"
    );
    assert_eq!(r["position"]["moves"], json!(["b1-b3", mv]));
    assert!(r["time_ms"].as_f64().unwrap() >= 0.0);

    // A promoted model of the served run plays its variant.
    let model = tiny().join("models/gen-0002.safetensors");
    let r = s.post_json(
        "/api/play",
        &json!({"variant": "6x6", "player": format!("model:path={}", model.display()), "ms": 50}),
    );
    assert_eq!(r["position"]["ply"], 1);
    // Echoed with the limit it searched by (the request's time, not the default
    // simulations), and its search reported in the one info format.
    let player = r["player"].as_str().unwrap();
    assert!(
        player.starts_with("model:path=") && player.ends_with("gen-0002.safetensors,ms=50"),
        "{r}"
    );
    let info = &r["info"];
    let pv_len = info["pv"].as_array().unwrap().len() as u64;
    assert!(
        info["depth"].as_u64() == Some(pv_len)
            && info["seldepth"].as_u64().unwrap() >= pv_len
            && info["nodes"].as_u64().unwrap() > 0,
        "{r}"
    );
    let value = info["score"]["value"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&value), "{r}");
    assert_eq!(info["pv"][0], r["move"]["text"], "{r}");

    // Two games at once (two tabs).
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let addr = s.addr.clone();
            std::thread::spawn(move || {
                let first = ["b1-b3", "c1-c3"][i];
                let body = json!({"moves": [first], "player": "alphabeta:ms=100"}).to_string();
                let req = format!(
                    "POST /api/play HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let mut c = std::net::TcpStream::connect(&addr).unwrap();
                use std::io::{Read, Write};
                c.write_all(req.as_bytes()).unwrap();
                let mut out = String::new();
                c.read_to_string(&mut out).unwrap();
                out
            })
        })
        .collect();
    for h in handles {
        let out = h.join().unwrap();
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    }

    for (body, status, needle) in [
        (json!({"player": "chess-engine"}), 400, "chess-engine"),
        (json!({"player": "alphabeta:depth=40"}), 400, "depth"),
        (
            json!({"player": "alphabeta:weights=/etc/passwd"}),
            400,
            "weights",
        ),
        (json!({"player": "model:path=/etc/passwd"}), 403, "outside"),
        (json!({"player": "ubfm:path=/etc/passwd"}), 403, "outside"),
        (json!({"player": "ubfm:nodes=999999"}), 400, "nodes at most"),
        (
            json!({"player": format!("ubfm:path={},device=cuda", model.display())}),
            400,
            "cpu only",
        ),
        // A missing file outside the served directories is outside (403), one inside is
        // missing (404); a run's name and a model's name stand for its file.
        (
            json!({"player": format!("model:path={}/../tiny/../../x.safetensors", tiny().display())}),
            403,
            "outside",
        ),
        (
            json!({"player": "model:path=/nonexistent/x.safetensors"}),
            403,
            "outside",
        ),
        (
            json!({"player": format!("model:path={}/models/gen-0999.safetensors", tiny().display())}),
            404,
            "no such file",
        ),
        (
            json!({"player": "model:path=tiny/gen-0999,sims=4"}),
            404,
            "no such file",
        ),
        (
            json!({"player": "model:path=tiny/../../x.safetensors"}),
            403,
            "outside",
        ),
        (
            json!({"player": "random", "moves": ["b1-b2"]}),
            400,
            "b1-b2",
        ),
        (
            json!({"player": "random", "start": "7w/8/7w/8/8/8/8/b1b5 b", "moves": ["c1-b2"]}),
            400,
            "over",
        ),
        (json!({"player": "random", "ms": 99999999}), 400, "ms"),
        // A typo for `moves` is refused, not read as a game from the start.
        (
            json!({"player": "random", "move": ["b1-b3"]}),
            400,
            "unknown field `move`",
        ),
        // A 6x6 model on the standard board.
        (
            json!({"player": format!("model:path={}", model.display())}),
            400,
            "6x6",
        ),
        (
            json!({"player": format!("ubfm:path={},ms=50", model.display())}),
            400,
            "6x6",
        ),
    ] {
        let (st, text) = s.post("/api/play", &body.to_string());
        assert_eq!(st, status, "{body}: {text}");
        assert!(error_of(&text).contains(needle), "{body}: {text}");
    }
}

#[test]
fn analysis_of_a_run_model_and_of_the_heuristic() {
    let s = Server::start(&[&tiny()]);
    let model = tiny().join("models/gen-0001.safetensors");
    let r = s.post_json(
        "/api/analyse",
        &json!({"variant": "6x6", "moves": [], "model": model.display().to_string(), "sims": 64, "ab_depth": 2}),
    );
    let policy = r["policy"].as_array().unwrap();
    let legal = r["position"]["legal"].as_array().unwrap().len();
    assert_eq!(policy.len(), legal);
    let sum: f64 = policy.iter().map(|m| m["percent"].as_f64().unwrap()).sum();
    assert!((sum - 100.0).abs() < 0.1, "policy sums to {sum}%");
    let wdl = &r["wdl"];
    let total = wdl["win"].as_f64().unwrap()
        + wdl["draw"].as_f64().unwrap()
        + wdl["loss"].as_f64().unwrap();
    assert!((total - 1.0).abs() < 1e-3, "{wdl}");
    let v = r["value"].as_f64().unwrap();
    let from_wdl = wdl["win"].as_f64().unwrap() - wdl["loss"].as_f64().unwrap();
    assert!((v - from_wdl).abs() < 0.05, "value {v}, W−L {from_wdl}");
    let visits: u64 = r["mcts"]["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["visits"].as_u64().unwrap())
        .sum();
    assert!(visits > 0 && visits <= 64, "{visits}");
    assert_eq!(r["alphabeta"]["depth"], 2);
    assert!(!r["alphabeta"]["pv"].as_array().unwrap().is_empty());

    let r = s.post_json("/api/analyse", &json!({"moves": ["b1-b3"], "sims": 16}));
    assert_eq!(r["evaluator"], "heuristic");
    assert!(r["wdl"].is_null());
    assert_eq!(r["to_move"], "white");

    for (body, status, needle) in [
        (json!({"model": "/etc/passwd"}), 403, "outside"),
        (json!({"ab_eval": "/etc/passwd"}), 403, "outside"),
        (
            json!({"ab_eval": model.display().to_string()}),
            400,
            "not a learned evaluation",
        ),
        (json!({"model": model.display().to_string()}), 400, "6x6"),
        (json!({"sims": 0}), 400, "sims"),
        (json!({"ab_depth": 99}), 400, "ab_depth"),
        (
            json!({"simulations": 16}),
            400,
            "unknown field `simulations`",
        ),
    ] {
        let (st, text) = s.post("/api/analyse", &body.to_string());
        assert_eq!(st, status, "{body}: {text}");
        assert!(error_of(&text).contains(needle), "{body}: {text}");
    }
}

/// A learned evaluation in a served run is listed with its spec and values alpha-beta's
/// leaves in the analysis.
#[test]
fn a_served_learned_evaluation_is_listed_and_analyses() {
    let nnue = tiny().join("models/nnue-0009.safetensors");
    let scratch = temp_dir();
    let o = common::loazero(&[
        "train-eval",
        "--dir",
        scratch.path().to_str().unwrap(),
        "--out",
        nnue.to_str().unwrap(),
        "--max-positions",
        "0",
        "--games",
        "12",
        "--depth",
        "1",
        "--passes",
        "1",
        "--threads",
        "1",
    ]);
    assert!(o.status.success(), "{}", common::text(&o));
    let s = Server::start(&[&tiny()]);
    let runs = s.get_json("/api/runs");
    let learned = runs["runs"][0]["learned"].as_array().unwrap().clone();
    let listed = learned
        .iter()
        .find(|l| l["name"] == "nnue-0009")
        .unwrap_or_else(|| panic!("{runs}"));
    assert_eq!(listed["spec"], format!("alphabeta:eval={}", nnue.display()));
    let r = s.post_json(
        "/api/analyse",
        &json!({"variant": "standard", "moves": [], "sims": 8, "ab_depth": 2,
                "ab_eval": nnue.display().to_string()}),
    );
    assert_eq!(r["alphabeta"]["eval"], "nnue-0009", "{r}");
    assert_eq!(r["alphabeta"]["depth"], 2);
    // By name: the served run's name and the model's.
    let r = s.post_json(
        "/api/analyse",
        &json!({"variant": "standard", "moves": [], "sims": 8, "ab_depth": 1,
                "ab_eval": "tiny/nnue-0009"}),
    );
    assert_eq!(r["alphabeta"]["eval"], "nnue-0009", "{r}");
    let r = s.post_json(
        "/api/play",
        &json!({"variant": "standard", "moves": [], "player": "alphabeta:depth=1,eval=tiny/nnue-0009"}),
    );
    assert_eq!(r["info"]["eval"], "nnue-0009", "{r}");
    let r = s.post_json(
        "/api/analyse",
        &json!({"variant": "standard", "moves": [], "sims": 8, "ab_depth": 1}),
    );
    assert_eq!(r["alphabeta"]["eval"], "hand-written", "{r}");
}

#[test]
fn run_games_metrics_and_records() {
    let s = Server::start(&[&tiny()]);
    let runs = s.get_json("/api/runs");
    let run = &runs["runs"][0];
    assert_eq!(run["name"], "tiny");
    assert_eq!(run["variant"], "6x6");
    // Self-play played the gate's best; "best" is what the ratings say.
    assert_eq!(run["current"], "gen-0002");
    assert_eq!(run["current_label"], "best by gate");
    assert_eq!(run["models"].as_array().unwrap().len(), 3);
    // Play's levels: the rated players with their Elo, weakest first, each a spec that
    // plays (a model at the rating's simulations).
    let levels = run["levels"].as_array().unwrap();
    let elos: Vec<f64> = levels.iter().map(|l| l["elo"].as_f64().unwrap()).collect();
    assert!(levels.len() >= 4, "{levels:?}");
    assert!(elos.windows(2).all(|w| w[0] <= w[1]), "{elos:?}");
    assert!(
        levels
            .iter()
            .any(|l| l["name"] == "random" && l["elo"] == 0.0),
        "{levels:?}"
    );
    let model_level = levels
        .iter()
        .find(|l| l["name"].as_str().unwrap().starts_with("gen-"))
        .unwrap_or_else(|| panic!("no model among {levels:?}"));
    assert!(
        model_level["spec"].as_str().unwrap().ends_with(",sims=8"),
        "{model_level}"
    );
    let r = s.post_json(
        "/api/play",
        &json!({"variant": "6x6", "moves": [], "player": model_level["spec"]}),
    );
    assert!(r["move"]["text"].is_string(), "{r}");

    let m = s.get_json("/api/runs/tiny/metrics");
    let elo = m["elo"].as_array().unwrap();
    assert_eq!(elo.len(), 3, "{m}");
    let top = elo
        .iter()
        .max_by(|a, b| {
            a["elo"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["elo"].as_f64().unwrap())
        })
        .unwrap();
    assert_eq!(run["best"], top["name"], "{m}");
    assert_eq!(m["best"]["name"], top["name"]);
    assert_eq!(
        m["current"],
        json!({"name": "gen-0002", "label": "best by gate"})
    );
    assert_eq!(m["gate"], true);
    // The run stopped by itself after its 2 generations (`--generations 2`).
    assert_eq!(
        (
            &m["stop"]["reason"],
            &m["stop"]["finished"],
            &m["stop"]["generation"]
        ),
        (&json!("generations"), &json!(true), &json!(2)),
        "{m}"
    );
    assert!(elo
        .iter()
        .all(|p| p["stderr"].is_number() && p["elapsed_s"].is_number()));
    let anchors: Vec<&str> = m["anchors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert!(anchors.contains(&"random") && anchors.contains(&"alphabeta:depth=1"));
    assert_eq!(m["generations"].as_array().unwrap().len(), 2);
    assert!(!m["train"].as_array().unwrap().is_empty());

    // Every game the run wrote (self-play, gate, rating) reads, replays to the result
    // its listing names, and round-trips through SGF and the loazero record.
    let all = s.get_json("/api/runs/tiny/games?kind=all&limit=200");
    let games = all["games"].as_array().unwrap();
    assert_eq!(all["total"].as_u64().unwrap() as usize, games.len());
    for kind in ["selfplay", "gate", "rating"] {
        assert!(
            games.iter().any(|g| g["kind"] == kind),
            "no {kind} game: {all}"
        );
    }
    for g in games {
        let path = g["path"].as_str().unwrap();
        let r = s.get_json(&format!("/api/runs/tiny/game?path={path}"));
        assert_eq!(r["variant"], "6x6", "{path}");
        if g["kind"] != "selfplay" && g["detail"] != "adjudicated" {
            assert_eq!(r["result"]["outcome"], g["result"], "{path}: {r}");
        }
        for format in ["sgf", "record"] {
            let e = s.post_json(
                "/api/export",
                &json!({"variant": r["variant"], "rules": r["rules"], "start": r["start"],
                        "moves": r["moves"], "resigned": r["resigned"], "format": format}),
            );
            let back = s.post_json("/api/import", &json!({"text": e["text"]}));
            let (st, typo) = s.post("/api/import", &json!({"txt": e["text"]}).to_string());
            assert_eq!(st, 400, "{typo}");
            assert!(error_of(&typo).contains("txt"), "{typo}");
            assert_eq!(back["moves"], r["moves"], "{path} via {format}");
            assert_eq!(back["rules"], r["rules"], "{path} via {format}");
            assert_eq!(back["result"], r["result"], "{path} via {format}");
        }
    }
    let gate = s.get_json("/api/runs/tiny/games?kind=gate");
    assert!(gate["games"]
        .as_array()
        .unwrap()
        .iter()
        .all(|g| g["kind"] == "gate"));

    for (path, status, needle) in [
        ("/api/runs/other/metrics", 404, "other"),
        ("/api/runs/tiny/game?path=../../../../etc/passwd", 403, ".."),
        (
            "/api/runs/tiny/game?path=%2e%2e/%2e%2e/etc/passwd",
            403,
            "..",
        ),
        ("/api/runs/tiny/game?path=/etc/passwd", 403, "relative"),
        ("/api/runs/tiny/game?path=config.toml", 403, "records"),
        ("/api/runs/tiny/game?path=games/none.txt", 404, "none.txt"),
        ("/api/runs/tiny/game", 400, "path"),
        ("/api/runs/tiny/games?kind=weird", 400, "weird"),
        ("/api/runs/tiny/games?limit=-1", 400, "limit"),
    ] {
        let (st, text) = s.get(path);
        assert_eq!(st, status, "{path}: {text}");
        assert!(error_of(&text).contains(needle), "{path}: {text}");
    }
}

/// Without `--dir`, `serve` shows the small model that ships with loazero (`data/shipped`,
/// rated, with its learned alpha-beta; from a working directory without it, the binary's
/// own copy: the test's is such a directory), until `make run` has promoted a model in
/// `runs/default`, which then replaces it.
#[test]
fn without_a_dir_the_shipped_model_is_served_until_a_run_has_one() {
    let cwd = temp_dir();
    let s = Server::start_in(cwd.path());
    let runs = s.get_json("/api/runs");
    let run = &runs["runs"][0];
    assert_eq!(run["name"], "shipped", "{runs}");
    assert!(!run["models"].as_array().unwrap().is_empty(), "{runs}");
    assert!(!run["learned"].as_array().unwrap().is_empty(), "{runs}");
    let levels = run["levels"].as_array().unwrap();
    assert!(levels.len() >= 5, "{levels:?}");
    // The shipped model plays, by name.
    let r = s.post_json(
        "/api/play",
        &json!({"variant": "standard", "moves": [], "player": "model:path=shipped/gen-0099,sims=8"}),
    );
    assert!(r["move"]["text"].is_string(), "{r}");
    drop(s);

    let default = cwd.path().join("runs/default");
    std::fs::create_dir_all(default.join("models")).unwrap();
    let shipped = common::repo_path("data/shipped");
    std::fs::copy(
        shipped.join("models/gen-0099.safetensors"),
        default.join("models/gen-0001.safetensors"),
    )
    .unwrap();
    let s = Server::start_in(cwd.path());
    let runs = s.get_json("/api/runs");
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(runs["runs"][0]["name"], "default", "{runs}");
}

/// `serve RUN_DIR` serves the folder as `serve --dir RUN_DIR` does (every other command
/// that takes a run folder reads it that way too), with a note of the one spelling.
#[test]
fn a_run_folder_named_without_dir_is_served() {
    let tmp = temp_dir();
    let log = tmp.path().join("stderr.txt");
    let s = Server::start_with(
        &[tiny().as_os_str()],
        &[],
        std::fs::File::create(&log).unwrap().into(),
    );
    let runs = s.get_json("/api/runs");
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(runs["runs"][0]["name"], "tiny", "{runs}");
    drop(s);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(
        stderr.contains("`serve RUN_DIR` is an older spelling"),
        "{stderr}"
    );
}

#[test]
fn static_app_is_served_from_the_binary() {
    let s = Server::start(&[]);
    let (status, html) = s.get("/");
    assert_eq!(status, 200);
    assert!(html.contains("<script src=\"/app.js\""));
    for asset in ["/app.js", "/style.css"] {
        let (status, body) = s.get(asset);
        assert_eq!(status, 200, "{asset}");
        assert!(body.len() > 1000, "{asset}");
    }
    // No request leaves the machine: no absolute URL in any asset.
    for asset in ["/", "/app.js", "/style.css"] {
        let (_, body) = s.get(asset);
        for bad in ["http://", "https://", "//cdn", "@import"] {
            let hits: Vec<&str> = body
                .lines()
                .filter(|l| l.contains(bad) && !l.contains("http://www.w3.org/2000/svg"))
                .collect();
            assert!(hits.is_empty(), "{asset} mentions {bad}: {hits:?}");
        }
    }
}

/// A random request: mostly plausible API calls with one thing wrong, some garbage.
fn random_request(rng: &mut SmallRng, model: &str) -> Vec<u8> {
    let moves_pool = [
        "b1-b3", "a2-c2", "b1-b9", "pass", "@e5", "~e5", "", "zz", "a1xa2", "c8-c6", "h4-f2",
    ];
    let specs = [
        "alphabeta:depth=1",
        "random",
        "alphabeta:depth=70",
        "alphabeta:weights=../../etc/passwd",
        "mcts:sims=4",
        "model:path=/etc/passwd",
        "model:path=../../../etc/shadow",
        "",
        "alphabeta:tt=100000",
        "mcts:evaluator=nope",
        "ubfm:nodes=4",
        "ubfm:path=/etc/passwd",
        "ubfm:evaluator=heuristic,nodes=999999",
        model,
    ];
    let variants = [
        "standard",
        "6x6",
        "alveole",
        "parachute",
        "gemma",
        "ambiloa",
        "scrambled-eggs",
        "go",
        "",
    ];
    let pick = |rng: &mut SmallRng, xs: &[&str]| xs[rng.random_range(0..xs.len())].to_string();
    let mut moves: Vec<Value> = (0..rng.random_range(0..4))
        .map(|_| json!(pick(rng, &moves_pool)))
        .collect();
    if rng.random_bool(0.1) {
        moves.push(json!(12));
    }
    let mut body = json!({"variant": pick(rng, &variants), "moves": moves});
    let (method, path): (String, String) = match rng.random_range(0..12) {
        0 => ("POST".into(), "/api/position".to_string()),
        1 => {
            body["player"] = json!(pick(rng, &specs));
            body["ms"] = json!([1, 5, 0, 40_000, -3][rng.random_range(0..5)]);
            ("POST".into(), "/api/play".to_string())
        }
        2 => {
            body["sims"] = json!([1, 4, 0, 999_999][rng.random_range(0..4)]);
            body["ab_ms"] =
                [json!(1), json!(5), json!(0), json!(1e12)][rng.random_range(0..4)].clone();
            if rng.random_bool(0.3) {
                body["model"] = json!(pick(rng, &[model, "/etc/passwd", "../x"]));
            }
            ("POST".into(), "/api/analyse".to_string())
        }
        3 => {
            body["format"] = json!(pick(rng, &["sgf", "record", "pdf"]));
            ("POST".into(), "/api/export".to_string())
        }
        4 => {
            body = json!({"text": pick(rng, &["(;GM[9];B[b1-b3])", "(;GM[1])", "1. b1-b3 a2-c2", "((((", "1. zz"])});
            ("POST".into(), "/api/import".to_string())
        }
        5 => {
            let p = pick(
                rng,
                &[
                    "../../../etc/passwd",
                    "%2e%2e%2fconfig.toml",
                    "/etc/passwd",
                    "games/x.txt",
                    "matches/../../x",
                    "state.json",
                    "%00",
                    "games",
                ],
            );
            ("GET".into(), format!("/api/runs/tiny/game?path={p}"))
        }
        6 => {
            let r = pick(rng, &["tiny", "..", "%2e%2e", "nope", "tiny%00"]);
            let tail = pick(
                rng,
                &[
                    "metrics",
                    "games?kind=gate",
                    "games?offset=99999",
                    "games?limit=abc",
                    "x",
                ],
            );
            ("GET".into(), format!("/api/runs/{r}/{tail}"))
        }
        7 => (
            "GET".into(),
            pick(
                rng,
                &[
                    "/",
                    "/app.js",
                    "/api/variants",
                    "/api/runs",
                    "/../../etc/passwd",
                    "/api",
                ],
            ),
        ),
        8 => (
            pick(rng, &["PUT", "DELETE", "PATCH", "GET"]),
            "/api/play".to_string(),
        ),
        _ => (
            "POST".into(),
            pick(
                rng,
                &["/api/position", "/api/play", "/api/analyse", "/api/import"],
            ),
        ),
    };
    let mut text = body.to_string();
    match rng.random_range(0..10) {
        0 => text.truncate(rng.random_range(0..text.len().max(1))),
        1 => {
            text = (0..rng.random_range(0..200))
                .map(|_| rng.random_range(32u8..127) as char)
                .collect()
        }
        2 => text = "[".repeat(rng.random_range(1..5000)),
        3 => {
            text = format!(
                "{{\"moves\": [\"{}\"]}}",
                "a".repeat(rng.random_range(1..3) << 20)
            )
        }
        _ => {}
    }
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        text.len()
    )
    .into_bytes();
    req.extend_from_slice(text.as_bytes());
    if rng.random_bool(0.02) {
        // Not HTTP at all.
        req = (0..rng.random_range(1..300))
            .map(|_| rng.random())
            .collect();
        req.extend_from_slice(b"\r\n\r\n");
    }
    req
}

/// `LOAZERO_FUZZ_REQUESTS` random requests (default 3000): no 5xx, no crash, and the
/// server answers a plain request after every 500 of them and at the end. Prints the
/// tally of status codes.
#[test]
fn random_and_malformed_requests_get_4xx_and_the_server_keeps_answering() {
    let mut s = Server::start(&[&tiny()]);
    let n: usize = std::env::var("LOAZERO_FUZZ_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let model = format!(
        "model:path={}",
        tiny().join("models/gen-0001.safetensors").display()
    );
    let mut rng = SmallRng::seed_from_u64(14);
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    let started = std::time::Instant::now();
    for i in 0..n {
        let req = random_request(&mut rng, &model);
        let key = match s.raw(&req) {
            Some((status, body)) => {
                assert!(
                    status < 500,
                    "request {i} got {status}: {body}\nrequest: {}",
                    String::from_utf8_lossy(&req[..req.len().min(600)])
                );
                // Every error with a body is the API's JSON error (hyper's own 400 for
                // bytes that are not HTTP has no body).
                if status >= 400 && !body.is_empty() {
                    error_of(&body);
                }
                status.to_string()
            }
            None => "closed".to_string(),
        };
        *tally.entry(key).or_default() += 1;
        if i % 500 == 499 {
            assert!(s.is_running(), "the server died after request {i}");
            assert_eq!(s.get("/api/variants").0, 200);
        }
    }
    assert!(s.is_running());
    assert_eq!(s.get("/api/variants").0, 200);
    println!(
        "{n} requests in {:.1} s: status counts {tally:?}",
        started.elapsed().as_secs_f64()
    );
    assert!(tally.get("200").copied().unwrap_or(0) > n / 20, "{tally:?}");
    assert!(tally.keys().any(|k| k.starts_with('4')), "{tally:?}");
}

/// Starts a server over the tiny run whose standard error goes to `log`.
fn server_logging_to(log: &Path) -> Server {
    Server::start_with_stderr(&[&tiny()], std::fs::File::create(log).unwrap().into())
}

/// Starts a 30-second search on `s` in the background (its connection is cut when the
/// server stops).
fn long_request(s: &Server) -> std::thread::JoinHandle<Option<(u16, String)>> {
    let body = json!({"moves": ["b1-b3"], "player": "alphabeta", "ms": 30000}).to_string();
    let req = format!(
        "POST /api/play HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        s.addr,
        body.len()
    );
    let addr = s.addr.clone();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect(&addr).unwrap();
        c.write_all(req.as_bytes()).unwrap();
        let mut buf = Vec::new();
        let _ = c.read_to_end(&mut buf);
        let text = String::from_utf8_lossy(&buf).into_owned();
        let status = text.split_whitespace().nth(1)?.parse().ok()?;
        Some((status, text))
    })
}

/// SIGTERM or Ctrl-C stop the server: at once when no request is in flight (exit 0), after
/// at most the grace period when one is (exit 130), at once on a second signal (130).
#[test]
fn signals_stop_the_server_and_a_second_one_stops_it_at_once() {
    use std::time::{Duration, Instant};
    let tmp = temp_dir();
    let log = tmp.path().join("serve.log");

    // Idle: a clean stop.
    let mut s = server_logging_to(&log);
    assert_eq!(s.get("/api/variants").0, 200);
    s.signal(libc::SIGTERM);
    let status = s.wait_within(Duration::from_secs(5)).expect("stopped");
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(0), "{said}");
    assert!(
        said.contains("stopped; every request was answered"),
        "{said}"
    );

    // A search in flight: the grace period ends it.
    let mut s = server_logging_to(&log);
    let search = long_request(&s);
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    s.signal(libc::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    assert!(s.is_running(), "stopped before the grace period");
    let status = s.wait_within(Duration::from_secs(10)).expect("stopped");
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
    assert!(said.contains("requests still in flight"), "{said}");
    let _ = search.join();

    // A search in flight and a second Ctrl-C: at once.
    let mut s = server_logging_to(&log);
    let search = long_request(&s);
    std::thread::sleep(Duration::from_millis(300));
    s.signal(libc::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    s.signal(libc::SIGINT);
    let status = s
        .wait_within(Duration::from_secs(2))
        .expect("stopped at once");
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(
        said.contains("stopped at once"),
        "{said} after {:?}",
        t.elapsed()
    );
    let _ = search.join();
}
