//! `predict scaling`: where does strong scaling level off, with error bars.
//!
//! ```text
//! predict scaling [--kernel stencil|binning] [--profile FILE|NAME] [--n 4096] [--weak]
//!                 [--network t0=1.5us,bw=12.5GB/s[,name=N]]... [--network-profile FILE|NAME]...
//!                 [--efficiency 0.5] [--p-max P] [--draws 2000] [--seed 1]
//!                 [--json] [--csv FILE] [--out chart.svg|.png|.pdf]
//! predict scaling --fit runs.csv [...]
//! ```
//!
//! * **Ghost-row stencil** (lecture §3.1, §4.1, §4.2): time per iteration
//!   T(P) = (N/P)·N·t_update + k·T0 + 2·N·elem/B ([`models::stencil`]),
//!   t_update = bytes per update / per-process memory bandwidth from the
//!   profile (or `--update-time`), T0 and B from the profile's network
//!   regime that serves a ghost row of N·elem bytes, or from each
//!   `--network`/`--network-profile` to compare networks in one run.
//!   `--weak` keeps the work per rank fixed: N(P) = N·√P.
//! * **Binning** (§2.9, §3.5, §4.5): n items into buckets under a global
//!   lock, per-bucket locks, or a data-parallel counting sort, with the
//!   profile's t_crit and bandwidths ([`models::contention`],
//!   [`models::binning`]).
//! * **Fit** of a user's runs (§4.6): see [`fit`].
//!
//! Each calibrated parameter's interval is carried into the prediction by
//! Monte Carlo ([`uncertainty`]); the knees (P where communication equals
//! computation, where efficiency drops below the threshold, and of the best
//! time) are reported with 95% ranges ([`analysis`]).

pub mod analysis;
pub mod curves;
pub mod fit;
pub mod network;
pub mod report;
pub mod uncertainty;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use models::profile::Profile;
use models::units::Si;
use models::Estimate;

use crate::args::Time;
use crate::profiles::DEFAULT_PROFILE;
use crate::roofline::Outputs;
use crate::BadInput;
use analysis::{analyse, Config};
use curves::{AmdahlComm, Binning, Stencil, Strategy};
use network::NetworkSpec;
use report::Report;
use uncertainty::{Param, Uncertainty};

/// Which kernel's model to plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelKind {
    /// The ghost-row Jacobi stencil across ranks (§3.1, §4.1).
    Stencil,
    /// Binning under contention across threads (§3.5, §4.5).
    Binning,
}

/// `predict scaling`.
#[derive(Debug, Clone, Args)]
pub struct ScalingArgs {
    /// Machine profile, a file or a name under data/profiles/ such as
    /// `textbook` [default: data/profile.json]; optional when every
    /// figure is given on the command line.
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// The kernel to model.
    #[arg(long, value_enum, default_value = "stencil")]
    pub kernel: KernelKind,
    /// Fit T(P) = T1·(f + (1−f)/P) + c·log2(P) to a CSV of runs (P, time)
    /// of any code instead of modelling a kernel.
    #[arg(long)]
    pub fit: Option<PathBuf>,

    /// Grid side N of the stencil (at P = 1 with --weak).
    #[arg(long, value_parser = crate::args::number, default_value = "4096")]
    pub n: f64,
    /// Bytes per grid element (4 for f32, as in the lecture).
    #[arg(long, value_parser = crate::args::bytes, default_value = "4")]
    pub elem_bytes: f64,
    /// Memory traffic per element update; t_update = this / bandwidth per
    /// process (8 B: the tiled 5-point stencil of §4.4).
    #[arg(long, value_parser = crate::args::bytes, default_value = "8")]
    pub bytes_per_update: f64,
    /// Time of one element update instead of bytes / bandwidth (e.g. 2cycles with --clock 3GHz).
    #[arg(long, value_parser = crate::args::time)]
    pub update_time: Option<Time>,
    /// Clock for times given in cycles.
    #[arg(long, value_parser = crate::args::frequency)]
    pub clock: Option<f64>,
    /// Ranks sharing one node's memory bandwidth (1: each rank gets the
    /// one-thread bandwidth).
    #[arg(long, value_parser = crate::args::number, default_value = "1")]
    pub ranks_per_node: f64,
    /// Message start-ups charged per iteration (1 as in §4.1; 2 when the
    /// two ghost rows are sent one after the other).
    #[arg(long, value_parser = crate::args::number, default_value = "1")]
    pub messages: f64,
    /// The exchange overlaps the interior update: max(comp, comm).
    #[arg(long)]
    pub overlap: bool,
    /// Weak scaling: the work per rank stays fixed (N grows as √P).
    #[arg(long)]
    pub weak: bool,
    /// A what-if network, e.g. t0=1.5us,bw=12.5GB/s,name=upgrade (repeatable).
    #[arg(long = "network")]
    pub networks: Vec<String>,
    /// Another cluster's profile (or its `network` section) to plan with,
    /// a file or a name under data/profiles/ (repeatable).
    #[arg(long = "network-profile")]
    pub network_profiles: Vec<PathBuf>,
    /// Leave out the profile's own network.
    #[arg(long)]
    pub no_profile_network: bool,

    /// Items to bin.
    #[arg(long, value_parser = crate::args::number, default_value = "4e6")]
    pub items: f64,
    /// Buckets (and bucket locks).
    #[arg(long, value_parser = crate::args::number, default_value = "256")]
    pub buckets: f64,
    /// Extra bytes per item the data-parallel sort moves (20 in §3.5).
    #[arg(long, value_parser = crate::args::bytes, default_value = "20")]
    pub sort_bytes: f64,
    /// Time a contended lock is held per insert [default: the profile's t_crit].
    #[arg(long, value_parser = crate::args::time)]
    pub t_crit: Option<Time>,
    /// Work per insert outside the lock [default: the profile's, else 0].
    #[arg(long, value_parser = crate::args::time)]
    pub t_work: Option<Time>,

    /// Efficiency threshold of the knee.
    #[arg(long, default_value = "0.5")]
    pub efficiency: f64,
    /// Smallest P.
    #[arg(long, value_parser = crate::args::number)]
    pub p_min: Option<f64>,
    /// Largest P [default: N for strong stencil scaling, 65536 weak, 64
    /// threads for binning, 16× the largest run for --fit].
    #[arg(long, value_parser = crate::args::number)]
    pub p_max: Option<f64>,
    /// Monte Carlo draws (0: point estimates only).
    #[arg(long, default_value = "2000")]
    pub draws: usize,
    /// Seed of the Monte Carlo's generator.
    #[arg(long, default_value = "1")]
    pub seed: u64,

    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write the curves (fine grid), knees and runs as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the chart: .svg, .png (300 dpi) or .pdf.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A title above the chart.
    #[arg(long)]
    pub title: Option<String>,
}

/// The profile: the one given (a file or a name), or data/profile.json
/// when it exists.
fn maybe_profile(a: &ScalingArgs) -> anyhow::Result<Option<(Profile, String)>> {
    Ok(crate::profiles::load_or_default(a.profile.as_deref())?
        .map(|(profile, found)| (profile, found.label)))
}

fn missing_profile(what: &str) -> BadInput {
    BadInput(format!(
        "{what}: no profile at {DEFAULT_PROFILE} (create one with `cargo run --release -p calibrate`, or pass --profile FILE)"
    ))
}

/// The DRAM level of a profile: the level named DRAM, else the last.
fn dram(profile: &Profile) -> Option<&models::profile::MemoryLevel> {
    profile
        .levels
        .iter()
        .find(|l| l.name.eq_ignore_ascii_case("dram"))
        .or(profile.levels.last())
}

/// b / e as an estimate (a time from a bandwidth), σ by the delta method.
fn per(bytes: f64, e: &Estimate) -> Estimate {
    Estimate {
        point: bytes / e.point,
        lo: bytes / e.hi.max(e.point),
        hi: bytes / e.lo.min(e.point).max(f64::MIN_POSITIVE),
        std_err: e.std_err.map(|s| bytes * s / (e.point * e.point)),
    }
}

fn scale(e: &Estimate, k: f64) -> Estimate {
    Estimate {
        point: e.point * k,
        lo: e.lo * k,
        hi: e.hi * k,
        std_err: e.std_err.map(|s| s * k),
    }
}

/// t_update with its interval and a description.
fn update_param(
    a: &ScalingArgs,
    profile: Option<&(Profile, String)>,
) -> anyhow::Result<(Param, String)> {
    if let Some(t) = a.update_time {
        let s = t.seconds("update-time", a.clock)?;
        if s.is_nan() || s <= 0.0 {
            return Err(BadInput(format!("--update-time = {s} s is not positive")).into());
        }
        return Ok((
            Param::positive("t_update", "s", Estimate::exact(s), "--update-time"),
            format!("t_update = {} per element update (given)", Si(s, "s")),
        ));
    }
    let (p, src) = profile.ok_or_else(|| {
        missing_profile("the stencil needs the memory bandwidth or --update-time")
    })?;
    let bpu = a.bytes_per_update;
    let r = a.ranks_per_node;
    let level = dram(p);
    let (bw, what) = if r <= 1.0 {
        match level.and_then(|l| l.bandwidth_1t_Bps) {
            Some(b) => (b, "one-thread DRAM bandwidth".to_string()),
            None => match p.summary.stream_triad_1t_Bps {
                Some(b) => (Estimate::exact(b), "one-thread STREAM triad".to_string()),
                None => {
                    return Err(BadInput(format!(
                        "{src} has no one-thread memory bandwidth; run `calibrate --only stream` or give --update-time"
                    ))
                    .into())
                }
            },
        }
    } else {
        match level.and_then(|l| l.bandwidth_Bps) {
            Some(b) => (scale(&b, 1.0 / r), format!("all-threads DRAM bandwidth / {r} ranks")),
            None => match p.summary.stream_triad_Bps {
                Some(b) => (Estimate::exact(b / r), format!("STREAM triad / {r} ranks")),
                None => {
                    return Err(BadInput(format!(
                        "{src} has no memory bandwidth; run `calibrate --only stream` or give --update-time"
                    ))
                    .into())
                }
            },
        }
    };
    let e = per(bpu, &bw);
    Ok((
        Param::positive("t_update", "s", e, &format!("{src}: {bpu} B / {what}")),
        format!(
            "t_update = {} B / {} = {} per element update",
            bpu,
            network::fmt_est(&bw, "B/s"),
            Si(e.point, "s")
        ),
    ))
}

fn networks(
    a: &ScalingArgs,
    profile: Option<&(Profile, String)>,
) -> anyhow::Result<(Vec<NetworkSpec>, Vec<String>)> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    if !a.no_profile_network {
        if let Some((p, src)) = profile {
            match network::from_profile(p, src)? {
                Some(n) => out.push(n),
                None => notes.push(format!(
                    "{src} has no network section (run `mpirun -np 2 calibrate --only pingpong`)"
                )),
            }
        }
    }
    for f in &a.network_profiles {
        out.push(network::from_file(f)?);
    }
    for (i, s) in a.networks.iter().enumerate() {
        out.push(network::parse_what_if(s, i)?);
    }
    if out.is_empty() {
        return Err(BadInput(
            "no network to plan with: give --network t0=1.5us,bw=12.5GB/s, --network-profile FILE, or a profile with a network section".into(),
        )
        .into());
    }
    Ok((out, notes))
}

fn count_arg(name: &str, v: f64) -> Result<f64, BadInput> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(BadInput(format!(
            "--{name} = {v} is not accepted: P must be positive"
        )))
    }
}

fn config(a: &ScalingArgs, default_max: f64) -> Result<Config, BadInput> {
    let p_min = count_arg("p-min", a.p_min.unwrap_or(1.0))?;
    if p_min < 1.0 {
        return Err(BadInput(format!(
            "--p-min = {p_min} is not accepted: P must be at least 1"
        )));
    }
    let p_max = count_arg("p-max", a.p_max.unwrap_or(default_max))?;
    if p_max <= p_min {
        return Err(BadInput(format!(
            "--p-max = {p_max} must be larger than --p-min = {p_min}"
        )));
    }
    if !(a.efficiency > 0.0 && a.efficiency < 1.0) {
        return Err(BadInput(format!(
            "--efficiency = {} is not accepted: it must be between 0 and 1 (e.g. 0.5)",
            a.efficiency
        )));
    }
    Ok(Config {
        p_min,
        p_max,
        efficiency: a.efficiency,
        draws: a.draws,
        seed: a.seed,
    })
}

fn stencil_report(a: &ScalingArgs) -> anyhow::Result<Report> {
    if !(a.n >= 2.0 && a.n.fract() == 0.0) {
        return Err(BadInput(format!(
            "--n = {} is not accepted: the grid side must be a whole number >= 2",
            a.n
        ))
        .into());
    }
    if !(a.messages >= 1.0 && a.messages.fract() == 0.0) {
        return Err(BadInput(format!(
            "--messages = {} is not accepted: it must be a whole number >= 1",
            a.messages
        ))
        .into());
    }
    if a.ranks_per_node.is_nan() || a.ranks_per_node < 1.0 {
        return Err(BadInput(format!(
            "--ranks-per-node = {} is not accepted: it must be >= 1",
            a.ranks_per_node
        ))
        .into());
    }
    let profile = maybe_profile(a)?;
    let cfg = config(a, if a.weak { 65536.0 } else { a.n })?;
    let (update, update_text) = update_param(a, profile.as_ref())?;
    let (nets, mut notes) = networks(a, profile.as_ref())?;
    let mut setup = vec![
        format!(
            "N = {}, {} B per element, {} message start-up(s) per iteration, {}",
            a.n,
            a.elem_bytes,
            a.messages,
            if a.overlap {
                "exchange overlapped with the update"
            } else {
                "no overlap"
            }
        ),
        update_text,
    ];
    if !a.weak && cfg.p_max > a.n {
        notes.push(format!(
            "beyond P = {} a rank has less than one row of the grid",
            a.n
        ));
    }
    let mut series = Vec::new();
    for net in &nets {
        let curve = Stencil {
            n: a.n,
            elem_bytes: a.elem_bytes,
            messages: a.messages,
            overlap: a.overlap,
            weak: a.weak,
            regimes: net.ranges(),
        };
        setup.push(format!(
            "{}: {}",
            net.name,
            net.describe_for(curve.message_bytes(if a.weak { cfg.p_max } else { 2.0 }))
        ));
        let mut params = vec![update.clone()];
        params.extend(net.params());
        let unc = Uncertainty::independent(params);
        series.push(analyse(&net.name, &curve, &unc, &cfg));
    }
    Ok(Report {
        kernel: "ghost-row stencil".into(),
        scaling: if a.weak { "weak" } else { "strong" }.into(),
        setup,
        config: cfg,
        series,
        fit: None,
        notes,
    })
}

/// A figure of the `lock` section: (t_crit, t_work) of the mutex, else the first kind.
fn lock_section(p: &Profile) -> (Option<Estimate>, Option<f64>) {
    let Some(kinds) = p
        .sections
        .get("lock")
        .and_then(|s| s.get("kinds"))
        .and_then(|k| k.as_array())
    else {
        return (None, None);
    };
    let kind = kinds
        .iter()
        .find(|k| k.get("kind").and_then(|v| v.as_str()) == Some("mutex"))
        .or(kinds.first());
    let Some(kind) = kind else {
        return (None, None);
    };
    let est = |v: &serde_json::Value| -> Option<Estimate> {
        if let Some(x) = v.as_f64() {
            return Some(Estimate::exact(x));
        }
        let g = |k: &str| v.get(k).and_then(|x| x.as_f64());
        let point = g("point").or(g("median"))?;
        Some(Estimate {
            point,
            lo: g("lo").or(g("ci_lo")).unwrap_or(point),
            hi: g("hi").or(g("ci_hi")).unwrap_or(point),
            std_err: g("std_err"),
        })
    };
    (
        kind.get("t_crit_s").and_then(est),
        kind.get("t_work_s").and_then(est).map(|e| e.point),
    )
}

fn binning_report(a: &ScalingArgs) -> anyhow::Result<Report> {
    for (name, v) in [("items", a.items), ("buckets", a.buckets)] {
        if !(v >= 1.0 && v.fract() == 0.0) {
            return Err(BadInput(format!(
                "--{name} = {v} is not accepted: it must be a whole number >= 1"
            ))
            .into());
        }
    }
    let profile = maybe_profile(a)?;
    let (lock_tc, lock_tw) = profile
        .as_ref()
        .map_or((None, None), |(p, _)| lock_section(p));
    let src = profile.as_ref().map_or("", |(_, s)| s.as_str()).to_string();
    let t_crit = match a.t_crit {
        Some(t) => Param::positive(
            "t_crit",
            "s",
            Estimate::exact(t.seconds("t-crit", a.clock)?),
            "--t-crit",
        ),
        None => match (
            lock_tc,
            profile.as_ref().and_then(|(p, _)| p.summary.t_crit_s),
        ) {
            (Some(e), _) => Param::positive("t_crit", "s", e, &format!("{src}: lock section")),
            (None, Some(t)) => Param::positive(
                "t_crit",
                "s",
                Estimate::exact(t),
                &format!("{src}: summary"),
            ),
            (None, None) => {
                return Err(match &profile {
                    None => missing_profile("binning needs t_crit"),
                    Some(_) => BadInput(format!(
                        "{src} has no lock figures; run `calibrate --only lock` or give --t-crit"
                    )),
                }
                .into())
            }
        },
    };
    let t_work = match a.t_work {
        Some(t) => Param::non_negative(
            "t_work",
            "s",
            Estimate::exact(t.seconds("t-work", a.clock)?),
            "--t-work",
        ),
        None => Param::non_negative(
            "t_work",
            "s",
            Estimate::exact(lock_tw.unwrap_or(0.0).max(0.0)),
            if lock_tw.is_some() {
                "profile: lock section"
            } else {
                "none measured: 0"
            },
        ),
    };
    let (p, psrc) = profile
        .as_ref()
        .ok_or_else(|| missing_profile("binning needs the memory bandwidth"))?;
    let level = dram(p);
    let b1 = level
        .and_then(|l| l.bandwidth_1t_Bps)
        .or(p.summary.stream_triad_1t_Bps.map(Estimate::exact))
        .ok_or_else(|| {
            BadInput(format!(
                "{psrc} has no one-thread memory bandwidth; run `calibrate --only stream`"
            ))
        })?;
    let ball = level
        .and_then(|l| l.bandwidth_Bps)
        .or(p.summary.stream_triad_Bps.map(Estimate::exact))
        .ok_or_else(|| {
            BadInput(format!(
                "{psrc} has no all-threads memory bandwidth; run `calibrate --only stream`"
            ))
        })?;
    let threads = p.provenance.threads.max(1) as f64;
    let cfg = config(a, 64f64.max(2.0 * threads))?;
    let params = vec![
        t_crit,
        t_work,
        Param::positive("B (1 thread)", "B/s", b1, &format!("{psrc}: DRAM")),
        Param::positive(
            &format!("B ({threads} threads)"),
            "B/s",
            ball,
            &format!("{psrc}: DRAM"),
        ),
    ];
    let unc = Uncertainty::independent(params);
    let setup = vec![
        format!(
            "{} items into {} buckets; the data-parallel sort moves {} B per item at min(P·B_1thread, B_all)",
            a.items, a.buckets, a.sort_bytes
        ),
        format!("bandwidth saturates beyond the {threads} threads the profile measured"),
    ];
    let series = [
        Strategy::GlobalLock,
        Strategy::BucketLocks,
        Strategy::DataParallel,
    ]
    .into_iter()
    .map(|s| {
        let curve = Binning {
            strategy: s,
            items: a.items,
            buckets: a.buckets,
            sort_bytes: a.sort_bytes,
        };
        analyse(&s.name(a.buckets), &curve, &unc, &cfg)
    })
    .collect();
    Ok(Report {
        kernel: "binning".into(),
        scaling: "strong".into(),
        setup,
        config: cfg,
        series,
        fit: None,
        notes: Vec::new(),
    })
}

fn fit_report(a: &ScalingArgs, path: &Path) -> anyhow::Result<Report> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read {source}: {e}")))?;
    let runs = fit::read_runs(&text, &source)?;
    let p_hi = runs.iter().map(|r| r.p).fold(1.0, f64::max);
    let p_lo = runs.iter().map(|r| r.p).fold(f64::INFINITY, f64::min);
    let mut a2 = a.clone();
    a2.p_min = a.p_min.or(Some(p_lo.max(1.0)));
    let cfg = config(&a2, 16.0 * p_hi)?;
    let f = fit::fit_runs(runs, &source)?;
    let unc = fit::uncertainty(&f, &source);
    let short = path
        .file_name()
        .map_or_else(|| source.clone(), |n| n.to_string_lossy().into_owned());
    let series = vec![analyse(&format!("fit of {short}"), &AmdahlComm, &unc, &cfg)];
    Ok(Report {
        kernel: "fit".into(),
        scaling: "strong".into(),
        setup: vec![format!(
            "{} runs from P = {} to {}; extrapolated to P = {}",
            f.runs.len(),
            report::fmt_p(p_lo),
            report::fmt_p(p_hi),
            report::fmt_p(cfg.p_max)
        )],
        config: cfg,
        series,
        fit: Some(f),
        notes: Vec::new(),
    })
}

/// Computes the report `a` asks for (no output).
pub fn build(a: &ScalingArgs) -> anyhow::Result<Report> {
    match (&a.fit, a.kernel) {
        (Some(path), _) => fit_report(a, path),
        (None, KernelKind::Stencil) => stencil_report(a),
        (None, KernelKind::Binning) => binning_report(a),
    }
}

/// Runs `predict scaling`.
pub fn run(a: &ScalingArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let outputs = Outputs::open(a.out.as_deref(), a.csv.as_deref())?;
    let mut r = build(a)?;
    let fig = report::figure(&r, a.title.clone());
    let (warnings, written) = outputs.finish(&fig, || report::to_csv(&r))?;
    r.notes.extend(warnings);
    if a.json {
        let mut v = serde_json::to_value(&r)?;
        v["files"] = serde_json::json!(written);
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        write!(out, "{}", report::to_text(&r))?;
        for w in &written {
            writeln!(out, "wrote {w}")?;
        }
    }
    Ok(())
}
