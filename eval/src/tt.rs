//! Fixed-size transposition table keyed by the Zobrist hash.
//!
//! Buckets of two entries: slot 0 is depth-preferred (replaced only by a deeper search or an
//! entry from an older search), slot 1 always takes the newest entry. One table belongs to one
//! searcher (not shared between threads).

use loa::Move;

/// What a stored score says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The exact value.
    Exact = 0,
    /// A lower bound (the search failed high).
    Lower = 1,
    /// An upper bound (the search failed low).
    Upper = 2,
}

impl Bound {
    /// What `best` says about a node searched with the window (`alpha`, `beta`): a lower
    /// bound at or above `beta`, exact inside the window, an upper bound at or below
    /// `alpha`.
    #[inline]
    pub fn of_search(best: i32, alpha: i32, beta: i32) -> Bound {
        if best >= beta {
            Bound::Lower
        } else if best > alpha {
            Bound::Exact
        } else {
            Bound::Upper
        }
    }
}

/// One stored search result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Full hash of the position (checked on probe).
    pub key: u64,
    /// Best or refutation move, if any.
    pub mv: Option<Move>,
    /// Score, with win scores relative to this node (see the search).
    pub score: i32,
    /// Remaining depth of the search that produced it.
    pub depth: i32,
    /// Kind of bound.
    pub bound: Bound,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    key: u64,
    mv: u16,
    score: i16,
    depth: i8,
    /// Bound in bits 0-1, bit 2 set when a move is stored, generation in bits 3-7.
    meta: u8,
    used: bool,
}

/// The table.
pub struct TranspositionTable {
    buckets: Vec<[Slot; 2]>,
    mask: usize,
    generation: u8,
}

impl TranspositionTable {
    /// A table of about `mib` MiB (at least 1024 buckets; a power of two).
    pub fn new(mib: usize) -> TranspositionTable {
        let bytes = mib.max(1).saturating_mul(1024 * 1024);
        let want = (bytes / std::mem::size_of::<[Slot; 2]>()).max(1024);
        let n = if want.is_power_of_two() {
            want
        } else {
            want.next_power_of_two() / 2
        };
        TranspositionTable {
            buckets: vec![[Slot::default(); 2]; n],
            mask: n - 1,
            generation: 0,
        }
    }

    /// Starts a new search: older entries become preferred victims.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 31;
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.buckets.fill([Slot::default(); 2]);
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        // The low bits pick the bucket; the full key is compared.
        (key as usize) & self.mask
    }

    /// The entry for `key`, if stored.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let bucket = &self.buckets[self.index(key)];
        bucket
            .iter()
            .find(|s| s.used && s.key == key)
            .map(|s| Entry {
                key,
                mv: if s.meta & 4 != 0 {
                    Move::from_bits(s.mv)
                } else {
                    None
                },
                score: s.score as i32,
                depth: s.depth as i32,
                bound: match s.meta & 3 {
                    0 => Bound::Exact,
                    1 => Bound::Lower,
                    _ => Bound::Upper,
                },
            })
    }

    /// Stores a result. `score` must fit in an `i16`.
    #[inline]
    pub fn store(&mut self, key: u64, mv: Option<Move>, score: i32, depth: i32, bound: Bound) {
        let generation = self.generation;
        let idx = self.index(key);
        let bucket = &mut self.buckets[idx];
        let mut slot = Slot {
            key,
            mv: mv.map_or(0, |m| m.to_bits()),
            score: score.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: depth.clamp(-128, 127) as i8,
            meta: bound as u8 | if mv.is_some() { 4 } else { 0 } | (generation << 3),
            used: true,
        };
        let deep = &bucket[0];
        let same_key = deep.used && deep.key == key;
        // Keep a known move when the new entry has none.
        if same_key && mv.is_none() && deep.meta & 4 != 0 {
            slot.mv = deep.mv;
            slot.meta |= 4;
        }
        if !deep.used || same_key || deep.meta >> 3 != generation || depth >= deep.depth as i32 {
            bucket[0] = slot;
        } else {
            bucket[1] = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_probe() {
        let mut tt = TranspositionTable::new(1);
        let mv = Move::new(1, 17, false);
        tt.store(42, Some(mv), -123, 5, Bound::Lower);
        let e = tt.probe(42).unwrap();
        assert_eq!(
            (e.mv, e.score, e.depth, e.bound),
            (Some(mv), -123, 5, Bound::Lower)
        );
        assert!(tt.probe(43).is_none());
        // A shallower entry for another key in the same bucket goes to the second slot.
        let other = 42 + (tt.mask as u64 + 1);
        tt.store(other, None, 7, 1, Bound::Exact);
        assert_eq!(tt.probe(42).unwrap().depth, 5);
        assert_eq!(tt.probe(other).unwrap().score, 7);
        // Same key, no move: the old move is kept.
        tt.store(42, None, 9, 6, Bound::Exact);
        assert_eq!(tt.probe(42).unwrap().mv, Some(mv));
    }
}
