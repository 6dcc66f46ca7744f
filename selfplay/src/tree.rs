//! The search tree as an arena: one flat `Vec<Edge>`, each expanded edge owning a
//! contiguous range of child edges. Statistics live on edges (AlphaZero style), so
//! selection scans one contiguous slice. Growing the tree appends to the vector; no
//! per-node allocation. Re-rooting compacts the kept subtree into a spare buffer.

use loa::{Color, Move, Outcome};

/// Arenas smaller than this (in edges, 24 bytes each) are never compacted.
const MIN_COMPACT: usize = 1 << 16;

/// A proven game-theoretic result, for one side. Ordered from worst to best.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Proof {
    /// A forced loss.
    Loss,
    /// A forced draw.
    Draw,
    /// A forced win.
    Win,
}

impl Proof {
    /// The result as a value: −1, 0 or +1.
    #[inline]
    pub fn value(self) -> f32 {
        match self {
            Proof::Loss => -1.0,
            Proof::Draw => 0.0,
            Proof::Win => 1.0,
        }
    }

    /// The same result seen by the other side.
    #[inline]
    pub fn flipped(self) -> Proof {
        match self {
            Proof::Loss => Proof::Win,
            Proof::Draw => Proof::Draw,
            Proof::Win => Proof::Loss,
        }
    }

    /// The result of a finished game for `side`.
    #[inline]
    pub fn of(outcome: Outcome, side: Color) -> Proof {
        match outcome {
            Outcome::Draw => Proof::Draw,
            Outcome::Win(c) if c == side => Proof::Win,
            Outcome::Win(_) => Proof::Loss,
        }
    }
}

/// What the search knows of the position an edge leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EdgeState {
    /// Not evaluated yet.
    Unexpanded,
    /// Submitted to the evaluator, result not back yet.
    Pending,
    /// Children created.
    Expanded,
    /// Search stops here: the game is over in the child position, or its value is proven
    /// without expansion (an immediate win for the side to move). `proof` holds the result.
    Terminal,
}

/// A move from a parent position and everything the search knows about the position it
/// leads to. Values are from the point of view of the side making `mv`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub mv: Move,
    pub num_children: u16,
    /// Index of the first child edge (valid when `num_children > 0`).
    pub children: u32,
    pub prior: f32,
    /// Mean backed-up value for the mover.
    pub q: f32,
    pub visits: u32,
    /// Simulations through this edge not yet backed up (virtual loss).
    pub in_flight: u16,
    /// Proven result for the mover (`None`: not proven).
    pub proof: Option<Proof>,
    pub state: EdgeState,
}

impl Edge {
    pub(crate) fn new(mv: Move, prior: f32) -> Edge {
        Edge {
            mv,
            num_children: 0,
            children: 0,
            prior,
            q: 0.0,
            visits: 0,
            in_flight: 0,
            proof: None,
            state: EdgeState::Unexpanded,
        }
    }

    #[inline]
    pub(crate) fn child_range(&self) -> std::ops::Range<usize> {
        let s = self.children as usize;
        s..s + self.num_children as usize
    }
}

/// The mean value of expanded edge `p` for the side to move below it (the mover of its
/// children): `p.q` when the children are drops (same mover as `p`), else `-p.q`.
#[inline]
pub(crate) fn q_for_children(edges: &[Edge], p: &Edge) -> f32 {
    if p.num_children > 0 && edges[p.children as usize].mv.is_drop() {
        p.q
    } else {
        -p.q
    }
}

/// The arena. Edge `root` is a pseudo-edge leading to the root position (its mover is
/// the root position's previous mover, [`loa::Position::previous_mover`]: the side not
/// to move, or the side to move itself while a drop is pending).
#[derive(Debug)]
pub(crate) struct Tree {
    pub edges: Vec<Edge>,
    pub root: u32,
    /// Re-rooting compacts the arena once it holds more edges than this.
    compact_at: usize,
    spare: Vec<Edge>,
    queue: Vec<(u32, u32)>,
}

impl Tree {
    pub(crate) fn new() -> Tree {
        let mut t = Tree {
            edges: Vec::new(),
            root: 0,
            compact_at: 0,
            spare: Vec::new(),
            queue: Vec::new(),
        };
        t.clear();
        t
    }

    /// Drops everything; the root becomes a fresh unexpanded edge.
    pub(crate) fn clear(&mut self) {
        self.edges.clear();
        self.edges.push(Edge::new(Move::PASS, 1.0));
        self.root = 0;
        self.compact_at = MIN_COMPACT;
    }

    /// Number of edges held.
    pub(crate) fn len(&self) -> usize {
        self.edges.len()
    }

    /// The child of `parent` reached by `mv`, if `parent` is expanded.
    pub(crate) fn find_child(&self, parent: u32, mv: Move) -> Option<u32> {
        let p = &self.edges[parent as usize];
        if p.state != EdgeState::Expanded {
            return None;
        }
        p.child_range()
            .find(|&c| self.edges[c].mv == mv)
            .map(|c| c as u32)
    }

    /// Makes `new_root` (a descendant of the root) the root. The rest of the tree
    /// becomes garbage, compacted away (see [`Tree::compact`]) once the arena has doubled
    /// since the last compaction, so re-rooting costs O(1) amortised. A new root without
    /// children becomes unexpanded (its proof, if any, was from its parent's view).
    pub(crate) fn reroot(&mut self, new_root: u32) {
        if self.edges.len() > self.compact_at {
            self.compact(new_root);
            self.compact_at = (2 * self.edges.len()).max(MIN_COMPACT);
        } else {
            self.root = new_root;
            let root = &mut self.edges[new_root as usize];
            root.in_flight = 0;
            if root.num_children == 0 || root.state != EdgeState::Expanded {
                *root = Edge::new(root.mv, 1.0);
            }
        }
    }

    /// Keeps only the subtree of `new_root`, copied to the front of the arena, with
    /// `new_root` as the root.
    pub(crate) fn compact(&mut self, new_root: u32) {
        let old = &self.edges;
        let new = &mut self.spare;
        new.clear();
        self.queue.clear();
        let mut r = old[new_root as usize];
        r.in_flight = 0;
        new.push(r);
        self.queue.push((new_root, 0));
        let mut head = 0;
        while head < self.queue.len() {
            let (o, n) = self.queue[head];
            head += 1;
            let e = old[o as usize];
            if e.num_children == 0 {
                continue;
            }
            let start = new.len() as u32;
            new[n as usize].children = start;
            for (k, c) in e.child_range().enumerate() {
                let mut child = old[c];
                child.in_flight = 0;
                new.push(child);
                self.queue.push((c as u32, start + k as u32));
            }
        }
        std::mem::swap(&mut self.edges, &mut self.spare);
        self.root = 0;
        let root = &mut self.edges[0];
        if root.num_children == 0 || root.state != EdgeState::Expanded {
            *root = Edge::new(root.mv, 1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_stay_small() {
        assert!(std::mem::size_of::<Edge>() <= 24);
    }

    #[test]
    fn reroot_keeps_the_subtree_only() {
        let mut t = Tree::new();
        let mv = |k: u8| Move::new(k, k + 1, false);
        // root -> [1, 2]; 2 -> [3, 4]; 1 -> [5]
        t.edges[0].state = EdgeState::Expanded;
        t.edges[0].children = 1;
        t.edges[0].num_children = 2;
        t.edges.push(Edge::new(mv(1), 0.5));
        t.edges.push(Edge::new(mv(2), 0.5));
        t.edges.push(Edge::new(mv(3), 0.3));
        t.edges.push(Edge::new(mv(4), 0.7));
        t.edges.push(Edge::new(mv(5), 1.0));
        t.edges[2].state = EdgeState::Expanded;
        t.edges[2].children = 3;
        t.edges[2].num_children = 2;
        t.edges[2].visits = 7;
        t.edges[1].state = EdgeState::Expanded;
        t.edges[1].children = 5;
        t.edges[1].num_children = 1;
        assert_eq!(t.find_child(0, mv(2)), Some(2));
        // Small arenas re-root in place.
        t.reroot(2);
        assert_eq!((t.root, t.len()), (2, 6));
        t.root = 0;
        t.compact(2);
        assert_eq!(t.len(), 3);
        assert_eq!(t.edges[0].visits, 7);
        assert_eq!(t.edges[0].child_range(), 1..3);
        assert_eq!(t.edges[1].mv, mv(3));
        assert_eq!(t.edges[2].mv, mv(4));
        // A leaf root is reset.
        t.compact(1);
        assert_eq!(t.len(), 1);
        assert_eq!(t.edges[0].state, EdgeState::Unexpanded);
    }
}
