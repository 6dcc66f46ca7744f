//! [`AppState`]: what every request shares: the served run directories, the models loaded
//! so far (each once, shared by every search), the player factory and the bounded pool that
//! searches run on.

use super::error::{ApiError, ApiResult};
use eval::{PlayerFactory, PlayerSpec};
use selfplay::{Device, Evaluator};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;
use train::NetEvaluator;

/// Longest thinking time a request may ask for (the registry's cap for player specs).
pub const MAX_MS: u64 = eval::player::kind::SERVE_MAX_MS as u64;
/// Deepest fixed-depth alpha-beta search an analysis may ask for (as a player spec may).
pub const MAX_DEPTH: u32 = eval::player::alphabeta::DEPTH.serve_cap() as u32;
/// Most MCTS simulations an analysis may ask for (as a player spec may).
pub const MAX_SIMS: u32 = eval::player::mcts::SIMS.serve_cap() as u32;

/// One served run directory (a `--dir`, or the local view of a `--store`).
#[derive(Clone, Debug)]
pub struct ServedRun {
    /// Its name in the API: the directory's file name (a store's last path segment), made
    /// unique with `-2`, `-3`, ….
    pub name: String,
    /// The directory or store URL as given on the command line.
    pub given: String,
    /// Its canonical path (every served path must lie under it).
    pub root: PathBuf,
}

/// A loaded model, loaded once: the evaluator its searches share, which also answers the
/// value's win/draw/loss split ([`NetEvaluator::evaluate_with_wdl`]).
pub struct LoadedModel {
    /// The shared evaluator (its own inference threads; `Sync`).
    pub net: Arc<NetEvaluator>,
}

impl LoadedModel {
    /// The evaluator, as searches and players take it.
    pub fn evaluator(&self) -> Arc<dyn Evaluator> {
        self.net.clone()
    }
}

/// State shared by all requests. Thread-safe: the model cache is behind a mutex, and a
/// model is loaded at most once (concurrent first requests for it wait for one load).
pub struct AppState {
    /// The served run directories, in command-line order.
    pub runs: Vec<ServedRun>,
    /// Loaded models by canonical path.
    models: Mutex<HashMap<PathBuf, Arc<LoadedModel>>>,
    /// Serialises model loading (so that a model loads once).
    loading: Mutex<()>,
    /// Builds players; its model loader takes models from the cache.
    pub factory: PlayerFactory,
    /// Permits of the search pool: one per search running.
    pub searches: Arc<Semaphore>,
    /// The pool's size (`--searches`).
    searches_max: usize,
    /// Threads of each search (a spec's `threads=` is refused to clients): the logical
    /// cores shared out between the pool's searches,
    /// [`eval::player::threads::threads_per_search`].
    pub threads_per_search: usize,
}

impl AppState {
    /// The state for `dirs` (each must be a directory) and the local views of `stores`
    /// (their URL and directory), with `searches` concurrent searches.
    pub fn new(
        dirs: &[PathBuf],
        stores: &[(String, PathBuf)],
        searches: usize,
    ) -> anyhow::Result<Arc<AppState>> {
        let mut runs: Vec<ServedRun> = Vec::new();
        let given = dirs
            .iter()
            .map(|d| (d.display().to_string(), d.clone(), None))
            .chain(stores.iter().map(|(spec, view)| {
                (
                    spec.clone(),
                    view.clone(),
                    Some(rundir::store_view::run_name(spec)),
                )
            }));
        for (shown, d, store_name) in given {
            let flag = if store_name.is_some() {
                "--store"
            } else {
                "--dir"
            };
            let root = d
                .canonicalize()
                .map_err(|e| anyhow::anyhow!("{flag} {shown}: {e}"))?;
            if !root.is_dir() {
                anyhow::bail!("{flag} {shown}: not a directory");
            }
            let base = store_name.unwrap_or_else(|| {
                root.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "run".into())
            });
            let mut name = base.clone();
            let mut k = 2;
            while runs.iter().any(|r| r.name == name) {
                name = format!("{base}-{k}");
                k += 1;
            }
            runs.push(ServedRun {
                name,
                given: shown,
                root,
            });
        }
        // Each of the `searches` concurrent searches gets its share of the cores.
        let threads_per_search =
            eval::player::threads::threads_per_search(eval::player::threads::all_cores(), searches);
        let state = Arc::new_cyclic(|weak: &std::sync::Weak<AppState>| {
            let weak = weak.clone();
            let loader: eval::player::ModelLoader =
                Arc::new(move |path: &Path, net: &eval::player::NetOptions| {
                    let state = weak
                        .upgrade()
                        .ok_or_else(|| anyhow::anyhow!("the server is shutting down"))?;
                    Ok(state.model(path, net.device)?.evaluator())
                });
            AppState {
                runs,
                models: Mutex::new(HashMap::new()),
                loading: Mutex::new(()),
                factory: PlayerFactory::new()
                    .with_model_loader(loader)
                    .with_default_threads(threads_per_search),
                searches: Arc::new(Semaphore::new(searches)),
                searches_max: searches.max(1),
                threads_per_search,
            }
        });
        Ok(state)
    }

    /// The run called `name`; 404 naming the served runs otherwise.
    pub fn run(&self, name: &str) -> ApiResult<&ServedRun> {
        self.runs.iter().find(|r| r.name == name).ok_or_else(|| {
            ApiError::not_found(format!(
                "unknown run '{}' (served: {})",
                shorten(name),
                self.runs
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// `path` (absolute, relative to the working directory, or a model by name:
    /// [`AppState::named_model`]) if it is an existing file under a served directory: its
    /// canonical form. 403 for a path outside them (existing or not), 404 for a missing
    /// file inside them.
    pub fn served_file(&self, path: &Path) -> ApiResult<PathBuf> {
        let shown = shorten(&path.display().to_string());
        let named = self.named_model(path);
        let path = named.as_deref().unwrap_or(path);
        // Where the path leads: canonical when it exists; otherwise its longest existing
        // ancestor made canonical with the rest appended, so that a missing file outside
        // the served directories is refused as outside (403), not reported missing.
        let resolved = path.canonicalize().ok().or_else(|| resolve_missing(path));
        if !resolved
            .as_ref()
            .is_some_and(|p| self.runs.iter().any(|r| p.starts_with(&r.root)))
        {
            return Err(ApiError::forbidden(format!(
                "{shown} is outside the served directories"
            )));
        }
        let canonical = path
            .canonicalize()
            .map_err(|_| ApiError::not_found(format!("no such file: {shown}")))?;
        if !canonical.is_file() {
            return Err(ApiError::not_found(format!("{shown} is not a file")));
        }
        Ok(canonical)
    }

    /// The file `rel` of `run`: a relative path without `..`, resolving (links followed)
    /// to a file inside the run directory. 403 otherwise, 404 when missing.
    pub fn run_file(&self, run: &ServedRun, rel: &str) -> ApiResult<PathBuf> {
        let p = Path::new(rel);
        if rel.is_empty()
            || rel.len() > 500
            || p.components()
                .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(ApiError::forbidden(format!(
                "path '{}' must be relative to the run directory, without '..'",
                shorten(rel)
            )));
        }
        let canonical = run.root.join(p).canonicalize().map_err(|_| {
            ApiError::not_found(format!("run '{}' has no file {}", run.name, shorten(rel)))
        })?;
        if !canonical.starts_with(&run.root) {
            return Err(ApiError::forbidden(format!(
                "{} leads outside the run directory",
                shorten(rel)
            )));
        }
        if !canonical.is_file() {
            return Err(ApiError::not_found(format!(
                "{} is not a file",
                shorten(rel)
            )));
        }
        Ok(canonical)
    }

    /// The model at `path` (canonical, already checked by [`AppState::served_file`]),
    /// loaded on first use on `device` and shared afterwards. Blocking: call off the async
    /// runtime.
    pub fn model(&self, path: &Path, device: Device) -> anyhow::Result<Arc<LoadedModel>> {
        if let Some(m) = self.models.lock().expect("model cache").get(path) {
            return Ok(m.clone());
        }
        let _one_at_a_time = self.loading.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = self.models.lock().expect("model cache").get(path) {
            return Ok(m.clone());
        }
        // Every search thread of the pool may have a batch in flight: one inference
        // thread (one torch thread each) per core.
        let config = train::InferenceConfig {
            forward_threads: self.threads_per_search * self.searches_max,
            ..train::players::timed_inference(device)
        };
        let net = train::players::load_net_evaluator(path, &config)?;
        let loaded = Arc::new(LoadedModel { net: Arc::new(net) });
        self.models
            .lock()
            .expect("model cache")
            .insert(path.to_path_buf(), loaded.clone());
        Ok(loaded)
    }

    /// Parses a player spec from a request and checks that it is safe to run for a
    /// client by the registry's rules for clients ([`PlayerSpec::parse_for_client`]: served
    /// kinds, caps on limits, models on the CPU in the server's precision, no files read),
    /// with every model path under a served directory (replaced by its canonical path).
    pub fn vet_spec(&self, text: &str) -> ApiResult<PlayerSpec> {
        if text.len() > 500 {
            return Err(ApiError::bad("player: spec longer than 500 bytes"));
        }
        let mut spec = PlayerSpec::parse_for_client(text)
            .map_err(|e| ApiError::bad(format!("player: {e:#}")))?;
        for path in spec.served_files_mut() {
            *path = self.served_file(path)?;
        }
        Ok(spec)
    }

    /// A model given by name instead of by path: `RUN/NAME` with RUN a served run's name
    /// (`GET /api/runs`) is that run's `models/NAME.safetensors` (`shipped/gen-0099`, the
    /// shipped run's; `default/nnue-0001`, one of `runs/default`), and `RUN/REST` the file REST in that run's directory. `None`
    /// when `path` exists as given (relative to the server's working directory), so a
    /// path always means what it says.
    pub fn named_model(&self, path: &Path) -> Option<PathBuf> {
        if path.is_absolute() || path.exists() {
            return None;
        }
        let mut parts = path.components();
        let Some(Component::Normal(first)) = parts.next() else {
            return None;
        };
        let run = self.runs.iter().find(|r| first == r.name.as_str())?;
        let rest = parts.as_path();
        let in_models = run
            .root
            .join("models")
            .join(format!("{}.safetensors", rest.display()));
        if rest.components().count() == 1 && in_models.is_file() {
            return Some(in_models);
        }
        Some(run.root.join(rest))
    }
}

pub use super::error::shorten;

/// A path that does not exist, resolved as far as it does: its longest existing ancestor
/// made canonical, then the missing rest appended; `None` when the rest steps up (`..`),
/// as nothing can say where that leads.
fn resolve_missing(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut ancestor = path;
    let base = loop {
        if let Ok(c) = ancestor.canonicalize() {
            break c;
        }
        missing.push(ancestor.file_name()?.to_owned());
        ancestor = match ancestor.parent() {
            Some(p) if p.as_os_str().is_empty() => Path::new("."),
            Some(p) => p,
            None => return None,
        };
    };
    Some(missing.iter().rev().fold(base, |p, part| p.join(part)))
}

/// Runs `work` on the blocking pool once a search permit is free, and returns its result.
/// A panic of `work` becomes a 500 naming it (the server goes on).
pub async fn run_blocking<T, F>(state: &Arc<AppState>, work: F) -> ApiResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> ApiResult<T> + Send + 'static,
{
    let permit = state
        .searches
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| ApiError::internal("the search pool is closed"))?;
    let joined = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work()
    })
    .await;
    match joined {
        Ok(r) => r,
        Err(e) if e.is_panic() => {
            let payload = e.into_panic();
            let what = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            Err(ApiError::internal(format!(
                "internal error in a search: {what}"
            )))
        }
        Err(e) => Err(ApiError::internal(format!("search task failed: {e}"))),
    }
}
