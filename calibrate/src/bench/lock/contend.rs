//! The contended objects of the lock benchmark and the timed loop that
//! makes threads fight over them.

use std::cell::UnsafeCell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use crossbeam_utils::CachePadded;
use models::interference::clean_sample;
use models::stats::Sample;

use super::Kind;
use crate::counters::{gettid, Counters};
use crate::pin::{pin_current, SpinBarrier};
use crate::timer::Plan;

/// Mutexes of the `mutex_spread` kind: many more than threads, so that
/// two threads rarely want the same one.
pub const SPREAD_LOCKS: usize = 256;

/// A mutex alone on its cache line.
#[repr(align(64))]
#[derive(Default)]
struct PaddedMutex(Mutex<u64>);

/// The next of a thread's pseudo-random lock numbers (xorshift64), below
/// [`SPREAD_LOCKS`].
#[inline(always)]
fn next_lock(state: &mut u64) -> usize {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state % SPREAD_LOCKS as u64) as usize
}

/// `steps` dependent multiply-adds on `x` (about 4 cycles each): the work
/// inside the critical section.
#[inline(always)]
pub fn dependent_work(mut x: u64, steps: u64) -> u64 {
    for _ in 0..steps {
        x = black_box(x)
            .wrapping_mul(0x5851_F42D_4C95_7F2D)
            .wrapping_add(1);
    }
    x
}

/// A test-and-test-and-set spinlock around a `u64`.
pub struct SpinLock {
    locked: AtomicBool,
    value: UnsafeCell<u64>,
}

// SAFETY: `value` is only accessed by the thread that set `locked` from
// false to true (Acquire) and before it stores false (Release).
unsafe impl Sync for SpinLock {}

impl SpinLock {
    /// An unlocked lock holding `v`.
    pub fn new(v: u64) -> Self {
        Self {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(v),
        }
    }

    /// Runs `f` on the value under the lock; gives up (false) when `stop`
    /// is raised while waiting.
    pub fn with(&self, stop: &AtomicBool, f: impl FnOnce(&mut u64)) -> bool {
        loop {
            while self.locked.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) {
                    return false;
                }
                std::hint::spin_loop();
            }
            if !self.locked.swap(true, Ordering::Acquire) {
                break;
            }
        }
        // SAFETY: we hold the lock (see the Sync impl).
        f(unsafe { &mut *self.value.get() });
        self.locked.store(false, Ordering::Release);
        true
    }

    /// The value (needs `&mut`, so no lock).
    pub fn into_inner(self) -> u64 {
        self.value.into_inner()
    }
}

/// Spins a ticket lock's waiter makes before it yields its CPU once (3 to
/// 50 µs, as a pause instruction takes 10 to 140 cycles): a hand-off
/// between running threads takes well under a microsecond, so only a
/// waiter behind a descheduled holder (more threads than CPUs) yields.
const SPINS_BEFORE_YIELD: u32 = 1 << 10;

/// A FIFO ticket lock around a `u64`: its counters and the value share one
/// cache line, as a mutex's word and its value do. With every thread
/// waiting, each release passes the lock to the next thread in line, so
/// every critical section includes the lock line's migration.
pub struct TicketLock {
    next: AtomicU64,
    serving: AtomicU64,
    value: UnsafeCell<u64>,
}

// SAFETY: `value` is only accessed by the thread whose ticket `serving`
// shows (Acquire), before it moves `serving` on (Release).
unsafe impl Sync for TicketLock {}

impl TicketLock {
    /// An unlocked lock holding `v`.
    pub fn new(v: u64) -> Self {
        Self {
            next: AtomicU64::new(0),
            serving: AtomicU64::new(0),
            value: UnsafeCell::new(v),
        }
    }

    /// Takes a ticket, waits for its turn, and runs `f` on the value. A
    /// ticket cannot be given back, so there is no giving up.
    pub fn with(&self, f: impl FnOnce(&mut u64)) {
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        let mut spins = 0u32;
        while self.serving.load(Ordering::Acquire) != ticket {
            spins += 1;
            if spins.is_multiple_of(SPINS_BEFORE_YIELD) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        // SAFETY: our turn (see the Sync impl).
        f(unsafe { &mut *self.value.get() });
        self.serving.store(ticket + 1, Ordering::Release);
    }

    /// The value (needs `&mut`, so no lock).
    pub fn into_inner(self) -> u64 {
        self.value.into_inner()
    }
}

/// The shared objects of one measurement, each on cache lines of its own:
/// a lock sharing a line with anything the threads read (the stop flag, say)
/// would pay for line transfers that are not the lock's.
struct Target {
    mutex: CachePadded<Mutex<u64>>,
    spin: CachePadded<SpinLock>,
    ticket: CachePadded<TicketLock>,
    atomic: CachePadded<AtomicU64>,
    spread: Vec<PaddedMutex>,
}

/// The critical section under a mutex.
fn locked_work(m: &Mutex<u64>, steps: u64) {
    let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
    *g = dependent_work(*g, steps);
}

impl Target {
    /// One operation of `kind`, `rng` being the thread's random state; false
    /// if it gave up because of `stop`.
    fn op(&self, kind: Kind, steps: u64, stop: &AtomicBool, rng: &mut u64) -> bool {
        match kind {
            Kind::Mutex => {
                locked_work(&self.mutex, steps);
                true
            }
            Kind::MutexEmpty => {
                locked_work(&self.mutex, 0);
                true
            }
            Kind::MutexSpread => {
                locked_work(&self.spread[next_lock(rng)].0, steps);
                true
            }
            Kind::MutexSpreadEmpty => {
                locked_work(&self.spread[next_lock(rng)].0, 0);
                true
            }
            Kind::Spin => self.spin.with(stop, |v| *v = dependent_work(*v, steps)),
            Kind::Ticket => {
                self.ticket.with(|v| *v = dependent_work(*v, steps));
                true
            }
            Kind::FetchAdd => {
                self.atomic.fetch_add(1, Ordering::Relaxed);
                true
            }
        }
    }
}

/// Operations between two reads of the clock by the timing worker.
const OPS_PER_CLOCK_READ: u64 = 256;

/// The barrier between the phases of a round: spinning while every worker
/// has a CPU of its own, so that leaving it wakes no one (a woken worker
/// waits on the run queue, which would be charged to the round); parking
/// when the workers outnumber the CPUs.
enum Gate {
    Spin(SpinBarrier),
    Park(Barrier),
}

impl Gate {
    fn wait(&self) {
        match self {
            Gate::Spin(b) => b.wait(),
            Gate::Park(b) => {
                b.wait();
            }
        }
    }
}

/// Throughput samples (operations per second) of `kind` with `threads`
/// threads pinned round-robin to `cpus`, each timing lasting `duration`.
/// The workers run the rounds themselves: the first one reads the
/// interference counters between two barriers, keeps the time and stops
/// the round. A timer thread waking up on one of the workers' CPUs would
/// preempt a lock holder: a 2-vCPU guest measured 75–180 µs of run-queue
/// wait per 3 ms round so, which set most rounds aside as disturbed.
pub fn throughput(
    kind: Kind,
    threads: usize,
    cpus: &[core_affinity::CoreId],
    steps: u64,
    duration: Duration,
    plan: &Plan,
) -> Result<Sample> {
    let target = Target {
        mutex: CachePadded::new(Mutex::new(0)),
        spin: CachePadded::new(SpinLock::new(0)),
        ticket: CachePadded::new(TicketLock::new(0)),
        atomic: CachePadded::new(AtomicU64::new(0)),
        spread: (0..SPREAD_LOCKS).map(|_| PaddedMutex::default()).collect(),
    };
    let stop = CachePadded::new(AtomicBool::new(false));
    let gate = if threads <= cpus.len() {
        Gate::Spin(SpinBarrier::new(threads))
    } else {
        Gate::Park(Barrier::new(threads))
    };
    let counts: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let tids: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let rounds = plan.warmup + plan.reps;
    let (rates, mut seen) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|i| {
                let (target, stop, gate, counts, tids) = (&target, &stop, &gate, &counts, &tids);
                let cpu = cpus[i % cpus.len()];
                s.spawn(move || {
                    pin_current(cpu);
                    tids[i].store(gettid(), Ordering::Relaxed);
                    let mut rng = 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1);
                    let mut rates = Vec::with_capacity(rounds);
                    let mut seen = Vec::with_capacity(rounds);
                    for _ in 0..rounds {
                        gate.wait();
                        let ids: Vec<u64> =
                            tids.iter().map(|t| t.load(Ordering::Relaxed)).collect();
                        let before = (i == 0).then(|| Counters::read(&ids));
                        gate.wait();
                        let t0 = Instant::now();
                        let mut t = Duration::ZERO;
                        let mut n = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            n += u64::from(target.op(kind, steps, stop, &mut rng));
                            if i == 0 && n.is_multiple_of(OPS_PER_CLOCK_READ) {
                                t = t0.elapsed();
                                if t >= duration {
                                    stop.store(true, Ordering::Relaxed);
                                }
                            }
                        }
                        counts[i].store(n, Ordering::Relaxed);
                        gate.wait();
                        if let Some(before) = before {
                            let ops: u64 = counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                            rates.push(ops as f64 / t.as_secs_f64());
                            seen.push(before.between(&Counters::read(&ids), t));
                            // No worker reads the flag again before the
                            // next round's second barrier.
                            stop.store(false, Ordering::Relaxed);
                        }
                    }
                    (rates, seen)
                })
            })
            .collect();
        let mut results = workers.into_iter().map(|w| w.join());
        results
            .next()
            .expect("one worker at least")
            .map_err(|_| anyhow!("a lock benchmark thread panicked"))
    })?;
    let parks = matches!(
        kind,
        Kind::Mutex | Kind::MutexEmpty | Kind::MutexSpread | Kind::MutexSpreadEmpty
    );
    if threads > cpus.len() || (parks && threads > 1) {
        // Oversubscribed, or a contended mutex that parks its waiters and
        // wakes them: waiting on a run queue is part of what is measured,
        // so only stolen time counts as a disturbance.
        seen.iter_mut().for_each(|r| r.run_delay_s = 0.0);
    }
    clean_sample(&rates[plan.warmup..], &seen[plan.warmup..], plan.reps)
        .map_err(|e| anyhow!("lock throughput: {e}"))
}
