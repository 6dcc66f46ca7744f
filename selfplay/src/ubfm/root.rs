//! What a UBFM search says at its root: the moves with their statistics, the move to
//! play, the principal variation, the value and resolution, and the searched states.

use super::{completed_order, Child, Resolution, Target, Ubfm, UbfmRootMove, MAX_PV};
use loa::{Move, Position};
use std::cmp::Ordering;

impl Ubfm {
    /// The root's moves with their statistics, in move-generation order (empty before a
    /// search).
    pub fn root_moves(&self) -> Vec<UbfmRootMove> {
        let Some(children) = self.table.get(&self.root).and_then(|e| e.children.as_ref()) else {
            return Vec::new();
        };
        children
            .iter()
            .map(|c| {
                let (resolution, value) = self.child_result(c);
                UbfmRootMove {
                    mv: c.mv,
                    visits: c.visits,
                    value,
                    resolution,
                }
            })
            .collect()
    }

    /// The move to play (the safest action, see the module docs): the fastest proven win
    /// if there is one; else, among the moves that are not proven losses, the most
    /// visited (ties: better completed value, then the first); else the slowest loss.
    /// `None` before a search.
    pub fn best_move(&self) -> Option<Move> {
        let moves = self.root_moves();
        let key = |m: &UbfmRootMove| (m.resolution, m.value);
        if moves
            .iter()
            .any(|m| matches!(m.resolution, Resolution::Win(_)))
        {
            return moves
                .iter()
                .reduce(|a, b| {
                    if completed_order(key(b), key(a)) == Ordering::Greater {
                        b
                    } else {
                        a
                    }
                })
                .map(|m| m.mv);
        }
        let safest = moves
            .iter()
            .filter(|m| !matches!(m.resolution, Resolution::Loss(_)))
            .reduce(|a, b| {
                let order = b
                    .visits
                    .cmp(&a.visits)
                    .then(completed_order(key(b), key(a)));
                if order == Ordering::Greater {
                    b
                } else {
                    a
                }
            });
        safest
            .or_else(|| {
                moves.iter().reduce(|a, b| {
                    if completed_order(key(b), key(a)) == Ordering::Greater {
                        b
                    } else {
                        a
                    }
                })
            })
            .map(|m| m.mv)
    }

    /// The best line from the root by completed value, through expanded states (at most
    /// 32 plies).
    pub fn principal_variation(&self) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut key = self.root;
        let mut seen = vec![key];
        while pv.len() < MAX_PV {
            let Some(children) = self.table.get(&key).and_then(|e| e.children.as_ref()) else {
                break;
            };
            let mut best: Option<(&Child, (Resolution, f32))> = None;
            for c in children {
                let r = self.child_result(c);
                if best.is_none_or(|(_, b)| completed_order(r, b) == Ordering::Greater) {
                    best = Some((c, r));
                }
            }
            let Some((c, _)) = best else { break };
            pv.push(c.mv);
            match c.target {
                Target::State(k) if !seen.contains(&k) => {
                    seen.push(k);
                    key = k;
                }
                _ => break,
            }
        }
        pv
    }

    /// Descent mode: every state whose value the search computed since the table was
    /// last cleared, as (hash, position, value, resolution) for its side to move: the
    /// expanded states with their backed-up minimax value, and the states proven
    /// without the evaluator (a win within the turn) with their exact value. The
    /// states only evaluated are not listed (their value is the evaluator's own).
    /// Empty outside Descent mode.
    pub fn searched_states(&self) -> impl Iterator<Item = (u64, &Position, f32, Resolution)> {
        self.positions.iter().map(|(&key, pos)| {
            let e = &self.table[&key];
            (key, pos, e.value, e.resolution)
        })
    }

    /// Entries in the table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// The root's position hash (its table key).
    pub fn root_key(&self) -> u64 {
        self.root
    }

    /// The root's value for its side to move.
    pub fn root_value(&self) -> f32 {
        self.table.get(&self.root).map_or(0.0, |e| e.value)
    }

    /// The root's resolution for its side to move (unresolved without completion).
    pub fn root_resolution(&self) -> Resolution {
        self.table
            .get(&self.root)
            .map_or(Resolution::Unresolved, |e| e.resolution)
    }
}
