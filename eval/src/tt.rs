//! Fixed-size transposition table keyed by the Zobrist hash, shared by the threads of one
//! search.
//!
//! Buckets of two entries: slot 0 is depth-preferred (replaced only by a deeper search or an
//! entry from an older search), slot 1 always takes the newest entry.
//!
//! Lock-free: a slot is two 64-bit words, the packed entry (`data`) and `key ^ data`
//! (Hyatt and Mann's lockless hashing). Threads read and write them with relaxed atomic
//! loads and stores and no lock; a slot that two threads wrote at once may hold one
//! thread's `data` with the other's check word, and then its check fails (`check ^ data !=
//! key`) and the probe misses, so a probe returns only an entry that some thread stored for
//! that key. The searcher checks a stored move for legality before it plays it (a key
//! collision of two positions stays possible, as in every table of this kind). With one
//! thread the table behaves as a plain one: every store is seen by the next probe.

use loa::Move;
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, AtomicU8, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

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

/// The fields of one slot, as packed into its data word: the move in bits 0-15, the score
/// (i16) in bits 16-31, the depth (i8) in bits 32-39, the meta byte in bits 40-47 (bound
/// in its bits 0-1, bit 2 set when a move is stored, generation in bits 3-7) and bit 48
/// set in every used slot (so an empty slot, all zeros, never matches).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Slot {
    mv: u16,
    score: i16,
    depth: i8,
    meta: u8,
    used: bool,
}

const USED: u64 = 1 << 48;

impl Slot {
    #[inline]
    fn pack(self) -> u64 {
        self.mv as u64
            | (self.score as u16 as u64) << 16
            | (self.depth as u8 as u64) << 32
            | (self.meta as u64) << 40
            | if self.used { USED } else { 0 }
    }

    #[inline]
    fn unpack(data: u64) -> Slot {
        Slot {
            mv: data as u16,
            score: (data >> 16) as u16 as i16,
            depth: (data >> 32) as u8 as i8,
            meta: (data >> 40) as u8,
            used: data & USED != 0,
        }
    }

    #[inline]
    fn generation(self) -> u8 {
        self.meta >> 3
    }

    #[inline]
    fn has_move(self) -> bool {
        self.meta & 4 != 0
    }
}

/// One slot in memory: `check = key ^ data` and `data` ([`Slot::pack`]).
struct AtomicSlot {
    check: AtomicU64,
    data: AtomicU64,
}

impl Default for AtomicSlot {
    fn default() -> AtomicSlot {
        AtomicSlot {
            check: AtomicU64::new(0),
            data: AtomicU64::new(0),
        }
    }
}

impl AtomicSlot {
    /// The slot's key and fields; `None` when empty. The key is only right when the two
    /// words were written together (the caller compares it with the key it wants).
    #[inline]
    fn load(&self) -> Option<(u64, Slot)> {
        let data = self.data.load(Ordering::Relaxed);
        let check = self.check.load(Ordering::Relaxed);
        (data & USED != 0).then(|| (check ^ data, Slot::unpack(data)))
    }

    #[inline]
    fn store(&self, key: u64, slot: Slot) {
        let data = slot.pack();
        self.check.store(key ^ data, Ordering::Relaxed);
        self.data.store(data, Ordering::Relaxed);
    }

    fn clear(&self) {
        self.check.store(0, Ordering::Relaxed);
        self.data.store(0, Ordering::Relaxed);
    }
}

/// The table: `Sync`, shared by reference (an `Arc`) between the threads of one search.
pub struct TranspositionTable {
    buckets: Box<[[AtomicSlot; 2]]>,
    mask: usize,
    generation: AtomicU8,
}

impl TranspositionTable {
    /// A table of about `mib` MiB (at least 1024 buckets; a power of two).
    pub fn new(mib: usize) -> TranspositionTable {
        let bytes = mib.max(1).saturating_mul(1024 * 1024);
        let want = (bytes / std::mem::size_of::<[AtomicSlot; 2]>()).max(1024);
        let n = if want.is_power_of_two() {
            want
        } else {
            want.next_power_of_two() / 2
        };
        TranspositionTable {
            buckets: (0..n).map(|_| Default::default()).collect(),
            mask: n - 1,
            generation: AtomicU8::new(0),
        }
    }

    /// A table of `n` buckets (a power of two), for tests that want many collisions.
    #[cfg(test)]
    fn with_buckets(n: usize) -> TranspositionTable {
        assert!(n.is_power_of_two());
        TranspositionTable {
            buckets: (0..n).map(|_| Default::default()).collect(),
            mask: n - 1,
            generation: AtomicU8::new(0),
        }
    }

    /// Starts a new search: older entries become preferred victims. Called once per
    /// search, before its threads start.
    pub fn new_search(&self) {
        let g = self.generation.load(Ordering::Relaxed);
        self.generation.store((g + 1) & 31, Ordering::Relaxed);
    }

    /// Forgets everything. Not while a search runs.
    pub fn clear(&self) {
        for bucket in self.buckets.iter() {
            bucket.iter().for_each(AtomicSlot::clear);
        }
    }

    #[inline]
    fn bucket(&self, key: u64) -> &[AtomicSlot; 2] {
        // The low bits pick the bucket; the full key is compared.
        &self.buckets[(key as usize) & self.mask]
    }

    /// The entry for `key`, if stored.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        self.bucket(key)
            .iter()
            .filter_map(AtomicSlot::load)
            .find(|&(k, _)| k == key)
            .map(|(_, s)| Entry {
                key,
                mv: if s.has_move() {
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
    pub fn store(&self, key: u64, mv: Option<Move>, score: i32, depth: i32, bound: Bound) {
        let generation = self.generation.load(Ordering::Relaxed);
        let bucket = self.bucket(key);
        let mut slot = Slot {
            mv: mv.map_or(0, |m| m.to_bits()),
            score: score.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: depth.clamp(-128, 127) as i8,
            meta: bound as u8 | if mv.is_some() { 4 } else { 0 } | (generation << 3),
            used: true,
        };
        let deep = bucket[0].load();
        let same_key = deep.is_some_and(|(k, _)| k == key);
        // Keep a known move when the new entry has none.
        if let Some((_, d)) = deep.filter(|_| same_key && mv.is_none()) {
            if d.has_move() {
                slot.mv = d.mv;
                slot.meta |= 4;
            }
        }
        let replace_deep = match deep {
            None => true,
            Some((_, d)) => same_key || d.generation() != generation || depth >= d.depth as i32,
        };
        bucket[if replace_deep { 0 } else { 1 }].store(key, slot);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn store_and_probe() {
        let tt = TranspositionTable::new(1);
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
        // A new search's entries replace the old generation's in the deep slot.
        tt.new_search();
        tt.store(other, None, -5, 0, Bound::Upper);
        assert_eq!(tt.probe(other).unwrap().score, -5);
        tt.clear();
        assert!(tt.probe(42).is_none() && tt.probe(other).is_none());
    }

    #[test]
    fn packing_round_trips_every_field_at_its_extremes() {
        for slot in [
            Slot::default(),
            Slot {
                mv: u16::MAX,
                score: i16::MIN,
                depth: i8::MIN,
                meta: u8::MAX,
                used: true,
            },
            Slot {
                mv: 1,
                score: i16::MAX,
                depth: i8::MAX,
                meta: 0,
                used: true,
            },
            Slot {
                mv: 0x8001,
                score: -1,
                depth: -1,
                meta: 0x80,
                used: false,
            },
        ] {
            assert_eq!(Slot::unpack(slot.pack()), slot);
        }
        // An empty slot (all zeros) reads as empty, whatever key is asked for.
        let empty = AtomicSlot::default();
        assert!(empty.load().is_none());
    }

    /// A slot whose two words come from different stores (a torn write of two threads)
    /// does not answer for either key.
    #[test]
    fn a_torn_slot_answers_for_no_key() {
        let a = Slot {
            mv: 3,
            score: 10,
            depth: 4,
            meta: 0,
            used: true,
        };
        let b = Slot {
            mv: 9,
            score: -7,
            depth: 2,
            meta: 1,
            used: true,
        };
        let slot = AtomicSlot::default();
        slot.store(1234, a);
        // The check word of key 1234 with `a`, the data word of `b` (another key's store).
        slot.data.store(b.pack(), Ordering::Relaxed);
        let (key, _) = slot.load().unwrap();
        assert_ne!(key, 1234);
        assert_ne!(key, 5678);
    }

    /// The torture test of the shared table: eight threads play random games and, at every
    /// position, probe the table and then store a legal move of it with a score and depth
    /// that are functions of its key, into a table of 64 buckets, so that threads
    /// overwrite each other's slots all the time. Every hit must carry a move legal in the
    /// probed position and the score and depth stored for its key: a torn slot (one
    /// thread's check word with another's data) must read as a miss.
    #[test]
    fn threads_sharing_a_small_table_only_ever_read_entries_of_the_probed_position() {
        use loa::{Game, Rules, Variant};
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        use std::sync::atomic::AtomicUsize;
        let tt = TranspositionTable::with_buckets(64);
        let rules = Rules::classic();
        let score_of = |key: u64| (key % 20_011) as i32 - 10_000;
        let depth_of = |key: u64| ((key >> 20) % 100) as i32 - 10;
        let hits = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let (tt, hits) = (&tt, &hits);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(t);
                    for g in 0..60 {
                        let variant = Variant::ALL[(g + t as usize) % Variant::ALL.len()];
                        let mut game = Game::new(variant, rules);
                        while !game.is_over() && game.moves().len() < 150 {
                            let pos = *game.position();
                            let key = pos.hash();
                            let moves = game.legal_moves();
                            let check = || {
                                if let Some(e) = tt.probe(key) {
                                    hits.fetch_add(1, Ordering::Relaxed);
                                    let mv = e.mv.expect("every store has a move");
                                    assert!(pos.is_legal(mv, &rules), "{} {mv}", pos.to_text());
                                    assert_eq!((e.score, e.depth), (score_of(key), depth_of(key)));
                                    assert_eq!(e.bound, Bound::Lower);
                                }
                            };
                            check();
                            let mv = moves[rng.random_range(0..moves.len())];
                            tt.store(key, Some(mv), score_of(key), depth_of(key), Bound::Lower);
                            // Read back while the other threads write into the same buckets.
                            check();
                            if g % 7 == 0 {
                                tt.new_search();
                            }
                            game.play(mv).unwrap();
                        }
                    }
                });
            }
        });
        // Most read-backs find the entry just stored.
        assert!(hits.load(Ordering::Relaxed) > 10_000, "{hits:?}");
    }

    /// The same property at the highest contention: four threads store and probe the keys
    /// of 64 positions in a table of one bucket (every store lands in one of two slots),
    /// checking every hit against its position.
    #[test]
    fn threads_hammering_one_bucket_never_read_a_torn_entry() {
        use loa::{Rules, Variant};
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        let rules = Rules::classic();
        let games = loa::testing::random_games(&[Variant::Standard], rules, 64, 40, 5);
        let positions: Vec<_> = games
            .iter()
            .filter(|g| !g.is_over())
            .map(|g| (*g.position(), g.legal_moves()))
            .collect();
        assert!(positions.len() > 32);
        let tt = TranspositionTable::with_buckets(1);
        let (positions, tt) = (&positions, &tt);
        let hits: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4u64)
                .map(|t| {
                    s.spawn(move || {
                        let mut rng = SmallRng::seed_from_u64(t);
                        let mut hits = 0;
                        for _ in 0..400_000 {
                            let (pos, moves) = &positions[rng.random_range(0..positions.len())];
                            let key = pos.hash();
                            if let Some(e) = tt.probe(key) {
                                hits += 1;
                                let mv = e.mv.expect("every store has a move");
                                assert!(pos.is_legal(mv, &rules), "{} {mv}", pos.to_text());
                                assert_eq!(e.score, (key % 1000) as i32);
                            }
                            let mv = moves[rng.random_range(0..moves.len())];
                            tt.store(key, Some(mv), (key % 1000) as i32, 1, Bound::Exact);
                        }
                        hits
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert!(hits > 1000, "{hits}");
    }
}

/// The model check (`make loom`: every interleaving and every value the memory model
/// allows the relaxed loads to see): a slot read while two threads store different
/// entries into it reads as empty, as one writer's key with that writer's entry, or as a
/// key that is neither (a miss), never as one key with the other's entry. (`make loom`
/// fails on a slot that stores the key itself instead of `key ^ data`.)
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    #[test]
    fn a_slot_read_during_two_stores_is_whole_or_a_miss() {
        loom::model(|| {
            let (ka, kb) = (0x1234_5678_9abc_def0u64, 0x0fed_cba9_8765_4321u64);
            let a = Slot {
                mv: 3,
                score: 10,
                depth: 4,
                meta: 0,
                used: true,
            };
            let b = Slot {
                mv: 9,
                score: -7,
                depth: 2,
                meta: 1,
                used: true,
            };
            let slot = Arc::new(AtomicSlot::default());
            let writers: Vec<_> = [(ka, a), (kb, b)]
                .into_iter()
                .map(|(k, s)| {
                    let slot = slot.clone();
                    loom::thread::spawn(move || slot.store(k, s))
                })
                .collect();
            if let Some((k, s)) = slot.load() {
                if k == ka {
                    assert_eq!(s, a);
                } else if k == kb {
                    assert_eq!(s, b);
                }
            }
            for w in writers {
                w.join().unwrap();
            }
            // Afterwards too (two interleaved stores may leave a torn slot, read as a miss
            // until the next store).
            let (k, s) = slot.load().expect("both stores done");
            assert!(k == ka && s == a || k == kb && s == b || k != ka && k != kb);
        });
    }
}
