use super::handoff::reciprocal;
use super::*;
use models::Estimate;

#[test]
fn fit_recovers_t0_and_b() {
    let x: Vec<f64> = (0..12).map(|i| 64.0 * 2f64.powi(i)).collect();
    let y: Vec<f64> = x.iter().map(|n| 100e-9 + n / 10e9).collect();
    let (all, regimes) = fit_handoff(&x, &y).unwrap();
    assert!((all.t0_s.point - 100e-9).abs() < 1e-12);
    assert!((all.bandwidth_Bps.point / 10e9 - 1.0).abs() < 1e-6);
    assert!(!regimes.is_empty());
    let r = reciprocal(Estimate::new(1.0, -1.0, 2.0));
    assert_eq!((r.lo, r.hi), (0.5, f64::INFINITY));
}

fn burst(ns: &[f64]) -> Sample {
    Sample::new(ns.iter().map(|v| v * 1e-9).collect()).unwrap()
}

#[test]
fn a_shared_hit_is_no_private_level_read_large() {
    let mib = (1u64 << 20) as f64;
    let curve = 34e-9;
    // The host's cache slice, well beyond the 2 MiB L2: its plateau.
    let l3 = Some((17.5 * mib, 31e-9, "L3"));
    assert_eq!(shared_hit_of(l3, 2.0 * mib, curve).0, 31e-9);
    // A step at 2.6 MiB is L2's own edge, whatever its name.
    let split = Some((2.6 * mib, 12e-9, "L3"));
    assert_eq!(
        shared_hit_of(split, 2.0 * mib, curve),
        (curve, "4 MiB".to_string())
    );
    // A plateau above the curve leaves the curve.
    let slow = Some((17.5 * mib, 40e-9, "L3"));
    assert_eq!(shared_hit_of(slow, 2.0 * mib, curve).0, curve);
    assert_eq!(shared_hit_of(None, 2.0 * mib, curve).0, curve);
}

#[test]
fn bursts_on_siblings_or_descheduled_are_left_out_of_the_pool() {
    let bursts = [
        burst(&[56.0, 57.0, 58.0]),
        burst(&[11.0, 11.5, 12.0]),
        burst(&[71.0, 72.0, 75.0]),
        burst(&[20e3, 21e3, 25e3]),
        burst(&[50.0, 51.0, 52.0]),
    ];
    let (pooled, left_out) = pool_bursts(&bursts, Some(16.5e-9)).unwrap();
    assert_eq!(left_out, 2);
    assert_eq!(pooled.values().len(), 9);
    let v = best(&pooled.summary());
    assert!(v > 49e-9 && v < 58e-9, "{v}");
    // Without a known shared hit the siblings' burst counts too.
    assert_eq!(pool_bursts(&bursts, None).unwrap().1, 1);
    // Nothing kept: this benchmark's own burst stands alone.
    let (own, n) = pool_bursts(&bursts[1..2], Some(16.5e-9)).unwrap();
    assert_eq!((own.values().len(), n), (3, 0));
    assert!(pool_bursts(&[], None).is_err());
}

#[test]
fn pingpong_and_handoff_run() {
    let cpus = crate::pin::allowed_cpus();
    if cpus.len() < 2 {
        return;
    }
    let plan = Plan::quick().with_reps(3);
    let s = pingpong(cpus[0], cpus[1], &plan).unwrap().summary();
    assert!(s.median > 0.0);
    let t = handoff(cpus[0], cpus[1], &[64, 4096], &plan, || {}).unwrap();
    assert_eq!(t.len(), 2);
}
