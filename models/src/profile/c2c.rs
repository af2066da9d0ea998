//! The `c2c` section: a cache line between two cores (ping-pong and
//! hand-off of growing buffers), the time per increment, local step
//! and binning item with all threads (§4.5, §4.6), and an empty parallel
//! region of the pinned team (its start and join, §2.2's overhead).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::latency::log_interpolate;
use super::lock::HandOff;
use super::network::NetworkRegime;
use super::sample::{whole, Sample};

/// Results of the core-to-core benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct C2cSection {
    /// The two logical CPUs measured.
    pub cpus: Vec<usize>,
    /// Round trip of a line, twice the one-way figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_trip_s: Option<Sample>,
    /// One-way time of a line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_way_s: Option<Sample>,
    /// Buffers handed from one core to the other.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Handoff>,
    /// Counters, local sums and binning loops on all threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub increments: Option<Increments>,
    /// An empty parallel region of the pinned team, by thread count.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<TeamRegion>,
}

/// A scatter loop's time per item with its output beyond L1
/// ([`C2cSection::scatter_beyond_l1`], [`C2cSection::scatter_at`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScatterPoint {
    /// Seconds per item per thread, all threads at once.
    pub item_s: f64,
    /// Bytes of output each thread wrote.
    pub output_bytes: u64,
    /// Threads that scattered at once.
    pub threads: usize,
}

/// An empty parallel region on `threads` pinned threads, timed back to
/// back as `predict run` times its kernels: the calling thread hands each
/// thread of the team its call and waits for the last one to finish (the
/// start and join every region pays, whatever it runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TeamRegion {
    pub threads: usize,
    pub per_region_s: Sample,
}

/// The hand-off sweep and its T(n) = T0 + n/B fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Handoff {
    pub points: Vec<HandoffPoint>,
    /// One line through all points.
    pub fit: NetworkRegime,
    /// The regimes fitted separately.
    #[serde(default)]
    pub regimes: Vec<NetworkRegime>,
}

/// One hand-off size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HandoffPoint {
    #[serde(deserialize_with = "whole")]
    pub bytes: u64,
    pub time_s: Sample,
}

/// Time per dependent increment, local step or binning item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Increments {
    /// Each thread increments a counter on its own line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_line: Option<Increment>,
    /// `threads` threads increment counters on one line.
    pub shared_line: Vec<Increment>,
    /// A local sum: one L1 load and one dependent add per step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<Increment>,
    /// The counting sort's histogram loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Increment>,
    /// The counting sort's scatter loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scatter: Option<Increment>,
    /// The same scatter loop writing each thread's `output_bytes` at the
    /// DRAM working set, each bin's run an odd number of lines long (so
    /// that the 256 current lines spread over the L1's sets): what its
    /// output streams cost beyond the caches, where the prefetchers do not
    /// follow 256 of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_dram: Option<Increment>,
    /// The same scatter loop over a curve of each thread's `output_bytes`
    /// beyond L1, smallest first: the powers of two from twice L1 to past
    /// the last cache. Where the output's lines come from a cache beyond
    /// L1, each of the 256 streams' write-allocates waits on that level's
    /// latency, as at DRAM; on a VM the step down to DRAM speed can lie far
    /// inside the last cache's reported capacity and moves with the host's
    /// load, so the curve, not one point per level, is what a pass reads
    /// at its own bytes. Older profiles hold one point per cache level
    /// under `scatter_caches`, read the same way.
    #[serde(
        default,
        alias = "scatter_caches",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub scatter_curve: Vec<Increment>,
}

/// One increment-like figure; the time sits under a key naming its unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Increment {
    pub threads: usize,
    /// Bins of a binning loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bins: Option<usize>,
    /// Seconds per increment (own and shared line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_increment_s: Option<Sample>,
    /// Seconds per step (local sum).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_step_s: Option<Sample>,
    /// Seconds per item (binning loops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_item_s: Option<Sample>,
    /// Bytes of output each thread scattered into (the scatter beyond L1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_bytes: Option<u64>,
}

/// The increments' figures as predictions use them: capability estimates
/// (`Sample::time`, the low quantile of the clean timings; the median in
/// older profiles), the convention `predict run` reports its kernels' times
/// with; except the shared line's, whose figure pools bursts spread over
/// the calibrate run and reads like a lock's rounds ([`HandOff`]).
impl C2cSection {
    /// Time per dependent increment of a counter, per thread, with
    /// `sharers` threads' counters on one line (1: a line each), and the
    /// thread count it was measured with: the shared-line figure of the
    /// measured count nearest to `sharers` (the first on a tie).
    ///
    /// A falsely shared line is handed between the cores as a lock's is,
    /// and the host's placement of the vCPUs moves its cost: on the Zen 4
    /// VM ten back-to-back runs of the benchmark read 0.96–0.99 ns per
    /// increment whenever the line crossed chiplets (151–161 ns one way)
    /// and 1.30–2.09 ns whenever it stayed on one (31–33 ns). So `state`
    /// reads the shared-line figure as [`HandOff`] reads a lock's: the
    /// median of the pooled timings (typical), their low quantile (fast) or
    /// their high one (slow). The own-line figure has no hand-off and is
    /// its capability estimate in every state.
    pub fn increment_s(&self, sharers: usize, state: HandOff) -> Option<(f64, usize)> {
        let inc = self.increments.as_ref()?;
        if sharers <= 1 {
            return Some((
                inc.own_line
                    .as_ref()?
                    .per_increment_s
                    .as_ref()?
                    .time()
                    .point,
                1,
            ));
        }
        let read = |s: &Sample| match state {
            HandOff::Typical => s.median,
            HandOff::Fast => s.low_quantile.map_or(s.median, |q| q.point),
            HandOff::Slow => s.high_quantile.map_or(s.median, |q| q.point),
        };
        inc.shared_line
            .iter()
            .filter_map(|p| Some((read(p.per_increment_s.as_ref()?), p.threads)))
            .min_by_key(|(_, at)| at.abs_diff(sharers))
    }

    /// Seconds of an empty parallel region on `threads` threads (its
    /// capability estimate), and the thread count it was measured with:
    /// that of the measured count nearest to `threads` (the first on a
    /// tie).
    pub fn region_s(&self, threads: usize) -> Option<(f64, usize)> {
        self.regions
            .iter()
            .min_by_key(|r| r.threads.abs_diff(threads))
            .map(|r| (r.per_region_s.time().point, r.threads))
    }

    /// Time per step of a local sum, per thread with all threads at once.
    pub fn local_step_s(&self) -> Option<f64> {
        Some(
            self.increments
                .as_ref()?
                .local
                .as_ref()?
                .per_step_s
                .as_ref()?
                .time()
                .point,
        )
    }

    /// Time per item of the counting sort's `loop_name` loop ("histogram"
    /// or "scatter"), per thread with all threads at once.
    pub fn bin_item_s(&self, loop_name: &str) -> Option<f64> {
        let inc = self.increments.as_ref()?;
        let l = match loop_name {
            "histogram" => inc.histogram.as_ref(),
            "scatter" => inc.scatter.as_ref(),
            _ => None,
        }?;
        Some(l.per_item_s.as_ref()?.time().point)
    }

    /// The scatter loop's figures beyond L1, its curve and the DRAM
    /// working set: per item and per thread with all threads at once, the
    /// bytes each thread wrote, and how many threads ran it; smallest
    /// output first.
    pub fn scatter_beyond_l1(&self) -> Vec<ScatterPoint> {
        let Some(inc) = self.increments.as_ref() else {
            return Vec::new();
        };
        let mut points: Vec<ScatterPoint> = inc
            .scatter_curve
            .iter()
            .chain(&inc.scatter_dram)
            .filter_map(|l| {
                Some(ScatterPoint {
                    item_s: l.per_item_s.as_ref()?.time().point,
                    output_bytes: l.output_bytes?,
                    threads: l.threads,
                })
            })
            .collect();
        points.sort_by_key(|p| p.output_bytes);
        points
    }

    /// The scatter loop's time per item with `output_bytes` of output per
    /// thread: the figures beyond L1 ([`C2cSection::scatter_beyond_l1`])
    /// interpolated in log size, the nearest end's figure outside them;
    /// `None` without any.
    pub fn scatter_at(&self, output_bytes: f64) -> Option<ScatterPoint> {
        let points = self.scatter_beyond_l1();
        let xy: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.output_bytes as f64, p.item_s))
            .collect();
        let (first, last) = (points.first()?, points.last()?);
        let x = output_bytes.clamp(first.output_bytes as f64, last.output_bytes as f64);
        Some(ScatterPoint {
            item_s: log_interpolate(&xy, x),
            output_bytes: x as u64,
            threads: last.threads,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inc(threads: usize, t: f64) -> Increment {
        Increment {
            threads,
            bins: None,
            per_increment_s: Some(Sample::new(t, t, t)),
            per_step_s: None,
            per_item_s: None,
            output_bytes: None,
        }
    }

    #[test]
    fn the_nearest_sharer_count_answers() {
        let s = C2cSection {
            increments: Some(Increments {
                own_line: Some(inc(2, 1.0)),
                shared_line: vec![inc(2, 2.0), inc(4, 4.0), inc(8, 8.0)],
                ..Default::default()
            }),
            ..Default::default()
        };
        let typical = |sharers| s.increment_s(sharers, HandOff::Typical);
        assert_eq!(typical(1), Some((1.0, 1)));
        assert_eq!(typical(3), Some((2.0, 2)), "first on a tie");
        assert_eq!(typical(7), Some((8.0, 8)));
        assert_eq!(s.local_step_s(), None);
        assert_eq!(s.bin_item_s("histogram"), None);
        assert!(s.scatter_beyond_l1().is_empty());
        assert_eq!(s.region_s(2), None);
    }

    #[test]
    fn the_scatter_curve_interpolates_in_log_size_and_ends_at_dram() {
        let scatter = |t: f64, bytes| Increment {
            per_increment_s: None,
            per_item_s: Some(Sample::new(t, t, t)),
            output_bytes: Some(bytes),
            ..inc(2, 0.0)
        };
        let s = C2cSection {
            increments: Some(Increments {
                scatter_dram: Some(scatter(5e-9, 1 << 28)),
                scatter_curve: vec![scatter(1e-9, 1 << 18), scatter(2e-9, 1 << 23)],
                ..Default::default()
            }),
            ..Default::default()
        };
        let got: Vec<(f64, u64)> = s
            .scatter_beyond_l1()
            .iter()
            .map(|p| (p.item_s, p.output_bytes))
            .collect();
        assert_eq!(got, [(1e-9, 1 << 18), (2e-9, 1 << 23), (5e-9, 1 << 28)]);
        let at = |bytes: f64| s.scatter_at(bytes).unwrap().item_s;
        // Halfway between 2^23 and 2^28 in log size: halfway in time.
        assert!((at(2f64.powf(25.5)) - 3.5e-9).abs() < 1e-15);
        assert_eq!(at(1024.0), 1e-9, "the smallest point below the curve");
        assert_eq!(at(1e12), 5e-9, "the DRAM point beyond it");
        assert_eq!(s.scatter_at(1e12).unwrap().output_bytes, 1 << 28);
    }

    #[test]
    fn a_profile_with_one_scatter_point_per_cache_still_reads() {
        let old = r#"{"increments": {"shared_line": [], "scatter_caches": [
            {"threads": 2, "bins": 256, "output_bytes": 262144,
             "per_item_s": {"median": 1e-9}}]}}"#;
        let s: C2cSection = serde_json::from_str(old).unwrap();
        assert_eq!(s.scatter_at(1e6).map(|p| p.output_bytes), Some(262144));
    }

    #[test]
    fn a_region_reads_the_nearest_thread_count() {
        let region = |threads, t| TeamRegion {
            threads,
            per_region_s: Sample::new(t, t, t),
        };
        let s = C2cSection {
            regions: vec![region(1, 15e-6), region(2, 12e-6), region(8, 20e-6)],
            ..Default::default()
        };
        assert_eq!(s.region_s(1), Some((15e-6, 1)));
        assert_eq!(s.region_s(2), Some((12e-6, 2)));
        assert_eq!(s.region_s(6), Some((20e-6, 8)));
        assert_eq!(s.region_s(5), Some((12e-6, 2)), "first on a tie");
    }

    #[test]
    fn a_shared_line_reads_its_states_from_the_quantiles() {
        let q = |t| Some(crate::Estimate::new(t, t, t));
        let two_states = Sample {
            low_quantile: q(1.0),
            high_quantile: q(2.0),
            ..Sample::new(1.3, 1.2, 1.4)
        };
        let own = Sample {
            low_quantile: q(0.25),
            high_quantile: q(0.4),
            ..Sample::new(0.3, 0.3, 0.3)
        };
        let s = C2cSection {
            increments: Some(Increments {
                own_line: Some(Increment {
                    per_increment_s: Some(own),
                    ..inc(2, 0.0)
                }),
                shared_line: vec![Increment {
                    per_increment_s: Some(two_states),
                    ..inc(2, 0.0)
                }],
                ..Default::default()
            }),
            ..Default::default()
        };
        let at = |sharers, state| s.increment_s(sharers, state).unwrap().0;
        assert_eq!(at(2, HandOff::Typical), 1.3);
        assert_eq!(at(2, HandOff::Fast), 1.0);
        assert_eq!(at(2, HandOff::Slow), 2.0);
        for state in [HandOff::Typical, HandOff::Fast, HandOff::Slow] {
            assert_eq!(at(1, state), 0.25, "the own line has no hand-off");
        }
    }
}
