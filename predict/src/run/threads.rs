//! `predict run` of the thread kernels: each measured on this machine next
//! to the model's prediction from the machine profile.

use anyhow::{Context, Result};
use calibrate::harness::timer::Plan;

use super::report;
use crate::error::BadInput;
use crate::kernels::{self, Kernel, Options, KERNELS};
use crate::machine::Machine;
use crate::record::{self, Provenance};
use crate::run::{ProfileSource, RunArgs};
use calibrate::harness::atomic::AtomicFile;

/// Runs the thread kernels `a` names (all when none), each variant
/// measured and predicted, and reports them.
pub fn run(a: &RunArgs, out: &mut dyn std::io::Write) -> Result<()> {
    a.refuse_foreign()?;
    let chosen = chosen(a)?;
    let size = size(a)?;
    let csv = a
        .csv
        .as_deref()
        .map(|p| {
            AtomicFile::create_all(p)
                .map_err(|e| BadInput(format!("cannot write --csv {}: {e}", p.display())))
        })
        .transpose()?;
    if !a.no_record {
        record::check_folder(&a.measurements)?;
    }
    let cpus = calibrate::harness::pin::allowed_cpus().len();
    let threads = a.threads.unwrap_or(cpus);
    kernels::team::team(threads)?; // checks --threads before any work
    let sys = calibrate::harness::sysinfo::SysInfo::read(cpus);
    let (have, source) = crate::run::budget::budget(a.max_memory, sys.ram_bytes)?;
    for k in &chosen {
        crate::run::budget::check(k.name(), size, threads, (have, &source))?;
    }
    let (profile, label, note) = match crate::run::load_profile(a.profile.as_deref())? {
        ProfileSource::Loaded { profile, label } => (Some(*profile), Some(label), None),
        ProfileSource::Absent { note } => (None, None, Some(note)),
    };
    let cache_bytes = match &profile {
        Some(p) => Machine::new(p).largest_cache_bytes(),
        None => Err(crate::machine::Missing {
            what: "a profile".into(),
            fix: "latency",
        }),
    };
    let options = Options {
        threads,
        size,
        plan: if a.quick { Plan::quick() } else { Plan::full() },
        cache_bytes,
        profile: profile.clone().map(std::sync::Arc::new),
    };
    let mut measurements = Vec::new();
    for k in &chosen {
        measurements.extend(k.run(&options)?);
    }
    let provenance = Provenance::now(vec![sys.hostname], label);
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let assessed = report::assess(&measurements, profile.as_ref(), &provenance);
    let records: Vec<record::Record> = assessed.iter().map(|x| x.record.clone()).collect();
    if a.json {
        writeln!(out, "{}", record::to_json(&records))?;
    } else {
        write!(out, "{}", report::table(&assessed, a.explain))?;
    }
    if let Some(csv) = csv {
        csv.commit(record::to_csv(&records).as_bytes())
            .context("writing the CSV")?;
    }
    if !a.no_record {
        let path = a.measurements.join(crate::record::RECORDS_FILE);
        record::append_jsonl(&path, &records)
            .with_context(|| format!("appending to {}", path.display()))?;
    }
    Ok(())
}

/// The kernels `--kernel` names, all when none.
fn chosen(a: &RunArgs) -> Result<Vec<&'static dyn Kernel>, BadInput> {
    if a.kernels.is_empty() {
        return Ok(KERNELS.to_vec());
    }
    let twice = a
        .kernels
        .iter()
        .enumerate()
        .find_map(|(i, n)| a.kernels[..i].contains(n).then_some(n));
    if let Some(n) = twice {
        return Err(BadInput(format!("--kernel {n} is named twice")));
    }
    a.kernels
        .iter()
        .map(|n| {
            kernels::find(n).ok_or_else(|| {
                BadInput(if n == super::GHOST_STENCIL {
                    format!(
                        "--kernel {n} runs alone (under mpirun), not beside the thread kernels {}",
                        kernels::names().join(", ")
                    )
                } else {
                    format!(
                        "unknown kernel '{n}': expected one of {} (ghost-stencil runs under mpirun)",
                        kernels::names().join(", ")
                    )
                })
            })
        })
        .collect()
}

/// `--size` as a whole number, if given.
fn size(a: &RunArgs) -> Result<Option<usize>, BadInput> {
    a.size
        .map(|s| {
            models::error::count("--size", s)
                .map(|s| s as usize)
                .map_err(|e| BadInput(e.to_string()))
        })
        .transpose()
}
