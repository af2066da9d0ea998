//! The `stream` section: STREAM bandwidth of each kernel against the
//! working set per thread, on one and on all threads, the bandwidth of
//! each detected level and the DRAM figures (§2: bandwidth of each level
//! of the hierarchy; §4.4: the sloped roofs).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::latency::log_interpolate;
use super::sample::{whole, whole_opt, Sample};
use crate::traffic::{LevelModel, MixSample};
use crate::Estimate;

mod bursts;
mod restarts;
pub use bursts::{by_placement, typical_burst, Placements};
pub use restarts::StreamRestart;

/// Results of the STREAM benchmark.
#[allow(non_snake_case)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct StreamSection {
    /// Instruction set of the kernels.
    pub isa: String,
    /// Pages of the arrays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_temporal_stores: Option<bool>,
    /// Bytes each kernel moves per element, by kernel name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub bytes_per_elem: BTreeMap<String, BytesPerElem>,
    /// Working set of the DRAM points, all threads together, bytes.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_opt"
    )]
    pub dram_bytes: Option<u64>,
    /// The sweeps over working sets, one per thread count.
    pub sweeps: Vec<StreamSweep>,
    /// Read bandwidth of each detected level.
    pub levels: Vec<StreamLevel>,
    /// Every kernel at the DRAM working set, on each thread count.
    pub dram: Vec<StreamPoint>,
    /// The sweeps again on 4 KiB pages, from the largest private cache to
    /// the DRAM working set, one per thread count: what a loop whose arrays
    /// are not on huge pages streams at (profiles from before it lack it).
    /// Below their first size the pages do not matter (the sweeps on both
    /// page sizes read alike there), and the huge-page sweep stands for both.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_pages: Vec<StreamSweep>,
    /// What a stream's restart costs at the DRAM working set, by segment
    /// length and thread count (profiles from before it lack it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<StreamRestart>,
    /// What a read of lines brought in before costs while the streams come
    /// from DRAM, by reuse window, on one thread (profiles from before it
    /// lack it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<StreamWindow>,
    /// What a read of lines L1 holds costs while the streams come from
    /// beyond L1, by the streams' working set (half of each cache beyond
    /// L1, and DRAM), on one thread: the same lagged copy with its window
    /// in L1 (profiles from before it lack it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub l1_rereads: Vec<StreamWindow>,
    /// How one core's time and the shared memory system's combine on all
    /// threads, from the same lagged copies on all of them (profiles from
    /// before it, and one-thread runs, lack it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knee: Option<StreamKnee>,
}

/// The windows' lagged copies and plain copies on one thread and on all
/// of them, right after each other, and the knee's exponent k fitted to
/// them (`models::saturation`): T^k = T_core^k + T_bus^k − T_stream^k.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamKnee {
    /// Threads of the all-thread copies.
    pub threads: usize,
    /// The exponent: the least-squares fit over the windows that can tell
    /// it, with the profile likelihood's interval
    /// (`models::saturation::fit_exponent`).
    pub exponent: Estimate,
    pub points: Vec<KneePoint>,
}

/// One window's four times, each seconds per element of one thread: the
/// median over the pairs of the capability estimates, the interval their
/// range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KneePoint {
    /// The reuse window, bytes.
    pub window_bytes: f64,
    /// The copy on one thread (T_stream).
    pub copy_one_s: Estimate,
    /// The lagged copy on one thread (T_core).
    pub lagged_one_s: Estimate,
    /// The copy on all threads (T_bus).
    pub copy_all_s: Estimate,
    /// The lagged copy on all threads (T).
    pub lagged_all_s: Estimate,
}

impl KneePoint {
    /// The point as the fit reads it.
    pub fn measurement(&self) -> crate::saturation::KneeMeasurement {
        crate::saturation::KneeMeasurement {
            stream_s: self.copy_one_s,
            core_s: self.lagged_one_s,
            bus_s: self.copy_all_s,
            measured_s: self.lagged_all_s,
        }
    }
}

/// STREAM's copy that reads its source again two lags behind
/// (`a[j] = b[j] + (b[j−d] + b[j−2d])`, a row-major stencil's streams)
/// against the plain copy of the same arrays timed right before it, in
/// pairs: what one thread pays per byte read again from a reuse window of
/// `window_bytes` (4·d·8: two lags of both arrays) while its streams,
/// `per_thread_bytes` of them, come from the level that holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamWindow {
    pub threads: usize,
    /// The reuse window, bytes.
    pub window_bytes: f64,
    /// Working set of the thread (both arrays), bytes.
    pub per_thread_bytes: f64,
    /// Seconds per byte read again: (t_lagged − t_copy) / bytes read
    /// again, from the capability estimates of both times, at least 0;
    /// the median over the pairs, the interval their range.
    pub per_byte_s: Estimate,
}

/// Bytes a STREAM kernel moves per element.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BytesPerElem {
    /// As STREAM counts them (loads + stores).
    pub stream: f64,
    /// With the write-allocate reads of ordinary stores.
    pub write_allocate: f64,
    /// Loaded bytes (profiles from before this key lack it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Stored bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<f64>,
    /// Write-allocate bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocate: Option<f64>,
}

/// A sweep on one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamSweep {
    pub threads: usize,
    pub points: Vec<StreamPoint>,
}

/// One kernel at one working set.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamPoint {
    #[serde(deserialize_with = "whole")]
    pub per_thread_bytes: u64,
    /// All threads' working set (hand-written sections may leave it out).
    #[serde(default, deserialize_with = "whole")]
    pub total_bytes: u64,
    /// "copy", "scale", "add", "triad" or "load".
    pub kernel: String,
    /// Threads (DRAM points only; a sweep's points take its count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Bandwidth of all threads together, counted as STREAM does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_Bps: Option<Sample>,
    /// The bandwidth counted with write-allocate traffic: the capability
    /// estimate of the timings or, for a DRAM point, of its typical burst.
    pub bandwidth_write_allocate_Bps: f64,
    /// A DRAM point's bursts spread over its sweep, oldest first: the
    /// capability estimate of each, counted as STREAM does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bursts_Bps: Vec<f64>,
    /// Where the host had placed the threads during each burst, in the
    /// order of `bursts_Bps`: the one-way latency of a line between the
    /// run's first two CPUs, probed just before and just after the burst,
    /// s ([`typical_burst`]); empty for one thread and in older profiles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bursts_line_s: Vec<[f64; 2]>,
    /// The instruction set a DRAM point's kernel ran in when not the
    /// section's `isa`: one thread's DRAM points are measured again in
    /// each narrower vector set the CPU has, since one core's rate from
    /// DRAM depends on the width of its loop's loads and stores
    /// ([`StreamSection::dram_points_in`]). Absent: the section's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isa: Option<String>,
}

/// Read bandwidth on the plateau of one detected level.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamLevel {
    pub name: String,
    pub threads: usize,
    pub from_bytes: f64,
    pub to_bytes: f64,
    /// Working sets on the plateau, bytes per thread.
    pub points: Vec<f64>,
    pub read_bandwidth_Bps: Estimate,
    /// The instruction set the level's load kernel ran in when not the
    /// section's `isa`: one thread's L1 is also measured in each narrower
    /// vector set the CPU has, since a core loads a fixed number of
    /// vectors per cycle from L1, whatever their width
    /// ([`StreamSection::level_read_in`]). Absent: the section's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isa: Option<String>,
}

impl StreamPoint {
    /// The bandwidth estimate, counted as STREAM does: the typical burst
    /// of a DRAM point measured in bursts ([`typical_burst`]), else the
    /// capability estimate of its timings.
    pub fn rate(&self) -> Option<Estimate> {
        typical_burst(&self.bursts_Bps, &self.bursts_line_s)
            .or_else(|| self.bandwidth_Bps.as_ref().map(Sample::rate))
    }

    /// A point known by its write-allocate bandwidth alone, as hand-written
    /// profiles and tests give it; `threads` is set for a DRAM point.
    #[allow(non_snake_case)]
    pub fn with_bandwidth_wa(
        kernel: &str,
        per_thread_bytes: u64,
        threads: Option<usize>,
        bandwidth_wa_Bps: f64,
    ) -> Self {
        Self {
            per_thread_bytes,
            total_bytes: per_thread_bytes * threads.unwrap_or(1) as u64,
            kernel: kernel.into(),
            threads,
            bandwidth_Bps: None,
            bandwidth_write_allocate_Bps: bandwidth_wa_Bps,
            bursts_Bps: Vec::new(),
            bursts_line_s: Vec::new(),
            isa: None,
        }
    }
}

/// The estimate at `x` of a curve of estimates by size: each of the
/// point and the interval's ends linear in log size between the points
/// and flat beyond them; `None` without points.
fn log_curve(points: impl Iterator<Item = (f64, Estimate)>, x: f64) -> Option<Estimate> {
    let mut pts: Vec<(f64, Estimate)> = points.collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (first, last) = (pts.first()?.0, pts.last()?.0);
    let x = x.clamp(first, last);
    let curve = |f: fn(&Estimate) -> f64| {
        let xy: Vec<(f64, f64)> = pts.iter().map(|(s, e)| (*s, f(e))).collect();
        log_interpolate(&xy, x)
    };
    Some(Estimate::new(
        curve(|e| e.point),
        curve(|e| e.lo),
        curve(|e| e.hi),
    ))
}

impl StreamSection {
    /// Seconds one thread pays per byte it reads again from a reuse window
    /// of `window_bytes` while its streams come from DRAM: the measured
    /// curve, linear in log window between its points and flat beyond
    /// them; `None` without window points.
    pub fn window_read_s(&self, window_bytes: f64) -> Option<Estimate> {
        let pts = self.windows.iter().map(|w| (w.window_bytes, w.per_byte_s));
        log_curve(pts, window_bytes)
    }

    /// Seconds one thread pays per byte it reads again from lines L1
    /// holds while its streams, `per_thread_bytes` of them, come from
    /// beyond L1: the measured curve ([`Self::l1_rereads`]), linear in log
    /// working set between its points and flat beyond them; `None` without
    /// its points.
    pub fn l1_reread_s(&self, per_thread_bytes: f64) -> Option<Estimate> {
        let pts = self
            .l1_rereads
            .iter()
            .map(|w| (w.per_thread_bytes, w.per_byte_s));
        log_curve(pts, per_thread_bytes)
    }

    /// The sweep's points on `threads` threads, of every kernel and size.
    pub fn sweep_points(&self, threads: usize) -> impl Iterator<Item = &StreamPoint> {
        self.sweeps
            .iter()
            .filter(move |w| w.threads == threads)
            .flat_map(|w| w.points.iter())
    }

    /// The DRAM points on `threads` threads, in the section's instruction
    /// set.
    pub fn dram_points(&self, threads: usize) -> impl Iterator<Item = &StreamPoint> {
        self.dram
            .iter()
            .filter(move |p| p.threads == Some(threads) && p.isa.is_none())
    }

    /// The read bandwidth of level `name` on `threads` threads measured
    /// in `isa`: the level's plateau in that instruction set, the
    /// section's own when `isa` is the section's; `None` when the level
    /// was not measured in it.
    pub fn level_read_in(&self, name: &str, threads: usize, isa: &str) -> Option<Estimate> {
        self.levels
            .iter()
            .find(|l| {
                l.name == name
                    && l.threads == threads
                    && l.isa.as_deref().unwrap_or(&self.isa) == isa
            })
            .map(|l| l.read_bandwidth_Bps)
    }

    /// The DRAM points on `threads` threads for code built for `isa`: those
    /// measured in it when the profile has them, else the section's own
    /// ([`Self::dram_points`]). One core's rate from DRAM follows the
    /// width of its code: on the Zen 4 VM one thread's triad read 34–36
    /// GB/s in AVX2 against 29 GB/s in AVX-512 and its read-only load
    /// 26 GB/s against 33 GB/s, alternated three times (likwid-bench's
    /// AVX2 kernels, too, read 10–20% above its AVX-512 ones there).
    pub fn dram_points_in(&self, threads: usize, isa: Option<&str>) -> Vec<&StreamPoint> {
        self.dram_points_of(threads, self.dram_isa(threads, isa))
    }

    /// The instruction set whose DRAM points on `threads` threads code
    /// built for `isa` reads ([`Self::dram_points_in`]).
    pub fn dram_isa<'s>(&'s self, threads: usize, isa: Option<&'s str>) -> &'s str {
        match isa {
            Some(isa) if !self.dram_points_of(threads, isa).is_empty() => isa,
            _ => &self.isa,
        }
    }

    /// The DRAM points on `threads` threads measured in `isa`.
    fn dram_points_of(&self, threads: usize, isa: &str) -> Vec<&StreamPoint> {
        self.dram
            .iter()
            .filter(|p| p.threads == Some(threads) && p.isa.as_deref().unwrap_or(&self.isa) == isa)
            .collect()
    }

    /// The 4 KiB-page sweep's points on `threads` threads (empty when the
    /// profile has none).
    pub fn base_page_points(&self, threads: usize) -> impl Iterator<Item = &StreamPoint> {
        self.base_pages
            .iter()
            .filter(move |w| w.threads == threads)
            .flat_map(|w| w.points.iter())
    }

    /// Whether the profile has the sweep on 4 KiB pages on `threads`
    /// threads.
    pub fn has_base_pages(&self, threads: usize) -> bool {
        self.base_page_points(threads).next().is_some()
    }

    /// The points a loop on `threads` threads streams at: with
    /// `huge_pages`, or without a 4 KiB-page sweep, the sweep's and the
    /// DRAM points (the latter in place of the sweep's own copies of them);
    /// on 4 KiB pages, the 4 KiB-page sweep's points, and the huge-page
    /// sweep's below its first size.
    pub fn points_on(
        &self,
        threads: usize,
        huge_pages: bool,
        isa: Option<&str>,
    ) -> Vec<&StreamPoint> {
        let base: Vec<&StreamPoint> = self.base_page_points(threads).collect();
        if !huge_pages && !base.is_empty() {
            let first = base.iter().map(|p| p.per_thread_bytes).min().unwrap_or(0);
            let below = self
                .sweep_points(threads)
                .filter(|p| p.per_thread_bytes < first);
            return below.chain(base).collect();
        }
        // A sweep point that repeats a DRAM point (its kernel at its size)
        // is left to the DRAM point, which carries the bursts.
        let dram = self.dram_points_in(threads, isa);
        let repeats = |p: &StreamPoint| {
            dram.iter()
                .any(|d| d.kernel == p.kernel && d.per_thread_bytes == p.per_thread_bytes)
        };
        let own: Vec<&StreamPoint> = self.sweep_points(threads).filter(|p| !repeats(p)).collect();
        own.into_iter().chain(dram).collect()
    }

    /// The traffic model of every size of the sweep on `threads` threads
    /// (`crate::traffic::LevelModel`, fitted to all the kernels measured at
    /// that size) for arrays on huge pages or not ([`Self::points_on`]),
    /// sorted by size: the
    /// bandwidth for any mix of loads, stores and write-allocates at a
    /// level and thread count (§2.5, §4.4). `mix` gives a kernel's load,
    /// store and allocate bytes per element (see [`Self::mix`]); `pick`
    /// the value of a bandwidth estimate to use (its point or an end of its
    /// interval), carried to the write-allocate bandwidth in proportion.
    /// Empty without points on that thread count. The DRAM points are
    /// those of code built for `isa` ([`Self::dram_points_in`]).
    pub fn level_curve(
        &self,
        threads: usize,
        huge_pages: bool,
        isa: Option<&str>,
        mix: impl Fn(&str) -> Option<(f64, f64, f64)>,
        pick: impl Fn(&Estimate) -> f64,
    ) -> Vec<(f64, LevelModel)> {
        let mut by_size: Vec<(f64, Vec<MixSample>)> = Vec::new();
        for p in self.points_on(threads, huge_pages, isa) {
            let Some((load_bytes, store_bytes, allocate_bytes)) = mix(&p.kernel) else {
                continue;
            };
            let scale = match p.rate() {
                Some(rate) if rate.point > 0.0 => pick(&rate) / rate.point,
                _ => 1.0,
            };
            let total = load_bytes + store_bytes + allocate_bytes;
            let sample = MixSample {
                load_bytes,
                store_bytes,
                allocate_bytes,
                seconds: total / (p.bandwidth_write_allocate_Bps * scale),
            };
            let size = p.per_thread_bytes as f64;
            match by_size.iter_mut().find(|(x, _)| *x == size) {
                Some((_, v)) => v.push(sample),
                None => by_size.push((size, vec![sample])),
            }
        }
        let mut curve: Vec<(f64, LevelModel)> = by_size
            .into_iter()
            .filter_map(|(x, v)| Some((x, LevelModel::from_samples(&v)?)))
            .collect();
        curve.sort_by(|a, b| a.0.total_cmp(&b.0));
        curve
    }

    /// Load, store and allocate bytes per element of kernel `kernel`, when
    /// the section lists them.
    pub fn mix(&self, kernel: &str) -> Option<(f64, f64, f64)> {
        let b = self.bytes_per_elem.get(kernel)?;
        Some((b.load?, b.store?, b.allocate?))
    }
}

#[cfg(test)]
mod tests;
