//! MPI ping-pong: the network's start-up time T0 and bandwidth B per
//! protocol regime, and how much of a message non-blocking posting can hide
//! (lecture §2.2, §4.1). Needs the `mpi` feature.
//!
//! ```text
//! mpirun -np 2 calibrate --only pingpong                      # this host
//! mpirun -np 2 --mca btl tcp,self calibrate --only pingpong   # TCP over loopback
//! mpirun -np 2 --host a,b calibrate --only pingpong           # two nodes
//! ```
//!
//! # Method
//!
//! Ranks 0 and 1 bounce a message of n bytes ([`measure`]): after a
//! discarded warm-up at 8 B and 64 KiB, 1 B to 16 MiB in powers of two,
//! first with blocking `MPI_Send`/`MPI_Recv`, then with
//! `MPI_Isend`/`MPI_Irecv`. Each size gets a doubling warm-up that also
//! sizes the batch so that one sample lasts at least `min_sample_s` (1 ms),
//! then `samples` (30) samples; a sample's one-way time is its elapsed
//! time / (2·round trips), and the size's figure is the median of the
//! samples with the distribution-free 95% interval (`models::stats`).
//!
//! Each mode's one-way times are fitted with T(n) = T0 + n/B per protocol
//! regime ([`regimes`]: segmented least squares, relative weights 1/t²).
//! The gaps around the breakpoints of that first fit get quarter-octave
//! sizes ([`sizes`]), which are measured too, and the final fit uses all
//! points. The headline pair is the blocking small-message T0 (first
//! regime) and large-message B (last regime); they go to
//! `summary.mpi_t0_s` and `summary.mpi_bandwidth_Bps`.
//!
//! The blocking ping-pong is measured once more at every size up to
//! 1 MiB with each round trip after an evicting sweep ([`evicted`]): both
//! ranks write twice their largest private cache first, as a stencil's
//! sweep does before it exchanges its edge rows. Its regimes go to
//! `network.evicted_regimes`.
//!
//! The overlap ([`overlap`]) is measured on a 4 MiB exchange against a
//! computation of about the same length: f = (t_comm + t_comp − t_total) /
//! t_comm, the share of the message's time that the computation hid.
//! Finally 8 B and 1 MiB are measured again ([`drift`]): a change of more
//! than 10% since the first pass means the machine's load changed during
//! the sweep, and the report says so.
//!
//! The transport ([`transport`]) is read from the launch (`--mca btl
//! tcp,self` reaches the ranks as `OMPI_MCA_btl`) and the two ranks' host
//! names, so a TCP run gives a network profile that says `tcp`.
//!
//! # Ranks and failures
//!
//! Only rank 0 returns a report ([`PingpongOutcome::Report`]); rank 1 and
//! any ranks beyond it return [`PingpongOutcome::Peer`] and should print
//! nothing. A single rank gets [`PingpongError::SingleRank`], which says how
//! to launch. A peer that stops answering is caught by a [`watchdog`]: after
//! `timeout` (default 120 s) without progress the job is aborted with
//! `MPI_Abort` and exit status 124.

pub mod drift;
pub mod evicted;
pub mod measure;
pub mod overlap;
pub mod regimes;
pub mod report;
pub mod sizes;
pub mod transport;
pub mod watchdog;

use std::time::Duration;

use models::fit::FitError;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use thiserror::Error;

pub use measure::{Mode, SizePoint};
pub use overlap::OverlapResult;
pub use regimes::RegimeFit;
pub use report::{ModeResult, PingpongReport};
pub use transport::Transport;
use watchdog::Watchdog;

/// Largest message: MPI counts are C `int`s.
const MAX_MESSAGE_BYTES: u64 = i32::MAX as u64;

/// Why the ping-pong could not run or could not be fitted.
#[derive(Debug, Error)]
pub enum PingpongError {
    /// Started with one rank.
    #[error("the ping-pong needs 2 MPI ranks but this run has {0}; launch it as `mpirun -np 2 calibrate --only pingpong` (add `--host a,b` to measure between two nodes)")]
    SingleRank(i32),
    /// `run` could not initialise MPI.
    #[error("MPI is already initialised (or finalised) in this process; call `pingpong::run_on` with the existing world communicator")]
    MpiInit,
    /// An option out of range.
    #[error("invalid ping-pong option: {0}")]
    Option(String),
    /// A mode's times could not be fitted.
    #[error("fitting the {mode} ping-pong times failed: {source}")]
    Fit {
        mode: &'static str,
        #[source]
        source: FitError,
    },
    /// The fit gave no usable headline figure.
    #[error("the ping-pong fit is not usable: {0}")]
    Degenerate(String),
}

/// What a rank gets back from [`run`].
#[derive(Debug)]
pub enum PingpongOutcome {
    /// Rank 0: the results, to print and to write into the profile.
    Report(Box<PingpongReport>),
    /// Any other rank: nothing to print.
    Peer,
}

/// Options of the ping-pong: the record the profile keeps, with the full
/// sweep as its default and [`PingpongOptions::quick`].
pub use models::profile::pingpong::PingpongOptions;

/// Checks every option.
pub fn check_options(opts: &PingpongOptions) -> Result<(), PingpongError> {
    let bad = |s: String| Err(PingpongError::Option(s));
    if !(4..=MAX_MESSAGE_BYTES).contains(&opts.max_bytes) {
        return bad(format!(
            "the largest message is {} B; give 4 B..{MAX_MESSAGE_BYTES} B (at least three sizes are needed for a fit)",
            opts.max_bytes
        ));
    }
    if !(opts.min_sample_s.is_finite() && opts.min_sample_s > 0.0) {
        return bad(format!(
            "the sample duration is {} s; give a positive time",
            opts.min_sample_s
        ));
    }
    if opts.samples < 2 {
        return bad(format!(
            "{} samples per size; at least 2 are needed for an interval",
            opts.samples
        ));
    }
    if opts.overlap_bytes > opts.max_bytes {
        return bad(format!(
            "the overlap message ({} B) is larger than the largest message ({} B)",
            opts.overlap_bytes, opts.max_bytes
        ));
    }
    if opts.overlap_bytes > 0 && opts.overlap_triples < 2 {
        return bad(format!(
            "{} overlap triples; at least 2 are needed for an interval",
            opts.overlap_triples
        ));
    }
    if opts.max_regimes == 0 {
        return bad("at most 0 regimes; allow at least 1".into());
    }
    Ok(())
}

/// Initialises MPI, runs the ping-pong on `MPI_COMM_WORLD` and finalises MPI
/// again (so it can run only once per process; use [`run_on`] when the
/// caller owns MPI).
///
/// # Errors
/// See [`run_on`]; [`PingpongError::MpiInit`] when MPI was already
/// initialised.
pub fn run(opts: &PingpongOptions) -> Result<PingpongOutcome, PingpongError> {
    let universe = mpi::initialize().ok_or(PingpongError::MpiInit)?;
    run_on(&universe.world(), opts)
}

/// Runs the ping-pong between ranks 0 and 1 of `world`; ranks beyond 1 wait
/// at a final barrier.
///
/// # Errors
/// [`PingpongError::SingleRank`] with fewer than two ranks (on every rank),
/// [`PingpongError::Option`] for bad options, and on rank 0 the fit errors.
pub fn run_on(
    world: &SimpleCommunicator,
    opts: &PingpongOptions,
) -> Result<PingpongOutcome, PingpongError> {
    check_options(opts)?;
    if world.size() < 2 {
        return Err(PingpongError::SingleRank(world.size()));
    }
    let rank = world.rank();
    let color = if rank < 2 {
        Color::with_value(0)
    } else {
        Color::undefined()
    };
    let result = match world.split_by_color(color) {
        None => Ok(PingpongOutcome::Peer),
        Some(comm) => {
            let wd = Watchdog::arm(
                Duration::from_secs_f64(opts.watchdog_timeout_s),
                &format!("pingpong rank {rank}"),
            );
            let mut pair = measure::Pair::new(&comm, opts.max_bytes);
            if pair.leader {
                lead(&mut pair, opts, &wd).map(|r| PingpongOutcome::Report(Box::new(r)))
            } else {
                pair.hosts();
                pair.follow(&wd);
                Ok(PingpongOutcome::Peer)
            }
        }
    };
    world.barrier();
    result
}

/// One figure for benchmark scripts: `samples` samples of `reps` round
/// trips of `bytes` bytes after `warmup` round trips, with no size
/// search, exactly like `scripts/pingpong.c`. The one-way time of each
/// sample on rank 0; `None` on the other ranks.
///
/// # Errors
/// [`PingpongError::SingleRank`] and [`PingpongError::Option`].
pub fn measure_point(
    world: &SimpleCommunicator,
    mode: Mode,
    bytes: u64,
    reps: u64,
    samples: u64,
    warmup: u64,
    timeout: Duration,
) -> Result<Option<Vec<f64>>, PingpongError> {
    if world.size() < 2 {
        return Err(PingpongError::SingleRank(world.size()));
    }
    if bytes > MAX_MESSAGE_BYTES || reps == 0 || samples < 2 {
        return Err(PingpongError::Option(format!(
            "{bytes} B, {reps} round trips, {samples} samples: give at most {MAX_MESSAGE_BYTES} B, at least 1 round trip and 2 samples"
        )));
    }
    let rank = world.rank();
    let color = if rank < 2 {
        Color::with_value(0)
    } else {
        Color::undefined()
    };
    let out = world.split_by_color(color).map(|comm| {
        let wd = Watchdog::arm(timeout, &format!("pingpong rank {rank}"));
        wd.step(format!("{} ping-pong of {bytes} B", mode.name()));
        let mut pair = measure::Pair::new(&comm, bytes);
        let v = measure::fixed_plan(&mut pair, mode, bytes, reps, samples, warmup, &wd);
        pair.leader.then_some(v)
    });
    world.barrier();
    Ok(out.flatten())
}

/// Rank 0: the sweep, the refinement, the overlap, then the fits.
fn lead(
    pair: &mut measure::Pair<'_>,
    opts: &PingpongOptions,
    wd: &Watchdog,
) -> Result<PingpongReport, PingpongError> {
    let hosts = pair.hosts();
    let library = mpi::environment::library_version().unwrap_or_default();
    let transport = transport::describe(&library, &hosts, |k| std::env::var(k).ok());

    // A sweep's first sizes ran slow (cores ramping up, pages and
    // connections set up) until both protocols had been exercised once.
    for b in [8, 64 << 10] {
        pair.measure_size(Mode::Blocking, b.min(opts.max_bytes), opts, wd);
    }
    let base = sizes::powers_of_two(opts.max_bytes);
    let mut points: Vec<Vec<SizePoint>> = Mode::ALL
        .iter()
        .map(|&mode| {
            base.iter()
                .map(|&b| pair.measure_size(mode, b, opts, wd))
                .collect()
        })
        .collect();

    // Denser sizes where the first fits of either mode put a breakpoint.
    let mut breakpoints = Vec::new();
    for p in &points {
        if let Ok(f) = report::fit_points(p, opts.max_regimes) {
            breakpoints.extend(f.breakpoints_bytes);
        }
    }
    let per_gap = if opts.quick { 1 } else { 3 };
    let extra = sizes::refine(&breakpoints, &base, per_gap);
    for (mode, p) in Mode::ALL.iter().zip(points.iter_mut()) {
        for &b in &extra {
            p.push(pair.measure_size(*mode, b, opts, wd));
        }
        p.sort_by_key(|s| s.bytes);
    }

    // The sizes both modes were measured at, sorted.
    let sizes: Vec<u64> = points[0].iter().map(|p| p.bytes).collect();
    let evicted_points =
        evicted::measure(pair, &evicted::sizes_of(&sizes), opts.samples as u64, wd);

    let overlap = (opts.overlap_bytes > 0)
        .then(|| overlap::measure(pair, opts.overlap_bytes, opts.overlap_triples as u64, wd));
    let drift = drift::check(pair, &points[0], opts, wd);
    pair.finish();

    let nonblocking = points.pop().expect("two modes");
    let blocking = points.pop().expect("two modes");
    report::PingpongReport::new(
        transport,
        hosts,
        ModeResult::new(Mode::Blocking, blocking, opts.max_regimes)?,
        ModeResult::new(Mode::Nonblocking, nonblocking, opts.max_regimes)?,
        overlap,
        drift,
        opts.clone(),
    )
    .map(|r| r.with_evicted(evicted::sweep_bytes(), evicted_points))
}
