//! Lock and shared-line terms: hand-offs, line migrations and their two
//! states.

use super::*;

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
    // Shorter critical sections: t_p = 14 ns + 6 ns · cs/5 ns; longer
    // ones add their excess over the measured 5 ns: 20 + 5 ns at 10 ns.
    assert!((secs(section(1.0, 0.0, 0.0)) - 14e-3).abs() < 1e-12);
    assert!((secs(section(1.0, 0.0, 2.5e-9)) - 17e-3).abs() < 1e-12);
    assert!((secs(section(1.0, 0.0, 10e-9)) - 25e-3).abs() < 1e-12);
    // 256 locks: the threads in parallel, each acquisition finding the
    // lock's line at the other core half the time: (10 + ½·16) ns / 2.
    assert!((secs(lock(256.0, 0.0)) - 9e-3).abs() < 1e-12);
    // One data line besides the lock's, migrating inside the section:
    // t_p read at 5 + 16 ns, 20 + 16 = 36 ns; half a line, at 13 ns, 28 ns;
    // with an empty section, half a line makes it 8 ns, 3 ns beyond the
    // measured 5: 20 + 3 = 23 ns; a quarter line, 4 ns: 14 + 6·4/5 = 18.8.
    assert!((secs(lock(1.0, 1.0)) - 36e-3).abs() < 1e-12);
    assert!((secs(lock(1.0, 0.5)) - 28e-3).abs() < 1e-12);
    assert!((secs(section(1.0, 0.5, 0.0)) - 23e-3).abs() < 1e-12);
    assert!((secs(section(1.0, 0.25, 0.0)) - 18.8e-3).abs() < 1e-12);
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
fn the_line_migration_is_read_at_the_kernels_section_length() {
    // The spread mutexes also measured around an empty section: 10 ns on
    // one thread, 16 ns per thread on two, so m = (16 − 10)·2 = 12 ns
    // there against (20 − 12)·2 = 16 ns around the measured 5 ns.
    let mut p = machine();
    let mut lock = p.sections.lock.clone().unwrap();
    lock.kinds.push(
        serde_json::from_value(json!({"kind": "mutex_spread_empty", "points": [
            {"threads": 1, "oversubscribed": false, "throughput_ops": {"median": 1e8}},
            {"threads": 2, "oversubscribed": false, "throughput_ops": {"median": 1.25e8}}
        ]}))
        .unwrap(),
    );
    p.sections.lock = Some(lock);
    let m = Machine::new(&p);
    let secs = |critical_s| predict(&mutex(1e6, 256.0, 0.0, critical_s), &m, 2).unwrap();
    // Empty: (t_1 + ½·m)/2 = (8 + 6)/2 ns per operation.
    let empty = secs(0.0);
    assert!((empty.seconds - 7e-3).abs() < 1e-12, "{}", empty.seconds);
    assert!(empty.terms[0].explain.contains("around the same section"));
    // Half the measured section: the spread mutexes' 1/X_1 = 11 ns and
    // 1/X_p = 9 ns, m = (18 − 11)·2 = 14 ns; t_1 = 9 ns; (9 + 7)/2 = 8 ns.
    assert!((secs(2.5e-9).seconds - 8e-3).abs() < 1e-12);
    // At and beyond the measured section, the measured figures: 9 ns.
    assert!((secs(5e-9).seconds - 9e-3).abs() < 1e-12);
    // Without the empty section's figure the migration is the measured
    // section's: (8 + 8)/2 ns.
    let plain = machine();
    let pr = predict(&mutex(1e6, 256.0, 0.0, 0.0), &Machine::new(&plain), 2).unwrap();
    assert!((pr.seconds - 8e-3).abs() < 1e-12);
}

#[test]
fn a_lock_whose_rounds_have_two_states_predicts_both() {
    // Two locks (no holder has them all to itself), one state: no pair.
    let two = mutex(1e6, 2.0, 0.0, 0.0);
    let p = machine();
    assert_eq!(predict(&two, &Machine::new(&p), 2).unwrap().states_s, None);
    // The empty section's 2-thread rounds between 10 and 40 ns per op.
    let mut p = machine();
    let t = &mut p.sections.lock.as_mut().unwrap().kinds[1].points[1].throughput_ops;
    t.high_quantile = Some(Estimate::exact(1e8));
    t.low_quantile = Some(Estimate::exact(2.5e7));
    // Each lock's hand-offs (t_p / 2 per op) against each thread's own
    // work (t_1 and half a 16 ns migration): max(7, 8) = 8 ms typical,
    // max(5, 8) = 8 ms fast, max(20, 8) = 20 ms slow.
    let pr = predict(&two, &Machine::new(&p), 2).unwrap();
    assert!((pr.seconds - 8e-3).abs() < 1e-12, "the typical round");
    let [fast, slow] = pr.states_s.unwrap();
    assert!((fast - 8e-3).abs() < 1e-12 && (slow - 20e-3).abs() < 1e-12);
    assert!(pr.terms[0].explain.contains("two states"));
    // One thread has no hand-off.
    assert_eq!(predict(&two, &Machine::new(&p), 1).unwrap().states_s, None);
    // 256 locks pay t_1 and the migrations: the spread mutexes' 2-thread
    // rounds at 1e8 and 1e8/3 op/s give m = 16 ns and (60 − 12)·2 = 96 ns,
    // so (10 + 8) ns / 2 = 9 ms fast and typical, (10 + 48) ns / 2 = 29 ms
    // slow, though the contended mutex has one state.
    let cells = mutex(1e6, 256.0, 0.0, 5e-9);
    let mut p = machine();
    let t = &mut p.sections.lock.as_mut().unwrap().kinds[2].points[1].throughput_ops;
    t.high_quantile = Some(Estimate::exact(1e8));
    t.low_quantile = Some(Estimate::exact(1e8 / 3.0));
    let pr = predict(&cells, &Machine::new(&p), 2).unwrap();
    assert!((pr.seconds - 9e-3).abs() < 1e-12, "the typical round");
    let [fast, slow] = pr.states_s.unwrap();
    assert!((fast - 9e-3).abs() < 1e-12 && (slow - 29e-3).abs() < 1e-12);
}

#[test]
fn one_lock_for_all_threads_runs_alone_in_its_fast_state() {
    // t_1 = 8 ns and t_p = 14 ns per op for the empty section: handed off
    // 14 ms, one at a time with no hand-off 1e6 · 8 ns = 8 ms.
    let global = mutex(1e6, 1.0, 0.0, 0.0);
    let p = machine();
    let pr = predict(&global, &Machine::new(&p), 2).unwrap();
    assert!((pr.seconds - 14e-3).abs() < 1e-12, "the typical round");
    let [fast, slow] = pr.states_s.unwrap();
    assert!((fast - 8e-3).abs() < 1e-12 && (slow - 14e-3).abs() < 1e-12);
    assert!(pr.terms[0].explain.contains("no hand-off"));
    // With rounds of two states as well: the faster of the two fast
    // states, the slow round's time.
    let mut p = machine();
    let t = &mut p.sections.lock.as_mut().unwrap().kinds[1].points[1].throughput_ops;
    t.high_quantile = Some(Estimate::exact(1e8));
    t.low_quantile = Some(Estimate::exact(2.5e7));
    let [fast, slow] = predict(&global, &Machine::new(&p), 2)
        .unwrap()
        .states_s
        .unwrap();
    assert!((fast - 8e-3).abs() < 1e-12 && (slow - 40e-3).abs() < 1e-12);
    // A hand-off hardly dearer than an operation alone: one state.
    let mut p = machine();
    let t = &mut p.sections.lock.as_mut().unwrap().kinds[1].points[1].throughput_ops;
    t.median = 1.0 / 10e-9;
    assert_eq!(
        predict(&global, &Machine::new(&p), 2).unwrap().states_s,
        None
    );
    // Other work binds the fast state from below: 4e8 flops at the
    // 40 GFLOP/s dgemm ceiling take 10 ms.
    let mut with_flops = global.clone();
    with_flops.demands.push(Demand::Flops {
        flops: 4e8,
        precision: "f64",
        ceiling: CeilingKernel::Dgemm,
        isa: None,
    });
    let [fast, slow] = predict(&with_flops, &Machine::new(&machine()), 2)
        .unwrap()
        .states_s
        .unwrap();
    assert!((fast - 10e-3).abs() < 1e-12 && (slow - 14e-3).abs() < 1e-12);
}

#[test]
fn a_shared_line_whose_bursts_have_two_states_predicts_both() {
    let inc = |sharers| Work {
        demands: vec![Demand::Increments {
            per_thread: 1e6,
            sharers,
        }],
    };
    // The 2-thread shared line's quantiles at `fast` and `slow` s.
    let quantiles = |p: &mut Profile, fast, slow| {
        let c2c = p.sections.c2c.as_mut().unwrap();
        let line = &mut c2c.increments.as_mut().unwrap().shared_line[0];
        let t = line.per_increment_s.as_mut().unwrap();
        t.low_quantile = Some(Estimate::exact(fast));
        t.high_quantile = Some(Estimate::exact(slow));
    };
    // One state (quantiles 1.2× apart): the median alone.
    let mut p = machine();
    quantiles(&mut p, 10e-9, 12e-9);
    let pr = predict(&inc(2.0), &Machine::new(&p), 2).unwrap();
    assert!((pr.seconds - 12e-3).abs() < 1e-12);
    assert_eq!(pr.states_s, None);
    // The bursts' quantiles at 8 and 24 ns: 8 and 24 ms beside the
    // median's 12 ms.
    quantiles(&mut p, 8e-9, 24e-9);
    let pr = predict(&inc(2.0), &Machine::new(&p), 2).unwrap();
    assert!((pr.seconds - 12e-3).abs() < 1e-12, "the typical burst");
    let [fast, slow] = pr.states_s.unwrap();
    assert!((fast - 8e-3).abs() < 1e-12 && (slow - 24e-3).abs() < 1e-12);
    assert!(pr.terms[0].explain.contains("two states"));
    // A counter alone on its line hands nothing off.
    assert_eq!(
        predict(&inc(1.0), &Machine::new(&p), 2).unwrap().states_s,
        None
    );
}
