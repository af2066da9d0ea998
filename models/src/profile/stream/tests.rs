//! The stream section's queries: restarts, windows, bursts, mixes and the
//! points each page size reads.

use super::*;

#[test]
fn restarts_read_the_curve_of_the_nearest_thread_count() {
    let r = |threads, kib: f64, ns: f64| StreamRestart {
        threads,
        segment_bytes: kib * 1024.0,
        runs_per_row: 2.0,
        per_thread_bytes: 64e6,
        per_segment_s: Estimate::new(ns * 1e-9, 0.5 * ns * 1e-9, 2.0 * ns * 1e-9),
    };
    let s = StreamSection {
        restarts: vec![
            r(1, 1.0, 100.0),
            r(1, 4.0, 300.0),
            r(2, 1.0, 50.0),
            r(2, 4.0, 450.0),
        ],
        ..Default::default()
    };
    let ns = |threads, kib: f64| s.restart_s(threads, kib * 1024.0, None).unwrap().point * 1e9;
    // Halfway in log size between 1 and 4 KiB.
    assert!((ns(1, 2.0) - 200.0).abs() < 1e-9);
    assert!((ns(2, 2.0) - 250.0).abs() < 1e-9);
    // Flat beyond the ends; 4 threads read the 2-thread curve.
    assert!((ns(1, 64.0) - 300.0).abs() < 1e-9);
    assert!((ns(4, 0.5) - 50.0).abs() < 1e-9);
    let e = s.restart_s(1, 4096.0, Some(2.0)).unwrap();
    assert!((e.lo - 150e-9).abs() < 1e-18 && (e.hi - 600e-9).abs() < 1e-18);
    assert_eq!(StreamSection::default().restart_s(1, 4096.0, None), None);
}

#[test]
fn restarts_interpolate_in_log_column_bytes_and_default_to_the_smallest() {
    let r = |threads, runs_per_row, kib: f64, ns: f64| StreamRestart {
        threads,
        segment_bytes: kib * 1024.0,
        runs_per_row,
        per_thread_bytes: 64e6,
        per_segment_s: Estimate::new(ns * 1e-9, ns * 1e-9, ns * 1e-9),
    };
    let s = StreamSection {
        restarts: vec![
            r(1, 2.0, 1.0, 150.0),
            r(1, 2.0, 4.0, 250.0),
            r(1, 64.0, 1.0, 50.0),
            r(1, 64.0, 4.0, 250.0),
            // Another team, measured two to a row only.
            r(2, 2.0, 1.0, 120.0),
        ],
        ..Default::default()
    };
    // Columns of 64e6 / 64 = 1 MB and 64e6 / 2 = 32 MB.
    assert_eq!(s.restart_columns(1), vec![1e6, 32e6]);
    assert_eq!(s.restart_columns(2), vec![32e6]);
    let ns = |kib: f64, column| s.restart_s(1, kib * 1024.0, column).unwrap().point * 1e9;
    assert!((ns(1.0, Some(32e6)) - 150.0).abs() < 1e-9);
    // 4 MB: two fifths of the way from 1 to 32 MB in log.
    assert!((ns(1.0, Some(4e6)) - 90.0).abs() < 1e-9);
    assert!((ns(1.0, Some(1e3)) - 50.0).abs() < 1e-9);
    assert!((ns(1.0, Some(1e9)) - 150.0).abs() < 1e-9);
    assert!((ns(1.0, None) - 50.0).abs() < 1e-9);
    // Halfway in log size on each curve, then between them.
    assert!((ns(2.0, Some(32e6)) - 200.0).abs() < 1e-9);
    assert!((ns(2.0, None) - 150.0).abs() < 1e-9);
    // A team with one column reads it whatever the loop's column.
    let two = s.restart_s(2, 1024.0, Some(1e3)).unwrap().point;
    assert!((two - 120e-9).abs() < 1e-18);
    // A profile from before the key measured two runs to a row.
    let old: StreamRestart = serde_json::from_value(serde_json::json!({
        "threads": 1, "segment_bytes": 1024.0, "per_thread_bytes": 64e6,
        "per_segment_s": {"point": 1e-7, "lo": 1e-7, "hi": 1e-7}
    }))
    .unwrap();
    assert_eq!(old.column_bytes(), 32e6);
}

#[test]
fn window_reads_interpolate_in_log_window_and_stay_flat_beyond() {
    let w = |kib: f64, ps: f64| StreamWindow {
        threads: 1,
        window_bytes: kib * 1024.0,
        per_thread_bytes: 256e6,
        per_byte_s: Estimate::new(ps * 1e-12, 0.5 * ps * 1e-12, 2.0 * ps * 1e-12),
    };
    let s = StreamSection {
        windows: vec![w(512.0, 20.0), w(128.0, 10.0)],
        ..Default::default()
    };
    let ps = |kib: f64| s.window_read_s(kib * 1024.0).unwrap().point * 1e12;
    assert!((ps(256.0) - 15.0).abs() < 1e-9);
    assert!((ps(64.0) - 10.0).abs() < 1e-9);
    assert!((ps(4096.0) - 20.0).abs() < 1e-9);
    assert!((s.window_read_s(512.0 * 1024.0).unwrap().hi - 40e-12).abs() < 1e-24);
    assert_eq!(StreamSection::default().window_read_s(1e6), None);
}

#[test]
fn l1_rereads_interpolate_in_log_working_set_and_stay_flat_beyond() {
    let w = |mib: f64, ps: f64| StreamWindow {
        threads: 1,
        window_bytes: 12.0 * 1024.0,
        per_thread_bytes: mib * 1024.0 * 1024.0,
        per_byte_s: Estimate::new(ps * 1e-12, 0.0, 2.0 * ps * 1e-12),
    };
    let s = StreamSection {
        l1_rereads: vec![w(256.0, 4.0), w(1.0, 0.0), w(16.0, 2.0)],
        ..Default::default()
    };
    let ps = |mib: f64| s.l1_reread_s(mib * 1024.0 * 1024.0).unwrap().point * 1e12;
    assert!((ps(4.0) - 1.0).abs() < 1e-9);
    assert!((ps(64.0) - 3.0).abs() < 1e-9);
    assert_eq!(ps(0.25), 0.0);
    assert!((ps(1024.0) - 4.0).abs() < 1e-9);
    // The DRAM windows are a curve of their own.
    assert_eq!(s.window_read_s(1e6), None);
    assert_eq!(StreamSection::default().l1_reread_s(1e6), None);
}

#[test]
fn a_point_in_bursts_reads_its_median_burst_with_their_range() {
    // One burst of five caught a fast state: the median ignores it.
    let e = typical_burst(&[50e9, 52e9, 49e9, 101e9, 51e9], &[]).unwrap();
    assert_eq!((e.point, e.lo, e.hi), (51e9, 49e9, 101e9));
    assert_eq!(typical_burst(&[50e9], &[]), None);
    let mut p = StreamPoint::with_bandwidth_wa("triad", 1 << 28, Some(2), 68e9);
    assert_eq!(p.rate(), None);
    p.bursts_Bps = vec![48e9, 51e9, 102e9, 50e9];
    assert_eq!(p.rate().unwrap().point, 50.5e9);
    let mut section = StreamSection {
        dram: vec![p.clone()],
        ..Default::default()
    };
    assert!(section.dram_two_states(2) && !section.dram_two_states(1));
    section.dram[0].bursts_Bps = vec![48e9, 51e9, 70e9, 50e9];
    assert!(!section.dram_two_states(2), "1.46× apart is one state");
    // The level curve's fast end carries the fastest burst.
    let s = StreamSection {
        bytes_per_elem: BTreeMap::from([(
            "triad".to_string(),
            BytesPerElem {
                stream: 24.0,
                write_allocate: 32.0,
                load: Some(16.0),
                store: Some(8.0),
                allocate: Some(8.0),
            },
        )]),
        // The sweep's own copy of the DRAM point, without the bursts,
        // is left to the DRAM point.
        sweeps: vec![StreamSweep {
            threads: 2,
            points: vec![StreamPoint {
                bursts_Bps: Vec::new(),
                bursts_line_s: Vec::new(),
                threads: None,
                ..p.clone()
            }],
        }],
        dram: vec![p],
        ..Default::default()
    };
    let time = |pick: fn(&Estimate) -> f64| {
        let curve = s.level_curve(2, true, None, |k| s.mix(k), pick);
        let triad = crate::kernel::Traffic {
            load_bytes: 16.0,
            store_bytes: 8.0,
            allocate_bytes: 8.0,
        };
        curve[0].1.time_s(&triad)
    };
    let (typical, fast) = (time(|e| e.point), time(|e| e.hi));
    assert!(
        (typical / fast - 102.0 / 50.5).abs() < 1e-9,
        "{typical} {fast}"
    );
}

#[test]
fn a_section_without_byte_counts_has_no_mix() {
    let s = StreamSection::default();
    assert_eq!(s.mix("triad"), None);
}

#[test]
fn a_loop_on_base_pages_streams_at_the_base_page_sweep_above_its_first_size() {
    let point = |bytes, threads, bw| StreamPoint::with_bandwidth_wa("copy", bytes, threads, bw);
    let sweep = |points| StreamSweep { threads: 1, points };
    let s = StreamSection {
        sweeps: vec![sweep(vec![
            point(1 << 14, None, 300e9),
            point(1 << 20, None, 100e9),
            point(1 << 27, None, 30e9),
        ])],
        dram: vec![point(1 << 27, Some(1), 31e9)],
        base_pages: vec![sweep(vec![
            point(1 << 20, None, 99e9),
            point(1 << 27, None, 20e9),
        ])],
        ..Default::default()
    };
    let rates = |huge| -> Vec<(u64, f64)> {
        let mut v: Vec<(u64, f64)> = s
            .points_on(1, huge, None)
            .iter()
            .map(|p| (p.per_thread_bytes, p.bandwidth_write_allocate_Bps))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    };
    // Huge pages: the sweep, its DRAM-sized copy left to the DRAM point.
    assert_eq!(
        rates(true),
        [(1 << 14, 300e9), (1 << 20, 100e9), (1 << 27, 31e9)]
    );
    // Base pages: the huge-page sweep below 1 MiB, the base-page sweep from it.
    assert_eq!(
        rates(false),
        [(1 << 14, 300e9), (1 << 20, 99e9), (1 << 27, 20e9)]
    );
    // No base-page sweep on 2 threads: both read the huge-page points.
    assert!(!s.has_base_pages(2));
    assert_eq!(s.points_on(2, false, None), s.points_on(2, true, None));
}

#[test]
fn dram_points_of_another_instruction_set_serve_only_code_built_for_it() {
    let point = |threads, isa: Option<&str>| {
        let mut p = StreamPoint::with_bandwidth_wa("copy", 1 << 28, Some(threads), 1e10);
        p.isa = isa.map(Into::into);
        p
    };
    let s = StreamSection {
        isa: "avx512".into(),
        dram: vec![point(1, None), point(1, Some("avx2")), point(2, None)],
        ..Default::default()
    };
    let isas = |threads, isa| -> Vec<Option<String>> {
        s.dram_points_in(threads, isa)
            .into_iter()
            .map(|p| p.isa.clone())
            .collect()
    };
    assert_eq!(isas(1, Some("avx2")), [Some("avx2".to_string())]);
    for (threads, isa) in [
        (1, None),
        (1, Some("avx512")),
        (1, Some("scalar")),
        (2, Some("avx2")),
    ] {
        assert_eq!(isas(threads, isa), [None], "{threads} {isa:?}");
    }
    // The bursts, placements and states read the section's own.
    assert_eq!(s.dram_points(1).count(), 1);
}
