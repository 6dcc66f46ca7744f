use super::*;
use crate::{HeuristicEvaluator, UniformEvaluator};
use loa::{Color, Outcome, Variant};

/// The position where only `e2-e5` wins, in 3 plies (black: c6, e2).
const WIN_IN_3: &str = "5w2/4w3/2b1w3/8/8/8/1ww1b3/8 b";
/// The position where every black move but `d4-f4` lets White connect at once, and
/// `d4-f4` loses in 4 plies.
const LONGEST_LOSS: &str = "8/8/5wb1/b4wwb/3b2w1/8/4w3/3b4 b";

fn game(text: &str) -> Game {
    let pos = Position::from_text(text, Variant::Standard).unwrap();
    Game::from_position(pos, Rules::classic())
}

fn moves_of(pos: &Position) -> Vec<Move> {
    let mut list = MoveList::new();
    pos.generate_moves(&mut list);
    if list.is_empty() {
        list.push(Move::PASS);
    }
    list.iter().copied().collect()
}

fn limits(iterations: u32) -> UbfmLimits {
    UbfmLimits {
        iterations,
        deadline: None,
    }
}

fn search(g: &Game, ev: &dyn Evaluator, completion: bool, iterations: u32) -> (Ubfm, Move) {
    let mut s = Ubfm::new(UbfmConfig {
        completion,
        ..UbfmConfig::default()
    });
    let mv = s.choose_move(g, ev, limits(iterations)).unwrap();
    (s, mv)
}

/// The game's end after `mv` made `child`, by the rules (repetitions aside).
fn end_of(child: &Position, mv: Move, rules: &Rules) -> Option<Outcome> {
    child
        .connection_outcome_after(mv, rules)
        .or_else(|| child.non_connection_outcome(rules))
}

/// Brute force: whether `pos`'s side to move can force a win within `plies` plies.
fn wins_within(pos: &Position, rules: &Rules, plies: u32) -> bool {
    if plies == 0 {
        return false;
    }
    let us = pos.to_move();
    moves_of(pos).into_iter().any(|mv| {
        let child = pos.after(mv);
        match end_of(&child, mv, rules) {
            Some(o) => o == Outcome::Win(us),
            None if child.to_move() == us => wins_within(&child, rules, plies - 1),
            None => loses_within(&child, rules, plies - 1),
        }
    })
}

/// Brute force: whether every move of `pos`'s side to move loses within `plies` plies.
fn loses_within(pos: &Position, rules: &Rules, plies: u32) -> bool {
    if plies == 0 {
        return false;
    }
    let us = pos.to_move();
    moves_of(pos).into_iter().all(|mv| {
        let child = pos.after(mv);
        match end_of(&child, mv, rules) {
            Some(o) => o == Outcome::Win(us.opponent()),
            None if child.to_move() == us => loses_within(&child, rules, plies - 1),
            None => wins_within(&child, rules, plies - 1),
        }
    })
}

/// Brute force: the fewest plies within which the opponent wins after `mv` (at most
/// `max`), `None` if not within `max`.
fn opponent_wins_after(pos: &Position, mv: &str, max: u32) -> Option<u32> {
    let rules = Rules::classic();
    let mv = pos.parse_move(mv, &rules).unwrap();
    let child = pos.after(mv);
    assert_eq!(end_of(&child, mv, &rules), None, "{mv} ends the game");
    (1..=max).find(|&n| wins_within(&child, &rules, n))
}

/// Every position valued +0.2 for its side to move (a tempo evaluation): every move
/// looks slightly bad for its mover, so a move into a drawn position looks best.
struct TempoEvaluator;

impl Evaluator for TempoEvaluator {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        UniformEvaluator::new().evaluate(batch)?;
        batch.values.fill(0.2);
        Ok(())
    }
    fn name(&self) -> String {
        "tempo".into()
    }
}

#[test]
fn results_are_ranked_as_completion_ranks_them() {
    use Resolution::*;
    let order = |a: (Resolution, f32), b: (Resolution, f32)| completed_order(a, b);
    // Proven win > unresolved (whatever its value) = draw by value > proven loss.
    assert_eq!(order((Win(9), 0.5), (Unresolved, 1.0)), Ordering::Greater);
    assert_eq!(order((Loss(1), -1.0), (Unresolved, -1.0)), Ordering::Less);
    assert_eq!(order((Draw, 0.0), (Unresolved, 0.1)), Ordering::Less);
    assert_eq!(order((Draw, 0.0), (Unresolved, -0.0)), Ordering::Equal);
    // The fastest win, the slowest loss.
    assert_eq!(order((Win(1), 0.0), (Win(3), 0.0)), Ordering::Greater);
    assert_eq!(order((Loss(5), 0.0), (Loss(2), 0.0)), Ordering::Greater);
    // One ply up: the opponent's loss in d is a win in d + 1; across a drop, the same.
    assert_eq!(Loss(0).one_ply_before(true), Win(1));
    assert_eq!(Win(2).one_ply_before(true), Loss(3));
    assert_eq!(Win(1).one_ply_before(false), Win(2));
    assert_eq!(Draw.one_ply_before(true), Draw);
    assert_eq!(Unresolved.one_ply_before(true), Unresolved);
    // The terminal reward: 1 − d/1000, a draw 0.
    assert_eq!(Win(1).value(), Some(0.999));
    assert_eq!(Loss(4).value(), Some(-0.996));
    assert_eq!(Draw.value(), Some(0.0));
    assert_eq!(Unresolved.value(), None);
    assert!(Win(60000).value().unwrap() >= 0.5);
}

/// The two test positions are what the tests below say they are (brute force).
#[test]
fn the_test_positions_are_what_they_claim() {
    let rules = Rules::classic();
    let pos = *game(WIN_IN_3).position();
    assert!(!wins_within(&pos, &rules, 1));
    assert!(wins_within(&pos, &rules, 3));
    for mv in moves_of(&pos) {
        let child = pos.after(mv);
        assert_eq!(end_of(&child, mv, &rules), None);
        // The opponent loses within 2 plies after e2-e5 and after no other move.
        let wins = loses_within(&child, &rules, 2);
        assert_eq!(wins, mv.to_string() == "e2-e5", "{mv}");
    }
    let pos = *game(LONGEST_LOSS).position();
    for mv in moves_of(&pos) {
        let text = mv.to_string();
        let expected = if text == "d4-f4" { Some(3) } else { Some(1) };
        assert_eq!(opponent_wins_after(&pos, &text, 3), expected, "{text}");
    }
}

/// The win-in-3 position reached by a game in which `e2-f3` would repeat a position for
/// the third time (a draw by the rules).
fn win_in_3_with_a_repetition() -> Game {
    let mut g = game("5w2/4w3/2b1w3/8/8/5b2/1ww5/8 w");
    for mv in [
        "b2-b3", "f3-e2", "b3-b2", "e2-f3", "b2-b3", "f3-e2", "b3-b2",
    ] {
        g.play_text(mv).unwrap();
    }
    assert_eq!(g.position(), game(WIN_IN_3).position());
    assert!(!g.is_over());
    g
}

/// A third repetition is a draw, found without the evaluator.
#[test]
fn a_third_repetition_is_a_draw() {
    let g = win_in_3_with_a_repetition();
    let (s, _) = search(&g, &UniformEvaluator::new(), true, 1);
    let repeat = s
        .root_moves()
        .into_iter()
        .find(|m| m.mv.to_string() == "e2-f3")
        .unwrap();
    assert_eq!(repeat.resolution, Resolution::Draw);
    // Without the history, the same move is an ordinary one.
    let (s, _) = search(&game(WIN_IN_3), &UniformEvaluator::new(), true, 1);
    let plain = s
        .root_moves()
        .into_iter()
        .find(|m| m.mv.to_string() == "e2-f3")
        .unwrap();
    assert_eq!(plain.resolution, Resolution::Unresolved);
}

/// The papers' point: without completion, a best line that ends in a finished game (here
/// a repetition draw that the evaluator makes look best) stops the search; completion
/// marks it resolved, searches the other moves and proves the forced win.
#[test]
fn completion_finds_the_forced_win_that_plain_ubfm_misses() {
    let g = win_in_3_with_a_repetition();
    let budget = 200;
    let (s, mv) = search(&g, &TempoEvaluator, true, budget);
    assert_eq!(mv.to_string(), "e2-e5", "{}", s.stats().summary());
    assert_eq!(s.root_resolution(), Resolution::Win(3));
    assert_eq!(s.stats().stopped_by, "resolved");
    assert!(s.stats().iterations < budget);
    assert_eq!(s.stats().pv.first(), Some(&mv));

    let (plain, plain_mv) = search(&g, &TempoEvaluator, false, budget);
    assert_ne!(plain_mv.to_string(), "e2-e5", "{}", plain.stats().summary());
    assert_eq!(plain.root_resolution(), Resolution::Unresolved);
    // The move it plays does not win within 3 plies (brute force).
    let pos = *g.position();
    let child = pos.after(plain_mv);
    assert!(!loses_within(&child, g.rules(), 2), "{plain_mv}");

    // Without the repetition, both find the move, but only completion proves it (and
    // stops at once).
    let g = game(WIN_IN_3);
    for ev in [
        &HeuristicEvaluator::new() as &dyn Evaluator,
        &UniformEvaluator::new(),
    ] {
        let (s, mv) = search(&g, ev, true, budget);
        assert_eq!(
            (mv.to_string().as_str(), s.root_resolution()),
            ("e2-e5", Resolution::Win(3))
        );
        assert_eq!(s.stats().iterations, 2, "the root, then e2-e5");
        let (plain, mv) = search(&g, ev, false, budget);
        assert_eq!(mv.to_string(), "e2-e5");
        assert_eq!(plain.root_resolution(), Resolution::Unresolved);
    }
}

/// When every move loses, the player takes the slowest loss (brute force: every other
/// move lets White connect at once); plain UBFM, whose backed-up values forget the
/// distance, takes a quick one.
#[test]
fn it_prefers_the_longest_loss() {
    let g = game(LONGEST_LOSS);
    for ev in [
        &HeuristicEvaluator::new() as &dyn Evaluator,
        &UniformEvaluator::new(),
    ] {
        let (s, mv) = search(&g, ev, true, 100);
        assert_eq!(mv.to_string(), "d4-f4", "{}", s.stats().summary());
        assert_eq!(s.root_resolution(), Resolution::Loss(4));
        for m in s.root_moves() {
            let expected = if m.mv == mv {
                Resolution::Loss(4)
            } else {
                Resolution::Loss(2)
            };
            assert_eq!(m.resolution, expected, "{}", m.mv);
        }
        let (_, plain_mv) = search(&g, ev, false, 100);
        assert_eq!(
            opponent_wins_after(g.position(), &plain_mv.to_string(), 3),
            Some(1),
            "{plain_mv}"
        );
    }
}

/// Over positions of random games of every variant: the move is legal; a proven win
/// or loss holds by brute force; a proven loss is played only when every move is one.
#[test]
fn proofs_hold_and_moves_are_legal_in_every_variant() {
    let games = loa::testing::random_games(&Variant::ALL, Rules::classic(), 500, 160, 7);
    let mut checked = [0usize; 2];
    for g in &games {
        let (s, mv) = search(g, &HeuristicEvaluator::new(), true, 60);
        let pos = *g.position();
        assert!(g.legal_moves().contains(&mv), "{}", pos.to_text());
        let rules = g.rules();
        let moves = s.root_moves();
        if matches!(
            moves.iter().find(|m| m.mv == mv).unwrap().resolution,
            Resolution::Loss(_)
        ) {
            assert!(moves
                .iter()
                .all(|m| matches!(m.resolution, Resolution::Loss(_))));
        }
        match s.root_resolution() {
            Resolution::Win(d) if d <= 3 => {
                assert!(
                    wins_within(&pos, rules, d as u32),
                    "{} {}",
                    pos.to_text(),
                    s.stats().summary()
                );
                checked[0] += 1;
            }
            Resolution::Loss(d) if d <= 3 => {
                assert!(
                    loses_within(&pos, rules, d as u32),
                    "{} {}",
                    pos.to_text(),
                    s.stats().summary()
                );
                checked[1] += 1;
            }
            _ => {}
        }
    }
    assert!(
        checked[0] >= 20 && checked[1] >= 3,
        "proofs checked: {checked:?}"
    );
}

#[test]
fn a_finished_game_has_no_move() {
    // Black connected: the game is over.
    let g = game("8/8/8/3bb3/8/8/3w4/w7 w");
    assert!(g.is_over());
    let mut s = Ubfm::new(UbfmConfig::default());
    let e = s
        .choose_move(&g, &UniformEvaluator::new(), limits(10))
        .unwrap_err()
        .to_string();
    assert!(e.contains("game is over"), "{e}");
}

/// A position with one legal move (here a pass) is answered after the root's expansion.
#[test]
fn a_single_legal_move_is_played_at_once() {
    let mut rng = loa::testing::XorShift::new(5);
    let rules = Rules::classic();
    let g = Variant::Six.geometry();
    let mut found = 0;
    for _ in 0..3_000_000 {
        let pick = |rng: &mut loa::testing::XorShift, n: usize| {
            (0..n).fold(0u64, |a, _| {
                a | 1u64 << g.sparse[rng.below(g.num_cells as usize)]
            })
        };
        let (nb, nw) = (2 + rng.below(5), 2 + rng.below(8));
        let black = pick(&mut rng, nb);
        let white = pick(&mut rng, nw) & !black;
        let Ok(pos) =
            Position::with_extra(Variant::Six, black, white, Color::Black, Default::default())
        else {
            continue;
        };
        if pos.outcome(&rules).is_some() || pos.legal_moves(&rules).len() != 1 {
            continue;
        }
        let game = Game::from_position(pos, rules);
        let (s, mv) = search(&game, &UniformEvaluator::new(), true, 1000);
        assert_eq!(mv, pos.legal_moves(&rules)[0]);
        assert!(s.stats().iterations == 1 || s.root_resolution().is_resolved());
        found += 1;
        if found == 3 {
            break;
        }
    }
    assert_eq!(found, 3);
}

#[test]
fn the_budget_and_the_deadline_stop_the_search() {
    let g = Game::new(Variant::Standard, Rules::classic());
    let mut s = Ubfm::new(UbfmConfig::default());
    let past = UbfmLimits {
        iterations: 1000,
        deadline: Some(Instant::now()),
    };
    let mv = s.choose_move(&g, &HeuristicEvaluator::new(), past).unwrap();
    assert!(g.legal_moves().contains(&mv));
    assert_eq!(s.stats().iterations, 1, "the root is always expanded");
    assert_eq!(s.stats().stopped_by, "deadline");
    s.search(&g, &HeuristicEvaluator::new(), limits(25))
        .unwrap();
    assert_eq!(s.stats().iterations, 25);
    assert_eq!(s.stats().stopped_by, "budget");
    assert!(s.stats().evaluations > 25 * 10);
    assert!(!s.stats().pv.is_empty());
    // A small table stops it too.
    let mut small = Ubfm::new(UbfmConfig {
        max_entries: 200,
        ..UbfmConfig::default()
    });
    small
        .search(&g, &HeuristicEvaluator::new(), limits(1000))
        .unwrap();
    assert_eq!(small.stats().stopped_by, "table full");
    assert!(small.stats().entries <= 200);
}

/// An evaluator that returns NaN.
struct BrokenEvaluator;

impl Evaluator for BrokenEvaluator {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        UniformEvaluator::new().evaluate(batch)?;
        batch.values.fill(f32::NAN);
        Ok(())
    }
    fn name(&self) -> String {
        "broken".into()
    }
}

#[test]
fn evaluator_failures_are_errors() {
    let g = Game::new(Variant::Standard, Rules::classic());
    let e = Ubfm::new(UbfmConfig::default())
        .choose_move(&g, &BrokenEvaluator, limits(5))
        .unwrap_err()
        .to_string();
    assert!(e.contains("non-finite"), "{e}");
}

fn descent_config() -> UbfmConfig {
    UbfmConfig {
        descend_to_terminal: true,
        ..UbfmConfig::default()
    }
}

/// The line one iteration took: from the root, the child each state's descent went
/// through (exactly one per state after one iteration), to where it ended: `Some(r)`
/// when it ended in a finished game or a resolved state, `None` at a state that is
/// neither (the state it expanded last). Also returns the states of the line.
fn line_of_one_iteration(s: &Ubfm) -> (Option<Resolution>, Vec<u64>) {
    let mut key = s.root;
    let mut states = vec![key];
    loop {
        let e = &s.table[&key];
        // Where no descent went on: a state proven when the line reached it, or the
        // state UBFM's iteration stopped at.
        let end = Some(e.resolution).filter(|r| r.is_resolved());
        let Some(children) = &e.children else {
            return (end, states);
        };
        let visited: Vec<&Child> = children.iter().filter(|c| c.visits > 0).collect();
        if visited.is_empty() {
            return (end, states);
        }
        assert_eq!(visited.len(), 1, "one iteration goes through one child");
        assert_eq!(visited[0].visits, 1);
        match visited[0].target {
            Target::Exact(r) => return (Some(r), states),
            Target::State(k) => {
                key = k;
                states.push(k);
            }
        }
    }
}

/// One Descent iteration follows its best line down to the end of the game (or a
/// proven state), expanding every state on its way; a UBFM iteration expands one.
#[test]
fn a_descent_iteration_goes_down_to_a_finished_game() {
    let g = Game::new(Variant::Standard, Rules::classic());
    let ev = HeuristicEvaluator::new();
    let mut ubfm = Ubfm::new(UbfmConfig::default());
    ubfm.search(&g, &ev, limits(1)).unwrap();
    assert_eq!(ubfm.stats().expansions, 1);
    assert_eq!(line_of_one_iteration(&ubfm), (None, vec![ubfm.root]));

    let mut descent = Ubfm::new(descent_config());
    descent.search(&g, &ev, limits(1)).unwrap();
    let (end, states) = line_of_one_iteration(&descent);
    assert!(end.is_some(), "the line ends at an unexpanded state");
    assert!(states.len() > 10, "a line of {} states", states.len());
    // Every state of the line is expanded and was evaluated in one batch per state.
    let expanded: Vec<&u64> = states
        .iter()
        .filter(|k| descent.table[k].children.is_some())
        .collect();
    assert_eq!(expanded.len(), states.len());
    assert_eq!(descent.stats().expansions as usize, expanded.len());
    // Every expanded state is listed for tree learning, with its table value.
    let listed: HashMap<u64, f32> = descent
        .searched_states()
        .map(|(k, pos, v, _)| {
            assert_eq!(pos.hash(), k);
            (k, v)
        })
        .collect();
    for k in expanded {
        assert_eq!(listed.get(k), Some(&descent.table[k].value));
    }
    // UBFM lists nothing.
    assert_eq!(ubfm.searched_states().count(), 0);
}

/// The backed-up values: after a Descent search the root holds the negamax of its
/// children, and proven states hold the terminal reward ±(1 − d/1000).
#[test]
fn descent_backs_up_minimax_values_and_the_terminal_reward() {
    let g = Game::new(Variant::Standard, Rules::classic());
    let mut s = Ubfm::new(descent_config());
    s.search(&g, &HeuristicEvaluator::new(), limits(6)).unwrap();
    assert_eq!(s.stats().iterations, 6);
    let mut proven = 0;
    for (_, _, value, resolution) in s.searched_states() {
        if let Some(exact) = resolution.value() {
            proven += 1;
            assert_eq!(value, exact);
            match resolution {
                Resolution::Win(d) => assert_eq!(value, 1.0 - d as f32 / 1000.0),
                Resolution::Loss(d) => assert_eq!(value, -(1.0 - d as f32 / 1000.0)),
                _ => assert_eq!(value, 0.0),
            }
        }
    }
    assert!(
        proven > 0,
        "six lines to the end of the game prove some states"
    );
    // The root (recomputed at the end of every iteration) holds its best child's value,
    // seen from its side: the negamax of its children.
    let children = s.table[&s.root].children.as_ref().unwrap();
    let best = children
        .iter()
        .map(|c| s.child_result(c))
        .reduce(|a, b| {
            if completed_order(b, a) == Ordering::Greater {
                b
            } else {
                a
            }
        })
        .unwrap();
    assert_eq!(s.root_value(), best.1);
    assert!(s.root_value() != 0.0);
    // The forced win in 3 plies: proven, worth 1 − 3/1000 at the root, and the losing
    // side's replies are worth −(1 − 2/1000) to it.
    let mut s = Ubfm::new(descent_config());
    let mv = s
        .choose_move(&game(WIN_IN_3), &TempoEvaluator, limits(50))
        .unwrap();
    assert_eq!(mv.to_string(), "e2-e5");
    assert_eq!(s.root_resolution(), Resolution::Win(3));
    assert_eq!(s.root_value(), 1.0 - 3.0 / 1000.0);
    let win = s.root_moves().into_iter().find(|m| m.mv == mv).unwrap();
    assert_eq!(win.value, 0.997);
    let after = s.table[&game(WIN_IN_3).position().after(mv).hash()].value;
    assert_eq!(after, -(1.0 - 2.0 / 1000.0));
    // And the longest loss.
    let mut s = Ubfm::new(descent_config());
    s.search(&game(LONGEST_LOSS), &UniformEvaluator::new(), limits(100))
        .unwrap();
    assert_eq!(s.root_resolution(), Resolution::Loss(4));
    assert_eq!(s.root_value(), -0.996);
}

/// Stepping a search by hand (advance, gather, absorb: how self-play batches many
/// games) gives what `search` gives.
#[test]
fn stepped_searches_equal_whole_ones() {
    let g = Game::new(Variant::Standard, Rules::classic());
    let ev = HeuristicEvaluator::new();
    for config in [UbfmConfig::default(), descent_config()] {
        let mut whole = Ubfm::new(config);
        whole.search(&g, &ev, limits(5)).unwrap();
        let mut stepped = Ubfm::new(config);
        stepped.set_root(&g).unwrap();
        let mut batch = EvalBatch::new();
        let mut calls = 0;
        let reason = loop {
            if let Some(reason) = stepped.advance(limits(5)).unwrap() {
                break reason;
            }
            // Values must be handed back before the search goes on.
            assert!(stepped.advance(limits(5)).is_err());
            batch.clear();
            let n = stepped.gather(&mut batch);
            assert_eq!(n, stepped.pending_evaluations());
            assert!(n > 0);
            ev.evaluate(&mut batch).unwrap();
            stepped.absorb(&batch.values).unwrap();
            calls += 1;
        };
        assert_eq!(reason, whole.stats().stopped_by);
        assert_eq!(stepped.stats(), whole.stats());
        // One evaluator call per expansion with new children to value.
        assert!(calls > 0 && calls <= whole.stats().expansions);
        // A wrong number of values is an error.
        let mut s = Ubfm::new(config);
        s.set_root(&g).unwrap();
        assert!(s.advance(limits(5)).unwrap().is_none());
        let e = s.absorb(&[0.0]).unwrap_err().to_string();
        assert!(e.contains("values for"), "{e}");
    }
}

/// Keeping the table between moves: the search of the next move starts from what the
/// last one built.
#[test]
fn a_kept_table_carries_the_tree_to_the_next_move() {
    let mut g = Game::new(Variant::Standard, Rules::classic());
    let ev = HeuristicEvaluator::new();
    let mut s = Ubfm::new(descent_config());
    let mv = s.choose_move(&g, &ev, limits(3)).unwrap();
    let entries = s.table_len();
    g.play(mv).unwrap();
    s.set_root_keeping_table(&g).unwrap();
    assert_eq!(s.table_len(), entries);
    assert_eq!(s.root_key(), g.position().hash());
    assert_eq!(s.stats().iterations, 0);
    assert!(
        s.table[&s.root].children.is_some(),
        "the line went through the move"
    );
    s.set_root(&g).unwrap();
    assert_eq!(s.table_len(), 1);
    assert_eq!(s.searched_states().count(), 0);
}
