use super::*;
use models::profile::{MemoryLevel, Network, NetworkRegime, Provenance};
use models::Estimate;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
}

/// Triad 12 GB/s on all cores, 9 GB/s on one; one network regime
/// T0 = 1 µs, B = 5 GB/s; overlap 0.5; 2 CPUs.
fn profile() -> Profile {
    let mut p = Profile::new(Provenance {
        logical_cpus: 2,
        ..Default::default()
    });
    p.summary.stream_triad_Bps = Some(12e9);
    p.summary.stream_triad_1t_Bps = Some(9e9);
    p.network = Some(Network {
        transport: "test".into(),
        hosts: vec![],
        regimes: vec![NetworkRegime {
            from_bytes: 1.0,
            to_bytes: 16e6,
            t0_s: Estimate::exact(1e-6),
            bandwidth_Bps: Estimate::exact(5e9),
            r_squared: 1.0,
        }],
        overlap_fraction: Some(Estimate::exact(0.5)),
        points: vec![],
    });
    p
}

fn setup(n: usize, p: usize, variant: Variant) -> Setup {
    Setup {
        n,
        grid: variant.grid(p),
        variant,
        ranks_per_host: p,
    }
}

#[test]
fn blocking_on_two_ranks_exact_numbers() {
    // Block 500 x 1000; B_proc = min(9e9, 12e9/2) * 4/3 = 8e9;
    // t_update = 24/8e9 = 3 ns; t_comp = 5e5 * 3 ns = 1.5 ms.
    // Two sequential rows of 8000 B: 2 * (1 µs + 8000/5e9) = 5.2 µs.
    let pr = predict(&profile(), &setup(1000, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.memory.bandwidth_Bps, 8e9));
    assert!(close(pr.update_s, 3e-9));
    assert!(close(pr.compute_s, 1.5e-3));
    assert!(close(pr.comm_s, 5.2e-6));
    assert_eq!(pr.hidden_s, 0.0);
    assert!(close(pr.time_s, 1.5052e-3));
    assert_eq!(pr.binding, "memory bandwidth (DRAM)");
}

#[test]
fn the_stream_sweep_decides_where_it_was_measured() {
    // A copy sweep on 2 threads: 60 GB/s at 4 MiB per thread, 20 GB/s
    // at 64 MiB (DRAM beyond). With a 32 MiB shared L3, 8 MiB per rank
    // fits (a label) and reads the sweep between its two points.
    let mut p = profile();
    p.levels.push(MemoryLevel {
        name: "L3".into(),
        size_bytes: Some(32.0 * 1048576.0),
        latency_s: None,
        bandwidth_1t_Bps: None,
        bandwidth_Bps: Some(Estimate::exact(100e9)),
    });
    p.sections
        .insert_json(
            "stream",
            serde_json::json!({"sweeps": [{"threads": 2, "points": [
                {"kernel": "copy", "per_thread_bytes": 4194304.0, "bandwidth_write_allocate_Bps": 60e9},
                {"kernel": "copy", "per_thread_bytes": 67108864.0, "bandwidth_write_allocate_Bps": 20e9}
            ]}]}),
        )
        .unwrap();
    let m = memory(&p, 4194304.0, 2).unwrap();
    assert!(close(m.bandwidth_Bps, 30e9));
    assert_eq!(m.level, "L3");
    // Halfway in log-size from 4 to 64 MiB (16 MiB): 40 GB/s, / 2 ranks.
    let m = memory(&p, 16.0 * 1048576.0, 2).unwrap();
    assert!((m.bandwidth_Bps - 20e9).abs() < 1.0, "{}", m.bandwidth_Bps);
    assert_eq!(m.level, "L3");
    // No sweep on 4 threads: the level's bandwidth, as before.
    let m = memory(&p, 1048576.0, 4).unwrap();
    assert!(close(m.bandwidth_Bps, 25e9), "{}", m.bandwidth_Bps);
}

#[test]
fn nonblocking_hides_half_of_one_exchange() {
    // One row each way: 2 * 1 µs + 8000/5e9 = 3.6 µs; inner rows
    // 498 x 1000 x 3 ns; hidden = min(0.5 * 3.6 µs, 1.494 ms) = 1.8 µs.
    let pr = predict(&profile(), &setup(1000, 2, Variant::Nonblocking)).unwrap();
    assert!(close(pr.comm_s, 3.6e-6));
    assert!(close(pr.inner_compute_s, 1.494e-3));
    assert!(close(pr.hidden_s, 1.8e-6));
    assert!(close(pr.time_s, 1.5e-3 + 1.8e-6));
    assert_eq!(pr.overlap_fraction, Some(0.5));
}

#[test]
fn two_d_on_four_ranks_counts_rows_and_columns() {
    // 2x2 blocks of 500 x 500; 4 ranks on 2 CPUs: share 1/2, so
    // B_proc = min(9e9 * 0.5, 12e9 / 4) * 4/3 = 4e9, t_update = 6 ns.
    // One row and one column of 4000 B, exchanged:
    // 2 * (2 * 1 µs + 0.8 µs) = 5.6 µs.
    let pr = predict(&profile(), &setup(1000, 4, Variant::TwoD)).unwrap();
    assert!(close(pr.memory.bandwidth_Bps, 4e9));
    assert!(close(pr.compute_s, 250_000.0 * 6e-9));
    assert!(close(pr.comm_s, 5.6e-6));
    assert!(close(pr.hidden_s, 2.8e-6));
    // Blocking on 4 ranks in a chain: 4 sequential rows of 8000 B.
    let pb = predict(&profile(), &setup(1000, 4, Variant::Blocking)).unwrap();
    assert!(close(pb.comm_s, 4.0 * 2.6e-6));
}

#[test]
fn small_grids_with_slow_networks_are_network_bound() {
    let mut p = profile();
    p.network.as_mut().unwrap().regimes[0].t0_s = Estimate::exact(1e-3);
    let pr = predict(&p, &setup(64, 2, Variant::Blocking)).unwrap();
    assert_eq!(pr.binding, "network latency (T0)");
}

#[test]
fn a_cache_resident_block_uses_its_level() {
    let mut p = profile();
    p.levels.push(MemoryLevel {
        name: "L2".into(),
        size_bytes: Some(1e6),
        latency_s: None,
        bandwidth_1t_Bps: Some(Estimate::exact(50e9)),
        bandwidth_Bps: Some(Estimate::exact(100e9)),
    });
    p.levels.push(MemoryLevel {
        name: "L3".into(),
        size_bytes: Some(32e6),
        latency_s: None,
        bandwidth_1t_Bps: Some(Estimate::exact(30e9)),
        bandwidth_Bps: Some(Estimate::exact(40e9)),
    });
    // N = 100 on 2 ranks: 2 * 52 * 102 * 8 = 84.9 kB fits L2.
    let m = predict(&p, &setup(100, 2, Variant::Blocking))
        .unwrap()
        .memory;
    assert_eq!((m.level.as_str(), m.bandwidth_Bps), ("L2", 50e9));
    // N = 1000: 8 MB per rank exceeds L2 but fits 32 MB / 2 of L3.
    let m = predict(&p, &setup(1000, 2, Variant::Blocking))
        .unwrap()
        .memory;
    assert_eq!((m.level.as_str(), m.bandwidth_Bps), ("L3", 20e9));
    // N = 2000: 32 MB per rank goes to DRAM.
    let m = predict(&p, &setup(2000, 2, Variant::Blocking))
        .unwrap()
        .memory;
    assert_eq!(m.level, "DRAM");
}

#[test]
fn loads_that_hit_l1_add_their_load_port_time() {
    // Without the L1 read bandwidth the term is left out, and said so.
    let pr = predict(&profile(), &setup(1000, 2, Variant::Blocking)).unwrap();
    assert_eq!(pr.reuse_s, 0.0);
    assert!(
        pr.notes.iter().any(|n| n.contains("fetched before")),
        "{:?}",
        pr.notes
    );
    // 32 B per update at 64 GB/s: 0.5 ns on top of 3 ns.
    let mut p = profile();
    p.levels.push(MemoryLevel {
        name: "L1".into(),
        size_bytes: Some(32768.0),
        latency_s: None,
        bandwidth_1t_Bps: Some(Estimate::exact(64e9)),
        bandwidth_Bps: None,
    });
    let pr = predict(&p, &setup(1000, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.reuse_s, 0.5e-9));
    assert!(close(pr.update_s, 3.5e-9));
    assert!(close(pr.compute_s, 1.75e-3));
}

#[test]
fn rows_beyond_the_l1_window_come_back_from_l2() {
    use models::profile::ReportedCache;
    let mut p = profile();
    let level = MemoryLevel::cache;
    p.levels = vec![level("L1", 32768.0, 64e9), level("L2", 1048576.0, 32e9)];
    p.provenance.os_reported_caches = vec![ReportedCache {
        level: 1,
        kind: "Data".into(),
        size_bytes: 32768,
        line_bytes: Some(64),
    }];
    // N = 1000 on 2 ranks: a window of (4·1002 − 2)·8 = 32,048 B fits
    // L1: 32 B at 64 GB/s.
    let pr = predict(&p, &setup(1000, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.reuse_s, 0.5e-9));
    // N = 1024: 32,816 B does not; the row above and the own row
    // (16 B) come back from L2 at 32 GB/s as well.
    let pr = predict(&p, &setup(1024, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.reuse_s, 0.5e-9 + 0.5e-9), "{}", pr.reuse_s);
}

#[test]
fn one_rank_gets_the_one_thread_bandwidth() {
    // 9 GB/s x 4/3 = 12 GB/s: 2 ns per update, no messages.
    let pr = predict(&profile(), &setup(1000, 1, Variant::Nonblocking)).unwrap();
    assert!(close(pr.memory.bandwidth_Bps, 12e9));
    assert!(close(pr.time_s, 1e6 * 2e-9));
    assert!(pr.messages.is_empty());
}

#[test]
fn missing_figures_name_their_fix() {
    let mut p = profile();
    p.network = None;
    let e = predict(&p, &setup(100, 2, Variant::Blocking)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "profile lacks the MPI network (T0 and B); run `mpirun -np 2 calibrate --only pingpong`"
    );
    // One rank needs no network.
    assert!(predict(&p, &setup(100, 1, Variant::Blocking)).is_ok());
    let e = predict(
        &Profile::new(Provenance::default()),
        &setup(100, 1, Variant::Blocking),
    )
    .unwrap_err();
    assert!(e.to_string().contains("calibrate --only stream"), "{e}");
}

#[test]
fn regimes_are_matched_by_size() {
    let r = |from: f64, to: f64, t0: f64| NetworkRegime {
        from_bytes: from,
        to_bytes: to,
        t0_s: Estimate::exact(t0),
        bandwidth_Bps: Estimate::exact(1e9),
        r_squared: 1.0,
    };
    let rs = vec![r(1.0, 2048.0, 1.0), r(4096.0, 1e6, 2.0), r(2e6, 16e6, 3.0)];
    let pick = |b: f64| regime_for(&rs, b).unwrap().t0_s.point;
    assert_eq!(pick(0.5), 1.0);
    assert_eq!(pick(2048.0), 1.0);
    assert_eq!(pick(3000.0), 1.0);
    assert_eq!(pick(3500.0), 2.0);
    assert_eq!(pick(1.6e6), 3.0);
    assert_eq!(pick(1e9), 3.0);
    assert!(regime_for(&[], 1.0).is_none());
}
