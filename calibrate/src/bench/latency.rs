//! Latency per memory level: a pointer chase over a random cyclic
//! permutation, one pointer per cache line, on one pinned thread
//! (lecture §2.1, §2.4).
//!
//! latency = t / steps for `steps` dependent loads; cycles = latency × clock.
//!
//! # Sweep
//!
//! Working sets lie on a grid of 4 points per octave from 4 KiB. The sweep
//! first takes every other grid point (2 per octave; with `--quick`, every
//! fourth: 1 per octave) up to 128 MiB, detects the levels
//! ([`crate::levels`]), extends to the DRAM working set max(128 MiB, 8 × the
//! largest detected cache, 2 × the largest cache the OS reports) — further,
//! by the same steps, 2 octaves at most, while the curve still rises — all
//! capped by the memory budget (and, with `--quick`, at 512 MiB), and then
//! measures the grid (4 per octave) within an octave of each detected cache
//! size and of each breakpoint of the curve's fit again, in one pass, so
//! that the points of each step see the machine in one state. The coarse
//! first pass only has to find the levels, which the refinement then
//! resolves; on a VM its largest working sets cost more in the host's page
//! faults than in chasing (a fresh 512 MiB of huge pages takes seconds), so
//! `--quick` halves them.
//!
//! Each size is measured with 4 KiB pages and with huge pages (`madvise`).
//! The levels are found on the fastest timing of each size over both
//! policies (interference only adds time), and each level's latency is the
//! median, over its plateau, of the capability estimates (low quantiles of
//! the clean timings, `models::stats::capability`) of the huge-page curve when the
//! kernel granted huge pages (no TLB steps), else of the 4 KiB curve. The TLB's part of the DRAM
//! latency is latency(4 KiB pages) − latency(huge pages) at the DRAM
//! working set.
//!
//! # Section `latency`
//!
//! ```json
//! {
//!   "line_bytes": 64,
//!   "detection_pages": "2MiB",
//!   "dram_bytes": 268435456,
//!   "reached_dram_plateau": true,
//!   "clock_hz": 3.2e9,
//!   "points": [ { "size_bytes": 4096, "pages": "4KiB", "huge_page_bytes": 0,
//!                 "latency_s": {"median": .., "ci_lo": .., "ci_hi": .., "cv": .., "n": .., "outliers_low": .., "outliers_high": .., "noisy": ..},
//!                 "latency_cycles": 4.0 }, ... ],
//!   "levels": [ { "name": "L1", "from_bytes": .., "to_bytes": .., "size_bytes": ..,
//!                 "latency_s": {"point": .., "lo": .., "hi": ..}, "noisy": false, "points": 5 }, ... ],
//!   "breakpoints_bytes": [ .. ],        // of the segmented fit
//!   "spikes_bytes": [ .. ],             // isolated spikes left out of the fit
//!   "tlb_s": {"point": .., "lo": .., "hi": ..}   // null without both page sizes
//! }
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use indicatif::ProgressBar;
use models::stats::{Better, Sample, Summary as Stats};
use models::units::binary_bytes;
use models::Estimate;

use super::{Bench, Context, Outcome};
use crate::config::{working_set_cap, DRAM_MIN_BYTES};
use crate::kernels::chase::ChaseBuffer;
use crate::levels::{detect, Detection, Point};
use crate::mem::Pages;
use crate::pin::Team;
use crate::timer::{measure, serial, Plan};

mod outcome;
use outcome::outcome;

/// Smallest working set of the sweep, bytes.
pub const FIRST_BYTES: u64 = 4096;
/// Grid points per octave (the sweep starts with every other one, or
/// every fourth with `--quick`).
pub const GRID_PER_OCTAVE: u32 = 4;
/// A level whose median latency exceeds this multiple of its fastest
/// timings was disturbed by other work on the machine (flagged).
pub const DISTURBED_RATIO: f64 = 1.25;
/// Grid points the sweep may go past the DRAM working set while the curve
/// still rises (2 octaves), memory budget permitting: beyond that the rise
/// is the TLB's (page walks grow with the working set), not a cache's.
const MAX_EXTRA_GRID: u32 = 2 * GRID_PER_OCTAVE;
/// Longest warm-up walk before timing a chase.
const WARMUP_LIMIT: Duration = Duration::from_millis(3);

/// The pointer-chase benchmark.
pub struct Latency;

/// One measured working set and page policy.
#[derive(Debug, Clone)]
pub struct ChasePoint {
    /// Working set, bytes (whole lines).
    pub size_bytes: u64,
    /// Page policy of the buffer.
    pub pages: Pages,
    /// Seconds per dependent load.
    pub latency: Stats,
    /// Bytes the kernel backed with huge pages.
    pub huge_page_bytes: Option<u64>,
}

/// Times a chase over `size` bytes on the (single) thread of `team`.
pub fn measure_chase(
    team: &Team,
    size: u64,
    line: usize,
    pages: Pages,
    plan: &Plan,
) -> Result<ChasePoint> {
    let mut r = team.each(|_| -> Result<ChasePoint> {
        let buf = ChaseBuffer::new(size as usize, line, pages, size)?;
        let huge_page_bytes = buf.region().huge_page_bytes();
        let mut p = buf.line(0);
        // Warm-up: walk the cycle once, or for a few ms if it is long.
        let t0 = Instant::now();
        let mut walked = 0;
        while walked < buf.lines() && t0.elapsed() < WARMUP_LIMIT {
            p = buf.chase(p, 4096);
            walked += 4096;
        }
        let m = measure(plan, serial(|steps| p = buf.chase(p, steps)))?;
        Ok(ChasePoint {
            size_bytes: buf.bytes() as u64,
            pages,
            latency: m.per_unit.summary(),
            huge_page_bytes,
        })
    });
    r.swap_remove(0)
}

/// The size of grid point `k`: 4 KiB · 2^(k/4), rounded to whole lines.
fn grid_size(k: u32, line: u64) -> u64 {
    let s = (FIRST_BYTES as f64 * 2f64.powf(k as f64 / GRID_PER_OCTAVE as f64)).round() as u64;
    (s / line).max(2) * line
}

/// The grid index of the largest grid size ≤ `bytes`.
fn grid_floor(bytes: u64, line: u64) -> u32 {
    let mut k = 0;
    while grid_size(k + 1, line) <= bytes {
        k += 1;
    }
    k
}

/// A finished sweep.
pub struct Sweep {
    /// All points, by size then page policy.
    pub points: Vec<ChasePoint>,
    /// Levels detected on the `detect_pages` curve.
    pub detection: Detection,
    /// The page policy whose points the levels' latencies report.
    pub detect_pages: Pages,
    /// The DRAM working set (a measured size).
    pub dram_bytes: u64,
    /// Whether the memory budget (or `--quick`'s cap) stopped the sweep
    /// before the curve reached its DRAM plateau.
    pub budget_stop: bool,
}

impl Sweep {
    /// The point at `size` with `pages`.
    pub fn point(&self, size: u64, pages: Pages) -> Option<&ChasePoint> {
        self.points
            .iter()
            .find(|p| p.size_bytes == size && p.pages == pages)
    }
}

/// The measured grid points of a sweep in progress, by grid index.
struct Walk<'a> {
    ctx: &'a Context,
    policies: &'a [Pages],
    plan: &'a Plan,
    bar: &'a ProgressBar,
    line: u64,
    /// Grid points between two points of the first pass.
    stride: u32,
    done: BTreeMap<u32, Vec<ChasePoint>>,
}

impl Walk<'_> {
    /// Measures grid point `k` with every page policy, unless done.
    fn run(&mut self, k: u32) -> Result<()> {
        if self.done.contains_key(&k) {
            return Ok(());
        }
        let size = grid_size(k, self.line);
        self.bar.set_message(binary_bytes(size as f64));
        let mut v = Vec::new();
        // The curve has dozens of points, pooled per level: none is
        // re-measured (their disturbed timings are still set aside).
        for &pages in self.policies {
            let p = self.plan.without_retry();
            v.push(measure_chase(
                &self.ctx.one,
                size,
                self.line as usize,
                pages,
                &p,
            )?);
        }
        self.bar.inc(1);
        self.done.insert(k, v);
        Ok(())
    }

    /// The grid indices within an octave of each detected cache size and
    /// of each breakpoint of the fit, up to `k_max`. A breakpoint that is no
    /// level's edge is a stretch of curve a disturbance bent (a neighbour
    /// sharing the core can halve the L1 for a moment, and the first
    /// plateau is then lost); measured again, it shows the level or nothing.
    fn window(&self, det: Option<&Detection>, k_max: u32) -> Vec<u32> {
        let mut window = Vec::new();
        let edges = det.into_iter().flat_map(|d| {
            let caches = d.caches.iter().filter_map(|c| c.size_bytes);
            caches.chain(d.fit.breakpoints.iter().map(|b| b.exp2()))
        });
        for c in edges {
            let lo = grid_floor((c / 2.0) as u64, self.line);
            let hi = grid_floor((c * 2.0) as u64, self.line).min(k_max);
            window.extend(lo..=hi);
        }
        window.sort();
        window.dedup();
        window
    }

    /// Extends to the DRAM working set, and on while the curve still
    /// rises; then refines near the levels (when `refine`), and extends
    /// again if that changed them. Returns the last detection, the last
    /// grid index and whether the budget stopped the extension.
    fn extend(
        &mut self,
        detect_pages: Pages,
        refine: bool,
        budget: u64,
    ) -> Result<(Result<Detection>, u32, bool)> {
        // Intermediate detections may fail on a partial curve; only the
        // last one must succeed.
        let mut detection = detect_on(&self.done, detect_pages, &self.ctx.sys.data_cache_sizes());
        let mut k_max = *self.done.keys().last().expect("at least one point");
        let mut extra = 0;
        let mut refined = !refine;
        loop {
            let det = detection.as_ref().ok();
            let largest = det.and_then(|d| d.largest_cache()).unwrap_or(0.0);
            let want = grid_floor(self.ctx.dram_bytes(largest), self.line);
            let next = k_max + self.stride;
            let beyond = k_max >= want;
            let reached = det.is_some_and(|d| d.dram.is_some());
            let budget_stop = grid_size(next, self.line) > budget;
            if !budget_stop && (!beyond || (!reached && extra < MAX_EXTRA_GRID)) {
                extra += if beyond { self.stride } else { 0 };
                self.bar.inc_length(1);
                self.run(next)?;
                k_max = next;
                detection = detect_on(&self.done, detect_pages, &self.ctx.sys.data_cache_sizes());
                continue;
            }
            if refined {
                return Ok((detection, k_max, budget_stop));
            }
            refined = true;
            // The whole window around each level is measured again in one
            // pass, so that neighbouring points see the machine in the same
            // state (on a shared host the caches' usable size drifts). A
            // curve no level could be read from is measured again whole:
            // on the Zen 4 VM one `--quick` run in six lost its L1 plateau
            // and every cache step to a disturbance, leaving one plateau.
            let window = match det {
                Some(_) => self.window(det, k_max),
                None => self.done.range(..=k_max).map(|(&k, _)| k).collect(),
            };
            self.bar.inc_length(window.len() as u64);
            for k in window {
                self.done.remove(&k);
                self.run(k)?;
            }
            detection = detect_on(&self.done, detect_pages, &self.ctx.sys.data_cache_sizes());
        }
    }
}

/// Runs the adaptive sweep (see the module docs) with the given page
/// policies; `refine` adds the 4-per-octave points near each level.
pub fn sweep(
    ctx: &Context,
    policies: &[Pages],
    plan: &Plan,
    refine: bool,
    bar: &ProgressBar,
) -> Result<Sweep> {
    let line = ctx.sys.line_bytes as u64;
    // `--quick` stops where its DRAM working sets stop, even while the
    // curve still rises.
    let budget = working_set_cap(ctx.config.budget_bytes, ctx.config.quick);
    let mut walk = Walk {
        ctx,
        policies,
        plan,
        bar,
        line,
        stride: if ctx.config.quick { GRID_PER_OCTAVE } else { 2 },
        done: BTreeMap::new(),
    };
    let first_max = grid_floor(DRAM_MIN_BYTES.min(budget), line);
    bar.set_length((first_max / walk.stride + 1) as u64);
    for k in (0..=first_max).step_by(walk.stride as usize) {
        walk.run(k)?;
    }
    let detect_pages = choose_detection_pages(&walk.done, policies);
    let (detection, k_max, budget_stop) = walk.extend(detect_pages, refine, budget)?;
    let detection = detection?;
    let done = walk.done;
    let dram_k = if detection.dram.is_some() {
        let target = grid_floor(
            ctx.dram_bytes(detection.largest_cache().unwrap_or(0.0)),
            line,
        );
        *done
            .range(..=target.min(k_max))
            .next_back()
            .expect("measured")
            .0
    } else {
        k_max
    };
    Ok(Sweep {
        budget_stop: budget_stop && detection.dram.is_none(),
        dram_bytes: grid_size(dram_k, line),
        points: done.into_values().flatten().collect(),
        detection,
        detect_pages,
    })
}

/// Huge pages when asked for and granted for most of the large working sets.
fn choose_detection_pages(done: &BTreeMap<u32, Vec<ChasePoint>>, policies: &[Pages]) -> Pages {
    if !policies.contains(&Pages::Huge) {
        return Pages::Small;
    }
    let large: Vec<&ChasePoint> = done
        .values()
        .flatten()
        .filter(|p| p.pages == Pages::Huge && p.size_bytes >= 4 << 20)
        .collect();
    let granted = large
        .iter()
        .filter(|p| p.huge_page_bytes.unwrap_or(0) * 2 >= p.size_bytes)
        .count();
    if !large.is_empty() && granted * 2 >= large.len() || !policies.contains(&Pages::Small) {
        Pages::Huge
    } else {
        Pages::Small
    }
}

/// Detects the levels on the fastest timing of each size over all page
/// policies measured (interference and TLB misses only ever add time, so
/// this curve is the cleanest view of the hierarchy), then reports each
/// level's latency as the median, over the sizes on its plateau, of the
/// `pages` curve's capability estimates (low quantiles of the clean
/// timings; with its 95% interval).
/// `reported`: the data caches' sizes the OS reports ([`crate::levels::detect`]).
fn detect_on(
    done: &BTreeMap<u32, Vec<ChasePoint>>,
    pages: Pages,
    reported: &[f64],
) -> Result<Detection> {
    let fastest: Vec<Point> = done
        .values()
        .filter_map(|v| {
            let size = v.first()?.size_bytes as f64;
            let min = v.iter().map(|p| p.latency.min).reduce(f64::min)?;
            Some(Point {
                size_bytes: size,
                latency_s: min,
            })
        })
        .collect();
    let mut d =
        detect(&fastest, reported).context("detecting the memory levels from the latency curve")?;
    let medians: Vec<(f64, f64)> = done
        .values()
        .flatten()
        .filter(|p| p.pages == pages)
        .map(|p| (p.size_bytes as f64, best(&p.latency)))
        .collect();
    for level in d.caches.iter_mut().chain(d.dram.iter_mut()) {
        let on: Vec<f64> = medians
            .iter()
            .filter(|(s, _)| *s >= level.from_bytes && *s <= level.to_bytes)
            .map(|m| m.1)
            .collect();
        let fastest = level.latency_s.point;
        match Sample::new(on.clone()) {
            Ok(sample) => level.latency_s = sample.summary().estimate(),
            Err(_) => {
                if let Some(&v) = on.first() {
                    level.latency_s = Estimate::exact(v);
                }
            }
        }
        level.noisy = level.latency_s.point > DISTURBED_RATIO * fastest;
    }
    Ok(d)
}

impl Bench for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }

    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let bar = ctx.progress.bar("latency", 0);
        let sw = sweep(ctx, &Pages::BOTH, &ctx.config.plan, true, &bar)?;
        bar.finish_and_clear();
        Ok(outcome(ctx, &sw))
    }
}

/// Detects the levels quickly (huge pages only, quick plan, no refinement)
/// when a benchmark needs them and neither this run nor an existing profile
/// has them.
pub fn probe(ctx: &Context) -> Result<Sweep> {
    let bar = ctx.progress.bar("levels", 0);
    let sw = sweep(ctx, &[Pages::Huge], &Plan::quick(), false, &bar);
    bar.finish_and_clear();
    sw
}

/// The capability estimate of a latency sample (its low quantile).
fn best(s: &Stats) -> f64 {
    s.capability(Better::Lower).point
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_sizes() {
        assert_eq!(grid_size(0, 64), 4096);
        assert_eq!(grid_size(4, 64), 8192);
        assert_eq!(grid_size(40, 64), 4 << 20);
        assert_eq!(grid_floor(64 << 20, 64), 56);
        assert_eq!(grid_floor(100 << 20, 64), 58);
        assert!(grid_size(1, 64).is_multiple_of(64));
    }
}
