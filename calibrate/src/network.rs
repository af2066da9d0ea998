//! `calibrate --only pingpong` under `mpirun -np 2`: the MPI ping-pong
//! ([`crate::pingpong`]) written into the profile's `network` section,
//! `summary.mpi_t0_s`, `summary.mpi_bandwidth_Bps` and `sections.pingpong`.
//! Only rank 0 prints and writes; the other rank stays silent.

use anyhow::Result;
#[cfg(feature = "mpi")]
use models::profile::{Profile, Provenance};

use crate::cli::RunArgs;
use crate::config::UsageError;

/// Runs the ping-pong and updates the profile at `args.out`.
pub fn run(args: &RunArgs) -> Result<()> {
    if args.only.len() > 1 {
        return Err(UsageError::Only(
            "pingpong runs alone, under MPI: `mpirun -np 2 calibrate --only pingpong`".into(),
        )
        .into());
    }
    run_mpi(args)
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_: &RunArgs) -> Result<()> {
    Err(UsageError::Only(
        "this calibrate was built without MPI; rebuild with the default `mpi` feature to run pingpong".into(),
    )
    .into())
}

/// The ping-pong's options: quick or full, with `--max-message` (the
/// overlap message shrinks with it) and `--timeout`.
#[cfg(feature = "mpi")]
fn options(
    args: &RunArgs,
) -> Result<crate::pingpong::PingpongOptions, crate::pingpong::PingpongError> {
    use crate::pingpong::PingpongOptions;
    let mut opts = if args.quick {
        PingpongOptions::quick()
    } else {
        PingpongOptions::default()
    };
    if let Some(m) = args.max_message {
        opts.max_bytes = m;
        opts.overlap_bytes = opts.overlap_bytes.min(m);
    }
    if let Some(t) = args.timeout {
        opts.watchdog_timeout_s = t;
    }
    crate::pingpong::check_options(&opts)?;
    Ok(opts)
}

#[cfg(feature = "mpi")]
fn run_mpi(args: &RunArgs) -> Result<()> {
    use crate::output::OutFile;
    use crate::pingpong::{self, PingpongError, PingpongOutcome};
    use mpi::traits::Communicator;

    // Every rank checks the options alike, before MPI starts.
    let opts = options(args).map_err(|e| UsageError::Only(e.to_string()))?;
    let universe = mpi::initialize().ok_or(PingpongError::MpiInit)?;
    let world = universe.world();
    let leader = world.rank() == 0;
    // Rank 0 checks the target before measuring; a bad path ends the job on
    // every rank (MPI_Abort), so the peer does not wait forever.
    let out = if leader {
        match OutFile::prepare(&args.out) {
            Ok(o) => Some(o),
            Err(e) => {
                eprintln!("error: {e}");
                world.abort(2);
            }
        }
    } else {
        None
    };
    let report = match pingpong::run_on(&world, &opts) {
        Ok(PingpongOutcome::Report(r)) => r,
        Ok(PingpongOutcome::Peer) => return Ok(()),
        Err(e @ PingpongError::SingleRank(_)) => return Err(UsageError::Only(e.to_string()).into()),
        Err(e) => return Err(e.into()),
    };
    let Some(out) = out else { return Ok(()) };
    let mut newer = Profile::new(Provenance::default());
    report.apply_to(&mut newer);
    let profile = match out.existing() {
        Ok(Some(mut old)) => {
            // Keep the node's provenance; record this run in its notes.
            let mut provenance = old.provenance.clone();
            provenance.notes.retain(|n| !n.starts_with("[pingpong]"));
            provenance.notes.extend(
                report
                    .warnings
                    .iter()
                    .map(|w| format!("[pingpong] warning: {w}")),
            );
            newer.provenance = provenance;
            old.merge_from(newer);
            old
        }
        _ => {
            newer.provenance.notes = report
                .warnings
                .iter()
                .map(|w| format!("[pingpong] warning: {w}"))
                .collect();
            newer.provenance.tool_version = env!("CARGO_PKG_VERSION").into();
            newer.provenance.command = std::env::args().collect::<Vec<_>>().join(" ");
            newer
        }
    };
    out.write(&profile.to_json())?;
    if args.json {
        eprint!("{report}");
        println!("{}", profile.to_json());
    } else {
        print!("{report}");
        println!("Profile written to {}", out.path().display());
    }
    Ok(())
}
