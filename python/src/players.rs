//! `loazero.Player`: a torch-free player spec (`alphabeta:…`, `alphabeta:eval=FILE`,
//! `mcts:evaluator=heuristic,…`, `random`, `first-legal`) built by `eval::PlayerFactory`,
//! searching a state with the GIL released (Python threads search in parallel). Players
//! with a network (`model:`, `ubfm:`) need torch: `loazero.Engine` drives them through
//! the engine protocol in a subprocess.

use crate::game::PyState;
use crate::{py_anyhow, LoazeroError};
use eval::player::{Score, SearchInfo};
use eval::{Player, PlayerFactory, PlayerSpec};
use pyo3::prelude::*;
use std::sync::Mutex;
use std::time::Duration;

/// The states of `loazero bench alphabeta` (each variant's start and positions after 8,
/// 16 and 24 seeded random plies), for measuring a player's speed from Python on the
/// binary's own workload.
#[pyfunction]
pub fn bench_states() -> Vec<PyState> {
    eval::bench::positions()
        .into_iter()
        .map(PyState::new)
        .collect()
}

/// A player built from a spec. One search at a time per player (a second thread's call
/// waits for the first); separate players search in parallel.
#[pyclass(name = "Player", module = "loazero", frozen)]
pub struct PyPlayer {
    spec: String,
    player: Mutex<Box<dyn Player>>,
}

#[pymethods]
impl PyPlayer {
    /// `Player(spec, seed=0, threads=1)`: a player spec as `loazero match` reads it
    /// (`loazero match --help` lists the kinds and keys); `seed` seeds its random stream;
    /// `threads` is the search threads of a spec without `threads=`.
    #[new]
    #[pyo3(signature = (spec, seed = 0, threads = 1))]
    fn new(spec: &str, seed: u64, threads: usize) -> PyResult<PyPlayer> {
        let parsed = PlayerSpec::parse(spec).map_err(py_anyhow)?;
        if parsed.network().is_some() {
            return Err(LoazeroError::new_err(format!(
                "player '{spec}' needs a network, which the torch-free wheel does not load: \
                 use loazero.Engine(player='{spec}') (the engine protocol in a subprocess)"
            )));
        }
        let factory = PlayerFactory::new().with_default_threads(threads);
        let player = factory.build(&parsed, seed).map_err(py_anyhow)?;
        Ok(PyPlayer {
            spec: player.name(),
            player: Mutex::new(player),
        })
    }

    /// The canonical spec of the player.
    #[getter]
    fn spec(&self) -> String {
        self.spec.clone()
    }

    /// Searches `state` (not over) and returns the move with the search's report. `ms`:
    /// a time budget replacing the spec's `ms` (its other limits stay caps). The GIL is
    /// released while it searches.
    #[pyo3(signature = (state, ms = None))]
    fn search(&self, py: Python<'_>, state: &PyState, ms: Option<u64>) -> PyResult<PySearchResult> {
        let game = state.game().clone();
        if let Some(o) = game.outcome() {
            return Err(LoazeroError::new_err(format!(
                "the game is over ({}); there is no move to search for",
                o.name()
            )));
        }
        if ms == Some(0) {
            return Err(LoazeroError::new_err("ms must be positive"));
        }
        let (mv, info) = py
            .detach(|| {
                let mut player = self.player.lock().map_err(|_| {
                    anyhow::anyhow!("player '{}': an earlier search panicked", self.spec)
                })?;
                let mv = match ms {
                    Some(ms) => player.choose_move_within(&game, Duration::from_millis(ms))?,
                    None => player.choose_move(&game)?,
                };
                anyhow::Ok((mv, player.last_info()))
            })
            .map_err(py_anyhow)?;
        let action = state_action(state, mv);
        Ok(PySearchResult::new(mv.to_string(), action, info))
    }

    fn __repr__(&self) -> String {
        format!("loazero.Player('{}')", self.spec)
    }
}

/// The action index of a legal move of `state`.
fn state_action(state: &PyState, mv: loa::Move) -> usize {
    use selfplay::policy::PolicyIndex;
    let pos = state.game().position();
    pos.policy_index(mv)
        .unwrap_or_else(|| selfplay::policy::policy_size(pos.variant()))
}

/// One search's result: the move and the search's report (the engine protocol's `info`
/// line, eval/PROTOCOL.md).
#[pyclass(name = "SearchResult", module = "loazero", frozen, get_all)]
pub struct PySearchResult {
    /// The move chosen, as text.
    #[pyo3(name = "move")]
    mv: String,
    /// Its action index.
    action: usize,
    /// The score for the side to move as the `info` line writes it (`cp 35`, `value
    /// 0.412`, `mate 3`, `win`, …), `None` when not known (a player that does not search).
    score: Option<String>,
    /// Alpha-beta's evaluation in evaluation units (`cp`), else `None`.
    cp: Option<i32>,
    /// A search's value in −1…+1 (MCTS mean), else `None`.
    value: Option<f32>,
    /// A forced win in this many plies (negative: a forced loss), else `None`.
    mate: Option<i32>,
    /// The principal variation, the move played first.
    pv: Vec<String>,
    /// Nodes (alpha-beta), simulations (MCTS) or iterations: what the spec's limit counts.
    nodes: u64,
    /// The last completed depth (alpha-beta), the PV's length (MCTS); `None`: not reported.
    depth: Option<u32>,
    /// Milliseconds the search took.
    time_ms: u64,
    /// Nodes per second.
    nps: u64,
}

impl PySearchResult {
    fn new(mv: String, action: usize, info: Option<SearchInfo>) -> PySearchResult {
        let info = info
            .unwrap_or_else(|| SearchInfo::new(None, 0, Duration::ZERO, None, vec![mv.clone()]));
        let (cp, value, mate) = match info.score {
            Some(Score::Cp(c)) => (Some(c), None, None),
            Some(Score::Value(v)) => (None, Some(v), None),
            Some(Score::Mate(m)) => (None, None, Some(m)),
            _ => (None, None, None),
        };
        PySearchResult {
            mv,
            action,
            score: info.score.map(|s| s.to_string()),
            cp,
            value,
            mate,
            pv: info.pv,
            nodes: info.nodes,
            depth: info.depth,
            time_ms: info.time,
            nps: info.nps,
        }
    }
}

#[pymethods]
impl PySearchResult {
    fn __repr__(&self) -> String {
        format!(
            "SearchResult(move='{}', score={:?}, nodes={}, depth={:?}, pv={:?})",
            self.mv, self.score, self.nodes, self.depth, self.pv
        )
    }
}
