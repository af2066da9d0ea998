//! Running a kernel variant on pinned threads and timing it.

use std::convert::Infallible;
use std::sync::Mutex;

use anyhow::Result;
use calibrate::harness::pin::{allowed_cpus, Team};
use calibrate::harness::timer::{measure, serial, Plan};
use models::interference::BatchReading;
use models::stats::Sample;

use super::paired::Beside;

/// A pinned team of `threads` threads (on the first `threads` allowed CPUs).
pub fn team(threads: usize) -> Result<Team> {
    let cpus = allowed_cpus();
    anyhow::ensure!(
        threads >= 1 && threads <= cpus.len(),
        crate::error::BadInput(format!(
            "--threads {threads} is not accepted: this machine allows 1 to {} threads",
            cpus.len()
        ))
    );
    Team::new(&cpus[..threads])
}

/// Seconds per call of `run`, which typically broadcasts phases to the
/// team: repetitions after warm-up (`plan`), each timing at least
/// `plan.min_time` long, with a round of the paired re-measure `beside`
/// after each timing.
///
/// A round's own working sets displace the kernel's from the caches, so
/// untimed calls follow it (as the ghost stencil leaves out the sweep
/// after each probe): every timing starts from the kernel's steady state,
/// as calibrate's points do after their warm-up and as the model's level
/// assumes. One call refills the private caches; a kernel that streams a
/// working set a shared cache holds ([`Beside::streams_from_a_cache`])
/// needs more, since the host's other guests take back their share of the
/// last cache while the round runs, and winning it back takes passes
/// ([`Pace::restore`], against the pace of [`RESTORE_MAX`] calls back to
/// back before the first round). On the Xeon VM the 4096×4096 stencil
/// (64 MiB per thread on two threads) swept after a round in 5.0–6.6 ms,
/// then in less and less over five more sweeps, to 3.3–4.1 ms; without
/// the rounds it swept in 2.9–3.3 ms, and with one untimed sweep after
/// each round its timings read 5.1–5.9 ms. Without an untimed call the first call of each
/// timing found its data gone:
/// the data-parallel sort of 1 Mi particles (16 MiB, in the L3 of the
/// Zen 4 VM; three sorts per timing) read 943–1152 µs in four `predict
/// run`s while the C version alternated with them read 708–746 µs, and
/// 698–717 µs timed back to back; with the untimed call it read 759–812 µs
/// against the C version's 763–783 µs, alternated four times. On the Xeon
/// VM one untimed call was not enough for it either: 3.5–3.7 ms against
/// 1.7–1.8 ms with the passes restored, the C sort's 1.8–1.9 ms.
pub fn time(plan: &Plan, beside: &mut Beside, mut run: impl FnMut()) -> Result<Sample> {
    let mut timed = serial(|inner| {
        for _ in 0..inner {
            run();
        }
    });
    let restores = beside.streams_from_a_cache();
    let mut pace = Pace::default();
    if restores {
        // The kernel's own pace, before any round: calls back to back.
        for _ in 0..RESTORE_MAX {
            pace.steady(timed(1, 1)[0].duration_s);
        }
    }
    let m = measure(plan, |inner, count| {
        let per_unit = |r: &[BatchReading]| r[0].duration_s / inner as f64;
        let mut readings = Vec::with_capacity(count);
        for _ in 0..count {
            let reading = timed(inner, 1);
            pace.steady(per_unit(&reading));
            if beside.round() {
                if restores {
                    let Ok(()) = pace.restore(|| Ok::<_, Infallible>(per_unit(&timed(inner, 1))));
                } else {
                    timed(1, 1);
                }
            }
            readings.extend(reading);
        }
        readings
    })?;
    Ok(m.per_unit)
}

/// Untimed passes a [`Pace::restore`] runs at most.
pub const RESTORE_MAX: usize = 8;

/// How near its fastest pace a pass must run to count as the steady
/// state ([`Pace::steady`]): within 10%.
pub const RESTORED_WITHIN: f64 = 0.10;

/// Work's pace against its steady state: the fastest seconds per unit
/// seen so far, and the most untimed passes a restore has taken.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    fastest: f64,
    passes: usize,
}

impl Default for Pace {
    /// No pass seen yet.
    fn default() -> Self {
        Self::from(f64::INFINITY)
    }
}

impl From<f64> for Pace {
    /// A pace whose steady state is known beforehand to be `seconds` per
    /// unit (a profile's figure).
    fn from(seconds: f64) -> Self {
        Self {
            fastest: seconds,
            passes: 0,
        }
    }
}

impl Pace {
    /// Records a pass of `seconds` per unit; whether it ran at the steady
    /// state, within [`RESTORED_WITHIN`] of the fastest pass seen.
    pub fn steady(&mut self, seconds: f64) -> bool {
        self.fastest = self.fastest.min(seconds);
        seconds <= (1.0 + RESTORED_WITHIN) * self.fastest
    }

    /// Untimed passes (`pass` gives its seconds per unit): as many as the
    /// most a restore has taken before, then more until one runs at the
    /// steady state, [`RESTORE_MAX`] at most. Stopping at the first pass
    /// that runs at the steady state would keep work whose pace has two
    /// states running until its fast state came, and time that one: the
    /// global lock, whose holder sometimes keeps it, read 25–31 ms so on
    /// the Xeon VM, against 26–87 ms with one untimed call. Once the count
    /// covers what winning a cache back takes, the passes no longer depend
    /// on what they run at.
    pub fn restore<E>(&mut self, mut pass: impl FnMut() -> Result<f64, E>) -> Result<(), E> {
        let mut n = 0;
        while n < RESTORE_MAX {
            n += 1;
            if self.steady(pass()?) && n >= self.passes {
                break;
            }
        }
        self.passes = n;
        Ok(())
    }
}

/// [`time`] of `work` on every thread's state at once.
pub fn time_states<S: Send>(
    team: &Team,
    plan: &Plan,
    beside: &mut Beside,
    states: &[Mutex<S>],
    work: impl Fn(usize, &mut S) + Sync,
) -> Result<Sample> {
    time(plan, beside, || {
        team.each(|i| work(i, &mut states[i].lock().unwrap_or_else(|e| e.into_inner())));
    })
}

/// A state per thread, each built (and first touched) on its own pinned thread.
pub fn per_thread<S: Send>(team: &Team, make: impl Fn(usize) -> S + Sync) -> Vec<Mutex<S>> {
    team.each(|i| Mutex::new(make(i)))
}

/// Splits `n` items into `parts` contiguous ranges as evenly as possible.
pub fn split(n: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    (0..parts)
        .map(|i| (n * i / parts)..(n * (i + 1) / parts))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pace_is_restored_by_at_least_as_many_passes_as_before() {
        let mut pace = Pace::default();
        assert!(pace.steady(3.0), "the first pass sets the pace");
        // A working set winning its cache back over several passes.
        let mut passes = [6.0, 5.9, 5.3, 4.4, 3.2, 3.0].into_iter();
        let mut ran = 0;
        pace.restore(|| {
            ran += 1;
            Ok::<_, ()>(passes.next().unwrap())
        })
        .unwrap();
        assert_eq!(ran, 5, "3.2 is within 10% of 3.0");
        // As many after, even when the first is already steady.
        let mut ran = 0;
        pace.restore(|| {
            ran += 1;
            Ok::<_, ()>(3.0)
        })
        .unwrap();
        assert_eq!(ran, 5);
        // Never more than RESTORE_MAX, and an error stops them.
        let mut slow = Pace::from(1.0);
        assert!(!slow.steady(1.2), "a slower pass than the known pace");
        let mut ran = 0;
        slow.restore(|| {
            ran += 1;
            Ok::<_, ()>(2.0)
        })
        .unwrap();
        assert_eq!(ran, RESTORE_MAX);
        assert_eq!(slow.restore(|| Err::<f64, _>("gone")), Err("gone"));
    }

    #[test]
    fn split_covers_everything_once() {
        let r = split(10, 3);
        assert_eq!(r, vec![0..3, 3..6, 6..10]);
        assert_eq!(split(2, 4).iter().map(|r| r.len()).sum::<usize>(), 2);
    }
}
