//! False sharing (lecture §2.7.4, §3.4, thought question 2): each thread
//! increments its own counter; the counters lie on one cache line
//! (adjacent), one line each (padded), or in a register with one store at
//! the end (local).
//!
//! The increments are calibrate's ([`calibrate::harness::kernels::increment`]), so
//! the kernel and the microbenchmark whose figures predict it run the same
//! instructions: relaxed load and store of an `AtomicU64` (plain moves, no
//! locked instruction), every thread on its own counter, exactly the
//! lecture's `bad[tid]++`. The local variant's sum is calibrate's too.

use std::hint::black_box;
use std::sync::atomic::Ordering::Relaxed;

use calibrate::harness::kernels::increment::{bump, LocalTable, OwnLine as Padded, SharedLine};

use anyhow::{ensure, Result};

use super::team::{team, time};
use super::work::{Demand, Work};
use super::{measurement, Kernel, Measurement, Options};
use crate::error::BadInput;

/// The counters of all threads in both layouts, and the table the local
/// variant reads (the lecture's `ro[]`: real work for the local sum).
pub struct Counters {
    /// Eight threads' counters to a line.
    pub adjacent: Vec<SharedLine>,
    pub padded: Vec<Padded>,
    pub table: LocalTable,
}

impl Counters {
    pub fn new(threads: usize) -> Self {
        Self {
            adjacent: (0..threads.div_ceil(8))
                .map(|_| SharedLine::default())
                .collect(),
            padded: (0..threads).map(|_| Padded::default()).collect(),
            table: LocalTable::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Adjacent,
    Padded,
    Local,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Adjacent, Variant::Padded, Variant::Local];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Adjacent => "adjacent",
            Variant::Padded => "padded",
            Variant::Local => "local",
        }
    }

    /// Declared work: `incs` increments per thread on `threads` threads.
    pub fn work(self, incs: usize, threads: usize) -> Work {
        let n = incs as f64;
        let demand = match self {
            // 8-byte counters: up to 8 threads per 64-byte line.
            Variant::Adjacent => Demand::Increments {
                per_thread: n,
                sharers: (threads as f64).min(8.0),
            },
            Variant::Padded => Demand::Increments {
                per_thread: n,
                sharers: 1.0,
            },
            Variant::Local => Demand::LocalSum {
                steps_per_thread: n,
            },
        };
        Work {
            demands: vec![demand],
        }
    }
}

/// Thread `tid` increments its counter `incs` times.
pub fn run(v: Variant, c: &Counters, tid: usize, incs: usize) {
    match v {
        Variant::Adjacent => bump(&c.adjacent[tid / 8].0[tid % 8], incs as u64),
        Variant::Padded => bump(&c.padded[tid].0, incs as u64),
        Variant::Local => {
            // Accumulate in a register over the table from entry `tid` on,
            // then one store.
            let local = c.table.sum(tid, incs as u64);
            let total = c.padded[tid].0.load(Relaxed) + black_box(local);
            c.padded[tid].0.store(total, Relaxed);
        }
    }
}

/// False sharing: `size` increments per thread (default 2 Mi).
pub struct FalseSharing;

impl Kernel for FalseSharing {
    fn name(&self) -> &'static str {
        "false-sharing"
    }

    fn run(&self, o: &Options) -> Result<Vec<Measurement>> {
        let incs = o.size.unwrap_or(2 << 20);
        ensure!(
            incs >= 1,
            BadInput("--size must be at least 1 increment".into())
        );
        let team = team(o.threads)?;
        let counters = Counters::new(o.threads);
        let mut out = Vec::new();
        for v in Variant::ALL {
            let work = Ok(v.work(incs, o.threads));
            let mut beside = o.beside(&work, o.threads);
            let s = time(&o.plan, &mut beside, || {
                team.each(|tid| run(v, &counters, tid, incs));
            })?;
            let paired = beside.finish();
            out.push(
                measurement("false-sharing", v.name(), o.threads, incs, s, work, true)
                    .with_paired(paired),
            );
        }
        Ok(out)
    }

    fn pairs(&self) -> &'static [(&'static str, &'static str)] {
        &[("adjacent", "padded"), ("adjacent", "local")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_counts_exactly() {
        let c = Counters::new(4);
        std::thread::scope(|s| {
            for tid in 0..4 {
                let c = &c;
                s.spawn(move || {
                    for v in Variant::ALL {
                        run(v, c, tid, 1000);
                    }
                });
            }
        });
        for tid in 0..4 {
            assert_eq!(c.adjacent[0].0[tid].load(Relaxed), 1000);
            // 1000 increments, then the local sum of 1000 table entries
            // alternating 0 and 1.
            assert_eq!(c.padded[tid].0.load(Relaxed), 1500);
        }
        assert_eq!(std::mem::size_of::<Padded>(), 64);
    }
}
