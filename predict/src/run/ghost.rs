//! The ghost-stencil kernel of `predict run`: checks the options, agrees
//! across ranks on whether to go on, runs the variants, predicts them, and
//! reports on rank 0.

use std::fmt::{self, Write as _};
use std::io::Write;
use std::time::Duration;

use anyhow::anyhow;
use models::stats::{Sample, Summary};
use models::units::Si;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde_json::json;

use super::{load_profile, ProfileSource, RunArgs, VariantChoice};
use crate::error::BadInput;
use crate::mpi_stencil::driver::{
    host_names, max_ranks_per_host, run_variant, verify_runs, RunConfig, VariantRun,
};
use crate::mpi_stencil::grid::{ELEM_BYTES, FLOPS_PER_UPDATE};
use crate::mpi_stencil::layout::check_size;
use crate::mpi_stencil::model::{
    self, Prediction, Setup, BYTES_PER_UPDATE, COUNTED_BYTES_PER_UPDATE,
};
use crate::mpi_stencil::Variant;
use crate::record::{self, Provenance, Record};
use calibrate::harness::atomic::AtomicFile;
use calibrate::harness::watchdog::Watchdog;

const KERNEL: &str = super::GHOST_STENCIL;
const DEFAULT_N: f64 = 2048.0;
const DEFAULT_CHECK_EVERY: f64 = 10.0;
const DEFAULT_TIMEOUT_S: f64 = 120.0;
const DEFAULT_ITERS: f64 = 200.0;
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
    cfg: RunConfig,
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
    let iters = whole("iters", args.iters.unwrap_or(DEFAULT_ITERS), 2.0, 1e9).map_err(|e| {
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
    let timeout = args.timeout.unwrap_or(DEFAULT_TIMEOUT_S);
    if !(timeout.is_finite() && timeout >= 0.0) {
        return Err(BadInput(format!(
            "--timeout must be a number of seconds >= 0, got {timeout}"
        )));
    }
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
            iters,
            check_every,
            tol: args.tol,
            verify: args.verify,
        },
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
            std::process::exit(crate::exit_code(&e))
        }
        r => r,
    }
}

fn run_on(world: &SimpleCommunicator, args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let p = world.size() as usize;
    let rank = world.rank();
    let checked = check(args, p)?;
    let prep = (rank == 0).then(|| prepare(args));
    let mut code: i32 = match &prep {
        Some(Err(e)) => crate::exit_code(e),
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
    let mut runs: Vec<VariantRun> = checked
        .variants
        .iter()
        .map(|&v| {
            world.barrier();
            run_variant(world, v, &checked.cfg, &wd)
        })
        .collect();
    drop(wd);
    if rank == 0 && checked.cfg.verify {
        verify_runs(&mut runs, checked.cfg.n, checked.cfg.check_every);
    }
    match prep {
        Some(prep) => report(args, &checked, p, &hosts, ranks_per_host, &runs, prep, out),
        None => Ok(()),
    }
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

#[allow(clippy::too_many_arguments)]
fn report(
    args: &RunArgs,
    checked: &Checked,
    p: usize,
    hosts: &[String],
    ranks_per_host: usize,
    runs: &[VariantRun],
    prep: Prepared,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let n = checked.cfg.n;
    let mut distinct: Vec<String> = Vec::new();
    for h in hosts {
        if !distinct.contains(h) {
            distinct.push(h.clone());
        }
    }
    let (profile, profile_path, absent_note) = match prep.profile {
        ProfileSource::Loaded { profile, label } => (Some(profile), Some(label), None),
        ProfileSource::Absent { note } => (None, None, Some(note)),
    };
    let cpus = online_cpus();

    let mut records = Vec::new();
    let mut predictions: Vec<Option<Prediction>> = Vec::new();
    let mut summaries = Vec::new();
    for run in runs {
        let t = timing(run)?;
        let mut prov = Provenance::now(distinct.clone(), profile_path.clone());
        if let Some(note) = &absent_note {
            prov.notes.push(note.clone());
        }
        if t.noisy {
            prov.notes.push(format!(
                "noisy timing: CV {:.1}%, {} outliers of {} sweeps",
                100.0 * t.cv,
                t.outliers.total(),
                t.n
            ));
        }
        if cpus > 0 && ranks_per_host > cpus {
            prov.notes.push(format!(
                "oversubscribed: {ranks_per_host} ranks on a host with {cpus} CPUs"
            ));
        }
        let area = (n * n) as f64;
        let mut r = Record::measured(
            KERNEL,
            run.variant.name(),
            p,
            n as u64,
            &t,
            FLOPS_PER_UPDATE * area,
            COUNTED_BYTES_PER_UPDATE * area,
            prov,
        )
        .with("bytes_write_allocate", BYTES_PER_UPDATE * area)
        .with("grid", run.grid.to_string())
        .with("elem", "f64")
        .with("iterations", run.iterations)
        .with("warmup_iterations", run.warmup)
        .with("converged", run.converged)
        .with("residual", run.residuals.last().map(|x| x.1))
        .with("checksum", format!("{:#018x}", run.checksum))
        .with("message_bytes", message_bytes(n, run))
        .with("ranks_per_host", ranks_per_host)
        .with("measured_outliers", t.outliers.total());
        r.verified = run.verified;
        if let Ok(red) = Sample::new(run.reduction_s.clone()) {
            r = r.with("reduction_s", red.summary().median);
        }
        let setup = Setup {
            n,
            grid: run.grid,
            variant: run.variant,
            ranks_per_host,
        };
        let prediction = match profile.as_deref().map(|pf| model::predict(pf, &setup)) {
            Some(Ok(pr)) => {
                r = r
                    .predicted(pr.time_s, pr.binding.clone())
                    .with("model", &pr);
                Some(pr)
            }
            Some(Err(missing)) => {
                r = r.unpredicted(format!("no prediction: {missing}"));
                None
            }
            None => {
                let note = absent_note.clone().unwrap_or_default();
                r = r.unpredicted(format!("no prediction: {note}"));
                None
            }
        };
        records.push(r);
        predictions.push(prediction);
        summaries.push(t);
    }

    // Speed-ups over the blocking variant, measured and modelled.
    let mut speedups = Vec::new();
    if let Some(b) = runs.iter().position(|r| r.variant == Variant::Blocking) {
        for i in (0..runs.len()).filter(|&i| i != b) {
            let (tb, tx) = (&summaries[b], &summaries[i]);
            let measured = tb.median / tx.median;
            let ci = [tb.ci_lo / tx.ci_hi, tb.ci_hi / tx.ci_lo];
            let model = match (&predictions[b], &predictions[i]) {
                (Some(pb), Some(px)) => Some(pb.time_s / px.time_s),
                _ => None,
            };
            records[i] = records[i].clone().with(
                "speedup_vs_blocking",
                json!({ "measured": measured, "measured_ci": ci, "model": model }),
            );
            speedups.push((runs[i].variant, measured, ci, model));
        }
    }

    let csv_text = prep.csv.as_ref().map(|_| record::to_csv(&records));
    if args.json {
        writeln!(out, "{}", record::to_json(&records))?;
    } else {
        let text = table(
            checked,
            p,
            &distinct,
            ranks_per_host,
            runs,
            &records,
            &speedups,
            profile_path.as_deref(),
            absent_note.as_deref(),
        );
        write!(out, "{text}")?;
    }
    if let (Some(file), Some(text)) = (prep.csv, csv_text) {
        let path = args.csv.as_ref().expect("a CSV file has a path");
        file.commit(text.as_bytes())
            .map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    }
    if !args.no_record {
        let path = args.measurements.join("records.jsonl");
        record::append_jsonl(&path, &records)
            .map_err(|e| anyhow!("appending to {}: {e}", path.display()))?;
    }
    Ok(())
}

type Speedup = (Variant, f64, [f64; 2], Option<f64>);

#[allow(clippy::too_many_arguments)]
fn table(
    checked: &Checked,
    p: usize,
    hosts: &[String],
    ranks_per_host: usize,
    runs: &[VariantRun],
    records: &[Record],
    speedups: &[Speedup],
    profile_path: Option<&str>,
    absent_note: Option<&str>,
) -> String {
    let cfg = &checked.cfg;
    let mut s = String::new();
    let iters = runs.first().map_or(cfg.iters, |r| r.iterations);
    let _ = writeln!(
        s,
        "ghost-row Jacobi stencil (lecture §3.1): N = {}, f64, {p} rank(s) on {} host(s) (up to {ranks_per_host} per host), {iters} sweeps (first {} not timed), residual every {}",
        cfg.n,
        hosts.len(),
        runs.first().map_or(0, |r| r.warmup),
        cfg.check_every
    );
    match (profile_path, absent_note) {
        (Some(path), _) => {
            let _ = writeln!(s, "profile: {path}");
        }
        (None, Some(note)) => {
            let _ = writeln!(s, "{note}");
        }
        _ => {}
    }
    let _ = writeln!(
        s,
        "  {:<12} {:<6} {:<34} {:<12} {:>8}  binding",
        "variant", "grid", "measured/sweep [95% CI]", "predicted", "error"
    );
    for (run, r) in runs.iter().zip(records) {
        let measured = format!(
            "{} [{}, {}]{}",
            Si(r.measured_s, "s"),
            Si(r.measured_ci_s[0], "s"),
            Si(r.measured_ci_s[1], "s"),
            if r.noisy { " ~" } else { "" }
        );
        let predicted = r
            .predicted_s
            .map_or("-".to_string(), |t| Si(t, "s").to_string());
        let error = r
            .rel_error
            .map_or("-".to_string(), |e| format!("{:+.1}%", 100.0 * e));
        let _ = writeln!(
            s,
            "  {:<12} {:<6} {:<34} {:<12} {:>8}  {}",
            run.variant.name(),
            run.grid.to_string(),
            measured,
            predicted,
            error,
            r.binding.as_deref().unwrap_or("-")
        );
    }
    for (v, m, ci, model) in speedups {
        let model = model.map_or("no model".to_string(), |x| format!("model {x:.2}x"));
        let _ = writeln!(
            s,
            "  speed-up {} over blocking: measured {m:.2}x [{:.2}, {:.2}], {model}",
            v.name(),
            ci[0],
            ci[1]
        );
    }
    let sums: Vec<u64> = runs.iter().map(|r| r.checksum).collect();
    let agree = sums.windows(2).all(|w| w[0] == w[1]);
    let verified: Vec<Option<bool>> = runs.iter().map(|r| r.verified).collect();
    let _ = writeln!(
        s,
        "  checksum {:#018x}{}; {}",
        sums.first().copied().unwrap_or(0),
        if runs.len() > 1 {
            if agree {
                " (all variants agree)"
            } else {
                " (VARIANTS DISAGREE)"
            }
        } else {
            ""
        },
        if verified.iter().all(Option::is_none) {
            "not compared with the serial reference (add --verify)".to_string()
        } else if verified.iter().all(|v| *v == Some(true)) {
            "equal to the serial reference bit for bit".to_string()
        } else {
            "DIFFERENT FROM THE SERIAL REFERENCE".to_string()
        }
    );
    let mut said = Vec::new();
    for r in records {
        if let Some(v) = &r.no_prediction {
            if !said.contains(v) && absent_note.is_none() {
                let _ = writeln!(s, "  {v}");
                said.push(v.clone());
            }
        }
        if let Some(notes) = r.extra.get("model").and_then(|m| m["notes"].as_array()) {
            for note in notes.iter().filter_map(|n| n.as_str()) {
                if !said.contains(&note.to_string()) {
                    let _ = writeln!(s, "  note: {note}");
                    said.push(note.to_string());
                }
            }
        }
        for note in &r.provenance.notes {
            if !said.contains(note) && absent_note != Some(note.as_str()) {
                let everywhere = records.iter().all(|o| o.provenance.notes.contains(note));
                if everywhere {
                    let _ = writeln!(s, "  note: {note}");
                } else {
                    let _ = writeln!(s, "  note ({}): {note}", r.variant);
                }
                said.push(note.clone());
            }
        }
    }
    s
}
