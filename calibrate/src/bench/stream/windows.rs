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
//! restarts are. The windows run an octave apart from twice the first
//! cache to half the last, so each cache beyond L1 holds some of them.
//!
//! It is one core's figure: the model adds it to the core's own time
//! (ECM), which the shared memory system bounds apart. On the Zen 4 VM a
//! window in L2 costs 2–3 times the L2 load kernel's time per byte while
//! the copy streams from DRAM, and less once the window is in L3.

use std::hint::black_box;

use anyhow::Result;
use models::profile::stream::StreamWindow;
use models::stats::Better;
use models::units::binary_bytes;

use super::pairs::{over_pairs, PAIRS};
use super::regions;
use crate::bench::{size_grid, Context};
use crate::kernels::lagged::{copy_lagged, lag_for, reread_bytes, window_bytes};
use crate::kernels::stream::Kernel;
use crate::kernels::Isa;
use crate::mem::Pages;
use crate::timer::measure;

/// Kept timings per measurement (each a whole DRAM-sized copy).
pub const REPS: usize = 5;

/// The windows measured between the first cache `first` and the last
/// `last` (bytes): an octave apart from 2·first to last / 2, each with
/// its two lags within an eighth of the `n` elements of an array.
pub fn windows(first: f64, last: f64, n: usize) -> Vec<f64> {
    size_grid((2.0 * first) as u64, (last / 2.0) as u64, 1, 4096)
        .into_iter()
        .map(|w| w as f64)
        .filter(|&w| 16 * lag_for(w) <= n)
        .collect()
}

/// The window curve on one thread copying the DRAM working set
/// `dram_total`, with the detected caches from `first` to `last` bytes.
pub fn measure_windows(
    ctx: &Context,
    dram_total: u64,
    first: f64,
    last: f64,
) -> Result<Vec<StreamWindow>> {
    let team = &ctx.one;
    let plan = ctx.config.plan.capped(REPS);
    let isa = Isa::detect();
    let n = Kernel::Copy.elems_for(dram_total as usize);
    let sizes = windows(first, last, n);
    let bar = ctx
        .progress
        .bar("stream windows", (sizes.len() * PAIRS) as u64);
    let regions = regions(team, dram_total, Pages::Huge)?;
    let time = |d: usize| -> Result<f64> {
        let m = measure(&plan, |inner, count| {
            team.time_batch(&regions, inner, count, |r, sweeps| {
                black_box(copy_lagged(isa, r.f64s_mut(), n, d, sweeps));
            })
        })?;
        Ok(m.per_unit.summary().capability(Better::Lower).point)
    };
    let mut out = Vec::with_capacity(sizes.len());
    for w in sizes {
        let d = lag_for(w);
        bar.set_message(format!("window {}", binary_bytes(window_bytes(d))));
        let per_byte_s = over_pairs(|| {
            let copy = time(0)?;
            let extra = ((time(d)? - copy) / reread_bytes(n, d)).max(0.0);
            bar.inc(1);
            Ok(extra)
        })?;
        out.push(StreamWindow {
            threads: team.threads(),
            window_bytes: window_bytes(d),
            per_thread_bytes: dram_total as f64,
            per_byte_s,
        });
    }
    bar.finish_and_clear();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_run_an_octave_apart_between_the_caches() {
        let kib = 1024.0;
        let w = windows(32.0 * kib, 32.0 * 1024.0 * kib, 16 << 20);
        assert_eq!(w.first(), Some(&(64.0 * kib)));
        assert_eq!(w.last(), Some(&(16.0 * 1024.0 * kib)));
        assert_eq!(w.len(), 9);
        // A small DRAM working set drops the windows it cannot lag.
        let short = windows(32.0 * kib, 32.0 * 1024.0 * kib, 1 << 20);
        assert!(short.iter().all(|&x| 16 * lag_for(x) <= 1 << 20));
        assert!(short.len() < w.len());
    }
}
