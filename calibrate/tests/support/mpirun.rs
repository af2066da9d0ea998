//! Whether `mpirun` runs, for the MPI tests of `calibrate` and `predict`
//! (each includes this file with `#[path]`).

use std::process::Command;

/// Whether `mpirun` runs. When it does not, the calling test did not run
/// and says so: under `CI=true` it fails; elsewhere it reports itself as
/// skipped, with the reason, on the terminal (past the harness's capture).
pub fn mpirun_on_path() -> bool {
    let found = Command::new("mpirun")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        let test = std::thread::current()
            .name()
            .unwrap_or("an MPI test")
            .to_string();
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "{test} cannot run: mpirun is not on PATH, and under CI=true an MPI test may not be skipped (install Open MPI)"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: did not run, mpirun is not on PATH (install Open MPI to run it)"
        );
    }
    found
}
