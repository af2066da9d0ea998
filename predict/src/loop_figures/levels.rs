//! The levels of the memory hierarchy a loop's data lives in: the cache
//! that holds a working set or a reuse window on so many threads, its
//! capacity per thread, the share of a sweep that comes from DRAM, and
//! the step of a last cache other guests share ([`LastCache`]; lecture
//! §2.4, §2.6: the working-set curve's knee).

use models::profile::MemoryLevel;
use models::units::Si;

use super::Bound;
use crate::machine::{missing, Machine, Missing};

/// How much of the last cache a prediction gives the loop's data.
///
/// The profile's sweep measured the last cache at one moment. On a host
/// whose other guests share it, the loop's share moves: on the Xeon VM
/// (260 MiB of L3 reported) the two-thread copy at 128 MiB in all read
/// 20–52 GB/s in runs a minute apart, and the 4096×4096 stencil swept
/// 128 MiB in 3.2–9 ms. A working set between the end of the cache's
/// plateau on the sweep and the size the OS reports for the cache
/// ([`Machine::on_last_cache_step`]) is therefore predicted at both ends
/// as well.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LastCache {
    /// As the profile measured it: the sweeps read at the working set, the
    /// capacities of [`Machine::holding_level`].
    #[default]
    AsProfiled,
    /// All of the size the OS reports (shared by the threads), at the
    /// rates of the cache's plateau on the sweeps.
    Whole,
    /// None of it: what the private caches do not hold comes from DRAM.
    Lost,
}

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

    /// Whether `bytes` per thread on `threads` threads lie on the last
    /// cache's step: beyond the last point of its plateau on the sweep of
    /// that many threads (`models::profile::stream::StreamLevel`) and within
    /// the share of the size the OS reports for it
    /// ([`LastCache::Whole`]). Such a working set is predicted with the
    /// whole cache and with none of it as well.
    pub fn on_last_cache_step(&self, bytes: f64, threads: usize) -> bool {
        self.last_cache() == LastCache::AsProfiled
            && self
                .last_plateau_end(threads)
                .zip(self.whole_last_cache(threads))
                .is_some_and(|(end, whole)| end < bytes && bytes <= whole)
    }

    /// The working set at which a sweep is read for a loop with `bytes`
    /// per thread on `threads` threads, `at` being that working set as the
    /// sweep on `curve_threads` threads counts it: `at` as profiled; with
    /// the whole last cache, at most the last point of the cache's plateau
    /// on that sweep, where the cache holds the loop's bytes; with none of
    /// it, the DRAM end of the sweep, where no private cache does.
    pub(crate) fn swept_at(
        &self,
        at: f64,
        curve_threads: usize,
        bytes: f64,
        threads: usize,
    ) -> f64 {
        match self.last_cache() {
            LastCache::AsProfiled => at,
            LastCache::Whole => match self.last_plateau_end(curve_threads) {
                Some(end) if self.whole_last_cache(threads).is_some_and(|w| bytes <= w) => {
                    at.min(end)
                }
                _ => at,
            },
            LastCache::Lost if self.private_level_holds(bytes, threads) => at,
            LastCache::Lost => f64::INFINITY,
        }
    }

    /// The name of the last cache ("L3").
    pub(crate) fn last_cache_name(&self) -> Option<&'a str> {
        Some(self.profile.levels[self.last_cache_index()?].name.as_str())
    }

    /// The index of the last cache, the last level with a size.
    fn last_cache_index(&self) -> Option<usize> {
        self.profile
            .levels
            .iter()
            .rposition(|l| l.size_bytes.is_some())
    }

    /// The largest working set per thread on the last cache's plateau on
    /// the sweep of `threads` threads.
    fn last_plateau_end(&self, threads: usize) -> Option<f64> {
        let name = self.last_cache_name()?;
        self.stream()
            .ok()?
            .levels
            .iter()
            .filter(|l| l.threads == threads && l.name == name)
            .flat_map(|l| l.points.iter().copied())
            .reduce(f64::max)
    }

    /// Bytes per thread the last cache holds with [`LastCache::Whole`]:
    /// the size the OS reports for it (else the detected one), shared by
    /// `threads` threads unless they run apart.
    fn whole_last_cache(&self, threads: usize) -> Option<f64> {
        self.with_last_cache(LastCache::Whole)
            .capacity(self.last_cache_index()?, threads)
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
    /// With [`LastCache::Whole`] the last cache holds its reported size,
    /// with [`LastCache::Lost`] nothing.
    fn capacity(&self, i: usize, threads: usize) -> Option<f64> {
        let levels = &self.profile.levels;
        let detected = levels[i].size_bytes?;
        let last = Some(i) == self.last_cache_index();
        let share = if i > 0 && last && !self.is_apart() {
            threads.max(1) as f64
        } else {
            1.0
        };
        let reported = self.reported_size(&levels[i].name);
        let capacity = match self.last_cache() {
            LastCache::Whole if last => reported.unwrap_or(detected),
            LastCache::Lost if last => 0.0,
            _ => reported
                .filter(|&r| r <= 2.0 * detected)
                .unwrap_or(detected),
        };
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
        let last = self.last_cache_index()?;
        (last > 0)
            .then(|| self.capacity(last - 1, threads))
            .flatten()
    }

    /// Whether a cache before the last one holds `bytes` per thread on
    /// `threads` threads.
    pub(crate) fn private_level_holds(&self, bytes: f64, threads: usize) -> bool {
        self.holding_index(bytes, threads)
            .zip(self.last_cache_index())
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
