//! `calibrate::pingpong` under `mpirun`.
//!
//! The test binary launches itself: `mpirun -np 2 <this binary> --exact
//! child --ignored` runs the ignored test [`child`] on two ranks, which calls
//! the library function and writes one JSON file per rank into a folder the
//! parent names (files, not stdout: mpirun may interleave the ranks' long
//! lines); the parent test reads them. Run directly (a singleton MPI
//! process), the child shows the single-rank error. When `mpirun` is not on
//! PATH each test reports itself skipped (and fails under CI=true).

#![cfg(feature = "mpi")]

#[path = "support/mpirun.rs"]
mod mpirun;
use mpirun::mpirun_on_path;

use std::process::{Command, Output};
use std::sync::Mutex;

use calibrate::pingpong::{self, PingpongOptions, PingpongOutcome};
use serde_json::{json, Value};

/// Set in the child's environment: the folder for the ranks' results.
const CHILD_ENV: &str = "CALIBRATE_PINGPONG_TEST_CHILD";

/// One MPI job at a time: two jobs on two cores would only slow each other.
static MPI_JOBS: Mutex<()> = Mutex::new(());

/// Runs under mpirun only (the parent tests start it).
#[test]
#[ignore = "started by the other tests under mpirun"]
fn child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let universe = mpi::initialize().expect("MPI initialises once");
    let world = universe.world();
    let rank = mpi::traits::Communicator::rank(&world);
    let opts = PingpongOptions {
        max_bytes: 1 << 20,
        overlap_bytes: 256 << 10,
        watchdog_timeout_s: 60.0,
        ..PingpongOptions::quick()
    };
    let line = match pingpong::run_on(&world, &opts) {
        Ok(PingpongOutcome::Report(r)) => json!({
            "report": {
                "t0_s": r.t0_s,
                "bandwidth_Bps": r.bandwidth_Bps,
                "network": r.network(),
                "section": r.section(),
                "table": r.to_string(),
            }
        }),
        Ok(PingpongOutcome::Peer) => json!({ "peer": true }),
        Err(e) => json!({ "error": e.to_string() }),
    };
    let path = std::path::Path::new(&dir).join(format!("rank{rank}.json"));
    std::fs::write(path, line.to_string()).expect("the result folder is writable");
}

/// The child under `mpirun -np 2` plus `extra` options, or under no
/// launcher at all when `np` is `None`; its ranks write into `dir`.
fn launch(np: Option<u32>, extra: &[&str], dir: &std::path::Path) -> Output {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let child_args = [
        "--exact",
        "child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ];
    let mut cmd = match np {
        Some(np) => {
            let mut c = Command::new("mpirun");
            c.args(["-np", &np.to_string()]).args(extra).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.args(child_args).env(CHILD_ENV, dir);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    cmd.output().expect("the launcher starts")
}

/// The ranks' results, in rank order.
fn results(dir: &std::path::Path) -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the result folder exists")
        .map(|e| e.expect("a folder entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).expect("JSON"))
        .collect()
}

/// The single report of a two-rank run, checked for shape.
fn two_rank_report(extra: &[&str]) -> Option<Value> {
    if !mpirun_on_path() {
        return None;
    }
    let _guard = MPI_JOBS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = launch(Some(2), extra, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mpirun failed: {stderr}");
    let lines = results(dir.path());
    assert_eq!(lines.len(), 2, "one line per rank: {lines:?} {stderr}");
    let reports: Vec<&Value> = lines.iter().filter_map(|l| l.get("report")).collect();
    let peers = lines.iter().filter(|l| l.get("peer").is_some()).count();
    assert_eq!((reports.len(), peers), (1, 1), "{lines:?}");
    Some(reports[0].clone())
}

fn check_report(r: &Value) {
    let t0 = r["t0_s"]["point"].as_f64().unwrap();
    let bw = r["bandwidth_Bps"]["point"].as_f64().unwrap();
    assert!(t0 > 0.0 && t0 < 1e-2, "T0 {t0}");
    assert!(bw > 0.0 && bw < 1e13, "B {bw}");
    let net = &r["network"];
    let regimes = net["regimes"].as_array().unwrap();
    assert!(!regimes.is_empty());
    // Regimes cover the sizes in order.
    let mut last_to = 0.0;
    for g in regimes {
        let (from, to) = (
            g["from_bytes"].as_f64().unwrap(),
            g["to_bytes"].as_f64().unwrap(),
        );
        assert!(from > last_to && to >= from, "{regimes:?}");
        last_to = to;
        assert!(g["r_squared"].as_f64().unwrap() <= 1.0);
    }
    assert_eq!(regimes[0]["from_bytes"], 1.0);
    assert_eq!(last_to, (1 << 20) as f64);
    // Both modes' sizes, strictly increasing, 1 B..1 MiB, with a summary each.
    for mode in ["blocking", "nonblocking"] {
        let sizes: Vec<u64> = net["points"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["mode"] == mode)
            .map(|p| {
                let s = &p["one_way_s"];
                assert!(s["ci_lo"].as_f64() <= s["median"].as_f64());
                assert!(s["median"].as_f64() <= s["ci_hi"].as_f64());
                p["bytes"].as_u64().unwrap()
            })
            .collect();
        assert!(sizes.len() >= 21, "{mode}: {sizes:?}");
        assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{mode}: {sizes:?}");
        assert_eq!((sizes[0], *sizes.last().unwrap()), (1, 1 << 20));
    }
    assert_eq!(net["hosts"].as_array().unwrap().len(), 2);
    let f = &net["overlap_fraction"];
    assert!(f["lo"].as_f64().unwrap() >= 0.0 && f["hi"].as_f64().unwrap() <= 1.0);
    // The ping-pong after an evicting sweep: its own regimes over the
    // sizes up to 1 MiB, each figure from its samples.
    let evicted = &r["section"]["evicted"];
    assert!(
        evicted["sweep_bytes"].as_u64().unwrap() >= 2048,
        "{evicted}"
    );
    let sizes: Vec<u64> = evicted["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["bytes"].as_u64().unwrap())
        .collect();
    assert!(sizes.len() >= 21, "{sizes:?}");
    assert_eq!((sizes[0], *sizes.last().unwrap()), (1, 1 << 20));
    assert!(!net["evicted_regimes"].as_array().unwrap().is_empty());
    let table = r["table"].as_str().unwrap();
    assert!(table.contains("headline: T0 = "), "{table}");
    assert!(table.contains("after an evicting sweep of"), "{table}");
}

#[test]
fn pingpong_under_mpirun_reports_regimes() {
    if let Some(r) = two_rank_report(&[]) {
        check_report(&r);
        let name = r["network"]["transport"].as_str().unwrap();
        assert_ne!(name, "tcp");
    }
}

#[test]
fn tcp_transport_gives_a_distinguishable_profile() {
    if let Some(r) = two_rank_report(&["--mca", "btl", "tcp,self"]) {
        check_report(&r);
        assert_eq!(r["network"]["transport"], "tcp");
        let detail = r["section"]["transport"]["detail"].as_str().unwrap();
        assert!(detail.contains("OMPI_MCA_btl=tcp,self"), "{detail}");
    }
}

#[test]
fn single_rank_says_how_to_launch() {
    if !mpirun_on_path() {
        return;
    }
    let _guard = MPI_JOBS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = launch(None, &[], dir.path());
    let lines = results(dir.path());
    assert_eq!(lines.len(), 1, "{}", String::from_utf8_lossy(&out.stderr));
    let e = lines[0]["error"].as_str().unwrap();
    assert!(e.contains("mpirun -np 2 calibrate --only pingpong"), "{e}");
}
