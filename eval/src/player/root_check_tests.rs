//! Every searching player, at the settings the ratings and tests use, plays every tactic
//! of the brute-force tactical set ([`loa::forced_set::test_set`]): the shortest forced
//! win within three turns, and never a move that loses sooner than another.

use super::{PlayerFactory, PlayerSpec};
use loa::forced_set::test_set;

/// The positions of the set where the player `spec` does not play a best move.
fn misses(spec: &str) -> Vec<String> {
    let set = test_set();
    let spec = PlayerSpec::parse(spec).unwrap();
    let mut player = PlayerFactory::new().build(&spec, 7).unwrap();
    set.iter()
        .filter_map(|p| {
            let mv = player.choose_move(&p.game).unwrap();
            (!p.is_best(mv)).then(|| format!("{} played {mv}", p.describe()))
        })
        .collect()
}

fn assert_plays_every_tactic(spec: &str) {
    let missed = misses(spec);
    assert!(
        missed.is_empty(),
        "{spec}: {} missed: {missed:#?}",
        missed.len()
    );
}

#[test]
fn gumbel_mcts_at_64_simulations_plays_every_tactic() {
    assert_plays_every_tactic("mcts:evaluator=heuristic,sims=64,gumbel=on");
}

#[test]
fn puct_mcts_at_64_simulations_plays_every_tactic() {
    assert_plays_every_tactic("mcts:evaluator=uniform,sims=64");
}

#[test]
fn timed_mcts_plays_every_tactic() {
    assert_plays_every_tactic("mcts:evaluator=heuristic,ms=5");
}

#[test]
fn alphabeta_at_depth_1_plays_every_tactic() {
    assert_plays_every_tactic("alphabeta:depth=1");
}

#[test]
fn timed_alphabeta_plays_every_tactic() {
    assert_plays_every_tactic("alphabeta:ms=50");
}

#[test]
fn ubfm_at_its_default_nodes_plays_every_tactic() {
    assert_plays_every_tactic("ubfm:evaluator=heuristic");
}

#[test]
fn timed_ubfm_plays_every_tactic() {
    assert_plays_every_tactic("ubfm:evaluator=uniform,ms=5");
}
