//! Repetitions after warm-up, each long enough to time, as a
//! [`models::stats::Sample`] of the clean ones.
//!
//! A measurement first finds the inner count `m` (sweeps, chase steps,
//! round trips, ...) for which one timing lasts at least
//! [`Plan::min_time`], then takes [`Plan::warmup`] + [`Plan::reps`]
//! timings of `m` inner units, drops the warm-up ones and keeps
//! seconds per inner unit = t / m. Kept timings whose later half runs more
//! than 10% faster than their earlier half were still settling: the
//! earlier half counts as warm-up and is taken again ([`still_falling`]).
//!
//! Every timing comes with the interference counters read around it
//! ([`crate::counters`]); the disturbed ones
//! ([`models::interference::BatchReading::disturbed`]) are set aside and
//! counted. While fewer than [`min_clean`] clean timings are left, more are
//! taken, [`Plan::reps`] at a time after one warm-up, in at most
//! [`RETRY_FACTOR`] such rounds (each about as long as the first attempt)
//! and for at most [`Plan::retry_cap`] of timed work. If that does not help, the sample holds every
//! timing and says why it is unreliable: the figure is reported, but never
//! as the machine's.

use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context as _, Result};
use models::interference::{clean_sample, min_clean, split, BatchReading};
use models::stats::Sample;

use crate::counters::{gettid, observe};

/// Rounds of re-measuring at most, each about as long as the first attempt.
pub const RETRY_FACTOR: u32 = 3;

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
    /// Longest time spent re-measuring one figure whose clean timings are
    /// too few.
    #[serde(serialize_with = "seconds")]
    pub retry_cap: Duration,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Plan {
    /// The default plan: 2 warm-up and 21 kept timings of at least 2 ms,
    /// re-measuring for at most 1 s.
    pub fn full() -> Self {
        Self {
            warmup: 2,
            reps: 21,
            min_time: Duration::from_millis(2),
            retry_cap: Duration::from_secs(1),
        }
    }

    /// `--quick`: 1 warm-up and 7 kept timings of at least 1 ms,
    /// re-measuring for at most 0.25 s.
    pub fn quick() -> Self {
        Self {
            warmup: 1,
            reps: 7,
            min_time: Duration::from_millis(1),
            retry_cap: Duration::from_millis(250),
        }
    }

    /// The same plan with `reps` kept timings.
    pub fn with_reps(self, reps: usize) -> Self {
        Self { reps, ..self }
    }

    /// The same plan with one warm-up fewer: what is left after an
    /// inner-count search, whose last timing ran the final count.
    pub fn after_search(self) -> Self {
        Self {
            warmup: self.warmup.saturating_sub(1),
            ..self
        }
    }

    /// The same plan without re-measuring: for points of a curve that are
    /// pooled (their disturbed timings are still set aside).
    pub fn without_retry(self) -> Self {
        Self {
            retry_cap: Duration::ZERO,
            ..self
        }
    }

    /// The same plan with at most `reps` kept timings and without
    /// re-measuring: for figures whose every timing is a whole sweep of a
    /// large working set.
    pub fn capped(self, reps: usize) -> Self {
        self.with_reps(self.reps.min(reps)).without_retry()
    }
}

/// A measured quantity: the inner count used and the time per inner unit.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Inner units per timing.
    pub inner: u64,
    /// Seconds per inner unit of the clean timings (of all of them, marked
    /// unreliable, when too few were clean).
    pub per_unit: Sample,
    /// Every kept timing in order, as seconds per inner unit with what the
    /// OS reported around it (disturbed ones included).
    pub batches: Batches,
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
/// inner units each and return their readings in order.
///
/// The inner count is found on undisturbed timings ([`quiet_duration`]): a
/// single unit that waited 20 ms for a descheduled thread would otherwise
/// pass for a 20 ms unit, and every timing after it would time the
/// barriers. If the clean timings still come out shorter than half of
/// [`Plan::min_time`], the count is found again from there and the figure
/// measured once more.
pub fn measure(
    plan: &Plan,
    mut batch: impl FnMut(u64, usize) -> Vec<BatchReading>,
) -> Result<Measured> {
    // The search ends on a timing of the count it returns: that timing is
    // the first warm-up.
    let warm = plan.after_search();
    let inner = inner_count(plan.min_time, 1, |m| quiet_duration(&mut batch, m));
    let first = measure_with(&warm, inner, &mut batch)?;
    let typical = first.per_unit.summary().median * inner as f64;
    if typical >= plan.min_time.as_secs_f64() / 2.0 {
        return Ok(first);
    }
    let inner = inner_count(plan.min_time, inner, |m| quiet_duration(&mut batch, m));
    measure_with(&warm, inner, batch)
}

/// Consecutive disturbed timings [`quiet_duration`] tries before it
/// estimates.
pub const QUIET_TRIES: usize = 3;

/// The duration of one timing of `m` units that the OS saw undisturbed,
/// trying up to [`QUIET_TRIES`] times; after that, the last one minus the
/// time it lost, or the whole of it when the lost time covers it all: steal
/// is counted in clock ticks (10 ms) of any CPU, so a 1 ms timing can be
/// charged a whole tick, and a duration of zero would make the inner count
/// grow a hundredfold on no evidence.
pub fn quiet_duration(batch: &mut impl FnMut(u64, usize) -> Vec<BatchReading>, m: u64) -> Duration {
    let mut last = BatchReading::default();
    for _ in 0..QUIET_TRIES {
        last = batch(m, 1)[0];
        if !last.disturbed() {
            return Duration::from_secs_f64(last.duration_s.max(0.0));
        }
    }
    let left = last.duration_s - last.steal_s.max(0.0) - last.run_delay_s.max(0.0);
    let d = if left > 0.0 { left } else { last.duration_s };
    Duration::from_secs_f64(d.max(0.0))
}

/// As [`measure`] with the inner count given.
pub fn measure_with(
    plan: &Plan,
    inner: u64,
    mut batch: impl FnMut(u64, usize) -> Vec<BatchReading>,
) -> Result<Measured> {
    let mut kept = batch(inner, plan.warmup + plan.reps);
    kept.drain(..plan.warmup.min(kept.len()));
    for _ in 0..SETTLE_ROUNDS {
        if !still_falling(&kept) {
            break;
        }
        let half = kept.len() / 2;
        kept.drain(..half);
        kept.extend(batch(inner, half));
    }
    let need = min_clean(plan.reps);
    let (mut rounds, mut spent) = (0, 0.0);
    while split(&kept).clean.len() < need
        && rounds < RETRY_FACTOR
        && spent < plan.retry_cap.as_secs_f64()
    {
        let more = batch(inner, 1 + plan.reps);
        spent += more.iter().map(|r| r.duration_s).sum::<f64>();
        kept.extend(more.into_iter().skip(1));
        rounds += 1;
    }
    sample_of(&kept, inner, plan.reps)
}

/// Times at most that a measurement's kept timings are found still
/// falling and half of them taken again ([`still_falling`]).
pub const SETTLE_ROUNDS: usize = 2;

/// How much faster the later half of the kept timings must run for the
/// earlier half to count as warm-up ([`still_falling`]): 10%.
pub const SETTLING_GAIN: f64 = 0.10;

/// Whether the work had not reached its steady state when the timings
/// `kept` began: the clean timings of their later half have a median more
/// than [`SETTLING_GAIN`] below that of the earlier half's. The earlier half
/// is then warm-up too, and as many timings are taken again.
///
/// A fixed warm-up is not always enough. A working set that fills most of
/// a shared last cache wins its share back from the host's other guests
/// over several passes: on the Xeon VM the 4096×4096 stencil (64 MiB per
/// thread on two threads) swept in 5.0–6.6 ms right after a few
/// milliseconds of other work, then in less and less over five sweeps
/// more, to 3.3–4.1 ms, and in 2.9–3.3 ms swept back to back.
pub fn still_falling(kept: &[BatchReading]) -> bool {
    let half = kept.len() / 2;
    let median = |r: &[BatchReading]| {
        let clean: Vec<f64> = r
            .iter()
            .filter(|b| !b.disturbed())
            .map(|b| b.duration_s)
            .collect();
        (!clean.is_empty()).then(|| models::stats::median(clean))
    };
    match (median(&kept[..half]), median(&kept[half..])) {
        (Some(earlier), Some(later)) if half >= 2 => later < (1.0 - SETTLING_GAIN) * earlier,
        _ => false,
    }
}

/// Every measurement's batches since [`record`] was called, when it was.
static RECORDED: Mutex<Option<Vec<Batches>>> = Mutex::new(None);

/// One measurement's kept timings: seconds per inner unit and readings.
pub type Batches = Vec<(f64, BatchReading)>;

/// Starts keeping every measurement's batches (seconds per inner unit and
/// readings) for [`take_recorded`]: how `calibrate point --json` shows them.
pub fn record() {
    *RECORDED.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
}

/// The batches kept since [`record`], one list per measurement.
pub fn take_recorded() -> Vec<Batches> {
    RECORDED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default()
}

/// The clean timings of `kept` as a sample of seconds per inner unit, or
/// all of them marked unreliable when fewer than [`min_clean`] are clean.
pub fn sample_of(kept: &[BatchReading], inner: u64, reps: usize) -> Result<Measured> {
    let per = |r: &BatchReading| r.duration_s / inner as f64;
    let batches: Batches = kept.iter().map(|r| (per(r), *r)).collect();
    if let Some(log) = RECORDED.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        log.push(batches.clone());
    }
    let values: Vec<f64> = kept.iter().map(per).collect();
    Ok(Measured {
        inner,
        per_unit: clean_sample(&values, kept, reps).context("timing sample")?,
        batches,
    })
}

/// A `batch` for single-threaded work: times `f(m)` `count` times, reading
/// the interference counters around each.
pub fn serial(f: impl FnMut(u64)) -> impl FnMut(u64, usize) -> Vec<BatchReading> {
    serial_with(&[], f)
}

/// As [`serial`], the run delay read for the calling thread and for the
/// threads `partners` that the work waits on (a ping-pong's other side).
pub fn serial_with(
    partners: &[u64],
    mut f: impl FnMut(u64),
) -> impl FnMut(u64, usize) -> Vec<BatchReading> {
    let tids: Vec<u64> = std::iter::once(gettid())
        .chain(partners.iter().copied())
        .collect();
    move |m, count| (0..count).map(|_| observe(&tids, || f(m))).collect()
}

#[cfg(test)]
mod tests;
