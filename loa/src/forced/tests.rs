use super::*;
use crate::forced_set::{reference_values, ReferenceValue, TacticClass};
use crate::Variant;
use std::time::Instant;

/// The solver's value in the reference's terms.
fn as_reference(v: MoveValue) -> ReferenceValue {
    match v {
        MoveValue::Win(p) => ReferenceValue::Win(p),
        MoveValue::Loss(p) => ReferenceValue::Loss(p),
        MoveValue::Open => ReferenceValue::Open,
    }
}

/// Asserts that the solver's values and verdict on `game` agree with `reference`.
fn assert_agrees(game: &Game, reference: &[(Move, ReferenceValue)]) {
    let text = format!(
        "{} [{}] {}",
        game.position().variant(),
        game.rules(),
        game.position().to_text()
    );
    let values = move_values(game.position(), game.rules(), game.history());
    let solver: Vec<(Move, ReferenceValue)> =
        values.iter().map(|&(m, v)| (m, as_reference(v))).collect();
    assert_eq!(solver, reference, "{text}");
    match solve(game) {
        Forced::Win { mv, plies } => {
            let shortest = reference
                .iter()
                .filter_map(|(_, v)| match v {
                    ReferenceValue::Win(p) => Some(*p),
                    _ => None,
                })
                .min();
            assert_eq!(Some(plies), shortest, "{text}");
            // The move wins in `plies`, or (a win within the turn found before the others
            // were valued) the reference agrees it wins as fast.
            let v = reference.iter().find(|(m, _)| *m == mv).map(|&(_, v)| v);
            assert_eq!(v, Some(ReferenceValue::Win(plies)), "{text}: {mv}");
        }
        Forced::Loss { mv, plies } => {
            assert!(
                reference
                    .iter()
                    .all(|(_, v)| matches!(v, ReferenceValue::Loss(p) if *p <= plies)),
                "{text}"
            );
            let v = reference.iter().find(|(m, _)| *m == mv).map(|&(_, v)| v);
            assert_eq!(v, Some(ReferenceValue::Loss(plies)), "{text}: {mv}");
        }
        Forced::Open { refuted } => {
            assert!(reference
                .iter()
                .all(|(_, v)| !matches!(v, ReferenceValue::Win(_))));
            let losing: Vec<Move> = reference
                .iter()
                .filter(|(_, v)| matches!(v, ReferenceValue::Loss(_)))
                .map(|&(m, _)| m)
                .collect();
            assert_eq!(refuted, losing, "{text}");
            assert!(losing.len() < reference.len(), "{text}");
        }
    }
}

#[test]
fn solver_agrees_with_the_brute_force_reference_on_the_tactical_set() {
    let started = Instant::now();
    let set = crate::forced_set::test_set();
    let generated = started.elapsed();
    let mut counts = std::collections::BTreeMap::new();
    for p in &set {
        let kind = match p.class {
            TacticClass::Win if p.shortest_win() >= Some(3) => "win in 3+ plies",
            TacticClass::Win => "win in 1-2 plies",
            TacticClass::Loss
                if p.values
                    .iter()
                    .all(|(_, v)| matches!(v, ReferenceValue::Loss(_))) =>
            {
                "every move loses"
            }
            TacticClass::Loss => "some moves lose",
        };
        *counts
            .entry((p.game.position().variant().name(), kind))
            .or_insert(0) += 1;
        assert_agrees(&p.game, &p.values);
    }
    eprintln!(
        "{} positions (generated in {:.1?}): {counts:?}",
        set.len(),
        generated
    );
    assert!(set.len() >= 200, "{}", set.len());
    for variant in Variant::ALL {
        for class in [TacticClass::Win, TacticClass::Loss] {
            let n = set
                .iter()
                .filter(|p| p.game.position().variant() == variant && p.class == class)
                .count();
            assert!(n >= 5, "{variant} {class:?}: only {n}");
        }
    }
}

/// Random positions of every variant under every rule set of the set, most of them
/// without tactics (agreement on "no win, no loss" too). `parachute` compound turns make
/// the plain reference slow (a turn is a move times a drop), so its positions come from
/// after the compound phase, and [`compound_turns_agree_with_the_reference`] covers it.
#[test]
fn solver_agrees_with_the_reference_on_random_positions() {
    let mut checked = 0;
    for (i, rules) in crate::forced_set::rule_sets().into_iter().enumerate() {
        for game in crate::testing::random_games(&Variant::ALL, rules, 70, 120, 40 + i as u64) {
            let pos = game.position();
            if pos.reserve(crate::Color::Black) + pos.reserve(crate::Color::White) > 0 {
                continue;
            }
            assert_agrees(&game, &reference_values(&game));
            checked += 1;
        }
    }
    assert!(checked >= 250, "{checked}");
}

/// `parachute` compound turns (a move and a drop): positions at the last compound turns,
/// the drop pending or not, from random games.
#[test]
fn compound_turns_agree_with_the_reference() {
    let mut rng = crate::testing::XorShift::new(77);
    let mut checked = [0; 2];
    for (i, rules) in crate::forced_set::rule_sets().into_iter().enumerate() {
        for plies in [21, 22, 23] {
            let mut game = Game::new(Variant::Parachute, rules);
            while game.moves().len() < plies && !game.is_over() {
                let moves = game.legal_moves();
                game.play(moves[rng.below(moves.len())]).unwrap();
            }
            if game.is_over() || (plies == 21 && i % 2 == 1) {
                continue;
            }
            checked[game.position().drop_pending() as usize] += 1;
            assert_agrees(&game, &reference_values(&game));
        }
    }
    assert!(checked[0] >= 3 && checked[1] >= 3, "{checked:?}");
}

/// Three-fold repetition: reaching a position that occurred twice before is a draw, so the
/// solver must count the game's history. In the positions of the set with a forced win in
/// three turns, a history in which the position after the winning move occurred twice
/// makes that move a draw (open); one in which a reply's position did makes that reply a
/// refutation. (The game's own history is checked against the reference above.)
#[test]
fn repetitions_in_the_history_are_draws() {
    let mut checked = 0;
    for p in crate::forced_set::test_set() {
        let game = &p.game;
        let (pos, rules) = (game.position(), game.rules());
        if p.shortest_win() < Some(3) || rules.repetition != crate::rules::Repetition::ThreeFold {
            continue;
        }
        let values = move_values(pos, rules, game.history());
        for &(mv, v) in &values {
            let after = pos.after(mv);
            if !matches!(v, MoveValue::Win(_))
                || after.drop_pending()
                || after.outcome(rules).is_some()
            {
                continue;
            }
            let value_with = |seen: u64| {
                let mut history = game.history().to_vec();
                history.splice(0..0, [seen, seen]);
                move_values(pos, rules, &history)
                    .into_iter()
                    .find(|&(m, _)| m == mv)
                    .unwrap()
                    .1
            };
            assert_eq!(
                value_with(after.hash()),
                MoveValue::Open,
                "{}: {mv}",
                p.describe()
            );
            let reply = after.legal_moves(rules)[0];
            let replied = after.after(reply);
            if replied.drop_pending() || replied.outcome(rules).is_some() {
                continue;
            }
            assert_eq!(
                value_with(replied.hash()),
                MoveValue::Open,
                "{}: {mv} {reply}",
                p.describe()
            );
            // A position seen once before is no repetition yet (unless the game had it).
            if !game.history().contains(&replied.hash()) {
                let mut once = game.history().to_vec();
                once.insert(0, replied.hash());
                assert_eq!(move_values(pos, rules, &once), values, "{}", p.describe());
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked}");
}

/// The two positions quoted in issue 26, as the issue describes them.
#[test]
fn the_positions_of_the_issue_are_solved_as_it_says() {
    let rules = Rules::classic();
    let text = "5w2/4w3/2b1w3/8/8/8/1ww1b3/8 b";
    let pos = Position::from_text(text, Variant::Standard).unwrap();
    let game = Game::from_position(pos, rules);
    let mv = |t: &str| pos.parse_move(t, &rules).unwrap();
    let values = move_values(&pos, &rules, game.history());
    let wins: Vec<Move> = values
        .iter()
        .filter(|(_, v)| matches!(v, MoveValue::Win(_)))
        .map(|&(m, _)| m)
        .collect();
    assert_eq!(wins, vec![mv("e2-e5")], "{values:?}");
    assert_eq!(
        solve(&game),
        Forced::Win {
            mv: mv("e2-e5"),
            plies: 3
        }
    );
    assert_eq!(
        values.iter().find(|(m, _)| *m == mv("e2-d3")).unwrap().1,
        MoveValue::Open
    );
    assert_agrees(&game, &reference_values(&game));

    let text = "8/8/5wb1/b4wwb/3b2w1/8/4w3/3b4 b";
    let pos = Position::from_text(text, Variant::Standard).unwrap();
    let game = Game::from_position(pos, rules);
    let mv = |t: &str| pos.parse_move(t, &rules).unwrap();
    let values = move_values(&pos, &rules, game.history());
    let value = |t: &str| values.iter().find(|(m, _)| *m == mv(t)).unwrap().1;
    assert_eq!(value("d4xf6"), MoveValue::Loss(2));
    assert_eq!(value("d4-f4"), MoveValue::Open);
    // f5-f3 is the reply that wins against d4xf6.
    let after = pos.after(mv("d4xf6"));
    let reply = after.parse_move("f5-f3", &rules).unwrap();
    assert_eq!(
        after.after(reply).outcome(&rules),
        Some(Outcome::Win(crate::Color::White))
    );
    let verdict = solve(&game);
    assert!(verdict.refutes(mv("d4xf6")), "{verdict:?}");
    assert!(!verdict.refutes(mv("d4-f4")), "{verdict:?}");
    assert_agrees(&game, &reference_values(&game));
}

/// The speed figure of the module docs: the solver at the root of random positions.
#[test]
fn solver_speed_on_random_positions() {
    let rules = Rules::classic();
    for variant in [Variant::Standard, Variant::Parachute] {
        let games = crate::testing::random_games(&[variant], rules, 200, 160, 5);
        let started = Instant::now();
        let mut slowest = std::time::Duration::ZERO;
        for game in &games {
            let t = Instant::now();
            std::hint::black_box(solve(game));
            slowest = slowest.max(t.elapsed());
        }
        let mean = started.elapsed() / games.len() as u32;
        eprintln!("{variant}: solve takes {mean:?} on average, {slowest:?} at most");
        assert!(mean.as_millis() < 50, "{variant}: {mean:?}");
    }
}
