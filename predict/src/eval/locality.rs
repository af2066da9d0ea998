//! `eval assignment`, `eval fusion`, `eval tiling`, `eval false-sharing`.

use clap::Args;
use models::decomposition::{assignment_cost, side_edge_traffic, Assignment};
use models::locality::{
    false_sharing as sharing, false_sharing_time_s, stencil_traffic, three_pass, FUSED,
};

use super::derivation::{plain, q, Derivation};
use crate::args::{self, Time};

/// Inherent communication of the three assignments of an N×N grid.
#[derive(Debug, Args)]
pub struct AssignmentArgs {
    /// Grid side N.
    #[arg(long, value_parser = args::number)]
    pub n: f64,
    /// Processors P (a non-square P gets the most square px×py grid).
    #[arg(long, value_parser = args::number)]
    pub p: f64,
    /// Cache-line size, for the artifactual traffic of the 2D block edges.
    #[arg(long, default_value = "64", value_parser = args::bytes)]
    pub line_bytes: f64,
    /// Bytes per element.
    #[arg(long, default_value = "4", value_parser = args::bytes)]
    pub elem_bytes: f64,
}

pub fn assignment(a: &AssignmentArgs) -> anyhow::Result<Derivation> {
    let (n, p) = (a.n, a.p);
    let mut d = Derivation::new(
        "assignment",
        "work assignment of an N×N grid, 5-point stencil, per processor per sweep (lecture §2.5, thought question 1)",
    );
    d.input("n", n, "")
        .input("p", p, "")
        .input("line_bytes", a.line_bytes, "B")
        .input("elem_bytes", a.elem_bytes, "B");
    let cases = [
        ("1d_blocked", Assignment::Blocked1D),
        ("1d_interleaved", Assignment::Interleaved1D),
        ("2d_blocked", Assignment::Blocked2D),
    ];
    for (group, kind) in cases {
        let c = assignment_cost(n, p, kind)?;
        let g = Some(group);
        d.grouped(
            g,
            "compute_elems",
            "N²/P",
            format!("{}² / {}", plain(n), plain(p)),
            c.compute_elems,
            "",
        );
        let (px, py) = c.grid;
        let (comm_formula, comm_sub) = match kind {
            _ if p == 1.0 => ("0 (one processor has no neighbours)", "0".to_string()),
            Assignment::Blocked1D => ("2N", format!("2·{}", plain(n))),
            Assignment::Interleaved1D => (
                "2N·(N/P)",
                format!("2·{}·({}/{})", plain(n), plain(n), plain(p)),
            ),
            Assignment::Blocked2D if px == 1 => (
                "2·N/px (a 1×P grid: no side neighbours, as 1D blocked)",
                format!("2·{}/{px}", plain(n)),
            ),
            Assignment::Blocked2D => (
                "2·N/px + 2·N/py (= 4N/√P on a square grid)",
                format!("2·{}/{px} + 2·{}/{py}", plain(n), plain(n)),
            ),
        };
        d.grouped(g, "comm_elems", comm_formula, comm_sub, c.comm_elems, "");
        let intensity = "compute / comm (elements computed per element communicated)";
        if c.comm_elems > 0.0 {
            d.grouped(
                g,
                "arithmetic_intensity",
                intensity,
                format!("{} / {}", plain(c.compute_elems), plain(c.comm_elems)),
                c.arithmetic_intensity,
                "",
            );
        } else {
            d.absent(
                g,
                "arithmetic_intensity",
                intensity,
                "no communication: unbounded",
            );
        }
        if kind == Assignment::Blocked2D {
            side_edges(&mut d, a, (px, py))?;
        }
    }
    Ok(d)
}

/// The artifactual traffic of the 2D blocks' side edges (§2.7.4).
fn side_edges(d: &mut Derivation, a: &AssignmentArgs, (px, py): (u64, u64)) -> anyhow::Result<()> {
    let (n, p) = (a.n, a.p);
    let g = Some("2d_blocked");
    if px != py {
        d.note(format!(
            "P = {} is not a square: 2D blocks use a {px}×{py} processor grid",
            plain(p)
        ));
    }
    let (inherent, moved) = side_edge_traffic(n, p, a.line_bytes, a.elem_bytes)?;
    let (formula, sub) = if px == 1 {
        (
            "0 (a grid of one column has no side neighbours)",
            "0".to_string(),
        )
    } else {
        (
            "2·(N/py)·max(line/elem, 1): each side neighbour's element arrives as a whole line (§2.7.4)",
            format!(
                "2·({}/{py})·max({}/{}, 1)",
                plain(n),
                plain(a.line_bytes),
                plain(a.elem_bytes)
            ),
        )
    };
    d.grouped(g, "side_edge_elems_moved", formula, sub, moved, "");
    d.grouped(
        g,
        "artifactual_elems",
        "moved − inherent side-edge elements",
        format!("{} − {}", plain(moved), plain(inherent)),
        moved - inherent,
        "",
    );
    Ok(())
}

/// Traffic of E = D + (A+B)·C in three passes against one fused pass.
#[derive(Debug, Args)]
pub struct FusionArgs {
    /// Bytes per element.
    #[arg(long, default_value = "4", value_parser = args::bytes)]
    pub elem_bytes: f64,
    /// Count the read-for-ownership of each stored line.
    #[arg(long)]
    pub write_allocate: bool,
    /// Elements per array, to turn traffic into time (with --bandwidth).
    #[arg(long, value_parser = args::number, requires = "bandwidth")]
    pub elements: Option<f64>,
    /// Memory bandwidth.
    #[arg(long, value_parser = args::bandwidth, requires = "elements")]
    pub bandwidth: Option<f64>,
}

pub fn fusion(a: &FusionArgs) -> anyhow::Result<Derivation> {
    let e = models::error::positive("elem-bytes", a.elem_bytes)?;
    let wa = a.write_allocate;
    let mut d = Derivation::new(
        "fusion",
        "loop fusion of E = D + (A+B)·C (lecture §2.7.2, §3.2)",
    );
    d.input("elem_bytes", e, "B")
        .flag("write_allocate", wa)
        .input_opt("elements", a.elements, "")
        .input_opt("bandwidth_Bps", a.bandwidth, "B/s");
    let wa_term = if wa { " + stores" } else { "" };
    for (group, t) in [("three_pass", three_pass()), ("fused", FUSED)] {
        let g = Some(group);
        d.grouped(
            g,
            "transfers",
            "loads + stores per element",
            format!("{} + {}", plain(t.loads), plain(t.stores)),
            t.transfers(),
            "",
        );
        d.grouped(
            g,
            "ops_per_transfer",
            "ops / transfers",
            format!("{} / {}", plain(t.flops), plain(t.transfers())),
            t.ops_per_transfer(),
            "",
        );
        let bytes = d.grouped(
            g,
            "bytes_per_elem",
            &format!("(loads + stores{wa_term})·elem"),
            if wa {
                format!(
                    "({} + {} + {})·{}",
                    plain(t.loads),
                    plain(t.stores),
                    plain(t.stores),
                    q(e, "B")
                )
            } else {
                format!("({} + {})·{}", plain(t.loads), plain(t.stores), q(e, "B"))
            },
            t.bytes(e, wa),
            "B",
        );
        d.grouped(
            g,
            "flops_per_byte",
            "ops / bytes",
            format!("{} / {}", plain(t.flops), q(bytes, "B")),
            t.flops_per_byte(e, wa),
            "flop/B",
        );
        let time = "n·bytes / B (bandwidth-bound lower bound)";
        if let (Some(n), Some(bw)) = (a.elements, a.bandwidth) {
            d.grouped(
                g,
                "time_s",
                time,
                format!("{}·{} / {}", plain(n), q(bytes, "B"), q(bw, "B/s")),
                models::little::sweep_time_s(n * bytes, bw)?,
                "s",
            );
        } else {
            d.absent(g, "time_s", time, "give --elements and --bandwidth");
        }
    }
    fusion_bound(&mut d, e, wa);
    Ok(d)
}

/// Row-major against tiled 5-point Jacobi traffic.
#[derive(Debug, Args)]
pub struct TilingArgs {
    /// Elements per grid row.
    #[arg(long, value_parser = args::number)]
    pub row_elems: f64,
    /// Tile width in elements.
    #[arg(long, value_parser = args::number)]
    pub tile_elems: f64,
    /// Capacity of the cache that must hold the three-row window, e.g. 2MiB.
    #[arg(long, value_parser = args::bytes)]
    pub cache: f64,
    /// Bytes per element.
    #[arg(long, default_value = "4", value_parser = args::bytes)]
    pub elem_bytes: f64,
    /// Count the read-for-ownership of each stored line.
    #[arg(long)]
    pub write_allocate: bool,
}

pub fn tiling(a: &TilingArgs) -> anyhow::Result<Derivation> {
    check_tile(a)?;
    let mut d = Derivation::new(
        "tiling",
        "5-point stencil traffic, row-major against tiled (lecture §2.7.1, §3.3)",
    );
    d.input("row_elems", a.row_elems, "")
        .input("tile_elems", a.tile_elems, "");
    d.input("cache_bytes", a.cache, "B")
        .input("elem_bytes", a.elem_bytes, "B")
        .flag("write_allocate", a.write_allocate);
    let mut bytes = [0.0; 2];
    for (i, (group, w)) in [("row_major", a.row_elems), ("tiled", a.tile_elems)]
        .into_iter()
        .enumerate()
    {
        let t = stencil_traffic(w, a.elem_bytes, a.cache, a.write_allocate)?;
        let g = Some(group);
        d.grouped(
            g,
            "window_bytes",
            "3·width·elem (data touched between first and last use of a row)",
            format!("3·{}·{}", plain(w), q(a.elem_bytes, "B")),
            t.window_bytes,
            "B",
        );
        let reads = if t.reuse_fits { 1 } else { 3 };
        d.grouped(
            g,
            "reads_per_elem",
            "1 if window ≤ cache (each element read once), else 3",
            format!(
                "{} {} {} → {reads}",
                q(t.window_bytes, "B"),
                if t.reuse_fits { "≤" } else { ">" },
                q(a.cache, "B")
            ),
            f64::from(reads),
            "",
        );
        let writes = if a.write_allocate {
            "writes = 2 (store + read for ownership)"
        } else {
            "writes = 1"
        };
        bytes[i] = d.grouped(
            g,
            "bytes_per_elem",
            &format!("(reads + writes)·elem, {writes}"),
            format!(
                "({reads} + {})·{}",
                if a.write_allocate { 2 } else { 1 },
                q(a.elem_bytes, "B"),
            ),
            t.bytes_per_elem,
            "B",
        );
        d.grouped(
            g,
            "flops_per_byte",
            "5 flops / bytes per element",
            format!("5 / {}", q(t.bytes_per_elem, "B")),
            t.flops_per_byte,
            "flop/B",
        );
    }
    let gain = d.num(
        "predicted_gain",
        "bytes(row-major) / bytes(tiled)",
        format!("{} / {}", q(bytes[0], "B"), q(bytes[1], "B")),
        bytes[0] / bytes[1],
        "",
    );
    if gain == 1.0 {
        d.note("three full rows already fit in the cache: tiling should not pay");
    }
    Ok(d)
}

/// Per-thread counters on shared cache lines.
#[derive(Debug, Args)]
pub struct FalseSharingArgs {
    /// Threads, each writing its own element.
    #[arg(long, value_parser = args::number)]
    pub threads: f64,
    /// Bytes of each thread's element (16 for struct { long hits, misses; }).
    #[arg(long, value_parser = args::bytes)]
    pub elem_bytes: f64,
    /// Cache-line size.
    #[arg(long, default_value = "64", value_parser = args::bytes)]
    pub line_bytes: f64,
    /// Writes per thread, to estimate time (with --line-transfer and --local-write).
    #[arg(long, value_parser = args::number, requires_all = ["line_transfer", "local_write"])]
    pub writes: Option<f64>,
    /// Time of one line transfer between cores (calibrate's core-to-core latency).
    #[arg(long, value_parser = args::time)]
    pub line_transfer: Option<Time>,
    /// Time of one write that hits in L1.
    #[arg(long, value_parser = args::time)]
    pub local_write: Option<Time>,
}

pub fn false_sharing(a: &FalseSharingArgs) -> anyhow::Result<Derivation> {
    let fs = sharing(a.threads, a.elem_bytes, a.line_bytes)?;
    let mut d = Derivation::new(
        "false-sharing",
        "false sharing of per-thread data (lecture §2.7.4, §3.4, thought question 2)",
    );
    let tt = a
        .line_transfer
        .map(|t| t.seconds("line-transfer", None))
        .transpose()?;
    let tl = a
        .local_write
        .map(|t| t.seconds("local-write", None))
        .transpose()?;
    d.input("threads", a.threads, "")
        .input("elem_bytes", a.elem_bytes, "B")
        .input("line_bytes", a.line_bytes, "B")
        .input_opt("writes", a.writes, "")
        .input_opt("line_transfer_s", tt, "s")
        .input_opt("local_write_s", tl, "s");
    let (t, e, l, k) = (a.threads, a.elem_bytes, a.line_bytes, fs.worst_line);
    d.num(
        "sharers_per_line",
        "max over lines k of min(⌈(k+1)·line/elem⌉, threads) − ⌊k·line/elem⌋ (elements end to end from a line boundary; shown at the worst line)",
        format!(
            "min(⌈({} + 1)·{} / {}⌉, {}) − ⌊{}·{} / {}⌋",
            plain(k),
            plain(l),
            plain(e),
            plain(t),
            plain(k),
            plain(l),
            plain(e)
        ),
        fs.sharers_per_line,
        "",
    );
    d.num(
        "lines",
        "⌈threads·elem / line⌉",
        format!("⌈{}·{} / {}⌉", plain(t), q(e, "B"), q(l, "B")),
        fs.lines,
        "",
    );
    let s = fs.sharers_per_line;
    d.num(
        "transfers_per_write",
        "(s − 1)/s, writes of s sharers interleaving at random",
        format!("({} − 1)/{}", plain(s), plain(s)),
        fs.transfers_per_write,
        "",
    );
    d.num(
        "padded_bytes",
        "threads·⌈elem/line⌉·line (alignas(line))",
        format!("{}·⌈{}/{}⌉·{}", plain(t), plain(e), plain(l), q(l, "B")),
        fs.padded_bytes,
        "B",
    );
    sharing_time(&mut d, a, &fs, tt, tl)?;
    Ok(d)
}

/// The time of the writes, shared and padded (§3.4), when the writes and
/// both latencies are given.
fn sharing_time(
    d: &mut Derivation,
    a: &FalseSharingArgs,
    fs: &models::locality::FalseSharing,
    tt: Option<f64>,
    tl: Option<f64>,
) -> anyhow::Result<()> {
    let s = fs.sharers_per_line;
    let time = "s·writes·((s−1)/s·t_transfer + t_local) (a shared line is a serial resource)";
    let padded = "writes·t_local (one writer per line)";
    if let (Some(w), Some(tt), Some(tl)) = (a.writes, tt, tl) {
        d.num(
            "time_s",
            time,
            format!(
                "{}·{}·({}·{} + {})",
                plain(s),
                plain(w),
                plain(fs.transfers_per_write),
                q(tt, "s"),
                q(tl, "s")
            ),
            false_sharing_time_s(fs, w, tt, tl)?,
            "s",
        );
        let own = sharing(a.threads, a.line_bytes, a.line_bytes)?;
        d.num(
            "padded_time_s",
            padded,
            format!("{}·{}", plain(w), q(tl, "s")),
            false_sharing_time_s(&own, w, tt, tl)?,
            "s",
        );
    } else {
        let why = "give --writes, --line-transfer and --local-write";
        d.absent(None, "time_s", time, why);
        d.absent(None, "padded_time_s", padded, why);
    }
    Ok(())
}

/// A tile no wider than the row.
fn check_tile(a: &TilingArgs) -> Result<(), crate::error::BadInput> {
    if a.tile_elems > a.row_elems {
        return Err(crate::error::BadInput(format!(
            "--tile-elems {} is wider than the row ({}): a tile must fit in the grid",
            plain(a.tile_elems),
            plain(a.row_elems)
        )));
    }
    Ok(())
}

/// The bound on fusion's speed-up for a bandwidth-bound loop: the ratio of
/// the bytes moved (§2.7.2).
fn fusion_bound(d: &mut Derivation, e: f64, wa: bool) {
    d.num(
        "speedup_bound",
        "bytes(three-pass) / bytes(fused)",
        format!(
            "{} / {}",
            q(three_pass().bytes(e, wa), "B"),
            q(FUSED.bytes(e, wa), "B")
        ),
        three_pass().bytes(e, wa) / FUSED.bytes(e, wa),
        "",
    );
}
