//! Memory-level parallelism and Little's law (lecture §4.3).
//!
//! k = 1..32 independent pointer chains are followed in one loop over a
//! DRAM-sized random cycle (one pinned thread), so up to k misses are in
//! flight. The sweep runs twice: with huge pages offered (the concurrency
//! of the memory system) and with 4 KiB pages, where a miss may first need
//! a page walk, so the core's page walkers can cap the misses in flight.
//! The chains start evenly spaced along the cycle (whose order the buffer
//! knows), so no chain runs into lines another has just brought into the
//! cache.
//!
//! bandwidth(k) = k × line / t_step, t_step being the time of one loop step
//! (one load of each chain). The saturation concurrency is the smallest k
//! reaching [`SATURATION_SHARE`] of the largest bandwidth. Little's law
//! (`models::little::outstanding_lines`) predicts the concurrency needed to
//! sustain a bandwidth B at latency L: k = B × L / line, with L the DRAM latency (latency benchmark, else this
//! benchmark's k = 1) and B the one-thread DRAM read bandwidth (stream
//! benchmark).
//!
//! # Section `mlp`
//!
//! The summary fields (`max_bandwidth_Bps`, `saturation_k`, `little`) are
//! those of the huge-page curve; each point names its page size.
//!
//! ```json
//! { "dram_bytes": .., "pages": "2MiB", "line_bytes": 64,
//!   "points": [ { "k": 1, "pages": "2MiB", "time_per_step_s": {"median": .., ...},
//!                 "bandwidth_Bps": .. }, ... ],
//!   "max_bandwidth_Bps": .., "saturation_k": 10, "saturation_share": 0.9,
//!   "little": { "latency_s": .., "latency_source": "latency benchmark",
//!               "bandwidth_Bps": .., "bandwidth_source": "stream load, 1 thread, DRAM",
//!               "k": 8.7 } }
//! ```

use anyhow::Result;
use models::little::outstanding_lines;
use models::profile::mlp::{Little, MlpPoint, MlpSection};
use models::profile::Section;
use models::stats::Summary as Stats;
use models::units::{binary_bytes, Si};

use super::{noisy_points_note, sample, Bench, Context, Outcome};
use crate::kernels::chase::{ChaseBuffer, Cursor};
use crate::mem::Pages;
use crate::timer::{measure, serial, Plan};

/// Most chains followed at once.
pub const MAX_CHAINS: usize = 32;
/// Share of the largest bandwidth that counts as saturated.
pub const SATURATION_SHARE: f64 = 0.9;
/// Chain counts of `--quick`.
const QUICK_CHAINS: [usize; 10] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32];

/// Chains followed at once, and the time per step.
type ChainPoint = (usize, Stats);

/// The memory-level-parallelism benchmark.
pub struct Mlp;

/// The smallest k whose bandwidth reaches `share` of the largest.
pub fn saturation(points: &[(usize, f64)], share: f64) -> Option<usize> {
    let max = points.iter().map(|p| p.1).reduce(f64::max)?;
    points.iter().find(|p| p.1 >= share * max).map(|p| p.0)
}

/// Times `K` chains started at `starts`: seconds per loop step.
fn time_chains<const K: usize>(buf: &ChaseBuffer, starts: &[Cursor], plan: &Plan) -> Result<Stats> {
    let mut p: [Cursor; K] = std::array::from_fn(|i| starts[i]);
    buf.chase_many(&mut p, 1024);
    let m = measure(plan, serial(|steps| buf.chase_many(&mut p, steps)))?;
    Ok(m.per_unit.summary())
}

/// [`time_chains`] for a run-time `k` in 1..=32.
fn time_k(k: usize, buf: &ChaseBuffer, starts: &[Cursor], plan: &Plan) -> Result<Stats> {
    macro_rules! arms {
        ($($n:literal)*) => {
            match k {
                $($n => time_chains::<$n>(buf, starts, plan),)*
                _ => anyhow::bail!("{k} chains: between 1 and {MAX_CHAINS} are supported"),
            }
        };
    }
    arms!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
}

/// One curve of the benchmark: the step times of each chain count over one
/// page size.
struct Curve {
    pages: Pages,
    points: Vec<ChainPoint>,
    /// Bytes of the buffer that the kernel backed with huge pages.
    huge_page_bytes: Option<u64>,
}

impl Curve {
    /// (k, bandwidth) of each point: k lines per step.
    fn bandwidths(&self, line: usize) -> Vec<(usize, f64)> {
        self.points
            .iter()
            .map(|(k, s)| (*k, *k as f64 * line as f64 / s.median))
            .collect()
    }
}

/// Measures every chain count of `ks` over a `bytes`-byte cycle with
/// `pages`, on the one pinned thread.
fn measure_curve(
    ctx: &Context,
    pages: Pages,
    bytes: usize,
    ks: &[usize],
    bar: &indicatif::ProgressBar,
) -> Result<Curve> {
    let plan = ctx.config.plan;
    let line = ctx.sys.line_bytes;
    bar.set_message(format!(
        "building {} ({pages} pages)",
        binary_bytes(bytes as f64)
    ));
    let measured = ctx.one.each(|_| -> Result<Curve> {
        let buf = ChaseBuffer::new(bytes, line, pages, 0x4d4c50)?;
        let n = buf.lines();
        bar.inc(1);
        let mut points = Vec::new();
        for &k in ks {
            bar.set_message(format!("k = {k}, {pages} pages"));
            let spaced: Vec<usize> = (0..k).map(|c| c * n / k).collect();
            let starts = buf.positions(&spaced);
            points.push((k, time_k(k, &buf, &starts, &plan)?));
            bar.inc(1);
        }
        Ok(Curve {
            pages,
            points,
            huge_page_bytes: buf.region().huge_page_bytes(),
        })
    });
    measured.into_iter().next().expect("one thread")
}

/// Little's law's concurrency for the one-thread DRAM bandwidth at the
/// DRAM latency, with where each figure came from.
fn little(ctx: &Context, huge: &Curve) -> Little {
    let line = ctx.sys.line_bytes;
    let (latency, lat_src) = match ctx.known.summary.dram_latency_s {
        Some(l) => (Some(l), "latency benchmark (DRAM, huge pages)"),
        None => (
            huge.points.first().map(|p| p.1.median),
            "this benchmark with 1 chain",
        ),
    };
    let dram_level = ctx.known.levels.iter().find(|l| l.name == "DRAM");
    let (bandwidth, bw_src) = match (
        dram_level.and_then(|l| l.bandwidth_1t_Bps),
        ctx.known.summary.stream_triad_1t_Bps,
    ) {
        (Some(b), _) => (Some(b.point), "stream load kernel, 1 thread, DRAM"),
        (None, Some(b)) => (Some(b), "stream triad, 1 thread, DRAM"),
        _ => (None, "not measured (run the stream benchmark)"),
    };
    Little {
        latency_s: latency,
        latency_source: lat_src.into(),
        bandwidth_Bps: bandwidth,
        bandwidth_source: bw_src.into(),
        k: latency
            .zip(bandwidth)
            .and_then(|(l, b)| outstanding_lines(b, l, line as f64).ok()),
    }
}

/// One line of the table for one curve.
fn curve_line(curve: &Curve, line: usize) -> String {
    let bw = curve.bandwidths(line);
    let first = bw.first().map_or(0.0, |p| p.1);
    let max = bw.iter().map(|p| p.1).fold(0.0, f64::max);
    format!(
        "  {} pages: {} with 1 chain, at most {} ({:.1} misses in flight); {}% of it from k = {}",
        curve.pages.label(),
        Si(first, "B/s"),
        Si(max, "B/s"),
        if first > 0.0 { max / first } else { f64::NAN },
        (SATURATION_SHARE * 100.0) as u32,
        saturation(&bw, SATURATION_SHARE).map_or("-".into(), |k| k.to_string()),
    )
}

impl Bench for Mlp {
    fn name(&self) -> &'static str {
        "mlp"
    }

    /// Two curves: huge pages (the misses the memory system keeps in
    /// flight) and base pages (where each miss may also need a page walk,
    /// so the page walkers can cap the concurrency: what a loop over an
    /// ordinary allocation sees).
    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let mut out = Outcome::default();
        let (caches, note) = ctx.caches_or_probe()?;
        out.notes.extend(note);
        let largest = caches.iter().map(|c| c.1).reduce(f64::max).unwrap_or(0.0);
        let dram = ctx.dram_bytes(largest) as usize;
        let line = ctx.sys.line_bytes;
        let ks: Vec<usize> = if ctx.config.quick {
            QUICK_CHAINS.to_vec()
        } else {
            (1..=MAX_CHAINS).collect()
        };
        let bar = ctx.progress.bar("mlp", 2 * (ks.len() as u64 + 1));
        let huge = measure_curve(ctx, Pages::Huge, dram, &ks, &bar)?;
        let small = measure_curve(ctx, Pages::Small, dram, &ks, &bar)?;
        bar.finish_and_clear();
        for c in [&huge, &small] {
            out.notes.extend(noisy_points_note(
                &format!("MLP step times ({} pages)", c.pages.label()),
                c.points.iter().map(|p| &p.1),
            ));
        }
        let bw = huge.bandwidths(line);
        let max_bw = bw.iter().map(|p| p.1).reduce(f64::max).unwrap_or(0.0);
        let little = little(ctx, &huge);
        let points = [&huge, &small].into_iter().flat_map(|c| {
            c.points
                .iter()
                .zip(c.bandwidths(line))
                .map(move |((k, s), (_, b))| MlpPoint {
                    k: *k,
                    pages: c.pages.label().into(),
                    time_per_step_s: Some(sample(s)),
                    bandwidth_Bps: b,
                })
        });
        let table_little = match little.k {
            Some(k) => format!(
                "{k:.1} (B = {}, L = {})",
                Si(little.bandwidth_Bps.unwrap_or(0.0), "B/s"),
                Si(little.latency_s.unwrap_or(0.0), "s")
            ),
            None => format!("- ({})", little.bandwidth_source),
        };
        out.section = Some(Section::Mlp(MlpSection {
            dram_bytes: dram as u64,
            pages: Some(Pages::Huge.label().into()),
            huge_page_bytes: huge.huge_page_bytes,
            line_bytes: line as u64,
            points: points.collect(),
            max_bandwidth_Bps: Some(max_bw),
            saturation_k: saturation(&bw, SATURATION_SHARE),
            saturation_share: Some(SATURATION_SHARE),
            little: Some(little),
        }));
        out.table = format!(
            "Memory-level parallelism ({} chain counts over {})\n{}\n{}\n  Little's law k = B·L/{} B = {}",
            ks.len(),
            binary_bytes(dram as f64),
            curve_line(&huge, line),
            curve_line(&small, line),
            line,
            table_little,
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_is_the_first_k_near_the_top() {
        let pts = [(1, 1.0), (2, 2.0), (4, 3.7), (8, 4.0), (16, 3.9)];
        assert_eq!(saturation(&pts, 0.9), Some(4));
        assert_eq!(saturation(&[], 0.9), None);
    }

    #[test]
    fn chains_dispatch_and_refuse_too_many() {
        let buf = ChaseBuffer::new(64 * 4096, 64, Pages::Small, 1).unwrap();
        let starts: Vec<Cursor> = (0..3).map(|i| buf.line(i * 1000)).collect();
        let s = time_k(3, &buf, &starts, &Plan::quick()).unwrap();
        assert!(s.median > 0.0);
        assert!(time_k(33, &buf, &starts, &Plan::quick()).is_err());
    }
}
