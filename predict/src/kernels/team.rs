//! Running a kernel variant on pinned threads and timing it.

use std::sync::Mutex;

use anyhow::Result;
use calibrate::harness::pin::{allowed_cpus, Team};
use calibrate::harness::timer::{measure, serial, Plan};
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
/// an untimed call follows it (as the ghost stencil leaves out the sweep
/// after each probe): every timing starts from the kernel's steady state,
/// as calibrate's points do after their warm-up and as the model's level
/// assumes. Without it the first call of each timing found its data gone:
/// the data-parallel sort of 1 Mi particles (16 MiB, in the L3 of the
/// Zen 4 VM; three sorts per timing) read 943–1152 µs in four `predict
/// run`s while the C version alternated with them read 708–746 µs, and
/// 698–717 µs timed back to back; with the untimed call it read 759–812 µs
/// against the C version's 763–783 µs, alternated four times.
pub fn time(plan: &Plan, beside: &mut Beside, mut run: impl FnMut()) -> Result<Sample> {
    let mut timed = serial(|inner| {
        for _ in 0..inner {
            run();
        }
    });
    let m = measure(plan, |inner, count| {
        (0..count)
            .flat_map(|_| {
                let reading = timed(inner, 1);
                if beside.round() {
                    timed(1, 1);
                }
                reading
            })
            .collect()
    })?;
    Ok(m.per_unit)
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
    fn split_covers_everything_once() {
        let r = split(10, 3);
        assert_eq!(r, vec![0..3, 3..6, 6..10]);
        assert_eq!(split(2, 4).iter().map(|r| r.len()).sum::<usize>(), 2);
    }
}
