//! A test set of tactical positions, found by brute force: positions a few plies before
//! the end of seeded random games, in every variant and under several rule sets, that hold
//! a forced win within three turns, or moves that lose within two turns beside moves that
//! last longer. For the tests of [`crate::forced`] and of every player that uses it.
//!
//! The positions are classified by [`reference_values`], a deliberately plain minimax over
//! [`Game::legal_moves`] and [`Game::play`] (a clone of the game per ply, no pruning but a
//! stop at a win) that shares no code with the solver, so the two check each other.
//! Deterministic: the same seeds give the same set on every machine.

use crate::testing::XorShift;
use crate::{Color, Game, Move, Outcome, Rules, Variant};

/// The value of one root move by the reference: the same meaning as
/// [`crate::forced::MoveValue`], found independently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReferenceValue {
    /// The move wins by force within three turns, after this many plies.
    Win(u32),
    /// The move loses by force within two turns, after this many plies.
    Loss(u32),
    /// Neither.
    Open,
}

/// Which kind of tactic a position of the set holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TacticClass {
    /// The side to move has a forced win within three turns.
    Win,
    /// No forced win; some move loses within two turns, and some other move loses later
    /// (or not within the horizon).
    Loss,
}

/// One position of the set: the game that leads to it (with its repetition history), its
/// class, and every root move with its reference value.
#[derive(Clone, Debug)]
pub struct TacticalPosition {
    /// The game, at the position.
    pub game: Game,
    /// The position's class.
    pub class: TacticClass,
    /// Every legal move with its [`reference_values`] value.
    pub values: Vec<(Move, ReferenceValue)>,
}

impl TacticalPosition {
    /// The plies of the shortest forced win (a [`TacticClass::Win`] position).
    pub fn shortest_win(&self) -> Option<u32> {
        self.values
            .iter()
            .filter_map(|(_, v)| match v {
                ReferenceValue::Win(p) => Some(*p),
                _ => None,
            })
            .min()
    }

    /// The reference value of `mv` (`None` if it is not a legal move here).
    pub fn value_of(&self, mv: Move) -> Option<ReferenceValue> {
        self.values.iter().find(|(m, _)| *m == mv).map(|&(_, v)| v)
    }

    /// Whether `mv` is one of the best moves by the reference: a shortest win in a
    /// [`TacticClass::Win`] position; in a [`TacticClass::Loss`] position a move that is
    /// not a loss, or when every move is, one that loses latest.
    pub fn is_best(&self, mv: Move) -> bool {
        let Some(v) = self.value_of(mv) else {
            return false;
        };
        let best = self.values.iter().map(|&(_, v)| score_rank(v)).max();
        Some(score_rank(v)) == best
    }

    /// One line describing the position (variant, rules, text, class).
    pub fn describe(&self) -> String {
        format!(
            "{} [{}] {} ({:?})",
            self.game.position().variant(),
            self.game.rules(),
            self.game.position().to_text(),
            self.class
        )
    }
}

/// Orders reference values worst to best (losses later is better, open, wins sooner).
fn score_rank(v: ReferenceValue) -> i64 {
    match v {
        ReferenceValue::Loss(p) => -1_000_000 + p as i64,
        ReferenceValue::Open => 0,
        ReferenceValue::Win(p) => 1_000_000 - p as i64,
    }
}

/// Scores for the plain minimax: a win `p` plies from the root is `WIN - p`.
const WIN: i32 = 1000;

/// Minimax value for `me` of `game` reached after `plies` plies, with `turns` turns (runs
/// of plies by one side) still to look at, this one included. In `me`'s last turn only
/// wins count (a loss there is beyond the horizon of a loss within two turns).
fn minimax(game: &Game, me: Color, turns: u32, plies: u32) -> i32 {
    if let Some(outcome) = game.outcome() {
        return match outcome {
            Outcome::Win(c) if c == me => WIN - plies as i32,
            Outcome::Win(_) => -(WIN - plies as i32),
            Outcome::Draw => 0,
        };
    }
    if turns == 0 {
        return 0;
    }
    let side = game.position().to_move();
    let maximise = side == me;
    let last_turn = turns == 1 && maximise;
    let mut best = if maximise { i32::MIN } else { i32::MAX };
    for &mv in &game.legal_moves() {
        let mut child = game.clone();
        child.play(mv).expect("legal moves play");
        let same_turn = !child.is_over() && child.position().to_move() == side;
        let left = if same_turn { turns } else { turns - 1 };
        let mut value = minimax(&child, me, left, plies + 1);
        if last_turn {
            value = value.max(0);
        }
        if maximise {
            best = best.max(value);
            if last_turn && value > 0 {
                break;
            }
        } else {
            best = best.min(value);
        }
    }
    best
}

/// Every legal move of `game`'s current position (not over) with its value by a plain
/// minimax of three turns.
pub fn reference_values(game: &Game) -> Vec<(Move, ReferenceValue)> {
    let me = game.position().to_move();
    game.legal_moves()
        .iter()
        .map(|&mv| {
            let mut child = game.clone();
            child.play(mv).expect("legal moves play");
            let same_turn = !child.is_over() && child.position().to_move() == me;
            let value = minimax(&child, me, if same_turn { 3 } else { 2 }, 1);
            let v = if value > 0 {
                ReferenceValue::Win((WIN - value) as u32)
            } else if value < 0 {
                ReferenceValue::Loss((WIN + value) as u32)
            } else {
                ReferenceValue::Open
            };
            (mv, v)
        })
        .collect()
}

/// The class of a position whose moves have the reference values `values`, if any.
pub fn classify(values: &[(Move, ReferenceValue)]) -> Option<TacticClass> {
    if values
        .iter()
        .any(|(_, v)| matches!(v, ReferenceValue::Win(_)))
    {
        return Some(TacticClass::Win);
    }
    let ranks: Vec<i64> = values.iter().map(|&(_, v)| score_rank(v)).collect();
    let (lo, hi) = (ranks.iter().min()?, ranks.iter().max()?);
    let some_loss = values
        .iter()
        .any(|(_, v)| matches!(v, ReferenceValue::Loss(_)));
    (some_loss && lo < hi).then_some(TacticClass::Loss)
}

/// The rule sets the set is drawn under, in turn.
pub fn rule_sets() -> Vec<Rules> {
    [
        "classic",
        "icga",
        "no-move=loss",
        "repetition=off,first=white",
        "icga,ply-limit=80",
    ]
    .iter()
    .map(|s| Rules::parse(s).expect("valid rules"))
    .collect()
}

/// How many positions of each class [`tactical_positions`] keeps per variant.
#[derive(Clone, Copy, Debug)]
pub struct Quota {
    /// Positions with a forced win in one turn.
    pub win_now: usize,
    /// Positions with a forced win in three turns and none in one.
    pub win_later: usize,
    /// Positions of [`TacticClass::Loss`].
    pub loss: usize,
}

/// The set: for each variant, positions from the last `before_end` plies of seeded random
/// games (under [`rule_sets`] in turn), classified by [`reference_values`], until `quota`
/// is met or `max_games` games were played. Games are played to their end (or 400 plies).
pub fn tactical_positions(
    variants: &[Variant],
    quota: Quota,
    before_end: usize,
    max_games: usize,
    seed: u64,
) -> Vec<TacticalPosition> {
    let rules = rule_sets();
    let mut out = Vec::new();
    for (vi, &variant) in variants.iter().enumerate() {
        let mut rng = XorShift::new(seed ^ (vi as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (mut win_now, mut win_later, mut loss) = (0, 0, 0);
        for g in 0..max_games {
            if win_now >= quota.win_now && win_later >= quota.win_later && loss >= quota.loss {
                break;
            }
            let r = rules[g % rules.len()];
            let mut game = Game::new(variant, r);
            while !game.is_over() && game.moves().len() < 400 {
                let moves = game.legal_moves();
                game.play(moves[rng.below(moves.len())])
                    .expect("legal moves play");
            }
            if !game.is_over() {
                continue;
            }
            let moves = game.moves().to_vec();
            let first = moves.len().saturating_sub(before_end);
            for end in first..moves.len() {
                let mut at = Game::from_position(*game.start(), r);
                for &mv in &moves[..end] {
                    at.play(mv).expect("replayed moves play");
                }
                let values = reference_values(&at);
                let Some(class) = classify(&values) else {
                    continue;
                };
                let pos = at.position();
                let turn = if !pos.drop_pending() && pos.reserve(pos.to_move()) > 0 {
                    2
                } else {
                    1
                };
                let wins_now = values
                    .iter()
                    .any(|(_, v)| matches!(v, ReferenceValue::Win(p) if *p <= turn));
                let slot = match (class, wins_now) {
                    (TacticClass::Win, true) => &mut win_now,
                    (TacticClass::Win, false) => &mut win_later,
                    (TacticClass::Loss, _) => &mut loss,
                };
                let limit = match (class, wins_now) {
                    (TacticClass::Win, true) => quota.win_now,
                    (TacticClass::Win, false) => quota.win_later,
                    (TacticClass::Loss, _) => quota.loss,
                };
                if *slot < limit {
                    *slot += 1;
                    out.push(TacticalPosition {
                        game: at,
                        class,
                        values,
                    });
                }
            }
        }
    }
    out
}

/// The set the tests of every crate share: every variant, 12 positions with a win in one
/// turn, 12 with a forced win in three turns and none sooner, and 16 of
/// [`TacticClass::Loss`] per variant (280 in all), from the last 6 plies of random games.
/// About 1.5 s in a release build.
pub fn test_set() -> Vec<TacticalPosition> {
    let quota = Quota {
        win_now: 12,
        win_later: 12,
        loss: 16,
    };
    tactical_positions(&Variant::ALL, quota, 6, 400, 0x07AC_71C5)
}
