//! Memory terms: bandwidth, reuse in L1 and beyond it, stream restarts,
//! and the counting sort's loops beside them.

use super::*;

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
                huge_pages: true,
                isa: None,
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

/// A copy loading 4 MB and storing 4 MB (12 MB with write-allocate)
/// with `per_thread_bytes` per thread, on huge pages.
fn copy(per_thread_bytes: f64) -> Work {
    Work {
        demands: vec![Demand::Memory {
            traffic: Traffic::streaming(4e6, 4e6),
            per_thread_bytes,
            huge_pages: true,
            isa: None,
        }],
    }
}

#[test]
fn working_sets_inside_the_sweep_read_its_curve() {
    let p = machine();
    let m = Machine::new(&p);
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

#[test]
fn sort_loops_add_to_the_memory_time() {
    let p = machine();
    let m = Machine::new(&p);
    let memory = Demand::Memory {
        traffic: Traffic::streaming(16e6, 8e6),
        per_thread_bytes: 64e6,
        huge_pages: true,
        isa: None,
    };
    let bin_loop = |kind| Demand::BinLoop {
        kind,
        items_per_thread: 1e6,
        working_set_per_thread: 64e3,
    };
    let w = Work {
        demands: vec![
            memory.clone(),
            bin_loop(SortLoop::Histogram),
            bin_loop(SortLoop::Scatter),
        ],
    };
    // 800 µs of traffic, then 250 + 500 µs of loops, which add to it.
    let pr = predict(&w, &m, 2).unwrap();
    assert_eq!(pr.binding, "memory + load/store");
    assert!((pr.seconds - 1.55e-3).abs() < 1e-12, "{}", pr.seconds);
    // Without memory traffic, the loops alone.
    let w = Work {
        demands: vec![bin_loop(SortLoop::Scatter)],
    };
    assert!((predict(&w, &m, 2).unwrap().seconds - 0.5e-3).abs() < 1e-12);
    // Paired with loops running twice as fast as profiled: half the time.
    let now = Now {
        bin_loops: 2.0,
        ..Now::default()
    };
    let paired = predict(&w, &Machine::paired(&p, now), 2).unwrap();
    assert!((paired.seconds - 0.25e-3).abs() < 1e-12);
    // Beyond the 1 MiB cache the scatter adds what its output streams cost
    // over one stream: 2 ns at DRAM, less 0.5 ns in L1, less its 4 B
    // streamed at the memory term's rate, on each of the two threads the
    // per-item time was measured on.
    let beyond = Work {
        demands: vec![Demand::BinLoop {
            kind: SortLoop::Scatter,
            items_per_thread: 1e6,
            working_set_per_thread: 64e6,
        }],
    };
    let (streamed, _) = m
        .traffic_time(
            &Traffic::streaming(0.0, 2.0 * 4.0),
            2,
            64.0 * 1024.0 * 1024.0,
            None,
            Bound::Point,
        )
        .unwrap();
    let want = 1e6 * (2.0e-9 - streamed);
    let got = predict(&beyond, &m, 2).unwrap().seconds;
    assert!((got - want).abs() < 1e-12, "{got} against {want}");
    assert!(streamed > 0.0 && want < 2e-3);
    // Paired, a level at half its profiled pace doubles the excess, and
    // the loop in L1 follows its own drift.
    let now = Now {
        memory: 0.5,
        bin_loops: 2.0,
        ..Now::default()
    };
    let got = predict(&beyond, &Machine::paired(&p, now), 2)
        .unwrap()
        .seconds;
    let want = 1e6 * (0.25e-9 + 2.0 * (2.0e-9 - 0.5e-9 - streamed));
    assert!((got - want).abs() < 1e-12, "{got} against {want}");
    // The histogram's counts stay in L1 whatever the working set.
    let hist = Work {
        demands: vec![Demand::BinLoop {
            kind: SortLoop::Histogram,
            items_per_thread: 1e6,
            working_set_per_thread: 64e6,
        }],
    };
    assert!((predict(&hist, &m, 2).unwrap().seconds - 0.25e-3).abs() < 1e-12);
    // A profile from before the loops were calibrated: c2c fixes it.
    fn loops(p: &mut Profile) -> &mut models::profile::c2c::Increments {
        p.sections
            .c2c
            .as_mut()
            .unwrap()
            .increments
            .as_mut()
            .unwrap()
    }
    let mut old = machine();
    loops(&mut old).scatter_dram = None;
    let e = predict(&beyond, &Machine::new(&old), 2).unwrap_err();
    assert_eq!(e.fix, "c2c");
    loops(&mut old).scatter = None;
    let e = predict(&w, &Machine::new(&old), 2).unwrap_err();
    assert_eq!(e.fix, "c2c");
}

#[test]
fn a_scatter_pays_its_streams_in_the_cache_that_holds_it() {
    // A 32 MiB L3 beyond the 1 MiB cache, the scatter timed there at
    // 1.5 ns per item with 8 MiB of output per thread on 2 threads.
    let mut p = machine();
    p.levels.push(MemoryLevel {
        bandwidth_1t_Bps: None,
        ..MemoryLevel::cache("L3", 32.0 * 1048576.0, 0.0)
    });
    let loops = p
        .sections
        .c2c
        .as_mut()
        .unwrap()
        .increments
        .as_mut()
        .unwrap();
    let mut point = loops.scatter_dram.clone().unwrap();
    point.per_item_s = Some(models::profile::Sample::new(1.5e-9, 1.5e-9, 1.5e-9));
    point.output_bytes = Some(8 << 20);
    loops.scatter_curve = vec![point];
    let m = Machine::new(&p);
    let scatter = |working_set_per_thread| Work {
        demands: vec![Demand::BinLoop {
            kind: SortLoop::Scatter,
            items_per_thread: 1e6,
            working_set_per_thread,
        }],
    };
    // 4 MB per thread is in the L3 (16 MiB per thread on 2): 1.5 ns there,
    // less 0.5 ns in L1, less each thread's 4 B at the rate the memory
    // term reads at 8 MiB per thread.
    let (streamed, _) = m
        .traffic_time(
            &Traffic::streaming(0.0, 8.0),
            2,
            8.0 * 1048576.0,
            None,
            Bound::Point,
        )
        .unwrap();
    let want = 1e6 * (1.5e-9 - streamed);
    let got = predict(&scatter(4e6), &m, 2).unwrap().seconds;
    assert!((got - want).abs() < 1e-12, "{got} against {want}");
    assert!(want > 0.5e-3 && want < 1e-3);
    // In the first cache, the calibrated loop's own level, nothing more.
    let got = predict(&scatter(512e3), &m, 2).unwrap().seconds;
    assert!((got - 0.5e-3).abs() < 1e-12, "{got}");
    // Beyond the L3, the DRAM figure's 2 ns.
    let got = predict(&scatter(64e6), &m, 2).unwrap().seconds;
    assert!(got > 1e-3 && got < 2e-3, "{got}");
}

#[test]
fn loads_that_hit_l1_again_add_to_the_memory_time() {
    let mut p = machine();
    let memory = Demand::Memory {
        traffic: Traffic::streaming(16e6, 8e6),
        per_thread_bytes: 64e6,
        huge_pages: true,
        isa: None,
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
            column_bytes: None,
            per_thread_bytes,
        }],
    };
    // Without the restart curve the profile says what to run.
    assert_eq!(
        predict(&work(64e6), &Machine::new(&p), 2).unwrap_err().fix,
        "stream"
    );
    let restarts = json!([
        {"threads": 2, "segment_bytes": 4096.0, "per_thread_bytes": 64e6,
         "per_segment_s": {"point": 100e-9, "lo": 90e-9, "hi": 110e-9}},
        {"threads": 2, "segment_bytes": 16384.0, "per_thread_bytes": 64e6,
         "per_segment_s": {"point": 300e-9, "lo": 250e-9, "hi": 350e-9}}
    ]);
    let mut stream = serde_json::to_value(p.sections.stream.as_ref().unwrap()).unwrap();
    stream["restarts"] = restarts;
    p.sections.insert_json("stream", stream.clone()).unwrap();
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
    // Just beyond what the cache holds per thread (this machine's only
    // level, 1 MiB), every line comes from DRAM: a sweep over more than a
    // cache holds evicts each line before its next use.
    let (share, how) = m.dram_share(1048577.0, 2);
    assert_eq!(share, 1.0, "{how}");
    assert_eq!(m.dram_share(1048576.0, 2).0, 0.0);
    let pr = predict(&work(8388608.0), &m, 2).unwrap();
    assert!(
        (pr.seconds - 1000.0 * 200e-9).abs() < 1e-12,
        "{}",
        pr.seconds
    );
    // With the copy measured in small tile columns too, a loop that says
    // how large its columns are reads between the two; one that does not,
    // the smallest column.
    stream["restarts"] = json!([
        {"threads": 2, "segment_bytes": 8192.0, "runs_per_row": 2.0, "per_thread_bytes": 64e6,
         "per_segment_s": {"point": 200e-9, "lo": 200e-9, "hi": 200e-9}},
        {"threads": 2, "segment_bytes": 8192.0, "runs_per_row": 32.0, "per_thread_bytes": 64e6,
         "per_segment_s": {"point": 100e-9, "lo": 100e-9, "hi": 100e-9}}
    ]);
    p.sections.insert_json("stream", stream).unwrap();
    let m = Machine::new(&p);
    let columns = |column_bytes| Work {
        demands: vec![Demand::Restarts {
            runs_per_thread: 1000.0,
            segment_bytes: 8192.0,
            column_bytes,
            per_thread_bytes: 64e6,
        }],
    };
    let ns_per_run = |c| predict(&columns(c), &m, 2).unwrap().seconds / 1000.0 * 1e9;
    // Columns of 2 MB and 32 MB; 8 MB lies halfway in log.
    assert!((ns_per_run(Some(32e6)) - 200.0).abs() < 1e-6);
    assert!((ns_per_run(Some(8e6)) - 150.0).abs() < 1e-6);
    assert!((ns_per_run(None) - 100.0).abs() < 1e-6);
    let pr = predict(&columns(Some(8e6)), &m, 2).unwrap();
    assert!(
        pr.terms[0].explain.contains("tile columns of 8.00 MB"),
        "{}",
        pr.terms[0].explain
    );
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
        terms::reuse(&m, 16e6, window, 2, 0.0, None, Bound::Point)
            .unwrap()
            .seconds
    };
    // Within L1: the loads alone.
    assert!((reuse(30e3) - 16e6 / 160e9).abs() < 1e-15);
    // 32,816 B: within the detected 36 KB but beyond the 32 KiB the OS
    // reports and the curve corroborates, so the loads run at L2's rate,
    // which holds their issue as well as the lines' transfer.
    assert!((reuse(32816.0) - 16e6 / 100e9).abs() < 1e-15);
    // The loads running at half the profile's rate now (the paired
    // re-measure of the load kernel in L1): both take twice as long.
    let now = Now {
        loads: 0.5,
        ..Now::default()
    };
    let half = Machine::paired(&p, now);
    let slow = |window| {
        terms::reuse(&half, 16e6, window, 2, 0.0, None, Bound::Point)
            .unwrap()
            .seconds
    };
    assert!((slow(30e3) - 2.0 * reuse(30e3)).abs() < 1e-15);
    assert!((slow(32816.0) - 2.0 * reuse(32816.0)).abs() < 1e-15);
    // L2 is the last cache, shared by the 2 threads (512 KiB each);
    // beyond it the lines are memory traffic, and only their L1 time is
    // left here (no DRAM read bandwidth needed).
    let far = terms::reuse(&m, 16e6, 4e6, 2, 0.0, None, Bound::Point).unwrap();
    assert!((far.seconds - 16e6 / 160e9).abs() < 1e-15);
    assert!(
        far.explain.contains("exceeds every cache"),
        "{}",
        far.explain
    );
    // The same rule places the working sets the explanations name: 600 KB
    // fits the 1 MiB L2 alone, not its half.
    assert_eq!(m.holding_level_name(600e3, 1), "L2");
    assert_eq!(m.holding_level_name(600e3, 2), "DRAM");
}

#[test]
fn a_cache_holds_what_the_os_reports_however_far_its_streaming_edge_lies() {
    let mut p = machine();
    let level = MemoryLevel::cache;
    let dram = MemoryLevel {
        size_bytes: None,
        bandwidth_1t_Bps: None,
        ..level("DRAM", 0.0, 0.0)
    };
    let os = |l3: u64| {
        [(1, 32768), (2, 1048576), (3, l3)]
            .map(|(level, size)| ReportedCache {
                level,
                kind: if level == 3 { "Unified" } else { "Data" }.into(),
                size_bytes: size,
                line_bytes: Some(64),
            })
            .to_vec()
    };
    // One thread's loads left the 32 MiB L3 half-way at 70 MB: two ranks
    // of 33.6 MB do not fit their halves of it.
    p.levels = vec![
        level("L1", 36e3, 160e9),
        level("L2", 900e3, 100e9),
        level("L3", 70e6, 60e9),
        dram.clone(),
    ];
    p.provenance.os_reported_caches = os(32 << 20);
    let m = Machine::new(&p);
    assert_eq!(m.holding_level_name(33.6e6, 2), "DRAM");
    assert_eq!(m.dram_share(33.6e6, 2).0, 1.0);
    assert_eq!(m.holding_level_name(16e6, 2), "L3");
    // A VM's OS that reports the host's whole 260 MB L3 beside a detected
    // 40 MB: the detected size.
    p.levels[2] = level("L3", 40e6, 60e9);
    p.provenance.os_reported_caches = os(260_000_000);
    let m = Machine::new(&p);
    assert_eq!(m.holding_level_name(30e6, 1), "L3");
    assert_eq!(m.holding_level_name(50e6, 1), "DRAM");
}

/// A working set between the end of the last cache's plateau on the
/// sweep and its share of the size the OS reports is predicted with the
/// whole cache and with none of it as well; the point prediction still
/// reads the sweep at the working set.
#[test]
fn a_working_set_on_the_last_caches_step_is_predicted_with_all_of_it_and_none() {
    let mut p = machine();
    // L2 (1 MiB) is the last cache behind an L1; the OS reports 8 MiB
    // for it (a host's cache), and its plateau on the two-thread sweep
    // ends at the 256 KiB copy point.
    p.levels.insert(0, MemoryLevel::cache("L1", 32768.0, 160e9));
    p.provenance.os_reported_caches = vec![ReportedCache {
        level: 2,
        kind: "Unified".into(),
        size_bytes: 8 << 20,
        line_bytes: Some(64),
    }];
    p.sections
        .stream
        .as_mut()
        .unwrap()
        .levels
        .push(StreamLevel {
            name: "L2".into(),
            threads: 2,
            from_bytes: 32768.0,
            to_bytes: 524288.0,
            points: vec![262144.0],
            read_bandwidth_Bps: Estimate::exact(80e9),
            isa: None,
        });
    let m = Machine::new(&p);
    // 2 MiB per thread: beyond the plateau, within half of 8 MiB. With the
    // whole cache, 12 MB with write-allocate at the plateau's 80 GB/s;
    // with none of it, the DRAM roofs' 400 µs (the triad's 10 GB/s write
    // roof).
    let pr = predict(&copy(2.0 * 1048576.0), &m, 2).unwrap();
    let [whole, lost] = pr.states_s.expect("two states");
    assert!((whole - 150e-6).abs() < 1e-12, "{whole}");
    assert!((lost - 400e-6).abs() < 1e-12, "{lost}");
    assert!(pr.seconds > whole && pr.seconds < lost, "{}", pr.seconds);
    assert!(pr.terms[0].explain.contains("on the L2's step"));
    // On the plateau, beyond the reported size's share, or already given
    // a share of the cache: one state.
    for b in [200e3, 5.0 * 1048576.0] {
        assert_eq!(predict(&copy(b), &m, 2).unwrap().states_s, None, "{b}");
    }
    let whole_cache = m.with_last_cache(LastCache::Whole);
    assert!(!whole_cache.on_last_cache_step(2.0 * 1048576.0, 2));
    assert_eq!(
        predict(&copy(2.0 * 1048576.0), &whole_cache, 2)
            .unwrap()
            .seconds,
        whole
    );
}

/// The synthetic machine with an L1 of 160 GB/s for one thread and, on
/// one thread, DRAM triad 32 GB/s and loads 40 GB/s with write-allocate:
/// a core alone gets 80% of what two share.
fn machine_with_one_core() -> Profile {
    let mut p = machine();
    p.levels.insert(
        0,
        MemoryLevel {
            name: "L1".into(),
            size_bytes: Some(32768.0),
            latency_s: None,
            bandwidth_1t_Bps: Some(Estimate::exact(160e9)),
            bandwidth_Bps: None,
        },
    );
    let mut stream = serde_json::to_value(p.sections.stream.as_ref().unwrap()).unwrap();
    let dram = stream["dram"].as_array_mut().unwrap();
    for (kernel, rate) in [("triad", 32e9), ("load", 40e9)] {
        dram.push(
            json!({"kernel": kernel, "threads": 1, "per_thread_bytes": 67108864.0,
                         "bandwidth_write_allocate_Bps": rate}),
        );
    }
    p.sections.insert_json("stream", stream).unwrap();
    p
}

#[test]
fn a_core_adds_its_load_store_work_to_its_own_transfers_and_the_shared_memory_bounds_apart() {
    let p = machine_with_one_core();
    let m = Machine::new(&p);
    let w = |reused| Work {
        demands: vec![
            Demand::Memory {
                traffic: Traffic::streaming(16e6, 8e6),
                per_thread_bytes: 64e6,
                huge_pages: true,
                isa: None,
            },
            Demand::Reuse {
                bytes_per_thread: reused,
                window_bytes: 0.0,
            },
        ],
    };
    // Each core: its 16 MB of the 32 MB at 32 GB/s, 0.5 ms, plus 32 MB of
    // L1 loads at 160 GB/s, 0.2 ms: 0.7 ms. Both cores share the memory
    // system: 32 MB at 40 GB/s, 0.8 ms, which binds.
    let pr = predict(&w(32e6), &m, 2).unwrap();
    assert_eq!(pr.binding, MEMORY_BANDWIDTH);
    assert!((pr.seconds - 0.8e-3).abs() < 1e-12, "{}", pr.seconds);
    let core = pr
        .terms
        .iter()
        .find(|t| t.resource == "memory + load/store")
        .unwrap();
    assert!((core.seconds - 0.7e-3).abs() < 1e-12, "{}", core.seconds);
    // Twice the loads: the core's 0.9 ms binds.
    let pr = predict(&w(64e6), &m, 2).unwrap();
    assert_eq!(pr.binding, "memory + load/store");
    assert!((pr.seconds - 0.9e-3).abs() < 1e-12, "{}", pr.seconds);
    // On one thread the core's time is the memory term's: 1 ms + 0.4 ms.
    let pr = predict(&w(64e6), &m, 1).unwrap();
    assert!((pr.seconds - 1.4e-3).abs() < 1e-12, "{}", pr.seconds);
}

#[test]
fn near_the_shared_memory_time_a_calibrated_knee_slows_the_loop() {
    let mut p = machine_with_one_core();
    let mut stream = serde_json::to_value(p.sections.stream.as_ref().unwrap()).unwrap();
    stream["knee"] = json!({"threads": 2, "exponent": {"point": 2.0, "lo": 1.5, "hi": 3.0},
                            "points": []});
    p.sections.insert_json("stream", stream).unwrap();
    let m = Machine::new(&p);
    let memory = Demand::Memory {
        traffic: Traffic::streaming(16e6, 8e6),
        per_thread_bytes: 64e6,
        huge_pages: true,
        isa: None,
    };
    let reuse = Demand::Reuse {
        bytes_per_thread: 32e6,
        window_bytes: 0.0,
    };
    // T_core 0.7 ms, T_bus 0.8 ms, one core's streams 0.5 ms, k = 2:
    // T = √(0.7² + 0.8² − 0.5²) ms, beyond both bounds.
    let w = Work {
        demands: vec![memory.clone(), reuse.clone()],
    };
    let pr = predict(&w, &m, 2).unwrap();
    assert_eq!(pr.binding, "memory + load/store");
    let want = (0.49f64 + 0.64 - 0.25).sqrt() * 1e-3;
    assert!((pr.seconds - want).abs() < 1e-12, "{}", pr.seconds);
    // The slow end of the interval is the smaller exponent.
    let slow = predict_at(&w, &m, 2, Bound::Slow).unwrap();
    assert!(slow.seconds > pr.seconds);
    // A loop that only streams is the bus's STREAM time; one thread has
    // no knee.
    let streams = predict(
        &Work {
            demands: vec![memory],
        },
        &m,
        2,
    )
    .unwrap();
    assert!(
        (streams.seconds - 0.8e-3).abs() < 1e-12,
        "{}",
        streams.seconds
    );
    let one = predict(&w, &m, 1).unwrap();
    assert!((one.seconds - 1.2e-3).abs() < 1e-12, "{}", one.seconds);
}

#[test]
fn reused_lines_beside_streams_from_dram_cost_the_measured_window_read() {
    let mut p = machine_with_one_core();
    p.levels[1].bandwidth_1t_Bps = Some(Estimate::exact(100e9));
    let m = Machine::new(&p);
    let reuse = |m: &Machine, streamed| {
        terms::reuse(m, 16e6, 131072.0, 1, streamed, None, Bound::Point)
            .unwrap()
            .seconds
    };
    // Without the window curve: the L2 load kernel's rate throughout.
    assert!((reuse(&m, 64e6) - 16e6 / 100e9).abs() < 1e-15);
    let mut stream = serde_json::to_value(p.sections.stream.as_ref().unwrap()).unwrap();
    stream["windows"] = json!([
        {"threads": 1, "window_bytes": 65536.0, "per_thread_bytes": 64e6,
         "per_byte_s": {"point": 20e-12, "lo": 18e-12, "hi": 22e-12}},
        {"threads": 1, "window_bytes": 524288.0, "per_thread_bytes": 64e6,
         "per_byte_s": {"point": 10e-12, "lo": 9e-12, "hi": 11e-12}}
    ]);
    p.sections.insert_json("stream", stream).unwrap();
    let m = Machine::new(&p);
    // 128 KiB lies a third of the way (in log) from 64 to 512 KiB:
    // 20 − 10/3 ps per byte read again, for every byte, since the streams
    // come from DRAM (s = 1).
    let t_w = (20.0 - 10.0 / 3.0) * 1e-12;
    assert!((reuse(&m, 64e6) - 16e6 * t_w).abs() < 1e-15);
    // Streams within the caches (s = 0) read the window at L2's rate.
    assert!((reuse(&m, 512e3) - 16e6 / 100e9).abs() < 1e-15);
}

#[test]
fn loads_that_hit_l1_beside_streams_from_beyond_it_cost_the_measured_reread() {
    let mut p = machine();
    p.levels.insert(0, MemoryLevel::cache("L1", 48e3, 400e9));
    let reuse = |p: &Profile, streamed| {
        terms::reuse(&Machine::new(p), 16e6, 0.0, 1, streamed, None, Bound::Point)
            .unwrap()
            .seconds
    };
    // Without the curve: the ports' time, wherever the streams come from.
    let ports = reuse(&p, 16e3);
    assert!(ports > 0.0);
    assert_eq!(reuse(&p, 8e6), ports);
    let mut stream = serde_json::to_value(p.sections.stream.as_ref().unwrap()).unwrap();
    stream["l1_rereads"] = json!([
        {"threads": 1, "window_bytes": 12288.0, "per_thread_bytes": 1e6,
         "per_byte_s": {"point": 0.0, "lo": 0.0, "hi": 1e-12}},
        {"threads": 1, "window_bytes": 12288.0, "per_thread_bytes": 64e6,
         "per_byte_s": {"point": 2e-12, "lo": 1e-12, "hi": 3e-12}}
    ]);
    p.sections.insert_json("stream", stream).unwrap();
    // Streams of 8 MB per thread lie half-way (in log) from 1 to 64 MB:
    // 1 ps per byte read again.
    assert!((reuse(&p, 8e6) - 16e6 * 1e-12).abs() < 1e-15);
    // Beyond the last point the curve stays flat.
    assert!((reuse(&p, 1e9) - 16e6 * 2e-12).abs() < 1e-15);
    // Streams L1 holds leave the loads their ports' time.
    assert_eq!(reuse(&p, 16e3), ports);
}

#[test]
fn a_memory_bound_prediction_names_both_states_of_dram_bursts_apart() {
    let stream_at_dram = Work {
        demands: vec![Demand::Memory {
            traffic: Traffic::streaming(16e6, 8e6),
            per_thread_bytes: 64e6,
            huge_pages: true,
            isa: None,
        }],
    };
    let with_bursts = |triad: [f64; 4], load: [f64; 4]| {
        let mut p = machine();
        // A measured profile lists DRAM as a level without a size.
        p.levels.push(MemoryLevel {
            size_bytes: None,
            ..MemoryLevel::cache("DRAM", 0.0, 0.0)
        });
        let mut s = p.sections.stream.clone().unwrap();
        s.dram[0].bursts_Bps = triad.to_vec();
        s.dram[1].bursts_Bps = load.to_vec();
        p.sections.stream = Some(s);
        p
    };
    // One burst of four caught the host's fast state: the point is the
    // median burst, and the two states are the slowest and the fastest.
    let p = with_bursts([40e9, 39e9, 80e9, 41e9], [50e9, 49e9, 100e9, 51e9]);
    let pr = predict(&stream_at_dram, &Machine::new(&p), 2).unwrap();
    let [fast, slow] = pr.states_s.expect("two states");
    assert!(fast < pr.seconds && pr.seconds < slow);
    let ratio = slow / fast;
    assert!((ratio - 80.0 / 39.0).abs() < 0.1, "{ratio}");
    // The same bursts beside line probes in two placements: the states
    // are each placement's median burst, and the term names them.
    let mut placed = p.clone();
    let near = [31e-9, 32e-9];
    let far = [150e-9, 160e-9];
    for d in &mut placed.sections.stream.as_mut().unwrap().dram {
        d.bursts_line_s = vec![near, near, far, near];
    }
    let pr = predict(&stream_at_dram, &Machine::new(&placed), 2).unwrap();
    let [fast, slow] = pr.states_s.expect("two states");
    let ratio = slow / fast;
    assert!((ratio - 80.0 / 40.0).abs() < 0.1, "{ratio}");
    let memory = pr.terms.iter().find(|t| t.resource == pr.binding).unwrap();
    assert!(
        memory.explain.contains("two placements"),
        "{}",
        memory.explain
    );
    // Bursts within 1.5× of each other are one state.
    let p = with_bursts([40e9, 39e9, 50e9, 41e9], [50e9, 49e9, 60e9, 51e9]);
    assert_eq!(
        predict(&stream_at_dram, &Machine::new(&p), 2)
            .unwrap()
            .states_s,
        None
    );
    // On one thread the two-thread points say nothing; nor at a working
    // set a cache holds.
    let p = with_bursts([40e9, 39e9, 80e9, 41e9], [50e9, 49e9, 100e9, 51e9]);
    let m = Machine::new(&p);
    assert!(!m.dram_two_states(1));
    let in_cache = Work {
        demands: vec![Demand::Memory {
            traffic: Traffic::streaming(16e6, 8e6),
            per_thread_bytes: 16384.0,
            huge_pages: true,
            isa: None,
        }],
    };
    assert_eq!(predict(&in_cache, &m, 2).unwrap().states_s, None);
}

#[test]
fn a_reuse_window_no_cache_holds_is_loaded_from_memory_again() {
    let mut p = machine_with_one_core();
    p.levels.push(MemoryLevel {
        name: "DRAM".into(),
        size_bytes: None,
        latency_s: None,
        bandwidth_1t_Bps: Some(Estimate::exact(20e9)),
        bandwidth_Bps: None,
    });
    p.levels[1].bandwidth_1t_Bps = Some(Estimate::exact(100e9));
    let m = Machine::new(&p);
    let streams = Traffic::streaming(16e6, 8e6);
    let memory = |traffic| Demand::Memory {
        traffic,
        per_thread_bytes: 64e6,
        huge_pages: true,
        isa: None,
    };
    let reuse = |window_bytes| Demand::Reuse {
        bytes_per_thread: 8e6,
        window_bytes,
    };
    let term = |pr: &Prediction, resource: &str| {
        pr.terms
            .iter()
            .find(|t| t.resource == resource)
            .cloned()
            .unwrap()
    };
    // A 32 MB window per thread exceeds the 1 MiB L2: the 16 MB the two
    // threads read again are loads of the memory term, as if the loop
    // streamed them, and the reuse term keeps their L1 time.
    let far = Work {
        demands: vec![memory(streams), reuse(32e6)],
    };
    assert!(terms::reused_from_memory(&m, 32e6, 2));
    let pr = predict(&far, &m, 2).unwrap();
    let reloaded = Traffic {
        load_bytes: 16e6,
        ..Traffic::default()
    };
    let streamed = predict(
        &Work {
            demands: vec![memory(streams.plus(reloaded))],
        },
        &m,
        2,
    )
    .unwrap();
    assert_eq!(
        term(&pr, MEMORY_BANDWIDTH).seconds,
        term(&streamed, MEMORY_BANDWIDTH).seconds
    );
    let loads = term(&pr, "load/store");
    assert!(
        (loads.seconds - 8e6 / 160e9).abs() < 1e-15,
        "{}",
        loads.explain
    );
    assert!(
        loads.explain.contains("exceeds every cache"),
        "{}",
        loads.explain
    );
    // A window L2 holds leaves the memory term as it was.
    assert!(!terms::reused_from_memory(&m, 262144.0, 2));
    let near = predict(
        &Work {
            demands: vec![memory(streams), reuse(262144.0)],
        },
        &m,
        2,
    )
    .unwrap();
    let alone = predict(
        &Work {
            demands: vec![memory(streams)],
        },
        &m,
        2,
    )
    .unwrap();
    assert_eq!(
        term(&near, MEMORY_BANDWIDTH).seconds,
        term(&alone, MEMORY_BANDWIDTH).seconds
    );
    // Reloads without a streamed demand get a memory term of their own.
    let only = predict(
        &Work {
            demands: vec![reuse(32e6)],
        },
        &m,
        2,
    )
    .unwrap();
    assert!(term(&only, MEMORY_BANDWIDTH).seconds > 0.0);
}

#[test]
fn the_memory_states_of_a_loop_with_reloads_count_them_once() {
    let mut p = machine_with_one_core();
    let mut s = p.sections.stream.clone().unwrap();
    s.dram[0].bursts_Bps = vec![40e9, 39e9, 80e9, 41e9];
    s.dram[1].bursts_Bps = vec![50e9, 49e9, 100e9, 51e9];
    p.sections.stream = Some(s);
    let m = Machine::new(&p);
    // A 32 MB window per thread beyond every cache: its 16 MB are loads
    // of the memory term, in the point prediction and in both states.
    let w = streams_reusing(32e6);
    let [fast, slow] = predict(&w, &m, 2).unwrap().states_s.expect("two states");
    assert_eq!(fast, predict_at(&w, &m, 2, Bound::Fast).unwrap().seconds);
    assert_eq!(slow, predict_at(&w, &m, 2, Bound::Slow).unwrap().seconds);
}

#[test]
fn threads_apart_have_the_last_cache_each_in_the_far_placements_state() {
    let mut p = machine_with_one_core();
    p.levels.push(MemoryLevel {
        size_bytes: None,
        ..MemoryLevel::cache("DRAM", 0.0, 20e9)
    });
    p.levels[1].bandwidth_1t_Bps = Some(Estimate::exact(100e9));
    p.summary.dram_latency_s = Some(100e-9);
    // Two-thread bursts on one chiplet at X and on two at 2X.
    let (near, far) = ([31e-9, 32e-9], [150e-9, 160e-9]);
    let stream = p.sections.stream.as_mut().unwrap();
    for d in stream.dram.iter_mut().filter(|d| d.threads == Some(2)) {
        let x = d.bandwidth_write_allocate_Bps;
        d.bursts_Bps = vec![x, x, 2.0 * x, x];
        d.bursts_line_s = vec![near, near, far, near];
    }
    let m = Machine::new(&p);
    // A 768 KiB window per thread: beyond its 512 KiB share of the 1 MiB
    // L2 the two threads share, within the whole L2 when apart.
    let window = 786432.0;
    let apart = m
        .apart(2)
        .expect("a 155 ns line is half a 100 ns DRAM access or more");
    assert!(terms::reused_from_memory(&m, window, 2));
    assert!(!terms::reused_from_memory(&apart, window, 2));
    let w = streams_reusing(window);
    let pr = predict(&w, &m, 2).unwrap();
    let [fast, slow] = pr.states_s.expect("two states");
    // The far placement is the fast one here: read apart, its reloads
    // stay in the L2, faster than the fast end with the L2 shared.
    assert!(fast < predict_at(&w, &m, 2, Bound::Fast).unwrap().seconds);
    assert_eq!(slow, predict_at(&w, &m, 2, Bound::Slow).unwrap().seconds);
    let memory = pr.terms.iter().find(|t| t.resource == pr.binding).unwrap();
    assert!(memory.explain.contains("to itself"), "{}", memory.explain);
    // The paired prediction reads the threads where its probe found them:
    // apart, the window stays in the L2 each thread has to itself.
    let paired = |line_s| {
        let pair = crate::kernels::paired::Paired {
            placement_line_s: Some(line_s),
            ..Default::default()
        };
        pair.predict(&w, &p, 2).unwrap().seconds
    };
    assert_eq!(paired(31e-9), pr.seconds);
    assert_eq!(paired(155e-9), predict(&w, &apart, 2).unwrap().seconds);
    assert!(paired(155e-9) < pr.seconds);
    // A far line shorter than half a DRAM access crosses a shared cache.
    p.summary.dram_latency_s = Some(400e-9);
    assert!(Machine::new(&p).apart(2).is_none());
}

/// Streams at DRAM (16 MB loaded and 8 MB stored per thread, 64 MB per
/// thread) whose 8 MB of reused loads per thread come from a window of
/// `window_bytes`.
fn streams_reusing(window_bytes: f64) -> Work {
    Work {
        demands: vec![
            Demand::Memory {
                traffic: Traffic::streaming(16e6, 8e6),
                per_thread_bytes: 64e6,
                huge_pages: true,
                isa: None,
            },
            Demand::Reuse {
                bytes_per_thread: 8e6,
                window_bytes,
            },
        ],
    }
}

#[test]
fn loads_that_hit_l1_are_charged_at_the_l1_figure_of_their_instruction_set() {
    use models::profile::stream::StreamLevel;
    let mut p = machine();
    p.levels.insert(0, MemoryLevel::cache("L1", 48e3, 400e9));
    // The widest set's L1 figure is the level's; one thread's load kernel
    // built for AVX2 read half of it.
    let stream = p.sections.stream.as_mut().unwrap();
    stream.isa = "avx512".into();
    stream.levels = vec![StreamLevel {
        name: "L1".into(),
        threads: 1,
        from_bytes: 0.0,
        to_bytes: 24e3,
        points: vec![16384.0],
        read_bandwidth_Bps: Estimate::exact(200e9),
        isa: Some("avx2".into()),
    }];
    let m = Machine::new(&p);
    let reuse = |isa| terms::reuse(&m, 16e6, 0.0, 2, 0.0, isa, Bound::Point).unwrap();
    assert!((reuse(Some("avx2")).seconds - 16e6 / 200e9).abs() < 1e-15);
    assert!(reuse(Some("avx2")).explain.contains("in avx2"));
    // The widest set, or a set the profile did not measure L1 in, reads
    // the level's figure.
    for isa in [None, Some("avx512"), Some("sse2")] {
        let t = reuse(isa);
        assert!((t.seconds - 16e6 / 400e9).abs() < 1e-15, "{isa:?}");
        assert!(t.explain.contains("in avx512"), "{}", t.explain);
    }
}

#[test]
fn a_loop_on_4_kib_pages_reads_the_4_kib_page_sweep() {
    use models::profile::stream::{StreamPoint, StreamSweep};
    let mut p = machine();
    // The same DRAM points on 4 KiB pages at half the bandwidth, and the
    // copy in L2 alike.
    let point = |kernel, bytes, bw| StreamPoint::with_bandwidth_wa(kernel, bytes, None, bw);
    p.sections.stream.as_mut().unwrap().base_pages = vec![StreamSweep {
        threads: 2,
        points: vec![
            point("copy", 262144, 80e9),
            point("triad", 33554432, 20e9),
            point("load", 33554432, 25e9),
        ],
    }];
    let m = Machine::new(&p);
    let triad = |huge_pages| Work {
        demands: vec![Demand::Memory {
            traffic: Traffic::streaming(16e6, 8e6),
            per_thread_bytes: 64e6,
            huge_pages,
            isa: None,
        }],
    };
    let huge = predict(&triad(true), &m, 2).unwrap();
    let base = predict(&triad(false), &m, 2).unwrap();
    // The triad's 32 MB with write-allocate at 40 GB/s on huge pages, at
    // 20 GB/s on 4 KiB pages.
    assert!((huge.seconds - 800e-6).abs() < 1e-15, "{}", huge.seconds);
    assert!((base.seconds - 1600e-6).abs() < 1e-15, "{}", base.seconds);
    assert!(huge.terms[0].explain.contains("huge pages"));
    assert!(base.terms[0].explain.contains("4 KiB pages"));
    // The huge-page time beside it, the fast end an allocation may reach.
    assert!(
        base.terms[0]
            .explain
            .contains("800 µs at the huge-page figures"),
        "{}",
        base.terms[0].explain
    );
    // In L2 the two read the same copy point.
    let copy = |huge_pages| Work {
        demands: vec![Demand::Memory {
            traffic: Traffic::streaming(4e6, 4e6),
            per_thread_bytes: 262144.0,
            huge_pages,
            isa: None,
        }],
    };
    let secs = |h| predict(&copy(h), &m, 2).unwrap().seconds;
    assert_eq!(secs(true), secs(false));
    // A profile without the 4 KiB-page sweep gives the huge-page figures,
    // and says so.
    let old = machine();
    let pr = predict(&triad(false), &Machine::new(&old), 2).unwrap();
    assert_eq!(pr.seconds, huge.seconds);
    assert!(pr.terms[0].explain.contains("no 4 KiB-page sweep"));
}

#[test]
fn one_thread_reads_the_dram_points_of_its_codes_instruction_set() {
    // One thread's DRAM triad at 20 GB/s in the section's set and at
    // 25 GB/s in AVX2; two threads measured in the section's set alone.
    let mut p = machine();
    let s = p.sections.stream.as_mut().unwrap();
    s.isa = "avx512".into();
    let one = |bandwidth, isa: Option<&str>| {
        let mut d = StreamPoint::with_bandwidth_wa("triad", 33554432, Some(1), bandwidth);
        d.isa = isa.map(Into::into);
        d
    };
    s.dram.push(one(20e9, None));
    s.dram.push(one(25e9, Some("avx2")));
    s.sweeps.push(StreamSweep {
        threads: 1,
        points: vec![StreamPoint::with_bandwidth_wa("copy", 16384, None, 100e9)],
    });
    let m = Machine::new(&p);
    let triad = |isa| Work {
        demands: vec![Demand::Memory {
            traffic: Traffic::streaming(16e6, 8e6),
            per_thread_bytes: 64e6,
            huge_pages: true,
            isa,
        }],
    };
    let secs = |isa, threads| predict(&triad(isa), &m, threads).unwrap().seconds;
    // 32 MB with write-allocate at the triad's own rate.
    assert!((secs(None, 1) - 32e6 / 20e9).abs() < 1e-15);
    assert!((secs(Some("avx512"), 1) - 32e6 / 20e9).abs() < 1e-15);
    assert!((secs(Some("avx2"), 1) - 32e6 / 25e9).abs() < 1e-15);
    // A set the profile did not measure, and two threads: the section's.
    assert!((secs(Some("scalar"), 1) - 32e6 / 20e9).abs() < 1e-15);
    assert_eq!(secs(Some("avx2"), 2), secs(None, 2));
}
