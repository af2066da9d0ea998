//! The kernel's interference counters, read around every timed batch (the
//! judging is [`models::interference`]'s):
//!
//! - steal time of each CPU from `/proc/stat` (8th value of a `cpuN` line,
//!   in clock ticks of 1/`sysconf(_SC_CLK_TCK)` s);
//! - run delay of each thread taking part in the measurement from
//!   `/proc/self/task/<tid>/schedstat` (2nd value, nanoseconds spent
//!   runnable on a run queue, i.e. switched out involuntarily). Only those
//!   threads: an idle pool thread that yields its CPU also waits on a run
//!   queue, without slowing anything down.
//!
//! Where a file is missing (not Linux, schedstats off) the counter reads as
//! zero and no batch is ever found disturbed by it.

use std::fs;
use std::time::{Duration, Instant};

use models::interference::BatchReading;

/// One reading of the counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// (cpu id, steal ticks) of every CPU line.
    steal_ticks: Vec<(usize, u64)>,
    /// (thread id, run delay ns) of the threads read.
    run_delay_ns: Vec<(u64, u64)>,
}

impl Counters {
    /// Reads the steal of every CPU and the run delay of threads `tids`.
    pub fn read(tids: &[u64]) -> Self {
        Self {
            steal_ticks: fs::read_to_string("/proc/stat")
                .map(|t| parse_steal(&t))
                .unwrap_or_default(),
            run_delay_ns: tids
                .iter()
                .filter_map(|&tid| {
                    let path = format!("/proc/self/task/{tid}/schedstat");
                    Some((tid, parse_run_delay(&fs::read_to_string(path).ok()?)?))
                })
                .collect(),
        }
    }

    /// What happened between `self` (before) and `after` over a batch of
    /// `duration`: the largest steal of one CPU and the largest run delay
    /// of one thread (threads and CPUs seen in both readings).
    pub fn between(&self, after: &Counters, duration: Duration) -> BatchReading {
        let tick = clock_tick_s();
        let steal = after
            .steal_ticks
            .iter()
            .filter_map(|(cpu, t)| {
                let before = self.steal_ticks.iter().find(|(c, _)| c == cpu)?.1;
                Some(t.saturating_sub(before))
            })
            .max()
            .unwrap_or(0);
        let delay = after
            .run_delay_ns
            .iter()
            .filter_map(|(tid, d)| {
                let before = self.run_delay_ns.iter().find(|(t, _)| t == tid)?.1;
                Some(d.saturating_sub(before))
            })
            .max()
            .unwrap_or(0);
        BatchReading {
            duration_s: duration.as_secs_f64(),
            steal_s: steal as f64 * tick,
            run_delay_s: delay as f64 * 1e-9,
        }
    }
}

/// The calling thread's id.
pub fn gettid() -> u64 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() as u64 }
}

/// Times `f` and reads the counters of threads `tids` around it.
pub fn observe(tids: &[u64], f: impl FnOnce()) -> BatchReading {
    let before = Counters::read(tids);
    let t0 = Instant::now();
    f();
    let d = t0.elapsed();
    before.between(&Counters::read(tids), d)
}

/// Seconds per clock tick of `/proc/stat` (1/100 when unknown).
fn clock_tick_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        1.0 / hz as f64
    } else {
        0.01
    }
}

/// (cpu, steal ticks) of each `cpuN` line of `/proc/stat` text.
pub fn parse_steal(text: &str) -> Vec<(usize, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let cpu = f.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let steal = f.nth(7)?.parse::<u64>().ok()?;
            Some((cpu, steal))
        })
        .collect()
}

/// The run delay, ns, from a `schedstat` line ("run_ns delay_ns slices").
pub fn parse_run_delay(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  45861 0 6184 35936 904 0 67 83 0 0\n\
        cpu0 21315 0 2722 20252 178 0 10 41 0 0\n\
        cpu1 24545 0 3461 15683 725 0 56 42 0 0\n\
        intr 305731 0 0\n";

    #[test]
    fn steal_per_cpu_not_the_total() {
        assert_eq!(parse_steal(STAT), [(0, 41), (1, 42)]);
        assert_eq!(parse_steal("cpu0 1 2 3\n"), [], "too few columns");
    }

    #[test]
    fn run_delay_is_the_second_value() {
        assert_eq!(parse_run_delay("100 224972 1\n"), Some(224972));
        assert_eq!(parse_run_delay("100"), None);
    }

    #[test]
    fn differences_take_the_worst_cpu_and_thread() {
        let before = Counters {
            steal_ticks: vec![(0, 41), (1, 42)],
            run_delay_ns: vec![(7, 1000), (8, 5000)],
        };
        let after = Counters {
            steal_ticks: vec![(0, 41), (1, 44)],
            run_delay_ns: vec![(7, 31_000), (8, 6000), (9, 1_000_000)],
        };
        let r = before.between(&after, Duration::from_millis(1));
        assert!((r.steal_s - 2.0 * clock_tick_s()).abs() < 1e-12);
        assert!((r.run_delay_s - 30e-6).abs() < 1e-12, "thread 9 is new");
        assert_eq!(r.duration_s, 1e-3);
    }

    #[test]
    fn this_process_can_be_read() {
        // Whatever the counters say, reading them works and the batch
        // duration is the one measured.
        let r = observe(&[gettid()], || std::thread::sleep(Duration::from_millis(1)));
        let c = Counters::read(&[gettid(), u64::MAX]);
        assert!(c.run_delay_ns.len() <= 1, "no such thread as u64::MAX");
        assert!(r.duration_s >= 1e-3);
        assert!(r.steal_s >= 0.0 && r.run_delay_s >= 0.0);
    }
}
