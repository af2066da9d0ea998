//! A calibration run: check the input, measure the selected benchmarks in
//! order, assemble the profile, write it atomically and print the table.
//!
//! A full run replaces the profile at `--out`; a run with `--only` updates
//! just the sections it measured ([`Profile::merge_from`]) and keeps the
//! rest, including the notes of the benchmarks it did not run.

use anyhow::{bail, Context as _, Result};
use chrono::{SecondsFormat, Utc};
use models::profile::{Profile, Provenance};

use crate::bench::{bursts, by_name, Context, Outcome};
use crate::cli::{BenchName, RunArgs};
use crate::clock::{self, Clock};
use crate::config::{Config, UsageError};
use crate::output::{table, OutFile};
use crate::pin::{allowed_cpus, Team};
use crate::progress::Progress;
use crate::sysinfo::SysInfo;
use crate::timer::Plan;
use models::units::binary_bytes;

/// Runs a calibration with `args`.
pub fn run(args: &RunArgs) -> Result<()> {
    // One check for both paths: the ping-pong runs alone, before any
    // configuration of the other benchmarks.
    if args.critical_ns.is_some() && !args.only.is_empty() && !args.only.contains(&BenchName::Lock)
    {
        return Err(UsageError::Only(
            "--critical-ns applies to the lock benchmark, which this --only leaves out".into(),
        )
        .into());
    }
    if args.only.contains(&BenchName::Pingpong) {
        return crate::network::run(args);
    }
    if args.max_message.is_some() || args.timeout.is_some() {
        return Err(UsageError::Only(
            "--max-message and --timeout apply to the ping-pong only (`--only pingpong`)".into(),
        )
        .into());
    }
    let allowed = allowed_cpus();
    if allowed.is_empty() {
        bail!("cannot read the CPUs this process may run on (sched_getaffinity)");
    }
    let sys = SysInfo::read(allowed.len());
    let out = OutFile::prepare(&args.out)?;
    let existing = existing_profile(args, &out)?;
    let config = Config::new(args, &sys, &allowed, existing.as_ref())?;

    let one = Team::new(&config.cpus[..1])?;
    let all = Team::new(&config.cpus)?;
    let clock = one
        .each(|_| clock::clock(&Plan::quick(), sys.cpuinfo_hz))
        .swap_remove(0)?;
    let provenance = provenance(&config, &sys, clock.as_ref(), &all);
    let known = match (&existing, config.only) {
        (Some(p), true) => p.clone(),
        _ => Profile::new(provenance.clone()),
    };
    let mut ctx = Context {
        config,
        sys,
        clock,
        one,
        all,
        known,
        progress: Progress::new(),
        bursts: Default::default(),
    };

    ctx.warm_huge_pages()?;
    let mut fresh = Profile::new(provenance);
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    for name in ctx.config.benches.clone() {
        bursts::take_before(&mut ctx, name)?;
        let bench = by_name(name);
        let o = bench
            .run(&ctx)
            .with_context(|| format!("the {} benchmark failed", bench.name()))?;
        let part = outcome_profile(bench.name(), &o, &fresh.provenance);
        merge(&mut ctx.known, part.clone(), &[bench.name()]);
        merge(&mut fresh, part, &[bench.name()]);
        lines.push(o.table);
        warnings.extend(o.warnings.iter().map(|w| format!("[{}] {w}", bench.name())));
    }

    let profile = match existing {
        Some(old) if ctx.config.only => updated(old, fresh, &ctx.config.benches),
        _ => fresh,
    };
    out.write(&profile.to_json())?;
    let mut report = table(&profile, &lines, &warnings);
    report += &format!("Profile written to {}\n", out.path().display());
    if ctx.config.json {
        eprint!("{report}");
        println!("{}", profile.to_json());
    } else {
        print!("{report}");
    }
    Ok(())
}

/// The profile already at `--out`; one that cannot be read is an error
/// only when `--only` would update it.
fn existing_profile(args: &RunArgs, out: &OutFile) -> Result<Option<Profile>> {
    match out.existing() {
        Ok(p) => Ok(p),
        Err(reason) if !args.only.is_empty() => Err(UsageError::Existing {
            path: args.out.display().to_string(),
            reason,
        }
        .into()),
        Err(_) => Ok(None),
    }
}

/// `old` with the sections of the benchmarks that ran replaced by `fresh`.
fn updated(mut old: Profile, fresh: Profile, ran: &[BenchName]) -> Profile {
    let mut names: Vec<&str> = ran.iter().map(|b| b.name()).collect();
    names.push("run");
    merge(&mut old, fresh, &names);
    old
}

/// One benchmark's outcome as a partial profile; its notes and warnings
/// are tagged `[name]`.
fn outcome_profile(name: &str, o: &Outcome, provenance: &Provenance) -> Profile {
    let mut p = Profile::new(provenance.clone());
    p.summary = o.summary.clone();
    p.levels = o.levels.clone();
    p.ceilings = o.ceilings.clone();
    p.trust = o.trust.clone();
    if let Some(s) = &o.section {
        p.sections.insert(s.clone());
    }
    p.provenance.notes = o
        .notes
        .iter()
        .map(|n| format!("[{name}] {n}"))
        .chain(o.warnings.iter().map(|w| format!("[{name}] warning: {w}")))
        .collect();
    p
}

/// [`Profile::merge_from`], plus: the notes tagged with a benchmark in
/// `ran` are replaced by the newer ones (the others are kept), and a newer
/// latency sweep decides which cache levels exist (an older level that the
/// new curve does not show is dropped).
fn merge(into: &mut Profile, newer: Profile, ran: &[&str]) {
    if newer.sections.latency.is_some() {
        into.levels
            .retain(|l| l.name == "DRAM" || newer.levels.iter().any(|n| n.name == l.name));
    }
    let mut notes: Vec<String> = std::mem::take(&mut into.provenance.notes)
        .into_iter()
        .filter(|n| !ran.iter().any(|r| n.starts_with(&format!("[{r}]"))))
        .collect();
    notes.extend(newer.provenance.notes.iter().cloned());
    into.merge_from(newer);
    into.provenance.notes = notes;
}

fn provenance(config: &Config, sys: &SysInfo, clock: Option<&Clock>, all: &Team) -> Provenance {
    let ids: Vec<String> = config.cpus.iter().map(|c| c.id.to_string()).collect();
    let mut notes = vec![format!(
        "[run] {} mode; memory budget {} ({})",
        if config.quick { "quick" } else { "full" },
        binary_bytes(config.budget_bytes as f64),
        config.budget_source
    )];
    if let Some(hz) = sys.cpuinfo_hz {
        notes.push(format!("[run] /proc/cpuinfo reports {:.0} MHz", hz / 1e6));
    }
    Provenance {
        cpu_model: sys.cpu_model.clone(),
        logical_cpus: sys.logical_cpus,
        threads: config.threads,
        pinning: format!(
            "one thread per logical CPU, CPUs {} ({})",
            ids.join(","),
            if all.pinned() {
                "verified with sched_getcpu"
            } else {
                "requested, but the OS did not confirm it"
            }
        ),
        simd: sys.simd(),
        clock_hz: clock.map(|c| c.hz),
        clock_source: clock.map_or("unknown".into(), |c| c.source.clone()),
        os_reported_caches: sys.reported_caches(),
        hostname: sys.hostname.clone(),
        os: sys.os.clone(),
        memory_bytes: (sys.ram_bytes > 0).then_some(sys.ram_bytes),
        date: Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        notes,
    }
}
