//! `predict run`: the kernels measured on this machine next to the model's
//! prediction from the machine profile.

use std::path::PathBuf;

use anyhow::{Context, Result};
use calibrate::harness::timer::Plan;
use clap::Args;

use super::report;
use crate::error::BadInput;
use crate::kernels::{self, Kernel, Options, KERNELS};
use crate::machine::Machine;
use crate::profiles::DEFAULT_MEASUREMENTS;
use crate::record::{self, Provenance};
use crate::run::ProfileSource;
use calibrate::harness::atomic::AtomicFile;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Machine profile written by `calibrate`: a file, or a name under
    /// data/profiles/ such as `textbook`.
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// Kernels to run (repeat the flag); all when absent.
    #[arg(long = "kernel", value_name = "NAME")]
    pub kernels: Vec<String>,
    /// Threads of the all-core runs (default: every allowed CPU).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Size parameter, per kernel: fusion elements per array, stencil row
    /// width, false-sharing increments per thread, binning particles, matmul n.
    #[arg(long, value_parser = crate::args::number)]
    pub size: Option<f64>,
    /// Memory the kernels' arrays may take, e.g. 4GiB [default: a quarter
    /// of the RAM, as `calibrate`]; a --size that needs more is refused.
    #[arg(long, value_parser = crate::args::bytes)]
    pub max_memory: Option<f64>,
    /// One JSON array of records on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the records as CSV to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Show each prediction's formula and values.
    #[arg(long)]
    pub explain: bool,
    /// Fewer repetitions (for tests and quick looks).
    #[arg(long)]
    pub quick: bool,
    /// Folder whose `records.jsonl` the records are appended to.
    #[arg(long, default_value = DEFAULT_MEASUREMENTS)]
    pub measurements: PathBuf,
    /// Do not append the records to the measurements folder.
    #[arg(long)]
    pub no_record: bool,
}

pub fn run(a: &RunArgs, out: &mut dyn std::io::Write) -> Result<()> {
    let chosen: Vec<&dyn Kernel> = if a.kernels.is_empty() {
        KERNELS.to_vec()
    } else {
        a.kernels
            .iter()
            .map(|n| {
                kernels::find(n).ok_or_else(|| {
                    BadInput(format!(
                        "unknown kernel '{n}': expected one of {} (ghost-stencil runs under mpirun)",
                        kernels::names().join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let size = match a.size {
        Some(s) if s < 1.0 || s.fract() != 0.0 => {
            return Err(BadInput(format!(
                "--size {s} is not accepted: it must be a whole number >= 1"
            ))
            .into())
        }
        s => s.map(|s| s as usize),
    };
    let csv = a
        .csv
        .as_deref()
        .map(|p| {
            AtomicFile::create_all(p)
                .map_err(|e| BadInput(format!("cannot write --csv {}: {e}", p.display())))
        })
        .transpose()?;
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
        let path = a.measurements.join("records.jsonl");
        record::append_jsonl(&path, &records)
            .with_context(|| format!("appending to {}", path.display()))?;
    }
    Ok(())
}
