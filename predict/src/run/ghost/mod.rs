//! The ghost-stencil kernel of `predict run`: checks the options, agrees
//! across ranks on whether to go on, runs the variants, predicts them, and
//! reports on rank 0.

mod report;
mod table;

use std::fmt;
use std::io::Write;
use std::time::Duration;

use anyhow::anyhow;
use models::stats::{Sample, Summary};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::{load_profile, ProfileSource, RunArgs, VariantChoice};
use crate::error::BadInput;
use crate::kernels::paired::{Paired, SpanTarget, StreamTarget};
use crate::mpi_stencil::driver::{
    host_names, max_ranks_per_host, run_variant, verify_runs, RunConfig, VariantRun,
};
use crate::mpi_stencil::grid::ELEM_BYTES;
use crate::mpi_stencil::layout::{check_size, ProcessGrid};
use crate::mpi_stencil::model::{self, Setup};
use crate::mpi_stencil::probe::Probe;
use crate::mpi_stencil::warm_up::{sweeps_at, warm_up, MIN_SWEEPS};
use crate::mpi_stencil::Variant;
use calibrate::harness::atomic::AtomicFile;
use calibrate::harness::kernels::stream::Kernel;
use calibrate::harness::kernels::Isa;
use calibrate::harness::watchdog::Watchdog;
use models::profile::Profile;

const KERNEL: &str = super::GHOST_STENCIL;
const DEFAULT_N: f64 = 2048.0;
const DEFAULT_CHECK_EVERY: f64 = 10.0;
/// Largest accepted grid side (2¹⁶: 32 GiB per array).
const MAX_N: f64 = 65536.0;

/// Rank 0 stopped before the work, with this status, and says why.
#[derive(Debug)]
struct PeerStopped(i32);

impl fmt::Display for PeerStopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank 0 stopped with status {}", self.0)
    }
}

impl std::error::Error for PeerStopped {}

/// Options after their checks.
#[derive(Debug, Clone)]
struct Checked {
    /// The run; without `--iters` its sweep count is set after the
    /// warm-up ([`sweeps_at`]).
    cfg: RunConfig,
    /// `--iters`.
    iters: Option<usize>,
    variants: Vec<Variant>,
    timeout: Duration,
}

fn whole(flag: &str, v: f64, min: f64, max: f64) -> Result<usize, BadInput> {
    if v.is_finite() && v.fract() == 0.0 && v >= min && v <= max {
        Ok(v as usize)
    } else {
        Err(BadInput(format!(
            "--{flag} must be a whole number from {min} to {max}, got {v}"
        )))
    }
}

/// The same checks on every rank, so every rank stops alike.
fn check(args: &RunArgs, p: usize) -> Result<Checked, BadInput> {
    args.refuse_foreign()?;
    let (n, flag) = match (args.n, args.size) {
        (Some(_), Some(_)) => return Err(BadInput("give --n or --size, not both".into())),
        (None, Some(s)) => (s, "size"),
        (n, None) => (n.unwrap_or(DEFAULT_N), "n"),
    };
    let n = whole(flag, n, 1.0, MAX_N)?;
    let iters = args
        .iters
        .map(|i| whole("iters", i, 2.0, 1e9))
        .transpose()
        .map_err(|e| {
            BadInput(format!(
                "{} (the time per sweep is a sample of sweeps)",
                e.0
            ))
        })?;
    let check_every = whole(
        "check-every",
        args.check_every.unwrap_or(DEFAULT_CHECK_EVERY),
        1.0,
        1e9,
    )?;
    if let Some(t) = args.tol {
        if !(t.is_finite() && t >= 0.0) {
            return Err(BadInput(format!("--tol must be a number >= 0, got {t}")));
        }
    }
    // The value parser keeps a given --timeout within 0 to 10^6 s.
    let timeout = args
        .timeout
        .unwrap_or(models::profile::pingpong::DEFAULT_WATCHDOG_S);
    let variants = match args.variant.unwrap_or(VariantChoice::All) {
        VariantChoice::Blocking => vec![Variant::Blocking],
        VariantChoice::Nonblocking => vec![Variant::Nonblocking],
        VariantChoice::TwoD => vec![Variant::TwoD],
        VariantChoice::All => Variant::ALL.to_vec(),
    };
    for v in &variants {
        check_size(n, v.grid(p)).map_err(|e| BadInput(e.to_string()))?;
    }
    Ok(Checked {
        cfg: RunConfig {
            n,
            iters: iters.unwrap_or(MIN_SWEEPS),
            check_every,
            tol: args.tol,
            verify: args.verify,
        },
        iters,
        variants,
        timeout: Duration::from_secs_f64(timeout),
    })
}

/// What rank 0 readies before the work.
struct Prepared {
    profile: ProfileSource,
    csv: Option<AtomicFile>,
}

fn prepare(args: &RunArgs) -> anyhow::Result<Prepared> {
    if !args.no_record {
        crate::record::check_folder(&args.measurements)?;
    }
    let profile = load_profile(args.profile.as_deref())?;
    let csv =
        match &args.csv {
            Some(path) => Some(AtomicFile::create_all(path).map_err(|e| {
                BadInput(format!("cannot write the CSV file {}: {e}", path.display()))
            })?),
            None => None,
        };
    Ok(Prepared { profile, csv })
}

/// Initialises MPI, runs, finalises. Rank 0 returns the outcome. Another
/// rank returns `Ok`; on a failure that rank 0 reports itself (bad input,
/// which every rank detects alike, or rank 0's own stop) it exits quietly
/// with status 0, so that `mpirun` does not abort the job before rank 0 has
/// printed its line and the job's status is rank 0's. On any other failure
/// it says why and exits with the failure's status.
pub fn run(args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let universe = mpi::initialize()
        .ok_or_else(|| anyhow!("MPI could not be initialised: it already was in this process"))?;
    let world = universe.world();
    let rank = world.rank();
    let result = run_on(&world, args, out);
    drop(universe);
    match result {
        Err(e) if rank != 0 => {
            if e.is::<PeerStopped>() || e.is::<BadInput>() {
                std::process::exit(0)
            }
            eprintln!("error: rank {rank}: {e:#}");
            std::process::exit(crate::error::exit_code(&e))
        }
        r => r,
    }
}

fn run_on(world: &SimpleCommunicator, args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let p = world.size() as usize;
    let rank = world.rank();
    let mut checked = check(args, p)?;
    let prep = (rank == 0).then(|| prepare(args));
    let mut code: i32 = match &prep {
        Some(Err(e)) => crate::error::exit_code(e),
        _ => 0,
    };
    world.process_at_rank(0).broadcast_into(&mut code);
    let prep = match prep {
        Some(Err(e)) => return Err(e),
        _ if code != 0 => return Err(PeerStopped(code).into()),
        Some(Ok(prep)) => Some(prep),
        None => None,
    };

    let hosts = host_names(world);
    let ranks_per_host = max_ranks_per_host(&hosts);
    let wd = Watchdog::arm(checked.timeout, &format!("predict run rank {rank}"));
    let profile = prep.as_ref().and_then(|p| p.profile.loaded());
    wd.step(format!(
        "warming up with the {} variant",
        checked.variants[0].name()
    ));
    let warm = warm_up(world, checked.variants[0], checked.cfg.n);
    checked.cfg.iters = checked.iters.unwrap_or_else(|| sweeps_at(warm.sweep_s));
    let mut runs: Vec<VariantRun> = Vec::new();
    let mut pairs: Vec<Option<Paired>> = Vec::new();
    for &v in &checked.variants {
        let s = setup(&checked, v.grid(p), v, ranks_per_host);
        wd.step(format!(
            "readying the re-measure of the {} variant",
            v.name()
        ));
        let mut pair = Pair::ready(world, profile, &s);
        world.barrier();
        runs.push(run_variant(world, v, &checked.cfg, &mut pair.probes, &wd));
        pairs.push(pair.drifts(world, &s));
    }
    drop(wd);
    if rank == 0 && checked.cfg.verify {
        verify_runs(&mut runs, checked.cfg.n, checked.cfg.check_every);
    }
    match prep {
        Some(prep) => {
            let ctx = report::Context::new(&checked, warm, p, &hosts, ranks_per_host, prep.profile);
            report::report(args, &ctx, &runs, &pairs, prep.csv, out)
        }
        None => Ok(()),
    }
}

/// The model's view of a run of `variant` on `grid`.
fn setup(checked: &Checked, grid: ProcessGrid, variant: Variant, ranks_per_host: usize) -> Setup {
    Setup {
        n: checked.cfg.n,
        grid,
        variant,
        ranks_per_host,
    }
}

/// The paired re-measure of a variant ([`Probe`]): the profile's STREAM
/// points that the sweep's memory time and its reused loads lean on,
/// `[memory, loads]`, and the Horner point its chains lean on, as rank 0
/// picks them (`profile` is rank 0's), and their probes, readied on every
/// rank, `[memory, loads, span]`. A probe is absent on every rank without
/// its point or when a rank could not allocate its working set.
struct Pair {
    targets: [Option<StreamTarget>; 2],
    span: Option<SpanTarget>,
    probes: [Option<Probe>; 3],
}

impl Pair {
    /// Picks the points and readies the probes (a collective).
    fn ready(world: &SimpleCommunicator, profile: Option<&Profile>, s: &Setup) -> Self {
        let ranks = s.ranks_per_host.max(1);
        let work = profile.and_then(|p| Some((p, model::sweep_work(p, s).ok()?)));
        let targets = work.as_ref().map_or([None, None], |(p, w)| {
            [
                StreamTarget::memory(w, ranks, p),
                StreamTarget::loads(w, ranks, p),
            ]
        });
        let span = work.as_ref().and_then(|(p, w)| SpanTarget::of(w, p, ranks));
        let [memory, loads] = targets.map(|t| {
            let chosen = t.map(|t| (t.kernel, t.per_thread_bytes));
            let cached =
                rank_zeros_value(world, t.filter(|t| t.cached).map(|t| t.profile_bandwidth));
            let (kernel, bytes) = rank_zeros_choice(world, &Kernel::ALL, chosen)?;
            Probe::new(world, kernel, bytes, ranks, cached)
        });
        let chosen = span.map(|t| (t.isa, t.depth as u64));
        let chains = rank_zeros_choice(world, &Isa::ALL, chosen)
            .and_then(|(isa, depth)| Probe::span(world, isa, depth as usize));
        Self {
            targets,
            span,
            probes: [memory, loads, chains],
        }
    }

    /// The drifts the probes found (a collective): on rank 0 when it
    /// re-measured any, `None` elsewhere.
    fn drifts(&self, world: &SimpleCommunicator, s: &Setup) -> Option<Paired> {
        let ranks = s.ranks_per_host.max(1);
        let on = format!("{ranks} rank(s)");
        // Every rank takes part in each probe's collective, in order.
        let now = self
            .probes
            .each_ref()
            .map(|p| p.as_ref().and_then(|p| p.rate(world)));
        let [memory, loads] =
            [0, 1].map(|i| self.targets[i].zip(now[i]).map(|(t, r)| t.drift(r, &on)));
        let span = self
            .span
            .zip(now[2])
            .map(|(t, r)| t.drift(1.0 / r, &format!("each of {on}")));
        (memory.is_some() || loads.is_some() || span.is_some()).then(|| Paired {
            memory,
            loads,
            span,
            ..Paired::default()
        })
    }
}

/// Rank 0's `chosen` item of `all` with its size, on every rank (a
/// collective): sent as the item's place in `all` plus one (0 for none)
/// and the size.
fn rank_zeros_choice<T: Copy + PartialEq>(
    world: &SimpleCommunicator,
    all: &[T],
    chosen: Option<(T, u64)>,
) -> Option<(T, u64)> {
    let mut wire: [u64; 2] = chosen.map_or([0, 0], |(item, size)| {
        let at = all.iter().position(|&i| i == item);
        [at.map_or(0, |i| i as u64 + 1), size]
    });
    world.process_at_rank(0).broadcast_into(&mut wire[..]);
    let item = *all.get((wire[0] as usize).checked_sub(1)?)?;
    Some((item, wire[1]))
}

/// Rank 0's `value` on every rank (a collective), sent as NaN for none.
fn rank_zeros_value(world: &SimpleCommunicator, value: Option<f64>) -> Option<f64> {
    let mut wire = value.unwrap_or(f64::NAN);
    world.process_at_rank(0).broadcast_into(&mut wire);
    (!wire.is_nan()).then_some(wire)
}

/// CPUs online on this host (not the affinity mask: mpirun binds each rank
/// to one core), from `/sys/devices/system/cpu/online` ("0-3,6"); 0 when
/// unknown.
fn online_cpus() -> usize {
    let Ok(text) = std::fs::read_to_string("/sys/devices/system/cpu/online") else {
        return 0;
    };
    text.trim()
        .split(',')
        .filter_map(|part| match part.split_once('-') {
            Some((a, b)) => Some(b.parse::<usize>().ok()? + 1 - a.parse::<usize>().ok()?),
            None => part.parse::<usize>().ok().map(|_| 1),
        })
        .sum()
}

/// The sweep times as a sample.
fn timing(run: &VariantRun) -> anyhow::Result<Summary> {
    Sample::new(run.times_s.clone())
        .map(|s| s.summary())
        .map_err(|_| {
            BadInput(format!(
                "the {} variant stopped after {} sweep(s) (--tol reached), leaving fewer than 2 timed sweeps; lower --tol",
                run.variant.name(),
                run.iterations
            ))
            .into()
        })
}

/// Ghost-message bytes per sweep over all ranks: two per process-grid edge.
fn message_bytes(n: usize, run: &VariantRun) -> f64 {
    let edges = (run.grid.py - 1) + (run.grid.px - 1);
    (2 * edges * n * ELEM_BYTES) as f64
}
