//! `predict kernel`: described loops predicted from a profile, their bad
//! descriptions refused, measured times compared and recorded.

mod common;

use common::{assert_bad, predict, reference};
use serde_json::Value;
use std::path::Path;

fn profile() -> String {
    reference("profile.json").to_str().unwrap().to_string()
}

fn kernel_json(args: &[&str]) -> Value {
    kernel_json_on(&profile(), args)
}

/// The STREAM triad a[i] = b[i] + s·c[i] as flags.
const TRIAD: [&str; 8] = [
    "--array",
    "a:store:8",
    "--array",
    "b:load:8",
    "--array",
    "c:load:8",
    "--flops",
    "2",
];

/// `predict kernel --json` on the profile `p`.
fn kernel_json_on(p: &str, args: &[&str]) -> Value {
    let mut all = vec!["kernel", "--profile", p, "--json"];
    all.extend_from_slice(args);
    let o = predict(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The sample measured profile, whose figures are a real machine's.
fn dev_vm() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/profiles/dev-vm.json");
    p.to_str().unwrap().to_string()
}

#[test]
fn bad_descriptions_name_their_fault() {
    let base = ["kernel", "--n", "1000"];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    assert_bad(
        &with(&["--array", "x:read:8"]),
        "mode \"read\" does not exist",
    );
    assert_bad(
        &with(&["--array", "x:load:0"]),
        "BYTES must be a finite number > 0",
    );
    assert_bad(&with(&["--array", "x:load:-8"]), "BYTES");
    assert_bad(
        &with(&["--array", "x:load:8:stride=4"]),
        "stride (4 B) is smaller",
    );
    assert_bad(
        &with(&["--array", "x:load:8:random=4"]),
        "random region (4 B) is smaller",
    );
    assert_bad(
        &with(&["--array", "x:load:8", "--flops", "1", "--chain", "2"]),
        "--chain (2) cannot exceed --flops (1)",
    );
    assert_bad(
        &with(&["--array", "x:load:8", "--flops", "1", "--span", "2"]),
        "--span (2) cannot exceed --flops (1)",
    );
    assert_bad(
        &with(&["--array", "x:load:8", "--reused", "-8"]),
        "--reused must be a finite number of bytes >= 0",
    );
    assert_bad(&["kernel", "--array", "x:load:8"], "missing --n");
    assert_bad(
        &[
            "kernel",
            "--n",
            "1",
            "--threads",
            "2",
            "--array",
            "x:load:8",
        ],
        "--n 1 is fewer iterations than --threads 2",
    );
    assert_bad(
        &with(&["--array", "x:load:8", "--name", " "]),
        "name is empty",
    );
    assert_bad(
        &["kernel", "--n", "0", "--array", "x:load:8"],
        "--n must be",
    );
    assert_bad(
        &with(&["--threads", "0", "--array", "x:load:8"]),
        "--threads",
    );
    assert_bad(&with(&[]), "touches no array and does no flops");
    assert_bad(
        &with(&["--array", "x:load:8", "--array", "x:store:8"]),
        "two arrays are named x",
    );
    assert_bad(
        &["kernel", "--file", "no/such/description.json"],
        "cannot read the description",
    );
}

#[test]
fn the_json_carries_the_prediction_its_range_and_terms() {
    let d = kernel_json(&[
        "--n",
        "1e6",
        "--array",
        "x:load:8",
        "--array",
        "y:store:8",
        "--flops",
        "2",
    ]);
    let p = d["predicted_s"].as_f64().unwrap();
    let (lo, hi) = (
        d["predicted_lo_s"].as_f64().unwrap(),
        d["predicted_hi_s"].as_f64().unwrap(),
    );
    assert!(lo <= p && p <= hi, "{lo} {p} {hi}");
    assert_eq!(d["binding"], "memory bandwidth");
    assert!(d["level"].is_string());
    // 2 flops over 16 bytes named per iteration.
    assert_eq!(d["ai_flop_per_byte"].as_f64().unwrap(), 0.125);
    let terms = d["terms"].as_array().unwrap();
    assert_eq!(terms.len(), 2);
    let max = terms
        .iter()
        .map(|t| t["seconds"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(max, p);
    // Write-allocate: one 8-byte read per stored element.
    assert_eq!(d["traffic"]["allocate_bytes"].as_f64().unwrap(), 8e6);
}

/// Horner's scheme of degree 16 in L1: its chains, 1 ns per element at
/// depth 16 in the reference profile, bind over its 32 flops; a profile
/// without the span curve gives no prediction and says what to measure.
#[test]
fn chains_within_iterations_read_the_span_curve() {
    let horner = [
        "--n",
        "4096",
        "--array",
        "x:load:8",
        "--array",
        "y:store:8",
        "--flops",
        "32",
        "--span",
        "16",
        "--simd",
        "avx2",
    ];
    let d = kernel_json(&horner);
    assert_eq!(d["binding"], "chains within iterations");
    assert!((d["predicted_s"].as_f64().unwrap() - 4096.0 * 1e-9).abs() < 1e-15);
    assert!((d["predicted_lo_s"].as_f64().unwrap() - 4096.0 * 0.95e-9).abs() < 1e-15);
    let mut older: Value =
        serde_json::from_str(&std::fs::read_to_string(profile()).unwrap()).unwrap();
    older["sections"].as_object_mut().unwrap().remove("flops");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("older.json");
    std::fs::write(&file, older.to_string()).unwrap();
    let mut args = vec!["kernel", "--profile", file.to_str().unwrap()];
    args.extend_from_slice(&horner);
    assert_bad(&args, "chain inside on avx2; run `calibrate --only flops`");
}

#[test]
fn more_traffic_takes_longer_and_strides_move_whole_lines() {
    let secs = |args: &[&str]| kernel_json(args)["predicted_s"].as_f64().unwrap();
    let dense = secs(&["--n", "1e6", "--array", "x:load:8"]);
    let strided = secs(&["--n", "1e6", "--array", "x:load:8:stride=64"]);
    // Eight times the lines, and a working set eight times as large.
    assert!(strided > 7.0 * dense, "{dense} {strided}");
    let four = secs(&["--n", "1e6", "--threads", "4", "--array", "x:load:8"]);
    assert!(four < dense, "{dense} {four}");
}

#[test]
fn loads_that_hit_l1_again_add_load_port_time() {
    // A 5-point f64 stencil: 8 B of the old grid move per update, the
    // other four loads (32 B) hit L1.
    let args = [
        "--n",
        "1e6",
        "--array",
        "old:load:8",
        "--array",
        "new:store:8",
    ];
    let plain = kernel_json(&args);
    let mut with = args.to_vec();
    with.extend_from_slice(&["--reused", "32"]);
    let reused = kernel_json(&with);
    let secs = |d: &Value| d["predicted_s"].as_f64().unwrap();
    assert!(
        secs(&reused) > secs(&plain),
        "{} {}",
        secs(&plain),
        secs(&reused)
    );
    assert_eq!(reused["binding"], "memory + load/store");
    // The same traffic: the reused loads move nothing.
    assert_eq!(reused["traffic"], plain["traffic"]);
    // The example description says the same as these flags (on one
    // thread: the reference profile has one-thread ceilings only).
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/examples/jacobi.json");
    let file = kernel_json(&["--file", example.to_str().unwrap(), "--threads", "1"]);
    let flags = kernel_json(&[
        "--n",
        "16Mi",
        "--array",
        "old:load:8",
        "--array",
        "new:store:8",
        "--flops",
        "5",
        "--reused",
        "16",
        "--windowed-reuse",
        "16@131056",
    ]);
    assert_eq!(file["predicted_s"], flags["predicted_s"]);
    // A window beyond the reference's 16 MiB L3, in a loop that touches
    // 64 MB: its 16 B per update are loaded from memory again, in the
    // traffic and in the AI's bytes.
    let big = [
        "--n",
        "4e6",
        "--array",
        "old:load:8",
        "--array",
        "new:store:8",
    ];
    let mut beyond = big.to_vec();
    beyond.extend_from_slice(&["--windowed-reuse", "16@48MiB"]);
    let far = kernel_json(&beyond);
    let loads = |d: &Value| d["traffic"]["load_bytes"].as_f64().unwrap();
    assert_eq!(loads(&far), loads(&kernel_json(&big)) + 64e6);
    assert_eq!(far["bytes"].as_f64().unwrap(), 32e6 + 32e6 + 64e6);
    // The 16 MB loop cannot reuse across 48 MiB: nothing is that far back.
    let mut small = vec!["kernel", "--profile"];
    let reference = profile();
    small.push(&reference);
    small.extend_from_slice(&args);
    small.extend_from_slice(&["--windowed-reuse", "16@48MiB"]);
    assert_bad(&small, "a thread touches over the whole loop");
    // A malformed window is one clear line.
    assert_bad(
        &[
            "kernel",
            "--n",
            "1e6",
            "--flops",
            "1",
            "--windowed-reuse",
            "16",
        ],
        "BYTES@WINDOW",
    );
}

#[test]
fn sort_loops_add_their_items_and_a_scatter_beyond_the_caches_its_streams() {
    // Without the loops' figures the profile says which calibration
    // gives them.
    let scatter = ["--array", "cells:load:4", "--array", "order:store:4"];
    let mut args = vec!["kernel", "--profile"];
    let reference = profile();
    args.push(&reference);
    args.extend_from_slice(&["--n", "1e6"]);
    args.extend_from_slice(&scatter);
    args.extend_from_slice(&["--sort-loop", "scatter"]);
    assert_bad(&args, "calibrate --only c2c");
    // The reference profile with the loops timed: 1 ns per histogram
    // item and 2 ns per scatter item in L1, 3 ns per scatter item with
    // 4 MiB of output (in its 16 MiB L3) and 6 ns with 64 MiB, on one
    // thread.
    let mut p: Value = serde_json::from_str(&std::fs::read_to_string(&reference).unwrap()).unwrap();
    let item = |s: f64| serde_json::json!({"threads": 1, "bins": 256, "per_item_s": {"median": s}});
    let output = |s: f64, bytes: u64| {
        let mut i = item(s);
        i["output_bytes"] = bytes.into();
        i
    };
    p["sections"]["c2c"]["increments"] = serde_json::json!({
        "histogram": item(1e-9), "scatter": item(2e-9),
        "scatter_curve": [output(3e-9, 4 << 20)], "scatter_dram": output(6e-9, 64 << 20)
    });
    let dir = tempfile::tempdir().unwrap();
    let timed = dir.path().join("profile.json");
    let secs_on = |profile: &Value, n: &str, loops: &[&str]| {
        std::fs::write(&timed, profile.to_string()).unwrap();
        let mut all = vec![
            "kernel",
            "--profile",
            timed.to_str().unwrap(),
            "--json",
            "--n",
            n,
        ];
        all.extend_from_slice(&scatter);
        for l in loops {
            all.extend_from_slice(&["--sort-loop", l]);
        }
        let o = predict(&all);
        let v: Option<Value> = o
            .status
            .success()
            .then(|| serde_json::from_slice(&o.stdout).unwrap());
        (
            v.map(|v| v["predicted_s"].as_f64().unwrap()),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let secs = |n: &str, loops: &[&str]| {
        let (s, stderr) = secs_on(&p, n, loops);
        s.unwrap_or_else(|| panic!("{stderr}"))
    };
    // 8 MB in the 16 MiB L3: each item adds its time in L1 to the memory
    // time, the histogram's and the scatter's alike, and the scatter what
    // its streams cost there beyond one stream: the curve read at 8 MB,
    // between its 4 MiB and 64 MiB points in log size, less its own
    // stream, which is in the memory time.
    let at_8mb = 3e-9 + 3e-9 * (8e6 / (4.0 * 1048576.0f64)).ln() / 16f64.ln();
    let streamed = secs("1e6", &[]);
    let hist = secs("1e6", &["histogram"]) - streamed;
    assert!((hist - 1e-3).abs() < 1e-9, "{hist}");
    let one = secs("1e6", &["scatter"]) - streamed;
    assert!(one > 3e-3 && one < 1e6 * at_8mb, "{one}");
    let both = secs("1e6", &["histogram", "scatter"]) - streamed;
    assert!((both - one - 1e-3).abs() < 1e-9, "{both}");
    // Without a scatter timed in L3 the prediction is refused, not made
    // from L1's figure.
    let mut old = p.clone();
    old["sections"]["c2c"]["increments"]["scatter_curve"] = serde_json::json!([]);
    let (none, stderr) = secs_on(&old, "1e6", &["scatter"]);
    assert!(
        none.is_none() && stderr.contains("calibrate --only c2c"),
        "{stderr}"
    );
    // 512 MiB beyond the caches: the scatter pays its streams' cost there
    // too, more per item than in L1.
    let n = 64.0 * 1024.0 * 1024.0;
    let beyond = (secs("64Mi", &["scatter"]) - secs("64Mi", &[])) / n;
    assert!(beyond > 2.5e-9 && beyond < 6e-9, "{beyond}");
}

#[test]
fn a_description_file_and_flags_agree() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("triad.json");
    std::fs::write(
        &file,
        r#"{"name": "triad", "n": "1e6", "threads": 1,
            "arrays": ["a:store:8", "b:load:8", "c:load:8"], "flops": 2}"#,
    )
    .unwrap();
    let from_file = kernel_json(&["--file", file.to_str().unwrap()]);
    let mut flags = vec!["--n", "1e6"];
    flags.extend_from_slice(&TRIAD);
    let from_flags = kernel_json(&flags);
    assert_eq!(from_file["predicted_s"], from_flags["predicted_s"]);
    assert_eq!(from_file["kernel"], "triad");
    std::fs::write(&file, r#"{"n": 10, "arays": []}"#).unwrap();
    assert_bad(
        &["kernel", "--file", file.to_str().unwrap()],
        "unknown field `arays`",
    );
}

#[test]
fn a_measured_time_gives_the_error_and_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile();
    let o = predict(&[
        "kernel",
        "--profile",
        &p,
        "--name",
        "my-sum",
        "--n",
        "1e6",
        "--array",
        "x:load:8",
        "--flops",
        "1",
        "--time",
        "2ms",
        "--record",
        "--measurements",
        dir.path().to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("measured: 2.00 ms"), "{text}");
    assert!(
        text.contains("error (predicted − measured)/measured"),
        "{text}"
    );
    let records = std::fs::read_to_string(dir.path().join("records.jsonl")).unwrap();
    let r: Value = serde_json::from_str(records.lines().next().unwrap()).unwrap();
    assert_eq!(r["kernel"], "my-sum");
    assert_eq!(r["measured_s"].as_f64().unwrap(), 2e-3);
    assert_eq!(r["flops"].as_f64().unwrap(), 1e6);
    assert_eq!(r["bytes"].as_f64().unwrap(), 8e6);
    assert!(r["predicted_s"].as_f64().unwrap() > 0.0);
    // --record without --time says what to add.
    let o = predict(&["kernel", "--n", "10", "--array", "x:load:8", "--record"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn paired_re_measures_the_figures_the_prediction_leans_on() {
    // 8 KB of loads on one thread: the reference profile's nearest sweep
    // point is the load kernel at 16 KiB; 1 f64 flop per element leans on
    // its one-thread f64 peak; 8 B per element loaded again from L1 lean
    // on the load kernel at the sweep's smallest size, 16 KiB too. All
    // are measured again on this machine.
    let j = kernel_json(&[
        "--n", "1000", "--array", "x:load:8", "--flops", "1", "--reused", "8", "--time", "1us",
        "--paired",
    ]);
    let p = &j["paired"];
    let what = |d: &Value| d["what"].as_str().unwrap().to_string();
    let memory = &p["memory"];
    assert!(what(memory).starts_with("load, 1 thr, 16 KiB"), "{p}");
    assert_eq!(memory["unit"], "B/s");
    assert!(memory["now"].as_f64().unwrap() > 0.0, "{p}");
    assert!(what(&p["compute"]).starts_with("f64"), "{p}");
    let (predicted, measured) = (p["predicted_s"].as_f64().unwrap(), 1e-6);
    assert!(predicted > 0.0);
    assert!((p["rel_error"].as_f64().unwrap() - (predicted - measured) / measured).abs() < 1e-9);
    let moved = |d: &Value| {
        let r = d["now"].as_f64().unwrap() / d["profile"].as_f64().unwrap();
        (r - 1.0).abs() > 0.15
    };
    let loads = &p["loads"];
    assert!(what(loads).starts_with("load, 1 thr, 16 KiB"), "{p}");
    assert_eq!(
        p["machine_changed"],
        moved(memory) || moved(&p["compute"]) || moved(loads)
    );
    // A span: the reference profile's AVX2 Horner loop at the measured
    // depth nearest 12 (16 before 8, in log), on one thread, where this
    // CPU runs AVX2.
    let j = kernel_json(&[
        "--n", "1000", "--array", "x:load:8", "--flops", "24", "--span", "12", "--simd", "avx2",
        "--paired",
    ]);
    let span = &j["paired"]["span"];
    if calibrate::kernels::Isa::Avx2.supported() {
        assert_eq!(span["what"], "avx2 chains 16 steps deep, 1 thr", "{j}");
        assert_eq!(span["unit"], "elements/s");
        assert!(span["now"].as_f64().unwrap() > 0.0, "{j}");
    } else {
        assert!(span.is_null(), "{j}");
    }
}

/// A thread's transfers at one thread's rates are at most the memory term
/// on all threads: where the profile's two-thread rate is more than twice
/// one thread's (the sample Zen 4 profile's at the DRAM working set), a
/// chain of a thousandth of a step, or a few reused bytes, added a fifth
/// to the triad's time. The work beside the transfers tends to zero, and
/// so does what it adds (the rule itself: the unit test of the sums).
#[test]
fn vanishing_work_beside_the_transfers_adds_nothing() {
    let secs = |extra: &[&str]| {
        let mut args = vec!["--n", "16Mi", "--threads", "2"];
        args.extend_from_slice(&TRIAD);
        args.extend_from_slice(extra);
        kernel_json_on(&dev_vm(), &args)["predicted_s"]
            .as_f64()
            .unwrap()
    };
    let plain = secs(&[]);
    for extra in [["--chain", "0.001"], ["--reused", "0.001"]] {
        let with = secs(&extra);
        assert!(
            with >= plain && with < plain * 1.001,
            "{extra:?}: {plain} to {with}"
        );
    }
}

/// `--simd widest` is one build for every term: the profile's STREAM set,
/// whose ceiling, span and DRAM points it reads, as naming that set does.
#[test]
fn the_widest_build_is_one_set_for_every_term() {
    let p: Value = serde_json::from_str(&std::fs::read_to_string(dev_vm()).unwrap()).unwrap();
    let set = p["sections"]["stream"]["isa"].as_str().unwrap().to_string();
    let secs = |simd: &str| {
        let args = [
            "--n", "1Mi", "--array", "x:load:8", "--flops", "32", "--span", "16", "--simd", simd,
        ];
        kernel_json_on(&dev_vm(), &args)["predicted_s"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(secs("widest"), secs(&set));
}

/// A loop whose arrays take more than the profiled machine's memory is
/// refused; one that fits is answered.
#[test]
fn a_loop_larger_than_the_machine_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut p: Value = serde_json::from_str(&std::fs::read_to_string(profile()).unwrap()).unwrap();
    p["provenance"]["memory_bytes"] = (1u64 << 30).into();
    let small = dir.path().join("small.json");
    std::fs::write(&small, p.to_string()).unwrap();
    let small = small.to_str().unwrap();
    // 2 × 128 Mi × 8 B = 2 GiB of contiguous arrays; a random region of
    // 2 GiB; a stride whose span is 2 GiB.
    for arrays in [
        &["--array", "x:load:8", "--array", "y:store:8"][..],
        &["--array", "x:load:8:random=2GiB"][..],
        &["--array", "x:load:8:stride=128"][..],
    ] {
        let mut args = vec!["kernel", "--profile", small, "--n", "128Mi", "--flops", "1"];
        args.extend_from_slice(arrays);
        assert_bad(&args, "of memory the profiled machine has");
    }
    let o = predict(&[
        "kernel",
        "--profile",
        small,
        "--n",
        "32Mi",
        "--array",
        "x:load:8",
        "--flops",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A thread count the profile has no figures for is refused with what the
/// profile has; on 4 KiB pages the memory term names the one set its
/// sweep was measured in, which another --simd does not move.
#[test]
fn threads_beyond_the_profile_are_refused_and_the_pages_set_named() {
    let dev_vm = dev_vm();
    let dev_vm = dev_vm.as_str();
    assert_bad(
        &[
            "kernel",
            "--profile",
            dev_vm,
            "--n",
            "1Mi",
            "--threads",
            "64",
            "--array",
            "x:load:8",
        ],
        "was measured on at most",
    );
    let o = predict(&[
        "kernel",
        "--profile",
        dev_vm,
        "--n",
        "64Mi",
        "--array",
        "x:load:8",
        "--simd",
        "scalar",
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("the 4 KiB-page sweep in")
            && text.contains("(scalar moves the huge-page figures only)"),
        "{text}"
    );
}
