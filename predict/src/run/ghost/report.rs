//! Rank 0's report of a ghost-stencil run: one record per variant with
//! its prediction, the speed-ups over the blocking variant, then the table
//! (or JSON), the CSV file and the records file.

use std::io::Write;

use anyhow::anyhow;
use models::profile::Profile;
use models::stats::{Sample, Summary};
use serde_json::json;

use super::{message_bytes, online_cpus, timing, Checked, RunArgs, KERNEL};
use crate::kernels::paired::Paired;
use crate::mpi_stencil::driver::VariantRun;
use crate::mpi_stencil::grid::FLOPS_PER_UPDATE;
use crate::mpi_stencil::model::{self, Prediction, BYTES_PER_UPDATE, COUNTED_BYTES_PER_UPDATE};
use crate::mpi_stencil::warm_up::WarmUp;
use crate::mpi_stencil::Variant;
use crate::record::{self, Provenance, Record};
use crate::run::report::with_pair;
use crate::run::ProfileSource;
use calibrate::harness::atomic::AtomicFile;

/// What the report of every variant shares.
pub(super) struct Context<'a> {
    pub checked: &'a Checked,
    /// The warm-up before the variants.
    pub warm: WarmUp,
    /// Ranks.
    pub p: usize,
    /// Distinct hosts, in rank order.
    pub hosts: Vec<String>,
    pub ranks_per_host: usize,
    pub profile: Option<Box<Profile>>,
    /// Where the profile was read from.
    pub profile_path: Option<String>,
    /// Why there is no profile.
    pub absent_note: Option<String>,
}

impl<'a> Context<'a> {
    pub fn new(
        checked: &'a Checked,
        warm: WarmUp,
        p: usize,
        hosts: &[String],
        ranks_per_host: usize,
        profile: ProfileSource,
    ) -> Self {
        let mut distinct: Vec<String> = Vec::new();
        for h in hosts {
            if !distinct.contains(h) {
                distinct.push(h.clone());
            }
        }
        let (profile, profile_path, absent_note) = match profile {
            ProfileSource::Loaded { profile, label } => (Some(profile), Some(label), None),
            ProfileSource::Absent { note } => (None, None, Some(note)),
        };
        Self {
            checked,
            warm,
            p,
            hosts: distinct,
            ranks_per_host,
            profile,
            profile_path,
            absent_note,
        }
    }
}

/// A variant's speed-up over blocking: measured, its interval, modelled.
pub(super) type Speedup = (Variant, f64, [f64; 2], Option<f64>);

/// Makes the records and writes the report, the CSV and the records file.
pub(super) fn report(
    args: &RunArgs,
    ctx: &Context,
    runs: &[VariantRun],
    pairs: &[Option<Paired>],
    csv: Option<AtomicFile>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let cpus = online_cpus();
    let mut records = Vec::new();
    let mut predictions = Vec::new();
    let mut summaries = Vec::new();
    for (run, paired) in runs.iter().zip(pairs) {
        let t = timing(run)?;
        let r = measured(ctx, run, &t, provenance(ctx, &t, cpus));
        let (r, prediction) = predicted(ctx, run, paired.as_ref(), r);
        records.push(r);
        predictions.push(prediction);
        summaries.push(t);
    }
    let speedups = speedups(runs, &summaries, &predictions, &mut records);
    if args.json {
        writeln!(out, "{}", record::to_json(&records))?;
    } else {
        write!(
            out,
            "{}",
            super::table::table(ctx, runs, &records, &speedups)
        )?;
    }
    if let (Some(file), Some(path)) = (csv, args.csv.as_ref()) {
        file.commit(record::to_csv(&records).as_bytes())
            .map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    }
    if !args.no_record {
        let path = args.measurements.join(crate::record::RECORDS_FILE);
        record::append_jsonl(&path, &records)
            .map_err(|e| anyhow!("appending to {}: {e}", path.display()))?;
    }
    Ok(())
}

/// The run's provenance with its caveats: no profile, noisy timing,
/// more ranks than CPUs on a host.
fn provenance(ctx: &Context, t: &Summary, cpus: usize) -> Provenance {
    let mut prov = Provenance::now(ctx.hosts.clone(), ctx.profile_path.clone());
    if let Some(note) = &ctx.absent_note {
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
    if cpus > 0 && ctx.ranks_per_host > cpus {
        prov.notes.push(format!(
            "oversubscribed: {} ranks on a host with {cpus} CPUs",
            ctx.ranks_per_host
        ));
    }
    prov
}

/// The record of one variant's measurement, before its prediction.
fn measured(ctx: &Context, run: &VariantRun, t: &Summary, prov: Provenance) -> Record {
    let n = ctx.checked.cfg.n;
    let area = (n * n) as f64;
    let mut r = Record::measured(
        KERNEL,
        run.variant.name(),
        ctx.p,
        n as u64,
        t,
        FLOPS_PER_UPDATE * area,
        COUNTED_BYTES_PER_UPDATE * area,
        prov,
    )
    .with("bytes_write_allocate", BYTES_PER_UPDATE * area)
    .with("grid", run.grid.to_string())
    .with("elem", "f64")
    .with("iterations", run.iterations)
    .with("warmup_iterations", run.warmup)
    .with("warmup_sweeps", ctx.warm.sweeps)
    .with("warmup_s", ctx.warm.elapsed.as_secs_f64())
    .with("warmup_sweep_s", ctx.warm.sweep_s)
    .with("converged", run.converged)
    .with("residual", run.residuals.last().map(|x| x.1))
    .with("checksum", format!("{:#018x}", run.checksum))
    .with("message_bytes", message_bytes(n, run))
    .with("ranks_per_host", ctx.ranks_per_host)
    .with("measured_outliers", t.outliers.total());
    r.verified = run.verified;
    if let Ok(red) = Sample::new(run.reduction_s.clone()) {
        r = r.with("reduction_s", red.summary().median);
    }
    r
}

/// `r` with the model's prediction of the variant, or why there is none,
/// and the paired prediction from the figures re-measured after it.
fn predicted(
    ctx: &Context,
    run: &VariantRun,
    paired: Option<&Paired>,
    r: Record,
) -> (Record, Option<Prediction>) {
    let setup = super::setup(ctx.checked, run.grid, run.variant, ctx.ranks_per_host);
    match ctx
        .profile
        .as_deref()
        .map(|pf| (pf, model::predict(pf, &setup)))
    {
        Some((pf, Ok(pr))) => {
            let r = r
                .predicted(pr.time_s, pr.binding.clone())
                .with("model", &pr);
            let r = match pr.states_s {
                Some(states) => r.with("predicted_states_s", states),
                None => r,
            };
            let r = match paired {
                Some(paired) => {
                    let now = model::predict_now(pf, &setup, paired.now()).ok();
                    with_pair(r, paired, now.map(|p| p.time_s))
                }
                None => r,
            };
            (r, Some(pr))
        }
        Some((_, Err(missing))) => (r.unpredicted(format!("no prediction: {missing}")), None),
        None => {
            let note = ctx.absent_note.clone().unwrap_or_default();
            (r.unpredicted(format!("no prediction: {note}")), None)
        }
    }
}

/// Speed-ups over the blocking variant, measured and modelled; each also
/// goes into its variant's record.
fn speedups(
    runs: &[VariantRun],
    summaries: &[Summary],
    predictions: &[Option<Prediction>],
    records: &mut [Record],
) -> Vec<Speedup> {
    let mut speedups = Vec::new();
    let Some(b) = runs.iter().position(|r| r.variant == Variant::Blocking) else {
        return speedups;
    };
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
    speedups
}
