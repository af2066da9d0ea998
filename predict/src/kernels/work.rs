//! What a kernel declares it does, and the time the machine profile says
//! that takes: the slowest of its resources binds (the Roofline's max of
//! compute and traffic times, extended to locks and line transfers).

use models::contention::{line_migration_s, MeasuredLock};
use models::little::sweep_time_s;
use models::profile::CeilingKernel;
use serde::Serialize;

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
    },
    /// Memory traffic of a streaming loop: `bytes` as the kernel counts them
    /// (loads + stores), `bytes_wa` with the write-allocate read of each
    /// stored line; `mix` is the STREAM kernel with the same load/store mix
    /// and `per_thread_bytes` the working set, which pick the bandwidth.
    Memory {
        bytes: f64,
        bytes_wa: f64,
        mix: &'static str,
        per_thread_bytes: f64,
    },
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
    /// (`calibrate::kernels::bins`), per thread, at the calibrated time per
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

    /// Bytes as the kernel counts them (no write-allocate).
    pub fn bytes(&self) -> f64 {
        self.demands
            .iter()
            .map(|d| match d {
                Demand::Memory { bytes, .. } => *bytes,
                _ => 0.0,
            })
            .sum()
    }
}

/// The resource of a [`Demand::Memory`] term.
pub const MEMORY_BANDWIDTH: &str = "memory bandwidth";

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
    let p = threads as f64;
    let mut terms = Vec::new();
    let mut load_store_s = 0.0;
    for d in &work.demands {
        terms.push(match d {
            Demand::Flops {
                flops,
                precision,
                ceiling,
            } => {
                let (rate, name) = m.flops_ceiling(precision, threads, *ceiling)?;
                Term {
                    resource: "compute",
                    seconds: flops / rate,
                    explain: format!(
                        "flops / ceiling = {flops:.4e} / {rate:.4e} FLOP/s ({name}, §4.4)"
                    ),
                }
            }
            Demand::Memory {
                bytes_wa,
                mix,
                per_thread_bytes,
                ..
            } => {
                let bw = m.stream_bw_wa(mix, threads, *per_thread_bytes)?;
                Term {
                    resource: MEMORY_BANDWIDTH,
                    seconds: sweep_time_s(*bytes_wa, bw).unwrap_or(0.0),
                    explain: format!(
                        "bytes (with write-allocate) / bandwidth = {bytes_wa:.4e} B / {bw:.4e} B/s \
                         (STREAM {mix}, {threads} thread(s), {per_thread_bytes:.3e} B per thread; §2.5, §4.3)"
                    ),
                }
            }
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
    if load_store_s > 0.0 {
        let memory_s = terms
            .iter()
            .filter(|t| t.resource == MEMORY_BANDWIDTH)
            .map(|t| t.seconds)
            .sum::<f64>();
        terms.push(Term {
            resource: "memory + load/store",
            seconds: memory_s + load_store_s,
            explain: format!(
                "the loops' load/store work does not overlap their line transfers (ECM): \
                 memory {memory_s:.3e} s + load/store {load_store_s:.3e} s"
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
mod tests {
    use super::*;
    use models::profile::{ComputeCeiling, MemoryLevel, Profile, Provenance};
    use models::Estimate;
    use serde_json::json;

    /// A synthetic machine: 100 GFLOP/s f32 peak and a 40 GFLOP/s f64
    /// dgemm ceiling on 2 threads, DRAM triad 40 GB/s and loads 50 GB/s
    /// with write-allocate, an L2-sized copy point at 80 GB/s, a 1 MiB
    /// cache, 50 ns line transfers, increments of 0.5 ns alone on a line
    /// and 12 ns (2 threads) or 30 ns (4) sharing one, local sums of
    /// 0.75 ns per step, counting-sort loops of 0.25 ns (histogram) and
    /// 0.5 ns (scatter) per item, 2 GHz, a mutex around a 5 ns critical
    /// section at 10 ns per op alone and 20 ns contended, around an empty
    /// one at 8 and 14 ns, and spread mutexes 12 ns per op alone and 20 ns
    /// per thread on 2 threads (a 16 ns line migration).
    fn machine() -> Profile {
        let mut p = Profile::new(Provenance {
            clock_hz: Some(2e9),
            logical_cpus: 2,
            ..Default::default()
        });
        p.ceilings.push(ComputeCeiling {
            name: "f32 fma".into(),
            precision: "f32".into(),
            isa: "avx2".into(),
            fma: true,
            threads: 2,
            flops: Estimate::exact(100e9),
            kernel: CeilingKernel::Registers,
        });
        p.ceilings.push(ComputeCeiling {
            name: "f64 dgemm".into(),
            precision: "f64".into(),
            isa: "avx2".into(),
            fma: true,
            threads: 2,
            flops: Estimate::exact(40e9),
            kernel: CeilingKernel::Dgemm,
        });
        p.levels.push(MemoryLevel {
            name: "L2".into(),
            size_bytes: Some(1048576.0),
            latency_s: None,
            bandwidth_1t_Bps: None,
            bandwidth_Bps: None,
        });
        p.summary.core_to_core_latency_s = Some(50e-9);
        p.sections.insert(
            "c2c".into(),
            json!({"increments": {
                "own_line": {"threads": 2, "per_increment_s": {"median": 0.5e-9}},
                "shared_line": [
                    {"threads": 2, "per_increment_s": {"median": 12e-9}},
                    {"threads": 4, "per_increment_s": {"median": 30e-9}}
                ],
                "local": {"threads": 2, "per_step_s": {"median": 0.75e-9}},
                "histogram": {"threads": 2, "bins": 256, "per_item_s": {"median": 0.25e-9}},
                "scatter": {"threads": 2, "bins": 256, "per_item_s": {"median": 0.5e-9}}
            }}),
        );
        p.sections.insert(
            "stream".into(),
            json!({
                "dram_bytes": 67108864.0,
                "dram": [
                    {"kernel": "triad", "threads": 2, "bandwidth_write_allocate_Bps": 40e9},
                    {"kernel": "load", "threads": 2, "bandwidth_write_allocate_Bps": 50e9}
                ],
                "sweeps": [{"threads": 2, "points": [
                    {"kernel": "copy", "per_thread_bytes": 262144.0, "bandwidth_write_allocate_Bps": 80e9},
                    {"kernel": "copy", "per_thread_bytes": 16384.0, "bandwidth_write_allocate_Bps": 200e9}
                ]}]
            }),
        );
        p.sections.insert(
            "lock".into(),
            json!({"critical_steps": 4, "step_s": 1.25e-9, "kinds": [{"kind": "mutex", "points": [
                {"threads": 1, "oversubscribed": false, "throughput_ops": {"median": 1e8}},
                {"threads": 2, "oversubscribed": false, "throughput_ops": {"median": 5e7}}
            ]}, {"kind": "mutex_empty", "points": [
                {"threads": 1, "oversubscribed": false, "throughput_ops": {"median": 1.25e8}},
                {"threads": 2, "oversubscribed": false, "throughput_ops": {"median": 1.0 / 14e-9}}
            ]}, {"kind": "mutex_spread", "points": [
                {"threads": 1, "oversubscribed": false, "throughput_ops": {"median": 1.0 / 12e-9}},
                {"threads": 2, "oversubscribed": false, "throughput_ops": {"median": 1e8}}
            ]}]}),
        );
        p
    }

    #[test]
    fn bandwidth_bound_stream_uses_the_dram_triad() {
        let p = machine();
        let m = Machine::new(&p);
        let w = Work {
            demands: vec![
                Demand::Flops {
                    flops: 3e6,
                    precision: "f32",
                    ceiling: CeilingKernel::Registers,
                },
                Demand::Memory {
                    bytes: 20e6,
                    bytes_wa: 24e6,
                    mix: "triad",
                    per_thread_bytes: 64e6,
                },
            ],
        };
        let pr = predict(&w, &m, 2).unwrap();
        // 24 MB / 40 GB/s = 600 µs against 3 MFLOP / 100 GFLOP/s = 30 µs.
        assert_eq!(pr.binding, "memory bandwidth");
        assert!((pr.seconds - 600e-6).abs() < 1e-15);
        assert_eq!(pr.terms.len(), 2);
        assert!((pr.terms[0].seconds - 30e-6).abs() < 1e-15);
    }

    #[test]
    fn working_sets_inside_the_sweep_read_its_curve() {
        let p = machine();
        let m = Machine::new(&p);
        let copy = |per_thread_bytes| Work {
            demands: vec![Demand::Memory {
                bytes: 8e6,
                bytes_wa: 8e6,
                mix: "copy",
                per_thread_bytes,
            }],
        };
        let secs = |b| predict(&copy(b), &m, 2).unwrap().seconds;
        // On the 256 KiB copy point: 80 GB/s.
        assert!((secs(262144.0) - 100e-6).abs() < 1e-15);
        // Halfway in log-size between 16 KiB (200 GB/s) and 256 KiB: 140 GB/s.
        assert!((secs(65536.0) - 8e6 / 140e9).abs() < 1e-12);
        // Below the sweep: its first point; beyond it: the DRAM figure
        // (no copy at the DRAM size in this profile, so it is missing).
        assert!((secs(4096.0) - 8e6 / 200e9).abs() < 1e-15);
        assert_eq!(predict(&copy(1e6), &m, 2).unwrap_err().fix, "stream");
    }

    #[test]
    fn locks_line_transfers_and_chains() {
        let p = machine();
        let m = Machine::new(&p);
        let section = |lanes, data_lines, critical_s| Work {
            demands: vec![Demand::Lock {
                ops: 1e6,
                kind: LockKindName::Mutex,
                lanes,
                critical_s,
                data_lines,
            }],
        };
        let lock = |lanes, data_lines| section(lanes, data_lines, 5e-9);
        let pr = predict(&lock(1.0, 0.0), &m, 2).unwrap();
        assert_eq!(pr.binding, "lock");
        assert!((pr.seconds - 20e-3).abs() < 1e-12);
        let secs = |w: Work| predict(&w, &m, 2).unwrap().seconds;
        // Shorter and longer critical sections: t_p = 14 ns + 6 ns · cs/5 ns.
        assert!((secs(section(1.0, 0.0, 0.0)) - 14e-3).abs() < 1e-12);
        assert!((secs(section(1.0, 0.0, 2.5e-9)) - 17e-3).abs() < 1e-12);
        assert!((secs(section(1.0, 0.0, 10e-9)) - 26e-3).abs() < 1e-12);
        // 256 locks: the threads in parallel, each acquisition finding the
        // lock's line at the other core half the time: (10 + ½·16) ns / 2.
        assert!((secs(lock(256.0, 0.0)) - 9e-3).abs() < 1e-12);
        // One data line besides the lock's, migrating after each hand-off.
        assert!((secs(lock(1.0, 1.0)) - 36e-3).abs() < 1e-12);
        // 2 sharers: the measured 12 ns per increment; more sharers than
        // threads count as the threads; one counter per line: 0.5 ns.
        let inc = |sharers| Work {
            demands: vec![Demand::Increments {
                per_thread: 1e6,
                sharers,
            }],
        };
        let fs = predict(&inc(2.0), &m, 2).unwrap();
        assert_eq!(fs.binding, "line transfers");
        assert!((fs.seconds - 12e-3).abs() < 1e-12);
        assert!(fs.terms[0].explain.contains("lecture's bound"));
        assert!((predict(&inc(8.0), &m, 2).unwrap().seconds - 12e-3).abs() < 1e-12);
        assert!((predict(&inc(1.0), &m, 2).unwrap().seconds - 0.5e-3).abs() < 1e-12);
        // 3 sharers on 4 threads: the nearest measured count (a tie goes
        // to the first measured, 2).
        assert!((predict(&inc(3.0), &m, 4).unwrap().seconds - 12e-3).abs() < 1e-12);
        // A local sum: 1e6 steps of 0.75 ns, 1.5 cycles at 2 GHz.
        let local = Work {
            demands: vec![Demand::LocalSum {
                steps_per_thread: 1e6,
            }],
        };
        let pr = predict(&local, &m, 2).unwrap();
        assert_eq!(pr.binding, "local sum");
        assert!((pr.seconds - 0.75e-3).abs() < 1e-12);
        assert!(
            pr.terms[0].explain.contains("1.50 cycles"),
            "{}",
            pr.terms[0].explain
        );
    }

    #[test]
    fn sort_loops_add_to_the_memory_time() {
        let p = machine();
        let m = Machine::new(&p);
        let memory = Demand::Memory {
            bytes: 20e6,
            bytes_wa: 24e6,
            mix: "triad",
            per_thread_bytes: 64e6,
        };
        let bin_loop = |kind| Demand::BinLoop {
            kind,
            items_per_thread: 1e6,
        };
        let w = Work {
            demands: vec![
                memory.clone(),
                bin_loop(BinLoopName::Histogram),
                bin_loop(BinLoopName::Scatter),
            ],
        };
        // 600 µs of traffic, then 250 + 500 µs of loops, which add to it.
        let pr = predict(&w, &m, 2).unwrap();
        assert_eq!(pr.binding, "memory + load/store");
        assert!((pr.seconds - 1.35e-3).abs() < 1e-12, "{}", pr.seconds);
        // Without memory traffic, the loops alone.
        let w = Work {
            demands: vec![bin_loop(BinLoopName::Scatter)],
        };
        assert!((predict(&w, &m, 2).unwrap().seconds - 0.5e-3).abs() < 1e-12);
        // A profile from before the loops were calibrated: c2c fixes it.
        let mut old = machine();
        old.sections.get_mut("c2c").unwrap()["increments"]
            .as_object_mut()
            .unwrap()
            .remove("scatter");
        let e = predict(&w, &Machine::new(&old), 2).unwrap_err();
        assert_eq!(e.fix, "c2c");
    }

    #[test]
    fn matmul_runs_at_the_dgemm_ceiling() {
        let p = machine();
        let m = Machine::new(&p);
        // n = 2000 on 2 threads: 1.6e10 FLOP / 40 GFLOP/s = 0.4 s; its
        // memory (8n²·5 = 160 MB loaded from DRAM at 50 GB/s) takes 3.2 ms.
        let pr = predict(&crate::kernels::matmul::work(2000, 2), &m, 2).unwrap();
        assert_eq!(pr.binding, "compute");
        assert!((pr.seconds - 0.4).abs() < 1e-12, "{}", pr.seconds);
        assert!((pr.terms[1].seconds - 3.2e-3).abs() < 1e-12);
        assert!(pr.terms[0].explain.contains("f64 dgemm"));
        // Without a dgemm ceiling there is no prediction, and flops fixes it.
        let mut p = machine();
        p.ceilings.retain(|c| c.kernel != CeilingKernel::Dgemm);
        let e = predict(&crate::kernels::matmul::work(2000, 2), &Machine::new(&p), 2).unwrap_err();
        assert_eq!(e.fix, "flops");
        assert!(
            e.to_string().contains("f64 dgemm ceiling on 2 thread(s)"),
            "{e}"
        );
    }

    #[test]
    fn missing_figures_say_which_calibration_fixes_them() {
        let p = Profile::new(Provenance::default());
        let m = Machine::new(&p);
        let w = Work {
            demands: vec![Demand::Lock {
                ops: 1.0,
                kind: LockKindName::Mutex,
                lanes: 1.0,
                critical_s: 0.0,
                data_lines: 0.0,
            }],
        };
        let e = predict(&w, &m, 2).unwrap_err();
        assert_eq!(e.fix, "lock");
        assert!(e.to_string().contains("calibrate --only lock"), "{e}");
    }
}
