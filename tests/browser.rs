//! The web app of `loazero serve` in a real browser: headless Chromium driven over
//! WebDriver (chromedriver) by fantoccini, over a tiny run made in the test.
//!
//! One scenario after another in one browser session: a whole game by clicking against
//! `alphabeta:depth=1`, the drawn board checked against the API's position after every
//! ply; a parachute drop, an alveole move and an ambiloa move by clicking; an SGF loaded
//! in Replay, stepped with the arrow keys, and a gate game of the run opened in Analyse;
//! Analyse's policy overlay summing to ~100%, the position editor, pasted position text and
//! a gemma removal by clicking; the dashboard's Elo chart with the run's points. Screenshots of each view go to
//! `target/tmp/screenshots/` (`LOAZERO_SCREENSHOTS=DIR` to choose).
//!
//! Runs whenever `chromium` and `chromedriver` are found (`LOAZERO_CHROMIUM`,
//! `LOAZERO_CHROMEDRIVER`, else `PATH`); without them it is skipped, except under `CI`,
//! where a missing browser is a failure.

mod common;
use common::{temp_dir, tiny_run, Server};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `name` on `PATH`, if there.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for n in names {
            let p = dir.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The browser and its driver, if both are installed.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = std::env::var_os("LOAZERO_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| on_path(&["chromium", "chromium-browser", "google-chrome"]))?;
    let driver = std::env::var_os("LOAZERO_CHROMEDRIVER")
        .map(PathBuf::from)
        .or_else(|| on_path(&["chromedriver"]))?;
    Some((chromium, driver))
}

/// A chromedriver process on a free port, killed when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start(path: &Path) -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "chromedriver did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where screenshots go.
fn screenshot_dir() -> PathBuf {
    let dir = std::env::var_os("LOAZERO_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn connect(driver: &Driver, chromium: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium.display().to_string(),
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1300,950"],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a WebDriver session")
}

/// Evaluates `script` (a function body returning a value) until it returns something
/// truthy; panics naming `what` after `secs` seconds.
async fn wait_for(c: &Client, script: &str, what: &str, secs: u64) -> Value {
    let started = Instant::now();
    loop {
        let v = c.execute(script, vec![]).await.expect("execute script");
        let truthy = match &v {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::String(s) => !s.is_empty(),
            Value::Number(n) => n.as_f64() != Some(0.0),
            _ => true,
        };
        if truthy {
            return v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The pieces drawn on board `svg_id`: cell → colour (with the ambiloa player).
async fn drawn_pieces(c: &Client, svg_id: &str) -> BTreeMap<String, String> {
    let v = c
        .execute(
            &format!(
                "const out = {{}}; for (const p of document.querySelectorAll('#{svg_id} circle[data-piece]')) \
                 out[p.dataset.cell] = p.dataset.piece + (p.dataset.player ? '/' + p.dataset.player : ''); \
                 return out;"
            ),
            vec![],
        )
        .await
        .unwrap();
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

/// The pieces of a position JSON of the API, as [`drawn_pieces`] writes them.
fn api_pieces(pos: &Value) -> BTreeMap<String, String> {
    pos["pieces"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let mut s = v["color"].as_str().unwrap().to_string();
            if let Some(p) = v["player"].as_str() {
                s = format!("{s}/{p}");
            }
            (k.clone(), s)
        })
        .collect()
}

/// Clicks the element `at` (which must exist).
async fn click(c: &Client, at: Locator<'_>) {
    c.find(at).await.unwrap().click().await.unwrap();
}

/// Clicks the cell `cell` of the board `svg_id`. The app redraws a board whenever an
/// answer arrives (an analysis, a reply), replacing its cells, so a cell found just before
/// a redraw can be stale by the time it is clicked; such a click did nothing, and the cell
/// is found again and clicked (up to 5 s).
async fn click_cell(c: &Client, svg_id: &str, cell: &str) {
    let css = format!("#{svg_id} g.cell[data-cell='{cell}']");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found = c
            .find(Locator::Css(&css))
            .await
            .unwrap_or_else(|e| panic!("no cell {cell} on #{svg_id}: {e}"));
        match found.click().await {
            Ok(_) => return,
            Err(e) if e.is_stale_element_reference() && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("click on {cell}: {e}"),
        }
    }
}

async fn attr(c: &Client, css: &str, name: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .attr(name)
        .await
        .unwrap()
        .unwrap_or_default()
}

/// Loads the app afresh (not just a new hash) on `view` and waits until it is ready.
async fn open_view(c: &Client, s: &Server, view: &str) {
    c.goto("about:blank").await.unwrap();
    c.goto(&format!("{}#{view}", s.url)).await.unwrap();
    wait_for(
        c,
        "return document.body.dataset.ready === '1';",
        "the app",
        30,
    )
    .await;
}

async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    std::fs::write(screenshot_dir().join(name), png).unwrap();
}

/// The moves the Play board shows.
async fn play_moves(c: &Client) -> Vec<String> {
    attr(c, "#play-board", "data-moves")
        .await
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Plays one move of the human side by clicking (from, to; or the one cell of a drop or
/// removal), and waits until the app has it.
async fn click_move(c: &Client, svg_id: &str, mv: &Value) {
    if let Some(from) = mv["from"].as_str() {
        click_cell(c, svg_id, from).await;
        // The legal targets light up.
        let targets = c
            .find_all(Locator::Css(&format!("#{svg_id} g.cell.target")))
            .await
            .unwrap();
        assert!(!targets.is_empty(), "no target lit after clicking {from}");
    }
    click_cell(c, svg_id, mv["to"].as_str().unwrap()).await;
}

/// Chooses the option `value` of the `<select>` at `select`.
async fn select_option(c: &Client, select: &str, value: &str) {
    c.find(Locator::Css(select))
        .await
        .unwrap()
        .select_by_value(value)
        .await
        .unwrap();
}

#[test]
fn web_app_in_headless_chromium() {
    let Some((chromium, driver_path)) = browser() else {
        common::skip_or_fail(
            "the browser tests need chromium and chromedriver, not found \
             (apt-get install -y chromium chromium-driver)",
        );
        return;
    };
    let dir = temp_dir();
    let run = dir.path().join("tiny");
    tiny_run(&run, 2);
    let server = std::sync::Arc::new(Server::start(&[&run]));
    let driver = Driver::start(&driver_path);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = connect(&driver, &chromium).await;
        let (client, s) = (c.clone(), server.clone());
        let outcome = tokio::spawn(async move { scenarios(&client, &s).await }).await;
        // Close the session (and so the browser) whether the scenarios passed or not.
        let _ = c.close().await;
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    });
}

async fn scenarios(c: &Client, s: &Server) {
    // First page load.
    let started = Instant::now();
    c.goto(&format!("{}#play", s.url)).await.unwrap();
    wait_for(
        c,
        "return document.body.dataset.ready === '1';",
        "the app",
        30,
    )
    .await;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let nav_ms = c
        .execute(
            "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;",
            vec![],
        )
        .await
        .unwrap();
    let external = c
        .execute(
            "return performance.getEntriesByType('resource').map(r => r.name).filter(n => !n.startsWith(location.origin));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(external, json!([]), "requests that left the server");
    println!(
        "first page load: {load_ms:.0} ms to the app ready (WebDriver), navigation {nav_ms} ms"
    );

    play_a_whole_game(c, s).await;
    special_variants(c, s).await;
    replay(c, s).await;
    analyse(c, s).await;
    dashboard(c, s).await;
}

/// Standard, the human (Black) against `alphabeta:depth=1`; the human's moves are
/// alpha-beta depth 1's too (asked of the API), clicked on the board.
async fn play_a_whole_game(c: &Client, s: &Server) {
    select_option(c, "#play-variant", "standard").await;
    wait_for(
        c,
        "return document.querySelector('#play-board').dataset.variant === 'standard';",
        "a standard board",
        10,
    )
    .await;
    assert_eq!(
        c.execute("return document.querySelector('#play-spec').value;", vec![])
            .await
            .unwrap(),
        json!("alphabeta:depth=1")
    );
    let mut reply_ms = Vec::new();
    for turn in 0..300 {
        wait_for(
            c,
            "return document.querySelector('#play-board').dataset.thinking === '0';",
            "the opponent's move",
            30,
        )
        .await;
        let moves = play_moves(c).await;
        let pos = s.post_json("/api/position", &json!({"moves": moves}));
        assert_eq!(
            drawn_pieces(c, "play-board").await,
            api_pieces(&pos),
            "board after {} plies ({moves:?})",
            moves.len()
        );
        if !pos["result"].is_null() {
            let shown = c
                .find(Locator::Id("play-result"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let rule = pos["result"]["rule"].as_str().unwrap();
            assert!(shown.contains(rule), "result shown: {shown:?}, rule {rule}");
            println!(
                "game over after {} plies: {shown}; click-to-reply (alphabeta:depth=1): {}",
                moves.len(),
                summary(&reply_ms)
            );
            if turn > 0 {
                screenshot(c, "play.png").await;
            }
            return;
        }
        assert_eq!(pos["to_move"], "black", "the app waits for the opponent");
        let mine = s.post_json(
            "/api/play",
            &json!({"moves": moves, "player": "alphabeta:depth=1", "seed": turn}),
        );
        click_move(c, "play-board", &mine["move"]).await;
        // The human's move and, unless the game ended, the reply.
        let want = moves.len() + 1;
        wait_for(
            c,
            &format!(
                "const b = document.querySelector('#play-board'); \
                 const n = b.dataset.moves.split(' ').filter(x => x).length; \
                 return b.dataset.thinking === '0' && (n > {want} || (n === {want} && !document.querySelector('#play-result').hidden));"
            ),
            "the move and the reply",
            30,
        )
        .await;
        let ms = attr(c, "#play-board", "data-reply-ms").await;
        if let Ok(ms) = ms.parse::<f64>() {
            reply_ms.push(ms);
            c.execute(
                "document.querySelector('#play-board').dataset.replyMs = '';",
                vec![],
            )
            .await
            .unwrap();
        }
        if turn == 6 {
            screenshot(c, "play-midgame.png").await;
        }
    }
    panic!("the game did not end in 600 plies");
}

fn summary(ms: &[f64]) -> String {
    if ms.is_empty() {
        return "no replies".into();
    }
    let mut v = ms.to_vec();
    v.sort_by(f64::total_cmp);
    format!(
        "{} replies, median {:.0} ms, 90th percentile {:.0} ms, max {:.0} ms",
        v.len(),
        v[v.len() / 2],
        v[v.len() * 9 / 10],
        v[v.len() - 1]
    )
}

/// Hot-seat moves by clicking in parachute (a move, then a drop), alveole (hexagons) and
/// ambiloa (four players).
async fn special_variants(c: &Client, s: &Server) {
    c.find(Locator::Css("#play-side"))
        .await
        .unwrap()
        .select_by_value("both")
        .await
        .unwrap();
    for (variant, plies) in [("parachute", 2usize), ("alveole", 2), ("ambiloa", 4)] {
        select_option(c, "#play-variant", variant).await;
        wait_for(
            c,
            &format!(
                "const b = document.querySelector('#play-board'); return b.dataset.variant === '{variant}' && b.dataset.moves === '';"
            ),
            variant,
            10,
        )
        .await;
        if variant == "alveole" {
            let hexes = c
                .find_all(Locator::Css("#play-board g.cell polygon"))
                .await
                .unwrap();
            assert_eq!(hexes.len(), 61, "the alveole board is 61 hexagons");
        }
        let mut moves: Vec<String> = Vec::new();
        for _ in 0..plies {
            let pos = s.post_json(
                "/api/position",
                &json!({"variant": variant, "moves": moves}),
            );
            let legal = pos["legal"].as_array().unwrap();
            // In parachute's second ply, the drop of the compound turn.
            let mv = legal[legal.len() / 2].clone();
            click_move(c, "play-board", &mv).await;
            moves.push(mv["text"].as_str().unwrap().to_string());
            let want = moves.join(" ");
            wait_for(
                c,
                &format!(
                    "return document.querySelector('#play-board').dataset.moves === '{want}';"
                ),
                &format!("{variant} move {want}"),
                10,
            )
            .await;
            let pos = s.post_json(
                "/api/position",
                &json!({"variant": variant, "moves": moves}),
            );
            assert_eq!(
                drawn_pieces(c, "play-board").await,
                api_pieces(&pos),
                "{variant} after {moves:?}"
            );
        }
        if variant == "parachute" {
            assert!(moves[1].starts_with('@'), "a drop: {moves:?}");
        }
        screenshot(c, &format!("play-{variant}.png")).await;
    }
    c.find(Locator::Css("#play-side"))
        .await
        .unwrap()
        .select_by_value("black")
        .await
        .unwrap();
}

/// Replay: an SGF pasted and loaded, stepped with the arrow keys; a gate game of the run.
async fn replay(c: &Client, s: &Server) {
    // A short game made by the API, as SGF.
    let mut moves: Vec<String> = Vec::new();
    for i in 0..8 {
        let r = s.post_json(
            "/api/play",
            &json!({"moves": moves, "player": "alphabeta:depth=1", "seed": i}),
        );
        moves.push(r["move"]["text"].as_str().unwrap().to_string());
    }
    let sgf = s.post_json("/api/export", &json!({"moves": moves, "format": "sgf"}))["text"]
        .as_str()
        .unwrap()
        .to_string();
    open_view(c, s, "replay").await;
    wait_for(
        c,
        "return document.body.dataset.ready === '1';",
        "the app",
        30,
    )
    .await;
    let area = c.find(Locator::Id("rp-paste")).await.unwrap();
    area.send_keys(&sgf).await.unwrap();
    click(c, Locator::Id("rp-load")).await;
    wait_for(
        c,
        "return document.querySelector('#rp-ply').textContent === 'ply 8 / 8';",
        "the SGF game at its end",
        10,
    )
    .await;
    let pos = s.post_json("/api/position", &json!({"moves": moves}));
    assert_eq!(drawn_pieces(c, "replay-board").await, api_pieces(&pos));
    // Arrow keys step back (the board takes the focus).
    let board = c.find(Locator::Id("replay-board")).await.unwrap();
    board.click().await.unwrap();
    board.send_keys("\u{E012}\u{E012}").await.unwrap();
    wait_for(
        c,
        "return document.querySelector('#rp-ply').textContent === 'ply 6 / 8';",
        "two plies back with the left arrow",
        10,
    )
    .await;
    let pos = s.post_json("/api/position", &json!({"moves": moves[..6]}));
    assert_eq!(drawn_pieces(c, "replay-board").await, api_pieces(&pos));

    // A gate game of the run.
    c.find(Locator::Css("#rp-kind"))
        .await
        .unwrap()
        .select_by_value("gate")
        .await
        .unwrap();
    wait_for(
        c,
        "const r = document.querySelectorAll('#rp-games tr.game-row'); return r.length > 0 && [...r].every(x => x.dataset.kind === 'gate');",
        "the gate games",
        10,
    )
    .await;
    click(c, Locator::Css("#rp-games tr.game-row")).await;
    wait_for(
        c,
        "return document.querySelector('#rp-title').textContent.includes('gate');",
        "a gate game",
        10,
    )
    .await;
    let board_variant = attr(c, "#replay-board", "data-variant").await;
    assert_eq!(board_variant, "6x6");
    screenshot(c, "replay.png").await;
    // Its position opens in Analyse.
    let text = attr(c, "#replay-board", "data-text").await;
    click(c, Locator::Id("rp-analyse")).await;
    wait_for(
        c,
        &format!("return location.hash === '#analyse' && document.querySelector('#analyse-board').dataset.text === '{text}';"),
        "the replayed position in Analyse",
        10,
    )
    .await;
}

/// Analyse: the tiny run's best model on 6×6; the policy overlay sums to ~100%.
async fn analyse(c: &Client, s: &Server) {
    open_view(c, s, "analyse").await;
    wait_for(
        c,
        "return document.body.dataset.ready === '1';",
        "the app",
        30,
    )
    .await;
    let model = c
        .execute("return document.querySelector('#an-model').value;", vec![])
        .await
        .unwrap();
    // The run's best model by its ratings is chosen.
    let best = s.get_json("/api/runs")["runs"][0]["best"].clone();
    let best = best.as_str().expect("a rated model");
    assert!(
        model
            .as_str()
            .unwrap()
            .ends_with(&format!("{best}.safetensors")),
        "the best model {best} is chosen: {model}"
    );
    wait_for(
        c,
        "return document.querySelector('#analyse-board').dataset.analysed === '1';",
        "the analysis",
        60,
    )
    .await;
    let v = c
        .execute(
            "const a = [...document.querySelectorAll('#analyse-board .policy-arrow')]; \
             return [a.length, a.reduce((s, x) => s + parseFloat(x.dataset.percent), 0)];",
            vec![],
        )
        .await
        .unwrap();
    let (arrows, sum) = (v[0].as_u64().unwrap(), v[1].as_f64().unwrap());
    let pos = s.post_json("/api/position", &json!({"variant": "6x6"}));
    assert_eq!(arrows as usize, pos["legal"].as_array().unwrap().len());
    assert!(
        (sum - 100.0).abs() < 0.5,
        "the policy overlay sums to {sum}%"
    );
    // The value bar: the two sides' values, no probabilities (the network's draw share is
    // a training target's, not how often games are drawn).
    let bar = c
        .execute(
            "return [...document.querySelectorAll('#an-value .value-bar div')].map(d => d.textContent);",
            vec![],
        )
        .await
        .unwrap();
    let parts: Vec<String> = serde_json::from_value(bar).unwrap();
    assert_eq!(parts.len(), 2, "the value bar: {parts:?}");
    assert!(
        parts
            .iter()
            .all(|p| !p.contains('%') && !p.contains("draw")),
        "the value is not shown as probabilities: {parts:?}"
    );
    println!("policy overlay: {arrows} moves, {sum:.2}%");
    // The percentage labels: some drawn, no two boxes overlapping (as laid out on screen).
    let boxes = c
        .execute(
            "return [...document.querySelectorAll('#analyse-board .policy-label rect')].map(r => {                const b = r.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; });",
            vec![],
        )
        .await
        .unwrap();
    let boxes: Vec<[f64; 4]> = serde_json::from_value(boxes).unwrap();
    assert!(boxes.len() >= 3, "policy labels drawn: {}", boxes.len());
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let overlap = a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
            assert!(!overlap, "policy labels overlap: {a:?} and {b:?}");
        }
    }
    println!("policy labels: {} boxes, none overlapping", boxes.len());
    screenshot(c, "analyse.png").await;

    // The position editor: paint a black piece on c3, apply, and the board is that position.
    click(c, Locator::Id("an-edit")).await;
    click_cell(c, "analyse-board", "c3").await;
    wait_for(
        c,
        "return document.querySelector(\"#analyse-board circle[data-cell='c3']\")?.dataset.piece === 'black';",
        "a black piece painted on c3",
        10,
    )
    .await;
    click(c, Locator::Id("an-edit")).await;
    wait_for(
        c,
        "return document.querySelector('#analyse-board').dataset.analysed === '1';",
        "the analysis of the edited position",
        60,
    )
    .await;
    let text = c
        .execute("return document.querySelector('#an-text').value;", vec![])
        .await
        .unwrap();
    let text = text.as_str().unwrap().to_string();
    let edited = s.post_json("/api/position", &json!({"variant": "6x6", "start": text}));
    assert_eq!(edited["pieces"]["c3"]["color"], "black", "{text}");
    assert_eq!(drawn_pieces(c, "analyse-board").await, api_pieces(&edited));

    // Pasted position text.
    let start = s.post_json("/api/position", &json!({"variant": "6x6"}))["text"]
        .as_str()
        .unwrap()
        .to_string();
    let input = c.find(Locator::Id("an-text")).await.unwrap();
    input.clear().await.unwrap();
    input.send_keys(&start).await.unwrap();
    click(c, Locator::Id("an-set")).await;
    wait_for(
        c,
        &format!("return document.querySelector('#analyse-board').dataset.text === '{start}';"),
        "the pasted position",
        10,
    )
    .await;
    let pos = s.post_json("/api/position", &json!({"variant": "6x6", "start": start}));
    assert_eq!(drawn_pieces(c, "analyse-board").await, api_pieces(&pos));

    // A gemma removal by clicking: a1 has no normal move (its neighbours vanished), so a
    // click on it removes it.
    let stuck = "5w2/7w/8/3b4/8/8/xx6/bx6 b";
    select_option(c, "#an-variant", "gemma").await;
    wait_for(
        c,
        "return document.querySelector('#analyse-board').dataset.variant === 'gemma';",
        "a gemma board",
        10,
    )
    .await;
    let input = c.find(Locator::Id("an-text")).await.unwrap();
    input.clear().await.unwrap();
    input.send_keys(stuck).await.unwrap();
    click(c, Locator::Id("an-set")).await;
    wait_for(
        c,
        &format!("return document.querySelector('#analyse-board').dataset.text === '{stuck}';"),
        "the gemma position",
        10,
    )
    .await;
    click_cell(c, "analyse-board", "a1").await;
    wait_for(
        c,
        "return document.querySelector(\"#analyse-board g.cell[data-cell='a1']\").classList.contains('vanished') \
         && document.querySelector('#analyse-board').dataset.ply === '1';",
        "a1 removed",
        10,
    )
    .await;
    let pos = s.post_json(
        "/api/position",
        &json!({"variant": "gemma", "start": stuck, "moves": ["~a1"]}),
    );
    assert_eq!(drawn_pieces(c, "analyse-board").await, api_pieces(&pos));
}

/// Dashboard: the Elo chart has a point per rated model, and the anchors.
async fn dashboard(c: &Client, s: &Server) {
    let m = s.get_json("/api/runs/tiny/metrics");
    let points = m["elo"].as_array().unwrap().len();
    assert_eq!(points, 3);
    open_view(c, s, "dashboard").await;
    wait_for(
        c,
        &format!(
            "return document.querySelectorAll('#db-elo circle.elo-point').length === {points};"
        ),
        "the Elo points",
        20,
    )
    .await;
    let anchors = c
        .find_all(Locator::Css("#db-elo g.anchor"))
        .await
        .unwrap()
        .len();
    assert_eq!(anchors, m["anchors"].as_array().unwrap().len());
    let bars = c
        .find_all(Locator::Css("#db-elo line.errbar"))
        .await
        .unwrap()
        .len();
    assert!(bars >= 2, "error bars: {bars}");
    // The tiny run stopped after its 2 generations; its best model is the one its ratings
    // put first, and the model its self-play played is the gate's.
    let phase = c
        .find(Locator::Id("db-phase"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let best = m["best"]["name"].as_str().unwrap();
    assert!(
        phase.starts_with("finished after generation 2 (all generations done)")
            && phase.contains(&format!("best by ratings {best}")),
        "{phase}"
    );
    if best != "gen-0002" {
        assert!(phase.contains("best by gate gen-0002"), "{phase}");
    }
    screenshot(c, "dashboard.png").await;
}

/// The screenshots of docs/serve.md and the README: `make screenshots` (`cargo test
/// --release --workspace --test browser -- --ignored docs_screenshots`: with `--workspace`
/// the features resolve as in `make test`, so after it nothing is compiled) serves
/// `runs/default` with this build's `loazero serve` (`LOAZERO_SCREENSHOT_RUNS=DIR:DIR…` to
/// serve others; a standard run with promoted models first, a gated run for
/// `replay-gate.png`), or uses a running server at
/// `LOAZERO_SERVE_URL=http://127.0.0.1:PORT/`, and writes play, analyse, replay,
/// replay-gate and dashboard PNGs to `LOAZERO_SCREENSHOTS` (default `docs/screenshots/`). A
/// screenshot it cannot make is named on stderr, and under `CI` is a failure.
#[test]
#[ignore = "needs a real run (runs/default, or LOAZERO_SCREENSHOT_RUNS / LOAZERO_SERVE_URL)"]
fn docs_screenshots() {
    let own_server;
    let url = match std::env::var("LOAZERO_SERVE_URL") {
        Ok(url) => url,
        Err(_) => {
            let runs = std::env::var("LOAZERO_SCREENSHOT_RUNS").unwrap_or_else(|_| {
                common::repo_path("runs/default")
                    .to_string_lossy()
                    .into_owned()
            });
            let dirs: Vec<PathBuf> = std::env::split_paths(&runs).collect();
            for d in &dirs {
                assert!(
                    d.join("state.json").is_file(),
                    "{}: not a run directory (make one with `make run`, or set \
                     LOAZERO_SCREENSHOT_RUNS or LOAZERO_SERVE_URL)",
                    d.display()
                );
            }
            let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
            own_server = Server::start(&dirs);
            own_server.url.clone()
        }
    };
    let url = url.trim_end_matches('/').to_string();
    if std::env::var_os("LOAZERO_SCREENSHOTS").is_none() {
        std::env::set_var("LOAZERO_SCREENSHOTS", common::repo_path("docs/screenshots"));
    }
    let (chromium, driver_path) = browser().expect("chromium and chromedriver");
    let driver = Driver::start(&driver_path);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = connect(&driver, &chromium).await;
        c.goto(&format!("{url}/#play")).await.unwrap();
        wait_for(&c, "return document.body.dataset.ready === '1';", "the app", 30).await;
        // Against the run's best model, 300 ms a move.
        let best = c
            .execute(
                "const o = [...document.querySelectorAll('#play-opponent option')].find(o => o.textContent.includes('best model')); \
                 return o ? o.value : '';",
                vec![],
            )
            .await
            .unwrap();
        let best = best.as_str().unwrap().to_string();
        assert!(!best.is_empty(), "no promoted model in the served run");
        c.find(Locator::Id("play-opponent"))
            .await
            .unwrap()
            .select_by_value(&best)
            .await
            .unwrap();
        c.execute("document.querySelector('#play-ms').value = '300';", vec![])
            .await
            .unwrap();
        for turn in 0..5 {
            wait_for(
                &c,
                "return document.querySelector('#play-board').dataset.thinking === '0';",
                "the model's move",
                60,
            )
            .await;
            let moves = play_moves(&c).await;
            let body = json!({"moves": moves, "player": "alphabeta:depth=2", "seed": turn})
                .to_string();
            let mine = http_post(&url, "/api/play", &body);
            click_move(&c, "play-board", &mine["move"]).await;
            let want = moves.len() + 2;
            wait_for(
                &c,
                &format!(
                    "const b = document.querySelector('#play-board'); return b.dataset.thinking === '0' && b.dataset.moves.split(' ').length >= {want};"
                ),
                "the reply",
                60,
            )
            .await;
        }
        // Select a piece so that its targets show.
        let moves = play_moves(&c).await;
        let next = http_post(
            &url,
            "/api/play",
            &json!({"moves": moves, "player": "alphabeta:depth=1"}).to_string(),
        );
        click_cell(&c, "play-board", next["move"]["from"].as_str().unwrap()).await;
        screenshot(&c, "play.png").await;
        click(&c, Locator::Id("play-analyse")).await;
        wait_for(
            &c,
            "return document.querySelector('#analyse-board').dataset.analysed === '1';",
            "the analysis",
            60,
        )
        .await;
        screenshot(&c, "analyse.png").await;
        c.goto(&format!("{url}/#replay")).await.unwrap();
        wait_for(&c, "return document.body.dataset.ready === '1';", "the app", 30).await;
        wait_for(
            &c,
            "return document.querySelectorAll('#rp-games tr.game-row').length > 0 && document.querySelector('#rp-ply').textContent !== '';",
            "a game",
            30,
        )
        .await;
        let board = c.find(Locator::Id("replay-board")).await.unwrap();
        board.click().await.unwrap();
        board.send_keys("\u{E012}\u{E012}\u{E012}").await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        screenshot(&c, "replay.png").await;
        // A gate game, from the first served run that has one (a run with `run.gate =
        // false`, the default, has none): listed by kind, opened, stepped with the keys.
        let runs = c
            .execute(
                "return [...document.querySelectorAll('#rp-run option')].map(o => o.value);",
                vec![],
            )
            .await
            .unwrap();
        let mut gate_shot = false;
        for run in runs.as_array().unwrap() {
            let run = run.as_str().unwrap();
            let gates = http_get(&url, &format!("/api/runs/{run}/games?kind=gate"));
            if gates["games"].as_array().is_none_or(|g| g.is_empty()) {
                continue;
            }
            gate_shot = true;
            select_option(&c, "#rp-run", run).await;
            select_option(&c, "#rp-kind", "gate").await;
            wait_for(
                &c,
                "const r = document.querySelectorAll('#rp-games tr.game-row'); \
                 return r.length > 0 && [...r].every(x => x.dataset.kind === 'gate');",
                "the gate games",
                30,
            )
            .await;
            click(&c, Locator::Css("#rp-games tr.game-row")).await;
            let board = c.find(Locator::Id("replay-board")).await.unwrap();
            board.click().await.unwrap();
            board.send_keys("\u{E012}\u{E012}\u{E012}\u{E012}").await.unwrap();
            tokio::time::sleep(Duration::from_millis(500)).await;
            screenshot(&c, "replay-gate.png").await;
            println!("gate game of run {run} replayed");
            break;
        }
        if !gate_shot {
            let why = "replay-gate.png not made: no served run has gate games (serve a run \
                       made with --set run.gate=true too)";
            common::skip_or_fail(why);
        }
        c.goto(&format!("{url}/#dashboard")).await.unwrap();
        wait_for(
            &c,
            "return document.querySelectorAll('#db-elo circle.elo-point').length > 0;",
            "the Elo chart",
            30,
        )
        .await;
        screenshot(&c, "dashboard.png").await;
        let _ = c.close().await;
    });
}

/// `POST url+path` with a JSON body from outside the test harness's [`Server`]: the JSON.
fn http_post(url: &str, path: &str, body: &str) -> Value {
    http(url, "POST", path, body)
}

/// `GET url+path` from outside the test harness's [`Server`]: the JSON.
fn http_get(url: &str, path: &str) -> Value {
    http(url, "GET", path, "")
}

fn http(url: &str, method: &str, path: &str, body: &str) -> Value {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let json = out.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{path}: {e}: {out}"))
}
