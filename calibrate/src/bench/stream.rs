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
//! allocated by that pinned thread and placed on its NUMA node; a point's working set
//! is per thread (all arrays of the kernel together), the total is that ×
//! threads. The sweep runs every kernel (with `--quick`, one kernel per
//! distinct byte mix, [`Kernel::DISTINCT_MIXES`]) from 16 KiB per thread,
//! 2 points per octave (1 with `--quick`), up to the DRAM working set
//! max(128 MiB, 8 × largest detected cache, 2 × largest OS-reported cache)
//! in total, capped by the memory budget. Each team's regions are made
//! once, at the DRAM size, and every smaller point runs on their start.
//!
//! Every point's bandwidth below the DRAM working set is the capability
//! estimate of its clean timings (the high quantile of the rates,
//! `models::stats::capability`); the summary's triad figures are those of
//! the DRAM points. A cache level's bandwidth is the median, over the
//! points on its plateau, of the load kernel's capability estimates. The
//! plateau of level i (capacity
//! Cᵢ, per core) holds the working sets from 2·Cᵢ₋₁ to Cᵢ / (2·s), s being
//! the number of the run's threads that share that level according to the
//! OS (1 for one thread). DRAM's bandwidth is measured at the DRAM working
//! set itself, in short bursts spread over the sweep and once at its end:
//! the median of the bursts' capability estimates, their range its
//! interval ([`DRAM_BURSTS`], `models::profile::stream::typical_burst`).
//! On two threads or more each kernel's burst runs between two probes of
//! the line between the first two CPUs, which tell where the host ran the
//! threads; when the probes show two placements, the figure is the
//! median burst of the placement most bursts saw and the interval the two
//! placements' median bursts.
//!
//! One thread's L1 plateau is measured again in each narrower vector
//! instruction set (`narrower_l1`): a core loads a fixed number of vectors
//! per cycle from L1, so the bytes per second follow the loads' width.
//!
//! From the largest private cache to the DRAM working set the sweep runs
//! again on 4 KiB pages (`base_pages`, module `base_pages`): what a loop whose
//! arrays are not on huge pages streams at.
//!
//! At the DRAM working set the copy also runs in segments of 1 to 64 KiB,
//! 2 and 64 runs to a row, against the contiguous copy, for what
//! a stream's restart costs (`restarts`, [`crate::kernels::segments`]), and, on one thread, reading
//! its source again two lags behind, for what a read from a reuse window
//! costs beside streams from DRAM (`windows`, [`crate::kernels::lagged`]);
//! and with a window in L1, beside one thread's copy at half of each cache
//! beyond L1 and at DRAM, for what a read of lines L1 holds costs beside
//! streams from each level (`l1_rereads`).
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
//!                 "read_bandwidth_Bps": {"point": .., "lo": .., "hi": ..} },
//!               { "name": "L1", "threads": 1, ..., "isa": "avx2" } ],
//!   "dram": [ { "threads": 2, "kernel": "triad", "total_bytes": .., "bandwidth_Bps": {..},
//!               "bandwidth_write_allocate_Bps": .. } ],
//!   "restarts": [ { "threads": 2, "segment_bytes": 8192, "runs_per_row": 64, "per_thread_bytes": ..,
//!                   "per_segment_s": {"point": .., "lo": .., "hi": ..} } ],
//!   "windows": [ { "threads": 1, "window_bytes": 131072, "per_thread_bytes": ..,
//!                  "per_byte_s": {"point": .., "lo": .., "hi": ..} } ],
//!   "l1_rereads": [ { "threads": 1, "window_bytes": 12288, "per_thread_bytes": 1048576,
//!                     "per_byte_s": {"point": .., "lo": .., "hi": ..} } ]
//! }
//! ```

use std::hint::black_box;
use std::sync::Mutex;

use anyhow::{Context as _, Result};
use models::profile::stream::{typical_burst, StreamPoint};
use models::profile::Section;
use models::stats::{Better, Sample, Summary as Stats};
use models::units::binary_bytes;
use models::Estimate;

use super::{noisy_points_note, sample, size_grid, Bench, Context, Outcome};
use crate::config::RESIDENT_FACTOR;
use crate::kernels::stream::{run, words_for_all, Kernel};
use crate::kernels::Isa;
use crate::mem::{Pages, Region};
use crate::pin::Team;
use crate::timer::{measure, Plan};

mod base_pages;
mod edge;
pub(crate) mod pairs;
mod plateaus;
mod report;
mod restarts;
mod sweep;
mod windows;
use base_pages::{base_page_dram, base_page_note, base_page_sweeps, largest_private_cache};
use plateaus::{narrower_l1, plateaus};
use report::{bound_warnings, dram_headlines, dram_table, memory_levels, section, sweep_records};
use restarts::measure_restarts;
pub use sweep::DRAM_BURSTS;
use sweep::{narrower_note, sweep};
use windows::{measure_windows, Windows};

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
    /// A DRAM point's bursts, oldest first: the capability estimate of
    /// each (B/s, STREAM counting); empty for the other points.
    pub bursts: Vec<f64>,
    /// The line probes before and after each of `bursts`, s; empty on one
    /// thread or when a probe is missing.
    pub burst_lines: Vec<[f64; 2]>,
    /// The instruction set the kernel ran in.
    pub isa: Isa,
}

impl KernelPoint {
    fn new(kernel: Kernel, per_thread_bytes: u64, team: &Team, rates: &Sample, isa: Isa) -> Self {
        Self {
            kernel,
            per_thread_bytes,
            threads: team.threads(),
            bandwidth: rates.summary(),
            bursts: Vec::new(),
            burst_lines: Vec::new(),
            isa,
        }
    }

    /// The bandwidth, counted as STREAM does, with its interval: the
    /// capability estimate of the timings or, for a point measured in
    /// bursts, the median burst with the range of the bursts, or of the
    /// placement most bursts saw with the placements' range
    /// ([`typical_burst`]).
    pub fn estimate(&self) -> Estimate {
        typical_burst(&self.bursts, &self.burst_lines)
            .unwrap_or_else(|| self.bandwidth.capability(Better::Higher))
    }

    /// The bandwidth ([`Self::estimate`]), counted as STREAM does.
    pub fn best(&self) -> f64 {
        self.estimate().point
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
            // The sweep's copy of a DRAM point leaves them to the `dram` list.
            bursts_Bps: threads.map_or_else(Vec::new, |_| self.bursts.clone()),
            bursts_line_s: threads.map_or_else(Vec::new, |_| self.burst_lines.clone()),
            isa: (self.isa != Isa::detect()).then(|| self.isa.name().into()),
        }
    }
}

/// One thread's region: room for every kernel's arrays at a working set
/// of `per_thread_bytes`, filled. Allocated by the thread that runs the
/// kernels on it, its pages are placed on that thread's NUMA node.
pub fn region(per_thread_bytes: u64, pages: Pages) -> Result<Region> {
    let mut r = Region::new(words_for_all(per_thread_bytes as usize) * 8, pages)?;
    r.f64s_mut().fill(1.0);
    Ok(r)
}

/// One [`region`] per thread of `team`, each allocated by its pinned
/// thread.
fn regions(team: &Team, per_thread_bytes: u64, pages: Pages) -> Result<Vec<Mutex<Region>>> {
    team.each(|_| region(per_thread_bytes, pages).map(Mutex::new))
        .into_iter()
        .collect::<Result<Vec<_>>>()
        .with_context(|| {
            format!(
                "allocating {} per thread",
                binary_bytes(per_thread_bytes as f64)
            )
        })
}

/// Measures `kernels` on every thread of `team`, each thread on its own
/// `per_thread_bytes` working set (placed on that thread's NUMA node).
pub fn measure_size(
    team: &Team,
    per_thread_bytes: u64,
    kernels: &[Kernel],
    pages: Pages,
    plan: &Plan,
) -> Result<Vec<KernelPoint>> {
    Regions::new(team, per_thread_bytes, pages)?.measure(team, kernels, plan)
}

/// Every thread's [`region`] at one working set, allocated once to be
/// measured again and again: a probe between another loop's timings.
pub struct Regions {
    regions: Vec<Mutex<Region>>,
    per_thread_bytes: u64,
}

impl Regions {
    /// A region of `per_thread_bytes` for each thread of `team`.
    pub fn new(team: &Team, per_thread_bytes: u64, pages: Pages) -> Result<Self> {
        Ok(Self {
            regions: regions(team, per_thread_bytes, pages)?,
            per_thread_bytes,
        })
    }

    /// [`measure_size`] on these regions, on the team that allocated them.
    pub fn measure(
        &self,
        team: &Team,
        kernels: &[Kernel],
        plan: &Plan,
    ) -> Result<Vec<KernelPoint>> {
        points_in(team, &self.regions, self.per_thread_bytes, kernels, plan)
    }
}

/// [`rates_in`] as one point per kernel.
fn points_in(
    team: &Team,
    regions: &[Mutex<Region>],
    per_thread_bytes: u64,
    kernels: &[Kernel],
    plan: &Plan,
) -> Result<Vec<KernelPoint>> {
    let isa = Isa::detect();
    let rates = rates_in(team, regions, per_thread_bytes, kernels, isa, plan)?;
    Ok(kernels
        .iter()
        .zip(rates)
        .map(|(&kernel, rates)| KernelPoint::new(kernel, per_thread_bytes, team, &rates, isa))
        .collect())
}

/// The per-timing bandwidths (B/s, STREAM counting) of each of `kernels`
/// built for `isa` on every thread of `team`, each thread on the first
/// `per_thread_bytes` of its region.
fn rates_in(
    team: &Team,
    regions: &[Mutex<Region>],
    per_thread_bytes: u64,
    kernels: &[Kernel],
    isa: Isa,
    plan: &Plan,
) -> Result<Vec<Sample>> {
    kernels
        .iter()
        .map(|&kernel| {
            let n = kernel.elems_for(per_thread_bytes as usize);
            let m = measure(plan, |inner, count| {
                team.time_batch(regions, inner, count, |r, sweeps| {
                    black_box(run(isa, kernel, r.f64s_mut(), n, sweeps));
                })
            })?;
            let bytes = kernel.bytes_per_elem() * n as f64 * team.threads() as f64;
            Ok(m.per_unit.map(|s| bytes / s)?)
        })
        .collect()
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
        let dram_total = ctx.dram_bytes(largest);
        let per_octave = if ctx.config.quick { 1 } else { 2 };
        let teams = ctx.teams();
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
        let kernels: &[Kernel] = if ctx.config.quick {
            &Kernel::DISTINCT_MIXES
        } else {
            &Kernel::ALL
        };
        let (sweeps, narrower) = sweep(ctx, &teams, &grids, kernels)?;
        let private = largest_private_cache(ctx, &caches, ctx.all.threads()) as u64;
        let base = base_page_sweeps(ctx, &teams, &grids, kernels, private)?;
        let restarts = measure_restarts(ctx, &teams, dram_total, ctx.octave_step())?;
        let mut cache_sizes: Vec<f64> = caches.iter().map(|c| c.1).collect();
        cache_sizes.sort_by(f64::total_cmp);
        let windows = if cache_sizes.first().is_some_and(|&b| b > 0.0) {
            measure_windows(ctx, dram_total, &cache_sizes, ctx.octave_step())?
        } else {
            Windows::default()
        };

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
                binary_bytes(dram_total as f64),
                binary_bytes(largest)
            ));
        }
        out.notes.extend(noisy_points_note(
            "STREAM sweep points",
            sweeps.iter().flatten().map(|p| &p.bandwidth),
        ));
        out.warnings.extend(bound_warnings(ctx, &sweeps));

        // Levels: caches from their plateaus, DRAM from its point; the
        // last cache as far as streaming sees it.
        let caches = edge::caches_with_edge(ctx, &mut out, caches, &sweeps[0], &dram);
        let mut levels = Vec::new();
        for (sweep, team) in sweeps.iter().zip(&teams) {
            levels.extend(plateaus(ctx, &caches, sweep, team.threads()));
        }
        memory_levels(ctx, &mut out, &caches, &levels, &dram);
        if let Some(l1) = levels.iter().find(|p| p.threads == 1) {
            let narrower = narrower_l1(ctx, &mut out, l1)?;
            levels.extend(narrower);
        }
        out.notes.extend(restarts.iter().filter(|r| r.segment_bytes == 4096.0).map(|r| {
            format!(
                "stream restarts: a thread of {} loses {} per run of 4 KiB, {} runs to a row (segmented copy of {} per thread against the contiguous one)",
                r.threads,
                models::units::Si(r.per_segment_s.point, "s"),
                r.runs_per_row,
                binary_bytes(r.per_thread_bytes)
            )
        }));
        out.notes.extend(windows.notes());
        let base_dram = base_page_dram(&base);
        out.notes.extend(base_page_note(&base_dram, &dram));
        out.notes.extend(narrower_note(&dram, &narrower));
        let dram_all: Vec<&KernelPoint> = dram.iter().copied().chain(&narrower).collect();
        let mut stream = section(
            dram_total, &sweeps, &teams, &levels, &dram_all, restarts, windows,
        );
        stream.base_pages = sweep_records(&base, &teams);
        out.section = Some(Section::Stream(stream));
        out.table = dram_table(ctx, &dram, &base_dram, dram_total);
        Ok(out)
    }
}
