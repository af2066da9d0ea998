//! `eval alpha-beta`, `eval little`, `eval stencil-scaling`.

use clap::Args;
use models::alpha_beta::AlphaBeta;
use models::little::{bandwidth_from_concurrency, outstanding_lines, LINE_BYTES};
use models::stencil::GhostStencil;

use super::derivation::{plain, q, Derivation};
use super::Figures;
use crate::args::{self, Time};

/// T(n) = T0 + n/B for K messages of n bytes.
#[derive(Debug, Args)]
pub struct AlphaBetaArgs {
    /// Start-up latency T0, e.g. 2us [default: the profile's mpi_t0_s].
    #[arg(long, value_parser = args::time)]
    pub t0: Option<Time>,
    /// Link bandwidth B, e.g. 6.4GB/s [default: the profile's mpi_bandwidth_Bps].
    #[arg(long, value_parser = args::bandwidth)]
    pub bandwidth: Option<f64>,
    /// Bytes per message n, e.g. 32KiB.
    #[arg(long, value_parser = args::bytes)]
    pub bytes: f64,
    /// Messages K sent one after another.
    #[arg(long, default_value = "1", value_parser = args::number)]
    pub messages: f64,
    /// Clock, to give T0 in cycles.
    #[arg(long, value_parser = args::frequency)]
    pub clock: Option<f64>,
}

pub fn alpha_beta(a: &AlphaBetaArgs, f: &Figures) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new(
        "alpha-beta",
        "alpha-beta model T(n) = T0 + n/B (lecture §2.2, §4.1)",
    );
    let t0 = f.time(&mut d, a.t0, "t0", "mpi_t0_s", a.clock)?;
    let b = f.value(&mut d, a.bandwidth, "bandwidth", "mpi_bandwidth_Bps", "B/s")?;
    let net = AlphaBeta::new(t0, b)?;
    let (n, k) = (models::error::positive("bytes", a.bytes)?, a.messages);
    models::error::count("messages", k)?;
    d.input("t0_s", t0, "s")
        .input("bandwidth_Bps", b, "B/s")
        .input("bytes", n, "B")
        .input("messages", k, "")
        .input_opt("clock_hz", a.clock, "Hz");
    let one = net.time_s(n);
    let time = d.num(
        "time_s",
        "T = K·(T0 + n/B)",
        format!(
            "{}·({} + {} / {})",
            plain(k),
            q(t0, "s"),
            q(n, "B"),
            q(b, "B/s")
        ),
        net.sequential_messages_time_s(k, n)?,
        "s",
    );
    let eff = d.num(
        "effective_bandwidth_Bps",
        "BW_eff = K·n / T",
        format!("{}·{} / {}", plain(k), q(n, "B"), q(time, "s")),
        k * n / time,
        "B/s",
    );
    d.num(
        "fraction_of_peak",
        "BW_eff / B",
        format!("{} / {}", q(eff, "B/s"), q(b, "B/s")),
        eff / b,
        "",
    );
    d.num(
        "half_peak_bytes",
        "n½ = T0·B (size reaching half of B)",
        format!("{} · {}", q(t0, "s"), q(b, "B/s")),
        net.half_peak_bytes(),
        "B",
    );
    {
        let coalesced = d.num(
            "coalesced_time_s",
            "T1 = T0 + K·n/B (one message with all the bytes)",
            format!(
                "{} + {}·{} / {}",
                q(t0, "s"),
                plain(k),
                q(n, "B"),
                q(b, "B/s")
            ),
            net.time_s(k * n),
            "s",
        );
        d.num(
            "coalescing_gain",
            "T / T1",
            format!("{} / {}", q(time, "s"), q(coalesced, "s")),
            time / coalesced,
            "",
        );
    }
    message_rate(&mut d, &net, n, one);
    Ok(d)
}

/// Little's law: MLP = B·L / line, or B = MLP·line / L.
#[derive(Debug, Args)]
pub struct LittleArgs {
    /// Bandwidth to sustain, e.g. 20GB/s (gives outstanding_lines)
    /// [default: the profile's stream_triad_Bps].
    #[arg(long, value_parser = args::bandwidth, conflicts_with = "outstanding")]
    pub bandwidth: Option<f64>,
    /// Requests in flight (gives bandwidth_Bps).
    #[arg(long, value_parser = args::number)]
    pub outstanding: Option<f64>,
    /// Memory latency L, e.g. 66.7ns or 200cycles (with --clock)
    /// [default: the profile's dram_latency_s].
    #[arg(long, value_parser = args::time)]
    pub latency: Option<Time>,
    /// Clock, to give the latency in cycles, e.g. 3GHz.
    #[arg(long, value_parser = args::frequency)]
    pub clock: Option<f64>,
    /// Bytes per request (cache line).
    #[arg(long, default_value_t = LINE_BYTES, value_parser = args::bytes)]
    pub line_bytes: f64,
}

pub fn little(a: &LittleArgs, f: &Figures) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new(
        "little",
        "Little's law: concurrency = bandwidth × latency (lecture §4.3)",
    );
    let l = f.time(&mut d, a.latency, "latency", "dram_latency_s", a.clock)?;
    let line = a.line_bytes;
    let bandwidth = match a.outstanding {
        Some(_) => None,
        None => Some(f.value(&mut d, a.bandwidth, "bandwidth", "stream_triad_Bps", "B/s")?),
    };
    d.input("latency_s", l, "s")
        .input("line_bytes", line, "B")
        .input_opt("bandwidth_Bps", bandwidth, "B/s")
        .input_opt("outstanding", a.outstanding, "")
        .input_opt("clock_hz", a.clock, "Hz");
    if let Some(b) = bandwidth {
        d.absent(
            None,
            "bandwidth_Bps",
            "B = MLP·line / L",
            "the bandwidth is given",
        );
        d.num(
            "outstanding_lines",
            "MLP = B·L / line",
            format!("{} · {} / {}", q(b, "B/s"), q(l, "s"), q(line, "B")),
            outstanding_lines(b, l, line)?,
            "",
        );
    } else if let Some(k) = a.outstanding {
        d.absent(
            None,
            "outstanding_lines",
            "MLP = B·L / line",
            "the concurrency is given",
        );
        d.num(
            "bandwidth_Bps",
            "B = MLP·line / L",
            format!("{} · {} / {}", plain(k), q(line, "B"), q(l, "s")),
            bandwidth_from_concurrency(k, l, line)?,
            "B/s",
        );
    }
    Ok(d)
}

/// Memory traffic of one update of the tiled 5-point stencil, one read
/// and one write of a 4-byte element (§4.4), for a profile-derived
/// t_update.
const UPDATE_BYTES: f64 = 8.0;

/// Strong or weak scaling of the ghost-row stencil (§4.1, §4.2).
#[derive(Debug, Args)]
pub struct StencilArgs {
    /// Grid side N.
    #[arg(long, value_parser = args::number)]
    pub n: f64,
    /// Processors P.
    #[arg(long, value_parser = args::number)]
    pub p: f64,
    /// Start-up latency T0 [default: the profile's mpi_t0_s].
    #[arg(long, value_parser = args::time)]
    pub t0: Option<Time>,
    /// Network bandwidth B [default: the profile's mpi_bandwidth_Bps].
    #[arg(long, value_parser = args::bandwidth)]
    pub bandwidth: Option<f64>,
    /// Time per element update, e.g. 0.667ns or 2cycles (with --clock)
    /// [default: 8 B over the profile's stream_triad_1t_Bps].
    #[arg(long, value_parser = args::time)]
    pub update_time: Option<Time>,
    /// Clock for times in cycles.
    #[arg(long, value_parser = args::frequency)]
    pub clock: Option<f64>,
    /// Bytes per element.
    #[arg(long, default_value = "4", value_parser = args::bytes)]
    pub elem_bytes: f64,
    /// Start-ups per iteration: 1 as in the lecture's example, which charges
    /// one T0 for both rows (2 when the rows go one after the other).
    #[arg(long, default_value = "1", value_parser = args::number)]
    pub messages: f64,
    /// Overlap the exchange with the interior update: max(compute, comm).
    #[arg(long)]
    pub overlap: bool,
    /// Weak scaling: N grows as N·√P so the work per processor stays fixed.
    #[arg(long)]
    pub weak: bool,
}

pub fn stencil(a: &StencilArgs, f: &Figures) -> anyhow::Result<Derivation> {
    let kind = if a.weak { "weak" } else { "strong" };
    let mut d = Derivation::new(
        "stencil-scaling",
        format!("ghost-row stencil, {kind} scaling, 1D blocked rows (lecture §3.1, §4.1, §4.2)"),
    );
    let t0 = f.time(&mut d, a.t0, "t0", "mpi_t0_s", a.clock)?;
    let bandwidth = f.value(&mut d, a.bandwidth, "bandwidth", "mpi_bandwidth_Bps", "B/s")?;
    let upd = update_time(a, f, &mut d)?;
    let net = AlphaBeta::new(t0, bandwidth)?;
    check_grid(a)?;
    let s = GhostStencil::new(a.n, upd, a.elem_bytes, a.messages, net, a.overlap)?;
    let pt = if a.weak { s.weak(a.p)? } else { s.strong(a.p)? };
    d.input("n", a.n, "")
        .input("p", a.p, "")
        .input("t0_s", t0, "s");
    d.input("bandwidth_Bps", bandwidth, "B/s")
        .input("update_s", upd, "s");
    d.input("elem_bytes", a.elem_bytes, "B")
        .input("messages", a.messages, "")
        .flag("overlap", a.overlap)
        .flag("weak", a.weak)
        .input_opt("clock_hz", a.clock, "Hz");
    grid_at_p(&mut d, a, pt.n);
    d.num(
        "compute_s",
        "T_comp = (N/P)·N·t_update",
        format!(
            "({} / {}) · {} · {}",
            plain(pt.n),
            plain(a.p),
            plain(pt.n),
            q(upd, "s")
        ),
        pt.compute_s,
        "s",
    );
    let (comm_formula, comm_sub) = if a.p == 1.0 {
        (
            "T_comm = 0 (one processor exchanges no rows)",
            "0 s".to_string(),
        )
    } else {
        (
            "T_comm = k·T0 + 2·N·elem/B",
            format!(
                "{}·{} + 2·{}·{} / {}",
                plain(a.messages),
                q(t0, "s"),
                plain(pt.n),
                q(a.elem_bytes, "B"),
                q(bandwidth, "B/s")
            ),
        )
    };
    d.num("comm_s", comm_formula, comm_sub, pt.comm_s, "s");
    let combine = if a.overlap {
        "max(T_comp, T_comm)"
    } else {
        "T_comp + T_comm"
    };
    d.num(
        "time_s",
        &format!("T = {combine}"),
        if a.overlap {
            format!("max({}, {})", q(pt.compute_s, "s"), q(pt.comm_s, "s"))
        } else {
            format!("{} + {}", q(pt.compute_s, "s"), q(pt.comm_s, "s"))
        },
        pt.time_s,
        "s",
    );
    stencil_results(&mut d, a, &s, &pt, upd)?;
    Ok(d)
}

/// The time per update: `--update-time`, else 8 B over the profile's
/// one-thread triad bandwidth (noted in `d`).
fn update_time(a: &StencilArgs, f: &Figures, d: &mut Derivation) -> anyhow::Result<f64> {
    Ok(match a.update_time {
        Some(t) => t.seconds("update-time", f.clock(d, t, a.clock))?,
        None => {
            let (bw, name) = f.summary("update-time", "stream_triad_1t_Bps")?;
            d.note(format!(
                "--update-time {} / {} = {} from the profile {name}: the tiled 5-point stencil's traffic per update (§4.4) over summary.stream_triad_1t_Bps",
                q(UPDATE_BYTES, "B"),
                q(bw, "B/s"),
                q(UPDATE_BYTES / bw, "s")
            ));
            UPDATE_BYTES / bw
        }
    })
}

/// Speed-up, efficiency and the crossover of the ghost-row stencil.
fn stencil_results(
    d: &mut Derivation,
    a: &StencilArgs,
    s: &GhostStencil,
    pt: &models::stencil::ScalingPoint,
    upd: f64,
) -> anyhow::Result<()> {
    let t1 = s.strong(1.0)?.time_s;
    let (sp, sp_sub) = if a.weak {
        (
            "S = P·T(1)/T(P) (scaled)",
            format!("{}·{} / {}", plain(a.p), q(t1, "s"), q(pt.time_s, "s")),
        )
    } else {
        (
            "S = T(1)/T(P)",
            format!("{} / {}", q(t1, "s"), q(pt.time_s, "s")),
        )
    };
    d.num("speedup", sp, sp_sub, pt.speedup, "");
    d.num(
        "efficiency",
        "E = S/P",
        format!("{} / {}", plain(pt.speedup), plain(a.p)),
        pt.efficiency,
        "",
    );
    {
        let rows = d.num(
            "crossover_rows",
            "rows* = T_comm / (N·t_update)",
            format!(
                "{} / ({} · {})",
                q(s.comm_s(a.n, 2.0), "s"),
                plain(a.n),
                q(upd, "s")
            ),
            s.crossover_rows(),
            "",
        );
        d.num(
            "crossover_p",
            "P* = N / rows* (communication = computation, at the base N)",
            format!("{} / {}", plain(a.n), plain(rows)),
            s.crossover_p(),
            "",
        );
    }
    Ok(())
}

/// Messages per second without pipelining (§2.1, §2.2).
fn message_rate(d: &mut Derivation, net: &AlphaBeta, n: f64, one: f64) {
    d.num(
        "message_rate_per_s",
        "1 / T(n) without pipelining (pipelined: 1/occupancy)",
        format!("1 / {}", q(one, "s")),
        net.unpipelined_rate(n),
        "msg/s",
    );
}

/// Whole N and P, and P ≤ N for strong scaling (a whole row per processor).
fn check_grid(a: &StencilArgs) -> anyhow::Result<()> {
    models::error::count("n", a.n)?;
    models::error::count("p", a.p)?;
    if !a.weak && a.p > a.n {
        return Err(crate::error::BadInput(format!(
            "--p {} exceeds --n {}: 1D blocked rows give each processor at least one whole row (use P <= N)",
            plain(a.p),
            plain(a.n)
        ))
        .into());
    }
    Ok(())
}

/// The grid side at P: N·√P under weak scaling, not evaluated under strong.
fn grid_at_p(d: &mut Derivation, a: &StencilArgs, n_at_p: f64) {
    let formula = "N(P) = N·√P (weak scaling)";
    if a.weak {
        d.num(
            "n_at_p",
            formula,
            format!("{} · √{}", plain(a.n), plain(a.p)),
            n_at_p,
            "",
        );
    } else {
        d.absent(None, "n_at_p", formula, "strong scaling: N stays fixed");
    }
}
