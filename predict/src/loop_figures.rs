//! The profile figures the loop model reads: the read, write and bus roofs
//! of the level a working set lives in (from the STREAM sweep's kernels),
//! the latency of a random access into a region (the pointer-chase curve),
//! the memory-level parallelism of one core (the MLP curve), the
//! latency of a loop-carried chain, the level that holds a reuse window
//! and what a stream's restart costs.
//!
//! Each figure can be read at its point estimate or at either end of its
//! 95% interval ([`Bound`]), so a prediction carries the profile's
//! uncertainty as a range.

use calibrate::harness::kernels::stream::Kernel as StreamKernel;
use models::kernel::Traffic;
use models::profile::mlp::pages_label;
use models::profile::stream::{Placements, StreamSection};
use models::profile::MemoryLevel;
use models::traffic::{time_at, LevelModel};
use models::units::Si;
use models::Estimate;

use crate::machine::{missing, Machine, Missing};

/// Bytes the counting sort's scatter stores per item (a `u32` index).
pub const SCATTER_ITEM_BYTES: f64 = 4.0;

/// Which value of each measured figure a prediction uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The point estimates.
    Point,
    /// Every rate at the top of its interval, every latency at the bottom:
    /// the fastest the measurements allow.
    Fast,
    /// The opposite end: the slowest.
    Slow,
}

impl Bound {
    /// `point` moved to the interval end this bound stands for, for a rate
    /// (higher is faster) with interval [`lo`, `hi`].
    pub(crate) fn rate(self, point: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
        match self {
            Bound::Point => point,
            Bound::Fast => hi.unwrap_or(point),
            Bound::Slow => lo.unwrap_or(point),
        }
    }

    /// The same for a time (lower is faster).
    fn time(self, point: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
        match self {
            Bound::Point => point,
            Bound::Fast => lo.unwrap_or(point),
            Bound::Slow => hi.unwrap_or(point),
        }
    }
}

/// Load, store and allocate bytes per element of a STREAM kernel: from the
/// profile when it lists them, else from calibrate's kernel table (profiles
/// from before the section carried them).
pub(crate) fn mix_of(section: &StreamSection, kernel: &str) -> Option<(f64, f64, f64)> {
    if let Some(mix) = section.mix(kernel) {
        return Some(mix);
    }
    let k = StreamKernel::ALL.into_iter().find(|k| k.name() == kernel)?;
    Some((
        8.0 * k.loaded_arrays() as f64,
        8.0 * k.stored_arrays() as f64,
        k.allocate_bytes_per_elem(),
    ))
}

impl Bound {
    /// The value of a rate estimate this bound stands for.
    pub fn of_rate(self, e: &Estimate) -> f64 {
        self.rate(e.point, Some(e.lo), Some(e.hi))
    }

    /// The value of a time estimate this bound stands for.
    fn of_time(self, e: &Estimate) -> f64 {
        self.time(e.point, Some(e.lo), Some(e.hi))
    }
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
    /// The traffic model of every size of the STREAM sweep on `threads`
    /// threads (`models::traffic::LevelModel`, built from all the kernels
    /// measured at that size), the DRAM points included, sorted by size;
    /// leaning on the summary's triad of that many threads.
    fn level_curve(&self, threads: usize, bound: Bound) -> Result<Vec<(f64, LevelModel)>, Missing> {
        self.lean_on(if threads == 1 {
            "stream_triad_1t_Bps"
        } else {
            "stream_triad_Bps"
        });
        let s = self.stream()?;
        let curve = s.level_curve(
            threads,
            self.huge_pages(),
            |k| mix_of(s, k),
            |e| bound.of_rate(e),
        );
        if curve.is_empty() {
            return Err(Missing {
                what: format!("a STREAM sweep on {threads} thread(s)"),
                fix: "stream",
            });
        }
        Ok(curve)
    }

    /// Seconds a loop's streamed `traffic` takes on `threads` threads with
    /// `per_thread_bytes` of working set per thread, and the level model
    /// of the nearest measured size.
    pub fn traffic_time(
        &self,
        traffic: &Traffic,
        threads: usize,
        per_thread_bytes: f64,
        bound: Bound,
    ) -> Result<(f64, LevelModel), Missing> {
        let curve = self.level_curve(threads, bound)?;
        let (seconds, level) =
            time_at(&curve, per_thread_bytes, traffic).expect("a curve with points");
        Ok((seconds / self.now.memory, level))
    }

    /// Seconds one of `threads` threads takes for its share of `traffic`
    /// at one thread's STREAM rates: the core's own data transfers (ECM's
    /// T_data), which the shared memory system's time on all threads
    /// ([`Machine::traffic_time`]) bounds apart (ECM's saturation,
    /// T = max(T_core, T_bus), or near it the calibrated knee of
    /// `models::saturation`). The thread's lines come from the level that
    /// holds `per_thread_bytes` on `threads` threads: a private level (L1,
    /// L2) at that size on one thread's curve, the shared last cache or
    /// DRAM at the whole working set, `threads` × `per_thread_bytes`. A
    /// paired drift measured on all threads is the shared system's and
    /// does not scale this time; on one thread it is the core's own. A
    /// profile without a one-thread sweep gives the all-thread time.
    pub fn one_core_traffic_time(
        &self,
        traffic: &Traffic,
        threads: usize,
        per_thread_bytes: f64,
        bound: Bound,
    ) -> Result<f64, Missing> {
        let all = || {
            Ok(self
                .traffic_time(traffic, threads, per_thread_bytes, bound)?
                .0)
        };
        if threads <= 1 {
            return all();
        }
        let Ok(curve) = self.level_curve(1, bound) else {
            return all();
        };
        let p = threads as f64;
        let share = Traffic {
            load_bytes: traffic.load_bytes / p,
            store_bytes: traffic.store_bytes / p,
            allocate_bytes: traffic.allocate_bytes / p,
        };
        let seen = if self.private_level_holds(per_thread_bytes, threads) {
            per_thread_bytes
        } else {
            per_thread_bytes * p
        };
        Ok(time_at(&curve, seen, &share)
            .expect("a curve with points")
            .0)
    }

    /// Whether a cache before the last one holds `bytes` per thread on
    /// `threads` threads.
    fn private_level_holds(&self, bytes: f64, threads: usize) -> bool {
        let last_cache = self
            .profile
            .levels
            .iter()
            .rposition(|l| l.size_bytes.is_some());
        self.holding_index(bytes, threads)
            .zip(last_cache)
            .is_some_and(|(i, last)| i < last)
    }

    /// Seconds one thread pays per byte it reads again from a reuse window
    /// of `window_bytes` while its streams come from DRAM (the stream
    /// section's window curve, `StreamSection::window_read_s`); `None` for
    /// a profile without it.
    pub fn window_read_s(&self, window_bytes: f64, bound: Bound) -> Option<f64> {
        let s = self.profile.sections.stream.as_ref()?;
        s.window_read_s(window_bytes).map(|e| bound.of_time(&e))
    }

    /// Whether the profile's DRAM points on `threads` threads saw the
    /// host's memory path in two states (`StreamSection::dram_two_states`):
    /// then the ends of their intervals are the two states' rates. The
    /// 4 KiB-page points are measured in one go, with no bursts: a loop
    /// that reads them names no states.
    pub fn dram_two_states(&self, threads: usize) -> bool {
        !self.on_base_pages(threads) && self.stream().is_ok_and(|s| s.dram_two_states(threads))
    }

    /// The two placements of the threads the profile's DRAM bursts on
    /// `threads` threads ran in (`StreamSection::dram_placements`); none
    /// for a loop that reads the 4 KiB-page points.
    pub fn dram_placements(&self, threads: usize) -> Option<Placements> {
        if self.on_base_pages(threads) {
            return None;
        }
        self.stream().ok()?.dram_placements(threads)
    }

    /// The exponent k of the knee between one core's time and the shared
    /// memory system's for a loop on `threads` threads
    /// (`models::saturation`), fitted to the stream section's lagged
    /// copies on all threads; `None` on one thread or for a profile
    /// without it. A larger k is the faster end of its interval.
    pub fn knee_exponent(&self, threads: usize, bound: Bound) -> Option<f64> {
        if threads <= 1 {
            return None;
        }
        let k = self.profile.sections.stream.as_ref()?.knee.as_ref()?;
        Some(bound.of_rate(&k.exponent))
    }

    /// Latency of one access at a random place of a `region_bytes` region,
    /// from the pointer chase's curve with `huge_pages` (2 MiB) or 4 KiB
    /// pages, linear in log-size between its points (the page walks of
    /// small pages are part of it).
    pub fn random_latency_s(
        &self,
        region_bytes: f64,
        huge_pages: bool,
        bound: Bound,
    ) -> Result<f64, Missing> {
        let missing = || Missing {
            what: "the pointer-chase latency curve".into(),
            fix: "latency",
        };
        let pages = pages_label(huge_pages);
        self.profile
            .sections
            .latency
            .as_ref()
            .and_then(|l| l.latency_at(region_bytes, pages, |e| bound.of_time(e)))
            .ok_or_else(missing)
    }

    /// Misses one core keeps in flight with the given page size, by
    /// Little's law (§4.3: concurrency = throughput × latency): the MLP
    /// curve's largest line rate times the pointer-chase latency at the
    /// curve's own buffer size and page size. Without that latency, the
    /// curve's largest bandwidth over its one-chain bandwidth. With 4 KiB
    /// pages a miss may first need a page walk, so the core's page walkers
    /// can cap the concurrency below the huge-page curve's. A profile
    /// without the asked curve (older ones measured huge pages only) gives
    /// the other.
    pub fn miss_concurrency(&self, huge_pages: bool) -> Result<f64, Missing> {
        let missing = || Missing {
            what: "the memory-level-parallelism curve".into(),
            fix: "mlp",
        };
        let m = self.profile.sections.mlp.as_ref().ok_or_else(missing)?;
        let pages = m.measured_pages(huge_pages).ok_or_else(missing)?;
        let latency = (m.dram_bytes > 0)
            .then(|| {
                self.random_latency_s(
                    m.dram_bytes as f64,
                    pages == pages_label(true),
                    Bound::Point,
                )
            })
            .and_then(Result::ok);
        match latency {
            Some(l) => {
                let line = match m.line_bytes {
                    0 => self.line_bytes(),
                    b => b as f64,
                };
                Ok((m.max_bandwidth(pages) / line * l).max(1.0))
            }
            None => m.miss_concurrency(pages).ok_or_else(missing),
        }
    }

    /// Seconds per operation of a loop-carried f64 chain of `op` ("add" or
    /// "fma"), from the flops section.
    pub fn chain_latency_s(&self, op: &str, bound: Bound) -> Result<f64, Missing> {
        self.profile
            .sections
            .flops
            .as_ref()
            .and_then(|f| f.chain_latency(op))
            .map(|e| bound.of_time(&e))
            .ok_or_else(|| Missing {
                what: format!("the latency of a loop-carried {op} chain"),
                fix: "flops",
            })
    }

    /// Seconds per element of an iteration with a chain `depth` steps deep
    /// inside, vectorised with `isa` (`None`: the widest measured), and the
    /// set read (`models::profile::flops::FlopsSection::span_element_s`).
    pub fn span_element_s(
        &self,
        isa: Option<&str>,
        depth: f64,
        bound: Bound,
    ) -> Result<(f64, String), Missing> {
        self.profile
            .sections
            .flops
            .as_ref()
            .and_then(|f| f.span_element_s(isa, depth, |e| bound.of_time(e)))
            .map(|(t, isa)| (t / self.now.span, isa))
            .ok_or_else(|| Missing {
                what: format!(
                    "the time of iterations with a chain inside{}",
                    isa.map_or(String::new(), |i| format!(" on {i}"))
                ),
                fix: "flops",
            })
    }

    /// The measured overlap ω of a loop-carried chain with its loop's
    /// transfers at a working set of `per_thread_bytes`
    /// (`models::profile::flops::ChainOverlap`); `None` for a profile
    /// without it.
    pub fn chain_overlap(&self, per_thread_bytes: f64) -> Option<f64> {
        self.profile
            .sections
            .flops
            .as_ref()?
            .chain_overlap_at(per_thread_bytes)
    }

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
    fn holding_index(&self, bytes: f64, threads: usize) -> Option<usize> {
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

    /// The share s of a streamed working set's lines that come from DRAM,
    /// and why: 1 when `per_thread_bytes` exceeds the most the caches hold
    /// per thread on `threads` threads (C, [`Machine::holding_level`]'s
    /// capacities, the last cache shared by the threads), else 0. A sweep
    /// over more than a cache holds evicts each line before its next use
    /// (LRU). What is charged in this share was measured beside streams
    /// from DRAM (a stream's restarts, a scatter's 256 streams, reads from a
    /// reuse window): what the core pays for streams that miss the caches.
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

    /// Seconds a thread loses per restart of its streams, runs of
    /// `segment_bytes` on `threads` threads (the stream section's restart
    /// curve, `StreamSection::restart_s`).
    pub fn restart_s(
        &self,
        threads: usize,
        segment_bytes: f64,
        bound: Bound,
    ) -> Result<f64, Missing> {
        self.stream()?
            .restart_s(threads, segment_bytes)
            .map(|e| bound.of_time(&e))
            .ok_or_else(|| missing("the cost of a stream's restart", "stream"))
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

    /// What a scatter's 256 output streams cost per item beyond the caches
    /// over what the loop model charges for the same loop: the calibrated
    /// scatter with its output at the DRAM working set, less the same loop
    /// in L1 and less its output stream ([`SCATTER_ITEM_BYTES`] stored per
    /// item, with write-allocate) at the streaming rate the memory term
    /// reads there; never below 0. Beside the profile's figures, the
    /// breakdown for the explanation.
    pub fn scatter_streams_s(&self, bound: Bound) -> Result<(f64, String), Missing> {
        let c2c = self.c2c()?;
        let (t_dram, bytes, threads) = c2c
            .scatter_dram_item_s()
            .ok_or_else(|| missing("the time per item of a scatter beyond the caches", "c2c"))?;
        let t_l1 = c2c
            .bin_item_s("scatter")
            .ok_or_else(|| missing("the time per item of a scatter loop", "c2c"))?;
        let stream = Traffic::streaming(0.0, SCATTER_ITEM_BYTES);
        let (t_stream, _) = self.traffic_time(&stream, threads, bytes as f64, bound)?;
        let excess = (t_dram - t_l1 - t_stream).max(0.0);
        let how = format!(
            "Δ = t_DRAM − t_L1 − {SCATTER_ITEM_BYTES} B streamed = {t_dram:.3e} − {t_l1:.3e} − {t_stream:.3e} s \
             (the calibrated scatter with {} of output per thread, on {threads} thread(s))",
            Si(bytes as f64, "B")
        );
        Ok((excess, how))
    }
}
