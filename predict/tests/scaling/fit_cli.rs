//! `predict scaling --fit` from the command line: the JSON names, the
//! what-if networks on one's own code, refused flags, the measured
//! communication column, and the chart.

use super::common::*;
use predict::chart::figure::Item;
use predict::scaling::{build, chart};
use std::path::Path;

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/examples/runs.csv")
        .display()
        .to_string()
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["scaling", "--json"];
    all.extend_from_slice(args);
    let o = predict(&all);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn the_fit_names_its_term_ranking_and_parameters() {
    let ex = example();
    let v = json(&["--fit", &ex, "--draws", "50"]);
    let fit = &v["fit"];
    assert_eq!(fit["term"], "log2P");
    let ranking = fit["ranking"].as_array().unwrap();
    assert!(ranking.len() >= 5);
    assert_eq!(ranking[0]["term"], "log2P");
    let scores: Vec<f64> = ranking
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] <= w[1]), "{scores:?}");
    assert_eq!(fit["fit"]["names"], serde_json::json!(["T1", "f", "c"]));
    for p in fit["fit"]["params"].as_array().unwrap() {
        let (point, lo, hi) = (
            p["point"].as_f64().unwrap(),
            p["lo"].as_f64().unwrap(),
            p["hi"].as_f64().unwrap(),
        );
        assert!(lo >= 0.0 && lo <= point && point <= hi, "{p}");
    }
    // The example was made with T1 = 120 s, f = 0.02, c = 0.15 s.
    let p = &fit["fit"]["params"];
    assert!(p[0]["lo"].as_f64().unwrap() < 120.0 && p[0]["hi"].as_f64().unwrap() > 120.0);
    assert!(p[1]["lo"].as_f64().unwrap() < 0.02 && p[1]["hi"].as_f64().unwrap() > 0.02);
    assert!(p[2]["lo"].as_f64().unwrap() < 0.15 && p[2]["hi"].as_f64().unwrap() > 0.15);
    assert_eq!(v["measured_p_max"], 64.0);
    // Without --dims and --n the surface term is no candidate; with them it is.
    assert!(ranking.iter().all(|r| r["term"] != "surface"));
    let v = json(&["--fit", &ex, "--draws", "0", "--dims", "2", "--n", "1e6"]);
    let ranking = v["fit"]["ranking"].as_array().unwrap();
    assert!(ranking.iter().any(|r| r["term"] == "surface"));
}

#[test]
fn a_faster_network_moves_the_knee_of_ones_own_code() {
    let ex = example();
    let v = json(&[
        "--fit",
        &ex,
        "--draws",
        "100",
        "--comm",
        "allreduce=16MB,iters=100",
        "--network",
        "t0=5us,bw=5GB/s,name=slow",
        "--network",
        "t0=1us,bw=50GB/s,name=fast",
    ]);
    let s = v["series"].as_array().unwrap();
    assert_eq!(s.len(), 3, "the fit and one series per network");
    assert_eq!(s[1]["name"], "runs.csv on slow");
    let knee = |i: usize| s[i]["knees"]["efficiency"]["point"].as_f64().unwrap();
    assert!(
        knee(2) > 1.5 * knee(1),
        "fast {} vs slow {}",
        knee(2),
        knee(1)
    );
    // Each knee has a range from the Monte Carlo.
    let k = &s[1]["knees"]["efficiency"];
    assert!(k["lo"].as_f64().unwrap() < k["hi"].as_f64().unwrap());
    // 16 MB in log2 P rounds at 5 GB/s, 100 iterations, at P = 4: 0.64 s.
    let row = s[1]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["p"] == 4.0)
        .unwrap();
    let comm = row["comm_s"].as_f64().unwrap();
    assert!(
        (comm - 100.0 * 2.0 * (5e-6 + 16e6 / 5e9)).abs() < 1e-9,
        "{comm}"
    );
    // Overlap changes the result too.
    let o = json(&[
        "--fit",
        &ex,
        "--draws",
        "0",
        "--overlap",
        "--comm",
        "allreduce=16MB,iters=100",
        "--network",
        "t0=5us,bw=5GB/s,name=slow",
    ]);
    let t = |v: &serde_json::Value, i: usize| v["series"][i]["rows"][3]["time_s"].as_f64().unwrap();
    assert!(t(&o, 1) < t(&v, 1));
}

#[test]
fn flags_that_cannot_apply_are_refused() {
    let ex = example();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        f.display().to_string()
    };
    let half = write("half.csv", "p,time_s\n1,10\n1.5,7\n2,5\n4,3\n8,2\n");
    let alike = write("alike.csv", "p,time_s\n4,3\n4,3.1\n4,2.9\n");
    let three = write("three.csv", "p,time_s\n1,10\n2,5.2\n4,2.8\n");
    // Five P, but AICc cannot score a term of three coefficients on five
    // runs: refused, not fitted with the one term it could score.
    let five = write("five.csv", "p,time_s\n1,10\n2,6\n4,4\n8,3.5\n16,4\n");
    let fit = |extra: &[&str]| -> Vec<String> {
        let mut a = vec!["scaling".to_string(), "--fit".into(), ex.clone()];
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let add = "add --comm msgs=2,bytes=4MB/P^0.5";
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            fit(&["--network", "t0=1us,bw=25GB/s"]),
            "--network in --fit mode applies to your code only through what it communicates",
        ),
        (fit(&["--network", "t0=1us,bw=25GB/s"]), add),
        (fit(&["--network-profile", "infiniband-hdr"]), add),
        (fit(&["--overlap"]), add),
        (fit(&["--profile", "textbook"]), add),
        (fit(&["--no-profile-network"]), add),
        (
            fit(&["--messages", "4"]),
            "--messages counts the built-in stencil's messages",
        ),
        (
            fit(&["--kernel", "stencil"]),
            "--kernel picks a built-in model",
        ),
        (fit(&["--weak"]), "--weak is for the built-in stencil"),
        (
            fit(&["--update-time", "1ns"]),
            "--update-time describes the built-in stencil",
        ),
        (
            fit(&["--items", "10"]),
            "--items describes the binning kernel",
        ),
        (fit(&["--n", "4096"]), "add --dims"),
        (fit(&["--dims", "2"]), "--dims needs --n"),
        (
            fit(&["--dims", "1", "--n", "100"]),
            "--dims = 1 is not accepted",
        ),
        (fit(&["--title", "x"]), "--title names the chart: add --out"),
        (
            fit(&["--comm", "msgs=2;bytes=1MB", "--network", "t0=1us,bw=1GB/s"]),
            "write it as msgs=2,bytes=4MB/P^0.5",
        ),
        (
            fit(&[
                "--comm",
                "bytes=1MB",
                "--no-profile-network",
                "--profile",
                "textbook",
            ]),
            "--no-profile-network leaves that out",
        ),
        (
            vec!["scaling".into(), "--comm".into(), "bytes=1MB".into()],
            "it needs --fit runs.csv",
        ),
        (
            vec!["scaling".into(), "--fit".into(), half],
            "P = 1.5 is not a whole number of processes",
        ),
        (
            vec!["scaling".into(), "--fit".into(), alike],
            "3 run(s) at 1 different P",
        ),
        (
            vec!["scaling".into(), "--fit".into(), three],
            "needs 6 or more runs at 4 or more different P",
        ),
        (
            vec!["scaling".into(), "--fit".into(), five],
            "5 run(s) at 5 different P; choosing the communication term and fitting T1, f and c needs 6 or more runs",
        ),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_bad(&args, needle);
    }
}

#[test]
fn every_accepted_flag_changes_the_result() {
    let ex = example();
    let base = json(&["--fit", &ex]);
    let strip = |mut v: serde_json::Value| {
        v["files"] = serde_json::Value::Null;
        v
    };
    let base = strip(base);
    for extra in [
        vec!["--seed", "2"],
        vec!["--draws", "150"],
        vec!["--p-max", "256"],
        vec!["--p-min", "2"],
        vec!["--efficiency", "0.7"],
        vec!["--dims", "3", "--n", "1e6"],
    ] {
        let mut a = vec!["--fit", ex.as_str()];
        a.extend(extra.iter().copied());
        let v = strip(json(&a));
        assert_ne!(v, base, "{extra:?} changed nothing");
    }
}

#[test]
fn a_measured_communication_column_is_fitted_on_its_own() {
    // T1 = 100 s, f = 0.02, communication 0.2 s·P (measured separately).
    let mut text = String::from("p,time_s,comm_s\n");
    let mut k = 0u32;
    for p in [1.0f64, 2.0, 4.0, 8.0, 16.0, 32.0] {
        for _ in 0..2 {
            k += 1;
            let wobble = 1.0 + 0.004 * f64::from(k % 5) - 0.008;
            let comm = if p > 1.0 { 0.2 * p * wobble } else { 0.0 };
            let t = 100.0 * (0.02 + 0.98 / p) * (2.0 - wobble) + comm;
            text.push_str(&format!("{p},{t},{comm}\n"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("runs.csv");
    std::fs::write(&f, text).unwrap();
    let v = json(&["--fit", f.to_str().unwrap(), "--draws", "0"]);
    let fit = &v["fit"];
    assert_eq!(fit["separate"], true);
    assert_eq!(fit["term"], "P");
    let p = &fit["fit"]["params"];
    assert!((p[0]["point"].as_f64().unwrap() - 100.0).abs() < 2.0, "{p}");
    assert!(
        (p[1]["point"].as_f64().unwrap() - 0.02).abs() < 0.005,
        "{p}"
    );
    assert!((p[2]["point"].as_f64().unwrap() - 0.2).abs() < 0.01, "{p}");
    for e in p.as_array().unwrap() {
        let (lo, hi) = (e["lo"].as_f64().unwrap(), e["hi"].as_f64().unwrap());
        assert!(lo >= 0.0 && lo <= hi);
    }
}

#[test]
fn the_fit_chart_marks_the_extrapolation_and_keeps_ranges_inside() {
    let ex = example();
    let a = super::args(&[
        "--fit",
        &ex,
        "--draws",
        "200",
        "--comm",
        "allreduce=16MB,iters=100",
        "--network",
        "t0=1us,bw=25GB/s,name=upgrade",
    ]);
    let r = build(&a).unwrap();
    let fig = chart::figure(&r, None);
    let (p_min, p_max) = (r.config.p_min, r.config.p_max);
    let mut spans = 0;
    let mut dashed = 0;
    for panel in &fig.panels {
        for item in &panel.items {
            match item {
                Item::Markers { points, .. } => {
                    for m in points {
                        if let Some((lo, hi)) = m.x_err {
                            assert!(
                                lo >= p_min && hi <= p_max,
                                "range {lo}..{hi} outside {p_min}..{p_max}"
                            );
                        }
                    }
                }
                Item::VSpan { x0, .. } => {
                    assert_eq!(*x0, 64.0);
                    spans += 1;
                }
                Item::Line { points, stroke, .. }
                    if stroke.dash == predict::chart::figure::Dash::Dashed && points.len() > 2 =>
                {
                    assert!(points[1].0 > 64.0, "dashed only beyond the runs");
                    dashed += 1;
                }
                _ => {}
            }
        }
    }
    assert_eq!(spans, 2, "the extrapolated region is shaded in both panels");
    assert_eq!(dashed, 4, "two series, two panels");
    let scene = predict::chart::layout::layout(&fig);
    assert!(
        scene.overlapping_texts().is_empty(),
        "{:?}",
        scene.overlapping_texts()
    );
    let csv = predict::scaling::report::to_csv(&r);
    assert!(csv.lines().next().unwrap().ends_with(",extrapolated"));
    let beyond = csv
        .lines()
        .filter(|l| l.starts_with("curve,") && l.ends_with(",true"))
        .count();
    let inside = csv
        .lines()
        .filter(|l| l.starts_with("curve,") && l.ends_with(",false"))
        .count();
    assert!(beyond > 0 && inside > 0);
    let text = predict::scaling::report::to_text(&r);
    assert!(text.contains("   128*"), "{text}");
    assert!(text.contains("* extrapolated: beyond the largest measured P = 64"));
}

#[test]
fn the_fit_chart_matches_its_reference() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("fit.svg");
    let csv = dir.path().join("fit.csv");
    let ex = example();
    let o = predict(&[
        "scaling",
        "--fit",
        &ex,
        "--draws",
        "200",
        "--comm",
        "allreduce=16MB,iters=100",
        "--network",
        "t0=1us,bw=25GB/s,name=upgrade",
        "--out",
        svg.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_reference("scaling-fit.svg", &std::fs::read(&svg).unwrap());
    check_reference("scaling-fit.csv", &std::fs::read(&csv).unwrap());
}
