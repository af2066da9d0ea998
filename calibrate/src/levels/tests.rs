//! Level detection on synthetic staircases and small hand-made curves.

use super::*;

/// A synthetic staircase: plateaus with a smooth knee and ±2% wiggle.
pub(crate) fn staircase(
    levels: &[(f64, f64)],
    dram_ns: f64,
    max: f64,
    per_octave: f64,
) -> Vec<Point> {
    let mut v = Vec::new();
    let mut x = 12.0; // 4 KiB
    let mut i = 0;
    while x <= max.log2() + 1e-9 {
        let size = 2f64.powf(x);
        let mut lat = dram_ns;
        for &(cap, ns) in levels.iter().rev() {
            if size <= cap {
                lat = ns;
            } else if size <= 2.0 * cap && lat == dram_ns {
                let t = (size / cap).log2();
                lat = ns * (1.0 - t) + dram_ns * t;
            }
        }
        let wiggle = 1.0 + 0.02 * ((i * 7919 % 13) as f64 / 6.0 - 1.0);
        v.push(Point {
            size_bytes: size,
            latency_s: lat * wiggle * 1e-9,
        });
        x += 1.0 / per_octave;
        i += 1;
    }
    v
}

#[test]
fn finds_three_caches_and_dram() {
    let pts = staircase(
        &[
            (48.0 * 1024.0, 1.2),
            (2.0 * 1048576.0, 4.0),
            (32.0 * 1048576.0, 15.0),
        ],
        110.0,
        512.0 * 1048576.0,
        3.0,
    );
    let d = detect(&pts, &[]).unwrap();
    let sizes: Vec<f64> = d.caches.iter().map(|c| c.size_bytes.unwrap()).collect();
    assert_eq!(sizes.len(), 3, "{sizes:?}");
    for (got, want) in sizes
        .iter()
        .zip([48.0 * 1024.0, 2.0 * 1048576.0, 32.0 * 1048576.0])
    {
        assert!(got / want < 1.5 && want / got < 1.5, "{got} vs {want}");
    }
    let dram = d.dram.clone().unwrap();
    assert!((dram.latency_s.point - 110e-9).abs() < 5e-9);
    assert_eq!(d.caches[0].name, "L1");
    assert!(d.largest_cache().unwrap() > 20.0 * 1048576.0);
}

#[test]
fn a_step_the_os_does_not_report_is_joined_to_the_next_level() {
    const KIB: f64 = 1024.0;
    const MIB: f64 = 1048576.0;
    let pts = staircase(
        &[
            (32.0 * KIB, 1.1),
            (256.0 * KIB, 3.8),
            (MIB, 5.5),
            (32.0 * MIB, 14.0),
        ],
        110.0,
        512.0 * MIB,
        4.0,
    );
    let sizes =
        |d: &Detection| -> Vec<f64> { d.caches.iter().map(|c| c.size_bytes.unwrap()).collect() };
    let bare = detect(&pts, &[]).unwrap();
    assert_eq!(bare.caches.len(), 4, "{:?}", sizes(&bare));
    assert!(bare.unreported_steps_bytes.is_empty());

    let d = detect(&pts, &[32.0 * KIB, MIB, 32.0 * MIB]).unwrap();
    let got = sizes(&d);
    assert_eq!(got.len(), 3, "{got:?}");
    for (got, want) in got.iter().zip([32.0 * KIB, MIB, 32.0 * MIB]) {
        assert!(got / want < 1.5 && want / got < 1.5, "{got} vs {want}");
    }
    assert_eq!(d.caches[1].name, "L2");
    assert_eq!(d.caches[2].name, "L3");
    // The joined level spans both plateaus; its latency is theirs.
    assert!(d.caches[1].from_bytes < 64.0 * KIB && d.caches[1].to_bytes > 512.0 * KIB);
    let l2 = d.caches[1].latency_s.point;
    assert!(l2 > 3.5e-9 && l2 < 5.8e-9, "{l2}");
    let [step] = d.unreported_steps_bytes[..] else {
        panic!("{:?}", d.unreported_steps_bytes);
    };
    assert!(step > 180.0 * KIB && step < 360.0 * KIB, "{step}");
    assert_eq!(d.dram, bare.dram);

    // Steps beyond every reported cache stay (the OS may not report
    // them all), and so do caches the OS reports more of.
    assert_eq!(detect(&pts, &[32.0 * KIB]).unwrap().caches.len(), 4);
    assert_eq!(detect(&pts, &[32.0 * KIB; 5]).unwrap().caches.len(), 4);
    // A step near a reported size is a level, however many there are.
    let near = detect(&pts, &[32.0 * KIB, 300.0 * KIB, 32.0 * MIB]).unwrap();
    assert_eq!(sizes(&near).len(), 3);
    assert!(near.unreported_steps_bytes[0] > 700.0 * KIB);
}

#[test]
fn a_second_level_is_no_disturbance() {
    let pts = |ns: &[f64]| -> Vec<Point> {
        ns.iter()
            .enumerate()
            .map(|(i, &ns)| Point {
                size_bytes: 4096.0 * 2f64.powi(i as i32),
                latency_s: ns * 1e-9,
            })
            .collect()
    };
    // Eight L1 points and four of the L2: a robust line through them is
    // flat, the segment is not.
    let two = [
        1.67, 1.67, 1.68, 1.67, 1.67, 1.67, 1.68, 1.67, 5.4, 5.4, 5.5, 5.4,
    ];
    assert!(!is_flat(&pts(&two)));
    // One disturbed point in ten is.
    let one = [1.67, 1.67, 1.68, 1.67, 1.67, 1.67, 1.68, 3.03, 1.9, 1.67];
    assert!(is_flat(&pts(&one)));
}

#[test]
fn rising_end_has_no_dram() {
    let mut pts = staircase(&[(32768.0, 1.0)], 5.0, 1048576.0, 2.0);
    let last = pts.last().unwrap().size_bytes;
    for k in 1..5 {
        pts.push(Point {
            size_bytes: last * 2f64.powi(k),
            latency_s: 5e-9 * 2f64.powi(k),
        });
    }
    let d = detect(&pts, &[]).unwrap();
    assert!(d.dram.is_none());
    assert_eq!(d.caches.len(), 2);
}

#[test]
fn isolated_spikes_are_left_out() {
    let mut pts = staircase(
        &[(32768.0, 1.0), (1048576.0, 4.0)],
        100.0,
        256.0 * 1048576.0,
        2.0,
    );
    let i = pts.iter().position(|p| p.size_bytes == 262144.0).unwrap();
    pts[i].latency_s *= 20.0;
    let d = detect(&pts, &[]).unwrap();
    assert_eq!(d.spikes_bytes, [262144.0]);
    assert_eq!(d.caches.len(), 2);
}

#[test]
fn refuses_flat_and_short_curves() {
    let flat: Vec<Point> = (0..12)
        .map(|i| Point {
            size_bytes: 4096.0 * 2f64.powi(i),
            latency_s: 1e-9,
        })
        .collect();
    assert_eq!(detect(&flat, &[]).unwrap_err(), DetectError::NoTransition);
    assert_eq!(
        detect(&flat[..3], &[]).unwrap_err(),
        DetectError::TooFewPoints(3)
    );
    let mut bad = flat.clone();
    bad[2].latency_s = -1.0;
    assert!(matches!(detect(&bad, &[]), Err(DetectError::BadPoint(_))));
}
