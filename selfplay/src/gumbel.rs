//! Gumbel root (Danihelka et al., "Policy improvement by planning with Gumbel", 2022):
//! the top-k root moves by `g + logit` (g ~ Gumbel(0,1), drawn only for self-play) share
//! the budget by sequential halving, ranked by `g + logit + σ(q̂)` with
//! `σ(q̂) = (c_visit + max visits) · c_scale · q̂` and `q̂ ∈ [0, 1]`. Below the root the
//! search is ordinary PUCT. The policy target is `softmax(logit + σ(completed q̂))`.

use crate::config::MctsConfig;
use crate::tree::{q_for_children, Edge, Proof};
use rand::rngs::StdRng;
use rand::Rng;

/// State of the sequential halving at one root.
#[derive(Debug)]
pub(crate) struct GumbelRoot {
    c_visit: f32,
    c_scale: f32,
    first_child: u32,
    /// `g + logit` per root child.
    scores: Vec<f32>,
    logits: Vec<f32>,
    /// Child edge indices still in the race.
    candidates: Vec<u32>,
    /// Root children to visit in this phase (popped from the back).
    schedule: Vec<u32>,
    phases_left: u32,
    budget_left: u32,
    finished: bool,
}

fn q01(q: f32) -> f32 {
    (q + 1.0) * 0.5
}

impl GumbelRoot {
    /// Sets up the race over the children of expanded root edge `root` with `budget`
    /// simulations; `rng` draws the Gumbel noise (none: deterministic, g = 0).
    pub(crate) fn new(
        config: &MctsConfig,
        edges: &[Edge],
        root: usize,
        budget: u32,
        rng: Option<&mut StdRng>,
    ) -> GumbelRoot {
        let range = edges[root].child_range();
        let logits: Vec<f32> = edges[range.clone()]
            .iter()
            .map(|e| (e.prior.max(1e-12)).ln())
            .collect();
        let mut scores = logits.clone();
        if let Some(rng) = rng {
            for s in &mut scores {
                let u: f64 = rng.random::<f64>().clamp(1e-12, 1.0 - 1e-12);
                *s += -(-(u.ln())).ln() as f32;
            }
        }
        let first_child = range.start as u32;
        let mut order: Vec<u32> = range
            .clone()
            .filter(|&c| edges[c].proof != Some(Proof::Loss))
            .map(|c| c as u32)
            .collect();
        if order.is_empty() {
            order = range.map(|c| c as u32).collect();
        }
        order.sort_by(|&a, &b| {
            scores[(b - first_child) as usize].total_cmp(&scores[(a - first_child) as usize])
        });
        order.truncate(config.gumbel_top_k as usize);
        let k = order.len().max(1) as f32;
        let phases = k.log2().ceil().max(1.0) as u32;
        let mut g = GumbelRoot {
            c_visit: config.gumbel_c_visit,
            c_scale: config.gumbel_c_scale,
            first_child,
            scores,
            logits,
            candidates: order,
            schedule: Vec::new(),
            phases_left: phases,
            budget_left: budget,
            finished: false,
        };
        g.start_phase();
        g
    }

    fn start_phase(&mut self) {
        self.schedule.clear();
        let n = self.candidates.len() as u32;
        if n == 0 || self.budget_left == 0 {
            self.finished = self.budget_left == 0 || n == 0;
            return;
        }
        let per = if self.phases_left <= 1 {
            self.budget_left.div_ceil(n)
        } else {
            (self.budget_left / (self.phases_left * n)).max(1)
        };
        // Round-robin order, so one batch of leaves spreads over the candidates.
        'fill: for _ in 0..per {
            for &c in &self.candidates {
                if self.schedule.len() as u32 >= self.budget_left {
                    break 'fill;
                }
                self.schedule.push(c);
            }
        }
        self.budget_left -= self.schedule.len() as u32;
        self.schedule.reverse();
    }

    /// Whether every scheduled simulation has been handed out and no phase remains.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// The root child the next simulation must go through, if this phase has any left.
    pub(crate) fn next_child(&mut self) -> Option<u32> {
        self.schedule.pop()
    }

    /// The phases left (1 in the last) and the simulations still scheduled in this one.
    #[cfg(test)]
    pub(crate) fn phases_and_schedule(&self) -> (u32, usize) {
        (self.phases_left, self.schedule.len())
    }

    /// Returns an unused slot (its descent collided with a pending leaf).
    pub(crate) fn give_back(&mut self, c: u32) {
        self.schedule.push(c);
    }

    fn sigma(&self, edges: &[Edge], root: usize, q: f32) -> f32 {
        let max_n = edges[edges[root].child_range()]
            .iter()
            .map(|e| e.visits)
            .max()
            .unwrap_or(0);
        (self.c_visit + max_n as f32) * self.c_scale * q01(q)
    }

    fn completed_q(&self, edges: &[Edge], root: usize, c: usize) -> f32 {
        let e = &edges[c];
        if let Some(p) = e.proof {
            p.value()
        } else if e.visits > 0 {
            e.q
        } else {
            q_for_children(edges, &edges[root])
        }
    }

    fn rank(&self, edges: &[Edge], root: usize, c: u32) -> f32 {
        let q = self.completed_q(edges, root, c as usize);
        self.scores[(c - self.first_child) as usize] + self.sigma(edges, root, q)
    }

    /// Called between batches: when this phase's simulations are all handed out (and
    /// backed up), keeps the better half of the candidates and schedules the next phase.
    pub(crate) fn maybe_halve(&mut self, edges: &[Edge], root: usize) {
        if self.finished || !self.schedule.is_empty() {
            return;
        }
        if self.budget_left == 0 {
            self.finished = true;
            return;
        }
        self.phases_left = self.phases_left.saturating_sub(1).max(1);
        let mut ranked: Vec<(f32, u32)> = self
            .candidates
            .iter()
            .map(|&c| (self.rank(edges, root, c), c))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let keep = if self.phases_left <= 1 && ranked.len() > 2 {
            2
        } else {
            ranked.len().div_ceil(2)
        };
        ranked.truncate(keep.max(1));
        self.candidates = ranked.into_iter().map(|(_, c)| c).collect();
        self.start_phase();
    }

    /// The candidate with the best `g + logit + σ(q̂)`.
    pub(crate) fn choice(&self, edges: &[Edge], root: usize) -> Option<u32> {
        self.candidates.iter().copied().max_by(|&a, &b| {
            self.rank(edges, root, a)
                .total_cmp(&self.rank(edges, root, b))
        })
    }

    /// `softmax(logit + σ(completed q̂))` over all root children.
    pub(crate) fn improved_policy(&self, edges: &[Edge], root: usize) -> Vec<f32> {
        let range = edges[root].child_range();
        let mut p: Vec<f32> = range
            .clone()
            .enumerate()
            .map(|(k, c)| {
                self.logits[k] + self.sigma(edges, root, self.completed_q(edges, root, c))
            })
            .collect();
        let max = p.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut total = 0.0;
        for x in &mut p {
            *x = (*x - max).exp();
            total += *x;
        }
        p.iter_mut().for_each(|x| *x /= total);
        p
    }
}
