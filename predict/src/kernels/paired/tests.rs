//! The paired re-measure: which profile point is measured again, and how
//! the drifts scale the roofs.

use super::target::nearest_point;
use super::*;
use crate::kernels::work::Demand;
use calibrate::harness::kernels::stream::Kernel as StreamKernel;
use models::kernel::Traffic;
use models::profile::stream::StreamSweep;
use models::profile::stream::{StreamPoint, StreamSection};

fn point(kernel: &str, bytes: u64, threads: Option<usize>) -> StreamPoint {
    StreamPoint::with_bandwidth_wa(kernel, bytes, threads, 1e10)
}

pub(super) fn section() -> StreamSection {
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
    let (p, k) = nearest_point(&s, 2, 700e3, &read, true).unwrap();
    assert_eq!((p.per_thread_bytes, k), (1 << 20, StreamKernel::Load));
    // One load and one store with write-allocate: copy's mix, at 32 KiB.
    let copy_like = Traffic {
        load_bytes: 8.0,
        store_bytes: 8.0,
        allocate_bytes: 8.0,
    };
    let (p, k) = nearest_point(&s, 2, 20e3, &copy_like, true).unwrap();
    assert_eq!((p.per_thread_bytes, k), (32 << 10, StreamKernel::Copy));
    // Beyond the sweep: the DRAM point.
    let (p, _) = nearest_point(&s, 2, 100e6, &read, true).unwrap();
    assert_eq!(p.per_thread_bytes, 512 << 20);
    // No sweep on that thread count.
    assert!(nearest_point(&s, 1, 1e6, &read, true).is_none());
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
        scatters: Some(d(6.0)),
        handoffs: None,
        migrations: None,
        loads: Some(d(9.0)),
        span: Some(d(12.5)),
        placement_line_s: Some(31e-9),
    };
    assert_eq!(
        p.now(),
        Now {
            memory: 0.8,
            compute: 1.05,
            increments: 2.0,
            local_sums: 1.0,
            bin_loops: 0.5,
            scatters: Some(0.6),
            handoffs: 1.0,
            migrations: 1.0,
            loads: 0.9,
            span: 1.25,
        }
    );
    assert_eq!(p.changed().len(), 5);
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
fn a_loop_on_4_kib_pages_re_measures_a_4_kib_page_point() {
    let mut s = section();
    s.base_pages = vec![StreamSweep {
        threads: 2,
        points: [1 << 20, 512 << 20]
            .into_iter()
            .flat_map(|b| ["copy", "triad", "load"].map(|k| point(k, b, None)))
            .collect(),
    }];
    let read = Traffic::streaming(8.0, 0.0);
    let (p, _) = nearest_point(&s, 2, 100e6, &read, false).unwrap();
    assert!(s.base_page_points(2).any(|b| std::ptr::eq(b, p)));
    assert_eq!(p.per_thread_bytes, 512 << 20);
    // Below the 4 KiB-page sweep's first size: the huge-page sweep.
    let (p, _) = nearest_point(&s, 2, 20e3, &read, false).unwrap();
    assert_eq!(p.per_thread_bytes, 32 << 10);
    assert!(!s.base_page_points(2).any(|b| std::ptr::eq(b, p)));
}

#[test]
fn a_scatter_re_measures_the_curve_point_nearest_its_pass() {
    use super::target::scatter_target;
    use crate::kernels::work::SortLoop;
    use models::profile::c2c::{C2cSection, Increment, Increments};
    let point = |t: f64, bytes: u64| Increment {
        threads: 2,
        bins: Some(256),
        per_increment_s: None,
        per_step_s: None,
        per_item_s: Some(models::profile::Sample::new(t, t, t)),
        output_bytes: Some(bytes),
    };
    let mut p = Profile::new(Default::default());
    p.sections.c2c = Some(C2cSection {
        increments: Some(Increments {
            scatter_curve: vec![point(2e-9, 1 << 20), point(3e-9, 4 << 20)],
            scatter_dram: Some(point(6e-9, 256 << 20)),
            ..Default::default()
        }),
        ..Default::default()
    });
    let scatter = |bytes| Work {
        demands: vec![Demand::BinLoop {
            kind: SortLoop::Scatter,
            items_per_thread: 1e6,
            working_set_per_thread: bytes,
        }],
    };
    let bytes = |w: &Work, threads| scatter_target(w, threads, &p).map(|s| s.output_bytes);
    // 3 MB is nearer 4 MiB than 1 MiB in log size.
    assert_eq!(bytes(&scatter(3e6), 2), Some(4 << 20));
    assert_eq!(bytes(&scatter(1.5e6), 2), Some(1 << 20));
    // Nearest the DRAM point: the memory drift stands for it.
    assert_eq!(bytes(&scatter(200e6), 2), None);
    // Measured on two threads, not one.
    assert_eq!(bytes(&scatter(3e6), 1), None);
    // A histogram has no scatter to re-measure.
    let hist = Work {
        demands: vec![Demand::BinLoop {
            kind: SortLoop::Histogram,
            items_per_thread: 1e6,
            working_set_per_thread: 3e6,
        }],
    };
    assert_eq!(bytes(&hist, 2), None);
}
