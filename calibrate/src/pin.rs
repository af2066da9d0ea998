//! Threads pinned one per logical CPU, a rayon pool of them ([`Team`]), and
//! the spinning barrier that starts and stops their timed repetitions.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use models::interference::BatchReading;

use crate::counters::{gettid, Counters};

use anyhow::{anyhow, Context as _, Result};
use core_affinity::CoreId;
use rayon::{ThreadPool, ThreadPoolBuilder};

/// The logical CPUs this process may run on (its affinity mask), in order.
pub fn allowed_cpus() -> Vec<CoreId> {
    core_affinity::get_core_ids().unwrap_or_default()
}

/// The logical CPUs the process may run on: the affinity mask of its main
/// thread (a pinned worker's own mask holds its one CPU). Empty when the
/// OS does not say.
pub fn process_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, and sched_getaffinity
    // writes at most size_of::<cpu_set_t>() bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(
            libc::getpid(),
            std::mem::size_of::<libc::cpu_set_t>(),
            &mut set,
        ) != 0
        {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to `cpu`; false if the OS refused.
pub fn pin_current(cpu: CoreId) -> bool {
    core_affinity::set_for_current(cpu)
}

/// The CPU the calling thread runs on now, if the OS tells.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions; -1 means unknown.
    let c = unsafe { libc::sched_getcpu() };
    usize::try_from(c).ok()
}

/// A sense-counting barrier that spins (with `spin_loop` hints) instead of
/// sleeping, so that leaving it costs about one cache-line transfer rather
/// than a futex wake-up. Only for at most one thread per CPU.
pub struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    /// A barrier for `n` threads.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Waits until all `n` threads have called `wait` in this round.
    pub fn wait(&self) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // Reset before releasing: the next round's arrivals only start
            // after they see the new generation.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
        } else {
            while self.generation.load(Ordering::Acquire) == gen {
                std::hint::spin_loop();
            }
        }
    }
}

/// A rayon pool whose thread `i` is pinned to `cpus[i]`.
pub struct Team {
    pool: ThreadPool,
    cpus: Vec<CoreId>,
    pinned: bool,
    /// Thread ids of the pool's threads, in index order.
    tids: Vec<u64>,
}

impl Team {
    /// Builds the pool and checks where each thread really runs.
    pub fn new(cpus: &[CoreId]) -> Result<Self> {
        let ids = cpus.to_vec();
        let pool = ThreadPoolBuilder::new()
            .num_threads(ids.len())
            .thread_name(|i| format!("calibrate-{i}"))
            .start_handler(move |i| {
                pin_current(ids[i]);
            })
            .build()
            .map_err(|e| anyhow!("{e}"))
            .context("could not start the pinned thread pool")?;
        let on: Vec<Option<usize>> = pool.broadcast(|_| current_cpu());
        let pinned = on.iter().zip(cpus).all(|(got, want)| *got == Some(want.id));
        let tids = pool.broadcast(|_| gettid());
        Ok(Self {
            pool,
            cpus: cpus.to_vec(),
            pinned,
            tids,
        })
    }

    /// Number of threads.
    pub fn threads(&self) -> usize {
        self.cpus.len()
    }

    /// The thread ids of the pool's threads.
    pub fn tids(&self) -> &[u64] {
        &self.tids
    }

    /// Whether every thread was found on its CPU.
    pub fn pinned(&self) -> bool {
        self.pinned
    }

    /// Runs `f(i)` once on every thread `i` and collects the results in
    /// thread order (how per-thread buffers get their first touch).
    pub fn each<R: Send>(&self, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
        self.pool.broadcast(|ctx| f(ctx.index()))
    }

    /// `count` timed repetitions of `work(&mut state_i, inner)` on all
    /// threads at once. Each repetition starts when all threads have passed
    /// a barrier and ends when the last one reaches the next barrier; the
    /// returned readings are thread 0's view of that interval, with the
    /// interference counters it read just before and after it (outside the
    /// timed interval, once every thread has arrived).
    pub fn time_batch<S: Send>(
        &self,
        states: &[Mutex<S>],
        inner: u64,
        count: usize,
        work: impl Fn(&mut S, u64) + Sync,
    ) -> Vec<BatchReading> {
        assert_eq!(states.len(), self.threads(), "one state per thread");
        let barrier = SpinBarrier::new(self.threads());
        let mut all = self.pool.broadcast(|ctx| {
            let i = ctx.index();
            let mut state = states[i].lock().unwrap_or_else(|p| p.into_inner());
            let mut readings = Vec::with_capacity(if i == 0 { count } else { 0 });
            for _ in 0..count {
                // All threads are here before the counters are read, so a
                // thread that came late (descheduled in between) is not
                // charged to this timing.
                barrier.wait();
                let before = (i == 0).then(|| Counters::read(&self.tids));
                barrier.wait();
                let t0 = Instant::now();
                work(&mut state, inner);
                barrier.wait();
                let d = t0.elapsed();
                if let Some(b) = before {
                    readings.push(b.between(&Counters::read(&self.tids), d));
                }
            }
            readings
        });
        all.swap_remove(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn barrier_separates_rounds() {
        let n = 4;
        let b = SpinBarrier::new(n);
        let counter = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..n {
                s.spawn(|| {
                    for round in 0..50u64 {
                        counter.fetch_add(1, Ordering::SeqCst);
                        b.wait();
                        assert!(counter.load(Ordering::SeqCst) >= (round + 1) * n as u64);
                        b.wait();
                    }
                });
            }
        });
        assert_eq!(counter.load(Ordering::SeqCst), 50 * n as u64);
    }

    #[test]
    fn team_runs_everywhere_and_times() {
        let cpus = allowed_cpus();
        let team = Team::new(&cpus).unwrap();
        assert_eq!(team.each(|i| i), (0..cpus.len()).collect::<Vec<_>>());
        let states: Vec<Mutex<u64>> = (0..cpus.len()).map(|_| Mutex::new(0)).collect();
        let t = team.time_batch(&states, 3, 5, |s, inner| *s += inner);
        assert_eq!(t.len(), 5);
        assert!(states.iter().all(|s| *s.lock().unwrap() == 15));
    }
}
