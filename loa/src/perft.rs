//! Perft: the number of leaves of the legal game tree to a fixed depth, the standard check
//! of a move generator. A finished game has no children. Repetition is honoured through
//! the hash history of the path (plus any history passed in). Every move is one ply: the
//! move and the drop of a `parachute` compound turn are two, a `gemma` removal is one.

use crate::moves::{Move, MoveList};
use crate::rules::{NoMove, Repetition, Rules};
use crate::Position;

struct Perft<'a> {
    rules: &'a Rules,
    /// Hashes of the positions on the path (earlier history first), current one last.
    path: Vec<u64>,
}

impl Perft<'_> {
    /// Whether the position just reached (already pushed on `path`) ends the game by a rule
    /// other than connection and no-move.
    #[inline]
    fn ends_by_count(&self, pos: &Position) -> bool {
        if let Some(limit) = self.rules.ply_limit {
            if pos.ply() >= limit {
                return true;
            }
        }
        if self.rules.repetition == Repetition::ThreeFold {
            let h = pos.hash();
            let n = self.path.len();
            // The hash includes the side (player) to move, so every entry can be compared.
            let mut seen = 0;
            let mut i = n as isize - 2;
            while i >= 0 {
                if self.path[i as usize] == h {
                    seen += 1;
                    if seen == 2 {
                        return true;
                    }
                }
                i -= 1;
            }
        }
        false
    }

    /// Leaves below `pos`, which is not over by connection, count or repetition.
    fn count(&mut self, pos: &Position, depth: u32) -> u64 {
        if depth == 1 {
            let n = pos.count_moves() as u64;
            if n > 0 {
                return n;
            }
            return self.no_move_children(pos);
        }
        let mut list = MoveList::new();
        pos.generate_moves(&mut list);
        if list.is_empty() {
            if self.no_move_children(pos) == 0 {
                return 0;
            }
            list.push(Move::PASS);
        }
        let mut total = 0;
        for &mv in list.iter() {
            let child = pos.after(mv);
            if child.connection_outcome_after(mv, self.rules).is_some() {
                continue;
            }
            self.path.push(child.hash());
            if !self.ends_by_count(&child) {
                total += self.count(&child, depth - 1);
            }
            self.path.pop();
        }
        total
    }

    /// Number of children (0 or 1) of a position whose player to move has no move.
    fn no_move_children(&self, pos: &Position) -> u64 {
        match self.rules.no_move {
            NoMove::Loss => 0,
            NoMove::Pass => !pos.nobody_can_move() as u64,
        }
    }
}

/// Leaf count of the tree of depth `depth` below `pos` under `rules`. `history` holds the
/// hashes of the positions before `pos` in its game (oldest first), for the repetition rule.
pub fn perft_with_history(pos: &Position, rules: &Rules, depth: u32, history: &[u64]) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut p = Perft {
        rules,
        path: history.iter().copied().chain([pos.hash()]).collect(),
    };
    if pos.connection_outcome(rules).is_some() || p.ends_by_count(pos) {
        return 0;
    }
    p.count(pos, depth)
}

/// Leaf count of the tree of depth `depth` below `pos` under `rules`.
pub fn perft(pos: &Position, rules: &Rules, depth: u32) -> u64 {
    perft_with_history(pos, rules, depth, &[])
}

/// Perft split by the root's moves: `(move, leaves below it)` for each legal root move.
pub fn perft_divide(pos: &Position, rules: &Rules, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 || pos.outcome(rules).is_some() {
        return Vec::new();
    }
    pos.legal_moves(rules)
        .iter()
        .map(|&mv| {
            let child = pos.after(mv);
            let n = if child.connection_outcome_after(mv, rules).is_some() {
                u64::from(depth == 1)
            } else {
                perft_with_history(&child, rules, depth - 1, &[pos.hash()])
            };
            (mv, n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    /// The figures of the rules note (`docs/rules.md`, "Perft").
    #[test]
    fn standard_perft() {
        let rules = Rules::classic();
        let p = Position::start(Variant::Standard, &rules);
        let expected = [1, 36, 1244, 44952];
        for (d, &e) in expected.iter().enumerate() {
            assert_eq!(perft(&p, &rules, d as u32), e, "depth {d}");
        }
    }

    /// The figures of the rules note (`docs/rules.md`, "Perft").
    #[test]
    fn scrambled_and_six_perft() {
        let rules = Rules::classic();
        let p = Position::start(Variant::ScrambledEggs, &rules);
        assert_eq!(perft(&p, &rules, 1), 32);
        assert_eq!(perft(&p, &rules, 2), 992);
        assert_eq!(perft(&p, &rules, 3), 32000);
        let p = Position::start(Variant::Six, &rules);
        assert_eq!(perft(&p, &rules, 1), 24);
        assert_eq!(perft(&p, &rules, 2), 524);
        assert_eq!(perft(&p, &rules, 3), 11440);
    }

    /// No outside source gives alveole's figures: they are those of the independent
    /// reference implementation of the rules (`loa/tests/reference_variants.rs`,
    /// `start_perft_figures`, which checks both).
    #[test]
    fn alveole_perft() {
        let rules = Rules::classic();
        let p = Position::start(Variant::Alveole, &rules);
        let expected = [1, 15, 219, 3936, 69492];
        for (d, &e) in expected.iter().enumerate() {
            assert_eq!(perft(&p, &rules, d as u32), e, "depth {d}");
        }
    }

    #[test]
    fn special_variants_start_counts() {
        let rules = Rules::classic();
        // Gemma and ambiloa share the standard start: 36 moves for Black, of which South
        // (b1-g1) has half.
        let p = Position::start(Variant::Gemma, &rules);
        assert_eq!(perft(&p, &rules, 1), 36);
        let p = Position::start(Variant::Ambiloa, &rules);
        assert_eq!(perft(&p, &rules, 1), 18);
        // Parachute: after each move, a drop on each of the 64 - 6 - 6 = 52 empty cells.
        let p = Position::start(Variant::Parachute, &rules);
        let moves = perft(&p, &rules, 1);
        assert_eq!(perft(&p, &rules, 2), moves * 52);
    }

    #[test]
    fn divide_sums_to_perft() {
        let rules = Rules::classic();
        let p = Position::start(Variant::Standard, &rules);
        let d: u64 = perft_divide(&p, &rules, 3).iter().map(|x| x.1).sum();
        // Perft 3 of the rules note (`docs/rules.md`, "Perft").
        assert_eq!(d, 44952);
    }
}
