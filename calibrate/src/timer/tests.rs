//! The timing plan and its measurement, on synthetic and recorded timings.

use super::*;

#[test]
fn inner_count_reaches_the_minimum() {
    // A fake clock: each unit takes 1 µs.
    let mut calls = 0;
    let m = inner_count(Duration::from_millis(1), 1, |m| {
        calls += 1;
        Duration::from_micros(m)
    });
    assert!(m >= 1000, "{m}");
    assert!(m < 20_000, "{m}");
    assert!(calls < 10, "{calls}");
}

#[test]
fn warmup_is_dropped_and_units_divided() {
    let plan = Plan {
        warmup: 2,
        reps: 3,
        ..Plan::quick()
    };
    let mut n = 0u64;
    let r = measure_with(&plan, 10, |m, count| {
        (0..count)
            .map(|_| {
                n += 1;
                quiet(if n <= 2 {
                    1e-3 * m as f64
                } else {
                    1e-4 * m as f64
                })
            })
            .collect()
    })
    .unwrap();
    assert_eq!(r.per_unit.values(), &[1e-4, 1e-4, 1e-4]);
    assert_eq!(r.per_unit.disturbed(), 0);
}

/// A quiet timing of `d` seconds.
fn quiet(d: f64) -> BatchReading {
    BatchReading {
        duration_s: d,
        ..Default::default()
    }
}

/// Fixture: a ping-pong on a 2-vCPU guest where the other vCPU was
/// descheduled for some batches (run delay recorded, µs-range timings
/// stretched to 10 ms).
fn stretched(d: f64, delay: f64) -> BatchReading {
    BatchReading {
        duration_s: d,
        steal_s: 0.0,
        run_delay_s: delay,
    }
}

#[test]
fn disturbed_batches_are_set_aside_and_counted() {
    let plan = Plan::quick();
    let mut script = vec![
        quiet(9e-3), // warm-up
        quiet(1e-3),
        stretched(11e-3, 10e-3),
        quiet(1.01e-3),
        quiet(1.02e-3),
        stretched(3e-3, 2e-3),
        quiet(1.0e-3),
        quiet(1.03e-3),
    ]
    .into_iter();
    let r = measure_with(&plan, 1000, |_, count| {
        script.by_ref().take(count).collect()
    })
    .unwrap();
    assert_eq!(r.per_unit.values().len(), 5);
    assert_eq!(r.per_unit.disturbed(), 2);
    assert_eq!(r.per_unit.unreliable(), None);
    assert_eq!(
        r.batches.len(),
        7,
        "disturbed batches are kept in the record"
    );
    assert!(r.per_unit.values().iter().all(|&v| v < 1.1e-6));
}

#[test]
fn a_disturbed_first_unit_does_not_set_the_inner_count() {
    // Recorded on a busy CPU: the first single unit waited 16 ms for the
    // descheduled second thread (19.9 ms), the later ones took 0.3-4 µs.
    // Taken at face value, one unit per timing timed the barriers.
    let j: serde_json::Value = serde_json::from_str(include_str!(
        "../../../data/fixtures/batches_xeon_peak_f64_2t_inner1.json"
    ))
    .unwrap();
    let recorded: Vec<BatchReading> = j["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| serde_json::from_value(b.clone()).unwrap())
        .collect();
    let unit = recorded[6].duration_s;
    let plan = Plan::quick();
    let mut calls = 0;
    let r = measure(&plan, |m, count| {
        calls += 1;
        if calls == 1 {
            vec![recorded[0]; count]
        } else {
            vec![quiet(unit * m as f64); count]
        }
    })
    .unwrap();
    assert!(r.inner as f64 * unit >= 1e-3, "inner {}", r.inner);
    let replay = Plan {
        warmup: 0,
        ..plan.without_retry()
    };
    let first = measure_with(&replay, 1, |_, count| recorded[..count].to_vec()).unwrap();
    assert_eq!(
        first.per_unit.disturbed(),
        1,
        "the old way: 6 'clean' barrier timings"
    );
}

#[test]
fn persistent_disturbance_estimates_the_quiet_duration() {
    let mut batch = |_: u64, count: usize| vec![stretched(3e-3, 2e-3); count];
    let d = quiet_duration(&mut batch, 10);
    assert!((d.as_secs_f64() - 1e-3).abs() < 1e-9, "{d:?}");
}

#[test]
fn a_lost_time_covering_the_timing_keeps_its_duration() {
    // Fixture: 1 ms timings each charged a 10 ms steal tick of the
    // other CPU. Taking them as 0 s grew the inner count a hundredfold
    // per step, to timings of seconds.
    let ticked = BatchReading {
        duration_s: 1e-3,
        steal_s: 1e-2,
        run_delay_s: 0.0,
    };
    let mut batch = |_: u64, count: usize| vec![ticked; count];
    assert_eq!(quiet_duration(&mut batch, 10), Duration::from_millis(1));
    let m = inner_count(Duration::from_millis(1), 1, |m| {
        quiet_duration(
            &mut |_, count| {
                vec![
                    BatchReading {
                        duration_s: 1e-3 * m as f64,
                        ..ticked
                    };
                    count
                ]
            },
            m,
        )
    });
    assert_eq!(m, 1);
}

#[test]
fn too_short_timings_find_the_inner_count_again() {
    // The calibration saw a quiet 2 ms for one unit (a fluke); the real
    // unit is 1 µs, so the timings are far below min_time.
    let plan = Plan::quick();
    let mut first = true;
    let r = measure(&plan, |m, count| {
        let d = if std::mem::take(&mut first) {
            2e-3
        } else {
            1e-6 * m as f64
        };
        vec![quiet(d); count]
    })
    .unwrap();
    assert!(r.inner >= 1000, "inner {}", r.inner);
}

#[test]
fn too_few_clean_batches_are_re_measured() {
    let plan = Plan::quick();
    let mut calls = Vec::new();
    let r = measure_with(&plan, 1, |_, count| {
        calls.push(count);
        // The first attempt is all disturbed, the re-measurement quiet.
        let first = calls.len() == 1;
        (0..count)
            .map(|_| {
                if first {
                    stretched(2e-3, 1e-3)
                } else {
                    quiet(1e-3)
                }
            })
            .collect()
    })
    .unwrap();
    assert_eq!(calls, [8, 8], "one warm-up and reps timings more");
    assert_eq!(r.per_unit.unreliable(), None);
    assert_eq!((r.per_unit.values().len(), r.per_unit.disturbed()), (7, 7));
}

#[test]
fn a_figure_that_stays_disturbed_is_unreliable() {
    let plan = Plan::quick();
    let mut calls = 0;
    let r = measure_with(&plan, 1, |_, count| {
        calls += 1;
        (0..count).map(|_| stretched(2e-3, 1e-3)).collect()
    })
    .unwrap();
    assert_eq!(
        calls,
        1 + RETRY_FACTOR,
        "re-measuring stops after its rounds"
    );
    let why = r.per_unit.unreliable().unwrap();
    assert!(
        why.starts_with("only 0 of 28 timed batches were clean"),
        "{why}"
    );
    assert_eq!(r.per_unit.values().len(), 28, "all timings kept, marked");
}

#[test]
fn re_measuring_stops_at_the_time_cap() {
    let plan = Plan {
        retry_cap: Duration::from_millis(10),
        ..Plan::quick()
    };
    let mut calls = 0;
    let _ = measure_with(&plan, 1, |_, count| {
        calls += 1;
        (0..count).map(|_| stretched(20e-3, 10e-3)).collect()
    })
    .unwrap();
    assert_eq!(calls, 2, "one round already spent the 10 ms cap");
}

#[test]
fn serial_batches_time_each_call() {
    let mut calls = Vec::new();
    let mut b = serial(|m| calls.push(m));
    assert_eq!(b(5, 3).len(), 3);
    drop(b);
    assert_eq!(calls, [5, 5, 5]);
}

#[test]
fn timings_still_falling_are_warm_up_and_taken_again() {
    let plan = Plan {
        warmup: 0,
        reps: 6,
        ..Plan::quick()
    };
    // A working set winning back its cache: each pass faster, then flat.
    let mut paces = [6.0, 5.5, 4.9, 4.2, 3.6, 3.1, 3.0, 3.0, 3.1, 3.0, 3.0, 3.0].into_iter();
    let mut taken = 0;
    let r = measure_with(&plan, 1, |_, count| {
        taken += count;
        (0..count)
            .map(|_| quiet(paces.next().unwrap() * 1e-3))
            .collect()
    })
    .unwrap();
    assert_eq!(taken, 12, "the falling half taken again, twice");
    assert!(
        r.per_unit.values().iter().all(|&v| v < 3.15e-3),
        "{:?}",
        r.per_unit.values()
    );

    // A flat series with noise is kept as it is.
    let mut calls = 0;
    let flat = [3.0, 3.2, 2.9, 3.1, 3.0, 2.95];
    measure_with(&plan, 1, |_, count| {
        calls += 1;
        flat[..count].iter().map(|&d| quiet(d * 1e-3)).collect()
    })
    .unwrap();
    assert_eq!(calls, 1);
}
