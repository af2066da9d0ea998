//! The `flops` section: FLOP/s of each compute kernel (the ceilings of
//! §4.4's Roofline), the latency of loop-carried chains and the time of
//! iterations with a chain inside.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::latency::log_interpolate;
use super::sample::{whole, Sample};
use crate::Estimate;

/// Results of the FLOP/s benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct FlopsSection {
    /// One row per kernel and thread count.
    pub kernels: Vec<FlopsKernel>,
    /// Seconds per operation of a dependent f64 chain, by operation
    /// ("add", "fma"); older profiles have none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub chain: BTreeMap<String, Sample>,
    /// How much of a loop-carried add chain over an array overlaps the
    /// array's transfers, at a few working sets (older profiles have
    /// none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chain_overlap: Vec<ChainOverlap>,
    /// Iterations with a chain inside, per instruction set and depth
    /// ([`SpanPoint`]); older profiles have none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub span: Vec<SpanPoint>,
    /// What a load that hits L1 costs beside a chain of arithmetic, per
    /// vector instruction set ([`SpanLoads`]); older profiles have none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub span_loads: Vec<SpanLoads>,
}

/// The Horner loop of [`SpanPoint`] at `depth` with the coefficient of
/// each step loaded at a shifted offset (`loads_per_element` more loads
/// per element that hit L1, as a stencil's neighbours do, and the same
/// FMAs) against the plain loop at that depth, timed in pairs on each of
/// `threads` threads at once in L1: what one thread pays per byte of such loads beside the
/// arithmetic, (t_loaded − t_plain) / (8 · loads per element), at least
/// 0. ECM counts loads and arithmetic as in-core work that overlaps
/// (T_core = max(T_OL, T_nOL)); a core whose loads take issue slots or
/// pipes the arithmetic needs pays part of their time on top, up to all
/// of it, which is 8 bytes at its L1 read bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SpanLoads {
    /// "avx2", "avx512".
    pub isa: String,
    /// Threads running the pairs at once.
    #[serde(default = "one_thread")]
    pub threads: usize,
    #[serde(deserialize_with = "whole")]
    pub depth: u64,
    #[serde(deserialize_with = "whole")]
    pub loads_per_element: u64,
    /// Seconds per loaded byte: the median over the pairs, the interval
    /// their range.
    pub per_byte_s: Estimate,
}

/// `y[i] = p(x[i])` by Horner's scheme in L1 on each of `threads` threads at once, `depth`
/// dependent steps per element (an FMA each, or a multiply or an add where
/// the level has no FMA), vectorised with `isa` on f64: seconds per
/// element. The elements are independent, so the core overlaps as many of
/// their chains as its out-of-order window holds iterations (§4.2's span
/// per iteration, §4.3's Little's law on the chains in flight): at small
/// depths the FMA throughput binds, beyond the depth where the window
/// holds too few chains to keep the pipes busy the time grows faster than
/// the depth. On all threads at once the cores' siblings and the host's
/// placement of the vCPUs share the pipes: on the Xeon VM two threads ran
/// it at about half one thread's rate when the host put them on one core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SpanPoint {
    /// "scalar", "avx2", "avx512".
    pub isa: String,
    /// Threads running it at once (profiles from before it: 1).
    #[serde(default = "one_thread")]
    pub threads: usize,
    #[serde(deserialize_with = "whole")]
    pub depth: u64,
    /// Seconds per element of one thread.
    pub element: Sample,
}

fn one_thread() -> usize {
    1
}

/// A dependent f64 sum over one thread's array of `per_thread_bytes`
/// against its parts: the add chain alone (registers) and the array's
/// loads alone (STREAM's load kernel over the same array), seconds per
/// element, each the capability estimate.
///
/// ECM counts arithmetic as in-core time that overlaps the data
/// transfers, while a chain (the span of §4.2's dependent steps) that
/// fills the out-of-order window can keep the loads from running ahead of
/// it, and then the two add. Which one a
/// core does is measured: the overlap
/// ω = (t_chain + t_load − t_sum) / min(t_chain, t_load), in [0, 1],
/// is 1 where the slower part hides the other and 0 where they add.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChainOverlap {
    #[serde(deserialize_with = "whole")]
    pub per_thread_bytes: u64,
    /// The dependent sum, seconds per element.
    pub sum_s: f64,
    /// The add chain alone, seconds per add.
    pub chain_s: f64,
    /// The loads alone, seconds per element.
    pub load_s: f64,
    pub overlap: f64,
}

impl ChainOverlap {
    /// The point at `per_thread_bytes` from its three times.
    pub fn new(per_thread_bytes: u64, sum_s: f64, chain_s: f64, load_s: f64) -> Self {
        let hidden = (chain_s + load_s - sum_s) / chain_s.min(load_s);
        Self {
            per_thread_bytes,
            sum_s,
            chain_s,
            load_s,
            overlap: if hidden.is_finite() {
                hidden.clamp(0.0, 1.0)
            } else {
                0.0
            },
        }
    }
}

/// One compute kernel on one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlopsKernel {
    /// A label such as "f64 avx512 fma".
    pub name: String,
    /// "f64" or "f32".
    pub precision: String,
    /// "scalar", "avx2", "avx512", ...
    pub isa: String,
    /// "fma", "mul_add", "dgemm", ...
    pub op: String,
    pub threads: usize,
    /// Independent accumulators of a register kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulators: Option<usize>,
    /// FLOPs of one iteration of a register kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops_per_iteration: Option<f64>,
    /// Side of the dgemm's square matrices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix_side: Option<usize>,
    /// FLOP/s of all threads together.
    pub flops: Sample,
    /// The capability FLOP/s per cycle and thread, when the clock is known.
    #[serde(default)]
    pub flops_per_cycle_per_thread: Option<f64>,
}

impl FlopsSection {
    /// Seconds per operation of a loop-carried f64 chain of `op` ("add" or
    /// "fma"): the capability estimate (low quantile) with its interval.
    pub fn chain_latency(&self, op: &str) -> Option<Estimate> {
        self.chain.get(op).map(Sample::time)
    }

    /// The overlap ω of a chain with its loop's transfers at a working set
    /// of `per_thread_bytes` ([`ChainOverlap`]): linear in log size between
    /// the measured working sets, flat beyond them; `None` without any.
    pub fn chain_overlap_at(&self, per_thread_bytes: f64) -> Option<f64> {
        let mut pts: Vec<(f64, f64)> = self
            .chain_overlap
            .iter()
            .map(|c| (c.per_thread_bytes as f64, c.overlap))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (first, last) = (pts.first()?, pts.last()?);
        let x = per_thread_bytes.clamp(first.0, last.0);
        Some(log_interpolate(&pts, x))
    }

    /// The instruction sets with a span curve, widest first.
    pub fn span_isas(&self) -> Vec<&str> {
        let mut isas: Vec<&str> = self.span.iter().map(|p| p.isa.as_str()).collect();
        isas.sort_by_key(|i| (std::cmp::Reverse(isa_width(i)), *i));
        isas.dedup();
        isas
    }

    /// The set a span of code built for `isa` reads: `isa` itself, or the
    /// widest measured for `None`.
    pub fn span_set<'a>(&'a self, isa: Option<&'a str>) -> Option<&'a str> {
        isa.or_else(|| self.span_isas().first().copied())
    }

    /// Seconds per byte of loads that hit L1 beside a chain of arithmetic
    /// in code built for `isa` (`None`: the widest measured) on each of
    /// `threads` threads (one thread's figure where that count was not
    /// measured), and where it was read ([`SpanLoads`], [`SpanSource`]); `None` without
    /// that set's figure.
    pub fn span_load_s(&self, isa: Option<&str>, threads: usize) -> Option<(Estimate, SpanSource)> {
        let isa = self.span_set(isa)?;
        let of = |n: usize| {
            self.span_loads
                .iter()
                .find(|l| l.isa == isa && l.threads == n)
        };
        of(threads).or_else(|| of(1)).map(|l| {
            let source = SpanSource {
                isa: l.isa.clone(),
                threads: l.threads,
            };
            (l.per_byte_s, source)
        })
    }

    /// The thread count whose span curve of the set `isa` stands for
    /// `threads` threads: that count where it was measured, one thread
    /// otherwise.
    fn span_threads(&self, isa: &str, threads: usize) -> usize {
        let measured = self
            .span
            .iter()
            .any(|p| p.isa == isa && p.threads == threads);
        if measured {
            threads
        } else {
            1
        }
    }

    /// The span curve's points of the set `isa` on `threads` threads, or
    /// on one thread where that count was not measured.
    pub fn span_points<'a>(
        &'a self,
        isa: &'a str,
        threads: usize,
    ) -> impl Iterator<Item = &'a SpanPoint> {
        let n = self.span_threads(isa, threads);
        self.span
            .iter()
            .filter(move |p| p.isa == isa && p.threads == n)
    }

    /// Seconds per element of an iteration whose chain is `depth` steps
    /// long, vectorised with `isa` (`None`: the widest measured), on each
    /// of `threads` threads ([`Self::span_points`]), each
    /// point at `pick` of its estimate: linear in log–log between the
    /// measured depths and along the nearest segment's slope beyond them
    /// (below the first depth, where the throughput binds, that slope is
    /// near 1), and where it was read ([`SpanSource`]). `None` without a
    /// curve for the set, or with a single point.
    pub fn span_element_s(
        &self,
        isa: Option<&str>,
        depth: f64,
        threads: usize,
        pick: impl Fn(&Estimate) -> f64,
    ) -> Option<(f64, SpanSource)> {
        let isa = self.span_set(isa)?;
        let mut pts: Vec<(f64, f64)> = self
            .span_points(isa, threads)
            .map(|p| (p.depth as f64, pick(&p.element.time()).ln()))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        if pts.len() < 2 || depth.is_nan() || depth <= 0.0 {
            return None;
        }
        // ln t, linear in ln depth, the edge segments carried on.
        let source = SpanSource {
            isa: isa.to_string(),
            threads: self.span_threads(isa, threads),
        };
        Some((log_interpolate(&pts, depth).exp(), source))
    }
}

/// Where a figure of the span curves was read: the instruction set and
/// the thread count it was measured on, which is one thread where the
/// count asked for was not measured (profiles from before the curves on
/// all threads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanSource {
    /// "scalar", "avx2", "avx512".
    pub isa: String,
    /// Threads running the loop at once when the figure was measured.
    pub threads: usize,
}

/// Vector width rank of an instruction set's name, for "widest first".
fn isa_width(isa: &str) -> u32 {
    match isa {
        "avx512" => 3,
        "avx2" => 2,
        "scalar" => 0,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_loads_are_read_in_the_loops_set_or_the_widest() {
        let loads = |isa: &str, ps: f64| SpanLoads {
            isa: isa.into(),
            threads: 1,
            depth: 4,
            loads_per_element: 4,
            per_byte_s: Estimate::new(ps * 1e-12, 0.0, 2.0 * ps * 1e-12),
        };
        let span = |isa: &str| SpanPoint {
            isa: isa.into(),
            threads: 1,
            depth: 4,
            element: Sample::new(1e-10, 1e-10, 1e-10),
        };
        let s = FlopsSection {
            span: vec![span("avx2"), span("avx512")],
            span_loads: vec![loads("avx2", 3.0), loads("avx512", 1.0)],
            ..Default::default()
        };
        let ps = |isa, threads| {
            s.span_load_s(isa, threads)
                .map(|(e, at)| (e.point * 1e12, at.isa, at.threads))
        };
        assert_eq!(ps(Some("avx2"), 1), Some((3.0, "avx2".to_string(), 1)));
        assert_eq!(ps(None, 1), Some((1.0, "avx512".to_string(), 1)));
        assert_eq!(ps(Some("scalar"), 1), None);
        // No two-thread figure: one thread's stands for it, and says so.
        assert_eq!(ps(Some("avx2"), 2), Some((3.0, "avx2".to_string(), 1)));
        let mut both = s.clone();
        both.span_loads.push(SpanLoads {
            threads: 2,
            ..loads("avx2", 6.0)
        });
        let (e, at) = both.span_load_s(Some("avx2"), 2).unwrap();
        assert!((e.point - 6e-12).abs() < 1e-24 && at.threads == 2);
    }

    #[test]
    fn a_chain_hidden_by_its_loads_overlaps_fully_and_one_added_not_at_all() {
        // 1 ns of chain and 0.25 ns of loads per element.
        let overlap = |sum_s| ChainOverlap::new(64, sum_s, 1.0e-9, 0.25e-9).overlap;
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(overlap(1.0e-9), 1.0));
        assert!(near(overlap(1.25e-9), 0.0));
        assert!(near(overlap(1.125e-9), 0.5));
        // Faster than the chain alone, or slower than both added (a
        // disturbed timing): clamped.
        assert_eq!(overlap(0.5e-9), 1.0);
        assert_eq!(overlap(2.0e-9), 0.0);
    }

    #[test]
    fn a_span_is_read_in_log_log_between_and_beyond_the_measured_depths() {
        let point = |isa: &str, depth, t: f64| SpanPoint {
            isa: isa.into(),
            threads: 1,
            depth,
            element: Sample {
                median: t,
                ..Default::default()
            },
        };
        let s = FlopsSection {
            span: vec![
                point("avx2", 16, 8.0e-9),
                point("avx2", 4, 1.0e-9),
                point("avx2", 8, 2.0e-9),
                point("scalar", 4, 3.0e-9),
                point("scalar", 8, 6.0e-9),
                point("avx512", 4, 0.5e-9),
            ],
            ..Default::default()
        };
        let at = |isa, depth| s.span_element_s(isa, depth, 1, |e| e.point).map(|(t, _)| t);
        let near = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12 * b;
        // Proportional to the depth below 8, as its square beyond.
        assert!(near(at(Some("avx2"), 2.0), 0.5e-9));
        assert!(near(at(Some("avx2"), 12.0), 4.5e-9));
        assert!(near(at(Some("avx2"), 32.0), 32.0e-9));
        assert!(near(at(Some("scalar"), 6.0), 4.5e-9));
        // The widest set with a curve: one point is no curve.
        assert_eq!(s.span_isas(), ["avx512", "avx2", "scalar"]);
        assert_eq!(at(None, 8.0), None);
        assert_eq!(at(Some("avx2"), 0.0), None);
        // Two threads read one thread's curve until their own is measured,
        // then theirs alone; the source names the count read.
        let one = s.span_element_s(Some("avx2"), 12.0, 2, |e| e.point);
        assert_eq!(one.as_ref().map(|(_, at)| at.threads), Some(1));
        assert!(near(one.map(|(t, _)| t), 4.5e-9));
        let mut both = s.clone();
        both.span.extend([4, 8].map(|d| SpanPoint {
            threads: 2,
            ..point("avx2", d, 2.0 * d as f64 / 4.0 * 1e-9)
        }));
        let two = both.span_element_s(Some("avx2"), 6.0, 2, |e| e.point);
        assert_eq!(two.as_ref().map(|(_, at)| at.threads), Some(2));
        assert!(near(two.map(|(t, _)| t), 3.0e-9));
        let s = FlopsSection {
            span: s.span[..5].to_vec(),
            ..Default::default()
        };
        let (t, at) = s.span_element_s(None, 8.0, 1, |e| e.point).unwrap();
        assert!(near(Some(t), 2.0e-9) && at.isa == "avx2", "{t} {at:?}");
    }

    #[test]
    fn the_overlap_is_read_between_and_beyond_the_measured_sizes() {
        let point = |bytes, sum_s| ChainOverlap::new(bytes, sum_s, 1.0e-9, 0.5e-9);
        let s = FlopsSection {
            chain_overlap: vec![point(1 << 30, 1.0e-9), point(1 << 20, 1.5e-9)],
            ..Default::default()
        };
        let at = |bytes: f64| s.chain_overlap_at(bytes).unwrap();
        assert!(at(1e3).abs() < 1e-9 && (at(1e12) - 1.0).abs() < 1e-9);
        // Halfway in log size between 1 MiB and 1 GiB.
        let mid = s.chain_overlap_at((1u64 << 25) as f64).unwrap();
        assert!((mid - 0.5).abs() < 1e-12, "{mid}");
        assert_eq!(FlopsSection::default().chain_overlap_at(1e6), None);
    }
}
