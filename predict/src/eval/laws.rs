//! `eval amdahl`, `eval karp-flatt`, `eval work-span`, `eval roofline`.

use clap::Args;
use models::roofline::{Bound, Roofline};
use models::speedup::{
    amdahl_limit, amdahl_speedup, efficiency, gustafson_speedup, karp_flatt as kf,
};
use models::work_span::bounds;

use super::derivation::{plain, show, Derivation};
use super::Figures;
use crate::args;

/// Amdahl's law (and Gustafson's for comparison).
#[derive(Debug, Args)]
pub struct AmdahlArgs {
    /// Serial fraction f in [0, 1].
    #[arg(long, value_parser = args::number)]
    pub serial_fraction: f64,
    /// Processors P.
    #[arg(long, value_parser = args::number)]
    pub p: f64,
}

pub fn amdahl(a: &AmdahlArgs) -> anyhow::Result<Derivation> {
    let (f, p) = (a.serial_fraction, a.p);
    let s = amdahl_speedup(f, p)?;
    let mut d = Derivation::new("amdahl", "Amdahl's law (lecture §4.6)");
    d.input("serial_fraction", f, "").input("p", p, "");
    d.num(
        "speedup",
        "S(P) = 1 / (f + (1 − f)/P)",
        format!("1 / ({} + (1 − {})/{})", plain(f), plain(f), plain(p)),
        s,
        "",
    );
    d.num(
        "limit",
        "1/f (P → ∞)",
        format!("1 / {}", plain(f)),
        amdahl_limit(f)?,
        "",
    );
    d.num(
        "efficiency",
        "S/P",
        format!("{} / {}", plain(s), plain(p)),
        efficiency(s, p)?,
        "",
    );
    d.num(
        "gustafson_speedup",
        "P − f·(P − 1) (work grows with P)",
        format!("{} − {}·({} − 1)", plain(p), plain(f), plain(p)),
        gustafson_speedup(f, p)?,
        "",
    );
    Ok(d)
}

/// The Karp–Flatt serial fraction from a measured speed-up.
#[derive(Debug, Args)]
pub struct KarpFlattArgs {
    /// Measured speed-up S.
    #[arg(long, value_parser = args::number)]
    pub speedup: f64,
    /// Processors P ≥ 2.
    #[arg(long, value_parser = args::number)]
    pub p: f64,
}

pub fn karp_flatt(a: &KarpFlattArgs) -> anyhow::Result<Derivation> {
    let (s, p) = (a.speedup, a.p);
    let mut d = Derivation::new(
        "karp-flatt",
        "Karp–Flatt experimentally determined serial fraction (lecture §4.6)",
    );
    d.input("speedup", s, "").input("p", p, "");
    d.num(
        "serial_fraction",
        "e = (1/S − 1/P) / (1 − 1/P)",
        format!("(1/{} − 1/{}) / (1 − 1/{})", plain(s), plain(p), plain(p)),
        kf(s, p)?,
        "",
    );
    Ok(d)
}

/// Greedy-scheduling bounds from work and span.
#[derive(Debug, Args)]
pub struct WorkSpanArgs {
    /// Total work W (operations or time).
    #[arg(long, value_parser = args::number)]
    pub work: f64,
    /// Span S, the critical path, same unit as W.
    #[arg(long, value_parser = args::number)]
    pub span: f64,
    /// Processors P.
    #[arg(long, value_parser = args::number)]
    pub p: f64,
}

pub fn work_span(a: &WorkSpanArgs) -> anyhow::Result<Derivation> {
    let (w, s, p) = (a.work, a.span, a.p);
    let b = bounds(w, s, p)?;
    let mut d = Derivation::new(
        "work-span",
        "work-span model, greedy scheduling (lecture §4.2)",
    );
    d.input("work", w, "")
        .input("span", s, "")
        .input("p", p, "");
    d.num(
        "time_lower_bound",
        "T_P ≥ max(W/P, S)",
        format!("max({}/{}, {})", plain(w), plain(p), plain(s)),
        b.time_lower_bound,
        "",
    );
    d.num(
        "time_upper_bound",
        "T_P ≤ W/P + S",
        format!("{}/{} + {}", plain(w), plain(p), plain(s)),
        b.time_upper_bound,
        "",
    );
    d.num(
        "parallelism",
        "W/S",
        format!("{} / {}", plain(w), plain(s)),
        b.parallelism,
        "",
    );
    d.num(
        "efficiency_lower_bound",
        "(W/P)/T_P ≥ 1/(1 + S·P/W)",
        format!("1 / (1 + {}·{}/{})", plain(s), plain(p), plain(w)),
        b.efficiency_lower_bound,
        "",
    );
    if p > b.parallelism {
        d.note("P exceeds the parallelism W/S: extra processors cannot be kept busy");
    }
    Ok(d)
}

/// The two-line Roofline at one arithmetic intensity.
#[derive(Debug, Args)]
pub struct RooflineArgs {
    /// Peak compute, e.g. 768GFLOP/s [default: the profile's fastest
    /// ceiling of --precision on all threads].
    #[arg(long, value_parser = args::flop_rate)]
    pub peak_flops: Option<f64>,
    /// Memory bandwidth, e.g. 20GB/s [default: the profile's stream_triad_Bps].
    #[arg(long, value_parser = args::bandwidth)]
    pub bandwidth: Option<f64>,
    /// Precision of the profile's ceiling when --peak-flops is left out.
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    pub precision: String,
    /// Arithmetic intensity, flop per byte.
    #[arg(long, value_parser = args::number)]
    pub ai: f64,
}

pub fn roofline(a: &RooflineArgs, f: &Figures) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new("roofline", "Roofline model (lecture §4.4)");
    let peak = f.peak_flops(&mut d, a.peak_flops, &a.precision)?;
    let bandwidth = f.value(&mut d, a.bandwidth, "bandwidth", "stream_triad_Bps", "B/s")?;
    let r = Roofline::simple(peak, bandwidth)?;
    let mem = &r.memory[0];
    let at = r.attainable(a.ai, mem)?;
    d.input("peak_flops", peak, "FLOP/s")
        .input("bandwidth_Bps", bandwidth, "B/s")
        .input("ai", a.ai, "flop/B");
    d.num(
        "attainable_flops",
        "min(peak, AI·B)",
        format!(
            "min({}, {}·{})",
            show(peak, "FLOP/s"),
            plain(a.ai),
            show(bandwidth, "B/s")
        ),
        at.flops,
        "FLOP/s",
    );
    let ridge = d.num(
        "ridge_ai",
        "I_ridge = peak / B",
        format!("{} / {}", show(peak, "FLOP/s"), show(bandwidth, "B/s")),
        r.ridge_ai(mem),
        "flop/B",
    );
    d.num(
        "fraction_of_peak",
        "attainable / peak",
        format!("{} / {}", show(at.flops, "FLOP/s"), show(peak, "FLOP/s")),
        at.flops / peak,
        "",
    );
    let bound = match at.bound {
        Bound::Memory => "memory",
        Bound::Compute => "compute",
    };
    let cmp = if at.bound == Bound::Memory { "<" } else { ">=" };
    d.verdict(
        "bound",
        "memory if AI < I_ridge, else compute",
        format!("{} {cmp} {}", plain(a.ai), plain(ridge)),
        bound,
    );
    Ok(d)
}
