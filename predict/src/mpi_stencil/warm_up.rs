//! The warm-up before a run's variants: the first variant's sweeps on
//! blocks of their own for [`WARM_UP_S`], whose pace sizes a run that was
//! given no sweep count.
//!
//! A process that has just started does not always sweep at the pace it
//! reaches later. On the Xeon VM the nonblocking variant at N = 256, timed
//! in chunks of 20 ms from its start, ran at 16–22 µs a sweep for its
//! first 0.07 s, 0.6 s, 0.8 s and 1.3 s in four starts and at 14.2–14.4 µs
//! after; three of four runs of 200 sweeps (3 ms of sweeps between the
//! probes) read 18.5–20.3 µs, where runs of 20 000 sweeps read
//! 14.2–15.3 µs. The same chunks show the host changing the pace for
//! stretches of 0.1–1 s at any time too, which no warm-up can wait out: a
//! sample of a second or more (`predict run`'s default sweep count) spans
//! them, and the paired re-measure follows them. The warm-up is the
//! shorter start of that range, a cost paid once per run.
//!
//! The per-variant warm-up ([`super::driver::warmup_of`], ten sweeps at
//! most) covers the caches and the block's pages; this one covers what
//! takes longer. Its blocks are dropped after it: every variant starts
//! from the grid's initial values, so its checksum and its check against
//! the serial reference do not change.

use std::time::Duration;

use models::stats::Sample;
use mpi::topology::SimpleCommunicator;

use super::driver::{slowest, RankShare};
use super::Variant;

/// How long the warm-up sweeps, seconds (the slowest rank's sweeps).
pub const WARM_UP_S: f64 = 0.3;
/// Without `--iters`, each variant sweeps for about this long at the
/// warm-up's pace, to span the stretches in which the host changes it...
pub const SWEEP_BUDGET_S: f64 = 1.0;
/// ...and at least this many times, so that the probes between the sweeps
/// (nine at most) leave sweeps at the kernel's pace between them...
pub const MIN_SWEEPS: usize = 100;
/// ...and at most this many.
pub const MAX_SWEEPS: usize = 10_000_000;
/// Sweeps are timed in chunks of at least this long, seconds, between
/// which the ranks agree on the time so far.
const CHUNK_S: f64 = 0.02;

/// What the warm-up did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmUp {
    /// Sweeps made.
    pub sweeps: usize,
    /// Their time on the slowest rank.
    pub elapsed: Duration,
    /// The median of the second half of its sweeps (each the slowest
    /// rank's), seconds.
    pub sweep_s: f64,
}

/// A variant's sweeps at `sweep_s` seconds each without `--iters`:
/// [`SWEEP_BUDGET_S`] of them, within [`MIN_SWEEPS`] and [`MAX_SWEEPS`].
pub fn sweeps_at(sweep_s: f64) -> usize {
    let budget = (SWEEP_BUDGET_S / sweep_s.max(1e-9)).ceil();
    (budget.min(MAX_SWEEPS as f64) as usize).max(MIN_SWEEPS)
}

/// Warms every rank of `world` up with `variant`'s sweeps on an N = `n`
/// grid (a collective; every rank returns the same).
pub fn warm_up(world: &SimpleCommunicator, variant: Variant, n: usize) -> WarmUp {
    let mut share = RankShare::new(world, variant, n);
    let mut chunk = 1usize;
    let mut times: Vec<f64> = Vec::new();
    let mut elapsed = 0.0;
    while elapsed < WARM_UP_S {
        let own: Vec<f64> = (0..chunk)
            .map(|_| {
                let t0 = mpi::time();
                share.step(world, false);
                mpi::time() - t0
            })
            .collect();
        let chunk_times = slowest(world, &own);
        let took: f64 = chunk_times.iter().sum();
        elapsed += took;
        times.extend(chunk_times);
        if took < CHUNK_S {
            // The next chunk lasts about CHUNK_S at this pace.
            let grow = (CHUNK_S / took.max(1e-9)).ceil() as usize;
            chunk = chunk.saturating_mul(grow.clamp(2, 1 << 20));
        }
    }
    let sweeps = times.len();
    let later = times.split_off(sweeps / 2);
    let mean = later.iter().sum::<f64>() / later.len() as f64;
    WarmUp {
        sweeps,
        elapsed: Duration::from_secs_f64(elapsed),
        // The mean where too few sweeps make no sample.
        sweep_s: Sample::new(later).map_or(mean, |s| s.summary().median),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_sweeps_fill_the_budget_within_their_bounds() {
        assert_eq!(sweeps_at(1e-3), 1000);
        assert_eq!(sweeps_at(15e-6), 66_667);
        // A 55 ms sweep still makes the least count, a 1 ns one the most.
        assert_eq!(sweeps_at(0.055), MIN_SWEEPS);
        assert_eq!(sweeps_at(1e-9), MAX_SWEEPS);
    }
}
