//! In-core and latency terms: ceilings, random accesses, dependent
//! chains; missing figures; and a built-in kernel against its description.

use super::*;
use models::kernel::Traffic;
use models::profile::flops::{ChainOverlap, SpanLoads};

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
fn a_ceiling_seen_in_two_states_predicts_both() {
    let mut p = machine();
    let work = crate::kernels::matmul::work(2000, 2);
    // One state only: no states.
    assert_eq!(predict(&work, &Machine::new(&p), 2).unwrap().states_s, None);
    let dgemm = p
        .ceilings
        .iter_mut()
        .find(|c| c.kernel == CeilingKernel::Dgemm);
    dgemm.unwrap().states = Some(CeilingStates {
        slow_flops: 25e9,
        fast_flops: 50e9,
    });
    // 1.6e10 FLOP at 50 and at 25 GFLOP/s; the typical time stays at the
    // pooled ceiling's 40 GFLOP/s.
    let pr = predict(&work, &Machine::new(&p), 2).unwrap();
    let [fast, slow] = pr.states_s.expect("two states");
    assert!((fast - 0.32).abs() < 1e-12 && (slow - 0.64).abs() < 1e-12);
    assert!((pr.seconds - 0.4).abs() < 1e-12, "{}", pr.seconds);
    assert!(pr.terms[0].explain.contains("two states"));
    // A paired re-measure that finds the core at half its speed halves
    // both states' rates as well.
    let now = Now {
        compute: 0.5,
        ..Now::default()
    };
    let pr = predict(&work, &Machine::paired(&p, now), 2).unwrap();
    let [fast, slow] = pr.states_s.unwrap();
    assert!((fast - 0.64).abs() < 1e-12 && (slow - 1.28).abs() < 1e-12);
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

/// 1e6 random line reads over a 64 MiB region on 4 KiB pages.
fn random_reads() -> Work {
    Work {
        demands: vec![Demand::Random {
            accesses: RandomAccesses {
                lines: 1e6,
                region_bytes: 67108864.0,
                written: false,
                stride_bytes: None,
            },
            huge_pages: false,
        }],
    }
}

#[test]
fn random_accesses_overlap_k_misses_per_core() {
    let p = machine();
    let m = Machine::new(&p);
    let w = random_reads();
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
    let w = random_reads();
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

/// A scattered array on 4 KiB pages visits its pages in order: with a
/// 512-byte stride one access in eight opens a page and pays the 4 KiB
/// pages' λ/k, the rest the huge pages'.
#[test]
fn a_scattered_array_pays_a_page_walk_per_page() {
    let mut p = machine();
    p.sections
        .insert_json(
            "mlp",
            json!({"points": [{"k": 1, "bandwidth_Bps": 0.64e9}, {"k": 16, "bandwidth_Bps": 6.4e9},
                {"k": 1, "pages": "4KiB", "bandwidth_Bps": 0.5e9},
                {"k": 8, "pages": "4KiB", "bandwidth_Bps": 2.5e9}]}),
        )
        .unwrap();
    p.sections
        .insert_json(
            "latency",
            json!({"line_bytes": 64, "points": [
                {"size_bytes": 67108864, "pages": "4KiB", "latency_s": {"median": 100e-9}},
                {"size_bytes": 67108864, "pages": "2MiB", "latency_s": {"median": 60e-9}}
            ]}),
        )
        .unwrap();
    let m = Machine::new(&p);
    let scattered = |stride: f64, huge_pages: bool| Work {
        demands: vec![Demand::Random {
            accesses: RandomAccesses {
                lines: 1e6,
                region_bytes: 67108864.0,
                written: false,
                stride_bytes: Some(stride),
            },
            huge_pages,
        }],
    };
    // Two threads, each with half the lines (above the 64 MB of lines at
    // the DRAM roofs, 1.28 ms).
    let secs = |w: &Work| predict(w, &m, 2).unwrap().seconds;
    // λ/k: 100 ns / 5 on 4 KiB pages, 60 ns / 10 on huge pages.
    let (base, huge) = (100e-9 / 5.0, 60e-9 / 10.0);
    let want = |line_s: f64| 1e6 * line_s / 2.0;
    let close = |got: f64, want: f64| (got - want).abs() < 1e-12;
    assert!(close(
        secs(&scattered(512.0, false)),
        want(base / 8.0 + huge * 7.0 / 8.0)
    ));
    assert!(close(secs(&scattered(4096.0, false)), want(base)));
    assert!(close(secs(&scattered(512.0, true)), want(huge)));
    // Without a huge-page latency curve every access pays the 4 KiB
    // pages' figures, as before the share was counted.
    let mut old = p.clone();
    old.sections
        .insert_json(
            "latency",
            json!({"line_bytes": 64, "points": [
                {"size_bytes": 67108864, "pages": "4KiB", "latency_s": {"median": 100e-9}}
            ]}),
        )
        .unwrap();
    let m = Machine::new(&old);
    let got = predict(&scattered(512.0, false), &m, 2).unwrap().seconds;
    assert!(close(got, want(base)), "{got}");
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

/// A chain and its loop's transfers add where the profile measured no
/// overlap, and the measured share ω of the shorter one hides otherwise.
#[test]
fn a_chain_overlaps_its_transfers_as_much_as_measured() {
    let work = Work {
        demands: vec![
            Demand::Chain {
                steps_per_thread: 1e6,
            },
            Demand::Memory {
                traffic: Traffic::streaming(16e6, 8e6),
                per_thread_bytes: 64e6,
                huge_pages: true,
                isa: None,
            },
        ],
    };
    let with_overlap = |overlap: Option<f64>| {
        let mut p = machine();
        if let Some(overlap) = overlap {
            p.sections.flops.as_mut().unwrap().chain_overlap = vec![ChainOverlap {
                per_thread_bytes: 64 << 20,
                sum_s: 0.0,
                chain_s: 0.0,
                load_s: 0.0,
                overlap,
            }];
        }
        let pr = predict(&work, &Machine::new(&p), 2).unwrap();
        assert_eq!(pr.binding, "memory + chain");
        pr.seconds
    };
    // 1 ms of chain (1e6 adds of 1 ns) and 800 µs of transfers.
    assert!((with_overlap(None) - 1.8e-3).abs() < 1e-12);
    assert!((with_overlap(Some(1.0)) - 1.0e-3).abs() < 1e-12);
    assert!((with_overlap(Some(0.5)) - 1.4e-3).abs() < 1e-12);
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
        huge_pages: false,
        ..Build::builtin()
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

#[test]
fn a_built_in_kernel_takes_the_ceiling_of_the_code_it_runs() {
    use crate::kernels::described::Build;
    use crate::kernels::fusion::Variant;
    // An AVX-512 FMA ceiling twice the AVX2 one, as on a core with two
    // 512-bit FMA units: the fusion, whose loops run AVX2 code on either
    // CPU, is held to the AVX2 ceiling there.
    let mut p = machine();
    let mut wide = p.ceilings[0].clone();
    wide.isa = "avx512".into();
    wide.flops = Estimate::exact(200e9);
    p.ceilings.push(wide);
    let m = Machine::new(&p);
    let w = Variant::FusedExtraMath.work(1 << 20, 2);
    let flops = w.flops();
    let compute = predict(&w, &m, 2).unwrap().terms[0].clone();
    let ceiling = if Build::builtin().isa.is_some() {
        100e9
    } else {
        200e9
    };
    assert_eq!(compute.resource, "compute");
    assert!(
        (compute.seconds - flops / ceiling).abs() < 1e-15,
        "{}",
        compute.explain
    );
}

/// Horner's scheme 12 steps deep in f32 without FMA (12 flops), as
/// `predict kernel` describes it: its chains take 0.4 ns · (12/8)² =
/// 0.9 ns per f64 element in AVX2 (log–log between 8 and 16), 0.45 ns per
/// f32 one, more than its flops at the f32 ceiling (0.24 ms in all).
#[test]
fn chains_within_iterations_bind_where_the_window_holds_too_few() {
    use crate::kernels::described::{loop_work, Build};
    let p = machine();
    let m = Machine::new(&p);
    let k = models::kernel::LoopKernel {
        flops: 12.0,
        span: 12.0,
        precision: models::kernel::Precision::F32,
        ..models::kernel::LoopKernel::streaming(2e6, 2, Vec::new())
    };
    let on_machine = |m: &Machine, isa| {
        let build = Build {
            line_bytes: 64.0,
            huge_pages: true,
            isa,
        };
        predict(&loop_work(&k, build), m, 2)
    };
    // The span term of the prediction on `m` for code of `isa`.
    let span_on = |m: &Machine, isa| {
        let pr = on_machine(m, isa).unwrap();
        pr.terms.into_iter().find(|t| t.resource == SPAN).unwrap()
    };
    let near = |t: &Term, want: f64| assert!((t.seconds - want).abs() < 1e-15, "{}", t.seconds);
    let pr = on_machine(&m, Some("avx2")).unwrap();
    assert_eq!(pr.binding, SPAN);
    assert!((pr.seconds - 1e6 * 0.45e-9).abs() < 1e-15, "{}", pr.seconds);
    let span = span_on(&m, Some("avx2"));
    assert!(
        span.explain.contains("12 steps deep, avx2"),
        "{}",
        span.explain
    );
    // The profile's curve is one thread's, and the text says so.
    assert!(
        span.explain
            .contains("on 1 thread(s): the profile has none on 2"),
        "{}",
        span.explain
    );
    // Without a set named, the widest measured: 0.1 ns · 12/4 = 0.3 ns per
    // f64 element, 0.15 ns per f32 one.
    near(&span_on(&m, None), 1e6 * 0.15e-9);
    // The paired prediction scales the curve by the span drift: twice the
    // elements per second now, half the time.
    let now = Now {
        span: 2.0,
        ..Now::default()
    };
    near(
        &span_on(&Machine::paired(&p, now), Some("avx2")),
        1e6 * 0.225e-9,
    );
    // A profile from before the span was measured: no prediction, and
    // flops fixes it.
    let mut old = machine();
    old.sections.flops.as_mut().unwrap().span.clear();
    let e = on_machine(&Machine::new(&old), Some("avx2")).unwrap_err();
    assert_eq!(e.fix, "flops");
    assert!(e.to_string().contains("chain inside on avx2"), "{e}");
}

#[test]
fn a_region_adds_its_start_and_join_to_what_binds() {
    let p = machine();
    let m = Machine::new(&p);
    // 1e6 local-sum steps per thread at 0.75 ns: 750 µs, plus one empty
    // region on 2 threads, 10 µs.
    let sum = |steps: f64| Work {
        demands: vec![Demand::LocalSum {
            steps_per_thread: steps,
        }],
    };
    let pr = predict(&sum(1e6).in_regions(1.0), &m, 2).unwrap();
    assert_eq!(pr.binding, "local sum");
    assert!((pr.seconds - 760e-6).abs() < 1e-12, "{}", pr.seconds);
    let region = pr.terms.iter().find(|t| t.resource == REGIONS).unwrap();
    assert!(
        region.explain.contains("on 2 thread(s)"),
        "{}",
        region.explain
    );
    // A run too short to outlast its start and join is bound by them; on
    // one thread it reads the one-thread region.
    let pr = predict(&sum(1e3).in_regions(2.0), &m, 1).unwrap();
    assert_eq!(pr.binding, REGIONS);
    assert!(
        (pr.seconds - (30e-6 + 0.75e-6)).abs() < 1e-12,
        "{}",
        pr.seconds
    );
    // A profile from before the figure leaves the term at zero and says so.
    let mut old = machine();
    old.sections.c2c.as_mut().unwrap().regions.clear();
    let pr = predict(&sum(1e6).in_regions(1.0), &Machine::new(&old), 2).unwrap();
    assert!((pr.seconds - 750e-6).abs() < 1e-12, "{}", pr.seconds);
    assert!(pr
        .terms
        .iter()
        .any(|t| t.resource == REGIONS && t.explain.contains("calibrate --only c2c")));
}

/// A loop with chains 8 steps deep inside (0.4 ns per element in AVX2,
/// 1e6 elements per thread) that reads 8 MB per thread again: beside the
/// chains each reused byte costs t_c, the loaded Horner loop's figure.
#[test]
fn loads_read_again_add_their_measured_cost_to_the_chains_beside_them() {
    let work = Work {
        demands: vec![
            Demand::Span {
                depth: 8.0,
                elements_per_thread: 1e6,
                precision: "f64",
                isa: Some("avx2"),
            },
            Demand::Reuse {
                bytes_per_thread: 8e6,
                window_bytes: 0.0,
            },
        ],
    };
    let mut p = machine();
    p.levels.insert(0, MemoryLevel::cache("L1", 48e3, 400e9));
    let beside = |p: &Profile| {
        predict(&work, &Machine::new(p), 2)
            .unwrap()
            .terms
            .into_iter()
            .find(|t| t.resource == CHAINS_WITH_LOADS)
    };
    // A profile without the figure keeps the chains and the loads apart.
    assert_eq!(beside(&p), None);
    p.sections.flops.as_mut().unwrap().span_loads = vec![SpanLoads {
        isa: "avx2".into(),
        threads: 1,
        depth: 4,
        loads_per_element: 4,
        per_byte_s: Estimate::new(5e-12, 4e-12, 6e-12),
    }];
    let t = beside(&p).expect("the chains with their loads");
    let want = 1e6 * 0.4e-9 + 8e6 * 5e-12;
    assert!((t.seconds - want).abs() < 1e-15, "{}", t.explain);
    assert!(t.explain.contains("avx2"), "{}", t.explain);
    // It binds: more than the chains alone or the loads at any rate.
    let pr = predict(&work, &Machine::new(&p), 2).unwrap();
    assert_eq!(pr.binding, CHAINS_WITH_LOADS);
    // With a figure on two threads at once, a loop on two reads it.
    let mut two = p.clone();
    let flops = two.sections.flops.as_mut().unwrap();
    flops.span_loads.push(SpanLoads {
        threads: 2,
        per_byte_s: Estimate::exact(10e-12),
        ..flops.span_loads[0].clone()
    });
    let t = beside(&two).unwrap();
    assert!((t.seconds - (1e6 * 0.4e-9 + 8e6 * 10e-12)).abs() < 1e-15);
    assert!(t.explain.contains("2 thread(s)"), "{}", t.explain);
    // Code built for AVX-512 reads that set's figure, which this profile
    // lacks.
    p.sections.flops.as_mut().unwrap().span_loads[0].isa = "avx512".into();
    assert_eq!(beside(&p), None);
}
