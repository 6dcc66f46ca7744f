//! The limits of an alpha-beta player's spec reach its searches: `depth=N` searches exactly
//! depth N (and no limit at all, depth [`DEFAULT_DEPTH`]), `nodes=N` stops within N nodes
//! after using them, `ms=T` completes depth 1 and stops, and the caps a timed spec keeps
//! (`depth=`, `nodes=`) end its search as they end a fixed one. Nothing here depends on
//! the machine's speed: the time budgets are either far beyond what the other limits let
//! the search use, or only asked to return with a completed first depth (the clock is read
//! every 1024 nodes, more than a search to depth 1 visits here).

use eval::player::alphabeta::{search_settings, DEFAULT_DEPTH};
use eval::player::{AlphaBetaPlayer, Score, SearchInfo};
use eval::search::SearchResult;
use eval::{Player, PlayerFactory, PlayerSpec};
use loa::{Game, Rules, Variant};
use std::time::Duration;

/// The positions searched: one early middle game of every variant (random plies from its
/// start, seeded), none with a forced result within reach (checked: every search here
/// reports an evaluation, not a win or loss, so no search ends early at a proven result).
fn positions() -> Vec<Game> {
    loa::testing::random_games(&Variant::ALL, Rules::classic(), Variant::ALL.len(), 20, 62)
}

/// One move of a fresh player of `spec` (built from its search settings, as the factory
/// builds it) at `game`: what it reports and its search's result.
fn search(spec: &str, game: &Game) -> (SearchInfo, SearchResult) {
    let spec = PlayerSpec::parse(spec).unwrap();
    let (limits, config) = search_settings(&spec).unwrap();
    let mut player = AlphaBetaPlayer::new(spec.name(), config, limits);
    let mv = player.choose_move(game).unwrap();
    assert!(game.legal_moves().contains(&mv), "{spec}");
    let r = player.last_result().unwrap().clone();
    assert_eq!(r.best_move, mv, "{spec}");
    (player.last_info().unwrap(), r)
}

/// The depths of `r`'s completed iterations.
fn depths(r: &SearchResult) -> Vec<u32> {
    r.iterations.iter().map(|i| i.depth).collect()
}

/// Whether `info` reports an evaluation (no forced result).
fn evaluated(info: &SearchInfo) -> bool {
    matches!(info.score, Some(Score::Cp(_)))
}

/// `depth=N` (1 to 4, on one and two threads) searches every depth up to N and stops
/// there: the result and the `info` report depth N, the iterations are 1..=N, the move is
/// the last iteration's; a spec without limits searches exactly [`DEFAULT_DEPTH`]. The
/// player the factory builds reports the same search (one thread is deterministic).
#[test]
fn a_depth_spec_searches_exactly_that_depth() {
    let factory = PlayerFactory::new();
    for game in positions() {
        let variant = game.position().variant();
        for n in 1..=4u32 {
            for threads in [1, 2] {
                let text = format!("alphabeta:depth={n},threads={threads}");
                let (info, r) = search(&text, &game);
                assert!(evaluated(&info), "{variant} {text}: {:?}", info.score);
                assert_eq!(r.depth, n, "{variant} {text}");
                assert_eq!(info.depth, Some(n), "{variant} {text}");
                if threads == 1 {
                    assert_eq!(depths(&r), (1..=n).collect::<Vec<_>>(), "{variant} {text}");
                }
                assert_eq!(r.iterations.last().unwrap().depth, n, "{variant} {text}");
                assert_eq!(r.pv()[0], r.best_move, "{variant} {text}");
            }
            let text = format!("alphabeta:depth={n}");
            let (info, _) = search(&text, &game);
            let mut built = factory
                .build(&PlayerSpec::parse(&text).unwrap(), 1)
                .unwrap();
            built.choose_move(&game).unwrap();
            let from_factory = built.last_info().unwrap();
            assert_eq!(
                (from_factory.depth, from_factory.nodes, &from_factory.pv),
                (info.depth, info.nodes, &info.pv),
                "{variant} {text}"
            );
        }
        let (info, r) = search("alphabeta", &game);
        assert_eq!(r.depth, DEFAULT_DEPTH, "{variant}");
        assert_eq!(info.depth, Some(DEFAULT_DEPTH), "{variant}");
    }
}

/// `nodes=N` on one thread uses its budget and stops within it: N or N + 1 nodes (the
/// count is checked at every node; a connecting move is counted without a check), at
/// least depth 1 completed, the move that of the last completed iteration (whose nodes
/// are within the budget), and the same search twice. On two threads the budget is
/// shared out: at most N + 3 nodes in all.
#[test]
fn a_node_spec_stops_within_its_budget() {
    for game in positions() {
        let variant = game.position().variant();
        for n in [1_000u64, 5_000, 20_000] {
            let text = format!("alphabeta:nodes={n}");
            let (info, r) = search(&text, &game);
            assert!(evaluated(&info), "{variant} {text}: {:?}", info.score);
            assert!(
                (n..=n + 1).contains(&r.nodes),
                "{variant} {text}: {}",
                r.nodes
            );
            assert_eq!(info.nodes, r.nodes, "{variant} {text}");
            assert!(r.depth >= 1, "{variant} {text}");
            assert_eq!(info.depth, Some(r.depth), "{variant} {text}");
            let last = r.iterations.last().unwrap();
            assert_eq!(last.depth, r.depth, "{variant} {text}");
            assert!(last.nodes <= n, "{variant} {text}: {}", last.nodes);
            assert_eq!(last.pv[0], r.best_move, "{variant} {text}");
            let (_, again) = search(&text, &game);
            assert_eq!(
                (again.best_move, again.score, again.depth, again.nodes),
                (r.best_move, r.score, r.depth, r.nodes),
                "{variant} {text}"
            );
            let text = format!("alphabeta:nodes={n},threads=2");
            let (_, r) = search(&text, &game);
            assert!(r.nodes <= n + 3, "{variant} {text}: {}", r.nodes);
            assert!(r.depth >= 1, "{variant} {text}");
        }
    }
}

/// `ms=T` completes depth 1 and stops, even at 1 ms (the deadline is only read every 1024
/// nodes), reporting the depth it completed. The caps a timed spec keeps end its search:
/// with a minute to think, `depth=2` stops at depth 2 and `nodes=N` within N + 1 nodes,
/// by `choose_move` and by `choose_move_within` a minute (a budget replaces the spec's
/// `ms` and keeps its caps).
#[test]
fn a_timed_spec_completes_a_depth_and_stops() {
    for game in positions() {
        let variant = game.position().variant();
        // What makes the next searches independent of speed: depth 1 visits fewer nodes
        // than the 1024 after which the clock is first read.
        let (_, one) = search("alphabeta:depth=1", &game);
        assert!(
            one.nodes < 1024,
            "{variant}: depth 1 in {} nodes",
            one.nodes
        );
        for ms in [1, 20] {
            let text = format!("alphabeta:ms={ms}");
            let (info, r) = search(&text, &game);
            assert!(r.depth >= 1, "{variant} {text}");
            assert_eq!(info.depth, Some(r.depth), "{variant} {text}");
            assert_eq!(depths(&r), (1..=r.depth).collect::<Vec<_>>(), "{variant}");
            assert!(r.nodes > 0, "{variant} {text}");
        }
        let minute = Duration::from_secs(60);
        for text in [
            "alphabeta:ms=60000,depth=2",
            "alphabeta:ms=60000,nodes=3000",
        ] {
            let (info, by_move) = search(text, &game);
            assert!(evaluated(&info), "{variant} {text}: {:?}", info.score);
            let spec = PlayerSpec::parse(text).unwrap();
            let (limits, config) = search_settings(&spec).unwrap();
            let mut player = AlphaBetaPlayer::new(spec.name(), config, limits);
            player.choose_move_within(&game, minute).unwrap();
            let within = player.last_result().unwrap().clone();
            for (how, r) in [("choose_move", by_move), ("choose_move_within", within)] {
                let what = format!("{variant} {text} ({how})");
                match limits.depth {
                    Some(d) => assert_eq!(r.depth, d, "{what}"),
                    None => assert!((3_000..=3_001).contains(&r.nodes), "{what}: {}", r.nodes),
                }
            }
        }
    }
}
