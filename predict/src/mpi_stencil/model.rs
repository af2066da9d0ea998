//! The predicted time of one iteration of each variant, from the machine
//! profile (lecture §2.2, §3.1, §4.1).
//!
//! # Computation: bytes over bandwidth
//!
//! The sweep is bandwidth-bound (5 flops per 24 bytes, §3.1). With the three
//! rows the 5-point stencil touches staying in cache from one row to the
//! next, each update reads one new `f64` of the old grid, writes one of the
//! new grid and first reads that line (write-allocate): b = 24 bytes per
//! update. A rank's sweep takes
//!
//! t_comp = ry·rx·(b / B_proc + t_reuse)
//!
//! for its ry × rx block (the largest block, which the others wait for).
//! t_reuse is the time of the update's four other loads (up, left, centre,
//! right: 5 loads of 8 bytes less the one new element), the same term as a
//! loop description's reused loads (`crate::kernels::terms::reuse`):
//!
//! * left and right (16 B) hit lines of the same row already in L1: the
//!   core still issues them, and that load-port time does not overlap the
//!   line transfers (ECM's in-core part), 16 B / B_L1;
//! * the row above and the update's own row (16 B) were brought in one and
//!   two rows' traffic before. They hit L1 only while L1 holds that window,
//!   (4·(rx+2) − 2)·8 bytes (Kerncraft's layer condition,
//!   `models::locality::stencil_reuse_window`): 16 B / B_L1 then; else their
//!   lines come back from L2, 16 B · (1/B_L1 + 1/B_L2).
//!
//! B_L1 and B_L2 are one thread's read bandwidths of those levels; without
//! B_L1 the term is left out and said so.
//! B_proc, the bandwidth one rank gets, is that of its working set
//! 2·(ry+2)·(rx+2)·8 bytes, R ranks sharing the busiest host:
//!
//! * the STREAM copy sweep on R threads with write-allocate, read at that
//!   working set per thread as the thread kernels read it
//!   ([`crate::machine::Machine::stream_bw_wa`]), divided by R: copy moves
//!   the sweep's bytes, one read and one write with its write-allocate read
//!   per element. The level named is the one whose size holds the working
//!   set (the last, shared, level holding size/R), a label only;
//! * without a sweep on R threads, the memory level the working set fits
//!   in:
//! * a cache level of `profile.levels` with a measured bandwidth: its read
//!   bandwidth, min(B_1thread·s, B_all/R), s = min(1, CPUs/R) the share of
//!   a core each rank gets (the one-thread figure for a single rank). The
//!   last (largest) cache level is taken as shared by the R ranks (the
//!   working set must fit in size/R), the others as private. Read bandwidth
//!   is an optimistic figure for a kernel that also stores;
//! * otherwise DRAM: STREAM triad from `summary` (all cores and one
//!   thread), with the same per-rank share, times 32/24 because STREAM
//!   counts 24 bytes per triad element where the memory moves 32 (the
//!   write-allocate read), so that B_proc is in bytes really moved, like b;
//!   failing that, the DRAM level's read bandwidth.
//!
//! Not modelled: the fixed cost of a sweep (a few tens of nanoseconds per
//! row and per MPI call), which dominates grids of a few dozen points a
//! side.
//!
//! # Communication: T(n) = T0 + n/B per message
//!
//! A ghost message of n bytes costs T(n) = T0 + n/B one way (§2.2), with
//! T0 and B of the profile's protocol regime holding n (a regime with a
//! negative fitted T0 is used as the line it is, floored at 0). T0 is
//! mostly work of the two processors (the call, the copies, the polling),
//! n/B the transfer. Per iteration the busiest rank pays:
//!
//! * (a) blocking, 1D: with 2 process rows rank 0 sends, then waits for
//!   rank 1's row, which rank 1 sends only after receiving: a round trip,
//!   2·T(n). With 3 or more, each of the two phases of the odd/even
//!   ordering takes two rounds: 4·T(n).
//! * (b) non-blocking, 1D: everything is posted at once, so the bytes of
//!   the two directions travel together, but each rank still does the
//!   start-up work of its send and of its receive: per neighbour
//!   2·T0 + n/B (2·T0 + n/B with P = 2; 4·T0 + 2·n/B for an inner rank,
//!   the lecture's k·T0 + 2N·8/B with k = 4 start-ups). Measured here:
//!   small-message exchanges cost about two one-way times, large ones about
//!   one, as this form says.
//! * (c) 2D: the same per neighbour, rows of rx·8 bytes up and down,
//!   columns of ry·8 bytes left and right.
//!
//! # Overlap: cost = time − overlap
//!
//! The non-blocking variants compute the inner points while the messages
//! fly (§2.2: cost = time − overlap). The hidden part is
//! min(f·t_comm, t_inner), f the overlap fraction the ping-pong measured
//! (`network.overlap_fraction`), t_inner the sweep of the points that need
//! no ghost value. Without a measured f the lecture's ideal f = 1 is used
//! and said so. Then
//!
//! t = t_comp + t_comm − hidden.
//!
//! Not charged: packing the 2D ghost columns (2·ry strided reads and
//! contiguous writes, under 1% of the sweep for blocks of 64 rows and more)
//! and the residual reduction, which is timed apart from the iterations.
//!
//! The binding resource is memory bandwidth when t_comp is at least the
//! exposed communication t_comm − hidden, otherwise the network: its
//! latency when start-ups make up half of t_comm or more, else its
//! bandwidth.

use models::locality::{stencil_reuse_window, STENCIL_LOADS};
use models::profile::Profile;
use serde::Serialize;

use crate::kernels::terms::reuse;
use crate::loop_figures::Bound;
use crate::machine::Machine;

use super::grid::ELEM_BYTES;
use super::layout::{split, ProcessGrid};
use super::Variant;

/// Bytes moved per update: read old, write new, write-allocate read of new.
pub const BYTES_PER_UPDATE: f64 = 24.0;
/// Bytes per update as kernels count them (STREAM's way): one read of the
/// old grid and one write of the new, no write-allocate.
pub const COUNTED_BYTES_PER_UPDATE: f64 = 16.0;
/// Bytes per update loaded again from lines of the same row, in L1: left
/// and right.
pub const NEIGHBOUR_BYTES_PER_UPDATE: f64 = 2.0 * ELEM_BYTES as f64;
/// Bytes per update loaded again from the row above and the update's own
/// row, a row's traffic or two back; with the one new element (the row
/// below) and the neighbours, all of `models::locality::STENCIL_LOADS`.
pub const ROW_BYTES_PER_UPDATE: f64 =
    (STENCIL_LOADS - 1.0) * ELEM_BYTES as f64 - NEIGHBOUR_BYTES_PER_UPDATE;
/// STREAM triad moves 32 bytes per element where it counts 24.
const TRIAD_WRITE_ALLOCATE: f64 = 32.0 / 24.0;

mod memory;
mod network;
pub use memory::{memory, Memory};
use network::message_cost;
pub use network::{regime_for, MessageCost};

/// What the model needs and the profile lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The figure, as a noun phrase.
    pub what: String,
    /// The command that measures it.
    pub fix: String,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "profile lacks {}; run `{}`", self.what, self.fix)
    }
}

/// The run the prediction is for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    pub n: usize,
    pub grid: ProcessGrid,
    pub variant: Variant,
    /// Ranks on the busiest host.
    pub ranks_per_host: usize,
}

/// The predicted iteration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// t = t_comp + t_comm − hidden, seconds.
    pub time_s: f64,
    pub compute_s: f64,
    pub comm_s: f64,
    /// The communication hidden behind the inner sweep.
    pub hidden_s: f64,
    /// The inner sweep that can overlap the messages.
    pub inner_compute_s: f64,
    /// Seconds per update, b / B_proc + t_reuse.
    pub update_s: f64,
    /// Its part for the loads of lines fetched before, t_reuse (0 when the
    /// profile lacks B_L1).
    pub reuse_s: f64,
    pub bytes_per_update: f64,
    pub memory: Memory,
    pub messages: Vec<MessageCost>,
    /// The f used (non-blocking variants).
    pub overlap_fraction: Option<f64>,
    /// "memory bandwidth (DRAM)", "network latency (T0)", "network bandwidth".
    pub binding: String,
    /// Caveats (an assumed overlap, a fallback bandwidth).
    pub notes: Vec<String>,
}

/// The ghost messages the busiest rank of `s` pays for, its block being
/// `ry` × `rx`: one-way rows in rounds (blocking), else exchanges of rows
/// and columns with up to two neighbours each way.
fn messages(
    profile: &Profile,
    s: &Setup,
    rx: usize,
    ry: usize,
) -> Result<Vec<MessageCost>, Missing> {
    let row_bytes = (rx * ELEM_BYTES) as f64;
    let col_bytes = (ry * ELEM_BYTES) as f64;
    let vertical = (s.grid.py - 1).min(2) as f64;
    let horizontal = (s.grid.px - 1).min(2) as f64;
    // (bytes, how many in sequence, start-ups each)
    let mut wants = Vec::new();
    match s.variant {
        Variant::Blocking => {
            let rounds = match s.grid.py {
                1 => 0.0,
                2 => 2.0,
                _ => 4.0,
            };
            wants.push((row_bytes, rounds, 1.0));
        }
        Variant::Nonblocking | Variant::TwoD => {
            wants.push((row_bytes, vertical, 2.0));
            wants.push((col_bytes, horizontal, 2.0));
        }
    }
    wants
        .into_iter()
        .filter(|&(_, k, _)| k > 0.0)
        .map(|(bytes, k, startups)| message_cost(profile, bytes, k, startups))
        .collect()
}

/// What bounds the iteration: the memory when the sweep outlasts the
/// exposed communication, else the network's start-ups when they are at
/// least half of it, else its bandwidth.
fn binding(
    mem: &Memory,
    messages: &[MessageCost],
    compute_s: f64,
    comm_s: f64,
    hidden_s: f64,
) -> String {
    let exposed = comm_s - hidden_s;
    if compute_s >= exposed {
        return format!("memory bandwidth ({})", mem.level);
    }
    let startups: f64 = messages
        .iter()
        .map(|m| m.sequential * m.startups_each * m.t0_s.max(0.0))
        .sum();
    if startups >= comm_s / 2.0 {
        "network latency (T0)".to_string()
    } else {
        "network bandwidth".to_string()
    }
}

/// Predicts one iteration of `s.variant`.
///
/// # Errors
/// [`Missing`] naming the figure the profile lacks and the command that
/// measures it.
pub fn predict(profile: &Profile, s: &Setup) -> Result<Prediction, Missing> {
    let (px, py) = (s.grid.px, s.grid.py);
    let ry = split(s.n, py, 0).1;
    let rx = split(s.n, px, 0).1;
    let ws = 2.0 * ((ry + 2) * (rx + 2) * ELEM_BYTES) as f64;
    let mem = memory(profile, ws, s.ranks_per_host)?;
    let mut notes = Vec::new();
    let window = stencil_reuse_window((rx + 2) as f64, ELEM_BYTES as f64)
        .expect("a block is at least one column wide");
    let machine = Machine::new(profile);
    let reuse_s = [
        (NEIGHBOUR_BYTES_PER_UPDATE, 0.0),
        (ROW_BYTES_PER_UPDATE, window),
    ]
    .into_iter()
    .map(|(bytes, window)| reuse(&machine, bytes, window, s.ranks_per_host, Bound::Point))
    .map(|t| t.map(|t| t.seconds))
    .sum::<Result<f64, _>>()
    .unwrap_or_else(|m| {
        notes.push(format!(
            "the loads of lines fetched before are not charged: {m}"
        ));
        0.0
    });
    let update_s = BYTES_PER_UPDATE / mem.bandwidth_Bps + reuse_s;
    let compute_s = (ry * rx) as f64 * update_s;

    let horizontal = (px - 1).min(2) as f64;
    let messages = messages(profile, s, rx, ry)?;
    let comm_s: f64 = messages.iter().map(|m| m.sequential * m.time_s).sum();

    let (inner_compute_s, overlap_fraction, hidden_s) = match s.variant {
        Variant::Blocking => (0.0, None, 0.0),
        Variant::Nonblocking | Variant::TwoD => {
            let inner_rows = ry.saturating_sub(2);
            // The busiest rank leaves out the columns next to its
            // horizontal neighbours (none in 1D).
            let inner_cols = rx.saturating_sub(horizontal as usize);
            let inner = (inner_rows * inner_cols) as f64 * update_s;
            let f = match profile.network.as_ref().and_then(|n| n.overlap_fraction) {
                Some(e) => e.point.clamp(0.0, 1.0),
                None => {
                    if comm_s > 0.0 {
                        notes.push("the profile has no measured overlap fraction; full overlap assumed (the lecture's max(compute, comm)); run `mpirun -np 2 calibrate --only pingpong`".into());
                    }
                    1.0
                }
            };
            (inner, Some(f), (f * comm_s).min(inner))
        }
    };
    let time_s = compute_s + comm_s - hidden_s;
    let binding = binding(&mem, &messages, compute_s, comm_s, hidden_s);
    Ok(Prediction {
        time_s,
        compute_s,
        comm_s,
        hidden_s,
        inner_compute_s,
        update_s,
        reuse_s,
        bytes_per_update: BYTES_PER_UPDATE,
        memory: mem,
        messages,
        overlap_fraction,
        binding,
        notes,
    })
}

#[cfg(test)]
mod tests;
