//! What a kernel declares it does, and the time the machine profile says
//! that takes: the slowest of its resources binds (the Roofline's max of
//! compute and traffic times, extended to locks and line transfers).

use models::contention::{line_migration_s, MeasuredLock};
use models::profile::CeilingKernel;
use serde::Serialize;

use models::kernel::{RandomAccesses, Traffic};

use super::terms;
use crate::loop_figures::Bound;
use crate::machine::{LockKind, Machine, Missing};

/// One resource a kernel run uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "resource", rename_all = "kebab-case")]
pub enum Demand {
    /// Floating-point operations on all the run's threads, at the rate of
    /// the `ceiling` kind of code (§4.4).
    Flops {
        flops: f64,
        precision: &'static str,
        ceiling: CeilingKernel,
        /// The instruction set whose ceiling applies (`None`: the highest).
        isa: Option<&'static str>,
    },
    /// Streamed memory traffic (`models::kernel::Traffic`: loads, stores,
    /// write-allocate reads) of a loop whose working set is
    /// `per_thread_bytes` per thread, which picks the level and its roofs.
    Memory {
        traffic: Traffic,
        per_thread_bytes: f64,
    },
    /// Random accesses, each a separate miss into a region, served at the
    /// region's latency with the core's misses overlapping (§4.3).
    Random {
        accesses: RandomAccesses,
        huge_pages: bool,
    },
    /// Steps of a loop-carried floating-point chain per thread, each
    /// waiting for the one before (§4.2).
    Chain { steps_per_thread: f64 },
    /// Operations under a lock of a measured kind, spread over `lanes`
    /// independent locks (1 = a global lock); the critical section runs
    /// `critical_s` seconds of work (besides a load and a store of the
    /// protected data) and writes `data_lines` cache lines of shared data
    /// apart from the lock's own line, which move with it (§4.5).
    Lock {
        ops: f64,
        kind: LockKindName,
        lanes: f64,
        critical_s: f64,
        data_lines: f64,
    },
    /// Dependent load-add-store increments of counters, `sharers` threads'
    /// counters on each cache line: 1 when every counter has its own line,
    /// more under false sharing (§3.4).
    Increments { per_thread: f64, sharers: f64 },
    /// Steps of a local sum, one L1 load and one dependent register add
    /// each, at the calibrated time per step (§3.4's fix for false sharing).
    LocalSum { steps_per_thread: f64 },
    /// Items of one of the counting sort's loops
    /// (`calibrate::harness::kernels::bins`), per thread, at the calibrated time per
    /// item in L1. This is load/store-port work, which the core does not
    /// overlap with the same loop's cache-line transfers, so its time adds
    /// to the memory term instead of competing with it (the ECM model's
    /// T = T_nOL + T_data, for the non-overlapping load/store cycles).
    BinLoop {
        kind: BinLoopName,
        items_per_thread: f64,
    },
}

/// The counting sort's two loops, as they appear in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BinLoopName {
    Histogram,
    Scatter,
}

impl BinLoopName {
    fn key(self) -> &'static str {
        match self {
            BinLoopName::Histogram => "histogram",
            BinLoopName::Scatter => "scatter",
        }
    }
}

/// Lock kinds as they appear in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKindName {
    Mutex,
    Spin,
}

/// Everything a kernel variant does in one timed run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Work {
    pub demands: Vec<Demand>,
}

impl Work {
    /// Floating-point operations (0 when none are declared).
    pub fn flops(&self) -> f64 {
        self.demands
            .iter()
            .map(|d| match d {
                Demand::Flops { flops, .. } => *flops,
                _ => 0.0,
            })
            .sum()
    }

    /// Bytes as the kernel counts them (loads + stores, no write-allocate).
    pub fn bytes(&self) -> f64 {
        self.demands
            .iter()
            .map(|d| match d {
                Demand::Memory { traffic, .. } => traffic.counted_bytes(),
                _ => 0.0,
            })
            .sum()
    }
}

/// The resource of a [`Demand::Memory`] term.
pub const MEMORY_BANDWIDTH: &str = "memory bandwidth";

/// The resource of a [`Demand::Chain`] term.
pub const CHAIN: &str = "loop-carried chain";

/// The time one resource takes, with the formula used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Term {
    pub resource: &'static str,
    pub seconds: f64,
    pub explain: String,
}

/// A kernel's predicted time: the slowest resource binds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub seconds: f64,
    pub binding: &'static str,
    pub terms: Vec<Term>,
}

/// Predicts `work` on `threads` threads of the profiled machine:
/// T = max over resources of each resource's time, where the load/store
/// work of [`Demand::BinLoop`]s counts as one resource with the memory
/// traffic (their sum).
pub fn predict(work: &Work, m: &Machine, threads: usize) -> Result<Prediction, Missing> {
    predict_at(work, m, threads, Bound::Point)
}

/// [`predict`] with the profile's figures read at `bound`: the point
/// estimates, or the ends of their intervals for the prediction's range.
pub fn predict_at(
    work: &Work,
    m: &Machine,
    threads: usize,
    bound: Bound,
) -> Result<Prediction, Missing> {
    let p = threads as f64;
    let mut terms = Vec::new();
    let mut load_store_s = 0.0;
    for d in &work.demands {
        terms.push(match d {
            Demand::Flops {
                flops,
                precision,
                ceiling,
                isa,
            } => terms::compute(m, *flops, precision, threads, *ceiling, *isa, bound)?,
            Demand::Memory {
                traffic,
                per_thread_bytes,
            } => terms::memory(m, traffic, threads, *per_thread_bytes, bound)?,
            Demand::Random {
                accesses,
                huge_pages,
            } => terms::random(m, accesses, threads, *huge_pages, bound)?,
            Demand::Chain { steps_per_thread } => terms::chain(m, *steps_per_thread, bound)?,
            Demand::Lock {
                ops,
                kind,
                lanes,
                critical_s,
                data_lines,
            } => {
                let (t1, tp, section) = match kind {
                    LockKindName::Mutex => {
                        let (t1, at) = m.mutex_op_s(1, *critical_s)?;
                        let (tp, _) = m.mutex_op_s(threads, *critical_s)?;
                        let section = format!(
                            "a {critical_s:.2e} s critical section, linear between the measured \
                             empty and {at:.2e} s ones"
                        );
                        (t1, tp, section)
                    }
                    LockKindName::Spin => (
                        m.lock_op_s(LockKind::Spin, 1)?,
                        m.lock_op_s(LockKind::Spin, threads)?,
                        "the measured critical section".to_string(),
                    ),
                };
                let (x1, xp) = (
                    1.0 / m.lock_op_s(LockKind::MutexSpread, 1)?,
                    1.0 / m.lock_op_s(LockKind::MutexSpread, threads)?,
                );
                let migration = line_migration_s(x1, xp, p);
                let lock = MeasuredLock::new(t1, tp, migration).map_err(|e| Missing {
                    what: format!("usable lock figures ({e})"),
                    fix: "lock",
                })?;
                Term {
                    resource: "lock",
                    seconds: lock.time_s(*ops, p, *lanes, *data_lines).unwrap_or(0.0),
                    explain: format!(
                        "max(ops·(t_p + d·m)/locks, ops·(t_1 + (1+d)·(p−1)/p·m)/p) with \
                         ops = {ops:.4e}, locks = {lanes}, d = {data_lines} data line(s), \
                         t_1 = {t1:.3e} s, t_p = {tp:.3e} s ({kind:?} on 1 and {threads} thread(s), {section}), \
                         line migration m = (p/X_p − 1/X_1)·p/(p−1) = {migration:.3e} s from mutexes \
                         spread so that threads rarely wait (X_1 = {x1:.3e}, X_p = {xp:.3e} op/s; §4.5)"
                    ),
                }
            }
            Demand::Increments {
                per_thread,
                sharers,
            } => {
                let s = sharers.min(p).max(1.0) as usize;
                let (t_inc, measured_at) = m.increment_s(s)?;
                let lecture = match (s, m.line_transfer_s()) {
                    (1, _) | (_, Err(_)) => String::new(),
                    (_, Ok(tt)) => format!(
                        "; one line transfer per write, the lecture's bound, would give {:.3e} s",
                        per_thread * tt
                    ),
                };
                Term {
                    resource: if s > 1 { "line transfers" } else { "store forwarding" },
                    seconds: per_thread * t_inc,
                    explain: format!(
                        "increments · t_increment = {per_thread:.3e} · {t_inc:.3e} s (measured: {}, §3.4){lecture}",
                        if s > 1 {
                            format!("counters of {measured_at} threads on one line")
                        } else {
                            "a counter alone on its line".to_string()
                        }
                    ),
                }
            }
            Demand::LocalSum { steps_per_thread } => {
                let t = m.local_step_s()?;
                let cycles = m
                    .clock_hz()
                    .map_or(String::new(), |f| format!(", {:.2} cycles", t * f));
                Term {
                    resource: "local sum",
                    seconds: steps_per_thread * t,
                    explain: format!(
                        "steps × t_step = {steps_per_thread:.3e} × {t:.3e} s (calibrated L1 load + dependent add{cycles})"
                    ),
                }
            }
            Demand::BinLoop {
                kind,
                items_per_thread,
            } => {
                let t = m.bin_item_s(kind.key())?;
                let seconds = items_per_thread * t;
                load_store_s += seconds;
                Term {
                    resource: "load/store",
                    seconds,
                    explain: format!(
                        "items × t_item = {items_per_thread:.3e} × {t:.3e} s (calibrated {} loop in L1, §2.9)",
                        kind.key()
                    ),
                }
            }
        });
    }
    let memory_s = terms
        .iter()
        .filter(|t| t.resource == MEMORY_BANDWIDTH)
        .map(|t| t.seconds)
        .sum::<f64>();
    if load_store_s > 0.0 {
        terms.push(Term {
            resource: "memory + load/store",
            seconds: memory_s + load_store_s,
            explain: format!(
                "the loops' load/store work does not overlap their line transfers (ECM): \
                 memory {memory_s:.3e} s + load/store {load_store_s:.3e} s"
            ),
        });
    }
    let chain_s: f64 = terms
        .iter()
        .filter(|t| t.resource == CHAIN)
        .map(|t| t.seconds)
        .sum();
    if chain_s > 0.0 && memory_s > 0.0 {
        terms.push(Term {
            resource: "memory + chain",
            seconds: memory_s + chain_s,
            explain: format!(
                "a loop-carried chain fills the out-of-order window, so the loop's line \
                 transfers do not run ahead of it and the two add (ECM's non-overlapping \
                 in-core time, as measured): memory {memory_s:.3e} s + chain {chain_s:.3e} s"
            ),
        });
    }
    let top = terms
        .iter()
        .max_by(|a, b| a.seconds.total_cmp(&b.seconds))
        .cloned()
        .ok_or_else(|| Missing {
            what: "any declared work".into(),
            fix: "all",
        })?;
    Ok(Prediction {
        seconds: top.seconds,
        binding: top.resource,
        terms,
    })
}

#[cfg(test)]
mod tests;
