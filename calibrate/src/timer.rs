//! Repetitions after warm-up, each long enough to time, as a
//! [`models::stats::Sample`].
//!
//! A measurement first finds the inner count `m` (sweeps, chase steps,
//! round trips, ...) for which one timing lasts at least
//! [`Plan::min_time`], then takes [`Plan::warmup`] + [`Plan::reps`]
//! timings of `m` inner units, drops the warm-up ones and keeps
//! seconds per inner unit = t / m. The median of that sample is the point
//! estimate (see `models::stats`).

use std::time::Duration;

use anyhow::{Context as _, Result};
use models::stats::Sample;

/// How many repetitions to take and how long each must be.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Plan {
    /// Timings taken first and discarded.
    pub warmup: usize,
    /// Timings kept (≥ 2; ≥ 6 gives a 95% interval narrower than the range).
    pub reps: usize,
    /// Shortest duration of one timing.
    #[serde(serialize_with = "seconds")]
    pub min_time: Duration,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Plan {
    /// The default plan: 2 warm-up and 21 kept timings of at least 2 ms.
    pub fn full() -> Self {
        Self {
            warmup: 2,
            reps: 21,
            min_time: Duration::from_millis(2),
        }
    }

    /// `--quick`: 1 warm-up and 7 kept timings of at least 1 ms.
    pub fn quick() -> Self {
        Self {
            warmup: 1,
            reps: 7,
            min_time: Duration::from_millis(1),
        }
    }

    /// The same plan with `reps` kept timings.
    pub fn with_reps(self, reps: usize) -> Self {
        Self { reps, ..self }
    }
}

/// A measured quantity: the inner count used and the time per inner unit.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Inner units per timing.
    pub inner: u64,
    /// Seconds per inner unit, one value per kept timing.
    pub per_unit: Sample,
}

/// The inner count that makes one timing last at least `min_time`:
/// starting from `start`, grow by the ratio still missing (× 1.2 margin,
/// at most × 100 per step) until `time(m)` is long enough.
pub fn inner_count(min_time: Duration, start: u64, mut time: impl FnMut(u64) -> Duration) -> u64 {
    let mut m = start.max(1);
    loop {
        let t = time(m);
        if t >= min_time || m >= u64::MAX / 128 {
            return m;
        }
        let ratio = if t.is_zero() {
            100.0
        } else {
            (min_time.as_secs_f64() / t.as_secs_f64() * 1.2).clamp(1.5, 100.0)
        };
        m = ((m as f64) * ratio).ceil() as u64;
    }
}

/// Measures with `batch(m, count)`, which must run `count` timings of `m`
/// inner units each and return their durations in order.
pub fn measure(
    plan: &Plan,
    mut batch: impl FnMut(u64, usize) -> Vec<Duration>,
) -> Result<Measured> {
    let inner = inner_count(plan.min_time, 1, |m| batch(m, 1)[0]);
    measure_with(plan, inner, batch)
}

/// As [`measure`] with the inner count given.
pub fn measure_with(
    plan: &Plan,
    inner: u64,
    mut batch: impl FnMut(u64, usize) -> Vec<Duration>,
) -> Result<Measured> {
    let times = batch(inner, plan.warmup + plan.reps);
    let per_unit = times[plan.warmup.min(times.len())..]
        .iter()
        .map(|d| d.as_secs_f64() / inner as f64)
        .collect();
    Ok(Measured {
        inner,
        per_unit: Sample::new(per_unit).context("timing sample")?,
    })
}

/// A `batch` for single-threaded work: times `f(m)` `count` times.
pub fn serial(mut f: impl FnMut(u64)) -> impl FnMut(u64, usize) -> Vec<Duration> {
    move |m, count| {
        (0..count)
            .map(|_| {
                let t0 = std::time::Instant::now();
                f(m);
                t0.elapsed()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_count_reaches_the_minimum() {
        // A fake clock: each unit takes 1 µs.
        let mut calls = 0;
        let m = inner_count(Duration::from_millis(1), 1, |m| {
            calls += 1;
            Duration::from_micros(m)
        });
        assert!(m >= 1000, "{m}");
        assert!(m < 20_000, "{m}");
        assert!(calls < 10, "{calls}");
    }

    #[test]
    fn warmup_is_dropped_and_units_divided() {
        let plan = Plan {
            warmup: 2,
            reps: 3,
            min_time: Duration::from_millis(1),
        };
        let mut n = 0u64;
        let r = measure_with(&plan, 10, |m, count| {
            (0..count)
                .map(|_| {
                    n += 1;
                    Duration::from_micros(if n <= 2 { 1000 * m } else { 100 * m })
                })
                .collect()
        })
        .unwrap();
        assert_eq!(r.per_unit.values(), &[1e-4, 1e-4, 1e-4]);
    }

    #[test]
    fn serial_batches_time_each_call() {
        let mut calls = Vec::new();
        let mut b = serial(|m| calls.push(m));
        assert_eq!(b(5, 3).len(), 3);
        drop(b);
        assert_eq!(calls, [5, 5, 5]);
    }
}
