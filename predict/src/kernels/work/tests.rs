//! The model's terms on hand-computed cases of a synthetic machine.

use super::*;
use crate::machine::Now;
use models::profile::{ComputeCeiling, MemoryLevel, Profile, Provenance, ReportedCache};
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
    p.sections
        .insert_json(
            "c2c",
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
        )
        .unwrap();
    p.sections.insert_json(
        "stream",
        json!({
            "dram_bytes": 67108864.0,
            "dram": [
                {"kernel": "triad", "threads": 2, "per_thread_bytes": 33554432.0, "bandwidth_write_allocate_Bps": 40e9},
                {"kernel": "load", "threads": 2, "per_thread_bytes": 33554432.0, "bandwidth_write_allocate_Bps": 50e9}
            ],
            "sweeps": [{"threads": 2, "points": [
                {"kernel": "copy", "per_thread_bytes": 262144.0, "bandwidth_write_allocate_Bps": 80e9},
                {"kernel": "copy", "per_thread_bytes": 16384.0, "bandwidth_write_allocate_Bps": 200e9}
            ]}]
        }),
    ).unwrap();
    p.sections.insert_json(
        "latency",
        json!({"line_bytes": 64, "points": [
            {"size_bytes": 16384, "pages": "4KiB", "latency_s": {"median": 1e-9}},
            {"size_bytes": 1048576, "pages": "4KiB", "latency_s": {"median": 5e-9}},
            {"size_bytes": 67108864, "pages": "4KiB", "latency_s": {"median": 100e-9, "ci_lo": 90e-9, "ci_hi": 120e-9}}
        ]}),
    ).unwrap();
    p.sections.insert_json(
        "mlp",
        json!({"points": [{"k": 1, "bandwidth_Bps": 0.64e9}, {"k": 16, "bandwidth_Bps": 6.4e9}]}),
    ).unwrap();
    p.sections
        .insert_json(
            "flops",
            json!({"chain": {"add": {"median": 1e-9, "ci_lo": 0.9e-9, "ci_hi": 1.1e-9}}}),
        )
        .unwrap();
    p.sections
        .insert_json(
            "lock",
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
        )
        .unwrap();
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
                isa: None,
            },
            Demand::Memory {
                traffic: Traffic::streaming(16e6, 8e6),
                per_thread_bytes: 64e6,
            },
        ],
    };
    let pr = predict(&w, &m, 2).unwrap();
    // The DRAM triad's own mix: 32 MB with write-allocate / 40 GB/s =
    // 800 µs against 3 MFLOP / 100 GFLOP/s = 30 µs. Its stores bind:
    // 8 MB at the 10 GB/s the triad stored at.
    assert_eq!(pr.binding, "memory bandwidth");
    assert!((pr.seconds - 800e-6).abs() < 1e-15, "{}", pr.seconds);
    assert!(pr.terms[1].explain.contains("the write roof binds"));
    assert_eq!(pr.terms.len(), 2);
    assert!((pr.terms[0].seconds - 30e-6).abs() < 1e-15);
}

#[test]
fn working_sets_inside_the_sweep_read_its_curve() {
    let p = machine();
    let m = Machine::new(&p);
    let copy = |per_thread_bytes| Work {
        demands: vec![Demand::Memory {
            traffic: Traffic::streaming(4e6, 4e6),
            per_thread_bytes,
        }],
    };
    let secs = |b| predict(&copy(b), &m, 2).unwrap().seconds;
    // On the 256 KiB copy point: 12 MB with write-allocate at 80 GB/s.
    assert!((secs(262144.0) - 150e-6).abs() < 1e-15);
    // Halfway in log-size between 16 KiB (200 GB/s) and 256 KiB: the
    // time per byte halfway, 1/(½/200 + ½/80) GB/s.
    let mid = 1.0 / (0.5 / 200e9 + 0.5 / 80e9);
    assert!((secs(65536.0) - 12e6 / mid).abs() < 1e-12);
    // Below the sweep: its first point; towards DRAM, between the copy
    // point and the DRAM roofs (whose write roof, 10 GB/s from the
    // triad, gives 400 µs).
    assert!((secs(4096.0) - 12e6 / 200e9).abs() < 1e-15);
    assert!(secs(1e6) > 150e-6 && secs(1e6) < 400e-6);
    assert!((secs(64e6) - 400e-6).abs() < 1e-12);
    // No sweep on 3 threads: the stream calibration fixes it.
    assert_eq!(predict(&copy(1e6), &m, 3).unwrap_err().fix, "stream");
}

/// `ops` operations under `lanes` std mutexes, each critical section
/// `critical_s` long and writing `data_lines` shared lines.
fn mutex(ops: f64, lanes: f64, data_lines: f64, critical_s: f64) -> Work {
    Work {
        demands: vec![Demand::Lock {
            ops,
            kind: LockKindName::Mutex,
            lanes,
            critical_s,
            data_lines,
        }],
    }
}

#[test]
fn locks_line_transfers_and_chains() {
    let p = machine();
    let m = Machine::new(&p);
    let section = |lanes, data_lines, critical_s| mutex(1e6, lanes, data_lines, critical_s);
    let lock = |lanes, data_lines| section(lanes, data_lines, 5e-9);
    let pr = predict(&lock(1.0, 0.0), &m, 2).unwrap();
    assert_eq!(pr.binding, "lock");
    assert!((pr.seconds - 20e-3).abs() < 1e-12);
    let secs = |w: Work| predict(&w, &m, 2).unwrap().seconds;
    let secs1 = |w: Work| predict(&w, &m, 1).unwrap().seconds;
    // Shorter and longer critical sections: t_p = 14 ns + 6 ns · cs/5 ns.
    assert!((secs(section(1.0, 0.0, 0.0)) - 14e-3).abs() < 1e-12);
    assert!((secs(section(1.0, 0.0, 2.5e-9)) - 17e-3).abs() < 1e-12);
    assert!((secs(section(1.0, 0.0, 10e-9)) - 26e-3).abs() < 1e-12);
    // 256 locks: the threads in parallel, each acquisition finding the
    // lock's line at the other core half the time: (10 + ½·16) ns / 2.
    assert!((secs(lock(256.0, 0.0)) - 9e-3).abs() < 1e-12);
    // One data line besides the lock's, migrating after each hand-off.
    assert!((secs(lock(1.0, 1.0)) - 36e-3).abs() < 1e-12);
    // Hand-offs twice as fast now (the paired re-measure of the contended
    // mutex): t_p = 10 ns for the global lock; the 256 locks, which pay
    // t_1 and the migrations, are unchanged, and one thread is too.
    let now = Now {
        handoffs: 2.0,
        ..Now::default()
    };
    let paired = Machine::paired(&p, now);
    assert!((predict(&lock(1.0, 0.0), &paired, 2).unwrap().seconds - 10e-3).abs() < 1e-12);
    assert!((predict(&lock(256.0, 0.0), &paired, 2).unwrap().seconds - 9e-3).abs() < 1e-12);
    assert_eq!(
        predict(&lock(1.0, 0.0), &paired, 1).unwrap().seconds,
        secs1(lock(1.0, 0.0))
    );
    // The spread mutexes twice as fast now: their 10 ns per thread on 2
    // threads are no slower than one thread's 12 ns, so no migration; the
    // 256 locks take t_1 / 2, the global lock its t_p as before.
    let now = Now {
        migrations: 2.0,
        ..Now::default()
    };
    let paired = Machine::paired(&p, now);
    assert!((predict(&lock(256.0, 0.0), &paired, 2).unwrap().seconds - 5e-3).abs() < 1e-12);
    assert!((predict(&lock(1.0, 0.0), &paired, 2).unwrap().seconds - 20e-3).abs() < 1e-12);
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
    // Increments running twice as fast now as when profiled (the paired
    // re-measure): half the time.
    let now = Now {
        increments: 2.0,
        ..Now::default()
    };
    let fast = predict(&inc(2.0), &Machine::paired(&p, now), 2).unwrap();
    assert!((fast.seconds - 6e-3).abs() < 1e-12);
    // A local sum: 1e6 steps of 0.75 ns, 1.5 cycles at 2 GHz.
    let local = Work {
        demands: vec![Demand::LocalSum {
            steps_per_thread: 1e6,
        }],
    };
    let pr = predict(&local, &m, 2).unwrap();
    assert_eq!(pr.binding, "local sum");
    assert!((pr.seconds - 0.75e-3).abs() < 1e-12);
    let now = Now {
        local_sums: 2.0,
        ..Now::default()
    };
    let fast = predict(&local, &Machine::paired(&p, now), 2).unwrap();
    assert!((fast.seconds - 0.375e-3).abs() < 1e-12);
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
        traffic: Traffic::streaming(16e6, 8e6),
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
    // 800 µs of traffic, then 250 + 500 µs of loops, which add to it.
    let pr = predict(&w, &m, 2).unwrap();
    assert_eq!(pr.binding, "memory + load/store");
    assert!((pr.seconds - 1.55e-3).abs() < 1e-12, "{}", pr.seconds);
    // Without memory traffic, the loops alone.
    let w = Work {
        demands: vec![bin_loop(BinLoopName::Scatter)],
    };
    assert!((predict(&w, &m, 2).unwrap().seconds - 0.5e-3).abs() < 1e-12);
    // A profile from before the loops were calibrated: c2c fixes it.
    let mut old = machine();
    old.sections
        .c2c
        .as_mut()
        .unwrap()
        .increments
        .as_mut()
        .unwrap()
        .scatter = None;
    let e = predict(&w, &Machine::new(&old), 2).unwrap_err();
    assert_eq!(e.fix, "c2c");
}

#[test]
fn a_lock_whose_rounds_have_two_states_predicts_both() {
    let lock = mutex(1e6, 1.0, 0.0, 0.0);
    // One state: no pair.
    let p = machine();
    assert_eq!(predict(&lock, &Machine::new(&p), 2).unwrap().states_s, None);
    // The empty section's 2-thread rounds between 10 and 40 ns per op.
    let mut p = machine();
    let t = &mut p.sections.lock.as_mut().unwrap().kinds[1].points[1].throughput_ops;
    t.high_quantile = Some(Estimate::exact(1e8));
    t.low_quantile = Some(Estimate::exact(2.5e7));
    let pr = predict(&lock, &Machine::new(&p), 2).unwrap();
    assert!((pr.seconds - 14e-3).abs() < 1e-12, "the typical round");
    let [fast, slow] = pr.states_s.unwrap();
    assert!((fast - 10e-3).abs() < 1e-12 && (slow - 40e-3).abs() < 1e-12);
    assert!(pr.terms[0].explain.contains("two states"));
    // One thread has no hand-off.
    assert_eq!(predict(&lock, &Machine::new(&p), 1).unwrap().states_s, None);
}

#[test]
fn loads_that_hit_l1_again_add_to_the_memory_time() {
    let mut p = machine();
    let memory = Demand::Memory {
        traffic: Traffic::streaming(16e6, 8e6),
        per_thread_bytes: 64e6,
    };
    let w = Work {
        demands: vec![
            memory,
            Demand::Reuse {
                bytes_per_thread: 32e6,
                window_bytes: 0.0,
            },
        ],
    };
    // Without the L1 read bandwidth the profile says what to run.
    assert_eq!(predict(&w, &Machine::new(&p), 2).unwrap_err().fix, "stream");
    // 800 µs of traffic, then 32 MB at 160 GB/s = 200 µs of L1 loads.
    p.levels.insert(
        0,
        MemoryLevel {
            name: "L1".into(),
            size_bytes: Some(32768.0),
            latency_s: None,
            bandwidth_1t_Bps: Some(Estimate::new(160e9, 150e9, 170e9)),
            bandwidth_Bps: None,
        },
    );
    let m = Machine::new(&p);
    let pr = predict(&w, &m, 2).unwrap();
    assert_eq!(pr.binding, "memory + load/store");
    assert!((pr.seconds - 1.0e-3).abs() < 1e-12, "{}", pr.seconds);
    // The slow end of the interval reads the L1 bandwidth's low end.
    let slow = predict_at(&w, &m, 2, Bound::Slow).unwrap();
    assert!(
        (slow.seconds - (0.8e-3 + 32e6 / 150e9)).abs() < 1e-9,
        "{}",
        slow.seconds
    );
}

#[test]
fn streams_that_restart_at_dram_lose_the_measured_time_per_run() {
    let mut p = machine();
    let work = |per_thread_bytes| Work {
        demands: vec![Demand::Restarts {
            runs_per_thread: 1000.0,
            segment_bytes: 8192.0,
            per_thread_bytes,
        }],
    };
    // Without the restart curve the profile says what to run.
    assert_eq!(
        predict(&work(64e6), &Machine::new(&p), 2).unwrap_err().fix,
        "stream"
    );
    p.sections
        .insert_json(
            "stream",
            json!({"sweeps": [], "restarts": [
                {"threads": 2, "segment_bytes": 4096.0, "per_thread_bytes": 64e6,
                 "per_segment_s": {"point": 100e-9, "lo": 90e-9, "hi": 110e-9}},
                {"threads": 2, "segment_bytes": 16384.0, "per_thread_bytes": 64e6,
                 "per_segment_s": {"point": 300e-9, "lo": 250e-9, "hi": 350e-9}}
            ]}),
        )
        .unwrap();
    let m = Machine::new(&p);
    // 8 KiB lies halfway (in log) between 4 and 16 KiB: 200 ns a run.
    let pr = predict(&work(64e6), &m, 2).unwrap();
    assert!(
        (pr.seconds - 1000.0 * 200e-9).abs() < 1e-12,
        "{}",
        pr.seconds
    );
    assert_eq!(pr.terms[0].resource, "stream restarts");
    // Within the 1 MiB L2 nothing is charged.
    let pr = predict(&work(512e3), &m, 2).unwrap();
    assert!(pr.terms[0].seconds == 0.0 && pr.terms[0].explain.contains("L2"));
}

#[test]
fn reuse_beyond_l1_brings_its_lines_back_from_the_level_that_holds_them() {
    let mut p = machine();
    let level = MemoryLevel::cache;
    // Detected: 36 KB and 840 KB; the OS says 32 KiB and 1 MiB.
    p.levels = vec![
        level("L1", 36e3, 160e9),
        level("L2", 840e3, 100e9),
        MemoryLevel {
            size_bytes: None,
            bandwidth_1t_Bps: None,
            ..level("DRAM", 0.0, 0.0)
        },
    ];
    p.provenance.os_reported_caches = [(1, 32768), (2, 1048576)]
        .map(|(level, size)| ReportedCache {
            level,
            kind: "Data".into(),
            size_bytes: size,
            line_bytes: Some(64),
        })
        .to_vec();
    let m = Machine::new(&p);
    let reuse = |window| {
        terms::reuse(&m, 16e6, window, 2, Bound::Point)
            .unwrap()
            .seconds
    };
    // Within L1: the loads alone.
    assert!((reuse(30e3) - 16e6 / 160e9).abs() < 1e-15);
    // 32,816 B: within the detected 36 KB but beyond the 32 KiB the OS
    // reports and the curve corroborates, so the lines come from L2.
    assert!((reuse(32816.0) - (16e6 / 160e9 + 16e6 / 100e9)).abs() < 1e-15);
    // L2 is the last cache, shared by the 2 threads (512 KiB each);
    // beyond it the DRAM level's read bandwidth applies, here unmeasured.
    let e = terms::reuse(&m, 16e6, 4e6, 2, Bound::Point).unwrap_err();
    assert!(e.what.contains("DRAM read bandwidth"), "{e}");
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
    let w = mutex(1.0, 1.0, 0.0, 0.0);
    let e = predict(&w, &m, 2).unwrap_err();
    assert_eq!(e.fix, "lock");
    assert!(e.to_string().contains("calibrate --only lock"), "{e}");
}

#[test]
fn random_accesses_overlap_k_misses_per_core() {
    let p = machine();
    let m = Machine::new(&p);
    let w = Work {
        demands: vec![Demand::Random {
            accesses: RandomAccesses {
                lines: 1e6,
                region_bytes: 67108864.0,
                written: false,
            },
            huge_pages: false,
        }],
    };
    // 1e6 lines · 100 ns / (10 misses in flight · 2 threads) = 5 ms,
    // above the 64 MB of lines at the DRAM read roof (1.28 ms).
    let pr = predict(&w, &m, 2).unwrap();
    assert_eq!(pr.binding, "random access");
    assert!((pr.seconds - 5e-3).abs() < 1e-12, "{}", pr.seconds);
    // The slow end of the latency's interval: 120 ns.
    let slow = predict_at(&w, &m, 2, Bound::Slow).unwrap();
    assert!((slow.seconds - 6e-3).abs() < 1e-12, "{}", slow.seconds);
}

#[test]
fn random_accesses_take_the_concurrency_of_their_page_size() {
    let mut p = machine();
    // Base pages: page walks cap the core at 5 misses in flight, half the
    // huge-page curve's 10 (points without a page size are huge pages).
    let mlp = |extra: serde_json::Value| {
        json!({"points": [{"k": 1, "bandwidth_Bps": 0.64e9}, {"k": 16, "bandwidth_Bps": 6.4e9},
            {"k": 1, "pages": "4KiB", "bandwidth_Bps": 0.5e9},
            {"k": 8, "pages": "4KiB", "bandwidth_Bps": 2.5e9}], "dram_bytes": extra})
    };
    p.sections.insert_json("mlp", mlp(json!(0))).unwrap();
    let m = Machine::new(&p);
    assert_eq!(m.miss_concurrency(true).unwrap(), 10.0);
    assert_eq!(m.miss_concurrency(false).unwrap(), 5.0);
    let w = Work {
        demands: vec![Demand::Random {
            accesses: RandomAccesses {
                lines: 1e6,
                region_bytes: 67108864.0,
                written: false,
            },
            huge_pages: false,
        }],
    };
    // 1e6 lines · 100 ns / (5 · 2 threads) = 10 ms.
    let pr = predict(&w, &m, 2).unwrap();
    assert!((pr.seconds - 10e-3).abs() < 1e-12, "{}", pr.seconds);
    // With the curve's buffer size, Little's law takes the latency from the
    // pointer chase there: 2.5 GB/s / 64 B · 100 ns = 3.906 misses.
    p.sections.insert_json("mlp", mlp(json!(67108864))).unwrap();
    let m = Machine::new(&p);
    assert!((m.miss_concurrency(false).unwrap() - 3.90625).abs() < 1e-12);
    // No huge-page latency curve: the huge-page curve's own ratio.
    assert_eq!(m.miss_concurrency(true).unwrap(), 10.0);
}

#[test]
fn chains_wait_for_each_add() {
    let p = machine();
    let m = Machine::new(&p);
    let w = Work {
        demands: vec![Demand::Chain {
            steps_per_thread: 1e6,
        }],
    };
    let secs = |b| predict_at(&w, &m, 2, b).unwrap().seconds;
    assert!((secs(Bound::Point) - 1e-3).abs() < 1e-12);
    assert!((secs(Bound::Fast) - 0.9e-3).abs() < 1e-12);
    assert!((secs(Bound::Slow) - 1.1e-3).abs() < 1e-12);
    assert!(predict(&w, &m, 2).unwrap().terms[0]
        .explain
        .contains("2.0 cycles"));
}

#[test]
fn a_built_in_kernel_and_its_description_predict_alike() {
    use crate::kernels::described::{loop_work, Build};
    use crate::kernels::fusion::Variant;
    let p = machine();
    let m = Machine::new(&p);
    // 16 MiB per array per thread: DRAM for the kernel's seven arrays
    // and for the described loop's five alike.
    let n = 4 << 20;
    let builtin = predict(&Variant::Fused.work(n, 2), &m, 2).unwrap();
    let build = Build {
        line_bytes: 64.0,
        huge_pages: false,
        isa: None,
    };
    let described = &Variant::Fused.loops(n, 2)[0];
    let user = predict(&loop_work(described, build), &m, 2).unwrap();
    assert_eq!(
        (builtin.seconds, builtin.binding),
        (user.seconds, user.binding)
    );
    let secs = |p: &Prediction| p.terms.iter().map(|t| t.seconds).collect::<Vec<_>>();
    assert_eq!(secs(&builtin), secs(&user));
}
