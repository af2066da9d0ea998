//! `predict run --kernel ghost-stencil`: the ghost-row MPI stencil,
//! measured and predicted side by side in the records of [`record`].
//!
//! ```text
//! mpirun -np P predict run --kernel ghost-stencil --n N --iters I
//!     [--variant blocking|nonblocking|2d|all] [--check-every K] [--tol X]
//!     [--profile FILE] [--json] [--csv FILE] [--verify] [--timeout SECONDS]
//! ```
//!
//! Rank 0 prints a table (or, with `--json`, an array of [`record::Record`]s),
//! writes `--csv` atomically and appends the records to
//! `data/measurements/records.jsonl` (`--measurements DIR`, `--no-record`);
//! the other ranks print nothing. The
//! default profile is `data/profile.json`; without it the kernel still runs
//! and the table says how to make one. Bad input gets one line from rank 0
//! and exit status 2 on every rank.

pub mod budget;
pub mod report;
pub mod threads;

#[cfg(feature = "mpi")]
mod ghost;

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use models::profile::Profile;

use crate::args::number;

pub use crate::profiles::{DEFAULT_MEASUREMENTS, DEFAULT_PROFILE};

/// A kernel `predict run` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelName {
    /// Ghost-row Jacobi stencil across MPI ranks (§3.1), three variants.
    GhostStencil,
}

/// `--variant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VariantChoice {
    /// (a) Blocking send/recv, odd/even ordering, 1D rows.
    Blocking,
    /// (b) Isend/Irecv overlapped with the inner rows, 1D rows.
    Nonblocking,
    /// (c) Non-blocking on a px × py process grid.
    #[value(name = "2d")]
    TwoD,
    /// All three.
    All,
}

/// Options of `predict run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Kernels to run (repeat the flag for several; default: all).
    #[arg(long, value_enum)]
    pub kernel: Vec<KernelName>,
    /// Grid side N of the ghost stencil [default: 2048].
    #[arg(long = "n", visible_alias = "size", value_name = "N", value_parser = number)]
    pub n: Option<f64>,
    /// Sweeps of the stencil [default: 200].
    #[arg(long, value_name = "I", value_parser = number)]
    pub iters: Option<f64>,
    /// Which exchange variants to run.
    #[arg(long, value_enum, default_value = "all")]
    pub variant: VariantChoice,
    /// Reduce the residual max |u' - u| over all ranks every K sweeps.
    #[arg(long, value_name = "K", value_parser = number, default_value = "10")]
    pub check_every: f64,
    /// Stop when the residual is at most TOL at a check.
    #[arg(long, value_name = "TOL", value_parser = number)]
    pub tol: Option<f64>,
    /// Machine profile for the predictions, a file or a name under
    /// data/profiles/ [default: data/profile.json].
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Print the records as one JSON array instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the records to FILE as CSV (atomically).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Gather the grid on rank 0 and compare it with the serial reference
    /// bit for bit (`verified` in the records).
    #[arg(long)]
    pub verify: bool,
    /// Seconds without progress after which the MPI job is aborted (0: never).
    #[arg(long, value_name = "SECONDS", value_parser = number, default_value = "120")]
    pub timeout: f64,
    /// Folder whose `records.jsonl` the records are appended to.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_MEASUREMENTS)]
    pub measurements: PathBuf,
    /// Do not append the records to the measurements folder.
    #[arg(long)]
    pub no_record: bool,
}

/// The profile a run predicts from, or why there is none.
#[derive(Debug, Clone)]
pub enum ProfileSource {
    Loaded {
        profile: Box<Profile>,
        /// Where it was read from (a path, or `built-in NAME`).
        label: String,
    },
    Absent {
        note: String,
    },
}

/// Reads `--profile FILE|NAME`, or the default profile when it exists.
///
/// # Errors
/// [`BadInput`] when a named profile cannot be found, and the profile's own
/// errors (malformed, another schema version), all exit 2.
pub fn load_profile(explicit: Option<&Path>) -> anyhow::Result<ProfileSource> {
    Ok(match crate::profiles::load_or_default(explicit)? {
        Some((profile, found)) => ProfileSource::Loaded {
            profile: Box::new(profile),
            label: found.label,
        },
        None => ProfileSource::Absent {
            note: format!(
                "{}; without one the kernels run with no predictions",
                crate::profiles::no_default_profile()
            ),
        },
    })
}

/// Runs the kernels `args` selects, writing the report to `out`.
pub fn execute(args: &RunArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let kernels = if args.kernel.is_empty() {
        vec![KernelName::GhostStencil]
    } else {
        args.kernel.clone()
    };
    for k in kernels {
        match k {
            KernelName::GhostStencil => ghost_stencil(args, out)?,
        }
    }
    Ok(())
}

#[cfg(feature = "mpi")]
fn ghost_stencil(args: &RunArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    ghost::run(args, out)
}

#[cfg(not(feature = "mpi"))]
fn ghost_stencil(_: &RunArgs, _: &mut dyn std::io::Write) -> anyhow::Result<()> {
    Err(crate::error::BadInput(
        "the ghost-stencil kernel needs MPI, and this predict was built without it; rebuild with the default `mpi` feature".into(),
    )
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_default_profile_is_a_note_but_a_named_one_an_error() {
        // The tests run in predict/, which has no data/profile.json.
        if !Path::new(DEFAULT_PROFILE).exists() {
            match load_profile(None).unwrap() {
                ProfileSource::Absent { note } => assert!(note.contains("calibrate"), "{note}"),
                ProfileSource::Loaded { .. } => panic!("no default profile here"),
            }
        }
        let e = load_profile(Some(Path::new("/no/such/profile.json"))).unwrap_err();
        assert_eq!(crate::exit_code(&e), 2);
        assert!(e.to_string().contains("no such file"), "{e}");
    }

    #[test]
    fn only_ghost_stencil_runs_are_routed_to_the_mpi_path() {
        let route = |a: &[&str]| -> Vec<String> {
            let v = a.iter().map(std::ffi::OsString::from).collect();
            crate::cli::route_mpi_kernels(v)
                .into_iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        };
        let to_mpi = route(&["predict", "run", "--kernel", "ghost-stencil", "--n", "64"]);
        assert_eq!(to_mpi[1], "run-ghost-stencil");
        assert_eq!(
            route(&["predict", "run", "--kernel=ghost-stencil"])[1],
            "run-ghost-stencil"
        );
        let mixed = [
            "predict",
            "run",
            "--kernel",
            "fusion",
            "--kernel",
            "ghost-stencil",
        ];
        assert_eq!(route(&mixed)[1], "run");
        assert_eq!(route(&["predict", "run"])[1], "run");
        assert_eq!(
            route(&["predict", "eval", "--kernel", "ghost-stencil"])[1],
            "eval"
        );
        assert_eq!(route(&["predict"]).len(), 1);
    }

    #[test]
    fn malformed_profiles_exit_2() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.json");
        std::fs::write(&p, "{\"schema_version\": 999}").unwrap();
        let e = load_profile(Some(&p)).unwrap_err();
        assert_eq!(crate::exit_code(&e), 2);
    }
}
