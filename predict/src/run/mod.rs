//! `predict run`: real kernels measured on this machine next to the
//! model's prediction from the machine profile.
//!
//! ```text
//! predict run [--profile FILE|NAME] [--kernel NAME]... [--threads N] [--size S]
//!     [--max-memory BYTES] [--json] [--csv FILE] [--explain] [--quick]
//! mpirun -np P predict run --kernel ghost-stencil --n N --iters I
//!     [--variant blocking|nonblocking|2d|all] [--check-every K] [--tol X]
//!     [--profile FILE] [--json] [--csv FILE] [--verify] [--timeout SECONDS]
//! ```
//!
//! One [`RunArgs`] serves both kinds of kernel. The thread kernels
//! ([`crate::kernels::KERNELS`], run by [`threads`]) run on pinned threads
//! and are assessed and reported by [`report`]; the ghost-row MPI stencil
//! (`ghost`) runs across the ranks of `mpirun`: rank 0 prints the table
//! and the others nothing. Both write the same records
//! ([`crate::record`]): `--json` prints them, `--csv` writes them
//! atomically, and they are appended to `data/measurements/records.jsonl`
//! (`--measurements DIR`, `--no-record`). The default profile is
//! `data/profile.json`; without it the kernels still run and the report
//! says how to make one. Bad input gets one line (from rank 0 under MPI)
//! and exit status 2.

pub mod budget;
pub mod report;
pub mod threads;

#[cfg(feature = "mpi")]
mod ghost;

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use models::profile::Profile;

use crate::args::number;
use crate::error::BadInput;

pub use crate::profiles::{DEFAULT_MEASUREMENTS, DEFAULT_PROFILE};

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

/// Options of `predict run`, for the thread kernels and the MPI stencil
/// alike; each kind refuses the options of the other.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Kernels to run (repeat the flag): fusion, stencil, false-sharing,
    /// binning, matmul (all of these when absent), or ghost-stencil alone,
    /// under mpirun.
    #[arg(long = "kernel", value_name = "NAME")]
    pub kernels: Vec<String>,
    /// Machine profile for the predictions, a file or a name under
    /// data/profiles/ such as `textbook` [default: data/profile.json].
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Print the records as one JSON array instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the records to FILE as CSV (atomically).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Folder whose `records.jsonl` the records are appended to.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_MEASUREMENTS)]
    pub measurements: PathBuf,
    /// Do not append the records to the measurements folder.
    #[arg(long, conflicts_with = "measurements")]
    pub no_record: bool,
    /// Size parameter, per kernel: fusion elements per array, stencil row
    /// width, false-sharing increments per thread, binning particles,
    /// matmul n; the ghost stencil's grid side (as --n).
    #[arg(long, value_parser = number)]
    pub size: Option<f64>,
    /// Thread kernels: threads of the all-core runs (default: every
    /// allowed CPU).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Thread kernels: memory the arrays may take, e.g. 4GiB [default: a
    /// quarter of the RAM, as `calibrate`]; a --size that needs more is
    /// refused.
    #[arg(long, value_parser = crate::args::bytes)]
    pub max_memory: Option<f64>,
    /// Thread kernels: show each prediction's formula and values.
    #[arg(long)]
    pub explain: bool,
    /// Thread kernels: fewer repetitions (for tests and quick looks).
    #[arg(long)]
    pub quick: bool,
    /// Ghost stencil: grid side N [default: 2048].
    #[arg(long = "n", value_name = "N", value_parser = number)]
    pub n: Option<f64>,
    /// Ghost stencil: sweeps of each variant [default: about a second of
    /// them at the warm-up's pace, at least 100].
    #[arg(long, value_name = "I", value_parser = number)]
    pub iters: Option<f64>,
    /// Ghost stencil: which exchange variants to run [default: all].
    #[arg(long, value_enum)]
    pub variant: Option<VariantChoice>,
    /// Ghost stencil: reduce the residual max |u' - u| over all ranks
    /// every K sweeps [default: 10].
    #[arg(long, value_name = "K", value_parser = number)]
    pub check_every: Option<f64>,
    /// Ghost stencil: stop when the residual is at most TOL at a check.
    #[arg(long, value_name = "TOL", value_parser = number)]
    pub tol: Option<f64>,
    /// Ghost stencil: gather the grid on rank 0 and compare it with the
    /// serial reference bit for bit (`verified` in the records).
    #[arg(long)]
    pub verify: bool,
    /// Ghost stencil: seconds without progress after which the MPI job is
    /// aborted (0: never), e.g. 30s [default: 120].
    #[arg(long, value_name = "SECONDS", value_parser = calibrate::harness::parse_seconds)]
    pub timeout: Option<f64>,
}

/// The kernel that runs under `mpirun`.
pub const GHOST_STENCIL: &str = "ghost-stencil";

impl RunArgs {
    /// Whether the run is the MPI stencil's: `--kernel ghost-stencil` and
    /// no other kernel.
    pub fn is_ghost_stencil(&self) -> bool {
        !self.kernels.is_empty() && self.kernels.iter().all(|k| k == GHOST_STENCIL)
    }

    /// The options given that belong to the other kind of kernel: the
    /// thread kernels' for the ghost stencil, the stencil's otherwise.
    pub fn foreign_options(&self) -> Vec<&'static str> {
        let given = if self.is_ghost_stencil() {
            [
                ("--threads", self.threads.is_some()),
                ("--max-memory", self.max_memory.is_some()),
                ("--explain", self.explain),
                ("--quick", self.quick),
            ]
            .to_vec()
        } else {
            [
                ("--n", self.n.is_some()),
                ("--iters", self.iters.is_some()),
                ("--variant", self.variant.is_some()),
                ("--check-every", self.check_every.is_some()),
                ("--tol", self.tol.is_some()),
                ("--verify", self.verify),
                ("--timeout", self.timeout.is_some()),
            ]
            .to_vec()
        };
        given.into_iter().filter(|g| g.1).map(|g| g.0).collect()
    }

    /// [`BadInput`] naming the options of the other kind of kernel, if any.
    pub fn refuse_foreign(&self) -> Result<(), BadInput> {
        let foreign = self.foreign_options();
        if foreign.is_empty() {
            return Ok(());
        }
        let (whose, kind) = if self.is_ghost_stencil() {
            ("the thread kernels'", "ghost-stencil")
        } else {
            ("ghost-stencil's", "the thread kernels")
        };
        Err(BadInput(format!(
            "{} {} {whose}, not for {kind}",
            foreign.join(", "),
            if foreign.len() == 1 { "is" } else { "are" }
        )))
    }
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

impl ProfileSource {
    /// The profile, when one was read.
    pub fn loaded(&self) -> Option<&Profile> {
        match self {
            ProfileSource::Loaded { profile, .. } => Some(profile),
            ProfileSource::Absent { .. } => None,
        }
    }
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

/// Runs the kernels `args` selects: the MPI stencil, or the thread
/// kernels ([`threads::run`]), writing the report to `out`.
pub fn execute(args: &RunArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    if args.is_ghost_stencil() {
        ghost_stencil(args, out)
    } else {
        threads::run(args, out)
    }
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
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("no such file"), "{e}");
    }

    #[test]
    fn each_kind_of_kernel_refuses_the_others_options() {
        use clap::Parser as _;
        let parse = |a: &[&str]| match crate::cli::Cli::try_parse_from(a).unwrap().command {
            crate::cli::Command::Run(r) => r,
            _ => unreachable!(),
        };
        let ghost = parse(&["predict", "run", "--kernel", "ghost-stencil", "--n", "64"]);
        assert!(ghost.is_ghost_stencil());
        assert!(ghost.refuse_foreign().is_ok());
        let ghost = parse(&["predict", "run", "--kernel=ghost-stencil", "--quick"]);
        let e = ghost.refuse_foreign().unwrap_err();
        assert_eq!(e.0, "--quick is the thread kernels', not for ghost-stencil");
        let mixed = parse(&[
            "predict",
            "run",
            "--kernel",
            "fusion",
            "--kernel",
            "ghost-stencil",
        ]);
        assert!(!mixed.is_ghost_stencil());
        let threads = parse(&["predict", "run", "--iters", "3", "--verify"]);
        assert!(!threads.is_ghost_stencil());
        let e = threads.refuse_foreign().unwrap_err();
        assert!(
            e.0.starts_with("--iters, --verify are ghost-stencil's"),
            "{e}"
        );
    }

    #[test]
    fn malformed_profiles_exit_2() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.json");
        std::fs::write(&p, "{\"schema_version\": 999}").unwrap();
        let e = load_profile(Some(&p)).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
    }
}
