//! `eval pipeline`, `eval overlap`, `eval ridge-block`, `eval mlp`,
//! `eval message-size`: the lecture's remaining formulas (§2.1, §2.2,
//! §4.3, §4.4).

use clap::Args;
use models::alpha_beta::{bytes_for_fraction, AlphaBeta, CommBreakdown};
use models::little::{lines_per_s, mlp_per_core, outstanding_lines, LINE_BYTES};
use models::pipeline::pipeline as pipe;
use models::roofline::ridge_block_side;

use super::derivation::{plain, q, Derivation};
use super::Figures;
use crate::args::{self, Time};

/// Latency and throughput of a pipeline (§2.1).
#[derive(Debug, Args)]
pub struct PipelineArgs {
    /// Stages.
    #[arg(long, value_parser = args::number)]
    pub stages: f64,
    /// Time of one stage, e.g. 1ns or 1cycles (with --clock).
    #[arg(long, value_parser = args::time)]
    pub stage_time: Time,
    /// Items pushed through.
    #[arg(long, default_value = "1", value_parser = args::number)]
    pub items: f64,
    /// One slower stage, which sets the throughput.
    #[arg(long, value_parser = args::time)]
    pub slowest_stage: Option<Time>,
    /// Clock for times in cycles.
    #[arg(long, value_parser = args::frequency)]
    pub clock: Option<f64>,
}

pub fn pipeline(a: &PipelineArgs) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new(
        "pipeline",
        "pipelining: latency against throughput (lecture §2.1)",
    );
    let t = a.stage_time.seconds("stage-time", a.clock)?;
    let slow = a
        .slowest_stage
        .map(|s| s.seconds("slowest-stage", a.clock))
        .transpose()?;
    let p = pipe(a.stages, t, a.items, slow)?;
    let ts = slow.unwrap_or(t);
    d.input("stages", a.stages, "")
        .input("stage_time_s", t, "s")
        .input("items", a.items, "")
        .input_opt("slowest_stage_s", slow, "s")
        .input_opt("clock_hz", a.clock, "Hz");
    d.num(
        "latency_s",
        "L = (stages − 1)·t_stage + t_slowest (one item through every stage)",
        format!("({} − 1)·{} + {}", plain(a.stages), q(t, "s"), q(ts, "s")),
        p.latency_s,
        "s",
    );
    d.num(
        "throughput_per_s",
        "X = 1 / t_slowest (steady state)",
        format!("1 / {}", q(ts, "s")),
        p.throughput_per_s,
        "/s",
    );
    d.num(
        "time_s",
        "T = L + (items − 1)·t_slowest",
        format!(
            "{} + ({} − 1)·{}",
            q(p.latency_s, "s"),
            plain(a.items),
            q(ts, "s")
        ),
        p.time_s,
        "s",
    );
    d.num(
        "unpipelined_s",
        "items·L (each item waits for the previous one)",
        format!("{}·{}", plain(a.items), q(p.latency_s, "s")),
        p.unpipelined_s,
        "s",
    );
    Ok(d)
}

/// Communication time and cost: overhead + occupancy + network delay − overlap (§2.2).
#[derive(Debug, Args)]
pub struct OverlapArgs {
    /// Processor time spent on the communication (call, copy).
    #[arg(long, value_parser = args::time)]
    pub overhead: Time,
    /// Time the data occupies the slowest component.
    #[arg(long, value_parser = args::time)]
    pub occupancy: Time,
    /// Every other delay in flight (network delay).
    #[arg(long, value_parser = args::time)]
    pub latency: Time,
    /// Part of the communication hidden behind computation.
    #[arg(long, default_value = "0s", value_parser = args::time)]
    pub overlap: Time,
}

pub fn overlap(a: &OverlapArgs) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new(
        "overlap",
        "communication time and its cost to the processor (lecture §2.2)",
    );
    let (o, c, l, v) = (
        a.overhead.seconds("overhead", None)?,
        a.occupancy.seconds("occupancy", None)?,
        a.latency.seconds("latency", None)?,
        a.overlap.seconds("overlap", None)?,
    );
    let b = CommBreakdown::new(o, c, l)?;
    d.input("overhead_s", o, "s")
        .input("occupancy_s", c, "s")
        .input("latency_s", l, "s")
        .input("overlap_s", v, "s");
    let total = d.num(
        "time_s",
        "T = overhead + occupancy + network delay",
        format!("{} + {} + {}", q(o, "s"), q(c, "s"), q(l, "s")),
        b.total_s(),
        "s",
    );
    d.num(
        "cost_s",
        "cost = T − overlap (the part the processor waits for)",
        format!("{} − {}", q(total, "s"), q(v, "s")),
        b.cost_s(v)?,
        "s",
    );
    d.num(
        "pipelined_rate_per_s",
        "1 / occupancy (messages in flight overlap everything else)",
        format!("1 / {}", q(c, "s")),
        models::alpha_beta::pipelined_rate(c)?,
        "/s",
    );
    Ok(d)
}

/// Block side a blocked matrix multiply needs to reach the ridge point (§4.4).
#[derive(Debug, Args)]
pub struct RidgeBlockArgs {
    /// Peak compute [default: the profile's ceiling of the elements'
    /// precision: f32 for 4-byte elements, as the lecture, f64 for 8].
    #[arg(long, value_parser = args::flop_rate)]
    pub peak_flops: Option<f64>,
    /// Memory bandwidth [default: the profile's stream_triad_Bps].
    #[arg(long, value_parser = args::bandwidth)]
    pub bandwidth: Option<f64>,
    /// Bytes per element.
    #[arg(long, default_value = "4", value_parser = args::bytes)]
    pub elem_bytes: f64,
}

pub fn ridge_block(a: &RidgeBlockArgs, f: &Figures) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new(
        "ridge-block",
        "block size of a blocked matrix multiply that reaches the ridge point (lecture §4.4)",
    );
    let precision = match a.elem_bytes {
        4.0 => "f32",
        8.0 => "f64",
        _ if a.peak_flops.is_some() => "",
        other => {
            return Err(crate::error::BadInput(format!(
                "--elem-bytes {other}: no profile ceiling has elements of that size (4 B: f32, 8 B: f64); give --peak-flops"
            ))
            .into())
        }
    };
    let peak = f.peak_flops(&mut d, a.peak_flops, precision)?;
    let bw = f.value(&mut d, a.bandwidth, "bandwidth", "stream_triad_Bps", "B/s")?;
    d.input("peak_flops", peak, "FLOP/s")
        .input("bandwidth_Bps", bw, "B/s")
        .input("elem_bytes", a.elem_bytes, "B");
    let ridge = d.num(
        "ridge_ai",
        "I_ridge = peak / B",
        format!("{} / {}", q(peak, "FLOP/s"), q(bw, "B/s")),
        peak / bw,
        "flop/B",
    );
    let b = d.num(
        "block_side",
        "b = elem·I_ridge (AI of a b×b blocked multiply = b/elem flop/B)",
        format!("{}·{}", plain(a.elem_bytes), plain(ridge)),
        ridge_block_side(peak, bw, a.elem_bytes)?,
        "",
    );
    d.num(
        "block_side_whole",
        "⌈b⌉ (a whole number of elements)",
        format!("⌈{}⌉", plain(b)),
        b.ceil(),
        "",
    );
    d.num(
        "block_bytes",
        "3·⌈b⌉²·elem (three blocks that must stay in cache)",
        format!("3·{}²·{}", plain(b.ceil()), q(a.elem_bytes, "B")),
        3.0 * b.ceil() * b.ceil() * a.elem_bytes,
        "B",
    );
    Ok(d)
}

/// Line transfers per second and misses in flight per core (§4.3).
#[derive(Debug, Args)]
pub struct MlpArgs {
    /// Bandwidth to sustain [default: the profile's stream_triad_Bps].
    #[arg(long, value_parser = args::bandwidth)]
    pub bandwidth: Option<f64>,
    /// Memory latency [default: the profile's dram_latency_s].
    #[arg(long, value_parser = args::time)]
    pub latency: Option<Time>,
    /// Cores sharing the work.
    #[arg(long, value_parser = args::number)]
    pub cores: f64,
    /// Clock, to give the latency in cycles.
    #[arg(long, value_parser = args::frequency)]
    pub clock: Option<f64>,
    /// Bytes per request (cache line).
    #[arg(long, default_value_t = LINE_BYTES, value_parser = args::bytes)]
    pub line_bytes: f64,
}

pub fn mlp(a: &MlpArgs, f: &Figures) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new("mlp", "memory-level parallelism per core (lecture §4.3)");
    let l = f.time(&mut d, a.latency, "latency", "dram_latency_s", a.clock)?;
    let bw = f.value(&mut d, a.bandwidth, "bandwidth", "stream_triad_Bps", "B/s")?;
    let line = a.line_bytes;
    d.input("bandwidth_Bps", bw, "B/s")
        .input("latency_s", l, "s")
        .input("cores", a.cores, "")
        .input("line_bytes", line, "B")
        .input_opt("clock_hz", a.clock, "Hz");
    let rate = d.num(
        "lines_per_s",
        "B / line",
        format!("{} / {}", q(bw, "B/s"), q(line, "B")),
        lines_per_s(bw, line)?,
        "/s",
    );
    let total = d.num(
        "outstanding_lines",
        "MLP = lines/s · L",
        format!("({})·{}", q(rate, "/s"), q(l, "s")),
        outstanding_lines(bw, l, line)?,
        "",
    );
    d.num(
        "outstanding_per_core",
        "MLP / cores",
        format!("{} / {}", plain(total), plain(a.cores)),
        mlp_per_core(total, a.cores)?,
        "",
    );
    d.num(
        "one_miss_bandwidth_Bps",
        "line / L (one miss in flight, strictly sequential code)",
        format!("{} / {}", q(line, "B"), q(l, "s")),
        line / l,
        "B/s",
    );
    Ok(d)
}

/// Message size reaching a given fraction of the link bandwidth (§2.2, §4.1).
#[derive(Debug, Args)]
pub struct MessageSizeArgs {
    /// Start-up latency T0 [default: the profile's mpi_t0_s].
    #[arg(long, value_parser = args::time)]
    pub t0: Option<Time>,
    /// Link bandwidth B [default: the profile's mpi_bandwidth_Bps].
    #[arg(long, value_parser = args::bandwidth)]
    pub bandwidth: Option<f64>,
    /// Fraction of B to reach, in (0, 1), e.g. 0.9.
    #[arg(long, value_parser = args::number)]
    pub fraction: f64,
    /// Clock for T0 in cycles.
    #[arg(long, value_parser = args::frequency)]
    pub clock: Option<f64>,
}

pub fn message_size(a: &MessageSizeArgs, f: &Figures) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new(
        "message-size",
        "message size for a fraction of the link bandwidth (lecture §2.2, §4.1)",
    );
    let t0 = f.time(&mut d, a.t0, "t0", "mpi_t0_s", a.clock)?;
    let b = f.value(&mut d, a.bandwidth, "bandwidth", "mpi_bandwidth_Bps", "B/s")?;
    let net = AlphaBeta::new(t0, b)?;
    let n = bytes_for_fraction(&net, a.fraction)?;
    d.input("t0_s", t0, "s")
        .input("bandwidth_Bps", b, "B/s")
        .input("fraction", a.fraction, "")
        .input_opt("clock_hz", a.clock, "Hz");
    d.num(
        "bytes",
        "n = f·T0·B / (1 − f) (from n/(T0 + n/B) = f·B)",
        format!(
            "{}·{}·{} / (1 − {})",
            plain(a.fraction),
            q(t0, "s"),
            q(b, "B/s"),
            // As given: a fraction near 1 rounded would read as 1 − 1.
            models::units::exact(a.fraction)
        ),
        n,
        "B",
    );
    d.num(
        "check_fraction",
        "(n / (T0 + n/B)) / B",
        format!(
            "({} / ({} + {} / {})) / {}",
            q(n, "B"),
            q(t0, "s"),
            q(n, "B"),
            q(b, "B/s"),
            q(b, "B/s")
        ),
        net.fraction_of_peak(n),
        "",
    );
    Ok(d)
}
