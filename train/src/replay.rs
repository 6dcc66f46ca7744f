//! The replay window: the newest positions of one network layout across the shard files
//! of a directory (written by the selfplay crate), as many as its [`WindowSize`] says for
//! the positions produced so far (a fixed number, or one that grows with the data):
//! positions of the window's variant, and of variants with the same layout
//! ([`crate::encoding::same_layout`], e.g. `standard` and `scrambled-eggs`). Defective
//! shards are reported once and skipped, never fatal.

use crate::encoding::same_layout;
use loa::Variant;
use selfplay::data::{list_shards, read_shard, read_shard_sample_count, Sample};
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

/// How many positions a [`ReplayWindow`] holds: `base`, or, with `growth` g > 0, a number
/// that grows with the positions the run has produced (KataGo's power-law window). At n
/// produced positions, n > c = `base`, it holds
///
/// c · (1 + g · ((n/c)^a − 1) / a), a = `exponent`,
///
/// so it grows by g positions per new one at n = c and by g·(n/c)^(a−1) later: with
/// g ≤ 1 and a ≤ 1 (what [`crate::TrainConfig::validate`] allows) it never outgrows the
/// data, and every shard that left the window stays out of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowSize {
    /// The size until the run has produced this many positions (and the least size).
    pub base: usize,
    /// g: positions added to the window per position produced, at n = `base`; 0 keeps
    /// the window at `base`.
    pub growth: f64,
    /// a, in (0, 1]: how fast the growth tapers (1: never, a window of
    /// c + g · (n − c)).
    pub exponent: f64,
}

impl WindowSize {
    /// A window of `base` positions, whatever the run produced.
    pub fn fixed(base: usize) -> WindowSize {
        WindowSize {
            base,
            growth: 0.0,
            exponent: 1.0,
        }
    }

    /// The window's size once the run has produced `produced` positions (at least 1).
    pub fn at(&self, produced: u64) -> usize {
        let base = self.base.max(1);
        let (c, n) = (base as f64, produced as f64);
        if self.growth <= 0.0 || n <= c {
            return base;
        }
        let a = self.exponent;
        let size = c * (1.0 + self.growth * ((n / c).powf(a) - 1.0) / a);
        // `as` saturates; a NaN (a bad exponent the config would refuse) keeps the base.
        (size as usize).max(base)
    }
}

/// What one [`ReplayWindow::refresh`] did.
#[derive(Debug, Default)]
pub struct RefreshReport {
    /// Shards read into the window.
    pub new_shards: usize,
    /// Positions added.
    pub new_samples: usize,
    /// Shards that could not be read (truncated, corrupt, unreadable), each naming its
    /// file; they are not retried.
    pub skipped: Vec<selfplay::Error>,
    /// Positions ignored because their variant's layout is not the window's.
    pub other_layout: usize,
    /// Positions ignored because they have no policy target and the window keeps only
    /// positions with one ([`ReplayWindow::keep_value_only`]).
    pub value_only: usize,
    /// Old shards dropped from the window.
    pub evicted_shards: usize,
}

/// The newest positions for training. Plain data, `Send + Sync`.
pub struct ReplayWindow {
    size: WindowSize,
    /// `size` at the positions produced so far.
    capacity: usize,
    /// Samples in every shard seen (read, or counted from the header of one too old to
    /// read), whatever the window keeps of them: the positions the run has produced,
    /// which size a growing window.
    produced: u64,
    variant: Variant,
    /// Whether positions without a policy target are kept.
    value_only: bool,
    /// Whether shards are ordered by name ([`selfplay::output::shard_order_key`]) rather
    /// than by modification time.
    by_name: bool,
    /// Oldest first.
    shards: VecDeque<(PathBuf, Vec<Sample>)>,
    /// Every shard already considered (read, skipped as defective, or too old).
    seen: HashSet<PathBuf>,
    total: usize,
    /// `starts[i]`: index of the first sample of `shards[i]` in the concatenation.
    starts: Vec<usize>,
}

impl ReplayWindow {
    /// An empty window of `capacity` positions of `variant`'s layout.
    pub fn new(capacity: usize, variant: Variant) -> ReplayWindow {
        ReplayWindow::with_size(WindowSize::fixed(capacity), variant)
    }

    /// An empty window sized by `size` for positions of `variant`'s layout.
    pub fn with_size(size: WindowSize, variant: Variant) -> ReplayWindow {
        ReplayWindow {
            size,
            capacity: size.at(0),
            produced: 0,
            variant,
            value_only: true,
            by_name: false,
            shards: VecDeque::new(),
            seen: HashSet::new(),
            total: 0,
            starts: Vec::new(),
        }
    }

    /// Whether the window keeps positions without a policy target (the cheap searches of
    /// playout-cap randomisation; trained for their value only). Default true; false keeps
    /// only full-search positions, as KataGo does. Applies to shards read from now on.
    pub fn keep_value_only(mut self, keep: bool) -> ReplayWindow {
        self.value_only = keep;
        self
    }

    /// Orders the shards by their names ([`selfplay::output::shard_order_key`]: prefix,
    /// then the writer's order) instead of by modification time, so that the window, and
    /// the batches sampled from it, do not depend on when files were written: a run with
    /// deterministic shard names rebuilds the same window after a restart. Default false.
    pub fn order_by_name(mut self, on: bool) -> ReplayWindow {
        self.by_name = on;
        self
    }

    /// A window over given samples (tests, supervised data); samples of another layout
    /// are dropped.
    pub fn from_samples(samples: Vec<Sample>, capacity: usize, variant: Variant) -> Self {
        let mut w = ReplayWindow::new(capacity, variant);
        w.produced = samples.len() as u64;
        let samples: Vec<Sample> = samples.into_iter().filter(|s| w.accepts(s)).collect();
        w.total = samples.len();
        w.shards.push_back((PathBuf::from("<memory>"), samples));
        w.evict();
        w
    }

    /// Reads the shards of `dir` not seen before (newest first, only as many as can be
    /// in the window), then drops shards that fell out of the window. The window's size
    /// follows the samples of every shard seen (a shard too old to be read is counted by
    /// its header; one whose header cannot be read counts nothing). Errors only when the
    /// directory itself cannot be listed.
    pub fn refresh(&mut self, dir: &Path) -> Result<RefreshReport, selfplay::Error> {
        let mut report = RefreshReport::default();
        let mut fresh = Vec::new();
        let mut fresh_samples = 0;
        let mut paths = list_shards(dir)?;
        if self.by_name {
            let key = |p: &PathBuf| {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                selfplay::output::shard_order_key(&name)
            };
            // Newest (greatest) first, like the listing by time.
            paths.sort_by_cached_key(|p| std::cmp::Reverse(key(p)));
        }
        // The size first: it decides which of the new shards are too old to read.
        for path in paths.iter().filter(|p| !self.seen.contains(*p)) {
            self.produced += read_shard_sample_count(path).unwrap_or(0) as u64;
        }
        self.capacity = self.size.at(self.produced);
        for path in paths {
            if self.seen.contains(&path) {
                continue;
            }
            self.seen.insert(path.clone());
            if fresh_samples >= self.capacity {
                // Older than everything the window can hold.
                continue;
            }
            match read_shard(&path) {
                Ok(samples) => {
                    let before = samples.len();
                    let samples: Vec<Sample> = samples
                        .into_iter()
                        .filter(|s| same_layout(self.variant, s.position.variant()))
                        .collect();
                    report.other_layout += before - samples.len();
                    let before = samples.len();
                    let samples: Vec<Sample> =
                        samples.into_iter().filter(|s| self.accepts(s)).collect();
                    report.value_only += before - samples.len();
                    fresh_samples += samples.len();
                    fresh.push((path, samples));
                }
                Err(e) => report.skipped.push(e),
            }
        }
        report.new_shards = fresh.len();
        report.new_samples = fresh_samples;
        for shard in fresh.into_iter().rev() {
            self.total += shard.1.len();
            self.shards.push_back(shard);
        }
        report.evicted_shards = self.evict();
        Ok(report)
    }

    fn evict(&mut self) -> usize {
        let mut evicted = 0;
        while let Some((_, front)) = self.shards.front() {
            if self.total - front.len() >= self.capacity {
                self.total -= front.len();
                self.shards.pop_front();
                evicted += 1;
            } else {
                break;
            }
        }
        self.starts.clear();
        let mut at = 0;
        for (_, s) in &self.shards {
            self.starts.push(at);
            at += s.len();
        }
        evicted
    }

    /// The positions the window may hold now ([`WindowSize::at`] the positions produced).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Samples in every shard the window has seen: what the run has produced so far.
    pub fn produced(&self) -> u64 {
        self.produced
    }

    /// Number of positions available for sampling (at most the capacity).
    pub fn len(&self) -> usize {
        self.total.min(self.capacity)
    }

    /// Whether no position is available.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The variant whose layout the window's positions have.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Whether `sample` belongs in this window: its variant has the window's layout, and
    /// it has a policy target unless value-only positions are kept (tree-only samples,
    /// which are not cheap searches, always belong).
    pub fn accepts(&self, sample: &Sample) -> bool {
        same_layout(self.variant, sample.position.variant())
            && (self.value_only || sample.tree_only || !sample.policy.is_empty())
    }

    /// Number of shards held.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// Position `i` of `0..len()` (oldest of the window first).
    pub fn get(&self, i: usize) -> &Sample {
        assert!(i < self.len(), "window index {i} out of range");
        let k = i + (self.total - self.len());
        let s = self.starts.partition_point(|&start| start <= k) - 1;
        &self.shards[s].1[k - self.starts[s]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Position, Rules, Variant};
    use selfplay::data::write_shard;

    /// A start position tagged by its ply counter.
    fn sample(variant: Variant, tag: u32) -> Sample {
        let rules = Rules::classic();
        let mut p = Position::start(variant, &rules);
        p.set_ply(tag);
        Sample {
            position: p,
            rules,
            moves: p.legal_moves(&rules).to_vec(),
            policy: vec![],
            search_value: 0.0,
            outcome: 0.0,
            tree_only: false,
            final_pieces: None,
        }
    }

    #[test]
    fn window_keeps_newest_and_skips_bad_shards() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let tags = |n: u32, base: u32| -> Vec<Sample> {
            (0..n)
                .map(|i| sample(Variant::Standard, base + i))
                .collect()
        };
        write_shard(&d.join("a.shard"), &tags(4, 10)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(15));
        std::fs::write(d.join("bad.shard"), b"LOAZSHRD truncated").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(15));
        let mut b = tags(3, 50);
        b.push(sample(Variant::Six, 90));
        b.push(sample(Variant::Gemma, 91));
        b.insert(1, sample(Variant::ScrambledEggs, 51));
        b[2].position.set_ply(52);
        b[3].position.set_ply(53);
        write_shard(&d.join("b.shard"), &b).unwrap();

        let mut w = ReplayWindow::new(5, Variant::Standard);
        let r = w.refresh(d).unwrap();
        assert_eq!(r.skipped.len(), 1);
        assert!(r.skipped[0].to_string().contains("bad.shard"));
        // 6x6 and gemma have other layouts; scrambled-eggs has standard's.
        assert_eq!(r.other_layout, 2);
        assert_eq!(r.new_shards, 2);
        assert_eq!(w.len(), 5);
        // Newest five: the last one of a, then the four kept of b.
        let got: Vec<u32> = (0..5).map(|i| w.get(i).position.ply()).collect();
        assert_eq!(got, vec![13, 50, 51, 52, 53]);
        assert_eq!(w.get(2).position.variant(), Variant::ScrambledEggs);

        // A new shard pushes a out; the bad one is not retried.
        std::thread::sleep(std::time::Duration::from_millis(15));
        write_shard(&d.join("c.shard"), &tags(3, 70)).unwrap();
        let r = w.refresh(d).unwrap();
        assert_eq!(r.new_shards, 1);
        assert!(r.skipped.is_empty());
        assert_eq!(r.evicted_shards, 1);
        let got: Vec<u32> = (0..5).map(|i| w.get(i).position.ply()).collect();
        assert_eq!(got, vec![52, 53, 70, 71, 72]);
        assert_eq!(w.shard_count(), 2);

        // A gemma window keeps only the gemma position of these shards.
        let mut g = ReplayWindow::new(5, Variant::Gemma);
        let r = g.refresh(d).unwrap();
        assert_eq!((g.len(), r.other_layout), (1, 12));
        assert_eq!(g.get(0).position.variant(), Variant::Gemma);
    }

    /// Ordered by name, the window is the same whatever the files' times: built at once,
    /// or shard by shard as they were written.
    #[test]
    fn windows_ordered_by_name_do_not_depend_on_file_times() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let names = [
            "loop-g0001-n002-0000000000000-0-00000.shard",
            "loop-g0001-n001-0000000000000-0-00001.shard",
            "loop-g0002-n003-0000000000000-0-00000.shard",
        ];
        let write = |k: usize| {
            let samples: Vec<Sample> = (0..3)
                .map(|i| sample(Variant::Standard, 10 * k as u32 + i))
                .collect();
            write_shard(&d.join(names[k]), &samples).unwrap();
        };
        let mut incremental = ReplayWindow::new(7, Variant::Standard).order_by_name(true);
        for k in 0..3 {
            write(k);
            incremental.refresh(d).unwrap();
        }
        let plies = |w: &ReplayWindow| -> Vec<u32> {
            (0..w.len()).map(|i| w.get(i).position.ply()).collect()
        };
        assert_eq!(plies(&incremental), vec![2, 10, 11, 12, 20, 21, 22]);
        // Rewritten newest first (as a restart's copy could be): the same window.
        for k in (0..3).rev() {
            std::thread::sleep(std::time::Duration::from_millis(15));
            write(k);
        }
        let mut at_once = ReplayWindow::new(7, Variant::Standard).order_by_name(true);
        at_once.refresh(d).unwrap();
        assert_eq!(plies(&at_once), plies(&incremental));
        let mut by_time = ReplayWindow::new(7, Variant::Standard);
        by_time.refresh(d).unwrap();
        assert_ne!(plies(&by_time), plies(&incremental));
    }

    #[test]
    fn value_only_positions_can_be_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut samples: Vec<Sample> = (0..6).map(|i| sample(Variant::Standard, i)).collect();
        for s in samples.iter_mut().step_by(3) {
            s.policy = vec![1.0 / s.moves.len() as f32; s.moves.len()];
        }
        write_shard(&d.join("a.shard"), &samples).unwrap();
        let mut all = ReplayWindow::new(10, Variant::Standard);
        let r = all.refresh(d).unwrap();
        assert_eq!((all.len(), r.value_only), (6, 0));
        let mut full = ReplayWindow::new(10, Variant::Standard).keep_value_only(false);
        let r = full.refresh(d).unwrap();
        assert_eq!((full.len(), r.value_only, r.new_samples), (2, 4, 2));
        let got: Vec<u32> = (0..2).map(|i| full.get(i).position.ply()).collect();
        assert_eq!(got, vec![0, 3]);
        let mem = ReplayWindow::new(10, Variant::Standard).keep_value_only(false);
        assert!(!mem.accepts(&samples[1]) && mem.accepts(&samples[0]));
        // Descent's tree-only positions are no cheap searches: always kept.
        let tree = Sample {
            moves: vec![],
            tree_only: true,
            final_pieces: None,
            ..samples[1].clone()
        };
        assert!(mem.accepts(&tree));
    }

    /// KataGo's power law: the base up to `base` positions produced, then growing at
    /// `growth` per position and tapering; never more than the data; a fixed size stays.
    #[test]
    fn a_growing_window_follows_the_power_law_and_never_outgrows_the_data() {
        let fixed = WindowSize::fixed(60_000);
        assert_eq!(fixed.at(0), 60_000);
        assert_eq!(fixed.at(10_000_000), 60_000);
        let katago = WindowSize {
            base: 60_000,
            growth: 0.4,
            exponent: 0.65,
        };
        assert_eq!(katago.at(0), 60_000);
        assert_eq!(katago.at(60_000), 60_000);
        // c · (1 + g · ((n/c)^a − 1) / a) at n = 315 000 and 1.9 million, worked by hand:
        // (5.25^0.65 − 1) / 0.65 = 2.98208, (31.667^0.65 − 1) / 0.65 = 12.99865.
        let near = |got: usize, want: f64| (got as f64 - want).abs() / want < 1e-3;
        assert!(
            near(katago.at(315_000), 60_000.0 * (1.0 + 0.4 * 2.98208)),
            "{}",
            katago.at(315_000)
        );
        assert!(
            near(katago.at(1_900_000), 60_000.0 * (1.0 + 0.4 * 12.99865)),
            "{}",
            katago.at(1_900_000)
        );
        // Growing, never past the data, at most g per position produced.
        let mut last = katago.at(60_000);
        for n in (60_000..3_000_000u64).step_by(10_007) {
            let size = katago.at(n);
            assert!(
                size >= last && size as u64 <= n.max(60_000),
                "n {n}: {size}"
            );
            assert!(
                (size - last) as f64 <= 0.4 * 10_007.0 + 1.0,
                "n {n}: {last} → {size}"
            );
            last = size;
        }
        // g = 1 and a = 1: the window holds everything produced.
        let all = WindowSize {
            base: 100,
            growth: 1.0,
            exponent: 1.0,
        };
        assert_eq!(all.at(12_345), 12_345);
        assert_eq!(WindowSize { base: 0, ..all }.at(0), 1);
    }

    /// A growing window counts every shard it has seen, the ones too old to read by their
    /// headers, so a fresh window over the same directory (a restart) has the same size
    /// and positions as one that read the shards as they came.
    #[test]
    fn a_growing_window_counts_the_positions_produced_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let size = WindowSize {
            base: 10,
            growth: 0.5,
            exponent: 1.0,
        };
        let mut incremental = ReplayWindow::with_size(size, Variant::Standard).order_by_name(true);
        for k in 0..8u32 {
            let samples: Vec<Sample> = (0..5)
                .map(|i| sample(Variant::Standard, 10 * k + i))
                .collect();
            write_shard(
                &d.join(format!("loop-g{k:04}-n001-0000000000000-0-00000.shard")),
                &samples,
            )
            .unwrap();
            incremental.refresh(d).unwrap();
            let produced = 5 * (k as u64 + 1);
            assert_eq!(incremental.produced(), produced);
            // 10 + 0.5 · (n − 10) once n > 10, filled by whole shards.
            let capacity = if produced <= 10 {
                10
            } else {
                10 + (produced as usize - 10) / 2
            };
            assert_eq!(incremental.capacity(), capacity, "after shard {k}");
            assert_eq!(
                incremental.len(),
                capacity.min(produced as usize),
                "after shard {k}"
            );
        }
        // 40 produced: a window of 25, holding the newest 25 positions.
        assert_eq!((incremental.capacity(), incremental.len()), (25, 25));
        let plies = |w: &ReplayWindow| -> Vec<u32> {
            (0..w.len()).map(|i| w.get(i).position.ply()).collect()
        };
        let mut restarted = ReplayWindow::with_size(size, Variant::Standard).order_by_name(true);
        let r = restarted.refresh(d).unwrap();
        // It read only the 5 newest shards, and counted the other 3 by their headers.
        assert_eq!(r.new_shards, 5);
        assert_eq!(restarted.produced(), 40);
        assert_eq!(plies(&restarted), plies(&incremental));
        assert_eq!(plies(&restarted)[0], 30);
    }
}
