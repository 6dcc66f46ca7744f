//! Connection tactics shared by the searches: which moves connect a side's pieces at once,
//! and whether the side to move can win by connection within its turn.
//!
//! Both the alpha-beta baseline (leaf win checks, threat extensions) and the MCTS solver
//! (immediate-win proofs) ask these questions millions of times per second, so the
//! functions here reject most moves with bit tests before the full connection test. All
//! functions are pure and thread-safe.

use crate::{Color, Move, Outcome, Player, Position, Rules, Square};

/// The connected groups of `bits`, or `None` if there are more than five (then no single
/// move can connect them: a move merges at most the four groups around its target plus,
/// by vanishing, a singleton group it leaves).
fn groups_upto5(g: &crate::Geometry, bits: u64) -> Option<([u64; 5], usize)> {
    let mut groups = [0u64; 5];
    let mut n = 0;
    for group in g.groups(bits) {
        if n == 5 {
            return None;
        }
        groups[n] = group;
        n += 1;
    }
    Some((groups, n))
}

/// The pieces that move at `color`'s next turn in `pos`: the player to move's own pieces
/// when `color` is to move, else those of the team's player who moves next (`ambiloa`
/// seats); all of `color`'s pieces in the other variants.
pub fn next_movers(pos: &Position, color: Color) -> u64 {
    match pos.player() {
        None => pos.pieces(color),
        Some(player) => {
            // Order S, W, N, E: Black's seat s is followed by White's seat s, White's seat s
            // by Black's seat 1 - s.
            let seat = if color == pos.to_move() || color == Color::White {
                player.seat()
            } else {
                player.seat() ^ 1
            };
            pos.player_pieces(Player::of(color, seat))
        }
    }
}

/// Calls `f` with every move of `color` (to move or not; its next player in `ambiloa`)
/// after which all of `color`'s pieces form one group, until `f` returns true: normal
/// moves, and in `gemma` the removal of a stuck piece standing alone. Cheap bit tests
/// reject most moves before the connection test: every group other than the mover's must
/// touch the target cell, and so must what is left of the mover's own group. Drops are not
/// considered (they add the opponent's pieces), nor is what a capture does to the other
/// side (see [`winning_move`]).
pub fn for_each_connecting_move(pos: &Position, color: Color, mut f: impl FnMut(Move) -> bool) {
    let g = pos.geometry();
    let own = pos.pieces(color);
    let enemy = pos.pieces(color.opponent());
    let movers = next_movers(pos, color);
    let forbidden = own | pos.vanished();
    let occupied = own | enemy;
    let Some((groups, n)) = groups_upto5(g, own) else {
        return;
    };
    let groups = &groups[..n];
    let flag = g.move_flag;
    let mut done = false;
    crate::movegen::for_each_move(
        g,
        movers,
        occupied,
        enemy,
        forbidden,
        |from, _, to, capture| {
            if done {
                return;
            }
            let from_bit = 1u64 << from;
            let around = g.neighbours[to as usize];
            for &grp in groups {
                let rest = grp & !from_bit;
                if rest != 0 && rest & around == 0 {
                    return;
                }
            }
            let after = (own & !from_bit) | (1u64 << to);
            if g.is_connected(after) {
                done = f(Move::new_on(from, to, capture, flag));
            }
        },
    );
    if done || !pos.variant().has_vanishing() || n != 2 {
        return;
    }
    // Removing a piece splits nothing and joins nothing: it connects the rest only when it
    // is a group of its own and the rest is the other group.
    for &grp in groups {
        if grp.count_ones() == 1
            && grp & movers != 0
            && crate::movegen::count_moves(g, grp, occupied, enemy, forbidden) == 0
            && f(Move::remove(grp.trailing_zeros() as Square, flag))
        {
            return;
        }
    }
}

/// Whether `color` (to move or not) has a move that connects all its pieces (ignoring
/// what the move does to the other side).
pub fn has_connecting_move(pos: &Position, color: Color) -> bool {
    let mut found = false;
    for_each_connecting_move(pos, color, |_| {
        found = true;
        true
    });
    found
}

/// While a drop is pending: a drop after which the side to move wins by connection, if
/// there is one. A drop adds an opponent's piece, so it wins only when the side to move is
/// already connected; drops away from every opponent's piece (which leave the opponent
/// unconnected) are tried first.
pub fn winning_drop(pos: &Position, rules: &Rules) -> Option<Move> {
    let us = pos.to_move();
    if !pos.drop_pending() || !pos.is_connected(us) {
        return None;
    }
    let g = pos.geometry();
    let empty = g.cells & !pos.occupied() & !pos.vanished();
    let near = g.dilate(pos.pieces(us.opponent()));
    for mut cells in [empty & !near, empty & near] {
        while cells != 0 {
            let mv = Move::drop(cells.trailing_zeros() as Square, g.move_flag);
            cells &= cells - 1;
            if pos.after(mv).connection_outcome_after(mv, rules) == Some(Outcome::Win(us)) {
                return Some(mv);
            }
        }
    }
    None
}

/// A move of the side to move that wins by connection within its turn under `rules`, if
/// there is one, with the number of plies to the win: 2 for the move of a `parachute`
/// compound turn (a drop then completes the win), else 1 (a connecting move, a `gemma`
/// removal that leaves the rest connected, or the winning drop of a pending compound
/// turn). Exact: `None` exactly when no such win exists (captures that connect both sides
/// are judged by [`Position::connection_outcome_after`]).
pub fn winning_move(pos: &Position, rules: &Rules) -> Option<(Move, i32)> {
    let us = pos.to_move();
    if pos.drop_pending() {
        return winning_drop(pos, rules).map(|mv| (mv, 1));
    }
    let compound = pos.reserve(us) > 0;
    let mut found = None;
    for_each_connecting_move(pos, us, |mv| {
        let child = pos.after(mv);
        let wins = if compound {
            winning_drop(&child, rules).is_some()
        } else {
            child.connection_outcome_after(mv, rules) == Some(Outcome::Win(us))
        };
        if wins {
            found = Some(mv);
        }
        wins
    });
    found.map(|mv| (mv, if compound { 2 } else { 1 }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MoveList, Variant};

    /// A small deterministic generator (the crate has no dependencies).
    use crate::testing::XorShift;

    /// Sparse random positions of two to `pieces` pieces a side (many connecting moves).
    fn sparse_position(variant: Variant, pieces: usize, rng: &mut XorShift) -> Option<Position> {
        let g = variant.geometry();
        let pick = |rng: &mut XorShift| {
            let n = 2 + rng.below(pieces - 1);
            (0..n)
                .map(|_| 1u64 << g.sparse[rng.below(g.num_cells as usize)])
                .fold(0, |a, b| a | b)
        };
        let white = pick(rng);
        let black = pick(rng) & !white;
        let to_move = if rng.below(2) == 0 {
            Color::Black
        } else {
            Color::White
        };
        Position::with_extra(variant, black, white, to_move, Default::default()).ok()
    }

    /// Brute force over the legal moves: a move of `pos`'s side to move after which its
    /// pieces form one group.
    fn brute_connects(pos: &Position) -> bool {
        let us = pos.to_move();
        let mut moves = MoveList::new();
        pos.generate_moves(&mut moves);
        moves
            .iter()
            .any(|&m| !m.is_drop() && pos.after(m).is_connected(us))
    }

    #[test]
    fn connecting_moves_are_found_exactly_when_they_exist() {
        let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
        for variant in [Variant::Standard, Variant::ScrambledEggs, Variant::Alveole] {
            let rules = Rules::classic();
            let (mut found, mut total) = (0, 0);
            while total < 500 {
                let Some(pos) = sparse_position(variant, 3 + rng.below(4), &mut rng) else {
                    continue;
                };
                if pos.outcome(&rules).is_some() {
                    continue;
                }
                total += 1;
                let us = pos.to_move();
                let fast = has_connecting_move(&pos, us);
                assert_eq!(fast, brute_connects(&pos), "{variant} {}", pos.to_text());
                let win = winning_move(&pos, &rules);
                let brute_win = pos.legal_moves(&rules).iter().any(|&m| {
                    pos.after(m).connection_outcome_after(m, &rules) == Some(Outcome::Win(us))
                });
                assert_eq!(win.is_some(), brute_win, "{variant} {}", pos.to_text());
                if let Some((mv, plies)) = win {
                    found += 1;
                    assert_eq!(plies, 1);
                    assert_eq!(
                        pos.after(mv).connection_outcome_after(mv, &rules),
                        Some(Outcome::Win(us))
                    );
                }
            }
            assert!(found > 20, "{variant}: only {found} positions with a win");
        }
    }
}
