//! `predict run --kernel ghost-stencil` under `mpirun`: every variant gives
//! the serial reference's grid bit for bit, the records follow the
//! record contract, and bad sizes end with one line and status 2. When `mpirun` is
//! not on PATH each test reports itself skipped (and fails under CI=true). Nothing here depends on speed.

#![cfg(feature = "mpi")]

mod common;
#[path = "../../calibrate/tests/support/mpirun.rs"]
mod mpirun;
use common::reference;
use mpirun::mpirun_on_path;
use predict::record::CONTRACT_KEYS;

use std::os::unix::fs::MetadataExt;
use std::process::{Command, Output};
use std::sync::Mutex;

use predict::mpi_stencil::serial;
use predict::mpi_stencil::warm_up::{sweeps_at, WARM_UP_S};
use serde_json::Value;

/// One MPI job at a time: on two cores parallel jobs only slow each other.
static MPI_JOBS: Mutex<()> = Mutex::new(());

fn as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `mpirun -np <np> predict run --kernel ghost-stencil <args> --no-record`.
fn mpirun(np: u32, args: &[&str]) -> Output {
    let _guard = MPI_JOBS.lock().unwrap_or_else(|e| e.into_inner());
    let mut cmd = Command::new("mpirun");
    cmd.args(["-np", &np.to_string(), "--oversubscribe"])
        .arg(env!("CARGO_BIN_EXE_predict"))
        .args(["run", "--kernel", "ghost-stencil", "--no-record"])
        .args(args);
    if as_root() {
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    cmd.output().expect("mpirun starts")
}

/// The JSON records of a successful run.
fn records(np: u32, args: &[&str]) -> Vec<Value> {
    let mut full = args.to_vec();
    full.push("--json");
    let out = mpirun(np, &full);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("one JSON document on stdout ({e}): {stderr}"));
    v.as_array().expect("an array of records").clone()
}

/// The serial reference's checksum as the records print it.
fn reference_checksum(n: usize, iters: usize, every: usize) -> String {
    format!("{:#018x}", serial::reference(n, iters, every).checksum())
}

/// The contract keys, the grid check and the sizes of one record.
fn check_record(r: &Value, np: u64, n: u64, iters: u64) {
    for k in CONTRACT_KEYS {
        assert!(r.get(k).is_some(), "{k} missing in {r}");
    }
    assert_eq!(r["kernel"], "ghost-stencil");
    assert_eq!(r["threads"], np);
    assert_eq!(r["size"], n);
    assert_eq!(r["iterations"], iters);
    assert_eq!(r["verified"], true, "{r}");
    // The warm-up ran on blocks of its own: the grid check above holds.
    assert!(r["warmup_sweeps"].as_u64().unwrap() >= 1);
    assert!(r["warmup_s"].as_f64().unwrap() >= WARM_UP_S);
    let m = r["measured_s"].as_f64().unwrap();
    let ci = r["measured_ci_s"].as_array().unwrap();
    assert!(m > 0.0);
    assert!(ci[0].as_f64().unwrap() <= m && m <= ci[1].as_f64().unwrap());
    let area = (n * n) as f64;
    assert_eq!(r["flops"].as_f64().unwrap(), 5.0 * area);
    assert_eq!(r["bytes"].as_f64().unwrap(), 16.0 * area);
    assert_eq!(r["bytes_write_allocate"].as_f64().unwrap(), 24.0 * area);
    assert!(r["provenance"]["date"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn every_variant_matches_the_serial_reference_on_two_ranks() {
    if !mpirun_on_path() {
        return;
    }
    let rs = records(
        2,
        &[
            "--n",
            "48",
            "--iters",
            "12",
            "--check-every",
            "5",
            "--verify",
        ],
    );
    let variants: Vec<&str> = rs.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(variants, ["blocking", "nonblocking", "2d"]);
    let sum = reference_checksum(48, 12, 5);
    for r in &rs {
        check_record(r, 2, 48, 12);
        assert_eq!(r["checksum"], sum.as_str());
        // No profile in predict/: no prediction, and it says why.
        assert!(r["predicted_s"].is_null() && r["rel_error"].is_null());
        assert!(r["no_prediction"].as_str().unwrap().contains("calibrate"));
    }
    assert_eq!(rs[2]["grid"], "1x2");
    assert!(rs[1]["speedup_vs_blocking"]["measured"].as_f64().unwrap() > 0.0);
}

#[test]
fn four_ranks_on_a_chain_and_a_2x2_grid_with_an_odd_size() {
    if !mpirun_on_path() {
        return;
    }
    let rs = records(
        4,
        &[
            "--n",
            "37",
            "--iters",
            "9",
            "--check-every",
            "4",
            "--verify",
        ],
    );
    let sum = reference_checksum(37, 9, 4);
    let grids: Vec<&str> = rs.iter().map(|r| r["grid"].as_str().unwrap()).collect();
    assert_eq!(grids, ["1x4", "1x4", "2x2"]);
    for r in &rs {
        check_record(r, 4, 37, 9);
        assert_eq!(r["checksum"], sum.as_str());
    }
}

#[test]
fn three_ranks_have_a_middle_rank_and_a_1x3_grid() {
    if !mpirun_on_path() {
        return;
    }
    let rs = records(3, &["--n", "10", "--iters", "5", "--verify"]);
    let sum = reference_checksum(10, 5, 10);
    assert_eq!(rs[2]["grid"], "1x3");
    for r in &rs {
        check_record(r, 3, 10, 5);
        assert_eq!(r["checksum"], sum.as_str());
    }
}

#[test]
fn a_tolerance_stops_every_variant_at_the_same_sweep() {
    if !mpirun_on_path() {
        return;
    }
    let rs = records(
        2,
        &[
            "--n",
            "16",
            "--iters",
            "5000",
            "--check-every",
            "1",
            "--tol",
            "1e-3",
            "--verify",
        ],
    );
    let stop = rs[0]["iterations"].as_u64().unwrap();
    assert!(stop > 2 && stop < 5000, "{stop}");
    for r in &rs {
        check_record(r, 2, 16, stop);
        assert_eq!(r["converged"], true);
        assert!(r["residual"].as_f64().unwrap() <= 1e-3);
    }
}

#[test]
fn a_profile_gives_predictions_and_csv() {
    if !mpirun_on_path() {
        return;
    }
    // A copy sweep of 24 GB/s on 2 threads and 12 GB/s on one (its loads
    // alone 8 and 4 GB/s), L1, L2
    // and L3 of 32 KiB, 1 MiB and 32 MiB; one network regime T0 = 1 µs,
    // B = 5 GB/s; overlap 0.5; 2 CPUs (the model's unit tests use the
    // same machine).
    let profile = reference("stencil-profile.json");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let rs = records(
        2,
        &[
            "--n",
            "40",
            "--iters",
            "6",
            "--profile",
            profile.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ],
    );
    for r in &rs {
        let pred = r["predicted_s"].as_f64().unwrap();
        let meas = r["measured_s"].as_f64().unwrap();
        let err = r["rel_error"].as_f64().unwrap();
        assert!(pred > 0.0);
        assert!((err - (pred - meas) / meas).abs() < 1e-9 * err.abs().max(1.0));
        assert!(!r["binding"].as_str().unwrap().is_empty());
        // 2·22·42·8 B per rank.
        assert_eq!(r["model"]["level"], "L1");
        assert!(r["verified"].is_null(), "not checked without --verify");
        // The STREAM point the sweep leans on, re-measured by both ranks at
        // once right after the variant, and the model on it.
        let drift = &r["paired"]["memory"];
        assert_eq!(drift["unit"], "B/s", "{r}");
        assert!(drift["now"].as_f64().unwrap() > 0.0, "{drift}");
        assert_eq!(drift["profile"], 24e9, "the profile's 2-thread copy");
        assert!(
            drift["what"].as_str().unwrap().contains("2 rank(s)"),
            "{drift}"
        );
        let paired = r["paired_predicted_s"].as_f64().unwrap();
        let perr = r["paired_rel_error"].as_f64().unwrap();
        assert!(paired > 0.0);
        assert!((perr - (paired - meas) / meas).abs() < 1e-9 * perr.abs().max(1.0));
        assert!(r["machine_changed"].is_boolean());
        // The sweep's reused loads: the load kernel at the sweep's smallest
        // size, 16 KiB per thread, on both ranks too.
        let loads = &r["paired"]["loads"];
        assert_eq!(loads["profile"], 8e9, "{loads}");
        assert!(loads["now"].as_f64().unwrap() > 0.0, "{loads}");
        assert!(loads["what"]
            .as_str()
            .unwrap()
            .starts_with("load, 2 rank(s), 16 KiB"));
    }
    assert_eq!(rs[1]["model"]["overlap_fraction"], 0.5);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.starts_with("kernel,variant,threads,size,measured_s"));
}

#[test]
fn without_iters_a_variant_sweeps_for_its_budget_after_the_warm_up() {
    if !mpirun_on_path() {
        return;
    }
    let rs = records(2, &["--n", "32", "--variant", "nonblocking"]);
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    let pace = r["warmup_sweep_s"].as_f64().unwrap();
    assert!(pace > 0.0);
    assert_eq!(r["iterations"].as_u64().unwrap() as usize, sweeps_at(pace));
    assert!(r["warmup_s"].as_f64().unwrap() >= WARM_UP_S);
}

#[test]
fn the_table_compares_variants() {
    if !mpirun_on_path() {
        return;
    }
    let out = mpirun(2, &["--n", "32", "--iters", "4", "--verify"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("speed-up nonblocking over blocking: measured"),
        "{text}"
    );
    assert!(
        text.contains("equal to the serial reference bit for bit"),
        "{text}"
    );
    assert!(text.contains("no profile at data/profile.json"), "{text}");
    assert!(text.contains("warm-up: "), "{text}");
}

#[test]
fn bad_sizes_end_with_one_line_and_status_2() {
    if !mpirun_on_path() {
        return;
    }
    for args in [
        &["--n", "1"][..],
        &["--iters", "0"][..],
        &["--n", "-8"][..],
        &["--n", "8", "--check-every", "0"][..],
    ] {
        let out = mpirun(2, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ours: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(ours.len(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
