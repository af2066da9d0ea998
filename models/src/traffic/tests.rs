//! The level model's forms, its choice and the nearest-mix bound.

use super::*;

fn sample(l: f64, s: f64, a: f64, ns: f64) -> MixSample {
    MixSample {
        load_bytes: l,
        store_bytes: s,
        allocate_bytes: a,
        seconds: ns * 1e-9,
    }
}

/// A machine whose stores set the pace: copy and triad at the same
/// time per element, loads alone faster.
#[test]
fn store_bound_machine_reproduces_its_kernels() {
    let samples = [
        sample(8.0, 0.0, 0.0, 0.27),  // load
        sample(8.0, 8.0, 8.0, 0.62),  // copy
        sample(16.0, 8.0, 8.0, 0.62), // triad
    ];
    let r = TrafficRoofs::from_samples(&samples).unwrap();
    for s in &samples {
        let t = Traffic {
            load_bytes: s.load_bytes,
            store_bytes: s.store_bytes,
            allocate_bytes: s.allocate_bytes,
        };
        let (secs, _) = r.time_s(&t);
        assert!((secs - s.seconds).abs() < 1e-15, "{secs} vs {}", s.seconds);
    }
    // Stores bind the triad here.
    let triad = Traffic::streaming(16.0, 8.0);
    assert_eq!(r.time_s(&triad).1, Roof::Write);
}

/// A machine where every byte on the bus counts alike.
#[test]
fn bus_bound_machine() {
    let samples = [
        sample(8.0, 0.0, 0.0, 0.52),
        sample(8.0, 8.0, 8.0, 1.12),
        sample(16.0, 8.0, 8.0, 1.51),
    ];
    let r = TrafficRoofs::from_samples(&samples).unwrap();
    // The triad at its own time, which its fill rate sets; the bus
    // roof, from the copy, is within 2% of it.
    let triad = Traffic::streaming(16.0, 8.0);
    let (t, roof) = r.time_s(&triad);
    assert_eq!(roof, Roof::Fill);
    assert!((t - 1.51e-9).abs() < 1e-18, "{t}");
    assert!((triad.bus_bytes() / r.bus_Bps / 1.51e-9 - 1.0).abs() < 0.02);
    // Loads alone: the read roof.
    let (t, roof) = r.time_s(&Traffic::streaming(8.0, 0.0));
    assert_eq!(roof, Roof::Read);
    assert!((t - 0.52e-9).abs() < 1e-15);
}

/// Reads beside allocating stores reach more than loads alone, and
/// the bus roof comes from kernels that do not read and allocate at
/// once (the Zen 4 VM's two-thread DRAM figures, GB/s with
/// write-allocate: load 40, triad 56, update and store 64): the fill
/// roof gives the triad its own time, which the bus roof undercuts.
#[test]
fn line_fills_bind_reads_beside_allocating_stores() {
    let ns = |bytes: f64, gbps: f64| bytes / gbps;
    let samples = [
        sample(8.0, 0.0, 0.0, ns(8.0, 40.0)),   // load
        sample(16.0, 8.0, 8.0, ns(32.0, 56.0)), // triad
        sample(8.0, 8.0, 0.0, ns(16.0, 64.0)),  // update
        sample(0.0, 8.0, 8.0, ns(16.0, 64.0)),  // store
    ];
    let r = TrafficRoofs::from_samples(&samples).unwrap();
    assert!((r.fill_Bps - 42e9).abs() < 1e-3, "{r:?}");
    let (t, roof) = r.time_s(&Traffic::streaming(16.0, 8.0));
    assert_eq!(roof, Roof::Fill);
    assert!((t - ns(32.0, 56.0) * 1e-9).abs() < 1e-18, "{t}");
    // Loads alone keep their own, lower roof.
    let (t, roof) = r.time_s(&Traffic::streaming(8.0, 0.0));
    assert_eq!(roof, Roof::Read);
    assert!((t - 0.2e-9).abs() < 1e-18, "{t}");
}

#[test]
fn unmeasured_roofs_do_not_bind() {
    let r = TrafficRoofs::from_samples(&[sample(8.0, 0.0, 0.0, 1.0)]).unwrap();
    assert!(r.write_Bps.is_infinite());
    let (t, _) = r.time_s(&Traffic::streaming(8.0, 8.0));
    assert!(t.is_finite());
    assert!(TrafficRoofs::from_samples(&[]).is_none());
}

/// A machine whose streams add: a triad costs two loads and a store.
#[test]
fn adding_machine_is_fitted_and_chosen() {
    let samples = [
        sample(8.0, 0.0, 0.0, 0.5),  // load
        sample(0.0, 8.0, 8.0, 0.9),  // store
        sample(8.0, 8.0, 0.0, 0.57), // update
        sample(8.0, 8.0, 8.0, 1.4),  // copy
        sample(16.0, 8.0, 8.0, 1.9), // triad
    ];
    let m = LevelModel::from_samples(&samples).unwrap();
    assert_eq!(m.form, Form::Adding);
    assert!(m.rms_adding < 0.05, "{m:?}");
    let triad = Traffic::streaming(16.0, 8.0);
    assert!((m.time_s(&triad) - 1.9e-9).abs() < 0.1e-9);
    // The store-bound machine above keeps the overlapping form.
    let overlap = [
        sample(8.0, 0.0, 0.0, 0.27),
        sample(8.0, 8.0, 8.0, 0.62),
        sample(16.0, 8.0, 8.0, 0.62),
    ];
    assert_eq!(
        LevelModel::from_samples(&overlap).unwrap().form,
        Form::Overlapping
    );
}

/// One thread at DRAM, AVX2 kernels on the Zen 4 VM (GB/s with
/// write-allocate): copy 53.9, triad 53.5, load 26.7, update 55.5,
/// store 62.2. The triad's 40 GB/s of line fills set the fill roof, 10%
/// above the copy's 36: the roofs alone put a copy-like loop under its
/// own kernel's time, the nearest mix keeps it there.
#[test]
fn a_loop_is_never_faster_than_the_kernel_of_its_nearest_mix() {
    let ns = |bytes: f64, gbps: f64| bytes / gbps;
    let samples = [
        sample(8.0, 8.0, 8.0, ns(24.0, 53.9)),  // copy
        sample(16.0, 8.0, 8.0, ns(32.0, 53.5)), // triad
        sample(8.0, 0.0, 0.0, ns(8.0, 26.7)),   // load
        sample(8.0, 8.0, 0.0, ns(16.0, 55.5)),  // update
        sample(0.0, 8.0, 8.0, ns(16.0, 62.2)),  // store
    ];
    let m = LevelModel::from_samples(&samples).unwrap();
    assert_eq!(m.form, Form::Overlapping);
    // A stencil's update of f32: 4 B loaded, stored and allocated.
    let copy_like = Traffic {
        load_bytes: 4.0,
        store_bytes: 4.0,
        allocate_bytes: 4.0,
    };
    let roofs = m.form_time_s(&copy_like);
    assert!(
        (roofs / (ns(12.0, 53.9) * 1e-9) - 0.897).abs() < 0.01,
        "{roofs}"
    );
    let n = m.nearest_mix(&copy_like).unwrap();
    assert_eq!(n.kernel, samples[0]);
    assert!((m.time_s(&copy_like) - ns(12.0, 53.9) * 1e-9).abs() < 1e-18);
    // Every measured kernel is its own nearest mix and keeps its time.
    for s in &samples {
        let t = m.time_s(&s.traffic());
        assert!((t / s.seconds - 1.0).abs() < 1e-12, "{s:?}: {t}");
    }
    // A mix between two kernels reads the nearer one: three loads and
    // a store is nearer the triad's (½, ¼, ¼) than the load's.
    let four_streams = Traffic::streaming(24.0, 8.0);
    assert_eq!(m.nearest_mix(&four_streams).unwrap().kernel, samples[1]);
    assert!(m.nearest_mix(&Traffic::default()).is_none());
}

#[test]
fn of_kernels_with_one_mix_the_fastest_bounds_and_scaling_moves_it() {
    // Copy and scale move the same bytes; the faster sets the bound.
    let samples = [
        sample(8.0, 8.0, 8.0, 0.50), // copy
        sample(8.0, 8.0, 8.0, 0.48), // scale
        sample(8.0, 0.0, 0.0, 0.30), // load
    ];
    let m = LevelModel::from_samples(&samples).unwrap();
    let copy = Traffic::streaming(8.0, 8.0);
    assert_eq!(m.nearest_mix(&copy).unwrap().kernel, samples[1]);
    let slower = m.clone().scaled(0.5);
    assert!((slower.time_s(&copy) / m.time_s(&copy) - 2.0).abs() < 1e-12);
}

#[test]
fn unexercised_classes_are_priced_from_the_others() {
    let c = StreamCosts::fit(&[sample(8.0, 0.0, 0.0, 0.8), sample(8.0, 8.0, 8.0, 2.4)]).unwrap();
    assert!((c.load_s_per_byte - 0.1e-9).abs() < 1e-15);
    assert!((c.store_s_per_byte - 0.2e-9).abs() < 1e-15);
    assert!((c.update_s_per_byte - 0.3e-9).abs() < 1e-15);
    assert!(StreamCosts::fit(&[]).is_none());
}
