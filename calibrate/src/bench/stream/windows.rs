//! What a read of lines brought in before costs while a loop's streams
//! come from DRAM: STREAM's copy at the DRAM working set that reads its
//! source again two lags behind ([`crate::kernels::lagged`]) against the
//! plain copy of the same arrays, on one thread. Per byte read again,
//!
//! t_window(W) = (t_lagged(W) − t_copy) / (2·8·(n − 2d)), W = 4·d·8,
//!
//! both times the capability estimates of their clean timings, each
//! lagged copy timed in [`PAIRS`] pairs right after a plain one (the
//! median of the differences, their range as the interval), as the
//! restarts are. The windows run an octave apart (two with `--quick`)
//! from twice the first cache to half the last, so each cache beyond L1
//! holds some of them.
//!
//! It is one core's figure: the model adds it to the core's own time
//! (ECM), which the shared memory system bounds apart. On the Zen 4 VM a
//! window in L2 costs 2–3 times the L2 load kernel's time per byte while
//! the copy streams from DRAM, and less once the window is in L3.
//!
//! The same pairs with a window of a quarter of L1 ([`l1_window`]) beside
//! one thread's copy at half of each cache beyond L1 and at DRAM
//! ([`reread_streams`]) give what a read of lines L1 holds costs while
//! the streams come from each level: the part of the loads' port time the
//! core does not overlap with its line transfers. ECM adds all of it on
//! Intel's older cores and none on AMD's; a core that overlaps part of it
//! reads in between. On the Xeon VM (family 6, model 207) the two rereads
//! of each element cost 0.0–2.8 ps per byte beside copies from L2 and L3
//! in the five profiles of a run (0.0–5.5 beside DRAM), against the 4.6 ps
//! of its AVX2 L1 load kernel's rate.
//!
//! How the two bounds combine is measured with the same pairs on all
//! threads, each thread on its share of the DRAM working set, right after
//! the one-thread pair: the lagged copy is a loop with in-core work beside
//! its streams, so its time on all threads against its time on one, the
//! copy's on one and the copy's on all gives the knee's exponent
//! ([`models::saturation`]). On the Zen 4 VM, with the host's two-thread
//! DRAM copy at 57 GB/s, the lagged copy with its window in L2 took
//! 0.94–1.05 ns per element and thread on two threads, 0.81–0.86 on one,
//! and the copies 0.82–0.91 and 0.41–0.54: 12–15% beyond the larger
//! bound.

use std::hint::black_box;
use std::sync::Mutex;

use anyhow::Result;
use models::profile::stream::{KneePoint, StreamKnee, StreamWindow};
use models::saturation::fit_exponent;
use models::stats::Better;
use models::units::{binary_bytes, Si};

use super::pairs::{median_range, PAIRS};
use super::regions;
use crate::bench::{size_grid, Context};
use crate::kernels::lagged::{copy_lagged, lag_for, reread_bytes, window_bytes};
use crate::kernels::stream::Kernel;
use crate::kernels::Isa;
use crate::mem::{Pages, Region};
use crate::pin::Team;
use crate::timer::measure;

/// Kept timings per measurement (each a whole DRAM-sized copy).
pub const REPS: usize = 5;

/// The window curve on one thread, the knee from the same copies on all
/// threads, and the L1 window beside streams from each level.
#[derive(Debug, Default)]
pub struct Windows {
    pub curve: Vec<StreamWindow>,
    pub knee: Option<StreamKnee>,
    pub l1_rereads: Vec<StreamWindow>,
}

impl Windows {
    /// One note per curve measured: the DRAM windows (bytes per second of
    /// the added time), the L1 window beside each level (seconds per
    /// byte) and the knee.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let listed = |points: &[StreamWindow], each: &dyn Fn(&StreamWindow) -> String| {
            points.iter().map(each).collect::<Vec<_>>().join(", ")
        };
        if !self.curve.is_empty() {
            notes.push(format!(
                "stream windows: one thread reads lines again from a reuse window, beside its copy from DRAM, at {} (window, bytes per second of the added time)",
                listed(&self.curve, &|w| {
                    let rate = match w.per_byte_s.point {
                        t if t > 0.0 => Si(1.0 / t, "B/s").to_string(),
                        _ => "no added time".into(),
                    };
                    format!("{} {rate}", binary_bytes(w.window_bytes))
                })
            ));
        }
        if let Some(first) = self.l1_rereads.first() {
            notes.push(format!(
                "stream L1 rereads: one thread reads lines again from a {} window in L1 beside its copy of {} (streams per thread, seconds per byte of the added time)",
                binary_bytes(first.window_bytes),
                listed(&self.l1_rereads, &|w| format!(
                    "{} {}",
                    binary_bytes(w.per_thread_bytes),
                    Si(w.per_byte_s.point, "s/B")
                ))
            ));
        }
        if let Some(k) = &self.knee {
            notes.push(format!(
                "stream knee: on {} threads a copy with reads from a reuse window runs as T^k = T_core^k + T_bus^k − T_stream^k with k = {:.1} ({:.1}–{:.1} over {} windows; k = 1: the core's work adds to the shared memory's time, large k: the larger of the two binds)",
                k.threads,
                k.exponent.point,
                k.exponent.lo,
                k.exponent.hi,
                k.points.len()
            ));
        }
        notes
    }
}

/// The working sets per thread the L1 window is measured beside: half of
/// each cache beyond the first (`caches`, bytes, nearest first), where
/// one thread's streams come from that cache, and `dram_per_thread`.
pub fn reread_streams(caches: &[f64], dram_per_thread: f64) -> Vec<f64> {
    caches
        .iter()
        .skip(1)
        .map(|c| c / 2.0)
        .filter(|&b| b < dram_per_thread)
        .chain([dram_per_thread])
        .collect()
}

/// The L1 window: a quarter of the first cache `first` (bytes), which it
/// holds beside the streams passing through it.
pub fn l1_window(first: f64) -> f64 {
    window_bytes(lag_for(first / 4.0))
}

/// The windows measured between the first cache `first` and the last
/// `last` (bytes): `octaves` apart from 2·first to last / 2, each with
/// its two lags within an eighth of the `n` elements of an array.
pub fn windows(first: f64, last: f64, n: usize, octaves: usize) -> Vec<f64> {
    size_grid((2.0 * first) as u64, (last / 2.0) as u64, 1, 4096)
        .into_iter()
        .step_by(octaves)
        .map(|w| w as f64)
        .filter(|&w| 16 * lag_for(w) <= n)
        .collect()
}

/// One team's copies: its threads, each on `n` elements of its own arrays.
struct Copies<'a> {
    team: &'a Team,
    regions: Vec<Mutex<Region>>,
    n: usize,
}

impl<'a> Copies<'a> {
    /// `team`'s threads on their shares of `total` bytes.
    fn new(team: &'a Team, total: u64) -> Result<Self> {
        let per_thread = total / team.threads() as u64;
        Ok(Self {
            team,
            regions: regions(team, per_thread, Pages::Huge)?,
            n: Kernel::Copy.elems_for(per_thread as usize),
        })
    }

    /// What a thread of the team pays per byte it reads again with lag
    /// `d` beside its streams on these arrays, `per_thread_bytes`, from the
    /// pairs' times, seconds per element of a thread.
    fn per_byte(
        &self,
        copy: &[f64],
        lagged: &[f64],
        d: usize,
        per_thread_bytes: f64,
    ) -> StreamWindow {
        let n = self.n;
        let per_byte =
            |copy: &f64, lagged: &f64| ((lagged - copy) * n as f64 / reread_bytes(n, d)).max(0.0);
        StreamWindow {
            threads: self.team.threads(),
            window_bytes: window_bytes(d),
            per_thread_bytes,
            per_byte_s: median_range(
                copy.iter()
                    .zip(lagged)
                    .map(|(c, l)| per_byte(c, l))
                    .collect(),
            ),
        }
    }

    /// The plain copy and the copy with lag `d` right after each other,
    /// seconds per element of a thread.
    fn pairs_once(&self, ctx: &Context, d: usize) -> Result<[f64; 2]> {
        let per_element = |d| Ok::<_, anyhow::Error>(self.time(ctx, d)? / self.n as f64);
        Ok([per_element(0)?, per_element(d)?])
    }

    /// Seconds per copy with lag `d` (0: the plain copy), the capability
    /// estimate of its clean timings.
    fn time(&self, ctx: &Context, d: usize) -> Result<f64> {
        let (isa, n) = (Isa::detect(), self.n);
        let m = measure(&ctx.config.plan.capped(REPS), |inner, count| {
            self.team
                .time_batch(&self.regions, inner, count, |r, sweeps| {
                    black_box(copy_lagged(isa, r.f64s_mut(), n, d, sweeps));
                })
        })?;
        Ok(m.per_unit.summary().capability(Better::Lower).point)
    }
}

/// The window curve on one thread copying the DRAM working set
/// `dram_total`, with the detected caches `caches` (bytes, nearest first),
/// windows `octaves` apart, the knee from the same pairs on all threads,
/// and the L1 window beside one thread's streams from each level
/// ([`reread_streams`]).
pub fn measure_windows(
    ctx: &Context,
    dram_total: u64,
    caches: &[f64],
    octaves: usize,
) -> Result<Windows> {
    let (first, last) = (caches[0], caches.iter().copied().fold(0.0, f64::max));
    let one = Copies::new(&ctx.one, dram_total)?;
    // Both teams' arrays are held at once, so the knee needs twice the
    // DRAM working set within the budget.
    let all = (ctx.all.threads() > 1 && 2 * dram_total <= ctx.config.budget_bytes)
        .then(|| Copies::new(&ctx.all, dram_total))
        .transpose()?;
    let shortest = all.as_ref().map_or(one.n, |a| a.n.min(one.n));
    let sizes = windows(first, last, shortest, octaves);
    let streams = reread_streams(caches, dram_total as f64);
    let bar = ctx
        .progress
        .bar("stream windows", (sizes.len() + streams.len()) as u64);
    let mut out = Windows::default();
    let mut points = Vec::new();
    for w in sizes {
        let d = lag_for(w);
        bar.set_message(format!("window {}", binary_bytes(window_bytes(d))));
        // Per pair: the one-thread copy and lagged copy, then the same on
        // all threads, seconds per element of a thread.
        let mut times: [Vec<f64>; 4] = Default::default();
        for _ in 0..PAIRS {
            let [copy, lagged] = one.pairs_once(ctx, d)?;
            times[0].push(copy);
            times[1].push(lagged);
            if let Some(all) = &all {
                let [copy, lagged] = all.pairs_once(ctx, d)?;
                times[2].push(copy);
                times[3].push(lagged);
            }
        }
        bar.inc(1);
        out.curve
            .push(one.per_byte(&times[0], &times[1], d, dram_total as f64));
        let [c1, l1, cp, lp] = times;
        if all.is_some() {
            points.push(KneePoint {
                window_bytes: window_bytes(d),
                copy_one_s: median_range(c1),
                lagged_one_s: median_range(l1),
                copy_all_s: median_range(cp),
                lagged_all_s: median_range(lp),
            });
        }
    }
    let d = lag_for(l1_window(first));
    for bytes in streams {
        bar.set_message(format!("L1 window beside {}", binary_bytes(bytes)));
        let near = (bytes < dram_total as f64)
            .then(|| Copies::new(&ctx.one, bytes as u64))
            .transpose()?;
        let copies = near.as_ref().unwrap_or(&one);
        let mut times: [Vec<f64>; 2] = Default::default();
        for _ in 0..PAIRS {
            let [copy, lagged] = copies.pairs_once(ctx, d)?;
            times[0].push(copy);
            times[1].push(lagged);
        }
        out.l1_rereads
            .push(copies.per_byte(&times[0], &times[1], d, bytes));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let measured: Vec<_> = points.iter().map(KneePoint::measurement).collect();
    out.knee = fit_exponent(&measured).map(|exponent| StreamKnee {
        threads: ctx.all.threads(),
        exponent,
        points,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_l1_window_sits_beside_half_of_each_later_cache_and_dram() {
        let mib = 1024.0 * 1024.0;
        let caches = [48.0 * 1024.0, 2.0 * mib, 64.0 * mib];
        assert_eq!(
            reread_streams(&caches, 512.0 * mib),
            vec![mib, 32.0 * mib, 512.0 * mib]
        );
        // A cache whose half is not below the DRAM working set is left out.
        assert_eq!(reread_streams(&caches, 16.0 * mib), vec![mib, 16.0 * mib]);
        assert_eq!(reread_streams(&caches[..1], 8.0 * mib), vec![8.0 * mib]);
        // A quarter of L1, in whole lags.
        assert_eq!(l1_window(48.0 * 1024.0), 12.0 * 1024.0);
        assert_eq!(l1_window(32.0 * 1024.0), 8.0 * 1024.0);
    }

    #[test]
    fn windows_run_an_octave_apart_between_the_caches() {
        let kib = 1024.0;
        let w = windows(32.0 * kib, 32.0 * 1024.0 * kib, 16 << 20, 1);
        assert_eq!(w.first(), Some(&(64.0 * kib)));
        assert_eq!(w.last(), Some(&(16.0 * 1024.0 * kib)));
        assert_eq!(w.len(), 9);
        // Two octaves apart: every other one, from the same first.
        let quick = windows(32.0 * kib, 32.0 * 1024.0 * kib, 16 << 20, 2);
        assert_eq!(quick, w.iter().copied().step_by(2).collect::<Vec<_>>());
        assert_eq!(quick.len(), 5);
        // A small DRAM working set drops the windows it cannot lag.
        let short = windows(32.0 * kib, 32.0 * 1024.0 * kib, 1 << 20, 1);
        assert!(short.iter().all(|&x| 16 * lag_for(x) <= 1 << 20));
        assert!(short.len() < w.len());
    }
}
