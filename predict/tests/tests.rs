//! End-to-end tests of the `predict` binary.

mod common;
mod eval;
use common::*;
use predict::record::CONTRACT_KEYS;

use std::process::Command;

fn eval_json(args: &[&str]) -> serde_json::Value {
    let mut full = vec!["eval"];
    full.extend_from_slice(args);
    full.push("--json");
    let out = predict(&full);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// A command line and the contract keys it must produce, with values.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, f64)]);

fn close(v: &serde_json::Value, expected: f64, tol: f64) -> bool {
    let x = v.as_f64().unwrap_or(f64::NAN);
    (x - expected).abs() <= tol * expected.abs()
}

/// Every subcommand with a valid input: text and JSON both work, and the
/// contract keys hold the lecture's numbers.
#[test]
fn every_model_evaluates_in_text_and_json() {
    let cases: &[Case] = &[
        (
            &[
                "alpha-beta",
                "--t0",
                "2us",
                "--bandwidth",
                "6.4GB/s",
                "--bytes",
                "32768",
            ],
            &[
                ("time_s", 7.12e-6),
                ("effective_bandwidth_Bps", 4.602e9),
                ("fraction_of_peak", 0.7191),
                ("half_peak_bytes", 12800.0),
            ],
        ),
        (
            &[
                "alpha-beta",
                "--t0",
                "2us",
                "--bandwidth",
                "6.4GB/s",
                "--bytes",
                "4",
                "--messages",
                "128",
            ],
            &[("time_s", 256.08e-6)],
        ),
        (
            &[
                "little",
                "--bandwidth",
                "20GB/s",
                "--latency",
                "200cycles",
                "--clock",
                "3GHz",
            ],
            &[("outstanding_lines", 20.83)],
        ),
        (
            &["little", "--outstanding", "1", "--latency", "66.67ns"],
            &[("bandwidth_Bps", 0.96e9)],
        ),
        (
            &[
                "roofline",
                "--peak-flops",
                "768GFLOP/s",
                "--bandwidth",
                "20GB/s",
                "--ai",
                "0.15",
            ],
            &[("attainable_flops", 3e9), ("ridge_ai", 38.4)],
        ),
        (
            &["amdahl", "--serial-fraction", "0.05", "--p", "16"],
            &[("speedup", 9.143), ("limit", 20.0)],
        ),
        (
            &["karp-flatt", "--speedup", "9.142857", "--p", "16"],
            &[("serial_fraction", 0.05)],
        ),
        (
            &["work-span", "--work", "1e6", "--span", "1e3", "--p", "16"],
            &[
                ("time_lower_bound", 62500.0),
                ("time_upper_bound", 63500.0),
                ("parallelism", 1000.0),
                ("efficiency_lower_bound", 0.9843),
            ],
        ),
        (
            &[
                "stencil-scaling",
                "--n",
                "4096",
                "--p",
                "512",
                "--t0",
                "2us",
                "--bandwidth",
                "6.4GB/s",
                "--update-time",
                "2cycles",
                "--clock",
                "3GHz",
                "--messages",
                "1",
            ],
            &[
                ("compute_s", 21.85e-6),
                ("comm_s", 7.12e-6),
                ("crossover_p", 1571.0),
            ],
        ),
        (&["fusion"], &[("speedup_bound", 1.8)]),
        (
            &[
                "tiling",
                "--row-elems",
                "8388608",
                "--tile-elems",
                "16384",
                "--cache",
                "512KiB",
            ],
            &[("predicted_gain", 2.0)],
        ),
        (
            &["false-sharing", "--threads", "16", "--elem-bytes", "16"],
            &[("lines", 4.0), ("padded_bytes", 1024.0)],
        ),
        (
            &[
                "lock",
                "--t-crit",
                "600ns",
                "--ops",
                "1e6",
                "--threads",
                "16",
            ],
            &[
                ("global_lock_time_s", 0.6),
                ("max_throughput_per_s", 1.667e6),
            ],
        ),
        (
            &["combining", "--p", "64", "--t-op", "1us"],
            &[("levels", 6.0)],
        ),
        (
            &["queue", "--arrival-rate", "5", "--service-rate", "10"],
            &[],
        ),
        (
            &["office-hours"],
            &[("/totals_s/4", 1800.0), ("/waits_s/4", 1200.0)],
        ),
        (
            &[
                "binning",
                "--items",
                "1e6",
                "--global-lock-op",
                "600ns",
                "--bucket-lock-op",
                "290ns",
                "--bandwidth",
                "20GB/s",
            ],
            &[
                ("global_lock_s", 0.6),
                ("bucket_locks_s", 0.29),
                ("data_parallel_s", 1e-3),
            ],
        ),
    ];
    for (args, expected) in cases {
        let j = eval_json(args);
        assert_eq!(j["model"], args[0]);
        assert!(j["work"].as_array().is_some_and(|w| !w.is_empty()));
        for (key, value) in *expected {
            let got = if key.starts_with('/') {
                j.pointer(key).cloned().unwrap_or_default()
            } else {
                j[key].clone()
            };
            assert!(
                close(&got, *value, 2e-3),
                "{args:?}: {key} = {got}, expected {value}",
            );
        }
        let mut text_args = vec!["eval"];
        text_args.extend_from_slice(args);
        let out = predict(&text_args);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("lecture §"), "{text}");
        assert!(text.contains(" = "), "shows the substitution");
    }
}

#[test]
fn assignment_contract_keys() {
    let j = eval_json(&["assignment", "--n", "4096", "--p", "64"]);
    for (g, comm, ai) in [
        ("1d_blocked", 8192.0, 32.0),
        ("1d_interleaved", 524288.0, 0.5),
        ("2d_blocked", 2048.0, 128.0),
    ] {
        assert_eq!(j[g]["compute_elems"], 262144.0);
        assert_eq!(j[g]["comm_elems"], comm);
        assert_eq!(j[g]["arithmetic_intensity"], ai);
    }
}

#[test]
fn roofline_names_the_bound() {
    let mem = eval_json(&[
        "roofline",
        "--peak-flops",
        "768e9",
        "--bandwidth",
        "20e9",
        "--ai",
        "1",
    ]);
    assert_eq!(mem["bound"], "memory");
    let cpu = eval_json(&[
        "roofline",
        "--peak-flops",
        "768e9",
        "--bandwidth",
        "20e9",
        "--ai",
        "64",
    ]);
    assert_eq!(cpu["bound"], "compute");
    assert_eq!(cpu["attainable_flops"], 768e9);
}

/// `--profile textbook` supplies the lecture machine's figures, gives the
/// lecture's numbers, and says where each figure came from.
#[test]
fn the_textbook_profile_supplies_the_lecture_figures() {
    let ab = eval_json(&["--profile", "textbook", "alpha-beta", "--bytes", "32768"]);
    assert!(close(&ab["time_s"], 7.12e-6, 1e-9), "{ab}");
    let notes = ab["notes"].to_string();
    assert!(notes.contains("summary.mpi_t0_s"), "{notes}");
    let st = eval_json(&[
        "--profile",
        "textbook",
        "stencil-scaling",
        "--n",
        "4096",
        "--p",
        "64",
    ]);
    // §4.1 (one start-up per iteration, the default): 2 cycles per update at 3 GHz, 175 µs of compute, 7.12 µs of messages.
    assert!(close(&st["compute_s"], 174.76e-6, 1e-3), "{st}");
    assert!(close(&st["comm_s"], 7.12e-6, 1e-9), "{st}");
    let rf = eval_json(&[
        "--profile",
        "textbook",
        "roofline",
        "--ai",
        "0.15",
        "--precision",
        "f32",
    ]);
    assert!(close(&rf["ridge_ai"], 38.4, 1e-9), "{rf}");
    let li = eval_json(&["--profile", "textbook", "little"]);
    assert!(close(&li["outstanding_lines"], 20.83, 1e-3), "{li}");
    // Given flags win over the profile.
    let own = eval_json(&[
        "--profile",
        "textbook",
        "alpha-beta",
        "--bytes",
        "32768",
        "--t0",
        "1us",
    ]);
    assert!(close(&own["time_s"], 6.12e-6, 1e-9), "{own}");
}

#[test]
fn non_square_p_uses_a_rectangular_grid_and_says_so() {
    let out = predict(&["eval", "assignment", "--n", "1200", "--p", "12"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("3×4 processor grid"));
}

#[test]
fn amdahl_limit_at_zero_fraction_is_null() {
    let j = eval_json(&["amdahl", "--serial-fraction", "0", "--p", "8"]);
    assert!(j["limit"].is_null());
    assert_eq!(j["speedup"], 8.0);
}

/// Bad input: one line on stderr naming the parameter, exit status 2, no panic.
#[test]
fn bad_input_gets_one_line_and_status_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["eval", "lecture", "--profile", "textbook"],
            "checks the lecture's own figures",
        ),
        (
            &[
                "eval",
                "pipeline",
                "--stages",
                "3",
                "--stage-time",
                "2ns",
                "--slowest-stage",
                "1ns",
            ],
            "is faster than the other stages",
        ),
        (
            &[
                "eval",
                "lock",
                "--t-crit",
                "1us",
                "--ops",
                "0",
                "--threads",
                "2",
            ],
            "ops = 0",
        ),
        (
            &["scaling", "--profile", "textbook", "--p-max", "100000"],
            "--p-max 100000 exceeds --n 4096",
        ),
        (
            &["eval", "--profile", ".", "little", "--latency", "100ns"],
            "it is a directory",
        ),
        (
            &["eval", "amdahl", "--serial-fraction", "1.5", "--p", "4"],
            "serial-fraction",
        ),
        (
            &["eval", "amdahl", "--serial-fraction", "-0.1", "--p", "4"],
            "serial-fraction",
        ),
        (
            &["eval", "amdahl", "--serial-fraction", "0.1", "--p", "0"],
            "p =",
        ),
        (&["eval", "amdahl", "--serial-fraction", "0.1"], "--p"),
        (
            &["eval", "alpha-beta", "--bytes", "1"],
            "give --t0, or --profile",
        ),
        (
            &["eval", "--profile", "no-such", "alpha-beta", "--bytes", "1"],
            "profile names:",
        ),
        (
            &[
                "eval",
                "alpha-beta",
                "--t0",
                "2parsecs",
                "--bandwidth",
                "1GB/s",
                "--bytes",
                "1",
            ],
            "--t0",
        ),
        (
            &[
                "eval",
                "alpha-beta",
                "--t0",
                "-2us",
                "--bandwidth",
                "1GB/s",
                "--bytes",
                "1",
            ],
            "t0",
        ),
        (
            &[
                "eval",
                "alpha-beta",
                "--t0",
                "2us",
                "--bandwidth",
                "0",
                "--bytes",
                "1",
            ],
            "bandwidth",
        ),
        (
            &[
                "eval",
                "alpha-beta",
                "--t0",
                "2us",
                "--bandwidth",
                "1GB",
                "--bytes",
                "1",
            ],
            "--bandwidth",
        ),
        (
            &[
                "eval",
                "alpha-beta",
                "--t0",
                "2us",
                "--bandwidth",
                "1GB/s",
                "--bytes",
                "0",
            ],
            "bytes",
        ),
        (
            &[
                "eval",
                "alpha-beta",
                "--t0",
                "2us",
                "--bandwidth",
                "1GB/s",
                "--bytes",
                "8",
                "--messages",
                "2.5",
            ],
            "messages",
        ),
        (&["eval", "assignment", "--n", "0", "--p", "4"], "n ="),
        (
            &["eval", "assignment", "--n", "16", "--p", "1000"],
            "exceed",
        ),
        (
            &[
                "eval",
                "little",
                "--bandwidth",
                "20GB/s",
                "--latency",
                "200cycles",
            ],
            "--clock",
        ),
        (&["eval", "little", "--latency", "1ns"], "--bandwidth"),
        (
            &[
                "eval",
                "roofline",
                "--peak-flops",
                "fast",
                "--bandwidth",
                "1GB/s",
                "--ai",
                "1",
            ],
            "--peak-flops",
        ),
        (
            &[
                "eval",
                "roofline",
                "--peak-flops",
                "1e9",
                "--bandwidth",
                "1GB/s",
                "--ai",
                "-1",
            ],
            "ai",
        ),
        (
            &[
                "eval",
                "work-span",
                "--work",
                "10",
                "--span",
                "20",
                "--p",
                "2",
            ],
            "span",
        ),
        (
            &["eval", "karp-flatt", "--speedup", "1", "--p", "1"],
            "p >= 2",
        ),
        (
            &[
                "eval",
                "queue",
                "--arrival-rate",
                "10",
                "--service-rate",
                "5",
            ],
            "utilization",
        ),
        (
            &[
                "eval",
                "tiling",
                "--row-elems",
                "100",
                "--tile-elems",
                "200",
                "--cache",
                "1MiB",
            ],
            "--tile-elems",
        ),
        (
            &[
                "eval",
                "combining",
                "--p",
                "8",
                "--t-op",
                "1us",
                "--fan-in",
                "1",
            ],
            "fan-in",
        ),
        (&["eval", "office-hours", "--leave-times", "5,0"], "sorted"),
        (&["eval", "nonsense"], "nonsense"),
        (&["frobnicate"], "frobnicate"),
    ];
    for (args, needle) in cases {
        let out = predict(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: one line, got {err}"
        );
        assert!(err.starts_with("error:"), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: '{needle}' not in {err}");
        assert!(!err.contains("panicked"), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

/// `predict run` at small sizes: every kernel variant runs, matches its
/// serial reference, and yields a record with the contract fields.
#[test]
fn run_every_kernel_small() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out/records.csv");
    let m = dir.path().join("m");
    let mut all = Vec::new();
    for (kernel, size) in [
        ("fusion", "4096"),
        ("stencil", "256"),
        ("false-sharing", "1000"),
        ("binning", "5000"),
        ("matmul", "64"),
    ] {
        let out = predict(&[
            "run",
            "--kernel",
            kernel,
            "--size",
            size,
            "--quick",
            "--json",
            "--csv",
            csv.to_str().unwrap(),
            "--measurements",
            m.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{kernel}: {err}");
        let recs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!recs.is_empty());
        for r in &recs {
            for key in CONTRACT_KEYS {
                assert!(r.get(key).is_some(), "{kernel}: no {key} in {r}");
            }
            assert_eq!(r["kernel"], kernel);
            assert_eq!(r["verified"], true, "{r}");
            let ci = r["measured_ci_s"].as_array().unwrap();
            let (lo, med, hi) = (
                ci[0].as_f64().unwrap(),
                r["measured_s"].as_f64().unwrap(),
                ci[1].as_f64().unwrap(),
            );
            assert!(lo <= med && med <= hi && lo > 0.0);
        }
        let csv_text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(
            csv_text.lines().count(),
            recs.len() + 1,
            "header + one line per record"
        );
        all.extend(recs);
    }
    let lines = std::fs::read_to_string(m.join("records.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), all.len(), "every record appended");
}

#[test]
fn run_without_the_default_profile_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_predict"))
        .current_dir(dir.path())
        .args([
            "run",
            "--kernel",
            "matmul",
            "--size",
            "16",
            "--quick",
            "--no-record",
            "--threads",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("measure this machine with `calibrate`")
            && stderr.contains("--profile textbook")
            && stderr.contains("--profile dev-vm"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("no prediction"));
}

#[test]
fn run_bad_input_gets_one_line_and_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("v999.json");
    std::fs::write(&wrong, r#"{"schema_version": 999}"#).unwrap();
    let missing = dir.path().join("none.json");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--kernel", "nonsense"], "unknown kernel"),
        (vec!["run", "--kernel", "fusion", "--size", "0"], "--size"),
        (vec!["run", "--kernel", "fusion", "--size", "2.5"], "--size"),
        (vec!["run", "--kernel", "fusion", "--size", "1e20"], "2^53"),
        (
            vec!["run", "--kernel", "fusion", "--kernel", "fusion"],
            "named twice",
        ),
        (
            vec!["run", "--kernel", "fusion", "--kernel", "ghost-stencil"],
            "runs alone",
        ),
        (
            vec!["run", "--kernel", "ghost-stencil", "--timeout", "1e99"],
            "from 0 s to 1000000 s",
        ),
        (
            vec!["run", "--kernel", "fusion", "--threads", "0"],
            "--threads",
        ),
        (
            vec!["run", "--kernel", "fusion", "--threads", "100000"],
            "--threads",
        ),
        (
            vec![
                "run",
                "--kernel",
                "binning",
                "--size",
                "1",
                "--threads",
                "2",
            ],
            "--size",
        ),
        (
            vec!["run", "--profile", wrong.to_str().unwrap()],
            "schema version",
        ),
        (
            vec!["run", "--profile", missing.to_str().unwrap()],
            "calibrate --out",
        ),
        (
            vec!["run", "--kernel", "fusion", "--csv", "/proc/nope/x.csv"],
            "x.csv",
        ),
    ];
    for (args, needle) in cases {
        let out = predict(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: '{needle}' not in {err}");
    }
}

/// A profile with an impossible figure is refused when loaded, naming the
/// field, before any kernel runs (a zero lock throughput once panicked).
#[test]
fn an_impossible_profile_figure_is_refused_with_its_field() {
    let text = std::fs::read_to_string(reference("profile.json")).unwrap();
    let mut p: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, serde_json::Value, &str); 3] = [
        (
            "/summary/stream_triad_Bps",
            serde_json::json!(-1.0),
            "summary.stream_triad_Bps",
        ),
        (
            "/summary/dram_latency_s",
            serde_json::json!(0.0),
            "summary.dram_latency_s",
        ),
        (
            "/provenance/clock_hz",
            serde_json::json!(-3e9),
            "provenance.clock_hz",
        ),
    ];
    for (pointer, bad, field) in cases {
        let mut q = p.clone();
        *q.pointer_mut(pointer).unwrap() = bad;
        let file = dir.path().join("bad.json");
        std::fs::write(&file, q.to_string()).unwrap();
        let f = file.to_str().unwrap();
        for args in [
            vec![
                "run",
                "--kernel",
                "binning",
                "--size",
                "64",
                "--quick",
                "--no-record",
                "--profile",
                f,
            ],
            vec!["eval", "--profile", f, "roofline", "--ai", "1"],
        ] {
            assert_bad(&args, field);
        }
    }
    // The lock section's throughputs are samples: a zero median is refused.
    // The sample measured profile has them (its machine made unknown, so no
    // other-machine warning adds a line).
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/profiles/dev-vm.json");
    p = serde_json::from_str(&std::fs::read_to_string(sample).unwrap()).unwrap();
    p["provenance"]["cpu_model"] = "".into();
    p["provenance"]["hostname"] = "".into();
    {
        let kinds = p.pointer_mut("/sections/lock/kinds").unwrap();
        kinds[0]["points"][0]["throughput_ops"] =
            serde_json::json!({"median": 0.0, "ci_lo": 0.0, "ci_hi": 0.0});
        let file = dir.path().join("lock.json");
        std::fs::write(&file, p.to_string()).unwrap();
        let f = file.to_str().unwrap();
        assert_bad(
            &[
                "run",
                "--kernel",
                "binning",
                "--size",
                "64",
                "--quick",
                "--no-record",
                "--profile",
                f,
            ],
            "throughput_ops.median",
        );
    }
}

/// `predict run --size` beyond the memory budget is refused before any
/// allocation, saying how much it needs and how much there is.
#[test]
fn a_size_beyond_the_memory_budget_is_refused() {
    assert_bad(
        &[
            "run",
            "--kernel",
            "fusion",
            "--size",
            "99999999999",
            "--no-record",
        ],
        "the fusion kernel needs",
    );
    assert_bad(
        &[
            "run",
            "--kernel",
            "matmul",
            "--size",
            "4096",
            "--max-memory",
            "1MiB",
            "--no-record",
        ],
        "more than the 1 MiB allowed",
    );
}

/// An interrupt leaves no temporary file beside an output it had not
/// finished, and the process ends with status 130, as an interrupted
/// command does.
#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_no_temporary_file() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_predict"))
        .args([
            "run",
            "--kernel",
            "fusion",
            "--profile",
            "textbook",
            "--csv",
        ])
        .arg(&csv)
        .arg("--measurements")
        .arg(dir.path().join("m"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let temporaries = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .count()
    };
    // The CSV's temporary file is opened before the kernels start.
    let start = Instant::now();
    while temporaries() == 0 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(temporaries(), 1, "the run opened its output");
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(temporaries(), 0);
    assert!(!csv.exists());
}
