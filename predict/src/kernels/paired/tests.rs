//! The paired re-measure: which profile point is measured again, and how
//! the drifts scale the roofs.

use super::target::nearest_point;
use super::*;
use calibrate::harness::kernels::stream::Kernel as StreamKernel;
use models::kernel::Traffic;
use models::profile::stream::StreamSweep;
use models::profile::stream::{StreamPoint, StreamSection};

fn point(kernel: &str, bytes: u64, threads: Option<usize>) -> StreamPoint {
    StreamPoint::with_bandwidth_wa(kernel, bytes, threads, 1e10)
}

fn section() -> StreamSection {
    let sweep = |b| ["copy", "triad", "load"].map(|k| point(k, b, None));
    StreamSection {
        dram_bytes: Some(1 << 30),
        sweeps: vec![StreamSweep {
            threads: 2,
            points: [sweep(32 << 10), sweep(1 << 20), sweep(64 << 20)].concat(),
        }],
        dram: ["copy", "triad", "load"]
            .map(|k| point(k, 512 << 20, Some(2)))
            .to_vec(),
        ..Default::default()
    }
}

#[test]
fn the_nearest_size_and_mix_of_the_profile_are_re_measured() {
    let s = section();
    // A read-only loop at 700 KiB per thread: the load kernel at 1 MiB.
    let read = Traffic::streaming(8.0, 0.0);
    let (p, k) = nearest_point(&s, 2, 700e3, &read).unwrap();
    assert_eq!((p.per_thread_bytes, k), (1 << 20, StreamKernel::Load));
    // One load and one store with write-allocate: copy's mix, at 32 KiB.
    let copy_like = Traffic {
        load_bytes: 8.0,
        store_bytes: 8.0,
        allocate_bytes: 8.0,
    };
    let (p, k) = nearest_point(&s, 2, 20e3, &copy_like).unwrap();
    assert_eq!((p.per_thread_bytes, k), (32 << 10, StreamKernel::Copy));
    // Beyond the sweep: the DRAM point.
    let (p, _) = nearest_point(&s, 2, 100e6, &read).unwrap();
    assert_eq!(p.per_thread_bytes, 512 << 20);
    // No sweep on that thread count.
    assert!(nearest_point(&s, 1, 1e6, &read).is_none());
}

#[test]
fn drifts_scale_the_roofs_and_flag_a_changed_machine() {
    let d = |now: f64| Drift {
        what: "x".into(),
        profile: 10.0,
        now,
        unit: "B/s",
    };
    let p = Paired {
        memory: Some(d(8.0)),
        compute: Some(d(10.5)),
        increments: Some(d(20.0)),
        local_sums: None,
        bin_loops: Some(d(5.0)),
        handoffs: None,
        migrations: None,
        loads: Some(d(9.0)),
    };
    assert_eq!(
        p.now(),
        Now {
            memory: 0.8,
            compute: 1.05,
            increments: 2.0,
            local_sums: 1.0,
            bin_loops: 0.5,
            handoffs: 1.0,
            migrations: 1.0,
            loads: 0.9,
        }
    );
    assert_eq!(p.changed().len(), 3);
    assert_eq!(Paired::default().now(), Now::default());
}

#[test]
fn reused_loads_re_measure_the_load_kernel_in_l1() {
    let mut p = Profile::new(Default::default());
    p.sections.stream = Some(section());
    let reuse = |bytes_per_thread| Work {
        demands: vec![Demand::Reuse {
            bytes_per_thread,
            window_bytes: 0.0,
        }],
    };
    // The load kernel at the sweep's smallest size, on the sweep's threads.
    let t = StreamTarget::loads(&reuse(1e6), 2, &p).unwrap();
    assert_eq!(
        (t.kernel, t.per_thread_bytes, t.profile_bandwidth),
        (StreamKernel::Load, 32 << 10, 1e10)
    );
    assert_eq!(t.drift(8e9, "2 thr").ratio(), 0.8);
    // No reused loads, or no sweep on that thread count: nothing.
    assert_eq!(StreamTarget::loads(&reuse(0.0), 2, &p), None);
    assert_eq!(StreamTarget::loads(&reuse(1e6), 1, &p), None);
}

#[test]
fn rounds_between_the_timings_give_each_figure_its_median() {
    let d = |now: f64| Drift {
        what: "mutex_spread, 2 thr".into(),
        profile: 10.0,
        now,
        unit: "op/s",
    };
    let round = |now| Paired {
        migrations: Some(d(now)),
        ..Paired::default()
    };
    // A slow state over two of the three rounds sets the drift.
    let p = median_rounds(&[round(4.0), round(10.0), round(5.0)]);
    let m = p.migrations.as_ref().unwrap();
    assert_eq!((m.profile, m.now), (10.0, 5.0));
    assert!(m.what.contains("median of 3 rounds"), "{}", m.what);
    assert_eq!((p.handoffs, p.memory, p.compute), (None, None, None));
    assert_eq!(median_rounds(&[]), Paired::default());
}

#[test]
fn a_round_runs_after_every_timing_of_the_kernel() {
    let profile = Profile::new(Default::default());
    // Flops only: the rounds re-measure nothing, quickly.
    let work = Work {
        demands: vec![Demand::Flops {
            flops: 1e6,
            precision: "f64",
            ceiling: CeilingKernel::Registers,
            isa: None,
        }],
    };
    let mut beside = Beside::new(Some(&profile), Some(&work), 1);
    let mut runs = 0;
    let plan = Plan::quick();
    let sample = crate::kernels::team::time(&plan, &mut beside, || {
        runs += 1;
        std::hint::black_box(runs);
    })
    .unwrap();
    let State::On { rounds, .. } = &beside.state else {
        panic!("the re-measure is on");
    };
    assert!(
        rounds.len() > sample.values().len(),
        "{} rounds",
        rounds.len()
    );
    assert_eq!(beside.finish().unwrap(), Some(Paired::default()));
    // No work or no profile: nothing to re-measure.
    assert!(Beside::new(None, Some(&work), 1)
        .finish()
        .unwrap()
        .is_none());
    assert!(Beside::new(Some(&profile), None, 1)
        .finish()
        .unwrap()
        .is_none());
}

#[test]
fn the_memory_figure_is_measured_after_every_other_timing() {
    let mut profile = Profile::new(Default::default());
    profile.sections.stream = Some(section());
    // A copy-like loop at 20 KB per thread: the copy at 32 KiB, cheap.
    let work = Work {
        demands: vec![Demand::Memory {
            traffic: Traffic {
                load_bytes: 8.0,
                store_bytes: 8.0,
                allocate_bytes: 8.0,
            },
            per_thread_bytes: 20e3,
        }],
    };
    let mut beside = Beside::new(Some(&profile), Some(&work), 1);
    // The profile's sweep is on 2 threads: nothing to measure on 1.
    let State::On { memory: None, .. } = &beside.state else {
        panic!("no memory target on 1 thread");
    };
    if crate::kernels::team::team(2).is_err() {
        return; // a 1-CPU machine
    }
    beside = Beside::new(Some(&profile), Some(&work), 2);
    let plan = Plan::quick();
    let mut runs = 0u64;
    crate::kernels::team::time(&plan, &mut beside, || runs = std::hint::black_box(runs + 1))
        .unwrap();
    let State::On {
        memory: Some(m),
        timings,
        ..
    } = &beside.state
    else {
        panic!("the memory target is the copy at 32 KiB");
    };
    assert_eq!(m.target.per_thread_bytes, 32 << 10);
    assert_eq!(m.now.len(), timings.div_ceil(2).min(MEMORY_ROUNDS));
    let paired = beside.finish().unwrap().unwrap();
    let memory = paired.memory.unwrap();
    assert!(memory.what.contains("rounds between"), "{}", memory.what);
    assert!(memory.now > 0.0);
}
