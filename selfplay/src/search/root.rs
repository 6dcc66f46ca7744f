//! What a search says at its root: the moves with their statistics, the principal
//! variation, the value and proof, the move to play and the policy target.

use super::{RootMove, Search};
use crate::tree::{EdgeState, Proof};
use loa::Move;
use rand::Rng;

impl Search {
    /// The root's moves with their statistics, in decreasing prior order (the order of
    /// [`Search::policy_target`]).
    pub fn root_moves(&self) -> Vec<RootMove> {
        let edges = &self.tree.edges;
        let root = &edges[self.tree.root as usize];
        if root.state != EdgeState::Expanded {
            return Vec::new();
        }
        edges[root.child_range()]
            .iter()
            .map(|e| RootMove {
                mv: e.mv,
                visits: e.visits,
                q: e.q,
                prior: e.prior,
                proof: e.proof,
            })
            .collect()
    }

    /// The principal variation beginning with the root move `first`: `first`, then from
    /// each position the most visited child (ties: the higher value for its mover) while
    /// one has been visited; it ends at a leaf, a terminal or proven node, or a position
    /// whose children are unvisited. Just `[first]` when `first` is not a root move of the
    /// tree (e.g. the root check chose it without a search of this root).
    pub fn principal_variation(&self, first: Move) -> Vec<Move> {
        let edges = &self.tree.edges;
        let mut pv = vec![first];
        let Some(mut e) = self.tree.find_child(self.tree.root, first) else {
            return pv;
        };
        loop {
            let edge = &edges[e as usize];
            if edge.state != EdgeState::Expanded || edge.proof.is_some() {
                return pv;
            }
            let best = edge
                .child_range()
                .filter(|&c| edges[c].visits > 0)
                .max_by(|&a, &b| {
                    (edges[a].visits, edges[a].q)
                        .partial_cmp(&(edges[b].visits, edges[b].q))
                        .unwrap_or(std::cmp::Ordering::Equal)
                });
            match best {
                Some(c) => {
                    pv.push(edges[c].mv);
                    e = c as u32;
                }
                None => return pv,
            }
        }
    }

    /// Whether the root edge's statistics (those of the side that made the move leading
    /// to the root, see [`Position::previous_mover`]) are also the side to move's (a drop
    /// is pending at the root).
    fn root_edge_is_ours(&self) -> bool {
        self.root_pos.drop_pending()
    }

    /// Value of the root for its side to move: the proven result, or the mean of the
    /// backed-up values.
    pub fn root_value(&self) -> f32 {
        let root = &self.tree.edges[self.tree.root as usize];
        let v = root.proof.map_or(root.q, Proof::value);
        if self.root_edge_is_ours() {
            v
        } else {
            -v
        }
    }

    /// The proven result of the root for its side to move, if it is proven.
    pub fn root_proof(&self) -> Option<Proof> {
        let root = &self.tree.edges[self.tree.root as usize];
        root.proof.map(|p| {
            if self.root_edge_is_ours() {
                p
            } else {
                p.flipped()
            }
        })
    }

    /// Simulations completed through the root's children over this search (`begin`).
    pub fn simulations_done(&self) -> u32 {
        self.stats.simulations
    }

    /// The move to play without randomness: a proven win at once; else (Gumbel root) the
    /// Gumbel choice; else the most visited move that is not a proven loss (ties: higher
    /// value). `None` before the root is expanded.
    pub fn best_move(&self) -> Option<Move> {
        let moves = self.root_moves();
        if let Some(m) = moves.iter().find(|m| m.proof == Some(Proof::Win)) {
            return Some(m.mv);
        }
        if let Some(g) = &self.gumbel {
            if let Some(c) = g.choice(&self.tree.edges, self.tree.root as usize) {
                return Some(self.tree.edges[c as usize].mv);
            }
        }
        let candidates = moves.iter().filter(|m| m.proof != Some(Proof::Loss));
        let pick = |it: &mut dyn Iterator<Item = &RootMove>| {
            it.max_by(|a, b| {
                a.visits
                    .cmp(&b.visits)
                    .then(a.q.partial_cmp(&b.q).unwrap_or(std::cmp::Ordering::Equal))
                    .then(
                        a.prior
                            .partial_cmp(&b.prior)
                            .unwrap_or(std::cmp::Ordering::Equal),
                    )
            })
            .map(|m| m.mv)
        };
        pick(&mut candidates.clone()).or_else(|| pick(&mut moves.iter()))
    }

    /// A move drawn with probability ∝ visits^(1/temperature) among the moves that are
    /// not proven losses; a proven win is played at once; temperature 0 (or a Gumbel
    /// root, whose choice is already random) gives [`Search::best_move`].
    pub fn sample_move(&mut self, temperature: f32) -> Option<Move> {
        if temperature <= 0.0 || self.gumbel.is_some() {
            return self.best_move();
        }
        let moves = self.root_moves();
        if moves.iter().any(|m| m.proof == Some(Proof::Win)) {
            return self.best_move();
        }
        let allowed: Vec<&RootMove> = moves
            .iter()
            .filter(|m| m.proof != Some(Proof::Loss))
            .collect();
        let allowed = if allowed.iter().any(|m| m.visits > 0) {
            allowed
        } else {
            return self.best_move();
        };
        let max_visits = allowed.iter().map(|m| m.visits).max().unwrap_or(1) as f64;
        let weights: Vec<f64> = allowed
            .iter()
            .map(|m| (m.visits as f64 / max_visits).powf(1.0 / temperature as f64))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut x = self.rng.random::<f64>() * total;
        for (m, w) in allowed.iter().zip(&weights) {
            if x < *w {
                return Some(m.mv);
            }
            x -= w;
        }
        allowed.last().map(|m| m.mv)
    }

    /// The policy target over [`Search::root_moves`]' order: one-hot on a proven win;
    /// the Gumbel improved policy (Gumbel root); else the visit distribution.
    pub fn policy_target(&self) -> Vec<f32> {
        let moves = self.root_moves();
        if let Some(k) = moves.iter().position(|m| m.proof == Some(Proof::Win)) {
            let mut p = vec![0.0; moves.len()];
            p[k] = 1.0;
            return p;
        }
        if let Some(g) = &self.gumbel {
            return g.improved_policy(&self.tree.edges, self.tree.root as usize);
        }
        let total: u32 = moves.iter().map(|m| m.visits).sum();
        if total == 0 {
            return moves.iter().map(|m| m.prior).collect();
        }
        moves
            .iter()
            .map(|m| m.visits as f32 / total as f32)
            .collect()
    }
}
