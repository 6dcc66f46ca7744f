//! Every searching player, at the settings the ratings and tests use, plays every tactic
//! of the brute-force tactical set ([`loa::forced_set::test_set`]): the shortest forced
//! win within three turns, and never a move that loses sooner than another.

use super::{PlayerFactory, PlayerSpec};
use loa::forced_set::test_set;

/// The positions of the set where the player `spec` does not play a best move.
fn misses(spec: &str) -> Vec<String> {
    misses_in(spec, |_| true)
}

/// [`misses`] over the positions of the variants `keep` accepts.
fn misses_in(spec: &str, keep: impl Fn(loa::Variant) -> bool) -> Vec<String> {
    let set = test_set();
    let spec = PlayerSpec::parse(spec).unwrap();
    let mut player = PlayerFactory::new().build(&spec, 7).unwrap();
    set.iter()
        .filter(|p| keep(p.game.position().variant()))
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

/// The learned alpha-beta, with random weights (the worst evaluation it can have), on the
/// positions of the variants its feature set covers (there are some of each tactic).
#[test]
fn learned_alphabeta_plays_every_tactic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nnue-0001.safetensors");
    crate::learned::Weights::random(5).save(&path).unwrap();
    let covered = test_set()
        .iter()
        .filter(|p| crate::learned::supports(p.game.position().variant()))
        .count();
    assert!(covered >= 10, "{covered}");
    for spec in [
        format!("alphabeta:depth=1,eval={}", path.display()),
        format!("alphabeta:ms=50,eval={}", path.display()),
    ] {
        let missed = misses_in(&spec, crate::learned::supports);
        assert!(
            missed.is_empty(),
            "{spec}: {} missed: {missed:#?}",
            missed.len()
        );
    }
}
