//! Bandwidth per memory level: STREAM copy, scale, add, triad and a
//! read-only load, swept over working sets on 1 thread and on all threads
//! (lecture §2.4, §2.5 for write-allocate, §4.4 for the Roofline's slope).
//!
//! bandwidth = bytes_per_elem × n × threads × sweeps / t, with the bytes
//! counted as STREAM does and, separately, with the write-allocate read of
//! every stored line (see [`crate::kernels::stream`] for the table).
//!
//! # Working sets
//!
//! Each thread works on its own contiguous region (huge pages offered),
//! allocated and first touched by that pinned thread; a point's working set
//! is per thread (all arrays of the kernel together), the total is that ×
//! threads. The sweep goes from 16 KiB per thread, 2 points per octave
//! (1 with `--quick`), up to the DRAM working set
//! max(128 MiB, 8 × largest detected cache, 2 × largest OS-reported cache)
//! in total, capped by the memory budget, and one size is freed before the
//! next is allocated.
//!
//! Every point's bandwidth is the capability estimate of its clean timings
//! (the high quantile of the rates, `models::stats::capability`); the
//! summary's triad figures are those of the DRAM points. A cache level's
//! bandwidth is the median, over the points on its plateau, of the load
//! kernel's capability estimates. The plateau of level i (capacity
//! Cᵢ, per core) holds the working sets from 2·Cᵢ₋₁ to Cᵢ / (2·s), s being
//! the number of the run's threads that share that level according to the
//! OS (1 for one thread). DRAM's bandwidth is measured at the DRAM working
//! set itself.
//!
//! # Section `stream`
//!
//! ```json
//! {
//!   "isa": "avx2", "pages": "2MiB", "non_temporal_stores": false,
//!   "bytes_per_elem": { "triad": {"stream": 24, "write_allocate": 32,
//!                                 "load": 16, "store": 8, "allocate": 8}, ... },
//!   "dram_bytes": 268435456,
//!   "sweeps": [ { "threads": 1, "points": [ { "per_thread_bytes": 16384, "total_bytes": 16384,
//!       "kernel": "triad", "bandwidth_Bps": {"median": .., "ci_lo": .., ...},
//!       "bandwidth_write_allocate_Bps": .. } ] } ],
//!   "levels": [ { "name": "L1", "threads": 1, "from_bytes": .., "to_bytes": .., "points": 2,
//!                 "read_bandwidth_Bps": {"point": .., "lo": .., "hi": ..} } ],
//!   "dram": [ { "threads": 2, "kernel": "triad", "total_bytes": .., "bandwidth_Bps": {..},
//!               "bandwidth_write_allocate_Bps": .. } ]
//! }
//! ```

use std::hint::black_box;
use std::sync::Mutex;

use anyhow::{Context as _, Result};
use models::profile::stream::{BytesPerElem, StreamLevel, StreamPoint, StreamSection, StreamSweep};
use models::profile::Section;
use models::stats::{Better, Sample, Summary as Stats};
use models::units::Si;
use models::Estimate;

use super::{level, noisy_points_note, noisy_warning, sample, size_grid, Bench, Context, Outcome};
use crate::config::RESIDENT_FACTOR;
use crate::kernels::stream::{run, words_for_all, Kernel};
use crate::kernels::Isa;
use crate::mem::{Pages, Region};
use crate::output::binary_size;
use crate::pin::Team;
use crate::timer::{measure, Plan};
use crate::trust::headline;

/// Smallest per-thread working set of the sweep, bytes.
pub const FIRST_BYTES: u64 = 16 << 10;
/// No x86 core completes more than 5 vector memory operations per cycle
/// (3 loads + 2 stores); a bandwidth above this many vectors per cycle per
/// thread is flagged as above the physical bound.
pub const MAX_VECTORS_PER_CYCLE: f64 = 6.0;

/// Kept timings of a sweep point below the DRAM size at most (their
/// medians are pooled per level, which narrows the interval again).
pub const SWEEP_REPS: usize = 11;

/// The STREAM benchmark.
pub struct Stream;

/// Bandwidth of `kernel` at one size: the per-timing rates, STREAM counting.
#[derive(Debug, Clone)]
pub struct KernelPoint {
    /// The kernel.
    pub kernel: Kernel,
    /// Working set of each thread, bytes (all arrays of the kernel).
    pub per_thread_bytes: u64,
    /// Threads that ran it at once.
    pub threads: usize,
    /// Bandwidth of all threads together, B/s, counted as STREAM does.
    pub bandwidth: Stats,
}

impl KernelPoint {
    /// The bandwidth (capability estimate), counted as STREAM does.
    pub fn best(&self) -> f64 {
        self.bandwidth.capability(Better::Higher).point
    }

    /// [`Self::best`] counted with write-allocate traffic.
    pub fn write_allocate_best(&self) -> f64 {
        self.best() * self.kernel.bytes_per_elem_write_allocate() / self.kernel.bytes_per_elem()
    }

    /// The point as the section stores it, with its thread count when
    /// `threads` is given (the DRAM points).
    fn record(&self, threads: Option<usize>) -> StreamPoint {
        StreamPoint {
            per_thread_bytes: self.per_thread_bytes,
            total_bytes: self.per_thread_bytes * self.threads as u64,
            kernel: self.kernel.name().into(),
            threads,
            bandwidth_Bps: Some(sample(&self.bandwidth)),
            bandwidth_write_allocate_Bps: self.write_allocate_best(),
        }
    }
}

/// Measures `kernels` on every thread of `team`, each thread on its own
/// `per_thread_bytes` working set (first touched by that thread).
pub fn measure_size(
    team: &Team,
    per_thread_bytes: u64,
    kernels: &[Kernel],
    pages: Pages,
    plan: &Plan,
) -> Result<Vec<KernelPoint>> {
    let isa = Isa::detect();
    let words = words_for_all(per_thread_bytes as usize);
    let regions = team
        .each(|_| -> Result<Mutex<Region>> {
            let mut r = Region::new(words * 8, pages)?;
            r.f64s_mut().fill(1.0);
            Ok(Mutex::new(r))
        })
        .into_iter()
        .collect::<Result<Vec<_>>>()
        .with_context(|| {
            format!(
                "allocating {} per thread",
                binary_size(per_thread_bytes as f64)
            )
        })?;
    let mut out = Vec::new();
    for &kernel in kernels {
        let n = kernel.elems_for(per_thread_bytes as usize);
        let m = measure(plan, |inner, count| {
            team.time_batch(&regions, inner, count, |r, sweeps| {
                black_box(run(isa, kernel, r.f64s_mut(), n, sweeps));
            })
        })?;
        let bytes = kernel.bytes_per_elem() * n as f64 * team.threads() as f64;
        out.push(KernelPoint {
            kernel,
            per_thread_bytes,
            threads: team.threads(),
            bandwidth: m.per_unit.map(|s| bytes / s)?.summary(),
        });
    }
    Ok(out)
}

/// A level's plateau in per-thread bytes, and the points on it.
struct Plateau {
    name: String,
    from: f64,
    to: f64,
    threads: usize,
    points: Vec<f64>,
    bandwidth: Estimate,
}

/// The load kernel's bandwidth on each cache plateau (see the module docs).
fn plateaus(
    ctx: &Context,
    caches: &[(String, f64)],
    sweep: &[KernelPoint],
    threads: usize,
) -> Vec<Plateau> {
    let cpus: Vec<usize> = ctx.config.cpus.iter().take(threads).map(|c| c.id).collect();
    let loads: Vec<&KernelPoint> = sweep.iter().filter(|p| p.kernel == Kernel::Load).collect();
    let mut out = Vec::new();
    let mut prev = 0.0;
    for (i, (name, size)) in caches.iter().enumerate() {
        let share = if threads > 1 {
            ctx.sys.sharing(i as u32 + 1, &cpus) as f64
        } else {
            1.0
        };
        let (mut from, mut to) = (2.0 * prev, size / (2.0 * share));
        prev = *size;
        let mut on: Vec<&KernelPoint> = loads
            .iter()
            .copied()
            .filter(|p| (p.per_thread_bytes as f64) >= from && (p.per_thread_bytes as f64) <= to)
            .collect();
        if on.is_empty() {
            // No point on a narrow (or, for a small shared level, empty)
            // plateau: the one nearest its middle, which then is the
            // plateau.
            let mid = (from.max(FIRST_BYTES as f64) * to.max(FIRST_BYTES as f64))
                .sqrt()
                .log2();
            on.extend(loads.iter().copied().min_by(|a, b| {
                let da = ((a.per_thread_bytes as f64).log2() - mid).abs();
                let db = ((b.per_thread_bytes as f64).log2() - mid).abs();
                da.total_cmp(&db)
            }));
            if let Some(p) = on.first() {
                (from, to) = (p.per_thread_bytes as f64, p.per_thread_bytes as f64);
            }
        }
        let bests: Vec<f64> = on.iter().map(|p| p.best()).collect();
        let bandwidth = match Sample::new(bests) {
            Ok(s) => s.summary().estimate(),
            Err(_) => match on.first() {
                Some(p) => p.bandwidth.capability(Better::Higher),
                None => continue,
            },
        };
        out.push(Plateau {
            name: name.clone(),
            from,
            to,
            threads,
            points: on.iter().map(|p| p.per_thread_bytes as f64).collect(),
            bandwidth,
        });
    }
    out
}

impl Bench for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }

    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let mut out = Outcome::default();
        let (caches, probe_note) = ctx.caches_or_probe()?;
        out.notes.extend(probe_note);
        let largest = caches.iter().map(|c| c.1).reduce(f64::max).unwrap_or(0.0);
        let dram_total = ctx.far_dram_bytes(largest);
        let per_octave = if ctx.config.quick { 1 } else { 2 };
        let teams: Vec<&Team> = if ctx.all.threads() > 1 {
            vec![&ctx.one, &ctx.all]
        } else {
            vec![&ctx.one]
        };
        let grids: Vec<Vec<u64>> = teams
            .iter()
            .map(|t| {
                let top = dram_total / t.threads() as u64;
                let mut g = size_grid(FIRST_BYTES, top, per_octave, 4096);
                if g.last() != Some(&top) {
                    g.push(top);
                }
                g
            })
            .collect();
        let sweeps = sweep(ctx, &teams, &grids)?;

        // DRAM: the largest point of each sweep.
        let dram: Vec<&KernelPoint> = sweeps
            .iter()
            .zip(&grids)
            .flat_map(|(s, g)| {
                s.iter()
                    .filter(move |p| Some(&p.per_thread_bytes) == g.last())
            })
            .collect();
        dram_headlines(ctx, &mut out, &dram);
        if (dram_total as f64) < RESIDENT_FACTOR * largest {
            out.warnings.push(format!(
                "the DRAM bandwidth was measured with {} in total, less than {RESIDENT_FACTOR}× the largest detected cache ({}): it may be cache-resident (raise --max-memory)",
                binary_size(dram_total as f64),
                binary_size(largest)
            ));
        }
        out.notes.extend(noisy_points_note(
            "STREAM sweep points",
            sweeps.iter().flatten().map(|p| &p.bandwidth),
        ));
        out.warnings.extend(bound_warnings(ctx, &sweeps));

        // Levels: caches from their plateaus, DRAM from its point.
        let mut levels = Vec::new();
        for (sweep, team) in sweeps.iter().zip(&teams) {
            levels.extend(plateaus(ctx, &caches, sweep, team.threads()));
        }
        memory_levels(ctx, &mut out, &caches, &levels, &dram);
        out.section = Some(Section::Stream(section(
            dram_total, &sweeps, &teams, &levels, &dram,
        )));
        out.table = dram_table(ctx, &dram, dram_total);
        Ok(out)
    }
}

/// Every kernel at every size of `grids`, on each team.
fn sweep(ctx: &Context, teams: &[&Team], grids: &[Vec<u64>]) -> Result<Vec<Vec<KernelPoint>>> {
    let plan = &ctx.config.plan;
    let bar = ctx
        .progress
        .bar("stream", grids.iter().map(|g| g.len() as u64).sum());
    let mut sweeps: Vec<Vec<KernelPoint>> = Vec::new();
    for (team, grid) in teams.iter().zip(grids) {
        let mut pts = Vec::new();
        for &size in grid {
            bar.set_message(format!("{} × {}", team.threads(), binary_size(size as f64)));
            // The DRAM point (the last) gets the full plan; the plateau
            // points, which are pooled per level, at most SWEEP_REPS
            // and no re-measuring.
            let p = if Some(&size) == grid.last() {
                *plan
            } else {
                plan.with_reps(plan.reps.min(SWEEP_REPS)).without_retry()
            };
            pts.extend(measure_size(team, size, &Kernel::ALL, Pages::Huge, &p)?);
            bar.inc(1);
        }
        sweeps.push(pts);
    }
    bar.finish_and_clear();
    Ok(sweeps)
}

/// The summary's triad figures from the DRAM points, and their noise
/// warnings.
fn dram_headlines(ctx: &Context, out: &mut Outcome, dram: &[&KernelPoint]) {
    for (key, threads) in [
        ("stream_triad_1t_Bps", 1),
        ("stream_triad_Bps", ctx.all.threads()),
    ] {
        if let Some(p) = dram_of(dram, threads, Kernel::Triad) {
            headline(out, key, &p.bandwidth, p.best());
        }
    }
    for p in dram.iter().filter(|p| p.kernel == Kernel::Triad) {
        out.warnings.extend(noisy_warning(
            &format!("STREAM triad (DRAM, {} thread(s))", p.threads),
            &p.bandwidth,
        ));
    }
}

/// The DRAM point of kernel `k` on `threads` threads.
fn dram_of<'a>(dram: &[&'a KernelPoint], threads: usize, k: Kernel) -> Option<&'a KernelPoint> {
    dram.iter()
        .find(|p| p.threads == threads && p.kernel == k)
        .copied()
}

/// The memory levels' read bandwidths: each cache from its plateaus, DRAM
/// from its load points; a level faster than the nearer one is warned of.
fn memory_levels(
    ctx: &Context,
    out: &mut Outcome,
    caches: &[(String, f64)],
    levels: &[Plateau],
    dram: &[&KernelPoint],
) {
    for (name, size) in caches {
        let mut l = level(name);
        l.size_bytes = Some(*size);
        for p in levels.iter().filter(|p| &p.name == name) {
            if p.threads == 1 {
                l.bandwidth_1t_Bps = Some(p.bandwidth);
            }
            if p.threads == ctx.all.threads() {
                l.bandwidth_Bps = Some(p.bandwidth);
            }
        }
        out.levels.push(l);
    }
    let mut d = level("DRAM");
    let cap = |p: &KernelPoint| {
        (p.bandwidth.unreliable.is_none()).then(|| p.bandwidth.capability(Better::Higher))
    };
    d.bandwidth_1t_Bps = dram_of(dram, 1, Kernel::Load).and_then(cap);
    d.bandwidth_Bps = dram_of(dram, ctx.all.threads(), Kernel::Load).and_then(cap);
    out.levels.push(d);
    let mut prev_bw: Option<(String, f64)> = None;
    for l in &out.levels {
        if let (Some((pn, pb)), Some(b)) = (&prev_bw, l.bandwidth_1t_Bps) {
            if b.point > 1.1 * pb {
                out.warnings.push(format!(
                    "the {} read bandwidth ({}) is above the nearer {}'s ({}): a plateau may be mis-sized",
                    l.name,
                    Si(b.point, "B/s"),
                    pn,
                    Si(*pb, "B/s")
                ));
            }
        }
        if let Some(b) = l.bandwidth_1t_Bps {
            prev_bw = Some((l.name.clone(), b.point));
        }
    }
}

/// The section of the run.
fn section(
    dram_total: u64,
    sweeps: &[Vec<KernelPoint>],
    teams: &[&Team],
    levels: &[Plateau],
    dram: &[&KernelPoint],
) -> StreamSection {
    StreamSection {
        isa: Isa::detect().name().into(),
        pages: Some(Pages::Huge.label().into()),
        non_temporal_stores: Some(false),
        bytes_per_elem: Kernel::ALL
            .iter()
            .map(|k| {
                let b = BytesPerElem {
                    stream: k.bytes_per_elem(),
                    write_allocate: k.bytes_per_elem_write_allocate(),
                    load: Some(8.0 * k.loaded_arrays() as f64),
                    store: Some(8.0 * k.stored_arrays() as f64),
                    allocate: Some(k.allocate_bytes_per_elem()),
                };
                (k.name().to_string(), b)
            })
            .collect(),
        dram_bytes: Some(dram_total),
        sweeps: sweeps
            .iter()
            .zip(teams)
            .map(|(s, t)| StreamSweep {
                threads: t.threads(),
                points: s.iter().map(|p| p.record(None)).collect(),
            })
            .collect(),
        levels: levels
            .iter()
            .map(|p| StreamLevel {
                name: p.name.clone(),
                threads: p.threads,
                from_bytes: p.from,
                to_bytes: p.to,
                points: p.points.clone(),
                read_bandwidth_Bps: p.bandwidth,
            })
            .collect(),
        dram: dram.iter().map(|p| p.record(Some(p.threads))).collect(),
    }
}

/// Points whose bandwidth is above what the machine can do: the FLOP rate
/// it implies above the measured peak, or more than
/// [`MAX_VECTORS_PER_CYCLE`] vectors per cycle per thread.
fn bound_warnings(ctx: &Context, sweeps: &[Vec<KernelPoint>]) -> Vec<String> {
    let mut w = Vec::new();
    let vector = Isa::detect().vector_bytes() as f64;
    for p in sweeps.iter().flatten() {
        let bw = p.best();
        let peak = ctx
            .known
            .ceilings
            .iter()
            .filter(|c| c.precision == "f64" && c.threads == p.threads)
            .map(|c| c.flops.point)
            .reduce(f64::max);
        let implied = bw / p.kernel.bytes_per_elem() * p.kernel.flops_per_elem();
        let what = format!(
            "{} on {} thread(s) at {} per thread ({})",
            p.kernel.name(),
            p.threads,
            binary_size(p.per_thread_bytes as f64),
            Si(bw, "B/s")
        );
        if let Some(peak) = peak.filter(|&pk| implied > pk) {
            w.push(format!(
                "{what} implies {} above the measured peak {}: above a physical bound",
                Si(implied, "FLOP/s"),
                Si(peak, "FLOP/s")
            ));
        }
        if let Some(hz) = ctx.clock.as_ref().map(|c| c.hz) {
            let per_cycle = bw / p.threads as f64 / hz;
            if per_cycle > MAX_VECTORS_PER_CYCLE * vector {
                w.push(format!(
                    "{what} is {per_cycle:.0} B per cycle per thread, above the physical bound of {} B ({MAX_VECTORS_PER_CYCLE} vectors of {vector} B)",
                    MAX_VECTORS_PER_CYCLE * vector
                ));
            }
        }
    }
    w
}

fn dram_table(ctx: &Context, dram: &[&KernelPoint], total: u64) -> String {
    let all = ctx.all.threads();
    let mut t = format!(
        "STREAM at DRAM size ({} in total; B/elem counted as STREAM / with write-allocate; huge pages, no non-temporal stores)\n",
        binary_size(total as f64)
    );
    t += &format!(
        "  {:<6} {:>9} {:>13} {:>13} {:>15}\n",
        "kernel",
        "B/elem",
        "1 thread",
        format!("{all} threads"),
        format!("{all}t with WA")
    );
    for k in Kernel::ALL {
        let get = |th: usize| dram.iter().find(|p| p.threads == th && p.kernel == k);
        t += &format!(
            "  {:<6} {:>9} {:>13} {:>13} {:>15}\n",
            k.name(),
            format!(
                "{}/{}",
                k.bytes_per_elem(),
                k.bytes_per_elem_write_allocate()
            ),
            get(1).map_or("-".into(), |p| Si(p.best(), "B/s").to_string()),
            get(all).map_or("-".into(), |p| Si(p.best(), "B/s").to_string()),
            get(all).map_or("-".into(), |p| Si(p.write_allocate_best(), "B/s")
                .to_string()),
        );
    }
    t
}
