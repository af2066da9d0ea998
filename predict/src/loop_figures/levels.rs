//! The levels of the memory hierarchy a loop's data lives in: the cache
//! that holds a working set or a reuse window on so many threads, its
//! capacity per thread, and the share of a sweep that comes from DRAM.

use models::profile::MemoryLevel;
use models::units::Si;

use super::Bound;
use crate::machine::{missing, Machine, Missing};

/// Where a loop's reused lines are found again ([`Machine::reuse_level`]).
#[derive(Debug, Clone, PartialEq)]
#[allow(non_snake_case)]
pub struct ReuseLevel {
    pub name: String,
    /// One thread's read bandwidth there, B/s.
    pub read_Bps: f64,
}

impl<'a> Machine<'a> {
    /// Bytes of a cache line (64 when the profile does not say).
    pub fn line_bytes(&self) -> f64 {
        self.profile
            .sections
            .latency
            .as_ref()
            .and_then(|l| l.line_bytes)
            .map_or(64.0, |b| b as f64)
    }

    /// The first level that holds `bytes` per thread on `threads` threads;
    /// none when the profile has no level without a size (DRAM).
    pub fn holding_level(&self, bytes: f64, threads: usize) -> Option<&'a MemoryLevel> {
        self.holding_index(bytes, threads)
            .map(|i| &self.profile.levels[i])
    }

    /// The index of [`Machine::holding_level`]'s level.
    pub(super) fn holding_index(&self, bytes: f64, threads: usize) -> Option<usize> {
        (0..self.profile.levels.len())
            .find(|&i| self.capacity(i, threads).map_or(true, |c| bytes <= c))
    }

    /// Bytes per thread that level `i` holds on `threads` threads; none
    /// for a level without a size (DRAM).
    ///
    /// A level's capacity is the size the OS reports for it, unless that is
    /// more than twice the detected size: a VM's OS may report the host's
    /// whole L3, and the latency curve's edge is only as sharp as its steps.
    /// A detected size beyond the reported one is not more capacity: the
    /// last cache's detected size is where one thread's STREAM loads fall
    /// half-way (in log) to DRAM's rate (`calibrate`'s streaming edge),
    /// and a working set past a cache's end still hits it in part, so that
    /// point lies beyond the end. On the Zen 4 VM (32 MiB L3) it read
    /// 16–71 MB, and the MPI ghost sweep at N = 2048 (33.6 MB per rank, two
    /// ranks) read −29% to −40% when a detected 69–71 MB let the L3 hold
    /// it, −9% to −20% when the reported size did not. The last cache
    /// beyond L1 is shared: each of `threads` threads gets its share,
    /// unless they run where they share no cache ([`Machine::apart`]).
    fn capacity(&self, i: usize, threads: usize) -> Option<f64> {
        let levels = &self.profile.levels;
        let detected = levels[i].size_bytes?;
        let last_cache = levels.iter().rposition(|l| l.size_bytes.is_some());
        let share = if i > 0 && Some(i) == last_cache && !self.is_apart() {
            threads.max(1) as f64
        } else {
            1.0
        };
        let capacity = self
            .reported_size(&levels[i].name)
            .filter(|&r| r <= 2.0 * detected)
            .unwrap_or(detected);
        Some(capacity / share)
    }

    /// The per-thread working set of a `region` all `threads` threads
    /// share, as the levels count it: the region whole where a private
    /// cache holds it (each core keeps its own copy of the lines), else
    /// one thread's share of it, since the last cache and DRAM hold it
    /// once for all, but never a share a private cache would hold: a
    /// region no core holds (between L2 and p·L2) is in the shared levels
    /// whatever its share.
    pub fn shared_region_per_thread(&self, region: f64, threads: usize) -> f64 {
        if self.private_level_holds(region, threads) {
            return region;
        }
        let share = region / threads.max(1) as f64;
        if self.private_level_holds(share, threads) {
            // A byte beyond the largest private cache.
            self.largest_private_capacity(threads)
                .map_or(share, |c| (c + 1.0).max(share))
        } else {
            share
        }
    }

    /// Bytes per thread of the largest cache before the last one, if the
    /// profile has one.
    fn largest_private_capacity(&self, threads: usize) -> Option<f64> {
        let levels = &self.profile.levels;
        let last = levels.iter().rposition(|l| l.size_bytes.is_some())?;
        (last > 0)
            .then(|| self.capacity(last - 1, threads))
            .flatten()
    }

    /// Whether a cache before the last one holds `bytes` per thread on
    /// `threads` threads.
    pub(crate) fn private_level_holds(&self, bytes: f64, threads: usize) -> bool {
        let last_cache = self
            .profile
            .levels
            .iter()
            .rposition(|l| l.size_bytes.is_some());
        self.holding_index(bytes, threads)
            .zip(last_cache)
            .is_some_and(|(i, last)| i < last)
    }

    /// The share s of a streamed working set's lines that come from DRAM,
    /// and why: 1 when `per_thread_bytes` exceeds the most the caches hold
    /// per thread on `threads` threads (C, [`Machine::holding_level`]'s
    /// capacities, the last cache shared by the threads), else 0. A sweep
    /// over more than a cache holds evicts each line before its next use
    /// (LRU). What is charged in this share was measured beside streams
    /// from DRAM (a stream's restarts, reads from a reuse window): what the
    /// core pays for streams that miss the caches.
    /// STREAM's read-only load kernel keeps part of such an array (on the
    /// Zen 4 VM one thread's loads at twice its 32 MiB L3 ran 35% faster
    /// than at DRAM), but a C Jacobi sweep there took as long per update at
    /// twice the L3 as at eight times it, and the MPI ghost sweep likewise.
    /// Until 2026-12-05 s was read off the sweep's read time between C and
    /// the DRAM size, which gave 0.3–0.5 at twice the L3.
    pub fn dram_share(&self, per_thread_bytes: f64, threads: usize) -> (f64, String) {
        let cache = (0..self.profile.levels.len())
            .filter_map(|i| self.capacity(i, threads))
            .reduce(f64::max);
        match cache.filter(|&c| per_thread_bytes > c) {
            Some(c) => (
                1.0,
                format!(
                    "s = 1: the working set, {} per thread, exceeds the {} per thread the caches hold",
                    Si(per_thread_bytes, "B"),
                    Si(c, "B")
                ),
            ),
            None => {
                let level = self.holding_level_name(per_thread_bytes, threads);
                (0.0, format!("s = 0: the working set is in {level}"))
            }
        }
    }

    /// Whether no cache holds `bytes` per thread on `threads` threads: the
    /// level that holds them is the profile's DRAM level (one without a
    /// size) or there is none.
    pub fn beyond_caches(&self, bytes: f64, threads: usize) -> bool {
        self.holding_level(bytes, threads)
            .map_or(true, |l| l.size_bytes.is_none())
    }

    /// Name of [`Machine::holding_level`]'s level, "DRAM" beyond them all.
    pub fn holding_level_name(&self, bytes: f64, threads: usize) -> &'a str {
        self.holding_level(bytes, threads)
            .map_or("DRAM", |l| l.name.as_str())
    }

    /// The cache level that holds a window of `window_bytes` per thread on
    /// `threads` threads (a loop's reuse, Kerncraft's layer condition), and
    /// one thread's read bandwidth there (the STREAM load kernel on its
    /// plateau), scaled by the loads' drift; DRAM when no cache holds the
    /// window ([`Machine::holding_level`]).
    pub fn reuse_level(
        &self,
        window_bytes: f64,
        threads: usize,
        bound: Bound,
    ) -> Result<ReuseLevel, Missing> {
        let l = self.holding_level(window_bytes, threads).ok_or_else(|| {
            missing(
                format!("a memory level holding a {window_bytes:.0} B window"),
                "latency",
            )
        })?;
        let read = l.bandwidth_1t_Bps.as_ref().ok_or_else(|| {
            missing(
                format!("the {} read bandwidth on one thread", l.name),
                "stream",
            )
        })?;
        Ok(ReuseLevel {
            name: l.name.clone(),
            read_Bps: bound.of_rate(read) * self.now.loads,
        })
    }

    /// The data (or unified) cache size the OS reports for the level named
    /// `name` ("L2"), bytes.
    fn reported_size(&self, name: &str) -> Option<f64> {
        let level: u32 = name.strip_prefix('L')?.parse().ok()?;
        self.profile
            .provenance
            .os_reported_caches
            .iter()
            .find(|c| c.level == level && c.kind != "Instruction")
            .map(|c| c.size_bytes as f64)
    }
}

#[cfg(test)]
mod tests {
    use models::profile::{MemoryLevel, Profile, Provenance};

    use crate::machine::Machine;

    fn level(name: &str, size: Option<f64>) -> MemoryLevel {
        MemoryLevel {
            name: name.into(),
            size_bytes: size,
            latency_s: None,
            bandwidth_1t_Bps: None,
            bandwidth_Bps: None,
        }
    }

    /// A region all threads share: whole per thread where a private cache
    /// holds it; beyond, one thread's share, but never a share an L2
    /// would hold, since no core holds the region (1.5 MiB on two
    /// threads over 1 MiB L2s read as in L2 before).
    #[test]
    fn a_shared_region_is_in_the_shared_levels_once_no_core_holds_it() {
        let mut p = Profile::new(Provenance::default());
        p.levels = vec![
            level("L1", Some(32768.0)),
            level("L2", Some(1048576.0)),
            level("L3", Some(33554432.0)),
            level("DRAM", None),
        ];
        let m = Machine::new(&p);
        let mib = 1048576.0;
        assert_eq!(m.shared_region_per_thread(0.5 * mib, 2), 0.5 * mib);
        let beyond_l2 = m.shared_region_per_thread(1.5 * mib, 2);
        assert_eq!(beyond_l2, mib + 1.0);
        assert_eq!(m.holding_level(beyond_l2, 2).unwrap().name, "L3");
        assert_eq!(m.shared_region_per_thread(8.0 * mib, 2), 4.0 * mib);
        assert_eq!(m.holding_level(4.0 * mib, 2).unwrap().name, "L3");
    }
}
