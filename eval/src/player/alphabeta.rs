//! The alpha-beta baseline as a [`Player`].

use super::analysis::Analysis;
use super::info::{Score, SearchInfo};
use super::kind::{Key, Network, Order, PlayerKind, Serve, Shown, ValueType, SERVE_MAX_MS};
use super::spec::{Settings, Value};
use super::{Player, PlayerFactory, PlayerSpec};
use crate::config::{AlphaBetaConfig, EvalWeights};
use crate::learned::LearnedEval;
use crate::search::{AlphaBeta, SearchLimits, SearchMonitor, SearchResult, WIN, WIN_THRESHOLD};
use anyhow::{Context, Result};
use loa::forced::Forced;
use loa::{Game, Move};
use selfplay::RootCheck;
use std::time::{Duration, Instant};

/// Largest transposition table a spec may ask for (`tt=`, MiB): 64 GiB.
pub const MAX_TT_MIB: i64 = 1 << 16;

/// Depth of a spec without limits.
pub const DEFAULT_DEPTH: u32 = 4;

/// `depth=`: the depth limit.
pub const DEPTH: Key = Key {
    name: "depth",
    aliases: &[],
    value: ValueType::Int { min: 1, max: 60 },
    default: "4 without other limits",
    help: "depth limit in plies",
    shown: Shown::Always,
    limit: true,
    serve: Serve::AtMost {
        max: 8,
        unless: &["ms", "nodes"],
    },
};

/// A switch key of the search's options.
const fn switch(name: &'static str, help: &'static str) -> Key {
    Key {
        name,
        aliases: &[],
        value: ValueType::Switch,
        default: "",
        help,
        shown: Shown::Always,
        limit: false,
        serve: Serve::Any,
    }
}

/// `alphabeta[:depth=D][,ms=T][,nodes=N]...`: limits combine; with none, depth 4. Late move
/// reductions default on without a depth limit and off with one: they cost strength at a
/// fixed depth but pay at a fixed time or node budget (eval/README.md). Named by its text
/// as given (keys in the given order), as results files name it.
pub static KIND: PlayerKind = PlayerKind {
    name: "alphabeta",
    aliases: &["ab"],
    summary: "the alpha-beta baseline (iterative deepening with a transposition table and \
              the root check)",
    keys: &[
        DEPTH,
        Key {
            name: "ms",
            aliases: &[],
            value: ValueType::positive(i64::MAX),
            default: "",
            help: "thinking time per move in milliseconds",
            shown: Shown::Always,
            limit: true,
            serve: Serve::AtMost {
                max: SERVE_MAX_MS,
                unless: &[],
            },
        },
        Key {
            name: "nodes",
            aliases: &[],
            value: ValueType::positive(i64::MAX),
            default: "",
            help: "node limit per move",
            shown: Shown::Always,
            limit: true,
            serve: Serve::AtMost {
                max: 50_000_000,
                unless: &[],
            },
        },
        Key {
            name: "tt",
            aliases: &[],
            value: ValueType::Int {
                min: 1,
                max: MAX_TT_MIB,
            },
            default: "16",
            help: "transposition table size in MiB",
            shown: Shown::Always,
            limit: false,
            serve: Serve::AtMost {
                max: 64,
                unless: &[],
            },
        },
        switch(
            "lmr",
            "late move reductions (default on without a depth limit, off with one)",
        ),
        switch("leafwin", "checks for wins at the leaves"),
        switch("threat", "extends the search at threats"),
        Key {
            name: "aspiration",
            aliases: &[],
            value: ValueType::Int {
                min: i32::MIN as i64,
                max: i32::MAX as i64,
            },
            default: "",
            help: "aspiration window half-width in evaluation units",
            shown: Shown::Always,
            limit: false,
            serve: Serve::Any,
        },
        super::threads::THREADS,
        Key {
            name: "weights",
            aliases: &[],
            value: ValueType::File,
            default: "",
            help: "a JSON file of evaluation weights (an EvalWeights object)",
            shown: Shown::Always,
            limit: false,
            serve: Serve::Refused("weights=FILE is not accepted by the server (use w.NAME=VALUE)"),
        },
        Key {
            name: "eval",
            aliases: &[],
            value: ValueType::File,
            default: "",
            help: "a learned evaluation (nnue-NNNN.safetensors of a run's models/) valuing \
                   the leaves instead of the hand-written one",
            shown: Shown::Always,
            limit: false,
            serve: Serve::ServedFile,
        },
        Key {
            name: "w.NAME",
            aliases: &[],
            value: ValueType::Real,
            default: "",
            help: "one evaluation weight (e.g. w.mobility=0)",
            shown: Shown::Always,
            limit: false,
            serve: Serve::Any,
        },
    ],
    order: Order::Given,
    network: Network::Never,
    served: true,
    opponents: &[
        ("alphabeta:depth=1", "Alpha-beta depth 1"),
        ("alphabeta:depth=2", "Alpha-beta depth 2"),
        ("alphabeta:depth=3", "Alpha-beta depth 3"),
        ("alphabeta:depth=4", "Alpha-beta depth 4"),
        ("alphabeta", "Alpha-beta, time per move"),
    ],
    complete,
    build,
};

/// Every `w.NAME` names a weight.
fn complete(settings: &mut Settings) -> Result<(), String> {
    let mut weights = EvalWeights::default();
    for s in settings.iter() {
        if let (Some(name), Value::Real(w)) = (s.name.strip_prefix("w."), &s.value) {
            weights.set(name, *w as f32).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The search limits and options of a spec of [`KIND`] (reads its `weights=` file).
pub fn search_settings(spec: &PlayerSpec) -> Result<(SearchLimits, AlphaBetaConfig)> {
    let mut limits = SearchLimits {
        depth: spec.int("depth").map(|d| d as u32),
        nodes: spec.int("nodes").map(|n| n as u64),
        time: spec.int("ms").map(|ms| Duration::from_millis(ms as u64)),
    };
    if limits == SearchLimits::default() {
        limits.depth = Some(DEFAULT_DEPTH);
    }
    let mut config = AlphaBetaConfig::default();
    if let Some(mib) = spec.int("tt") {
        config.tt_mib = mib as usize;
    }
    config.late_move_reductions = spec.switch("lmr").unwrap_or(limits.depth.is_none());
    if let Some(on) = spec.switch("leafwin") {
        config.leaf_win_check = on;
    }
    if let Some(on) = spec.switch("threat") {
        config.threat_extension = on;
    }
    if let Some(n) = spec.int("threads") {
        config.threads = n as usize;
    }
    if let Some(a) = spec.int("aspiration") {
        config.aspiration = a as i32;
    }
    if let Some(file) = spec.file("weights") {
        let text = std::fs::read_to_string(file).with_context(|| {
            format!(
                "player '{spec}': cannot read weights file {}",
                file.display()
            )
        })?;
        config.weights = serde_json::from_str(&text)
            .with_context(|| format!("player '{spec}': bad weights file {}", file.display()))?;
    }
    for s in spec.settings().iter() {
        if let (Some(name), Value::Real(w)) = (s.name.strip_prefix("w."), &s.value) {
            config
                .weights
                .set(name, *w as f32)
                .with_context(|| format!("player '{spec}'"))?;
        }
    }
    Ok((limits, config))
}

fn build(spec: &PlayerSpec, factory: &PlayerFactory, _seed: u64) -> Result<Box<dyn Player>> {
    Ok(Box::new(player(spec, factory)?))
}

/// The player of `spec`, searching on the factory's threads unless the spec gives some.
fn player(spec: &PlayerSpec, factory: &PlayerFactory) -> Result<AlphaBetaPlayer> {
    let (limits, mut config) = search_settings(spec)?;
    config.threads = factory.threads_of(spec);
    let (search, eval_name) = match spec.file("eval") {
        Some(path) => {
            let net = LearnedEval::load(path).with_context(|| format!("player '{spec}'"))?;
            let name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            (
                AlphaBeta::with_learned(config, std::sync::Arc::new(net)),
                name,
            )
        }
        None => (AlphaBeta::new(config), None),
    };
    let mut player = AlphaBetaPlayer::with_search(spec.name(), search, limits);
    player.eval_name = eval_name;
    Ok(player)
}

/// The alpha-beta baseline as a player. Every move starts with the root check
/// ([`RootCheck`]): a forced win within three turns, or the latest loss when every move
/// loses, is played without a search (reported as a search of depth 0 with the exact
/// score), and the moves the check refutes are left out of the search.
pub struct AlphaBetaPlayer {
    name: String,
    search: AlphaBeta,
    limits: SearchLimits,
    last: Option<SearchResult>,
    /// The learned evaluation's name for the `info` line (`eval`).
    eval_name: Option<String>,
}

impl AlphaBetaPlayer {
    /// A player searching within `limits` per move.
    pub fn new(name: String, config: AlphaBetaConfig, limits: SearchLimits) -> AlphaBetaPlayer {
        AlphaBetaPlayer::with_search(name, AlphaBeta::new(config), limits)
    }

    /// A player of the searcher `search` (with a learned evaluation, say).
    pub fn with_search(name: String, search: AlphaBeta, limits: SearchLimits) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            name,
            search,
            limits,
            last: None,
            eval_name: None,
        }
    }

    /// The last search's result.
    pub fn last_result(&self) -> Option<&SearchResult> {
        self.last.as_ref()
    }

    /// The root check, then the search within `limits` over the moves it does not refute.
    fn checked_search(&mut self, game: &Game, limits: SearchLimits) -> Result<Move> {
        let started = Instant::now();
        let check = RootCheck::of(game);
        let settled = |best_move: Move, score: i32| SearchResult {
            best_move,
            score,
            depth: 0,
            nodes: 0,
            elapsed: started.elapsed(),
            iterations: Vec::new(),
        };
        let r = match *check.verdict() {
            Forced::Win { mv, plies } => settled(mv, WIN - plies as i32),
            Forced::Loss { mv, plies } => settled(mv, -(WIN - plies as i32)),
            Forced::Open { ref refuted } => {
                self.search.search_game_excluding(game, limits, refuted)?
            }
        };
        let mv = r.best_move;
        self.last = Some(r);
        Ok(mv)
    }

    /// The report of the search `r` over `nodes` in `elapsed`.
    fn info(&self, r: &SearchResult, nodes: u64, elapsed: Duration) -> SearchInfo {
        let score = if r.score > WIN_THRESHOLD {
            Score::Mate(WIN - r.score)
        } else if r.score < -WIN_THRESHOLD {
            Score::Mate(-(WIN + r.score))
        } else {
            Score::Cp(r.score)
        };
        let pv = r.pv().iter().map(|m| m.to_string()).collect();
        SearchInfo::new(Some(r.depth), nodes, elapsed, Some(score), pv)
            .with_eval(self.eval_name.clone())
    }

    /// [`Player::analyse`] over the root moves the root check leaves open (`refuted`:
    /// the ones it refutes): searches to depth 1, 2, … and at each depth finds the
    /// `analysis.multipv` best moves one after another, each search leaving out the moves
    /// already ranked. Every search after the first starts from the table the earlier ones
    /// filled. Ends when stopped, or once the best move's search ends before its depth (a
    /// proven result, a single move: deeper searches find the same).
    fn analyse_open(
        &mut self,
        game: &Game,
        refuted: &[Move],
        analysis: &Analysis,
        report: &mut dyn FnMut(SearchInfo),
    ) -> Result<Move> {
        let started = Instant::now();
        let open = game
            .legal_moves()
            .iter()
            .filter(|&m| !refuted.contains(m))
            .count();
        let ranks = (analysis.multipv as usize).clamp(1, open.max(1));
        let mut best: Option<SearchResult> = None;
        'deepen: for depth in 1.. {
            let mut excluded = refuted.to_vec();
            for rank in 1..=ranks {
                let r = self.search.search_game_excluding(
                    game,
                    SearchLimits::depth(depth),
                    &excluded,
                )?;
                if analysis.stopped() {
                    // An interrupted search is the answer only when nothing was completed.
                    if best.is_none() {
                        best = Some(r);
                    }
                    break 'deepen;
                }
                let nodes = analysis.nodes.load(std::sync::atomic::Ordering::Relaxed);
                let info = self.info(&r, nodes, started.elapsed());
                report(if ranks > 1 {
                    info.with_multipv(rank as u32)
                } else {
                    info
                });
                excluded.push(r.best_move);
                if rank == 1 {
                    let settled = r.depth < depth;
                    best = Some(r);
                    if settled {
                        break 'deepen;
                    }
                }
            }
        }
        let r = best.expect("the first search gives a move");
        let mv = r.best_move;
        self.last = Some(r);
        Ok(mv)
    }
}

impl Player for AlphaBetaPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        self.checked_search(game, self.limits)
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn choose_move_within(&mut self, game: &Game, budget: Duration) -> Result<Move> {
        let limits = if self.limits.time.is_some() {
            SearchLimits {
                time: Some(budget),
                ..self.limits
            }
        } else {
            SearchLimits {
                time: Some(budget),
                ..SearchLimits::default()
            }
        };
        self.checked_search(game, limits)
    }
    fn last_info(&self) -> Option<SearchInfo> {
        self.last.as_ref().map(|r| self.info(r, r.nodes, r.elapsed))
    }
    fn analyse(
        &mut self,
        game: &Game,
        analysis: &Analysis,
        report: &mut dyn FnMut(SearchInfo),
    ) -> Result<Move> {
        let Forced::Open { refuted } = RootCheck::of(game).verdict().clone() else {
            // The root check settles the move: reported as a search of depth 0.
            return super::analysis::search_once(self, game, report);
        };
        self.search.set_monitor(Some(SearchMonitor {
            stop: analysis.stop.clone(),
            nodes: analysis.nodes.clone(),
        }));
        let result = self.analyse_open(game, &refuted, analysis, report);
        self.search.set_monitor(None);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `threads=` reaches the search; without it the factory's default does; a client of
    /// `serve` may not ask for threads; bad counts are refused by name.
    #[test]
    fn threads_come_from_the_spec_or_the_factory() {
        let spec = |t: &str| PlayerSpec::parse(t).unwrap();
        let threads =
            |t: &str, f: &PlayerFactory| player(&spec(t), f).unwrap().search.config().threads;
        let (one, four) = (
            PlayerFactory::new(),
            PlayerFactory::new().with_default_threads(4),
        );
        assert_eq!(threads("alphabeta:ms=300,threads=2", &one), 2);
        assert_eq!(threads("alphabeta:ms=300,threads=2", &four), 2);
        assert_eq!(threads("alphabeta:ms=300", &one), 1);
        assert_eq!(threads("alphabeta:ms=300", &four), 4);
        assert_eq!(
            search_settings(&spec("ab:depth=3,threads=3"))
                .unwrap()
                .1
                .threads,
            3
        );
        assert_eq!(
            spec("alphabeta:ms=300,threads=2").name(),
            "alphabeta:ms=300,threads=2"
        );
        for bad in [
            "alphabeta:threads=0",
            "alphabeta:threads=257",
            "alphabeta:threads=two",
        ] {
            let e = PlayerSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("threads"), "{bad}: {e}");
        }
        let e = PlayerSpec::parse_for_client("alphabeta:ms=100,threads=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("threads"), "{e}");
    }
}
