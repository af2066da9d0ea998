//! `predict scaling`: where does strong scaling level off, with error bars.
//!
//! ```text
//! predict scaling [--kernel stencil|binning] [--profile FILE|NAME] [--n 4096] [--weak]
//!                 [--network t0=1.5us,bw=12.5GB/s[,name=N]]... [--network-profile FILE|NAME]...
//!                 [--efficiency 0.5] [--p-max P] [--draws 2000] [--seed 1]
//!                 [--json] [--csv FILE] [--out chart.svg|.png|.pdf]
//! predict scaling --fit runs.csv [--dims d --n N] [--comm msgs=2,bytes=4MB/P^0.5,allreduce=8B]
//!                 [--network ...]... [--network-profile ...]... [--overlap] [...]
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
//! * **Fit** of a user's runs (§4.6): the communication term chosen by
//!   AICc, bounded parameters with bootstrap intervals, and
//!   with `--comm` the code on each network: see [`fit`], [`comm`].
//!
//! Each calibrated parameter's interval is carried into the prediction by
//! Monte Carlo ([`uncertainty`]); the knees (P where communication equals
//! computation, where efficiency drops below the threshold, and of the best
//! time) are reported with 95% ranges ([`analysis`]).

pub mod analysis;
mod binning_plan;
pub mod chart;
pub mod comm;
pub mod curves;
pub mod fit;
mod fit_mode;
pub mod network;
pub mod report;
pub mod runs;
mod stencil_plan;
pub mod terms;
pub mod uncertainty;

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use models::profile::Profile;

use crate::args::Time;
use crate::error::BadInput;
use crate::profiles::DEFAULT_PROFILE;
use crate::roofline::Outputs;
use analysis::Config;
use network::NetworkSpec;
use report::Report;

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
    /// The kernel to model [default: stencil].
    #[arg(long, value_enum)]
    pub kernel: Option<KernelKind>,
    /// Fit T(P) = T1·(f + (1−f)/P) + c·g(P) to a CSV of runs (P, time[,
    /// comm_s]) of any code instead of modelling a kernel; g is chosen
    /// among none, const, log2P, sqrtP, P, PlogP and surface by AICc
    /// (6 or more runs at 4 or more different P; 4 at 3 with a comm_s
    /// column).
    #[arg(long)]
    pub fit: Option<PathBuf>,
    /// With --fit: what the code communicates per iteration, e.g.
    /// msgs=2,bytes=4MB/P^0.5,allreduce=8B,iters=100; the networks then
    /// apply to it.
    #[arg(long)]
    pub comm: Option<String>,
    /// With --fit and --n: dimensions d of the domain, for the
    /// surface-to-volume term (N/P)^((d−1)/d).
    #[arg(long, value_parser = crate::args::number)]
    pub dims: Option<f64>,

    /// Grid side N of the stencil (at P = 1 with --weak) [default: 4096];
    /// with --fit and --dims, the points N of the domain.
    #[arg(long, value_parser = crate::args::number)]
    pub n: Option<f64>,
    /// Bytes per grid element (4 for f32, as in the lecture) [default: 4].
    #[arg(long, value_parser = crate::args::bytes)]
    pub elem_bytes: Option<f64>,
    /// Memory traffic per element update; t_update = this / bandwidth per
    /// process (8 B: the tiled 5-point stencil of §4.4) [default: 8].
    #[arg(long, value_parser = crate::args::bytes)]
    pub bytes_per_update: Option<f64>,
    /// Time of one element update instead of bytes / bandwidth (e.g. 2cycles with --clock 3GHz).
    #[arg(long, value_parser = crate::args::time)]
    pub update_time: Option<Time>,
    /// Clock for times given in cycles.
    #[arg(long, value_parser = crate::args::frequency)]
    pub clock: Option<f64>,
    /// Ranks sharing one node's memory bandwidth (1: each rank gets the
    /// one-thread bandwidth) [default: 1].
    #[arg(long, value_parser = crate::args::number)]
    pub ranks_per_node: Option<f64>,
    /// Message start-ups charged per iteration (1 as in §4.1; 2 when the
    /// two ghost rows are sent one after the other) [default: 1].
    #[arg(long, value_parser = crate::args::number)]
    pub messages: Option<f64>,
    /// The exchange overlaps the interior update (with --fit: the --comm
    /// communication overlaps the parallel work): max(comp, comm).
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

    /// Items to bin [default: 4e6].
    #[arg(long, value_parser = crate::args::number)]
    pub items: Option<f64>,
    /// Buckets (and bucket locks) [default: 256].
    #[arg(long, value_parser = crate::args::number)]
    pub buckets: Option<f64>,
    /// Extra bytes per item the data-parallel sort moves (20 in §3.5)
    /// [default: 20].
    #[arg(long, value_parser = crate::args::bytes)]
    pub sort_bytes: Option<f64>,
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

impl ScalingArgs {
    /// The kernel, stencil unless given.
    pub fn kernel(&self) -> KernelKind {
        self.kernel.unwrap_or(KernelKind::Stencil)
    }
    /// Grid side N.
    pub fn n(&self) -> f64 {
        self.n.unwrap_or(4096.0)
    }
    /// Bytes per grid element.
    pub fn elem_bytes(&self) -> f64 {
        self.elem_bytes.unwrap_or(4.0)
    }
    /// Memory traffic per element update.
    pub fn bytes_per_update(&self) -> f64 {
        self.bytes_per_update.unwrap_or(8.0)
    }
    /// Ranks sharing one node's memory bandwidth.
    pub fn ranks_per_node(&self) -> f64 {
        self.ranks_per_node.unwrap_or(1.0)
    }
    /// Message start-ups per iteration.
    pub fn messages(&self) -> f64 {
        self.messages.unwrap_or(1.0)
    }
    /// Items to bin.
    pub fn items(&self) -> f64 {
        self.items.unwrap_or(4e6)
    }
    /// Buckets.
    pub fn buckets(&self) -> f64 {
        self.buckets.unwrap_or(256.0)
    }
    /// Extra bytes per item of the data-parallel sort.
    pub fn sort_bytes(&self) -> f64 {
        self.sort_bytes.unwrap_or(20.0)
    }
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

/// Computes the report `a` asks for (no output).
pub fn build(a: &ScalingArgs) -> anyhow::Result<Report> {
    if a.fit.is_none() {
        if a.comm.is_some() {
            return Err(BadInput(
                "--comm describes your own code's communication: it needs --fit runs.csv".into(),
            )
            .into());
        }
        if a.dims.is_some() {
            return Err(BadInput(
                "--dims is the domain of --fit's surface term: it needs --fit runs.csv".into(),
            )
            .into());
        }
    }
    match (&a.fit, a.kernel()) {
        (Some(path), _) => fit_mode::fit_report(a, path),
        (None, KernelKind::Stencil) => stencil_plan::stencil_report(a),
        (None, KernelKind::Binning) => binning_plan::binning_report(a),
    }
}

/// Runs `predict scaling`.
pub fn run(a: &ScalingArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let outputs = Outputs::open(a.out.as_deref(), a.csv.as_deref())?;
    let mut r = build(a)?;
    let fig = chart::figure(&r, a.title.clone());
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
