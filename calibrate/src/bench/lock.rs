//! Lock throughput and t_crit (lecture §2.8, §4.5).
//!
//! p threads (1, 2, 4, … up to the run's thread count, and twice that,
//! oversubscribed) hammer one shared object for a fixed time, pinned
//! round-robin to the run's CPUs:
//!
//! * `mutex`: `std::sync::Mutex<u64>`, critical section = `--critical-ns`
//!   of dependent integer work on the protected value;
//! * `mutex_empty`: the same mutex around an empty critical section (a load
//!   and a store of the protected value). With `mutex` it gives the time
//!   per operation at two critical-section lengths, which `predict`
//!   interpolates to a kernel's own length: under contention the hand-off
//!   grows faster than the section, because the waiter's polling slows the
//!   holder;
//! * `spin`: a test-and-test-and-set spinlock (`spin_loop` while the lock
//!   looks taken) around the same critical section;
//! * `ticket`: a FIFO ticket lock around the same critical section. With
//!   every thread waiting, each release hands the lock to another thread,
//!   so every critical section includes the lock line's migration: the
//!   t_crit of the lecture (§4.5), and the profile's `t_crit_s`, which
//!   pools this benchmark's rounds on all threads with bursts of them taken
//!   before every benchmark ahead of it ([`probe`], [`super::bursts`]): the
//!   line's migration moves with the host's placement of the vCPUs (so do
//!   the other kinds a prediction reads, whose all-thread points pool their
//!   bursts alike: [`Kind::BURSTS`]). A mutex
//!   gives no such figure: a releasing thread often takes it again before
//!   the waiter, which it may have to wake, gets the line, so its time per
//!   operation mixes hand-offs and re-acquisitions in a share the scheduler
//!   decides;
//! * `fetch_add`: `AtomicU64::fetch_add` alone (the critical section is the
//!   atomic read-modify-write and its cache-line transfer);
//! * `mutex_spread`: the same critical section under one of 256 mutexes,
//!   each on its own cache line, picked at random for every operation (the
//!   per-bucket locks of §3.5). The threads rarely wait, but an acquisition
//!   finds the lock's line at another core with probability (p−1)/p, so
//!   each thread's time per operation at p threads, p/X(p), against
//!   1/X(1) gives the cost of one line migration,
//!   m = (p/X(p) − 1/X(1))·p/(p−1). Its "t_crit", 1/X(p), is no
//!   serialization: the table shows it as the time per operation;
//! * `mutex_spread_empty`: the spread mutexes around an empty critical
//!   section. The migration depends on the section's length (on one thread
//!   the section's work overlaps the lock's atomics, after a migration it
//!   waits for the line), so `predict` reads it at a kernel's own length
//!   between the two, as it reads the contended mutex.
//!
//! throughput X(p) = operations / t. The lock serialises its holders, so at
//! saturation X = 1/t_crit whatever p: t_crit = 1 / X(p_max) (the
//! capability estimate of X, a high quantile of the rounds), p_max being
//! the run's thread count (not oversubscribed). With t_work = max(0,
//! 1/X(1) − t_crit), the time outside the lock, the contention model of
//! `models` ([`SerializedLock`]) T(n, p) = max(n·t_crit, n·(t_crit + t_work)/p)
//! predicts X(p) = min(1/t_crit, p/(t_crit + t_work)); its prediction is
//! shown beside every measured point, including the oversubscribed one,
//! where descheduled lock holders break it. (With no work outside the lock,
//! the 1-thread point is faster than 1/t_crit: t_crit includes the
//! cache-line migrations that only contention causes.)
//!
//! # Section `lock`
//!
//! ```json
//! { "critical_ns": 5.0, "critical_steps": 4, "step_s": 1.2e-9, "duration_s": 0.01,
//!   "kinds": [ { "kind": "mutex",
//!                "points": [ {"threads": 1, "oversubscribed": false,
//!                             "throughput_ops": {"median": .., "ci_lo": .., ...},
//!                             "model_ops": .., "model_error": 0.02 } ],
//!                "t_crit_s": {"point": .., "lo": .., "hi": ..}, "t_work_s": ..,
//!                "saturation_threads": .. } ] }
//! ```

use std::hint::black_box;
use std::time::Duration;

use anyhow::Result;
use models::contention::{line_migration_s, SerializedLock};
use models::profile::lock::{LockKindResult, LockPoint, LockSection};
use models::profile::Section;
use models::stats::{Better, Sample, Summary as Stats};
use models::units::Si;
use models::Estimate;

use super::bursts::pool;
use super::{noisy_warning, sample, Bench, Context, Outcome};
use crate::timer::{measure, serial};
use crate::trust::{headline, t_crit_below_transfer, withdraw};

mod contend;
pub use contend::{dependent_work, throughput, SpinLock, TicketLock, SPREAD_LOCKS};

/// The lock benchmark.
pub struct Lock;

/// What the threads contend for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `std::sync::Mutex` around the critical section.
    Mutex,
    /// `std::sync::Mutex` around an empty critical section.
    MutexEmpty,
    /// A test-and-test-and-set spinlock around the critical section.
    Spin,
    /// A FIFO ticket lock around the critical section.
    Ticket,
    /// A bare `AtomicU64::fetch_add`.
    FetchAdd,
    /// One of [`SPREAD_LOCKS`] padded mutexes, at random, around the
    /// critical section.
    MutexSpread,
    /// The spread mutexes around an empty critical section.
    MutexSpreadEmpty,
}

impl Kind {
    /// All kinds.
    pub const ALL: [Kind; 7] = [
        Kind::Mutex,
        Kind::MutexEmpty,
        Kind::Spin,
        Kind::Ticket,
        Kind::FetchAdd,
        Kind::MutexSpread,
        Kind::MutexSpreadEmpty,
    ];

    /// The kinds whose all-thread point is sampled in bursts over the run
    /// ([`probe`]): those a prediction reads (`predict`'s lock and
    /// migration terms) and the ticket lock of t_crit.
    pub const BURSTS: [Kind; 6] = [
        Kind::Mutex,
        Kind::MutexEmpty,
        Kind::Spin,
        Kind::Ticket,
        Kind::MutexSpread,
        Kind::MutexSpreadEmpty,
    ];

    /// "mutex", "mutex_empty", "spin", "ticket", "fetch_add", "mutex_spread",
    /// "mutex_spread_empty".
    pub fn name(self) -> &'static str {
        match self {
            Kind::Mutex => "mutex",
            Kind::MutexEmpty => "mutex_empty",
            Kind::Spin => "spin",
            Kind::Ticket => "ticket",
            Kind::FetchAdd => "fetch_add",
            Kind::MutexSpread => "mutex_spread",
            Kind::MutexSpreadEmpty => "mutex_spread_empty",
        }
    }
}

/// The capability estimate of a throughput sample (its high quantile).
fn best(s: &Stats) -> f64 {
    s.capability(Better::Higher).point
}

/// Thread counts: powers of two below `p`, `p` itself, then `2p`.
pub fn thread_counts(p: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..).map(|i| 1usize << i).take_while(|&t| t < p).collect();
    v.push(p);
    v.push(2 * p);
    v
}

/// The throughput the contention model predicts for `p` threads:
/// X(p) = n / T(n, p) with T(n, p) = max(n·t_crit, n·(t_crit + t_work)/p)
/// ([`SerializedLock::time_s`]), i.e. min(1/t_crit, p/(t_crit + t_work)).
pub fn model_throughput(lock: &SerializedLock, p: usize) -> Option<f64> {
    const OPS: f64 = 1e6;
    lock.time_s(OPS, p as f64).ok().map(|t| OPS / t)
}

/// Steps of dependent work in a critical section of `--critical-ns`, and
/// the seconds of one step: those the bursts of this run fixed, else
/// measured.
pub fn critical_steps(ctx: &Context) -> Result<(u64, f64)> {
    if let Some(fixed) = ctx.bursts.critical_steps {
        return Ok(fixed);
    }
    let step_s = ctx
        .one
        .each(|_| {
            measure(
                &ctx.config.plan,
                serial(|n| {
                    black_box(dependent_work(1, n));
                }),
            )
        })
        .swap_remove(0)?
        .per_unit
        .summary()
        .median;
    Ok((
        (ctx.config.critical_ns * 1e-9 / step_s).round() as u64,
        step_s,
    ))
}

/// Length of one timed round.
fn round_duration(ctx: &Context) -> Duration {
    if ctx.config.quick {
        Duration::from_millis(3)
    } else {
        Duration::from_millis(10)
    }
}

/// A burst of each of [`Kind::BURSTS`] on all the run's CPUs, taken
/// before each benchmark that runs ahead of this one ([`super::bursts`]):
/// throughput samples, op/s; none with fewer than two CPUs.
pub fn probe(ctx: &Context) -> Result<Vec<(Kind, Sample)>> {
    let cpus = &ctx.config.cpus;
    if cpus.len() < 2 {
        return Ok(Vec::new());
    }
    let (steps, _) = critical_steps(ctx)?;
    Kind::BURSTS
        .into_iter()
        .map(|kind| {
            let s = throughput(
                kind,
                cpus.len(),
                cpus,
                steps,
                round_duration(ctx),
                &ctx.config.plan,
            )?;
            Ok((kind, s))
        })
        .collect()
}

/// A kind's bursts with this benchmark's own last, pooled
/// ([`super::bursts::pool`]), and how many were left out: unreliable
/// ones, and ticket-lock bursts whose t_crit falls below half the run's
/// one-way core-to-core latency `line_s`, which ran on one core's siblings
/// ([`t_crit_below_transfer`]).
fn pool_bursts(kind: Kind, bursts: &[Sample], line_s: Option<f64>) -> Result<(Sample, usize)> {
    pool(bursts, |b| {
        let t_crit = 1.0 / b.summary().capability(Better::Higher).point;
        kind != Kind::Ticket || line_s.is_none_or(|l| t_crit_below_transfer(t_crit, l).is_none())
    })
}

impl Bench for Lock {
    fn name(&self) -> &'static str {
        "lock"
    }

    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let mut out = Outcome::default();
        let p = ctx.config.cpus.len();
        let (steps, step_s) = critical_steps(ctx)?;
        let duration = round_duration(ctx);
        let counts = thread_counts(p);
        let bar = ctx
            .progress
            .bar("lock", (counts.len() * Kind::ALL.len()) as u64);
        let mut kinds = Vec::new();
        let mut lines = Vec::new();
        for kind in Kind::ALL {
            let (k, line) = measure_kind(ctx, &mut out, kind, &counts, steps, duration, &bar)?;
            kinds.push(k);
            lines.push(line);
        }
        bar.finish_and_clear();
        if p == 1 {
            out.notes.push(
                "lock: one thread cannot contend, so t_crit is the uncontended time per operation"
                    .into(),
            );
        }
        out.section = Some(Section::Lock(LockSection {
            note: None,
            critical_ns: Some(ctx.config.critical_ns),
            critical_steps: Some(steps),
            step_s: Some(step_s),
            duration_s: Some(duration.as_secs_f64()),
            kinds,
            t_crit_s: None,
        }));
        out.table = format!(
            "Locks (critical section {} dependent steps = {:.1} ns; t_crit = 1/throughput at {p} threads; the last count is oversubscribed)\n{}\n",
            steps,
            steps as f64 * step_s * 1e9,
            lines.join("\n")
        );
        Ok(out)
    }
}

/// Measures lock `kind` on every count of `counts`: its section entry
/// and its line of the table (t_crit = 1/throughput at all threads, §4.5).
fn measure_kind(
    ctx: &Context,
    out: &mut Outcome,
    kind: Kind,
    counts: &[usize],
    steps: u64,
    duration: Duration,
    bar: &indicatif::ProgressBar,
) -> Result<(LockKindResult, String)> {
    let cpus = &ctx.config.cpus;
    let p = cpus.len();
    let line_s = ctx.known.summary.core_to_core_latency_s;
    let mut pts = Vec::new();
    for &t in counts {
        bar.set_message(format!("{} × {t}", kind.name()));
        let mut s = throughput(kind, t, cpus, steps, duration, &ctx.config.plan)?;
        let bursts = ctx.bursts.lock(kind);
        if t == p && p > 1 && !bursts.is_empty() {
            let all: Vec<Sample> = bursts.iter().cloned().chain([s]).collect();
            let left_out;
            (s, left_out) = pool_bursts(kind, &all, line_s)?;
            out.notes.push(format!(
                "{} on {p} threads: {} burst(s) spread over the run, {} pooled, {left_out} left out (unreliable{})",
                kind.name(),
                all.len(),
                all.len() - left_out,
                if kind == Kind::Ticket { ", or on one core's siblings" } else { "" },
            ));
        }
        pts.push((t, s.summary()));
        bar.inc(1);
    }
    let at = |t: usize| {
        pts.iter()
            .find(|x| x.0 == t)
            .map(|x| &x.1)
            .expect("measured")
    };
    let sat = at(p);
    let t_crit = sat.capability(Better::Higher).map(|x| 1.0 / x);
    let t_work = (1.0 / best(at(1)) - t_crit.point).max(0.0);
    out.warnings.extend(noisy_warning(
        &format!("{} throughput with {p} thread(s)", kind.name()),
        sat,
    ));
    if kind == Kind::Ticket {
        headline(out, "t_crit_s", sat, t_crit.point);
        if let Some(why) = line_s.and_then(|l| t_crit_below_transfer(t_crit.point, l)) {
            withdraw(out, "t_crit_s", why);
        }
    }
    let model = SerializedLock::new(t_crit.point, t_work)?;
    let tail = if matches!(kind, Kind::MutexSpread | Kind::MutexSpreadEmpty) {
        let m = line_migration_s(best(at(1)), best(sat), p as f64);
        format!(
            "per op {} (line migration {})",
            Si(t_crit.point, "s"),
            Si(m, "s")
        )
    } else {
        format!(
            "t_crit {} (t_work {})",
            Si(t_crit.point, "s"),
            Si(t_work, "s")
        )
    };
    let line = format!(
        "  {:<18} {}  {tail}",
        kind.name(),
        pts.iter()
            .map(|(t, s)| format!("{:>2}t {:>12}", t, Si(s.median, "op/s").to_string()))
            .collect::<Vec<_>>()
            .join(" "),
    );
    Ok((kind_result(kind, &pts, p, t_crit, &model), line))
}

/// A kind's entry in the section.
fn kind_result(
    kind: Kind,
    pts: &[(usize, Stats)],
    p: usize,
    t_crit: Estimate,
    model: &SerializedLock,
) -> LockKindResult {
    LockKindResult {
        kind: kind.name().into(),
        points: pts
            .iter()
            .map(|(t, s)| {
                let m = model_throughput(model, *t);
                LockPoint {
                    threads: *t,
                    oversubscribed: *t > p,
                    throughput_ops: sample(s),
                    model_ops: m,
                    model_error: m.map(|m| (s.median - m) / m),
                }
            })
            .collect(),
        t_crit_s: Some(t_crit),
        t_work_s: Some(model.t_work_s),
        saturation_threads: Some(model.saturation_threads()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timer::Plan;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn counts_and_model() {
        assert_eq!(thread_counts(1), [1, 2]);
        assert_eq!(thread_counts(2), [1, 2, 4]);
        assert_eq!(thread_counts(6), [1, 2, 4, 6, 12]);
        // Saturated: 1/t_crit whatever p; unsaturated: p/(t_crit + t_work).
        let lock = SerializedLock::new(1e-7, 1e-7).unwrap();
        assert!((model_throughput(&lock, 8).unwrap() - 1e7).abs() < 1e-3);
        let lock = SerializedLock::new(1e-7, 3e-7).unwrap();
        assert!((model_throughput(&lock, 1).unwrap() - 2.5e6).abs() < 1e-3);
    }

    #[test]
    fn spinlock_excludes() {
        let l = SpinLock::new(0);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        assert!(l.with(&stop, |v| *v += 1));
                    }
                });
            }
        });
        assert_eq!(l.into_inner(), 40_000);
    }

    #[test]
    fn ticket_lock_excludes() {
        let l = TicketLock::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        l.with(|v| *v += 1);
                    }
                });
            }
        });
        assert_eq!(l.into_inner(), 40_000);
    }

    #[test]
    fn ticket_bursts_on_siblings_are_left_out() {
        // Throughputs, op/s: t_crit 62 ns, 18 ns (siblings), 70 ns.
        let b = |ops: f64| Sample::new(vec![ops * 0.98, ops, ops * 1.01]).unwrap();
        let bursts = [b(1.0 / 62e-9), b(1.0 / 18e-9), b(1.0 / 70e-9)];
        let (pooled, left_out) = pool_bursts(Kind::Ticket, &bursts, Some(60e-9)).unwrap();
        assert_eq!((pooled.values().len(), left_out), (6, 1));
        let t_crit = 1.0 / pooled.summary().capability(Better::Higher).point;
        assert!(t_crit > 55e-9 && t_crit < 72e-9, "{t_crit}");
        assert_eq!(pool_bursts(Kind::Ticket, &bursts, None).unwrap().1, 0);
        // A mutex's fast state is a state of the machine, not a misplaced
        // burst: every kind but the ticket lock keeps all its bursts.
        let (pooled, left_out) = pool_bursts(Kind::Mutex, &bursts, Some(60e-9)).unwrap();
        assert_eq!((pooled.values().len(), left_out), (9, 0));
    }

    #[test]
    fn throughput_counts_operations() {
        let cpus = crate::pin::allowed_cpus();
        let plan = Plan::quick().with_reps(2);
        for kind in Kind::ALL {
            let s = throughput(kind, 2, &cpus, 2, Duration::from_millis(2), &plan)
                .unwrap()
                .summary();
            assert!(s.median > 0.0, "{}", kind.name());
        }
        assert_eq!(dependent_work(0, 0), 0);
        assert_eq!(dependent_work(0, 1), 1);
    }
}
