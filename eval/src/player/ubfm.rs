//! UBFM players: the selfplay crate's [`selfplay::Ubfm`] (unbounded best-first minimax
//! with completion) behind the [`Player`] interface, with a built-in evaluator or a
//! trained network's values.

use super::info::{Proven, Score, SearchInfo};
use super::kind::{Key, Network, Order, PlayerKind, Serve, Shown, ValueType};
use super::mcts::{self, EVALUATOR, MS};
use super::model::{DEVICE, PATH, PRECISION};
use super::spec::{Settings, Value};
use super::{Player, DEFAULT_UBFM_NODES, NO_NODE_CAP};
use anyhow::Result;
use loa::forced::Forced;
use loa::{Game, Move};
use selfplay::{Evaluator, Resolution, RootCheck, Ubfm, UbfmConfig, UbfmLimits};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `ubfm[:evaluator=…|path=P][,nodes=N][,ms=T][,device=…][,precision=…][,completion=on|off]`:
/// on a built-in evaluator's values or a trained network's (loaded like a `model`
/// player's); no evaluator and no path: `heuristic`. `completion=off` is the papers' plain
/// UBFM, for comparisons. The move played is the papers' safest action (see
/// [`selfplay::ubfm`]).
pub static KIND: PlayerKind = PlayerKind {
    name: "ubfm",
    aliases: &[],
    summary: "unbounded best-first minimax with completion, on a built-in evaluator's values \
              or a network's (path=)",
    keys: &[
        EVALUATOR,
        PATH,
        Key {
            name: "nodes",
            aliases: &[],
            value: ValueType::positive(u32::MAX as i64),
            default: "200 without ms; no cap with ms",
            help: "iterations per move, each expanding one position (with ms: their cap)",
            shown: Shown::Always,
            limit: true,
            serve: Serve::AtMost {
                max: 20_000,
                unless: &["ms"],
            },
        },
        MS,
        DEVICE,
        PRECISION,
        Key {
            name: "completion",
            aliases: &[],
            value: ValueType::Switch,
            default: "on",
            help: "completion (off: the papers' plain UBFM)",
            shown: Shown::UnlessDefault,
            limit: false,
            serve: Serve::Any,
        },
    ],
    order: Order::Declared,
    network: Network::WithKey("path"),
    served: true,
    opponents: &[(
        "ubfm:evaluator=heuristic",
        "UBFM heuristic (best-first minimax), time per move",
    )],
    complete,
    build: |spec, factory, _seed| {
        let evaluator = match spec.network() {
            Some((path, net)) => factory.network(spec, path, &net)?,
            None => mcts::builtin_evaluator(spec.word("evaluator").unwrap_or("heuristic"))?,
        };
        let config = UbfmConfig {
            completion: spec.switch("completion").unwrap_or(true),
            ..UbfmConfig::default()
        };
        let nodes = spec.int("nodes").map_or(NO_NODE_CAP, |n| n as u32);
        let ms = spec.int("ms").map(|ms| ms as u64);
        Ok(build(spec.name(), evaluator, config, nodes, ms))
    },
};

/// Either `evaluator=` or `path=`, network options only with a path, and the defaults the
/// name states.
fn complete(settings: &mut Settings) -> Result<(), String> {
    if settings.has("path") {
        if settings.iter().any(|s| s.name == "evaluator" && !s.filled) {
            return Err("ubfm takes either evaluator= or path=, not both".into());
        }
        settings.remove("evaluator");
    } else {
        if settings.has("device") || settings.has("precision") {
            return Err("device= and precision= need a network (path=FILE)".into());
        }
        settings.fill("evaluator", Value::Word("heuristic"))?;
    }
    if !settings.has("ms") {
        settings.fill("nodes", Value::Int(DEFAULT_UBFM_NODES as i64))?;
    }
    Ok(())
}

/// A UBFM player named `name` with `evaluator` and `config`. Without `ms` it runs
/// `nodes` iterations per move; with `ms` it searches for `ms` milliseconds per move (the
/// clock starts when the move is asked for), stopping early at `nodes` iterations unless
/// `nodes` is [`NO_NODE_CAP`]. Either way it stops as soon as the root is proven.
pub fn build(
    name: String,
    evaluator: Arc<dyn Evaluator>,
    config: UbfmConfig,
    nodes: u32,
    ms: Option<u64>,
) -> Box<dyn Player> {
    Box::new(UbfmPlayer {
        name,
        evaluator,
        search: Ubfm::new(config),
        nodes,
        time: ms.map(Duration::from_millis),
        last_info: None,
    })
}

/// A [`Ubfm`] search with its limits. The search's table is cleared at every move.
struct UbfmPlayer {
    name: String,
    evaluator: Arc<dyn Evaluator>,
    search: Ubfm,
    nodes: u32,
    time: Option<Duration>,
    /// The report of the last move.
    last_info: Option<SearchInfo>,
}

impl UbfmPlayer {
    /// The root check ([`RootCheck`]) first, as every searching player: a forced win
    /// within three turns, or the latest loss when every move loses, is played without a
    /// search; after the search a move the check refutes gives way to the search's next
    /// most visited move.
    fn run(&mut self, game: &Game, iterations: u32, time: Option<Duration>) -> Result<Move> {
        let started = Instant::now();
        let check = RootCheck::of(game);
        if let Some(mv) = check.settled() {
            let score = match *check.verdict() {
                Forced::Win { plies, .. } => Some(Score::Mate(plies as i32)),
                Forced::Loss { plies, .. } => Some(Score::Mate(-(plies as i32))),
                Forced::Open { .. } => None,
            };
            let pv = vec![mv.to_string()];
            self.last_info = Some(SearchInfo::new(Some(0), 0, started.elapsed(), score, pv));
            return Ok(mv);
        }
        let limits = UbfmLimits {
            iterations,
            deadline: time.map(|t| started + t),
        };
        let searched = self
            .search
            .choose_move(game, self.evaluator.as_ref(), limits)?;
        let mut preference = self.search.root_moves();
        preference.sort_by_key(|m| std::cmp::Reverse(m.visits));
        let mv = check.overrule(searched, preference.iter().map(|m| m.mv));
        let stats = self.search.stats();
        let score = match stats.resolution {
            Resolution::Unresolved => Score::Value(stats.value),
            Resolution::Win(d) => Score::Mate(i32::from(d)),
            Resolution::Loss(d) => Score::Mate(-i32::from(d)),
            Resolution::Draw => Score::Proven(Proven::Draw),
        };
        // The line played first: the search's, unless the root check overruled its move.
        let mut pv: Vec<String> = stats.pv.iter().map(|m| m.to_string()).collect();
        if stats.pv.first() != Some(&mv) {
            pv = vec![mv.to_string()];
        }
        self.last_info = Some(SearchInfo::new(
            Some(pv.len() as u32),
            u64::from(stats.iterations),
            started.elapsed(),
            Some(score),
            pv,
        ));
        Ok(mv)
    }
}

impl Player for UbfmPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        self.run(game, self.nodes, self.time)
    }

    fn choose_move_within(&mut self, game: &Game, budget: Duration) -> Result<Move> {
        let cap = if self.time.is_some() {
            self.nodes
        } else {
            NO_NODE_CAP
        };
        self.run(game, cap, Some(budget))
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn last_info(&self) -> Option<SearchInfo> {
        self.last_info.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Device, PlayerFactory, PlayerSpec, DEFAULT_UBFM_NODES};
    use super::*;
    use loa::{Rules, Variant};

    #[test]
    fn specs_round_trip() {
        for (text, canonical, nodes, ms) in [
            (
                "ubfm:evaluator=heuristic,ms=20",
                "ubfm:evaluator=heuristic,ms=20",
                None,
                Some(20),
            ),
            (
                "UBFM: ms=50, nodes=300, evaluator=Uniform",
                "ubfm:evaluator=uniform,nodes=300,ms=50",
                Some(300),
                Some(50),
            ),
            (
                "ubfm",
                "ubfm:evaluator=heuristic,nodes=200",
                Some(DEFAULT_UBFM_NODES as i64),
                None,
            ),
            (
                "ubfm:path=m.st,precision=BFloat16,device=CUDA,completion=off",
                "ubfm:path=m.st,nodes=200,device=cuda,precision=bfloat16,completion=off",
                Some(DEFAULT_UBFM_NODES as i64),
                None,
            ),
            (
                "ubfm:path=runs/x/gen-0003.safetensors,ms=200,completion=on",
                "ubfm:path=runs/x/gen-0003.safetensors,ms=200",
                None,
                Some(200),
            ),
        ] {
            let spec = PlayerSpec::parse(text).unwrap();
            assert_eq!(spec.name(), canonical, "{text}");
            assert_eq!(PlayerSpec::parse(&spec.name()).unwrap(), spec, "{text}");
            assert_eq!((spec.int("nodes"), spec.int("ms")), (nodes, ms), "{text}");
            assert_eq!(
                spec.network().is_some(),
                text.contains("path="),
                "{text}: network()"
            );
        }
        let spec = PlayerSpec::parse("ubfm:path=m.st,device=cuda:1,completion=off").unwrap();
        let (_, net) = spec.network().unwrap();
        assert_eq!(
            (net.device, spec.switch("completion")),
            (Device::Cuda(Some(1)), Some(false))
        );
    }

    #[test]
    fn bad_specs_name_the_problem() {
        for (spec, needle) in [
            ("ubfm:nodes=0", "nodes must be positive"),
            ("ubfm:nodes=many", "nodes=many"),
            ("ubfm:ms=0", "ms must be positive"),
            ("ubfm:ms=-3", "ms=-3"),
            (
                "ubfm:evaluator=oracle",
                "evaluator must be heuristic or uniform",
            ),
            (
                "ubfm:evaluator=uniform,path=m.st",
                "either evaluator= or path=",
            ),
            ("ubfm:evaluator=heuristic,device=cuda", "need a network"),
            ("ubfm:path=m.st,precision=fp8", "precision 'fp8'"),
            ("ubfm:path=m.st,completion=maybe", "completion=maybe"),
            ("ubfm:sims=30", "unknown key 'sims'"),
            ("ubfm:path", "'path' should be key=value"),
        ] {
            let e = PlayerSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }

    #[test]
    fn network_players_need_a_loader() {
        let spec = PlayerSpec::parse("ubfm:path=x.safetensors,nodes=8").unwrap();
        let e = PlayerFactory::new()
            .build(&spec, 1)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("network loader"), "{e}");
    }

    /// Legal moves in positions of every variant, by time, by iterations and by a time
    /// budget, with a summary of each search.
    #[test]
    fn players_answer_with_legal_moves_in_every_variant() {
        let factory = PlayerFactory::new();
        let games = loa::testing::random_games(&Variant::ALL, Rules::classic(), 21, 40, 11);
        for text in [
            "ubfm:evaluator=heuristic,ms=20",
            "ubfm:evaluator=uniform,nodes=30",
            "ubfm:evaluator=heuristic,nodes=30,completion=off",
        ] {
            let spec = PlayerSpec::parse(text).unwrap();
            let mut player = factory.build(&spec, 1).unwrap();
            assert_eq!(player.name(), spec.name());
            assert_eq!(player.last_info(), None);
            for game in &games {
                let legal = game.legal_moves();
                let mv = player.choose_move(game).unwrap();
                assert!(legal.contains(&mv), "{text} {}", game.position().to_text());
                let info = player.last_info().unwrap();
                assert_eq!(SearchInfo::parse(&info.line()).unwrap(), info);
                assert_eq!(info.pv.first(), Some(&mv.to_string()), "{}", info.line());
                let mv = player
                    .choose_move_within(game, Duration::from_millis(5))
                    .unwrap();
                assert!(legal.contains(&mv), "{text} {}", game.position().to_text());
            }
        }
    }

    /// `ms=20` keeps to its time (the root's expansion aside) and plays a whole game.
    #[test]
    fn a_timed_player_keeps_time_and_finishes_games() {
        let spec = PlayerSpec::parse("ubfm:evaluator=heuristic,ms=20").unwrap();
        let mut player = PlayerFactory::new().build(&spec, 1).unwrap();
        let mut game = Game::new(Variant::Six, Rules::classic());
        let mut slowest = Duration::ZERO;
        for _ in 0..300 {
            if game.is_over() {
                break;
            }
            let started = Instant::now();
            let mv = player.choose_move(&game).unwrap();
            slowest = slowest.max(started.elapsed());
            game.play(mv).unwrap();
        }
        assert!(game.is_over(), "300 plies without an end");
        // Loose: the machine may be busy; without the deadline a move takes seconds.
        assert!(slowest < Duration::from_millis(1000), "{slowest:?}");
        assert!(player
            .choose_move(&game)
            .unwrap_err()
            .to_string()
            .contains("game is over"));
    }
}
