//! `loazero serve`: the web app and its JSON API (`docs/api.md`) on axum/tokio.
//!
//! * [`state`]: what requests share (served runs, models loaded once, the search pool);
//! * [`game`]: the game a request names and the position JSON the app draws; [`files`]:
//!   SGF and record import and export;
//! * [`api`]: variants, positions, the opponent's move, analysis, SGF/record export and
//!   import; [`runs`]: run directories, their games and the dashboard's metrics;
//! * [`assets`]: the web app's files, compiled into the binary.
//!
//! A run kept in a store (`--store URL`) is served from its local read-only view
//! ([`rundir::store_view`]), brought up to date before the server starts and then every
//! [`ServeConfig::refresh`] on a thread of its own ([`follow`]), so the dashboard follows a
//! live run; the handlers read the view as they read any run directory.
//!
//! The server keeps no game state: every request carries the game (variant, rules, start,
//! moves), so any number of tabs play at once. Searches run off the async runtime on a
//! bounded pool. Every failure is an HTTP status with a JSON body `{"error": "…"}`: a 4xx
//! for anything the client sent; handler panics are caught (500) and the server goes on.

pub mod api;
pub mod assets;
pub mod error;
pub mod files;
pub mod game;
pub mod runs;
pub mod state;

use anyhow::{Context, Result};
use axum::extract::DefaultBodyLimit;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use rundir::store_view::StoreView;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

/// Largest request body accepted (bytes); larger ones get 413.
pub const BODY_LIMIT: usize = 1 << 20;

/// How `loazero serve` runs.
pub struct ServeConfig {
    /// The run directories served.
    pub dirs: Vec<PathBuf>,
    /// The runs kept in stores served, through their local views (synced once already).
    pub views: Vec<StoreView>,
    /// How often the views are brought up to date.
    pub refresh: std::time::Duration,
    /// Address to listen on.
    pub bind: IpAddr,
    /// Port (0: any free one).
    pub port: u16,
    /// Searches at the same time.
    pub searches: usize,
}

/// The application: every route of the web app and the API over `state`.
pub fn router(state: Arc<state::AppState>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/index.html", get(assets::index))
        .route("/app.js", get(assets::app_js))
        .route("/style.css", get(assets::style_css))
        .route("/api/variants", get(api::variants))
        .route("/api/players", get(api::players))
        .route("/api/position", post(api::position))
        .route("/api/play", post(api::play))
        .route("/api/analyse", post(api::analyse))
        .route("/api/export", post(api::export))
        .route("/api/import", post(api::import))
        .route("/api/runs", get(runs::runs))
        .route("/api/runs/{run}/games", get(runs::games))
        .route("/api/runs/{run}/game", get(runs::game))
        .route("/api/runs/{run}/metrics", get(runs::metrics))
        .fallback(not_found)
        .with_state(state)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::map_response(json_errors))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            panic_response,
        ))
}

/// 404 for every other path.
async fn not_found(uri: axum::http::Uri) -> error::ApiError {
    error::ApiError::not_found(format!(
        "no such page or API endpoint: {}",
        state::shorten(uri.path())
    ))
}

/// Turns the plain-text error responses of axum's extractors and router (bad query, body
/// too large, method not allowed, …) into the API's JSON errors, keeping the status.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("request failed")
            .to_string()
    } else {
        text
    };
    let mut r = (status, axum::Json(error::error_body(&message))).into_response();
    for (k, v) in parts.headers.iter() {
        if k == header::ALLOW {
            r.headers_mut().insert(k, v.clone());
        }
    }
    r
}

/// The response to a handler that panicked: 500 naming the panic; the server goes on.
fn panic_response(payload: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".into());
    let mut r = (
        StatusCode::INTERNAL_SERVER_ERROR,
        axum::Json(error::error_body(&format!("internal error: {what}"))),
    )
        .into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Binds, prints `loazero serve: http://ADDR:PORT/` (and flushes it), and serves until
/// Ctrl-C or SIGTERM (see [`shutdown`]).
pub fn serve(mut config: ServeConfig) -> Result<()> {
    let views = std::mem::take(&mut config.views);
    let stores: Vec<(String, PathBuf)> = views
        .iter()
        .map(|v| (v.spec().to_string(), v.root().to_path_buf()))
        .collect();
    let state = state::AppState::new(&config.dirs, &stores, config.searches)?;
    if !views.is_empty() {
        let every = config.refresh;
        std::thread::Builder::new()
            .name("store-views".into())
            .spawn(move || follow(views, every))
            .context("cannot start the thread that refreshes the store views")?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(config.searches + 8)
        .enable_io()
        .enable_time()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(async move {
        let addr = SocketAddr::new(config.bind, config.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr()?;
        if !local.ip().is_loopback() {
            eprintln!(
                "warning: listening on {local}, not on the loopback address: the app, its \
                 searches and the served run directories are reachable from the network"
            );
        }
        for r in &state.runs {
            eprintln!("serving run '{}' from {}", r.name, r.root.display());
        }
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            writeln!(out, "loazero serve: http://{local}/")?;
            out.flush()?;
        }
        let app = router(state);
        tokio::spawn(async {
            let mut every = tokio::time::interval(std::time::Duration::from_secs(10));
            loop {
                every.tick().await;
                crate::memory::release_free_heap();
            }
        });
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown())
            .await
            .context("server failed")?;
        eprintln!("loazero serve: stopped; every request was answered");
        Ok(())
    });
    // A search whose client went away may still run on a blocking thread.
    runtime.shutdown_timeout(std::time::Duration::from_secs(GRACE_S));
    served
}

/// Brings `views` up to date every `every`, for as long as the process lives. A failed
/// refresh is said once on standard error (the last copy is served meanwhile), and so is
/// the next that succeeds, and a new trainer epoch (a restarted trainer).
fn follow(mut views: Vec<StoreView>, every: std::time::Duration) {
    let mut failing = vec![false; views.len()];
    let mut epochs: Vec<Option<u64>> = vec![None; views.len()];
    loop {
        std::thread::sleep(every);
        for (k, view) in views.iter_mut().enumerate() {
            match view.sync() {
                Ok(synced) => {
                    if failing[k] {
                        eprintln!(
                            "--store {}: refreshed again (trainer epoch {}; {})",
                            view.spec(),
                            synced.epoch,
                            synced.report
                        );
                    } else if epochs[k].is_some_and(|e| e != synced.epoch) {
                        eprintln!(
                            "--store {}: now showing trainer epoch {} ({})",
                            view.spec(),
                            synced.epoch,
                            synced.report
                        );
                    }
                    failing[k] = false;
                    epochs[k] = Some(synced.epoch);
                }
                Err(e) => {
                    if !failing[k] {
                        eprintln!(
                            "warning: cannot refresh the view: {e:#} (serving the last copy; \
                             trying again every {} s)",
                            every.as_secs_f64()
                        );
                    }
                    failing[k] = true;
                }
            }
        }
    }
}

/// Seconds the server waits, after a stop was asked for, for the requests in flight.
const GRACE_S: u64 = 5;

/// Resolves on the first Ctrl-C or SIGTERM, after which the server stops taking
/// connections and finishes the requests in flight. From then on a second signal, or
/// [`GRACE_S`] seconds without the requests finishing, ends the process at once (exit
/// 130): the server keeps no state that a sudden end could damage.
async fn shutdown() {
    stop_signal().await;
    eprintln!(
        "loazero serve: stopping; finishing the requests in flight (at most {GRACE_S} s; \
         Ctrl-C again stops at once)"
    );
    tokio::spawn(async {
        tokio::select! {
            _ = stop_signal() => eprintln!("loazero serve: stopped at once"),
            _ = tokio::time::sleep(std::time::Duration::from_secs(GRACE_S)) => eprintln!(
                "loazero serve: stopped with requests still in flight after {GRACE_S} s"
            ),
        }
        std::process::exit(130);
    });
}

/// Resolves on the next Ctrl-C (SIGINT) or SIGTERM.
async fn stop_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let term = async {
        match term.as_mut() {
            Some(t) => {
                t.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
