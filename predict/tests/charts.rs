//! Roofline and memory-mountain charts: their data from a fixed synthetic
//! profile and records (`tests/reference/profile.json`, `records.json`),
//! byte-for-byte reference outputs, a layout where no text overlaps, and
//! the bad-input table.
//!
//! Regenerate the references after an intended change with
//! `PREDICT_BLESS=1 cargo test -p predict --test charts --test scaling`
//! and look at the charts before committing them.

mod common;
use common::*;

use std::path::Path;

use models::profile::Profile;
use predict::chart::scene::{convex_intersect, rect_quad, TextRole};
use predict::chart::{figure::Figure, layout::layout, render, PlottersSvg};
use predict::roofline::data::{build, CeilingKind, Selection};
use predict::roofline::{chart, mountain, records};

fn profile() -> Profile {
    Profile::from_json(&std::fs::read_to_string(reference("profile.json")).unwrap()).unwrap()
}

fn records() -> Vec<records::Record> {
    records::load(&reference("records.json")).unwrap().records
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

#[test]
fn roofline_data_from_the_synthetic_profile() {
    let d = build(
        &profile(),
        &records(),
        &Selection {
            precision: Some("f64".into()),
            one_thread: false,
        },
    )
    .unwrap();
    let bw: Vec<(&str, f64)> = d
        .ceilings
        .iter()
        .filter(|c| c.kind == CeilingKind::Bandwidth)
        .map(|c| (c.name.as_str(), c.value))
        .collect();
    assert_eq!(
        bw,
        [("L1", 560e9), ("L2", 260e9), ("L3", 120e9), ("DRAM", 22e9)]
    );
    let compute: Vec<(&str, f64)> = d
        .ceilings
        .iter()
        .filter(|c| c.kind == CeilingKind::Compute)
        .map(|c| (c.name.as_str(), c.value))
        .collect();
    assert_eq!(
        compute,
        [
            ("f64 AVX2 FMA", 220e9),
            ("f64 AVX2 mul+add", 110e9),
            ("f64 scalar FMA", 55e9)
        ]
    );
    let dram = d.ceilings.iter().find(|c| c.name == "DRAM").unwrap();
    assert_eq!(dram.label, "DRAM 22.0 GB/s");
    assert_eq!((dram.lo, dram.hi), (22e9 * 0.97, 22e9 * 1.03));
    // Ridge: 220 GFLOP/s / 22 GB/s = 10 flop/B.
    assert!(close(d.ridge.ai, 10.0));
    assert_eq!(
        (d.ridge.memory.as_str(), d.ridge.compute.as_str()),
        ("DRAM", "f64 AVX2 FMA")
    );
    assert!(close(dram.ridge_ai, 10.0));
    let l1 = d.ceilings.iter().find(|c| c.name == "L1").unwrap();
    assert!(close(l1.ridge_ai, 220.0 / 560.0));

    // Six points; the binning record has no flops and is listed as skipped.
    assert_eq!(d.points.len(), 6);
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].kernel, "binning");
    let fused = d
        .points
        .iter()
        .find(|p| p.variant == "fused" && p.threads == Some(4))
        .unwrap();
    // AI = 3 flop / 20 B; measured = flops / t = 19e9·0.15.
    assert!(close(fused.ai, 0.15));
    assert!(close(fused.measured_flops, 0.15 * 19e9));
    assert!(close(fused.measured_flops_lo, 0.15 * 19e9 / 1.04));
    assert!(close(fused.measured_flops_hi, 0.15 * 19e9 / 0.97));
    assert!(close(fused.predicted_flops.unwrap(), 0.15 * 22e9));
    assert!(close(fused.attainable_flops, 0.15 * 22e9));
    let matmul = d.points.iter().find(|p| p.kernel == "matmul").unwrap();
    assert!(close(matmul.ai, 16.0));
    assert!(close(matmul.attainable_flops, 220e9), "right of the ridge");
}

#[test]
fn one_thread_and_all_precisions() {
    let one = build(
        &profile(),
        &[],
        &Selection {
            precision: None,
            one_thread: true,
        },
    )
    .unwrap();
    assert!(one.ceilings.iter().all(|c| c.threads == 1));
    let dram = one.ceilings.iter().find(|c| c.name == "DRAM").unwrap();
    assert_eq!(dram.value, 14e9);
    // f32 joins: the peak is the f32 FMA ceiling at one thread.
    assert_eq!(one.ridge.compute, "f32 AVX2 FMA");
    assert!(close(one.ridge.flops, 110e9));
}

/// Every figure the tools draw, from the synthetic inputs.
fn figures() -> Vec<(&'static str, Figure)> {
    let p = profile();
    let d = build(
        &p,
        &records(),
        &Selection {
            precision: Some("f64".into()),
            one_thread: false,
        },
    )
    .unwrap();
    let all = build(&p, &records(), &Selection::default()).unwrap();
    let m = mountain::build(&p).unwrap();
    vec![
        ("roofline", chart::figure(&d, None)),
        (
            "roofline, titled, all precisions",
            chart::figure(&all, Some("Synthetic 4-core test CPU".into())),
        ),
        (
            "roofline without points",
            chart::figure(&build(&p, &[], &Selection::default()).unwrap(), None),
        ),
        ("mountain", mountain::figure(&m, None)),
    ]
}

#[test]
fn no_text_overlaps_and_labels_stay_clear() {
    for (name, fig) in figures() {
        let scene = layout(&fig);
        assert!(scene.warnings.is_empty(), "{name}: {:?}", scene.warnings);
        let overlaps = scene.overlapping_texts();
        assert!(overlaps.is_empty(), "{name}: {overlaps:?}");
        for t in scene.texts().filter(|t| t.role == TextRole::Annotation) {
            let q = t.quad(0.0);
            assert!(
                scene.plot_areas.iter().any(|a| q
                    .iter()
                    .all(|&(x, y)| { x >= a.x0 && x <= a.x1 && y >= a.y0 && y <= a.y1 })),
                "{name}: '{}' leaves its plot",
                t.text
            );
            for m in &scene.marker_boxes {
                assert!(
                    !convex_intersect(&q, &rect_quad(m)),
                    "{name}: '{}' covers a marker",
                    t.text
                );
            }
        }
        // Every text fits the canvas.
        for t in scene.texts() {
            let b = t.bbox();
            assert!(b.x0 >= 0.0 && b.y0 >= 0.0, "{name}: '{}' at {b:?}", t.text);
            assert!(
                b.x1 <= f64::from(scene.width) && b.y1 <= f64::from(scene.height),
                "{name}: '{}' at {b:?}",
                t.text
            );
        }
    }
}

#[test]
fn every_ceiling_and_series_is_labelled_or_in_the_legend() {
    let (_, fig) = figures().remove(0);
    let scene = layout(&fig);
    let texts: Vec<String> = scene.texts().map(|t| t.text.clone()).collect();
    for label in [
        "L1 560 GB/s",
        "L2 260 GB/s",
        "L3 120 GB/s",
        "DRAM 22.0 GB/s",
        "f64 AVX2 FMA 220 GFLOP/s",
        "f64 AVX2 mul+add 110 GFLOP/s",
        "f64 scalar FMA 55.0 GFLOP/s",
        "ridge 10.0 flop/B",
        "fusion 3-pass, 4 thr",
        "fusion fused, 1 thr",
        "matmul blocked, 4 thr",
        "model prediction",
        "measured, 95% interval",
        "Arithmetic intensity [flop/byte]",
        "Performance [GFLOP/s]",
    ] {
        assert!(
            texts.iter().any(|t| t == label),
            "'{label}' missing from {texts:?}"
        );
    }
    // The sloped roofs' labels run along them.
    let dram = scene.texts().find(|t| t.text == "L1 560 GB/s").unwrap();
    assert!(
        dram.angle_deg > 20.0 && dram.angle_deg < 70.0,
        "{}",
        dram.angle_deg
    );
}

#[test]
fn the_svg_has_no_text_left_for_a_font_lookup() {
    let (_, fig) = figures().remove(0);
    let a = render(&fig, &PlottersSvg).unwrap();
    let b = render(&fig, &PlottersSvg).unwrap();
    assert_eq!(a.svg, b.svg, "deterministic");
    assert!(!a.svg.contains("<text"), "text converted to paths");
    assert!(!a.svg.contains("font-family"));
    assert!(
        a.svg.starts_with("<svg width=\"336\""),
        "3.5 in at 96 px/in"
    );
}

#[test]
fn roofline_and_mountain_match_the_references() {
    let dir = tempfile::tempdir().unwrap();
    let out = |f: &str| dir.path().join(f).display().to_string();
    let (svg, csv) = (out("roofline.svg"), out("roofline.csv"));
    let o = predict(&[
        "roofline",
        "--profile",
        reference("profile.json").to_str().unwrap(),
        "--measurements",
        reference("records.json").to_str().unwrap(),
        "--out",
        &svg,
        "--csv",
        &csv,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("ridge point: 10.0 flop/B at 220 GFLOP/s"),
        "{text}"
    );
    assert!(
        text.contains("not on the chart: binning data-parallel"),
        "{text}"
    );
    check_reference("roofline.svg", &std::fs::read(&svg).unwrap());
    check_reference("roofline.csv", &std::fs::read(&csv).unwrap());

    let (svg, csv) = (out("mountain.svg"), out("mountain.csv"));
    let o = predict(&[
        "mountain",
        "--profile",
        reference("profile.json").to_str().unwrap(),
        "--out",
        &svg,
        "--csv",
        &csv,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_reference("mountain.svg", &std::fs::read(&svg).unwrap());
    check_reference("mountain.csv", &std::fs::read(&csv).unwrap());
    // Nothing but the outputs was left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "mountain.csv",
            "mountain.svg",
            "roofline.csv",
            "roofline.svg"
        ]
    );
}

#[test]
fn csv_lists_every_ceiling_the_ridge_and_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let o = predict(&[
        "roofline",
        "--profile",
        reference("profile.json").to_str().unwrap(),
        "--measurements",
        reference("records.json").to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ceilings"].as_array().unwrap().len(), 7);
    assert_eq!(v["points"].as_array().unwrap().len(), 6);
    assert_eq!(v["ridge"]["ai"], 10.0);
    let mut rd = csv::Reader::from_path(&csv).unwrap();
    let header = rd.headers().unwrap().clone();
    let kinds: Vec<String> = rd.records().map(|r| r.unwrap()[0].to_string()).collect();
    assert_eq!(kinds.iter().filter(|k| *k == "ceiling").count(), 7);
    assert_eq!(kinds.iter().filter(|k| *k == "ridge").count(), 1);
    assert_eq!(kinds.iter().filter(|k| *k == "point").count(), 6);
    for col in [
        "ai_flop_per_byte",
        "measured_flops_lo",
        "measured_flops_hi",
        "predicted_flops",
        "binding",
        "ridge_ai_flop_per_byte",
        "unit",
    ] {
        assert!(header.iter().any(|h| h == col), "{col}");
    }
}

#[test]
fn png_and_pdf_are_paper_sized() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["png", "pdf"] {
        let f = dir.path().join(format!("r.{ext}"));
        let o = predict(&[
            "roofline",
            "--profile",
            reference("profile.json").to_str().unwrap(),
            "--measurements",
            reference("records.json").to_str().unwrap(),
            "--out",
            f.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let bytes = std::fs::read(&f).unwrap();
        if ext == "png" {
            assert_eq!(&bytes[1..4], b"PNG");
            // IHDR width: 3.5 in at 300 dpi.
            let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
            assert_eq!(width, 1050);
        } else {
            assert!(bytes.starts_with(b"%PDF"));
            let text = String::from_utf8_lossy(&bytes);
            assert!(text.contains("/MediaBox [0 0 252 "), "3.5 in = 252 pt");
        }
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = reference("profile.json");
    let p = p.to_str().unwrap();
    let write = |name: &str, text: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        f.display().to_string()
    };
    let empty = write("empty.csv", "");
    let bad = write(
        "bad.csv",
        "kernel,variant,measured_s,flops,bytes\nk,v,0.01,3e6,2e7\nk,w,fast,3e6,2e7\n",
    );
    let bad_json = write(
        "bad.json",
        "[{\"kernel\": \"k\", \"measured_s\": 1, \"flops\": 1}]",
    );
    let out_jpg = dir.path().join("chart.jpg").display().to_string();
    let nowhere = dir.path().join("missing/chart.svg").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["roofline", "--profile", p, "--measurements", &empty],
            "is empty",
        ),
        (
            vec!["roofline", "--profile", p, "--measurements", &bad],
            "line 3, column 3 (measured_s): 'fast' is not a number",
        ),
        (
            vec!["roofline", "--profile", p, "--measurements", &bad_json],
            "record 1: the field 'bytes' is missing",
        ),
        (
            vec!["roofline", "--profile", p, "--out", &out_jpg],
            "unsupported chart format '.jpg'",
        ),
        (
            vec!["roofline", "--profile", p, "--out", &nowhere],
            "cannot write",
        ),
        (
            vec!["roofline", "--profile", "/nonexistent/profile.json"],
            "no profile /nonexistent/profile.json: no such file",
        ),
        (
            vec!["mountain", "--profile", p, "--out", &out_jpg],
            "unsupported chart format",
        ),
        (vec!["roofline", "--profile", &bad], "not valid JSON"),
    ];
    for (args, needle) in cases {
        assert_bad(&args, needle);
    }
    assert!(!Path::new(&out_jpg).exists());
}

#[test]
fn a_bad_output_path_fails_before_the_work() {
    // The profile does not exist either: the output path is checked first.
    let o = predict(&[
        "roofline",
        "--profile",
        "/nonexistent.json",
        "--out",
        "/nonexistent-dir/x.svg",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write /nonexistent-dir/x.svg"));
}
