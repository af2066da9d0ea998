//! The scaling planner: the knee on the lecture's numbers, Monte Carlo
//! bands on a synthetic profile, the fit of synthetic runs, reference
//! outputs, and the bad-input table.
//!
//! Regenerate the references with `PREDICT_BLESS=1 cargo test -p predict
//! --test scaling` (and look at the chart).

mod common;
use common::*;

use std::path::Path;

use models::stencil::GhostStencil;
use predict::chart::layout::layout;
use predict::cli::{parse_from, Command as Cmd};
use predict::scaling::fit::{fit_runs, read_runs, FitOptions, Run};
use predict::scaling::{build, chart, report, ScalingArgs};

/// The parsed arguments of `predict scaling ARGS`.
fn args(extra: &[&str]) -> ScalingArgs {
    let mut all = vec!["predict", "scaling"];
    all.extend_from_slice(extra);
    match parse_from(all).unwrap().command {
        Cmd::Scaling(a) => *a,
        other => panic!("{other:?}"),
    }
}

const LECTURE: [&str; 8] = [
    "--n",
    "4096",
    "--update-time",
    "2cycles",
    "--clock",
    "3GHz",
    "--network",
    "t0=2us,bw=6.4GB/s,name=lecture",
];

#[test]
fn lecture_crossover_near_1571() {
    let mut a = LECTURE.to_vec();
    a.extend(["--draws", "0"]);
    let r = build(&args(&a)).unwrap();
    let k = r.series[0].knees;
    let p = k.crossover.point.unwrap();
    // §4.1: rows ≈ 2.6 per rank, P ≈ 1571 (the lecture rounds to 1575).
    let net = models::alpha_beta::AlphaBeta::new(2e-6, 6.4e9).unwrap();
    let exact = GhostStencil::new(4096.0, 2.0 / 3e9, 4.0, 1.0, net, false)
        .unwrap()
        .crossover_p();
    assert!((exact - 1571.0).abs() < 1.0, "{exact}");
    assert!((p - exact).abs() < 0.01, "{p} vs {exact}");
    // No overlap: E = 1/2 exactly where comm = compute.
    assert!((k.efficiency.point.unwrap() - exact).abs() < 0.01);
    // T(P) keeps falling: the best time is at the largest P (one row per rank).
    assert_eq!(k.best.point, Some(4096.0));
    // §4.1: at P = 64 communication is 4.1% of computation.
    let row = r.series[0].rows.iter().find(|r| r.point.p == 64.0).unwrap();
    assert!((row.point.comm_s / row.point.compute_s - 0.0407).abs() < 0.0005);
}

#[test]
fn lecture_numbers_from_the_command_line() {
    let mut a = vec!["scaling"];
    a.extend(LECTURE);
    a.extend(["--draws", "0", "--json"]);
    let o = predict(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = v["series"][0]["knees"]["crossover"]["point"]
        .as_f64()
        .unwrap();
    assert!((p - 1571.0).abs() < 1.0, "{p}");
    let mut a = vec!["scaling"];
    a.extend(LECTURE);
    a.extend(["--draws", "0"]);
    let text = String::from_utf8(predict(&a).stdout).unwrap();
    assert!(
        text.contains("communication = computation: at P = 1571"),
        "{text}"
    );
}

#[test]
fn overlap_and_two_messages_move_the_knee() {
    let base = build(&args(&[&LECTURE[..], &["--draws", "0"]].concat())).unwrap();
    let two = build(&args(
        &[&LECTURE[..], &["--draws", "0", "--messages", "2"]].concat(),
    ))
    .unwrap();
    let over = build(&args(
        &[&LECTURE[..], &["--draws", "0", "--overlap"]].concat(),
    ))
    .unwrap();
    let p = |r: &report::Report| r.series[0].knees.crossover.point.unwrap();
    assert!(p(&two) < p(&base));
    assert!(
        (p(&over) - p(&base)).abs() < 0.01,
        "overlap does not change where comm = comp"
    );
    // With overlap the efficiency stays at 100% up to the crossover.
    let e = over.series[0].knees.efficiency.point.unwrap();
    assert!(e > p(&over) * 1.5, "{e}");
}

fn synthetic(extra: &[&str]) -> report::Report {
    let profile = reference("profile.json");
    let mut a = vec!["--profile", profile.to_str().unwrap()];
    if !extra.contains(&"--draws") {
        a.extend(["--draws", "400"]);
    }
    a.extend_from_slice(extra);
    build(&args(&a)).unwrap()
}

#[test]
fn monte_carlo_band_contains_the_point_and_shrinks_with_the_intervals() {
    let wide = synthetic(&[]);
    // The same profile with every interval a fifth as wide.
    let text = std::fs::read_to_string(reference("profile.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    shrink(&mut v, 0.2);
    let dir = tempfile::tempdir().unwrap();
    let narrow_path = dir.path().join("narrow.json");
    std::fs::write(&narrow_path, v.to_string()).unwrap();
    let narrow = build(&args(&[
        "--profile",
        narrow_path.to_str().unwrap(),
        "--draws",
        "400",
    ]))
    .unwrap();
    for r in [&wide, &narrow] {
        let s = &r.series[0];
        for row in s.rows.iter().chain(&s.curve) {
            let p = &row.point;
            assert!(
                row.speedup_lo <= p.speedup * (1.0 + 1e-12)
                    && p.speedup <= row.speedup_hi * (1.0 + 1e-12),
                "{row:?}"
            );
            assert!(
                row.efficiency_lo <= p.efficiency * (1.0 + 1e-12)
                    && p.efficiency <= row.efficiency_hi * (1.0 + 1e-12),
                "{row:?}"
            );
            assert!(
                row.time_lo_s <= p.time_s * (1.0 + 1e-12)
                    && p.time_s <= row.time_hi_s * (1.0 + 1e-12),
                "{row:?}"
            );
        }
        let k = s.knees.crossover;
        assert!(
            k.lo.unwrap() <= k.point.unwrap() && k.point.unwrap() <= k.hi.unwrap(),
            "{k:?}"
        );
    }
    let width = |r: &report::Report| {
        let k = r.series[0].knees.efficiency;
        k.hi.unwrap() - k.lo.unwrap()
    };
    assert!(width(&wide) > 0.0);
    assert!(
        width(&narrow) < 0.4 * width(&wide),
        "{} vs {}",
        width(&narrow),
        width(&wide)
    );
    let band = |r: &report::Report| {
        let row = r.series[0].rows.last().unwrap();
        row.speedup_hi - row.speedup_lo
    };
    assert!(band(&narrow) < 0.4 * band(&wide));
    // Same seed, same answer.
    assert_eq!(synthetic(&[]), wide);
}

/// Scales every interval of the profile around its point by `k`.
fn shrink(v: &mut serde_json::Value, k: f64) {
    match v {
        serde_json::Value::Object(o) => {
            if let (Some(p), Some(lo), Some(hi)) = (
                o.get("point").and_then(|x| x.as_f64()),
                o.get("lo").and_then(|x| x.as_f64()),
                o.get("hi").and_then(|x| x.as_f64()),
            ) {
                o.insert("lo".into(), (p - k * (p - lo)).into());
                o.insert("hi".into(), (p + k * (hi - p)).into());
            }
            for x in o.values_mut() {
                shrink(x, k);
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| shrink(x, k)),
        _ => {}
    }
}

#[test]
fn networks_are_compared_in_one_run() {
    let r = synthetic(&["--network", "t0=1us,bw=25GB/s,name=upgrade"]);
    assert_eq!(r.series.len(), 2);
    assert_eq!(r.series[1].name, "upgrade");
    let knee = |i: usize| r.series[i].knees.efficiency.point.unwrap_or(f64::INFINITY);
    assert!(knee(1) > knee(0), "a faster network scales further");
    // The profile's message of 16 KiB uses the rendezvous regime (T0 = 4 us).
    assert!(
        r.setup.iter().any(|l| l.contains("T0 = 4.00 µs")),
        "{:?}",
        r.setup
    );
}

#[test]
fn weak_scaling_keeps_compute_constant() {
    let r = synthetic(&["--weak", "--draws", "0", "--p-max", "1024"]);
    let rows = &r.series[0].rows;
    let c0 = rows[0].point.compute_s;
    for w in rows.windows(2) {
        assert!((w[1].point.compute_s - c0).abs() < 1e-12 * c0);
        assert!(w[1].point.efficiency <= w[0].point.efficiency + 1e-12);
    }
    assert_eq!(r.scaling, "weak");
}

#[test]
fn binning_saturates_where_the_lock_does() {
    let r = synthetic(&[
        "--kernel", "binning", "--t-work", "120ns", "--t-crit", "40ns", "--draws", "0",
    ]);
    assert_eq!(r.series.len(), 3);
    let global = &r.series[0];
    // p* = (t_crit + t_work)/t_crit = 4.
    assert_eq!(global.knees.crossover.point, Some(4.0));
    assert!((global.rows.last().unwrap().point.speedup - 4.0).abs() < 1e-9);
}

const OPTS: FitOptions = FitOptions {
    domain: None,
    seed: 1,
};

/// T(P) = T1·(f + (1 − f)/P) + c·log2(P) with a deterministic ±1% wobble.
fn synthetic_runs(t1: f64, f: f64, c: f64, wobble: f64) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut i = 0u64;
    for p in [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0] {
        for _ in 0..3 {
            // A fixed sequence in [-1, 1].
            let w = ((i * 7919 % 23) as f64 / 11.0) - 1.0;
            let t = (t1 * (f + (1.0 - f) / p) + c * p.log2()) * (1.0 + wobble * w);
            runs.push(Run {
                p,
                time_s: t,
                comm_s: None,
                line: i + 2,
            });
            i += 1;
        }
    }
    runs
}

#[test]
fn fit_recovers_known_parameters() {
    let exact = fit_runs(synthetic_runs(100.0, 0.03, 0.2, 0.0), "exact", OPTS).unwrap();
    let v = exact.values();
    assert!((v[0] - 100.0).abs() < 1e-4, "{v:?}");
    assert!((v[1] - 0.03).abs() < 1e-6, "{v:?}");
    assert!((v[2] - 0.2).abs() < 1e-5, "{v:?}");

    let noisy = fit_runs(synthetic_runs(100.0, 0.03, 0.2, 0.01), "noisy", OPTS).unwrap();
    for (e, truth) in noisy.fit.params.iter().zip([100.0, 0.03, 0.2]) {
        assert!(e.lo <= truth && truth <= e.hi, "{truth} outside {e:?}");
        assert!(e.hi > e.lo);
    }
    // Karp–Flatt of exact Amdahl-plus-log data grows with P (the c term).
    let e: Vec<f64> = exact.karp_flatt.iter().map(|k| k.serial_fraction).collect();
    assert!(e.windows(2).all(|w| w[1] > w[0]), "{e:?}");
    assert!(
        (e[0] - (0.03 + 0.2 / (100.0 * 0.5) * 1.0 / 1.0)).abs() < 0.01,
        "{e:?}"
    );
}

#[test]
fn fit_from_the_command_line_extrapolates_the_knee() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("runs.csv");
    let mut text = String::from("p,time_s\n");
    for r in synthetic_runs(100.0, 0.03, 0.2, 0.005) {
        text.push_str(&format!("{},{}\n", r.p, r.time_s));
    }
    std::fs::write(&csv, text).unwrap();
    let o = predict(&[
        "scaling",
        "--fit",
        csv.to_str().unwrap(),
        "--json",
        "--draws",
        "300",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &v["series"][0]["knees"];
    // The best P of the exact model: dT/dP = 0 at P = T1(1 − f)·ln2 / c.
    let best = 100.0 * 0.97 * std::f64::consts::LN_2 / 0.2;
    let (lo, hi) = (
        k["best"]["lo"].as_f64().unwrap(),
        k["best"]["hi"].as_f64().unwrap(),
    );
    assert!(lo < best * 1.05 && hi > best * 0.6, "{lo}..{hi} vs {best}");
    assert!(k["efficiency"]["point"].as_f64().unwrap() > 8.0);
    assert_eq!(v["fit"]["karp_flatt"].as_array().unwrap().len(), 7);
}

#[test]
fn the_example_runs_file_fits() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/examples/runs.csv"),
    )
    .unwrap();
    let runs = read_runs(&text, "runs.csv").unwrap();
    let f = fit_runs(runs, "runs.csv", OPTS).unwrap();
    let v = f.values();
    assert!(
        (v[0] - 120.0).abs() < 2.0 && (v[1] - 0.02).abs() < 0.005,
        "{v:?}"
    );
}

#[test]
fn charts_have_no_overlapping_text() {
    for extra in [
        vec![],
        vec!["--network", "t0=1us,bw=25GB/s,name=upgrade"],
        vec!["--kernel", "binning"],
        vec!["--weak"],
    ] {
        let r = synthetic(&extra);
        let scene = layout(&chart::figure(&r, Some("title".into())));
        assert!(
            scene.overlapping_texts().is_empty(),
            "{extra:?}: {:?}",
            scene.overlapping_texts()
        );
        assert!(scene.warnings.is_empty(), "{extra:?}: {:?}", scene.warnings);
    }
    let mut a = LECTURE.to_vec();
    a.extend(["--network", "t0=1us,bw=25GB/s,name=upgrade", "--draws", "0"]);
    let r = build(&args(&a)).unwrap();
    let scene = layout(&chart::figure(&r, None));
    assert!(scene.overlapping_texts().is_empty());
}

#[test]
fn scaling_matches_the_references() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("scaling.svg");
    let csv = dir.path().join("scaling.csv");
    let o = predict(&[
        "scaling",
        "--profile",
        reference("profile.json").to_str().unwrap(),
        "--network",
        "t0=1.5us,bw=12.5GB/s,name=what-if upgrade",
        "--draws",
        "300",
        "--out",
        svg.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("efficiency < 50%: between P = "), "{text}");
    check_reference("scaling.svg", &std::fs::read(&svg).unwrap());
    check_reference("scaling.csv", &std::fs::read(&csv).unwrap());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        f.display().to_string()
    };
    let empty = write("empty.csv", "");
    let header_only = write("header.csv", "p,time_s\n");
    let bad_time = write("bad.csv", "p,time_s\n1,10\n2,five\n");
    let zero_p = write("zero.csv", "p,time_s\n1,10\n0,5\n");
    let neg_p = write("neg.csv", "p,time_s\n1,10\n-2,5\n");
    let few = write("few.csv", "p,time_s\n1,10\n2,5\n");
    let ragged = write("ragged.csv", "p,time_s\n1,10\n2\n");
    let out_bmp = dir.path().join("chart.bmp").display().to_string();
    let own = |v: &[&str]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
    let with = |extra: &[&str]| -> Vec<String> {
        let mut a = vec!["scaling".to_string()];
        a.extend(LECTURE.iter().map(|x| x.to_string()));
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (own(&["scaling", "--fit", &empty]), "has no runs"),
        (own(&["scaling", "--fit", &header_only]), "has no runs"),
        (
            own(&["scaling", "--fit", &bad_time]),
            "line 3, column 2 (time_s): 'five' is not",
        ),
        (
            own(&["scaling", "--fit", &zero_p]),
            "line 3, column 1 (p): P = 0 is not positive",
        ),
        (
            own(&["scaling", "--fit", &neg_p]),
            "line 3, column 1 (p): P = -2 is not positive",
        ),
        (
            own(&["scaling", "--fit", &few]),
            "2 run(s) at 2 different P",
        ),
        (
            own(&["scaling", "--fit", &ragged]),
            "line 3, column 2 (time_s): the value is missing",
        ),
        (
            own(&["scaling", "--fit", "/nonexistent/runs.csv"]),
            "cannot read /nonexistent/runs.csv",
        ),
        (
            with(&["--p-max", "0"]),
            "--p-max = 0 is not accepted: P must be positive",
        ),
        (
            with(&["--p-min", "-4"]),
            "--p-min = -4 is not accepted: P must be positive",
        ),
        (
            with(&["--efficiency", "1.5"]),
            "--efficiency = 1.5 is not accepted",
        ),
        (
            with(&["--network", "t0=fast,bw=1GB/s"]),
            "--network 't0=fast,bw=1GB/s'",
        ),
        (with(&["--network", "bw=1GB/s"]), "t0 is missing"),
        (
            with(&["--network", "latency"]),
            "'latency' is not key=value",
        ),
        (
            with(&["--out", &out_bmp]),
            "unsupported chart format '.bmp'",
        ),
        (
            own(&[
                "scaling",
                "--update-time",
                "2cycles",
                "--network",
                "t0=2us,bw=6.4GB/s",
            ]),
            "add --clock",
        ),
        (
            own(&["scaling", "--profile", "/nonexistent.json"]),
            "no profile /nonexistent.json: no such file",
        ),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_bad(&args, needle);
    }
    assert!(!Path::new(&out_bmp).exists());
}

#[test]
fn outputs_are_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let png = dir.path().join("s.png");
    let mut a = vec!["scaling"];
    a.extend(LECTURE);
    a.extend([
        "--draws",
        "50",
        "--csv",
        csv.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]);
    let o = predict(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("record,series,p,time_s"));
    assert!(text.lines().any(|l| l.starts_with("knee,lecture,")));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary files left"
    );
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
}

#[path = "scaling/fit_runs.rs"]
mod fit_runs;

#[path = "scaling/fit_cli.rs"]
mod fit_cli;
