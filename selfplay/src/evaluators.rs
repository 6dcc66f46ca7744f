//! Evaluators that need no network: [`UniformEvaluator`] (engine-bound benchmarks, tests)
//! and [`HeuristicEvaluator`] (a cheap LOA evaluation, strong enough to beat random play
//! every time with a few hundred simulations).
//!
//! Both are stateless, `Send + Sync`, and give each position the same result whatever
//! else shares its batch.

use crate::evaluator::{EvalBatch, Evaluator};
use crate::Error;
use loa::features::{min_distance_sum, CentreOfMass};
use loa::{Color, Geometry, Move, MoveKind, Position};

/// Uniform priors over the legal moves and value 0 for every position.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl UniformEvaluator {
    /// The evaluator.
    pub fn new() -> UniformEvaluator {
        UniformEvaluator
    }
}

impl Evaluator for UniformEvaluator {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        batch.prepare_outputs();
        for i in 0..batch.len() {
            let range = batch.range(i);
            let p = 1.0 / range.len().max(1) as f32;
            batch.priors[range].fill(p);
        }
        Ok(())
    }

    fn name(&self) -> String {
        "uniform".into()
    }
}

/// A classical evaluation in the spirit of the early LOA programs, squashed to `[-1, 1]`,
/// for every variant (square or hexagonal board, teams, reserves, vanished cells):
///
/// * value: the difference in *concentration* (the mean board distance — Chebyshev on
///   square boards, hex distance on the hexagonal one — of a side's pieces to their
///   centre of mass, above the minimum that piece count allows; with vanished cells the
///   minimum counts only the cells pieces can still stand on) and in the number of
///   groups, plus a small side-to-move bonus and, in `parachute`, a bonus per piece of
///   reserve more than the opponent's, through `tanh`. In `ambiloa` a side is a team.
/// * priors: a softmax over a move score — how much closer the moved piece gets to its
///   side's centre of mass, and a bonus for captures; a removal scores as a move of the
///   piece next to the centre; a drop (of an opponent's piece) scores by its distance to
///   the opponent's centre of mass, with a penalty for touching an opponent's piece.
#[derive(Clone, Copy, Debug)]
pub struct HeuristicEvaluator {
    /// Weight of the concentration difference (per cell of mean distance).
    pub concentration_weight: f32,
    /// Weight of the group-count difference (per group).
    pub groups_weight: f32,
    /// Value added for the side to move.
    pub tempo: f32,
    /// Weight of the reserve difference (`parachute`, per piece).
    pub reserve_weight: f32,
    /// Softmax inverse temperature of the priors (per cell of distance gained).
    pub prior_sharpness: f32,
    /// Move-score bonus of a capture.
    pub capture_bonus: f32,
    /// Move score of a drop per cell of distance to the opponent's centre of mass.
    pub drop_distance_weight: f32,
    /// Move-score penalty of a drop next to an opponent's piece.
    pub drop_contact_penalty: f32,
}

impl Default for HeuristicEvaluator {
    fn default() -> Self {
        HeuristicEvaluator {
            concentration_weight: 1.0,
            groups_weight: 0.15,
            tempo: 0.05,
            reserve_weight: 0.03,
            prior_sharpness: 1.5,
            capture_bonus: 0.3,
            drop_distance_weight: 0.75,
            drop_contact_penalty: 1.5,
        }
    }
}

impl HeuristicEvaluator {
    /// The evaluator with its default weights.
    pub fn new() -> HeuristicEvaluator {
        HeuristicEvaluator::default()
    }

    /// Value of `pos` for its side (team) to move, in `(-1, 1)`.
    pub fn value(&self, pos: &Position) -> f32 {
        let g = pos.geometry();
        let us = pos.to_move();
        let room = standing_room(pos);
        let (own, own_groups) = side_terms(g, pos.pieces(us), room);
        let (opp, opp_groups) = side_terms(g, pos.pieces(us.opponent()), room);
        let reserves = pos.reserve(us) as f32 - pos.reserve(us.opponent()) as f32;
        let score = self.concentration_weight * (opp - own)
            + self.groups_weight * (opp_groups as f32 - own_groups as f32)
            + self.reserve_weight * reserves
            + self.tempo;
        score.tanh()
    }

    /// Unnormalised log-prior of `mv` in `pos`; `own` and `opp` are the centres of mass
    /// of the side to move and of its opponent.
    fn move_score(&self, pos: &Position, mv: Move, own: &CentreOfMass, opp: &CentreOfMass) -> f32 {
        let g = pos.geometry();
        match mv.kind() {
            MoveKind::Pass => 0.0,
            MoveKind::Quiet | MoveKind::Capture => {
                let d_from = own.distance(g, mv.from());
                let d_to = own.distance(g, mv.to());
                let mut s = self.prior_sharpness * (d_from - d_to);
                if mv.is_capture() {
                    s += self.capture_bonus;
                }
                s
            }
            MoveKind::Remove => self.prior_sharpness * (own.distance(g, mv.square()) - 1.0),
            MoveKind::Drop => {
                let sq = mv.square();
                let them = pos.pieces(pos.to_move().opponent());
                let mut s = self.drop_distance_weight * opp.distance(g, sq);
                if g.neighbours[sq as usize] & them != 0 {
                    s -= self.drop_contact_penalty;
                }
                s
            }
        }
    }
}

/// The cells pieces may still stand on, when that limits the concentration bound
/// (`gemma`: every cell but the vanished ones); `None` for an unbounded ideal board.
fn standing_room(pos: &Position) -> Option<u64> {
    pos.variant()
        .has_vanishing()
        .then(|| pos.geometry().cells & !pos.vanished())
}

/// Sum of the `n` smallest distances from the centre `com` to the cells of `room`.
fn min_distance_sum_in(g: &Geometry, n: u32, room: u64, com: &CentreOfMass) -> f32 {
    let mut buf = [0.0f32; 64];
    let mut len = 0;
    let mut b = room;
    while b != 0 {
        let sq = b.trailing_zeros() as u8;
        b &= b - 1;
        buf[len] = com.distance(g, sq);
        len += 1;
    }
    let d = &mut buf[..len];
    let n = (n as usize).min(len);
    if n == 0 {
        return 0.0;
    }
    d.select_nth_unstable_by(n - 1, f32::total_cmp);
    d[..n].iter().sum()
}

/// (mean excess distance to the centre of mass, number of groups) of one side; `room`
/// as [`standing_room`].
fn side_terms(g: &Geometry, bits: u64, room: Option<u64>) -> (f32, u32) {
    let com = CentreOfMass::of(g, bits);
    let n = com.count as u32;
    if n <= 1 {
        return (0.0, n);
    }
    let sum = com.distance_sum(g, bits);
    let min = match room {
        Some(room) => min_distance_sum_in(g, n, room, &com),
        None => min_distance_sum(g, n) as f32,
    };
    let excess = (sum - min).max(0.0) / n as f32;
    (excess, g.count_groups(bits))
}

impl Evaluator for HeuristicEvaluator {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), Error> {
        batch.prepare_outputs();
        for i in 0..batch.len() {
            let pos = batch.positions[i];
            batch.values[i] = self.value(&pos);
            let g = pos.geometry();
            let us: Color = pos.to_move();
            let own = CentreOfMass::of(g, pos.pieces(us));
            let opp = CentreOfMass::of(g, pos.pieces(us.opponent()));
            let range = batch.range(i);
            let mut max_score = f32::NEG_INFINITY;
            for j in range.clone() {
                let score = self.move_score(&pos, batch.moves[j], &own, &opp);
                batch.priors[j] = score;
                max_score = max_score.max(score);
            }
            let mut total = 0.0;
            for p in &mut batch.priors[range.clone()] {
                *p = (*p - max_score).exp();
                total += *p;
            }
            let inv = 1.0 / total;
            for p in &mut batch.priors[range] {
                *p *= inv;
            }
        }
        Ok(())
    }

    fn name(&self) -> String {
        "heuristic".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Rules, Variant};

    fn batch_of(positions: &[Position]) -> EvalBatch {
        let rules = Rules::classic();
        let mut batch = EvalBatch::new();
        for p in positions {
            batch.push(*p, &p.legal_moves(&rules));
        }
        batch
    }

    #[test]
    fn outputs_are_distributions_and_values_in_range() {
        let rules = Rules::classic();
        let mut positions = vec![];
        for v in Variant::ALL {
            let mut p = Position::start(v, &rules);
            for k in 0..12 {
                positions.push(p);
                let moves = p.legal_moves(&rules);
                p.play(moves[(k * 5 + 3) % moves.len()]);
            }
        }
        let evaluators: [&dyn Evaluator; 2] =
            [&UniformEvaluator::new(), &HeuristicEvaluator::new()];
        for e in evaluators {
            let mut batch = batch_of(&positions);
            e.evaluate(&mut batch).unwrap();
            for i in 0..batch.len() {
                let s: f32 = batch.priors[batch.range(i)].iter().sum();
                assert!((s - 1.0).abs() < 1e-4, "{} priors sum to {s}", e.name());
                assert!(batch.priors[batch.range(i)].iter().all(|&p| p >= 0.0));
                assert!((-1.0..=1.0).contains(&batch.values[i]));
            }
        }
    }

    #[test]
    fn every_position_of_random_games_gets_finite_distributions() {
        use rand::seq::IndexedRandom;
        use rand::SeedableRng;
        let rules = Rules::classic();
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let e = HeuristicEvaluator::new();
        for v in Variant::ALL {
            let mut kinds = [0usize; 5];
            for _ in 0..6 {
                let mut game = loa::Game::new(v, rules);
                let mut positions = vec![];
                while !game.is_over() && game.moves().len() < 300 {
                    positions.push(*game.position());
                    let moves = game.legal_moves();
                    game.play(*moves.choose(&mut rng).unwrap()).unwrap();
                }
                let mut batch = batch_of(&positions);
                e.evaluate(&mut batch).unwrap();
                for (i, p) in positions.iter().enumerate() {
                    let priors = &batch.priors[batch.range(i)];
                    assert!(priors.iter().all(|x| x.is_finite() && *x >= 0.0));
                    assert!((priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
                    assert!(batch.values[i].abs() < 1.0, "{}", p.to_text());
                    for &mv in &batch.moves[batch.range(i)] {
                        kinds[mv.kind() as usize] += 1;
                    }
                }
            }
            if v.has_drops() {
                assert!(kinds[loa::MoveKind::Drop as usize] > 0);
            }
            if v.has_vanishing() {
                assert!(kinds[loa::MoveKind::Remove as usize] > 0);
            }
        }
    }

    #[test]
    fn heuristic_is_a_hex_and_team_evaluation() {
        let e = HeuristicEvaluator::new();
        // Alveole: Black's five pieces round the centre cell, White's five on the rim.
        let g = Variant::Alveole.geometry();
        let on = |cells: &[(u8, u8)]| {
            cells.iter().fold(0u64, |acc, &(c, r)| {
                acc | 1u64 << g.square_at(c, r).unwrap()
            })
        };
        let black = on(&[(4, 4), (5, 4), (4, 5), (3, 3), (5, 5)]);
        let white = on(&[(0, 0), (8, 8), (0, 4), (8, 4), (4, 0)]);
        for (us, sign) in [(Color::Black, 1.0), (Color::White, -1.0)] {
            let p = Position::new(Variant::Alveole, black, white, us).unwrap();
            assert!(sign * e.value(&p) > 0.3, "{}", e.value(&p));
        }
        let (excess, groups) = side_terms(g, black, None);
        assert!(excess < 0.1 && groups == 1, "{excess} {groups}");
        let (excess, groups) = side_terms(g, white, None);
        assert!(excess > 1.0 && groups == 5, "{excess} {groups}");
        // Ambiloa: South's and North's pieces together form a block, so the Black team
        // is ahead whichever of its players moves.
        for side in ["s", "n"] {
            let p = Position::from_text(
                &format!("w6e/8/8/3sn3/3ns3/8/8/e5sw {side}"),
                Variant::Ambiloa,
            )
            .unwrap();
            assert!(e.value(&p) > 0.3, "{side}: {}", e.value(&p));
        }
    }

    #[test]
    fn drops_and_removals_get_sensible_priors() {
        let rules = Rules::classic();
        let e = HeuristicEvaluator::new();
        // Parachute, Black drops a White piece: far from White's pieces beats next to them.
        let p = Position::from_text("7w/8/8/3ww3/8/1b6/1b6/7b b@ 1:1", Variant::Parachute).unwrap();
        let mut batch = batch_of(&[p]);
        e.evaluate(&mut batch).unwrap();
        let prior = |text: &str| {
            let mv = p.parse_move(text, &rules).unwrap();
            let j = batch.moves.iter().position(|&m| m == mv).unwrap();
            batch.priors[j]
        };
        assert_eq!(batch.moves.len(), 64 - 6);
        assert!(batch.moves.iter().all(|m| m.is_drop()));
        assert!(prior("@a1") > 5.0 * prior("@d4"));
        assert!(prior("@a1") > 5.0 * prior("@f5"));
        // Gemma: the removal of a stuck piece far from its side's centre ranks above the
        // side's average move.
        let p = Position::from_text("5w2/1w6/3b4/2bb4/8/7w/xx6/bx6 b", Variant::Gemma).unwrap();
        let mut batch = batch_of(&[p]);
        e.evaluate(&mut batch).unwrap();
        let removal = p.parse_move("~a1", &rules).unwrap();
        let j = batch.moves.iter().position(|&m| m == removal).unwrap();
        assert!(batch.priors[j] > 1.0 / batch.moves.len() as f32);
        // Vanished cells limit how tight a side can be: with b3-d4 (round Black's centre
        // of mass) vanished, the same pieces have a smaller excess.
        let g = p.geometry();
        let pieces = p.pieces(Color::Black);
        let open = side_terms(g, pieces, Some(g.cells));
        let holed = side_terms(g, pieces, Some(g.cells & !0x0E0E_0000));
        assert!(holed.0 < open.0, "{holed:?} vs {open:?}");
    }

    #[test]
    fn heuristic_prefers_the_concentrated_side() {
        // Black: a tight 2x2 block plus one piece; White scattered in the corners.
        let p = Position::from_text("w6w/8/8/3bb3/3bb3/8/8/w5bw b", Variant::Standard).unwrap();
        let e = HeuristicEvaluator::new();
        assert!(e.value(&p) > 0.3, "{}", e.value(&p));
        let q = Position::from_text("w6w/8/8/3bb3/3bb3/8/8/w5bw w", Variant::Standard).unwrap();
        assert!(e.value(&q) < -0.3, "{}", e.value(&q));
    }

    #[test]
    fn results_do_not_depend_on_batch_neighbours() {
        let rules = Rules::classic();
        let a = Position::start(Variant::Standard, &rules);
        let b = a.after(a.legal_moves(&rules)[4]);
        let e = HeuristicEvaluator::new();
        let mut one = batch_of(&[b]);
        let mut two = batch_of(&[a, b]);
        e.evaluate(&mut one).unwrap();
        e.evaluate(&mut two).unwrap();
        assert_eq!(one.values[0], two.values[1]);
        assert_eq!(&one.priors[..], &two.priors[two.range(1)]);
    }
}
