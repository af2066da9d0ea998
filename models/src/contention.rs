//! Contention and queueing (lecture §2.8, §4.5): a serialized lock, locks per
//! bucket, a lock from its measured alone and contended times, flat against
//! tree combining, M/M/1 and M/D/1 queues, and the office-hours example.

use serde::Serialize;

use crate::error::{count, non_negative, positive, ModelError, Result};

/// A lock whose critical section (including the migration of its cache
/// line) takes t_crit (§4.5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SerializedLock {
    /// Time the lock is held per operation, seconds.
    pub t_crit_s: f64,
    /// Work each operation does outside the lock, seconds.
    pub t_work_s: f64,
}

impl SerializedLock {
    pub fn new(t_crit_s: f64, t_work_s: f64) -> Result<Self> {
        Ok(Self {
            t_crit_s: positive("t-crit", t_crit_s)?,
            t_work_s: non_negative("t-work", t_work_s)?,
        })
    }

    /// The most operations per second any number of threads can complete:
    /// 1/t_crit, independent of the thread count (§4.5).
    pub fn max_throughput(&self) -> f64 {
        1.0 / self.t_crit_s
    }

    /// Time for `ops` operations on `threads` threads:
    /// T = max(n·t_crit, ⌈n/p⌉·(t_crit + t_work)). The first term is the
    /// lock's serialization, the second the threads' own work: a thread
    /// does whole operations, so the busiest does ⌈n/p⌉ of them.
    pub fn time_s(&self, ops: f64, threads: f64) -> Result<f64> {
        let n = non_negative("ops", ops)?;
        let p = count("threads", threads)?;
        Ok((n * self.t_crit_s).max(busiest_share(n, p) * (self.t_crit_s + self.t_work_s)))
    }

    /// Threads beyond which adding threads no longer helps:
    /// p* = (t_crit + t_work) / t_crit.
    pub fn saturation_threads(&self) -> f64 {
        (self.t_crit_s + self.t_work_s) / self.t_crit_s
    }

    /// Waiting time of the k-th thread to arrive (0-based) when all arrive
    /// at once: k·t_crit (§4.5, "T ≈ arrival order × t_crit").
    pub fn wait_s(&self, arrival_order: f64) -> Result<f64> {
        Ok(non_negative("arrival-order", arrival_order)? * self.t_crit_s)
    }
}

/// Operations the busiest of `p` threads does when `n` whole operations
/// are shared out: ⌈n/p⌉ (the mean n/p when n is a rate, not whole).
fn busiest_share(n: f64, p: f64) -> f64 {
    if n.fract() == 0.0 {
        (n / p).ceil()
    } else {
        n / p
    }
}

/// Time for `ops` operations spread uniformly over `buckets` locks, each
/// held t_crit, by `threads` threads: at most min(p, buckets) critical
/// sections run at once, so T = n·t_crit / min(p, buckets), and never less
/// than the busiest thread's own work ⌈n/p⌉·(t_crit + t_work). This is the
/// ideal: line migrations of shared bucket heads make real machines slower
/// (§4.5).
pub fn per_bucket_time_s(
    lock: &SerializedLock,
    ops: f64,
    threads: f64,
    buckets: f64,
) -> Result<f64> {
    let n = non_negative("ops", ops)?;
    let p = count("threads", threads)?;
    let b = count("buckets", buckets)?;
    Ok((n * lock.t_crit_s / p.min(b)).max(busiest_share(n, p) * (lock.t_crit_s + lock.t_work_s)))
}

/// The cost of one cache-line migration on a lock acquisition, from the
/// throughputs (operations per second, all threads together) of locks
/// spread so widely that threads rarely wait: `x_1` with one thread and
/// `x_p` with p. Each thread then takes t_p = p/x_p per operation against
/// t_1 = 1/x_1 alone, and an acquisition finds the line at another core
/// with probability (p−1)/p, so m = max(0, t_p − t_1)·p/(p−1); 0 for one
/// thread (§2.7, §4.5).
pub fn line_migration_s(x_1: f64, x_p: f64, p: f64) -> f64 {
    if p > 1.0 {
        (p / x_p - 1.0 / x_1).max(0.0) * p / (p - 1.0)
    } else {
        0.0
    }
}

/// The length of a critical section that runs `critical_s` of work and
/// writes `data_lines` lines of shared data apart from the lock's own
/// line, each last written at another core and so migrating in:
/// c + d·m. The migrations are inside the section, so under contention
/// they lengthen what the waiters wait for (§4.5).
pub fn critical_section_s(critical_s: f64, data_lines: f64, migration_s: f64) -> f64 {
    critical_s + data_lines * migration_s
}

/// A lock as measured on the machine: the time per operation with one
/// thread, `t_alone`, and with p threads contending, `t_contended` (the
/// inverse of the saturated throughput, 1/X(p), around the kernel's whole
/// critical section, its data lines' migrations included:
/// [`critical_section_s`]), and the cost `migration` of a line moving to
/// an acquiring core that did not have to wait ([`line_migration_s`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeasuredLock {
    pub t_alone_s: f64,
    pub t_contended_s: f64,
    pub migration_s: f64,
}

impl MeasuredLock {
    pub fn new(t_alone_s: f64, t_contended_s: f64, migration_s: f64) -> Result<Self> {
        Ok(Self {
            t_alone_s: positive("t-alone", t_alone_s)?,
            t_contended_s: positive("t-contended", t_contended_s)?,
            migration_s: non_negative("migration", migration_s)?,
        })
    }

    /// Time for `ops` operations spread uniformly over `locks` locks by
    /// `threads` threads, each critical section also writing `data_lines`
    /// lines of shared data that move with the lock:
    ///
    /// T = max(n·t_contended/L, n·(t_alone + (1 + d)·(p−1)/p·m)/p).
    ///
    /// The first term is each lock's serialization, its data lines'
    /// migrations inside t_contended; the second is the threads working in
    /// parallel, each acquisition finding the lock's line and its data at
    /// another core with probability (p−1)/p. One lock gives the first,
    /// many the second. The hand-off of a contended lock (waking a waiter)
    /// is inside t_contended; the migration m alone is what a lock nobody
    /// waits for costs.
    pub fn time_s(&self, ops: f64, threads: f64, locks: f64, data_lines: f64) -> Result<f64> {
        let n = non_negative("ops", ops)?;
        let p = count("threads", threads)?;
        let l = count("locks", locks)?;
        let d = non_negative("data-lines", data_lines)?;
        let m = self.migration_s;
        let serialized = n * self.t_contended_s / l;
        let parallel = n * (self.t_alone_s + (1.0 + d) * (p - 1.0) / p * m) / p;
        Ok(serialized.max(parallel))
    }
}

/// Flat against tree combining of P contributions (§2.8).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Combining {
    /// Latency of one uncontended contribution: flat = t_op, tree = levels·t_op.
    pub flat_latency_s: f64,
    pub tree_latency_s: f64,
    /// Time for all P contributions at once: flat = P·t_op (serialized at the
    /// hot spot), tree = levels·fan-in·t_op.
    pub flat_all_s: f64,
    pub tree_all_s: f64,
    /// Most requests any one location receives: P flat, fan-in in a tree.
    pub flat_hotspot: f64,
    pub tree_hotspot: f64,
    /// Levels of the tree: ⌈log_fanin P⌉.
    pub levels: f64,
}

/// Compares flat and tree combining of `p` contributions with operation time `t_op_s`.
pub fn combining(p: f64, fan_in: f64, t_op_s: f64) -> Result<Combining> {
    let p = count("p", p)?;
    let k = count("fan-in", fan_in)?;
    if k < 2.0 {
        return Err(ModelError::OutOfRange {
            name: "fan-in",
            value: k,
            accepted: "a whole number >= 2",
        });
    }
    let t = positive("t-op", t_op_s)?;
    let mut levels: f64 = 0.0;
    let mut reach = 1.0;
    while reach < p {
        reach *= k;
        levels += 1.0;
    }
    Ok(Combining {
        flat_latency_s: t,
        tree_latency_s: levels.max(1.0) * t,
        flat_all_s: p * t,
        tree_all_s: levels.max(1.0) * k.min(p) * t,
        flat_hotspot: p,
        tree_hotspot: k.min(p),
        levels,
    })
}

/// Mean times of a single-server queue.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Queue {
    /// Utilisation ρ = λ/μ.
    pub utilization: f64,
    /// Mean wait before service, seconds.
    pub wait_s: f64,
    /// Mean time in the system (wait + service), seconds.
    pub response_s: f64,
    /// Mean number waiting, L_q = λ·W_q (Little's law).
    pub queue_length: f64,
}

/// Service-time distribution of a single-server queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Service {
    /// Exponential service times (M/M/1): W_q = ρ / (μ − λ).
    Exponential,
    /// Constant service times (M/D/1): W_q = ρ / (2μ(1 − ρ)).
    Deterministic,
}

/// Mean waiting time of a single server with Poisson arrivals at rate λ and
/// service rate μ (both per second). Requires ρ = λ/μ < 1.
pub fn queue(arrival_rate: f64, service_rate: f64, service: Service) -> Result<Queue> {
    let lambda = positive("arrival-rate", arrival_rate)?;
    let mu = positive("service-rate", service_rate)?;
    let rho = lambda / mu;
    if rho >= 1.0 {
        return Err(ModelError::Inconsistent(format!(
            "utilization {rho:.3} >= 1: arrivals ({lambda}/s) must be slower than service ({mu}/s) or the queue grows without bound"
        )));
    }
    let wait = match service {
        Service::Exponential => rho / (mu - lambda),
        Service::Deterministic => rho / (2.0 * mu * (1.0 - rho)),
    };
    Ok(Queue {
        utilization: rho,
        wait_s: wait,
        response_s: wait + 1.0 / mu,
        queue_length: lambda * wait,
    })
}

/// One student's visit in the office-hours example (§2.8).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Visit {
    /// When the student leaves for the office.
    pub leaves_at: f64,
    /// Time waiting at the door.
    pub wait: f64,
    /// Total time from leaving to the end of the answer: walk + wait + answer.
    pub total: f64,
}

/// First-come-first-served single server (§2.8): each student leaves at the
/// given time (sorted ascending), walks `walk`, waits while the professor is
/// busy, and is answered in `answer`. Any time unit.
pub fn office_hours(leave_times: &[f64], walk: f64, answer: f64) -> Result<Vec<Visit>> {
    let walk = non_negative("walk", walk)?;
    let answer = positive("answer", answer)?;
    if leave_times.windows(2).any(|w| w[1] < w[0]) {
        return Err(ModelError::Inconsistent(
            "leave times must be sorted ascending".into(),
        ));
    }
    let mut free_at = f64::NEG_INFINITY;
    leave_times
        .iter()
        .map(|&t| {
            let arrive = t + walk;
            let start = arrive.max(free_at);
            free_at = start + answer;
            Ok(Visit {
                leaves_at: t,
                wait: start - arrive,
                total: free_at - t,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_throughput_does_not_grow_with_threads() {
        let l = SerializedLock::new(100e-9, 0.0).unwrap();
        let t1 = l.time_s(1e6, 1.0).unwrap();
        let t16 = l.time_s(1e6, 16.0).unwrap();
        assert_eq!(t1, t16);
        assert_eq!(l.max_throughput(), 1e7);
    }

    #[test]
    fn work_outside_the_lock_scales_until_saturation() {
        let l = SerializedLock::new(10e-9, 30e-9).unwrap();
        assert_eq!(l.saturation_threads(), 4.0);
        assert!((l.time_s(1e6, 2.0).unwrap() - 20e-3).abs() < 1e-12);
        assert!((l.time_s(1e6, 8.0).unwrap() - 10e-3).abs() < 1e-12);
    }

    #[test]
    fn fewer_operations_than_threads_take_one_operation_at_least() {
        let l = SerializedLock::new(600e-9, 100e-9).unwrap();
        // Three operations on 16 threads with 64 locks: three threads work
        // at once, each for one whole operation.
        let t = per_bucket_time_s(&l, 3.0, 16.0, 64.0).unwrap();
        assert!((t - 700e-9).abs() < 1e-15, "{t}");
        assert!((l.time_s(3.0, 16.0).unwrap() - 1.8e-6).abs() < 1e-15);
        // 17 operations on 16 threads: the busiest thread does two.
        let t = per_bucket_time_s(&l, 17.0, 16.0, 64.0).unwrap();
        assert!((t - 1.4e-6).abs() < 1e-15, "{t}");
    }

    #[test]
    fn buckets_divide_contention() {
        let l = SerializedLock::new(100e-9, 0.0).unwrap();
        let t = per_bucket_time_s(&l, 1e6, 16.0, 256.0).unwrap();
        assert!((t - 1e6 * 100e-9 / 16.0).abs() < 1e-12);
        let t = per_bucket_time_s(&l, 1e6, 16.0, 4.0).unwrap();
        assert!((t - 1e6 * 100e-9 / 4.0).abs() < 1e-12);
    }

    #[test]
    fn measured_locks_serialize_alone_and_migrate_when_spread() {
        // Spread locks: 12 ns alone, 20 ns per thread on 2 threads (10 ns
        // per operation in all): a 16 ns migration.
        assert!((line_migration_s(1.0 / 12e-9, 1e8, 2.0) - 16e-9).abs() < 1e-18);
        assert_eq!(line_migration_s(1.0 / 12e-9, 2e8, 2.0), 0.0);
        assert_eq!(line_migration_s(1.0 / 12e-9, 1e8, 1.0), 0.0);
        // 10 ns alone, 100 ns per op contended, a 20 ns migration.
        let l = MeasuredLock::new(10e-9, 100e-9, 20e-9).unwrap();
        // One lock: 1e6 · 100 ns, whatever its data lines (they are
        // inside the contended time, read at the section's length).
        assert!((l.time_s(1e6, 2.0, 1.0, 1.0).unwrap() - 100e-3).abs() < 1e-12);
        assert!((critical_section_s(5e-9, 0.5, 20e-9) - 15e-9).abs() < 1e-21);
        // 256 locks on 2 threads: 1e6 · (10 + ½·20) ns / 2.
        assert!((l.time_s(1e6, 2.0, 256.0, 0.0).unwrap() - 10e-3).abs() < 1e-12);
        // One thread never migrates.
        assert!((l.time_s(1e6, 1.0, 256.0, 1.0).unwrap() - 10e-3).abs() < 1e-12);
        assert!(l.time_s(1.0, 0.0, 1.0, 0.0).is_err());
        assert!(MeasuredLock::new(10e-9, 100e-9, -1.0).is_err());
    }

    #[test]
    fn tree_trades_latency_for_contention() {
        let c = combining(64.0, 2.0, 1e-6).unwrap();
        assert_eq!(c.levels, 6.0);
        assert!(c.tree_latency_s > c.flat_latency_s);
        assert!(c.tree_all_s < c.flat_all_s);
        assert_eq!((c.flat_hotspot, c.tree_hotspot), (64.0, 2.0));
        assert!(combining(8.0, 1.0, 1e-6).is_err());
    }

    #[test]
    fn queues() {
        let mm1 = queue(0.5, 1.0, Service::Exponential).unwrap();
        assert!((mm1.wait_s - 1.0).abs() < 1e-12);
        assert!((mm1.response_s - 2.0).abs() < 1e-12);
        let md1 = queue(0.5, 1.0, Service::Deterministic).unwrap();
        assert!((md1.wait_s - 0.5).abs() < 1e-12, "half the M/M/1 wait");
        assert!(queue(1.0, 1.0, Service::Exponential).is_err());
    }
}
