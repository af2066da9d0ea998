use super::*;
use models::profile::{
    CeilingKernel, ComputeCeiling, MemoryLevel, Network, NetworkRegime, Provenance,
};
use models::Estimate;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
}

/// Two CPUs. A STREAM copy sweep moving 24 GB/s with write-allocate on
/// two threads and 12 GB/s on one at every working set: copy loads a third
/// of those bytes and stores a third, so its read and write roofs are 8 and
/// 4 GB/s. L1 of 32 KiB read at 64 GB/s by one thread, L2 of 1 MiB at
/// 32 GB/s, a shared L3 of 32 MiB at 20 GB/s; an f64 peak of 1 TFLOP/s
/// that never binds, nor do chains within iterations (1 ps per element at
/// depth 4). One network regime T0 = 1 µs, B = 5 GB/s; overlap 0.5.
fn profile() -> Profile {
    let mut p = Profile::new(Provenance {
        logical_cpus: 2,
        ..Default::default()
    });
    p.levels = vec![
        MemoryLevel::cache("L1", 32768.0, 64e9),
        MemoryLevel::cache("L2", 1048576.0, 32e9),
        MemoryLevel::cache("L3", 32.0 * 1048576.0, 20e9),
    ];
    for threads in [1, 2] {
        p.ceilings.push(ComputeCeiling {
            name: "f64 fma".into(),
            precision: "f64".into(),
            isa: "avx2".into(),
            fma: true,
            threads,
            flops: Estimate::exact(1e12),
            kernel: CeilingKernel::Registers,
            states: None,
        });
    }
    let copy = |bytes: f64, bw: f64| serde_json::json!({"kernel": "copy", "per_thread_bytes": bytes, "bandwidth_write_allocate_Bps": bw});
    let sweep = |threads: usize, bw: f64| serde_json::json!({"threads": threads, "points": [copy(16384.0, bw), copy(268435456.0, bw)]});
    p.sections
        .insert_json(
            "stream",
            serde_json::json!({"sweeps": [sweep(1, 12e9), sweep(2, 24e9)]}),
        )
        .unwrap();
    // Chains within iterations far shorter than any other term.
    p.sections
        .insert_json(
            "flops",
            serde_json::json!({"span": [
                {"isa": "avx2", "depth": 4, "element": {"median": 1e-12}},
                {"isa": "avx2", "depth": 8, "element": {"median": 2e-12}}
            ]}),
        )
        .unwrap();
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
        evicted_regimes: vec![],
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

/// The sweep of N = 1000 on 2 ranks: blocks of 500 × 1000, 1e6 updates
/// in all. Per update the old grid's traffic is one f64 and the two halo
/// rows' share, 8 + 2·8/500 = 8.032 B (the three-row window, 24 kB, fits
/// the L3's half), then 8 B stored and 8 B allocated: the read roof binds,
/// 8.032 MB / 8 GB/s = 1.004 ms. Each rank loads 40 B per update: left,
/// right and the rest of the halo rows' share, 40 − 8.032 − 16 = 15.968 B,
/// hit L1; the row above and the own row (16 B) hit L1 too, since the
/// layer condition's (4·1002 − 2)·8 = 32,048 B fits its 32 KiB. 5e5
/// updates × 31.968 B at 64 GB/s = 0.24975 ms, added to the traffic.
const SWEEP_1000_ON_2: f64 = 1.004e-3 + 0.24975e-3;

#[test]
fn blocking_on_two_ranks_exact_numbers() {
    // Two sequential rows of 8000 B: 2 * (1 µs + 8000/5e9) = 5.2 µs.
    let pr = predict(&profile(), &setup(1000, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.compute_s, SWEEP_1000_ON_2), "{}", pr.compute_s);
    assert!(close(pr.update_s, SWEEP_1000_ON_2 / 5e5));
    assert!(close(pr.comm_s, 5.2e-6));
    assert_eq!(pr.hidden_s, 0.0);
    assert!(close(pr.time_s, SWEEP_1000_ON_2 + 5.2e-6));
    // 2·502·1002·8 B per rank fits the L3's half (a label).
    assert_eq!(pr.working_set_bytes, 8_048_064.0);
    assert_eq!(pr.binding, "memory + load/store (L3)");
    assert!(pr
        .sweep
        .terms
        .iter()
        .any(|t| t.explain.contains("the read roof binds")));
}

#[test]
fn nonblocking_hides_half_of_one_exchange() {
    // One row each way: 2 * 1 µs + 8000/5e9 = 3.6 µs; inner rows
    // 498 x 1000 updates; hidden = min(0.5 * 3.6 µs, inner) = 1.8 µs.
    let pr = predict(&profile(), &setup(1000, 2, Variant::Nonblocking)).unwrap();
    assert!(close(pr.comm_s, 3.6e-6));
    assert!(close(pr.inner_compute_s, 498e3 * SWEEP_1000_ON_2 / 5e5));
    assert!(close(pr.hidden_s, 1.8e-6));
    assert!(close(pr.time_s, SWEEP_1000_ON_2 + 1.8e-6));
    assert_eq!(pr.overlap_fraction, Some(0.5));
}

#[test]
fn two_d_on_four_ranks_counts_rows_and_columns() {
    // 2x2 blocks of 500 x 500 on two hosts of 2 ranks each. One row and
    // one column of 4000 B, exchanged: 2 * (2 * 1 µs + 0.8 µs) = 5.6 µs.
    let s = Setup {
        ranks_per_host: 2,
        ..setup(1000, 4, Variant::TwoD)
    };
    let pr = predict(&profile(), &s).unwrap();
    assert!(close(pr.compute_s, 250_000.0 * pr.update_s));
    assert!(close(pr.comm_s, 5.6e-6));
    assert!(close(pr.hidden_s, 2.8e-6));
    // Blocking on 4 ranks in a chain: 4 sequential rows of 8000 B.
    let s = Setup {
        ranks_per_host: 2,
        ..setup(1000, 4, Variant::Blocking)
    };
    let pb = predict(&profile(), &s).unwrap();
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
fn the_level_that_holds_a_block_names_it() {
    // N = 100 on 2 ranks: 2 * 52 * 102 * 8 = 84.9 kB per rank fits L2;
    // N = 8000: 2 * 4002 * 8002 * 8 = 512 MB goes to DRAM.
    let level = |n| {
        predict(&profile(), &setup(n, 2, Variant::Blocking))
            .unwrap()
            .level
    };
    assert_eq!(level(100), "L2");
    assert_eq!(level(1000), "L3");
    assert_eq!(level(8000), "DRAM");
}

#[test]
fn rows_beyond_the_l1_window_come_back_from_l2() {
    // N = 1024 on 2 ranks: a window of (4·1026 − 2)·8 = 32,816 B does
    // not fit the 32 KiB L1; the row above and the own row (16 B per
    // update) are loaded at one thread's L2 read bandwidth, 32 GB/s.
    let pr = predict(&profile(), &setup(1024, 2, Variant::Blocking)).unwrap();
    let windowed = pr
        .sweep
        .terms
        .iter()
        .find(|t| t.explain.contains("L2 holds it"))
        .expect("a term for the window in L2");
    let per_rank = 512.0 * 1024.0 * 16.0;
    assert!(close(windowed.seconds, per_rank / 32e9));
}

#[test]
fn one_rank_reads_the_one_thread_sweep() {
    // 1e6 updates of 8 + 2·8/1000 B at the one-thread read roof, 4 GB/s:
    // 2.004 ms; 31.984 B of L1 loads each at 64 GB/s: 0.49975 ms. No
    // messages.
    let pr = predict(&profile(), &setup(1000, 1, Variant::Nonblocking)).unwrap();
    assert!(close(pr.time_s, 2.004e-3 + 0.49975e-3), "{}", pr.time_s);
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
    // Without a sweep on the ranks' count the sweep cannot be predicted.
    p.sections.stream = None;
    let e = predict(&p, &setup(100, 1, Variant::Blocking)).unwrap_err();
    assert!(e.to_string().contains("calibrate --only stream"), "{e}");
}

#[test]
fn a_sweep_beyond_the_private_caches_sends_at_the_evicted_rates() {
    // After an evicting sweep the ping-pong measured T0 = 3 µs and
    // B = 2.5 GB/s up to 64 KiB.
    let mut p = profile();
    p.network.as_mut().unwrap().evicted_regimes = vec![NetworkRegime {
        from_bytes: 1.0,
        to_bytes: 65536.0,
        t0_s: Estimate::exact(3e-6),
        bandwidth_Bps: Estimate::exact(2.5e9),
        r_squared: 1.0,
    }];
    // N = 1000: 8.0 MB per rank, beyond the 1 MiB L2. Two rows of 8000 B
    // in turn: 2 · (3 µs + 8000/2.5e9) = 12.4 µs.
    let pr = predict(&p, &setup(1000, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.comm_s, 12.4e-6), "{}", pr.comm_s);
    assert!(pr.messages[0].evicted);
    assert!(pr.messages[0].regime.contains("after an evicting sweep"));
    // N = 100: 84.9 kB per rank stays in L2, and so do the buffers:
    // 2 · (1 µs + 800/5e9) = 2.32 µs.
    let pr = predict(&p, &setup(100, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.comm_s, 2.32e-6), "{}", pr.comm_s);
    assert!(!pr.messages[0].evicted);
    // N = 10000: rows of 80 kB lie beyond the sizes measured so.
    let pr = predict(&p, &setup(10000, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.comm_s, 2.0 * (1e-6 + 80000.0 / 5e9)));
    // Without evicted regimes, the ones in cache.
    let pr = predict(&profile(), &setup(1000, 2, Variant::Blocking)).unwrap();
    assert!(close(pr.comm_s, 5.2e-6));
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

#[test]
fn the_paired_prediction_scales_the_memory_time_by_the_drift() {
    // The memory bandwidth half what the profile says: the sweep's memory
    // term takes twice as long, its in-core terms and the messages as
    // before.
    let s = setup(1000, 2, Variant::Blocking);
    let term = |pr: &Prediction, resource: &str| {
        pr.sweep
            .terms
            .iter()
            .find(|t| t.resource == resource)
            .map(|t| t.seconds)
            .unwrap()
    };
    let profiled = predict(&profile(), &s).unwrap();
    let now = Now {
        memory: 0.5,
        ..Now::default()
    };
    let paired = predict_now(&profile(), &s, now).unwrap();
    assert!(close(
        term(&paired, "memory bandwidth"),
        2.0 * term(&profiled, "memory bandwidth")
    ));
    assert!(close(term(&paired, "compute"), term(&profiled, "compute")));
    assert!(close(paired.comm_s, profiled.comm_s));
    assert!(paired.time_s > profiled.time_s);
    assert_eq!(predict_now(&profile(), &s, Now::default()), Ok(profiled));
}

/// A rank's block on the last cache's step (beyond its plateau on the
/// sweep, within its share of the size the OS reports): the iteration is
/// predicted with the sweep in each of its two states, the messages and
/// the part of them the inner sweep hides as for the point.
#[test]
fn a_block_on_the_last_caches_step_gives_the_iteration_both_states() {
    let mut p = profile();
    p.provenance.os_reported_caches = vec![models::profile::ReportedCache {
        level: 3,
        kind: "Unified".into(),
        size_bytes: 256 << 20,
        line_bytes: Some(64),
    }];
    let copy = |bytes: f64, bw: f64| serde_json::json!({"kernel": "copy", "per_thread_bytes": bytes, "bandwidth_write_allocate_Bps": bw});
    let sweep = |threads: usize, bw: f64| serde_json::json!({"threads": threads, "points": [copy(16384.0, bw), copy(1048576.0, bw), copy(268435456.0, bw / 3.0)]});
    let plateau = |threads: usize| serde_json::json!({"name": "L3", "threads": threads, "from_bytes": 1048576.0, "to_bytes": 2097152.0, "points": [1048576.0], "read_bandwidth_Bps": {"point": 20e9, "lo": 20e9, "hi": 20e9}});
    p.sections
        .insert_json(
            "stream",
            serde_json::json!({"sweeps": [sweep(1, 12e9), sweep(2, 24e9)], "levels": [plateau(1), plateau(2)]}),
        )
        .unwrap();
    // N = 2000 on 2 ranks: 32 MB per rank, beyond the 1 MiB plateau and
    // within half of the 256 MiB reported.
    let s = setup(2000, 2, Variant::Nonblocking);
    let pr = predict(&p, &s).unwrap();
    let sweep_states = pr.sweep.states_s.expect("the sweep in two states");
    let f = 0.5;
    let iteration = |sweep_s: f64| {
        let inner = sweep_s * (998.0 * 2000.0) / (1000.0 * 2000.0);
        sweep_s + pr.comm_s - (f * pr.comm_s).min(inner)
    };
    let [whole, lost] = pr.states_s.expect("the iteration in two states");
    assert!(close(whole, iteration(sweep_states[0])), "{whole}");
    assert!(close(lost, iteration(sweep_states[1])), "{lost}");
    assert!(whole < pr.time_s && pr.time_s < lost);
    // The flat sweep of the other tests has one state.
    assert_eq!(predict(&profile(), &s).unwrap().states_s, None);
}
