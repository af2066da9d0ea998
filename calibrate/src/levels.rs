//! Memory levels detected from a latency-vs-working-set curve (lecture §2.4,
//! §2.6: the working-set curve has a plateau per level and a knee where a
//! working set stops fitting).
//!
//! # Method
//!
//! 1. x = log₂(working set), y = ln(latency). On these axes a plateau is a
//!    flat line and the step to the next level a jump or a steep ramp,
//!    whatever the absolute sizes and latencies. Isolated spikes (a point
//!    [`SPIKE_RATIO`]× off both neighbours, which agree) are left out: they
//!    are disturbances, and least squares would follow them.
//! 2. [`models::fit::segmented()`] fits independent lines (up to
//!    [`MAX_SEGMENTS`], at least 3 points each) with breakpoints placed
//!    exactly and their number chosen by classic BIC ([`BIC_PENALTY`]).
//! 3. A segment is a plateau when its slope is below [`FLAT_SLOPE`] (latency
//!    rising less than 25% per doubling of the working set) and its points
//!    scatter around it by less than [`MAX_PLATEAU_SCATTER`]; other
//!    segments are transitions. Both are judged robustly, on the Theil–Sen
//!    line (the median of the pairwise slopes) and the scaled median
//!    absolute deviation around it: one disturbed point at the end of a
//!    plateau (a neighbour sharing the core can take part of the L1 for a
//!    moment) tilts a least-squares line enough to lose the whole level.
//!    Since a robust line overlooks a minority of points, which may be a
//!    second level, at most one point in [`MAX_OFF_LEVEL_SHARE_INV`] may lie
//!    off that line by more than a factor [`SAME_LEVEL_RATIO`].
//! 4. Neighbouring plateaus whose median latencies differ by less than
//!    [`SAME_LEVEL_RATIO`] are one level, since two real levels differ by far
//!    more (L1→L2, L2→L3, L3→DRAM are each ≥ 2×); a plateau spanning less
//!    than [`MIN_PLATEAU_OCTAVES`] is a pause inside a step and is dropped.
//! 5. Every plateau but the last is a cache. Its capacity is where the
//!    curve, interpolated between measured points, crosses the geometric
//!    mean of its latency and the next level's (the geometric mean of the
//!    first and last crossing if disturbances make it cross several times):
//!    a cache with imperfect replacement starts to miss a little before its
//!    capacity and still hits a little after it, and the half-way point (in
//!    log latency) sits at the capacity whether the step is sharp or
//!    gradual. The last plateau is main memory if it reaches the end of the
//!    curve; a curve that still rises at its end has not reached DRAM.
//! 6. When the OS reports the data caches and the curve shows more caches
//!    than that, a step that matches no reported size is not a level: on
//!    the Zen 4 VM (32 KiB, 1 MiB, 32 MiB reported) one curve held a
//!    plateau of 3.8 ns up to 256 KiB, then rose gently to 6 ns at 1 MiB,
//!    which the fit took for a level of its own, with a step at 340 kB.
//!    Such a step (more than [`UNREPORTED_FACTOR`] from every reported
//!    size, and below the largest) is dropped and its plateau joined to
//!    the next one, the farthest first, until the counts agree or none is
//!    left. The last cache's step (to DRAM, or to the unfinished end)
//!    always stays, a step beyond every reported cache stays (the OS may
//!    not report them all), and fewer caches than reported are left alone:
//!    a level the curve does not show is not made up (the OS may report
//!    the host's cache: 260 MB of L3 on the Xeon VM, whose curve shows
//!    none).
//!
//! A level's latency is the median of the measured latencies on its plateau,
//! with the distribution-free 95% interval of `models::stats`.

use models::fit::{segmented, FitError, SegmentFit, SegmentedFit, SegmentedOptions};
use models::stats::{median, Sample};
use models::Estimate;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Largest number of line segments the fit may use (4 plateaus and the 3
/// transitions between them, plus one spare).
pub const MAX_SEGMENTS: usize = 8;
/// Factor on the BIC penalty of the segmented fit: 1, classic BIC. A
/// stricter criterion can take a noisy staircase of 30 points for one
/// line; splitting a plateau too often costs nothing here, because
/// neighbouring plateaus at the same latency are merged (step 4).
pub const BIC_PENALTY: f64 = 1.0;
/// Largest slope of ln(latency) per doubling of the working set for a flat
/// segment: ln(1.25). A shared last-level cache on a busy host rises by up to
/// ~15% per doubling; the steps between levels rise by 60% or more.
pub const FLAT_SLOPE: f64 = 0.223;
/// Largest residual standard error, in ln(latency), of a plateau's line
/// (about ±15%): a flat line through points that zigzag more than that is
/// not a level but a disturbed stretch of curve.
pub const MAX_PLATEAU_SCATTER: f64 = 0.15;
/// Shortest plateau, in octaves of working set from its first point to its
/// last: each cache is at least twice the size of the one before, so its
/// plateau spans an octave or more.
pub const MIN_PLATEAU_OCTAVES: f64 = 1.0;
/// A point this many times above (or below) both of its neighbours is an
/// isolated spike and is left out.
pub const SPIKE_RATIO: f64 = 2.0;
/// Plateaus whose latencies differ by less than this factor are one level.
pub const SAME_LEVEL_RATIO: f64 = 1.3;
/// A plateau may hold one point in this many (and one point in any case)
/// off its line by more than a factor [`SAME_LEVEL_RATIO`]: disturbances
/// are isolated, a second level is not.
pub const MAX_OFF_LEVEL_SHARE_INV: usize = 5;

/// A step further than this factor from every cache size the OS reports
/// matches none of them (step 6): detected capacities land within it of
/// the real ones (the half-way crossing sits at the capacity).
pub const UNREPORTED_FACTOR: f64 = 2.0;

/// One measured point of the curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Working set, bytes.
    pub size_bytes: f64,
    /// Latency per access, seconds.
    pub latency_s: f64,
}

/// A plateau of the curve: one cache level, or main memory, as the
/// profile's latency section records it. `noisy` is set from
/// `models::stats`' criteria (CV or outliers); callers that know more (the
/// latency benchmark) may set it by their own.
pub use models::profile::latency::Plateau;

/// The levels of one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    /// Cache levels, nearest first.
    pub caches: Vec<Plateau>,
    /// Main memory, when the curve reaches its plateau.
    pub dram: Option<Plateau>,
    /// The segmented fit on (log₂ bytes, ln seconds), spikes left out.
    pub fit: SegmentedFit,
    /// Working sets of the isolated spikes left out of the fit.
    pub spikes_bytes: Vec<f64>,
    /// Capacities of the steps dropped because the OS reports fewer
    /// caches (step 6 of the [module docs](self)).
    #[serde(default)]
    pub unreported_steps_bytes: Vec<f64>,
}

impl Detection {
    /// Capacity of the largest detected cache, bytes.
    pub fn largest_cache(&self) -> Option<f64> {
        self.caches
            .iter()
            .filter_map(|c| c.size_bytes)
            .reduce(f64::max)
    }

    /// Caches then DRAM.
    pub fn all(&self) -> impl Iterator<Item = &Plateau> {
        self.caches.iter().chain(self.dram.iter())
    }
}

/// Why no levels could be read from a curve.
#[derive(Debug, Error, PartialEq)]
pub enum DetectError {
    #[error(
        "the latency curve has {0} points; level detection needs at least 6 (measure more sizes)"
    )]
    /// Fewer than 6 points (the count).
    TooFewPoints(usize),
    #[error("latency at {0} bytes is not a positive number")]
    /// A latency that is not a positive number (at this size).
    BadPoint(f64),
    #[error("the latency curve shows a single plateau: no cache level can be told from memory (extend the sizes past the last-level cache)")]
    /// No cache level can be told apart.
    NoTransition,
    #[error("segmented fit of the latency curve failed: {0}")]
    /// The segmented fit refused the curve.
    Fit(#[from] FitError),
}

/// The capacity of a level whose plateau ends before point `end` (sorted
/// points) and whose successor's plateau starts at point `next_start`:
/// where the curve, interpolated linearly in (log₂ size, ln latency),
/// crosses the geometric mean √(L·L') of this level's latency L and the
/// next one's L'. When disturbed points make the curve cross more than once,
/// the geometric mean of the first and the last crossing. Without a next
/// plateau (the curve still rises), the midpoint in log₂ between the
/// plateau's last point and the next point.
fn capacity(pts: &[Point], end: usize, next: Option<(f64, f64, usize)>) -> f64 {
    let last = pts[end - 1].size_bytes.log2();
    let midpoint = || 2f64.powf(0.5 * (last + pts.get(end).map_or(last, |p| p.size_bytes.log2())));
    let Some((here, next_latency, next_start)) = next else {
        return midpoint();
    };
    let target = (here * next_latency).sqrt().ln();
    let cross = |j: usize| {
        let (a, b) = (&pts[j - 1], &pts[j]);
        let (ya, yb) = (a.latency_s.ln(), b.latency_s.ln());
        let f = if yb > ya {
            ((target - ya) / (yb - ya)).clamp(0.0, 1.0)
        } else {
            0.5
        };
        let (xa, xb) = (a.size_bytes.log2(), b.size_bytes.log2());
        xa + f * (xb - xa)
    };
    let up = |j: &usize| pts[*j - 1].latency_s.ln() < target && pts[*j].latency_s.ln() >= target;
    let range = end..=next_start.min(pts.len() - 1);
    match (range.clone().find(up), range.rev().find(up)) {
        (Some(first), Some(last)) => 2f64.powf(0.5 * (cross(first) + cross(last))),
        _ => midpoint(),
    }
}

/// Indices (into `sorted`) of isolated spikes: interior points whose latency
/// is more than [`SPIKE_RATIO`] away (above or below) from both neighbours
/// while the neighbours agree within [`SAME_LEVEL_RATIO`]. Such a point is a
/// disturbance of the machine, not a level, and least squares would follow it.
fn spikes(sorted: &[Point]) -> Vec<usize> {
    (1..sorted.len().saturating_sub(1))
        .filter(|&i| {
            let (a, y, b) = (
                sorted[i - 1].latency_s,
                sorted[i].latency_s,
                sorted[i + 1].latency_s,
            );
            let agree = a.max(b) < SAME_LEVEL_RATIO * a.min(b);
            agree && (y > SPIKE_RATIO * a.max(b) || y * SPIKE_RATIO < a.min(b))
        })
        .collect()
}

/// `points` sorted by size, checked, with the isolated spikes taken out
/// (and their sizes).
fn without_spikes(points: &[Point]) -> Result<(Vec<Point>, Vec<f64>), DetectError> {
    if points.len() < 6 {
        return Err(DetectError::TooFewPoints(points.len()));
    }
    let mut pts = points.to_vec();
    pts.sort_by(|a, b| a.size_bytes.total_cmp(&b.size_bytes));
    if let Some(p) = pts
        .iter()
        .find(|p| !(p.latency_s > 0.0 && p.latency_s.is_finite() && p.size_bytes > 0.0))
    {
        return Err(DetectError::BadPoint(p.size_bytes));
    }
    let spikes = spikes(&pts);
    let spikes_bytes: Vec<f64> = spikes.iter().map(|&i| pts[i].size_bytes).collect();
    let pts: Vec<Point> = pts
        .iter()
        .enumerate()
        .filter(|(i, _)| !spikes.contains(i))
        .map(|(_, p)| *p)
        .collect();
    Ok((pts, spikes_bytes))
}

/// Whether `pts` (sorted by size) lie on a flat line in (log₂ size,
/// ln latency): the Theil–Sen slope within [`FLAT_SLOPE`], the scaled
/// median absolute deviation of the residuals (1.4826 × MAD, σ for normal
/// scatter) within [`MAX_PLATEAU_SCATTER`], and at most one point in
/// [`MAX_OFF_LEVEL_SHARE_INV`] (at least one) off that line by more than a
/// factor [`SAME_LEVEL_RATIO`].
fn is_flat(pts: &[Point]) -> bool {
    let xy: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (p.size_bytes.log2(), p.latency_s.ln()))
        .collect();
    let slopes: Vec<f64> = xy
        .iter()
        .enumerate()
        .flat_map(|(i, a)| xy[i + 1..].iter().map(move |b| (b.1 - a.1) / (b.0 - a.0)))
        .filter(|s| s.is_finite())
        .collect();
    if slopes.is_empty() {
        return true;
    }
    let slope = median(slopes);
    let residuals: Vec<f64> = xy.iter().map(|(x, y)| y - slope * x).collect();
    let centre = median(residuals.clone());
    let mad = median(residuals.iter().map(|r| (r - centre).abs()).collect());
    // A robust line overlooks up to half of the points, and so a second
    // level inside the segment: only disturbances, which are isolated, may
    // lie off the line.
    let off = residuals
        .iter()
        .filter(|r| (*r - centre).abs() > SAME_LEVEL_RATIO.ln())
        .count();
    slope.abs() <= FLAT_SLOPE
        && 1.4826 * mad <= MAX_PLATEAU_SCATTER
        && off * MAX_OFF_LEVEL_SHARE_INV <= xy.len().max(MAX_OFF_LEVEL_SHARE_INV)
}

/// The median latency of the points `r` (an index range).
fn median_latency(pts: &[Point], r: &(usize, usize)) -> f64 {
    median(pts[r.0..r.1].iter().map(|p| p.latency_s).collect())
}

/// The plateaus of the fit, as index ranges into the sorted points: its
/// flat segments, neighbours at about the same latency merged into one
/// level (noise, a TLB step), short ones dropped.
fn plateau_ranges(fit: &SegmentedFit, pts: &[Point]) -> Vec<(usize, usize)> {
    let runs = fit.segments.iter().filter(|seg| match &seg.fit {
        SegmentFit::Line(_) => is_flat(&pts[seg.start..seg.end]),
        SegmentFit::Constant(_) => true,
    });
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for seg in runs {
        let r = (seg.start, seg.end);
        match merged.last_mut() {
            Some(last)
                if median_latency(pts, &r) < SAME_LEVEL_RATIO * median_latency(pts, last) =>
            {
                last.1 = r.1
            }
            _ => merged.push(r),
        }
    }
    // A level's plateau runs from about twice the previous capacity to its
    // own: a short flat stretch is a pause inside a step, not a level.
    merged.retain(|r| {
        pts[r.1 - 1].size_bytes.log2() - pts[r.0].size_bytes.log2() >= MIN_PLATEAU_OCTAVES
    });
    merged
}

/// The step after plateau `i` of `merged`, which has a next one: its
/// [`capacity`].
fn step_bytes(pts: &[Point], merged: &[(usize, usize)], i: usize) -> f64 {
    let (here, next) = (merged[i], merged[i + 1]);
    let latencies = (median_latency(pts, &here), median_latency(pts, &next));
    capacity(pts, here.1, Some((latencies.0, latencies.1, next.0)))
}

/// Joins plateaus while the caches among them (all but a last one that
/// reaches DRAM) are more than the `reported` sizes: each time the step
/// between two caches that matches no reported size and is farthest from
/// them in log₂ size goes (step 6 of the [module docs](self)). Returns the
/// plateaus and the sizes of the steps dropped.
fn join_unreported(
    pts: &[Point],
    mut merged: Vec<(usize, usize)>,
    reaches_end: bool,
    reported: &[f64],
) -> (Vec<(usize, usize)>, Vec<f64>) {
    let miss = |size: f64| {
        reported
            .iter()
            .map(|r| (size / r).log2().abs())
            .fold(f64::INFINITY, f64::min)
    };
    let largest = reported.iter().copied().fold(0.0, f64::max);
    let mut dropped = Vec::new();
    loop {
        let caches = merged.len() - usize::from(reaches_end);
        if caches <= reported.len() {
            return (merged, dropped);
        }
        let worst = (0..caches - 1)
            .map(|i| (i, step_bytes(pts, &merged, i)))
            .filter(|&(_, size)| size < largest && miss(size) > UNREPORTED_FACTOR.log2())
            .max_by(|a, b| miss(a.1).total_cmp(&miss(b.1)));
        let Some((i, size)) = worst else {
            return (merged, dropped);
        };
        merged[i].1 = merged[i + 1].1;
        merged.remove(i + 1);
        dropped.push(size);
    }
}

/// Detects the levels of `points` (any order); see the [module docs](self).
/// `reported`: the sizes of the data caches the OS reports (empty when
/// unknown), which only ever remove a step (step 6).
pub fn detect(points: &[Point], reported: &[f64]) -> Result<Detection, DetectError> {
    let (pts, spikes_bytes) = without_spikes(points)?;
    let x: Vec<f64> = pts.iter().map(|p| p.size_bytes.log2()).collect();
    let y: Vec<f64> = pts.iter().map(|p| p.latency_s.ln()).collect();
    let max_segments = MAX_SEGMENTS.min(pts.len() / 3).max(1);
    let options = SegmentedOptions {
        penalty: BIC_PENALTY,
        ..SegmentedOptions::lines(max_segments)
    };
    let fit = segmented(&x, &y, None, &options)?;

    let median_of = |r: &(usize, usize)| median_latency(&pts, r);
    let merged = plateau_ranges(&fit, &pts);
    if merged.len() < 2 && !(merged.len() == 1 && merged[0].1 < pts.len()) {
        return Err(DetectError::NoTransition);
    }

    let reaches_end = merged.last().is_some_and(|r| r.1 == pts.len());
    let (merged, unreported_steps_bytes) = join_unreported(&pts, merged, reaches_end, reported);
    let n_caches = if reaches_end {
        merged.len() - 1
    } else {
        merged.len()
    };
    let medians: Vec<f64> = merged.iter().map(median_of).collect();
    let plateau = |i: usize, name: String, is_cache: bool| -> Plateau {
        let r = merged[i];
        let lat: Vec<f64> = pts[r.0..r.1].iter().map(|p| p.latency_s).collect();
        let summary = Sample::new(lat.clone()).ok().map(|s| s.summary());
        let next = merged.get(i + 1).map(|n| (medians[i], medians[i + 1], n.0));
        let size_bytes = is_cache.then(|| capacity(&pts, r.1, next));
        Plateau {
            name,
            from_bytes: pts[r.0].size_bytes,
            to_bytes: pts[r.1 - 1].size_bytes,
            size_bytes,
            latency_s: summary
                .as_ref()
                .map_or(Estimate::exact(lat[0]), |s| s.estimate()),
            noisy: summary.is_some_and(|s| s.noisy),
            points: r.1 - r.0,
        }
    };
    let caches = (0..n_caches)
        .map(|i| plateau(i, format!("L{}", i + 1), true))
        .collect();
    let dram = reaches_end.then(|| plateau(merged.len() - 1, "DRAM".into(), false));
    Ok(Detection {
        caches,
        dram,
        fit,
        spikes_bytes,
        unreported_steps_bytes,
    })
}

#[cfg(test)]
mod tests;
