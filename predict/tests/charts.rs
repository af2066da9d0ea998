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

use models::profile::{CeilingKernel, ComputeCeiling, Profile};
use models::Estimate;
use predict::chart::figure::{LegendEntry, Symbol};
use predict::chart::layout::{labelled_lines, layout_with, LegendPlace};
use predict::chart::scene::{convex_intersect, rect_quad, Prim, Scene, TextRole};
use predict::chart::{figure::Figure, layout::layout, render, PlottersSvg};
use predict::mountain;
use predict::record::read as records;
use predict::roofline::chart;
use predict::roofline::data::{build, CeilingKind, Inputs, RooflineData, Selection};
use predict::roofline::points::parse_point;

fn profile() -> Profile {
    Profile::from_json(&std::fs::read_to_string(reference("profile.json")).unwrap()).unwrap()
}

fn records() -> Vec<records::Record> {
    records::load(&reference("records.json")).unwrap().records
}

/// The chart data of the synthetic profile with `records`.
fn data(p: &Profile, records: &[records::Record], sel: &Selection) -> RooflineData {
    let inputs = Inputs {
        profile: p,
        profile_file: "profile.json",
        records,
        points: &[],
        labels: &[],
    };
    build(&inputs, sel).unwrap()
}

fn f64_only() -> Selection {
    Selection {
        precision: Some("f64".into()),
        ..Selection::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

#[test]
fn roofline_data_from_the_synthetic_profile() {
    let d = data(&profile(), &records(), &f64_only());
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
    assert!(close(fused.measured_flops_lo.unwrap(), 0.15 * 19e9 / 1.04));
    assert!(close(fused.measured_flops_hi.unwrap(), 0.15 * 19e9 / 0.97));
    assert!(close(fused.predicted_flops.unwrap(), 0.15 * 22e9));
    assert!(close(fused.attainable_flops, 0.15 * 22e9));
    let matmul = d.points.iter().find(|p| p.kernel == "matmul").unwrap();
    assert!(close(matmul.ai, 16.0));
    assert!(close(matmul.attainable_flops, 220e9), "right of the ridge");
}

#[test]
fn one_thread_and_all_precisions() {
    let one = data(
        &profile(),
        &[],
        &Selection {
            one_thread: true,
            ..Selection::default()
        },
    );
    assert!(one.ceilings.iter().all(|c| c.threads == 1));
    let dram = one.ceilings.iter().find(|c| c.name == "DRAM").unwrap();
    assert_eq!(dram.value, 14e9);
    // f32 joins: the peak is the f32 FMA ceiling at one thread.
    assert_eq!(one.ridge.compute, "f32 AVX2 FMA");
    assert!(close(one.ridge.flops, 110e9));
}

/// Every figure the tools draw, from the synthetic inputs.
/// The synthetic profile with its 4-thread f64 ceilings crowded as on
/// the Zen 4 VM: an AVX-512 FMA peak 2% under the AVX2 one (one roof on
/// the chart), a dgemm 9% and a mul+add 14% under them.
fn crowded() -> Profile {
    let mut p = profile();
    let at = |c: &ComputeCeiling| (c.threads, c.fma, c.isa.clone(), c.precision.clone());
    let fma = p
        .ceilings
        .iter()
        .find(|c| at(c) == (4, true, "avx2".into(), "f64".into()))
        .unwrap()
        .clone();
    let ceiling = |isa: &str, kernel, share: f64| ComputeCeiling {
        name: format!("{isa} {share}"),
        isa: isa.into(),
        kernel,
        states: None,
        flops: Estimate::exact(fma.flops.point * share),
        ..fma.clone()
    };
    p.ceilings
        .push(ceiling("avx512", CeilingKernel::Registers, 0.98));
    p.ceilings.push(ceiling("avx2", CeilingKernel::Dgemm, 0.91));
    for c in &mut p.ceilings {
        if at(c) == (4, false, "avx2".into(), "f64".into()) {
            c.flops = Estimate::exact(fma.flops.point * 0.86);
        }
    }
    p
}

fn figures() -> Vec<(&'static str, Figure)> {
    let p = profile();
    let d = data(&p, &records(), &f64_only());
    let all = data(&p, &records(), &Selection::default());
    let m = mountain::build(&p).unwrap();
    vec![
        ("roofline", chart::figure(&d, None)),
        (
            "roofline, titled, all precisions",
            chart::figure(&all, Some("Synthetic 4-core test CPU".into())),
        ),
        (
            "roofline without points",
            chart::figure(&data(&p, &[], &Selection::default()), None),
        ),
        ("mountain", mountain::figure(&m, None)),
        (
            "roofline with crowded ceilings",
            chart::figure(&data(&crowded(), &records(), &f64_only()), None),
        ),
    ]
}

/// A label crosses a labelled line only on a halo, which hides its own
/// line alone (`halos_hide_only_their_own_line`): the others run clear of
/// every labelled line, with a leader when there is no room beside theirs.
#[test]
fn annotations_cross_no_labelled_line_but_on_a_halo() {
    for (name, fig) in figures() {
        let scene = layout(&fig);
        let on_halo = |q: &[(f64, f64)]| scene.halos.iter().any(|h| convex_intersect(&h.quad, q));
        for t in scene.texts().filter(|t| t.role == TextRole::Annotation) {
            let q = t.quad(0.0);
            if on_halo(&q) {
                continue;
            }
            for (panel, segments) in scene.segments.iter().enumerate() {
                let labelled = labelled_lines(&fig.panels[panel]);
                let crossed: Vec<usize> = segments
                    .iter()
                    .filter(|(o, a, b)| labelled.contains(o) && convex_intersect(&q, &[*a, *b]))
                    .map(|(o, _, _)| *o)
                    .collect();
                assert!(
                    crossed.is_empty(),
                    "{name}: '{}' crosses the lines {crossed:?}",
                    t.text
                );
            }
        }
    }
}

#[test]
fn ceilings_a_reader_cannot_tell_apart_share_a_roof_and_a_label() {
    let scene = layout(&chart::figure(
        &data(&crowded(), &records(), &f64_only()),
        None,
    ));
    assert_texts(
        &scene,
        &[
            "f64 AVX2 / AVX-512 FMA 220 GFLOP/s",
            "f64 dgemm 200 GFLOP/s",
            "f64 AVX2 mul+add 189 GFLOP/s",
            "ridge 10.0 flop/B",
        ],
    );
}

/// Every one of `labels` is a text of `scene`.
fn assert_texts(scene: &Scene, labels: &[&str]) {
    let texts: Vec<&str> = scene.texts().map(|t| t.text.as_str()).collect();
    for label in labels {
        assert!(texts.contains(label), "'{label}' missing from {texts:?}");
    }
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
    assert_texts(
        &scene,
        &[
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
        ],
    );
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
    let o = predict_here(&[
        "roofline",
        "--profile",
        "tests/reference/profile.json",
        "--measurements",
        reference("records.json").to_str().unwrap(),
        "--text",
        "outlines",
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
        "--text",
        "outlines",
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
        // The parser's message once, not once more as its source.
        (
            vec!["roofline", "--profile", &bad],
            "not valid JSON for this schema: expected value at line 1 column 1\n",
        ),
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

/// Runs `predict roofline` on the synthetic profile with `args`.
fn roofline(args: &[&str]) -> std::process::Output {
    let p = reference("profile.json");
    let mut all = vec!["roofline", "--profile", p.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = predict(&all);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn real_text_in_svg_png_and_pdf_match_their_references() {
    let dir = tempfile::tempdir().unwrap();
    let recs = reference("records.json");
    // svg2pdf orders a page's resources by hash, so the PDF is checked by
    // its content (pdf_embeds_the_bundled_font_unless_outlined), not bytes.
    for ext in ["svg", "png"] {
        let f = dir.path().join(format!("roofline-text.{ext}"));
        roofline(&[
            "--measurements",
            recs.to_str().unwrap(),
            "--out",
            f.to_str().unwrap(),
        ]);
        check_reference(&format!("roofline-text.{ext}"), &std::fs::read(&f).unwrap());
    }
    let svg = std::fs::read_to_string(dir.path().join("roofline-text.svg")).unwrap();
    for label in [
        "DRAM 22.0 GB/s",
        "L2 260 GB/s",
        "ridge 10.0 flop/B",
        "Performance [GFLOP/s]",
    ] {
        assert!(
            svg.contains(&format!(">{label}</text>")),
            "no <text> for '{label}'"
        );
    }
    assert!(svg.contains("font-family=\"'DejaVu Sans', Verdana, Geneva, sans-serif\""));
    assert!(!svg.contains("<path"), "no glyph outlines");
}

/// The fonts of a PDF: (base font name, embedded) for each font object.
fn pdf_fonts(pdf: &[u8]) -> (Vec<String>, usize) {
    let text = String::from_utf8_lossy(pdf);
    let names = text
        .match_indices("/BaseFont /")
        .map(|(i, _)| {
            text[i + 11..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '+' || *c == '-')
                .collect()
        })
        .collect();
    (names, text.matches("/FontFile2").count())
}

#[test]
fn pdf_embeds_the_bundled_font_unless_outlined() {
    let dir = tempfile::tempdir().unwrap();
    let text_pdf = dir.path().join("t.pdf");
    let outl_pdf = dir.path().join("o.pdf");
    roofline(&["--out", text_pdf.to_str().unwrap()]);
    roofline(&["--out", outl_pdf.to_str().unwrap(), "--text", "outlines"]);
    let (names, files) = pdf_fonts(&std::fs::read(&text_pdf).unwrap());
    assert!(!names.is_empty() && files >= 1, "{names:?} {files}");
    assert!(names.iter().all(|n| n.contains("DejaVuSans")), "{names:?}");
    let (names, files) = pdf_fonts(&std::fs::read(&outl_pdf).unwrap());
    assert!(
        names.is_empty() && files == 0,
        "outlines need no font: {names:?}"
    );
    // poppler's pdffonts, where installed (scripts/setup.sh installs it),
    // must agree: every font listed as embedded.
    if let Ok(o) = std::process::Command::new("pdffonts")
        .arg(&text_pdf)
        .output()
    {
        let out = String::from_utf8_lossy(&o.stdout);
        let rows: Vec<&str> = out.lines().skip(2).collect();
        assert!(!rows.is_empty(), "{out}");
        for r in rows {
            let cols: Vec<&str> = r.split_whitespace().collect();
            // name type [encoding...] emb sub uni object ID: "emb" is the
            // fifth column from the end.
            assert_eq!(cols[cols.len() - 5], "yes", "not embedded: {r}");
        }
    }
}

/// The rows of a chart CSV of one `record` kind.
fn csv_rows(path: &Path, kind: &str) -> Vec<csv::StringRecord> {
    let mut rd = csv::Reader::from_path(path).unwrap();
    rd.records()
        .map(Result::unwrap)
        .filter(|r| &r[0] == kind)
        .collect()
}

fn column(path: &Path, name: &str) -> usize {
    let mut rd = csv::Reader::from_path(path).unwrap();
    rd.headers()
        .unwrap()
        .iter()
        .position(|h| h == name)
        .unwrap()
}

#[test]
fn own_points_and_chosen_roofs_change_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let o = roofline(&[
        "--point",
        "SpMV:0.16:3.1GFLOP/s",
        "--point",
        "stencil:0.5:9.4GFLOP/s:9.0GFLOP/s:9.8GFLOP/s",
        "--ceilings",
        "DRAM,L2,fma",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    let ceilings: Vec<String> = csv_rows(&csv, "ceiling")
        .iter()
        .map(|r| r[2].to_string())
        .collect();
    assert_eq!(ceilings, ["L2", "DRAM", "f64 AVX2 FMA"]);
    let points = csv_rows(&csv, "point");
    assert_eq!(points.len(), 2, "only the given points: {text}");
    let (lo, hi, ai) = (
        column(&csv, "measured_flops_lo"),
        column(&csv, "measured_flops_hi"),
        column(&csv, "ai_flop_per_byte"),
    );
    assert_eq!((&points[0][2], &points[0][ai]), ("SpMV", "0.16"));
    assert_eq!(
        (&points[0][lo], &points[0][hi]),
        ("", ""),
        "no interval given"
    );
    assert_eq!(
        (&points[1][lo], &points[1][hi]),
        ("9000000000", "9800000000")
    );
    assert!(!text.contains("3.10 GFLOP/s – 3.10"), "{text}");
    assert!(
        text.contains("note: --ceilings: 'fma' is f64 AVX2 FMA"),
        "{text}"
    );
    // Without --point or --measurements the default records would load;
    // with them, only what was given is drawn.
    let chart = csv_rows(&csv, "chart");
    assert_eq!(&chart[0][2], "Synthetic 4-core test CPU");
    for (col, want) in [
        ("calibration_date", "2025-01-01T00:00:00Z"),
        ("calibrated_with", "synthetic"),
        ("tool_version", env!("CARGO_PKG_VERSION")),
    ] {
        assert_eq!(&chart[0][column(&csv, col)], want, "{col}");
    }
    assert!(chart[0][column(&csv, "profile")].ends_with("profile.json"));
}

#[test]
fn points_file_labels_and_repeated_measurements() {
    let dir = tempfile::tempdir().unwrap();
    let pts = dir.path().join("points.csv");
    std::fs::write(
        &pts,
        "name,ai,flops,lo,hi,threads\nSpMV,0.16,3.1GFLOP/s,,,16\nstencil,0.5,9.4e9,9e9,9.8e9,4\n",
    )
    .unwrap();
    let recs = reference("records.json");
    let o = roofline(&[
        "--points",
        pts.to_str().unwrap(),
        "--measurements",
        recs.to_str().unwrap(),
        "--measurements",
        recs.to_str().unwrap(),
        "--labels",
        "SpMV, 16 thr=sparse MV",
        "--labels",
        "matmul=GEMM",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"sparse MV") && names.contains(&"GEMM"),
        "{names:?}"
    );
    assert_eq!(
        names.len(),
        8,
        "the same records twice count once: {names:?}"
    );
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("sparse MV measured with 16 threads but the roofs are for 4")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("1 thread but")),
        "{notes:?}"
    );
    assert_eq!(v["calibration_date"], "2025-01-01T00:00:00Z");
    assert_eq!(v["tool_version"], env!("CARGO_PKG_VERSION"));
    assert!(v["caption"]
        .as_str()
        .unwrap()
        .starts_with("Roofline of Synthetic 4-core test CPU with 4 threads."));
}

#[test]
fn records_from_another_machine_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("other.json");
    std::fs::write(
        &f,
        r#"[{"kernel":"k","variant":"v","threads":4,"measured_s":1,"flops":1e9,"bytes":1e9,
            "provenance":{"cpu_model":"Other CPU"}}]"#,
    )
    .unwrap();
    let o = roofline(&["--measurements", f.to_str().unwrap()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("1 record(s) were measured on 'Other CPU', but the profile is of 'Synthetic 4-core test CPU'"),
        "{text}"
    );
    assert!(
        !text.contains("measured with"),
        "same thread count, no thread note: {text}"
    );
}

/// A record whose prediction read another profile than the chart's is
/// named with it; one that read this profile (by another path to the same
/// file) is not, unless it was made before the profile was calibrated.
#[test]
fn records_predicted_against_another_profile_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let same = reference("profile.json");
    let f = dir.path().join("records.json");
    let record = |profile: &str, date: &str| {
        serde_json::json!({"kernel": "k", "variant": profile, "threads": 4, "measured_s": 1,
            "flops": 1e9, "bytes": 1e9, "provenance": {"profile": profile, "date": date}})
    };
    // The reference profile was calibrated on 2025-01-01: the last record,
    // made before, read an earlier calibration of the same file.
    let parent = same.parent().unwrap().display();
    let records = serde_json::json!([
        record("elsewhere/profile.json", "2025-06-01T00:00:00Z"),
        record(same.to_str().unwrap(), "2025-06-01T00:00:00Z"),
        record(
            &format!("{parent}/../reference/profile.json"),
            "2025-06-01T00:00:00Z"
        ),
        record(same.to_str().unwrap(), "2024-12-31T23:59:59Z"),
    ]);
    std::fs::write(&f, records.to_string()).unwrap();
    let o = roofline(&["--measurements", f.to_str().unwrap()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("1 record(s) were predicted against elsewhere/profile.json, not "),
        "{text}"
    );
    assert_eq!(text.matches("were predicted against").count(), 1, "{text}");
    assert!(
        text.contains(
            "1 record(s) were made before the profile was calibrated (2025-01-01T00:00:00Z)"
        ),
        "{text}"
    );
}

#[test]
fn caption_names_machine_roofs_methods_and_date() {
    // The reference profile as `calibrate` would have written it.
    let dir = tempfile::tempdir().unwrap();
    let mut p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reference("profile.json")).unwrap()).unwrap();
    p["provenance"]["tool_version"] = "0.1.0".into();
    p["provenance"]["command"] = "calibrate".into();
    let measured = dir.path().join("measured.json");
    std::fs::write(&measured, p.to_string()).unwrap();
    let args = [
        "--point",
        "SpMV:0.16:3.1GFLOP/s",
        "--ceilings",
        "DRAM,fma",
        "--caption",
    ];
    let caption = |profile: &str| {
        let mut all = vec!["roofline", "--profile", profile];
        all.extend_from_slice(&args);
        let o = predict(&all);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let c = caption(measured.to_str().unwrap());
    assert_eq!(c.trim_end().lines().count(), 1, "{c}");
    for want in [
        "Roofline of Synthetic 4-core test CPU with 4 threads.",
        "read bandwidth of DRAM (22.0 GB/s), each measured on a working set sized to its level",
        "f64 AVX2 FMA (220 GFLOP/s, independent AVX2 FMA chains in registers)",
        "Calibrated on 2025-01-01 with calibrate 0.1.0",
        concat!("predict ", env!("CARGO_PKG_VERSION")),
    ] {
        assert!(c.contains(want), "'{want}' not in {c}");
    }
    assert!(
        !c.contains("95% interval;") && !c.contains("hollow"),
        "no such marks drawn: {c}"
    );
    // The reference itself is hand-written: its roofs are called nominal,
    // and nothing is said to be measured or calibrated.
    let c = caption(reference("profile.json").to_str().unwrap());
    for want in [
        "Sloped roofs: bandwidth of DRAM (22.0 GB/s).",
        "Flat roofs: f64 AVX2 FMA (220 GFLOP/s), on 4 threads.",
        "Every roof is nominal, not measured (hand-written test profile).",
    ] {
        assert!(c.contains(want), "'{want}' not in {c}");
    }
    assert!(
        !c.contains("measured on") && !c.contains("Calibrated"),
        "{c}"
    );
}

#[test]
fn bad_roofline_options_are_one_line_and_exit_2() {
    let p = reference("profile.json");
    let p = p.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["roofline", "--profile", p, "--ceilings", "DRAM,HBM"],
            "--ceilings: no ceiling 'HBM'; this profile has: L1, L2, L3, DRAM, f64 AVX2 FMA",
        ),
        (
            vec!["roofline", "--profile", p, "--ceilings", "DRAM,L2"],
            "at least one bandwidth roof (a memory level) and one compute roof",
        ),
        (
            vec!["roofline", "--profile", p, "--point", "SpMV:0.16"],
            "expected NAME:AI:FLOPS",
        ),
        (
            vec!["roofline", "--profile", p, "--point", "SpMV:0.16:3GHz"],
            "--point 'SpMV:0.16:3GHz': the performance '3GHz'",
        ),
        (
            vec![
                "roofline",
                "--profile",
                p,
                "--point",
                "a:1:1e9",
                "--labels",
                "b=c",
            ],
            "--labels: no point 'b'; the points are: a",
        ),
        (
            vec![
                "roofline",
                "--profile",
                p,
                "--point",
                "a:1:1e9",
                "--labels",
                "a",
            ],
            "expected OLD=NEW",
        ),
        (
            vec![
                "roofline",
                "--profile",
                p,
                "--point",
                "a:1:1e9",
                "--labels",
                "a=",
            ],
            "the new name is empty",
        ),
        (
            vec![
                "roofline",
                "--profile",
                p,
                "--point",
                "a:1:1e9",
                "--point",
                "a:2:2e9",
            ],
            "two points are named 'a'",
        ),
        (
            vec!["roofline", "--profile", p, "--points", "/nonexistent.csv"],
            "cannot read the points file /nonexistent.csv",
        ),
        (vec!["roofline", "--profile", p, "--legend", "left"], "left"),
        (
            vec!["roofline", "--profile", p, "--text", "bitmap"],
            "bitmap",
        ),
    ];
    for (args, needle) in cases {
        assert_bad(&args, needle);
    }
}

/// True when the scene draws, inside a plot area, the mark a legend entry
/// shows: a marker of its colour and fill, a line of its colour and dash,
/// or a band of its colour.
fn drawn(scene: &Scene, e: &LegendEntry) -> bool {
    let inside = |pts: &[(f64, f64)]| {
        scene.plot_areas.iter().any(|a| {
            pts.iter().all(|&(x, y)| {
                x >= a.x0 - 1.0 && x <= a.x1 + 1.0 && y >= a.y0 - 1.0 && y <= a.y1 + 1.0
            })
        })
    };
    let marker = |color, filled: bool| {
        scene.prims.iter().any(|p| match p {
            Prim::Polygon { points, fill } => filled && *fill == color && inside(points),
            Prim::Circle {
                center,
                fill,
                stroke,
                ..
            } => {
                inside(&[*center])
                    && if filled {
                        *fill == Some(color)
                    } else {
                        fill.is_none() && stroke.is_some_and(|s| s.0 == color)
                    }
            }
            Prim::Polyline {
                points, color: c, ..
            } => !filled && *c == color && points.len() > 3 && inside(points),
            _ => false,
        })
    };
    let error_bar = |color| {
        scene.prims.iter().any(|p| {
            matches!(p, Prim::Polyline { points, color: c, .. }
            if *c == color && points.len() == 2 && points[0].0 == points[1].0 && inside(points))
        })
    };
    match &e.symbol {
        Symbol::Marker(m) if m.color == predict::roofline::chart::ROOF && !m.filled => {
            // "model prediction": some hollow marker of any series.
            scene.prims.iter().any(|p| matches!(p, Prim::Circle { fill: None, stroke: Some(_), center, .. } if inside(&[*center])))
                || scene.prims.iter().any(|p| matches!(p, Prim::Polyline { points, .. } if points.len() > 3 && points.first() == points.last() && inside(points)))
        }
        Symbol::Marker(m) => marker(m.color, m.filled),
        Symbol::MarkerWithBar(_) => {
            // Some series' marker with a vertical bar: any coloured bar.
            scene.prims.iter().any(|p| matches!(p, Prim::Polyline { points, color, .. }
                if points.len() == 2 && points[0].0 == points[1].0 && *color != predict::roofline::chart::ROOF
                && error_bar(*color)))
        }
        Symbol::Line(st) => scene.prims.iter().any(|p| {
            matches!(p, Prim::Polyline { color, points, .. }
            if *color == st.color && points.len() >= 2 && inside(points))
        }),
        Symbol::Patch(c) => scene.prims.iter().any(|p| match p {
            Prim::Polygon { fill, points } => fill == c && inside(points),
            Prim::Rect { rect, fill, .. } => {
                *fill == Some(*c) && inside(&[(rect.x0, rect.y0), (rect.x1, rect.y1)])
            }
            _ => false,
        }),
    }
}

#[test]
fn the_legend_lists_only_marks_that_are_drawn() {
    let p = profile();
    let own = [
        parse_point("SpMV:0.16:3.1GFLOP/s").unwrap(),
        parse_point("stencil:0.5:9.4GFLOP/s").unwrap(),
    ];
    let inputs = Inputs {
        profile: &p,
        profile_file: "profile.json",
        records: &[],
        points: &own,
        labels: &[],
    };
    let d = build(&inputs, &f64_only()).unwrap();
    let fig = chart::figure(&d, None);
    let texts: Vec<&str> = fig.legend.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(
        texts,
        ["SpMV", "stencil", "roofs, 4 thr", "roof 95% interval"]
    );
    let mut figs = figures();
    figs.push(("own points", fig));
    for (name, fig) in &figs {
        let scene = layout(fig);
        for e in &fig.legend {
            assert!(
                drawn(&scene, e),
                "{name}: legend entry '{}' has no mark on the chart",
                e.text
            );
        }
    }
}

#[test]
fn halos_hide_only_their_own_line() {
    for (name, fig) in figures() {
        let scene = layout(&fig);
        for (panel, owner, hidden) in scene.halos_over_other_lines() {
            let labelled = labelled_lines(&fig.panels[panel]);
            assert!(
                !labelled.contains(&hidden),
                "{name}: the halo of item {owner:?} hides the labelled line {hidden}"
            );
        }
    }
}

#[test]
fn legend_inside_or_none() {
    let (_, fig) = figures().remove(0);
    let below = layout(&fig);
    let inside = layout_with(&fig, LegendPlace::Inside);
    let none = layout_with(&fig, LegendPlace::None);
    let legend_texts = |s: &Scene| s.texts().filter(|t| t.role == TextRole::Legend).count();
    assert_eq!(legend_texts(&below), fig.legend.len());
    assert_eq!(legend_texts(&inside), fig.legend.len());
    assert_eq!(legend_texts(&none), 0);
    let b = inside.legend_box.expect("a legend box");
    assert!(inside.plot_areas[0].contains(&b));
    assert!(
        inside.overlapping_texts().is_empty(),
        "{:?}",
        inside.overlapping_texts()
    );
    for t in inside.texts().filter(|t| t.role == TextRole::Annotation) {
        assert!(
            !convex_intersect(&t.quad(0.0), &rect_quad(&b)),
            "'{}' under the legend",
            t.text
        );
    }
    assert!(inside.height < below.height && none.height < below.height);
}

/// Points in all four corners leave no corner for a legend asked inside:
/// it goes below, with a note.
#[test]
fn a_legend_with_no_clear_corner_goes_below() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("corners.svg");
    let o = roofline(&[
        "--point",
        "a:0.01:0.5GFLOP/s",
        "--point",
        "b:0.01:300GFLOP/s",
        "--point",
        "c:300:0.5GFLOP/s",
        "--point",
        "d:300:300GFLOP/s",
        "--legend",
        "inside",
        "--out",
        svg.to_str().unwrap(),
    ]);
    let text = String::from_utf8(o.stdout).unwrap() + &String::from_utf8(o.stderr).unwrap();
    assert!(text.contains("the legend is drawn below instead"), "{text}");
}

/// A legend asked inside never covers a data marker: where every corner
/// would, it goes below, and the scene says so.
#[test]
fn a_legend_inside_covers_no_marker() {
    for (name, fig) in figures() {
        let scene = layout_with(&fig, LegendPlace::Inside);
        let legend_texts = scene.texts().filter(|t| t.role == TextRole::Legend).count();
        assert_eq!(legend_texts, fig.legend.len(), "{name}");
        match scene.legend_box {
            Some(b) => assert!(
                scene.marker_boxes.iter().all(|m| !m.intersects(&b)),
                "{name}: the legend covers a marker"
            ),
            None => assert!(
                scene.warnings.iter().any(|w| w.contains("drawn below")),
                "{name}: {:?}",
                scene.warnings
            ),
        }
    }
}
