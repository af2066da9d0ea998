//! `eval amdahl`, `eval karp-flatt`, `eval work-span`, `eval roofline`.

use clap::Args;
use models::roofline::{Bound, Roofline};
use models::speedup::{
    amdahl_limit, amdahl_speedup, efficiency, gustafson_speedup, karp_flatt as kf,
};
use models::work_span::bounds;

use super::derivation::{plain, q, Derivation};
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
    let f = a.serial_fraction;
    let p = models::error::count("p", a.p)?;
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
    let limit = amdahl_limit(f)?;
    if limit.is_finite() {
        d.num(
            "limit",
            "1/f (P → ∞)",
            format!("1 / {}", plain(f)),
            limit,
            "",
        );
    } else {
        d.absent(
            None,
            "limit",
            "1/f (P → ∞)",
            "f = 0: no serial part, the speed-up grows without bound",
        );
    }
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
    let (s, p) = (a.speedup, models::error::count("p", a.p)?);
    let mut d = Derivation::new(
        "karp-flatt",
        "Karp–Flatt experimentally determined serial fraction (lecture §4.6)",
    );
    d.input("speedup", s, "").input("p", p, "");
    let e = d.num(
        "serial_fraction",
        "e = (1/S − 1/P) / (1 − 1/P)",
        format!("(1/{} − 1/{}) / (1 − 1/{})", plain(s), plain(p), plain(p)),
        kf(s, p)?,
        "",
    );
    if s > p {
        d.warn(format!(
            "S = {} > P = {}: a superlinear speed-up, so e = {} < 0 is no serial fraction; more processors brought more cache (the working set fits once split) or the serial baseline was slow",
            plain(s),
            plain(p),
            plain(e)
        ));
    } else if s < 1.0 {
        d.warn(format!(
            "S = {} < 1: the parallel run is slower than the serial one, so e = {} > 1 is no serial fraction; overheads (communication, contention, start-up) exceed the work saved",
            plain(s),
            plain(e)
        ));
    }
    Ok(d)
}

/// Greedy-scheduling bounds from work and span.
#[derive(Debug, Args)]
pub struct WorkSpanArgs {
    /// Total work W: a plain number of operations, or of time steps in any one unit.
    #[arg(long, value_parser = args::number)]
    pub work: f64,
    /// Span S, the critical path, a plain number in the unit of W.
    #[arg(long, value_parser = args::number)]
    pub span: f64,
    /// Processors P.
    #[arg(long, value_parser = args::number)]
    pub p: f64,
}

pub fn work_span(a: &WorkSpanArgs) -> anyhow::Result<Derivation> {
    let (w, s) = (a.work, a.span);
    let p = models::error::count("p", a.p)?;
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
    /// Precision of the profile's ceiling when --peak-flops is left out:
    /// f32 by default, as the lecture's example (768 GFLOP/s over 20 GB/s,
    /// ridge 38.4 flop/B) and its 4-byte elements.
    #[arg(long, default_value = "f32", value_parser = ["f64", "f32"], conflicts_with = "peak_flops")]
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
        .input("ai", a.ai, "flop/B")
        .word(
            "precision",
            if a.peak_flops.is_some() {
                "that of --peak-flops"
            } else {
                &a.precision
            },
        );
    if a.peak_flops.is_none() {
        d.note(format!(
            "the peak is the profile's {} ceiling (--precision {}; the lecture's Roofline uses single precision)",
            a.precision, a.precision
        ));
    }
    d.num(
        "attainable_flops",
        "min(peak, AI·B)",
        format!(
            "min({}, {}·{})",
            q(peak, "FLOP/s"),
            plain(a.ai),
            q(bandwidth, "B/s")
        ),
        at.flops,
        "FLOP/s",
    );
    let ridge = d.num(
        "ridge_ai",
        "I_ridge = peak / B",
        format!("{} / {}", q(peak, "FLOP/s"), q(bandwidth, "B/s")),
        r.ridge_ai(mem),
        "flop/B",
    );
    d.num(
        "fraction_of_peak",
        "attainable / peak",
        format!("{} / {}", q(at.flops, "FLOP/s"), q(peak, "FLOP/s")),
        at.flops / peak,
        "",
    );
    let bound = match at.bound {
        Bound::Memory => "memory",
        Bound::Compute => "compute",
    };
    let cmp = if at.bound == Bound::Memory {
        "<"
    } else {
        "≥"
    };
    d.verdict(
        "bound",
        "memory if AI < I_ridge, else compute",
        format!("{} {cmp} {}", plain(a.ai), plain(ridge)),
        bound,
    );
    Ok(d)
}
