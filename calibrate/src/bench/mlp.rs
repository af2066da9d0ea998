//! Memory-level parallelism and Little's law (lecture §4.3).
//!
//! k = 1..32 independent pointer chains are followed in one loop over a
//! DRAM-sized Sattolo cycle (huge pages offered, one pinned thread), so up
//! to k misses are in flight. The chains start evenly spaced along the
//! cycle (found by one walk of it), so no chain runs into lines another has
//! just brought into the cache.
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
use models::units::Si;

use super::{noisy_points_note, sample, Bench, Context, Outcome};
use crate::kernels::chase::{ChaseBuffer, Cursor};
use crate::mem::Pages;
use crate::output::binary_size;
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

impl Bench for Mlp {
    fn name(&self) -> &'static str {
        "mlp"
    }

    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let mut out = Outcome::default();
        let (caches, note) = ctx.caches_or_probe()?;
        out.notes.extend(note);
        let largest = caches.iter().map(|c| c.1).reduce(f64::max).unwrap_or(0.0);
        let dram = ctx.dram_bytes(largest);
        let line = ctx.sys.line_bytes;
        let ks: Vec<usize> = if ctx.config.quick {
            QUICK_CHAINS.to_vec()
        } else {
            (1..=MAX_CHAINS).collect()
        };
        let plan = ctx.config.plan;
        let bar = ctx.progress.bar("mlp", ks.len() as u64 + 1);
        bar.set_message(format!("building {}", binary_size(dram as f64)));
        let measured = ctx.one.each(|_| -> Result<(Vec<ChainPoint>, Option<u64>)> {
            let buf = ChaseBuffer::new(dram as usize, line, Pages::Huge, 0x4d4c50)?;
            let n = buf.lines();
            let mut idx: Vec<usize> = ks
                .iter()
                .flat_map(|&k| (0..k).map(move |c| c * n / k))
                .collect();
            idx.sort_unstable();
            idx.dedup();
            let ptrs = buf.positions(&idx);
            bar.inc(1);
            let mut v = Vec::new();
            for &k in &ks {
                bar.set_message(format!("k = {k}"));
                let starts: Vec<Cursor> = (0..k)
                    .map(|c| ptrs[idx.binary_search(&(c * n / k)).expect("position walked")])
                    .collect();
                v.push((k, time_k(k, &buf, &starts, &plan)?));
                bar.inc(1);
            }
            Ok((v, buf.region().huge_page_bytes()))
        });
        bar.finish_and_clear();
        let (points, huge) = measured.into_iter().next().expect("one thread")?;
        let bw: Vec<(usize, f64)> = points
            .iter()
            .map(|(k, s)| (*k, *k as f64 * line as f64 / s.median))
            .collect();
        let max_bw = bw.iter().map(|p| p.1).reduce(f64::max).unwrap_or(0.0);
        let sat = saturation(&bw, SATURATION_SHARE);
        out.notes.extend(noisy_points_note(
            "MLP step times",
            points.iter().map(|p| &p.1),
        ));

        let (latency, lat_src) = match ctx.known.summary.dram_latency_s {
            Some(l) => (Some(l), "latency benchmark (DRAM, huge pages)"),
            None => (
                points.first().map(|p| p.1.median),
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
        let little = latency
            .zip(bandwidth)
            .and_then(|(l, b)| outstanding_lines(b, l, line as f64).ok());

        out.section = Some(Section::Mlp(MlpSection {
            dram_bytes: dram,
            pages: Some(Pages::Huge.label().into()),
            huge_page_bytes: huge,
            line_bytes: line as u64,
            points: points
                .iter()
                .zip(&bw)
                .map(|((k, s), (_, b))| MlpPoint {
                    k: *k,
                    pages: Pages::Huge.label().into(),
                    time_per_step_s: Some(sample(s)),
                    bandwidth_Bps: *b,
                })
                .collect(),
            max_bandwidth_Bps: Some(max_bw),
            saturation_k: sat,
            saturation_share: Some(SATURATION_SHARE),
            little: Some(Little {
                latency_s: latency,
                latency_source: lat_src.into(),
                bandwidth_Bps: bandwidth,
                bandwidth_source: bw_src.into(),
                k: little,
            }),
        }));
        let first = bw.first().map_or(0.0, |p| p.1);
        out.table = format!(
            "Memory-level parallelism ({} chains over {}): {} with 1 chain, at most {}; {}% of it from k = {}\n  Little's law k = B·L/{} B = {}",
            ks.len(),
            binary_size(dram as f64),
            Si(first, "B/s"),
            Si(max_bw, "B/s"),
            (SATURATION_SHARE * 100.0) as u32,
            sat.map_or("-".into(), |k| k.to_string()),
            line,
            match (little, latency, bandwidth) {
                (Some(k), Some(l), Some(b)) => format!("{k:.1} (B = {}, L = {})", Si(b, "B/s"), Si(l, "s")),
                _ => format!("- ({bw_src})"),
            }
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
