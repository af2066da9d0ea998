//! Integration tests of `calibrate`: the command-line contract (bad input,
//! atomic writes, `--only` merging), level detection on recorded curves, and
//! the sanity of one quick run on this machine. No test asserts a speed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use calibrate::kernels::Isa;
use calibrate::levels::{detect, Point};
use models::profile::{CeilingKernel, Profile, Provenance};
use serde::Deserialize;

/// Measuring runs share the 2 cores: one at a time.
static MEASURING: Mutex<()> = Mutex::new(());

fn calibrate() -> Command {
    Command::new(env!("CARGO_BIN_EXE_calibrate"))
}

fn run(args: &[&str]) -> Output {
    calibrate()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the calibrate binary runs")
}

fn measuring() -> std::sync::MutexGuard<'static, ()> {
    MEASURING.lock().unwrap_or_else(|p| p.into_inner())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn bad_input_is_one_line_exit_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("profile.json");
    let out_s = out.to_str().unwrap();
    let a_file = dir.path().join("a-file");
    fs::write(&a_file, "not a directory").unwrap();
    let under_file = a_file.join("profile.json");
    let under_file = under_file.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--only", "stream,bogus"], "bogus"),
        (vec!["--only", "pingpong"], "mpirun -np 2"),
        (vec!["--only", "pingpong,stream"], "runs alone"),
        (vec!["--threads", "0"], "--threads 0"),
        (vec!["--threads", "4096"], "logical CPU"),
        (
            vec!["--only", "c2c", "--threads", "1"],
            "needs 2 logical CPUs",
        ),
        (
            vec!["--max-memory", "10MiB"],
            "too small for the DRAM level",
        ),
        (vec!["--max-memory", "lots"], "lots"),
        (vec!["--max-memory", "1000TiB"], "RAM"),
        (vec!["--critical-ns=-5"], "--critical-ns"),
        (
            vec!["--only", "latency", "--critical-ns", "10"],
            "leaves out",
        ),
        (vec!["--frobnicate"], "--frobnicate"),
        (vec!["point", "triad"], "needs --size"),
        (
            vec!["point", "span"],
            "needs --depth, one of [4, 8, 16, 32, 64]",
        ),
        (
            vec!["point", "span", "--depth", "5"],
            "--depth 5 is not one of",
        ),
        (
            vec!["point", "chase", "--size", "1MiB", "--threads", "0"],
            "--threads 0",
        ),
        (
            vec!["point", "triad", "--size", "16"],
            "less than one 8-byte element",
        ),
        (
            vec!["point", "copy", "--size", "1MiB", "--depth", "8"],
            "--depth applies to point span only",
        ),
        (
            vec!["point", "peak-f64", "--size", "1MiB"],
            "no working set",
        ),
        (
            vec!["point", "span", "--depth", "8", "--pages", "small"],
            "--pages does not apply",
        ),
        (
            vec!["point", "chase", "--size", "1MiB", "--threads", "2"],
            "measured on one thread",
        ),
        (
            vec!["point", "scatter", "--size", "1KiB"],
            "less than a line per bin",
        ),
        (
            vec!["--max-memory", "99999999999999999999999"],
            "below 8 EiB",
        ),
    ];
    for (args, needle) in cases {
        let mut all = args.clone();
        if args[0] != "point" {
            all.extend(["--out", out_s]);
        }
        let o = run(&all);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line, got {err:?}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
        assert!(!out.exists(), "{args:?}: no profile written");
    }
    let o = calibrate()
        .env("PERFMODEL_MAX_ISA", "avx3")
        .args(["--only", "flops", "--out", out_s])
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("PERFMODEL_MAX_ISA=\"avx3\""), "{err}");
    assert!(!out.exists(), "a bad cap writes no profile");
    let o = run(&["--only", "flops", "--out", under_file]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("error: cannot write --out"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(text(&o.stderr).lines().count(), 1);
}

#[test]
fn help_and_version_are_not_errors() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("--only"));
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
}

/// `calibrate point ARGS --quick --json`, run alone: a time in seconds,
/// per element or item, well under a microsecond; its JSON object.
fn time_point(args: &[&str]) -> serde_json::Value {
    let _guard = measuring();
    let all = [args, &["--quick", "--json"]].concat();
    let o = run(&all);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["unit"], "s");
    let v = j["value"].as_f64().unwrap();
    assert!(v > 0.0 && v < 1e-6, "{v}");
    j
}

#[test]
fn a_span_point_is_seconds_per_element_at_its_depth() {
    let j = time_point(&["point", "span", "--depth", "8"]);
    assert_eq!(
        (j["kernel"].as_str(), j["depth"].as_u64()),
        (Some("span"), Some(8))
    );
    assert_eq!(j["isa"], Isa::detect().name());
}

#[test]
fn a_scatter_point_is_seconds_per_item_at_its_output_per_thread() {
    let j = time_point(&["point", "scatter", "--size", "1MiB"]);
    assert_eq!(j["kernel"], "scatter");
    assert_eq!(j["output_bytes_per_thread"], 1 << 20);
    assert_eq!(j["bins"], 256);
}

fn sentinel_profile(path: &Path) -> String {
    let mut p = Profile::new(Provenance {
        cpu_model: "sentinel".into(),
        ..Default::default()
    });
    p.summary.stream_triad_Bps = Some(1.0);
    p.sections
        .insert_json("stream", serde_json::json!({ "isa": "kept" }))
        .unwrap();
    let t = p.to_json();
    fs::write(path, &t).unwrap();
    t
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn interrupted_or_failed_runs_leave_the_profile_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("profile.json");
    let before = sentinel_profile(&out);
    // A refused input.
    let o = run(&[
        "--only",
        "c2c",
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(fs::read_to_string(&out).unwrap(), before);
    // A run killed while it measures.
    let _guard = measuring();
    let mut child = calibrate()
        .args(["--quick", "--out", out.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(fs::read_to_string(&out).unwrap(), before);
    assert_eq!(
        files_in(dir.path()),
        std::slice::from_ref(&out),
        "no temporary file left behind"
    );
}

#[test]
fn only_runs_write_a_valid_profile_and_merge_sections() {
    let _guard = measuring();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("data/profile.json");
    let o = run(&[
        "--only",
        "latency",
        "--quick",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("l1_latency_s"));
    let p = Profile::from_json(&fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(p.sections.names(), ["latency"]);
    for key in ["l1_latency_s", "dram_latency_s"] {
        measured_or_unreliable(&p, key);
    }
    assert!(p.summary.stream_triad_Bps.is_none());
    assert!(p.levels.len() >= 2, "{:?}", p.levels);
    assert!(p
        .levels
        .iter()
        .any(|l| l.name == "L1" && l.size_bytes.is_some()));
    assert!(p.provenance.clock_hz.is_some());
    assert!(!p.provenance.os_reported_caches.is_empty());

    let o = run(&["--only", "flops", "--quick", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let q = Profile::from_json(&fs::read_to_string(&out).unwrap()).unwrap();
    // JSON keeps the figures to within a rounding of the last digit.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
    assert_eq!(q.sections.names(), ["flops", "latency"]);
    assert!(
        close(
            q.summary.l1_latency_s.unwrap(),
            p.summary.l1_latency_s.unwrap()
        ),
        "earlier figures kept"
    );
    assert_eq!(q.levels.len(), p.levels.len(), "levels kept");
    for (a, b) in q.levels.iter().zip(&p.levels) {
        assert_eq!(a.name, b.name);
        let (x, y) = (a.latency_s.unwrap(), b.latency_s.unwrap());
        assert!(
            close(x.point, y.point) && close(x.lo, y.lo) && close(x.hi, y.hi),
            "{a:?} vs {b:?}"
        );
    }
    assert!(q.summary.peak_flops_f64_1t.is_some());
    // Every depth of the span on every set, on one thread and on all at
    // once; 64 FMAs an element take far longer than 4, whatever the
    // window. Each vector set has its loads beside the chains on each.
    let flops = q.sections.flops.as_ref().unwrap();
    let mut counts: Vec<usize> = flops.span.iter().map(|p| p.threads).collect();
    counts.sort_unstable();
    counts.dedup();
    assert_eq!(counts.first(), Some(&1));
    for isa in flops.span_isas() {
        for &threads in &counts {
            let at = |depth| {
                flops
                    .span
                    .iter()
                    .find(|p| p.isa == isa && p.depth == depth && p.threads == threads)
                    .unwrap_or_else(|| panic!("{isa} at depth {depth}: {:?}", flops.span))
                    .element
                    .time()
                    .point
            };
            assert!(at(64) > 4.0 * at(4), "{isa}: {} against {}", at(64), at(4));
            let on = |p: &&models::profile::flops::SpanPoint| p.isa == isa && p.threads == threads;
            assert_eq!(
                flops.span.iter().filter(on).count(),
                calibrate::kernels::span::DEPTHS.len()
            );
            let loads = flops
                .span_loads
                .iter()
                .filter(|l| l.isa == isa && l.threads == threads);
            assert_eq!(
                loads.count(),
                usize::from(isa != "scalar"),
                "{isa} on {threads}"
            );
        }
    }
    assert!(!q.ceilings.is_empty());
    assert!(
        q.ceilings
            .windows(2)
            .all(|w| w[0].flops.point >= w[1].flops.point),
        "highest first"
    );
    assert!(
        q.provenance
            .notes
            .iter()
            .any(|n| n.starts_with("[latency]")),
        "{:?}",
        q.provenance.notes
    );
    assert_eq!(files_in(out.parent().unwrap()), std::slice::from_ref(&out));
}

#[test]
fn a_capped_run_measures_no_wider_simd_than_its_cap() {
    let _guard = measuring();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("profile.json");
    for (cap, allowed) in [
        ("avx2", &["avx2", "scalar"][..]),
        ("scalar", &["scalar"][..]),
    ] {
        let o = calibrate()
            .env("PERFMODEL_MAX_ISA", cap)
            .args(["--only", "flops", "--quick", "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        let p = Profile::from_json(&fs::read_to_string(&out).unwrap()).unwrap();
        // The profile names a cap that narrowed the CPU's set.
        let widest = Isa::widest_of_cpu();
        assert_eq!(
            p.provenance.simd.contains("capped by PERFMODEL_MAX_ISA"),
            !allowed.contains(&widest.name()),
            "{cap}: {}",
            p.provenance.simd
        );
        assert!(
            p.ceilings
                .iter()
                .any(|c| c.kernel == CeilingKernel::Registers),
            "{cap}: {:?}",
            p.ceilings
        );
        for c in &p.ceilings {
            // matrixmultiply picks its own set, and the dgemm ceiling says
            // which.
            let want_dgemm = c.kernel == CeilingKernel::Dgemm;
            assert!(
                if want_dgemm {
                    c.isa == widest.name()
                } else {
                    allowed.contains(&c.isa.as_str())
                },
                "{cap}: {c:?}"
            );
        }
        let spans = &p.sections.flops.as_ref().unwrap().span;
        assert!(!spans.is_empty());
        for s in spans {
            assert!(allowed.contains(&s.isa.as_str()), "{cap}: {s:?}");
        }
        fs::remove_file(&out).unwrap();
    }
}

#[test]
fn one_quick_run_is_sane_on_this_machine() {
    let _guard = measuring();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("profile.json");
    let o = run(&["--quick", "--json", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // --json: the profile on stdout, the table on stderr.
    let p = Profile::from_json(&text(&o.stdout)).expect("stdout is one profile");
    assert_eq!(
        Profile::from_json(&fs::read_to_string(&out).unwrap()).unwrap(),
        p
    );
    assert!(text(&o.stderr).contains("Summary"));

    let s = &p.summary;
    for (k, v) in [
        ("stream_triad_Bps", s.stream_triad_Bps),
        ("stream_triad_1t_Bps", s.stream_triad_1t_Bps),
        ("peak_flops_f64", s.peak_flops_f64),
        ("peak_flops_f64_1t", s.peak_flops_f64_1t),
        ("l1_latency_s", s.l1_latency_s),
        ("dram_latency_s", s.dram_latency_s),
        ("t_crit_s", s.t_crit_s),
    ] {
        match v {
            Some(x) => assert!(x > 0.0 && x.is_finite(), "{k} = {x}"),
            None => measured_or_unreliable(&p, k),
        }
    }
    assert_eq!(
        (s.mpi_t0_s, s.mpi_bandwidth_Bps),
        (None, None),
        "filled by `calibrate network`, not by this run"
    );
    if p.provenance.logical_cpus >= 2 {
        measured_or_unreliable(&p, "core_to_core_latency_s");
        assert!(s
            .core_to_core_latency_s
            .is_none_or(|x| x > 0.0 && x <= 10e-6));
    }
    if let (Some(one), Some(all)) = (s.peak_flops_f64_1t, s.peak_flops_f64) {
        assert!(all >= one, "a two-thread peak below the one-thread one");
    }
    for key in ["latency", "flops", "stream", "mlp", "lock"] {
        assert!(p.sections.contains(key), "section {key}");
    }
    // The sweep on 4 KiB pages: on one thread and on all, up to the DRAM
    // size of the huge-page sweep, every kernel of the quick sweep there.
    let stream = p.sections.stream.as_ref().unwrap();
    for sweep in &stream.sweeps {
        let top = |points: &mut dyn Iterator<Item = &models::profile::stream::StreamPoint>| {
            points.map(|x| x.per_thread_bytes).max()
        };
        let base = top(&mut stream.base_page_points(sweep.threads));
        assert_eq!(
            base,
            top(&mut sweep.points.iter()),
            "on {} thread(s)",
            sweep.threads
        );
        let at_top = stream
            .base_page_points(sweep.threads)
            .filter(|x| Some(x.per_thread_bytes) == base)
            .count();
        assert_eq!(at_top, stream.dram_points(sweep.threads).count());
    }
    // One thread's DRAM points again in each narrower vector set, kernel
    // for kernel; more threads' in the widest alone.
    let kernels = |isa: Option<&str>, threads| {
        let mut k: Vec<&str> = stream
            .dram
            .iter()
            .filter(|d| d.isa.as_deref() == isa && d.threads == Some(threads))
            .map(|d| d.kernel.as_str())
            .collect();
        k.sort_unstable();
        k
    };
    for isa in calibrate::harness::kernels::Isa::narrower_vectors() {
        assert_eq!(kernels(Some(isa.name()), 1), kernels(None, 1), "{isa}");
        assert!(kernels(Some(isa.name()), 2).is_empty(), "{isa}");
    }

    if cfg!(debug_assertions) {
        // An unoptimised build times its own loop overhead, not the
        // machine: the order of the levels is only checked in release
        // (`cargo test --release`, as CI runs it).
        return;
    }
    let lat = |name: &str| {
        p.levels
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| l.latency_s)
            .map(|e| e.point)
            .unwrap_or_else(|| panic!("{name} latency in {:?}", p.levels))
    };
    assert!(lat("L1") < lat("L2"), "L1 {} < L2 {}", lat("L1"), lat("L2"));
    assert!(
        lat("L2") < lat("DRAM"),
        "L2 {} < DRAM {}",
        lat("L2"),
        lat("DRAM")
    );
    // A level figure measured from too few clean batches is left out.
    let bw = |name: &str| {
        p.levels
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| l.bandwidth_1t_Bps)
            .map(|e| e.point)
    };
    if let (Some(l1), Some(dram)) = (bw("L1"), bw("DRAM")) {
        assert!(l1 > dram, "L1 {l1} > DRAM {dram}");
    }
    assert!(bw("L1").is_some(), "L1 bandwidth in {:?}", p.levels);
    let sizes: Vec<f64> = p.levels.iter().filter_map(|l| l.size_bytes).collect();
    assert!(
        sizes.windows(2).all(|w| w[0] < w[1]),
        "sizes grow: {sizes:?}"
    );
}

#[derive(Deserialize)]
struct Fixture {
    description: String,
    expected: Expected,
    points: Vec<Point>,
}

#[derive(Deserialize)]
struct Expected {
    caches_bytes: Vec<f64>,
    dram: bool,
}

#[test]
fn level_detection_on_recorded_curves() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures");
    let mut seen = 0;
    for path in files_in(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("latency_") {
            continue;
        }
        seen += 1;
        let f: Fixture = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let d = detect(&f.points, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<f64> = d.caches.iter().map(|c| c.size_bytes.unwrap()).collect();
        assert_eq!(
            got.len(),
            f.expected.caches_bytes.len(),
            "{name} ({}): caches {got:?}",
            f.description
        );
        for (g, want) in got.iter().zip(&f.expected.caches_bytes) {
            assert!(
                g / want < 1.5 && want / g < 1.5,
                "{name}: {g} vs {want} ({got:?})"
            );
        }
        assert_eq!(d.dram.is_some(), f.expected.dram, "{name}: DRAM plateau");
        let lats: Vec<f64> = d.all().map(|l| l.latency_s.point).collect();
        assert!(
            lats.windows(2).all(|w| w[0] < w[1]),
            "{name}: latencies grow {lats:?}"
        );
    }
    assert!(seen >= 4, "fixtures found: {seen}");
}

/// A summary figure is the machine's, with its batch counts, or null with
/// the reason it was left out (a busy machine disturbs whole figures).
fn measured_or_unreliable(p: &Profile, key: &str) {
    let t = p
        .trust
        .get(key)
        .unwrap_or_else(|| panic!("no batch counts for {key}"));
    let value = match key {
        "l1_latency_s" => p.summary.l1_latency_s,
        "dram_latency_s" => p.summary.dram_latency_s,
        "core_to_core_latency_s" => p.summary.core_to_core_latency_s,
        "stream_triad_Bps" => p.summary.stream_triad_Bps,
        "stream_triad_1t_Bps" => p.summary.stream_triad_1t_Bps,
        "peak_flops_f64" => p.summary.peak_flops_f64,
        "peak_flops_f64_1t" => p.summary.peak_flops_f64_1t,
        "t_crit_s" => p.summary.t_crit_s,
        _ => panic!("unknown key {key}"),
    };
    match (value, &t.unreliable) {
        (Some(_), None) => assert!(t.clean_batches >= 3, "{key}: {t:?}"),
        (None, Some(why)) => assert!(!why.is_empty()),
        _ => panic!("{key}: value {value:?} with {t:?}"),
    }
}
