//! The interleaved re-measure: a round after every timing, the memory
//! figure after every other one, each read from its rounds as the
//! kernel's time is read from its timings.

use super::*;
use crate::kernels::paired::tests::section;
use crate::kernels::work::Demand;
use models::kernel::Traffic;
use models::profile::{CeilingKernel, MemoryLevel};

#[test]
fn rounds_between_the_timings_are_read_as_the_kernels_timings_are() {
    let d = |now: f64| Drift {
        what: "mutex_spread, 2 thr".into(),
        profile: 10.0,
        now,
        unit: "op/s",
    };
    let round = |now| Paired {
        migrations: Some(d(now)),
        placement_line_s: Some(now * 1e-8),
        ..Paired::default()
    };
    // The kernel's time is the 0.2-quantile of its timings, so a fast
    // state in a fifth of the rounds or more sets the drift: the best of
    // three rounds, the second best of ten.
    let p = of_the_rounds(&[round(4.0), round(10.0), round(5.0)]);
    let m = p.migrations.as_ref().unwrap();
    assert_eq!((m.profile, m.now), (10.0, 10.0));
    assert!(m.what.contains("0.8-quantile of 3 rounds"), "{}", m.what);
    assert_eq!((p.handoffs, p.memory, p.compute), (None, None, None));
    // Where the threads ran is no rate: the median probe.
    assert_eq!(p.placement_line_s, Some(5e-8));
    let ten: Vec<Paired> = (1..=10).map(|k| round(f64::from(k))).collect();
    assert_eq!(of_the_rounds(&ten).migrations.unwrap().now, 9.0);
    assert_eq!(of_the_rounds(&[]), Paired::default());
}

/// Flops only: the rounds re-measure nothing, quickly.
fn flops_only() -> Work {
    Work {
        demands: vec![Demand::Flops {
            flops: 1e6,
            precision: "f64",
            ceiling: CeilingKernel::Registers,
            isa: None,
        }],
    }
}

#[test]
fn a_round_runs_after_every_timing_of_the_kernel() {
    let profile = Profile::new(Default::default());
    let work = flops_only();
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

/// Calls of a kernel that outlasts a timing's minimum (so every timing
/// is one call) timed beside `beside`, and the timings kept.
fn calls_of_a_slow_kernel(beside: &mut Beside) -> (usize, usize) {
    let plan = Plan::quick();
    let mut calls = 0;
    let sample = crate::kernels::team::time(&plan, beside, || {
        calls += 1;
        std::thread::sleep(plan.min_time + std::time::Duration::from_micros(100));
    })
    .unwrap();
    (calls, sample.values().len())
}

#[test]
fn an_untimed_call_follows_every_round() {
    let profile = Profile::new(Default::default());
    let work = flops_only();
    let mut beside = Beside::new(Some(&profile), Some(&work), 1);
    let (calls, _) = calls_of_a_slow_kernel(&mut beside);
    let State::On { timings, .. } = &beside.state else {
        panic!("the re-measure is on");
    };
    // One call per timing and one warm-up after each round: the kernel
    // streams nothing a cache holds, so nothing to win back.
    assert!(*timings > 0);
    assert!(!beside.streams_from_a_cache());
    assert_eq!(calls, 2 * *timings);
    // Without a re-measure there is nothing to warm up after.
    let (calls, kept) = calls_of_a_slow_kernel(&mut Beside::new(None, Some(&work), 1));
    assert!(calls >= kept && calls < 2 * kept + 4);
}

#[test]
fn the_memory_figure_is_measured_after_every_other_timing() {
    let mut profile = Profile::new(Default::default());
    profile.sections.stream = Some(section());
    profile.levels = [
        ("L1", Some(32768.0)),
        ("L2", Some(1048576.0)),
        ("DRAM", None),
    ]
    .map(|(name, size_bytes)| MemoryLevel {
        name: name.into(),
        size_bytes,
        latency_s: None,
        bandwidth_1t_Bps: None,
        bandwidth_Bps: None,
    })
    .to_vec();
    // A copy-like loop at 20 KB per thread, in L1: the copy at 32 KiB, cheap.
    let work = Work {
        demands: vec![Demand::Memory {
            traffic: Traffic {
                load_bytes: 8.0,
                store_bytes: 8.0,
                allocate_bytes: 8.0,
            },
            per_thread_bytes: 20e3,
            huge_pages: true,
            isa: None,
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
    assert!(beside.streams_from_a_cache(), "20 KB per thread is in L1");
    assert_eq!(m.now.len(), timings.div_ceil(2).min(MEMORY_ROUNDS));
    let paired = beside.finish().unwrap().unwrap();
    let memory = paired.memory.unwrap();
    assert!(memory.what.contains("rounds between"), "{}", memory.what);
    assert!(memory.now > 0.0);
    // The same copy beside a local sum that binds: its time does not wait
    // on the cache, so one untimed call follows a round, not a restore.
    let step = models::profile::Sample::new(1e-9, 1e-9, 1e-9);
    profile.sections.c2c = Some(models::profile::c2c::C2cSection {
        increments: Some(models::profile::c2c::Increments {
            local: Some(models::profile::c2c::Increment {
                threads: 2,
                bins: None,
                per_increment_s: None,
                per_step_s: Some(step),
                per_item_s: None,
                output_bytes: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    let mut summed = work.clone();
    summed.demands.push(Demand::LocalSum {
        steps_per_thread: 1e9,
    });
    let beside = Beside::new(Some(&profile), Some(&summed), 2);
    assert!(matches!(
        &beside.state,
        State::On {
            memory: Some(_),
            ..
        }
    ));
    assert!(!beside.streams_from_a_cache());
}
