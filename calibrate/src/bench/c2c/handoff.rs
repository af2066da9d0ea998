//! The hand-off: one core fills n bytes and raises a flag, the other waits
//! for it, reads the n bytes (checking them) and answers. Time per
//! hand-off T(n) for n from 64 B to 4 MiB, fitted as T(n) = T0 + n/B
//! (lecture §2.2, §4.1) with [`models::fit::line`] (relative weights 1/T²,
//! so that small sizes count), and the protocol regimes fitted separately
//! ([`models::fit::segmented()`], up to 3 lines).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use anyhow::{anyhow, bail, Result};
use models::fit::{line, relative_weights, segmented, SegmentFit, SegmentedOptions};
use models::profile::NetworkRegime;
use models::stats::Summary as Stats;
use models::Estimate;

use super::{partner_tid, Padded, STOP};
use crate::counters::gettid;
use crate::pin::pin_current;
use crate::timer::{measure, serial_with, Plan};

/// Smallest hand-off, bytes.
pub const HANDOFF_MIN: u64 = 64;
/// Largest hand-off, bytes.
pub const HANDOFF_MAX: u64 = 4 << 20;

/// The hand-off buffer, written and read by turns.
struct Shared {
    buf: UnsafeCell<Vec<u64>>,
    words: Padded<AtomicUsize>,
    ready: Padded<AtomicU64>,
    ack: Padded<AtomicU64>,
}

// SAFETY: `buf` is only touched under the ready/ack protocol: the writer
// writes it only after seeing the ack of the previous hand-off (Acquire) and
// before raising `ready` (Release); the reader reads it only after seeing
// `ready` (Acquire) and before raising `ack` (Release). They never overlap.
unsafe impl Sync for Shared {}

/// The reader's side of the hand-offs until [`STOP`]: checks each buffer
/// and answers; returns the number that arrived corrupted.
fn read_handoffs(sh: &Shared) -> u64 {
    let mut seen = 0u64;
    let mut corrupted = 0;
    loop {
        let v = sh.ready.0.load(Ordering::Acquire);
        if v == STOP {
            return corrupted;
        }
        if v == seen {
            std::hint::spin_loop();
            continue;
        }
        let words = sh.words.0.load(Ordering::Relaxed);
        // SAFETY: `ready` was raised for this hand-off; see `Shared`.
        let data: &Vec<u64> = unsafe { &*sh.buf.get() };
        let sum = data[..words].iter().fold(0u64, |s, &x| s.wrapping_add(x));
        corrupted += u64::from(sum != v.wrapping_mul(words as u64));
        seen = v;
        sh.ack.0.store(v, Ordering::Release);
    }
}

/// Hand-off time samples (seconds per hand-off) for each size in `sizes`.
pub fn handoff(
    a: core_affinity::CoreId,
    b: core_affinity::CoreId,
    sizes: &[u64],
    plan: &Plan,
    mut progress: impl FnMut() + Send,
) -> Result<Vec<Stats>> {
    let max_words = sizes.iter().copied().max().unwrap_or(0) as usize / 8;
    let sh = Shared {
        buf: UnsafeCell::new(vec![0u64; max_words]),
        words: Padded(AtomicUsize::new(0)),
        ready: Padded(AtomicU64::new(0)),
        ack: Padded(AtomicU64::new(0)),
    };
    let sh = &sh;
    let partner = &AtomicU64::new(0);
    std::thread::scope(|s| {
        // The reader counts corrupted hand-offs and goes on answering, so
        // the writer never waits for an answer that does not come.
        let reader = s.spawn(move || -> u64 {
            pin_current(b);
            partner.store(gettid(), Ordering::Release);
            read_handoffs(sh)
        });
        let writer = s.spawn(move || -> Result<Vec<Stats>> {
            pin_current(a);
            let mut seq = 0u64;
            let mut out = Vec::new();
            let partners = [partner_tid(partner)];
            for &bytes in sizes {
                let words = bytes as usize / 8;
                let m = measure(
                    plan,
                    serial_with(&partners, |count| {
                        for _ in 0..count {
                            seq += 1;
                            // SAFETY: the previous hand-off was acknowledged; see `Shared`.
                            let data: &mut Vec<u64> = unsafe { &mut *sh.buf.get() };
                            data[..words].fill(seq);
                            sh.words.0.store(words, Ordering::Relaxed);
                            sh.ready.0.store(seq, Ordering::Release);
                            while sh.ack.0.load(Ordering::Acquire) != seq {
                                std::hint::spin_loop();
                            }
                        }
                    }),
                );
                match m {
                    Ok(m) => out.push(m.per_unit.summary()),
                    Err(e) => {
                        sh.ready.0.store(STOP, Ordering::Release);
                        return Err(e);
                    }
                }
                progress();
            }
            sh.ready.0.store(STOP, Ordering::Release);
            Ok(out)
        });
        let w = writer
            .join()
            .map_err(|_| anyhow!("the writer thread panicked"))?;
        let corrupted = reader
            .join()
            .map_err(|_| anyhow!("the reader thread panicked"))?;
        if corrupted > 0 {
            bail!("{corrupted} buffer hand-offs arrived corrupted: the memory ordering is broken");
        }
        w
    })
}

/// A regime as the section stores it: an infinite interval end (a slope
/// whose interval reaches 0) becomes `f64::MAX`, "no bound", which JSON
/// can hold.
pub(super) fn regime_record(r: &NetworkRegime) -> NetworkRegime {
    let bounded = |x: f64| if x.is_finite() { x } else { f64::MAX };
    let mut r = r.clone();
    r.bandwidth_Bps.point = bounded(r.bandwidth_Bps.point);
    r.bandwidth_Bps.hi = bounded(r.bandwidth_Bps.hi);
    r
}

/// T(n) = T0 + n/B by weighted least squares on all points, and up to 3
/// regimes fitted separately.
pub fn fit_handoff(bytes: &[f64], times: &[f64]) -> Result<(NetworkRegime, Vec<NetworkRegime>)> {
    let w = relative_weights(times)?;
    let l = line(bytes, times, Some(&w))?;
    let to_regime = |l: &models::fit::LineFit, from: f64, to: f64| NetworkRegime {
        from_bytes: from,
        to_bytes: to,
        t0_s: l.intercept,
        bandwidth_Bps: reciprocal(l.slope),
        r_squared: l.r_squared,
    };
    let all = to_regime(&l, bytes[0], bytes[bytes.len() - 1]);
    let seg = segmented(bytes, times, Some(&w), &SegmentedOptions::lines(3))?;
    let regimes = seg
        .segments
        .iter()
        .filter_map(|s| match &s.fit {
            SegmentFit::Line(l) => Some(to_regime(l, s.x_min, s.x_max)),
            SegmentFit::Constant(_) => None,
        })
        .collect();
    Ok((all, regimes))
}

/// B = 1/slope with the interval mapped; an interval reaching slope ≤ 0
/// has no upper end (infinite bandwidth).
pub(super) fn reciprocal(slope: Estimate) -> Estimate {
    let inv = |s: f64| if s > 0.0 { 1.0 / s } else { f64::INFINITY };
    Estimate::new(inv(slope.point), inv(slope.hi), inv(slope.lo))
}
