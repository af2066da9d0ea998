//! The predicted time of one iteration of each variant, from the machine
//! profile (lecture §2.2, §3.1, §4.1).
//!
//! # Computation: the one loop model
//!
//! A rank's sweep of its ry × rx block is the row-major 5-point sweep that
//! the thread stencil describes (`crate::kernels::stencil::Variant::described`),
//! on f64: ry rows of rx + 2 values, the two edge columns fixed, the R
//! ranks on the busiest host as its threads, and the rank's two arrays,
//! 2·(ry+2)·(rx+2)·8 bytes, as each one's working set. The model that
//! predicts every built-in kernel and every user's loop
//! (`crate::kernels::work::predict`) predicts it:
//!
//! * the streamed traffic: per update one new `f64` of the old grid while
//!   the three-row window fits the rank's share of the largest cache (three
//!   otherwise), one stored, and the store's write-allocate read, at the
//!   rates the STREAM level curve gives that load/store mix on R threads
//!   at that working set per thread (§2.5, §4.4);
//! * the update's other loads, which hit lines fetched before: left and
//!   right in L1, the row above and the update's own row within the
//!   layer condition's window of (4·(rx+2) − 2)·8 bytes, in the level that
//!   holds it (Kerncraft's layer condition); their cost adds to the
//!   rank's own traffic: the load-port time while L1 holds the streams,
//!   what calibrate's lagged copy paid per byte read again from an L1
//!   window beside streams from further out, and, for a window beyond
//!   L1 while the streams come from DRAM, what it paid beside a copy from
//!   DRAM; the ranks' traffic on the host's shared memory bounds apart
//!   (ECM's saturation, with the calibrated knee between the core's and
//!   the shared system's time, `models::saturation`);
//! * the update's chain, five operations deep per element, as the
//!   calibrated Horner loop of that depth, with the four reused loads
//!   beside it at what a loaded Horner loop paid per byte (`chains +
//!   loads`, the core's own work);
//! * 5 flops per update against the f64 compute ceiling.
//!
//! The slowest of these binds; t_comp is that time for the largest block,
//! which the others wait for. Not modelled: the fixed cost of a sweep (a
//! few tens of nanoseconds per row and per MPI call), which dominates
//! grids of a few dozen points a side.
//!
//! # Communication: T(n) = T0 + n/B per message
//!
//! A ghost message of n bytes costs T(n) = T0 + n/B one way (§2.2), with
//! T0 and B of the profile's protocol regime holding n (a regime with a
//! negative fitted T0 is used as the line it is, floored at 0). T0 is
//! mostly work of the two processors (the call, the copies, the polling),
//! n/B the transfer. A rank whose sweep covers more than its private
//! caches hold sends after that sweep has evicted the buffers and the
//! transport's state, and pays T(n) of the ping-pong measured after an
//! evicting sweep (`network.evicted_regimes`), where the profile has it
//! for n (`network`). Per iteration the busiest rank pays:
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
//! The sweep's binding resource binds (with the level that holds the
//! working set) when t_comp is at least the exposed communication
//! t_comm − hidden, otherwise the network: its latency when start-ups make
//! up half of t_comm or more, else its bandwidth.

use models::kernel::Precision;
use models::profile::Profile;
use serde::Serialize;

use crate::kernels::stencil::{Shape, Variant as Sweep};
use crate::kernels::work;
use crate::machine::{Machine, Now};

use super::grid::ELEM_BYTES;
use super::layout::{split, ProcessGrid};
use super::Variant;

/// Bytes moved per update: read old, write new, write-allocate read of new.
pub const BYTES_PER_UPDATE: f64 = 24.0;
/// Bytes per update as kernels count them (STREAM's way): one read of the
/// old grid and one write of the new, no write-allocate.
pub const COUNTED_BYTES_PER_UPDATE: f64 = 16.0;

mod network;
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

impl From<crate::machine::Missing> for Missing {
    fn from(m: crate::machine::Missing) -> Self {
        Self {
            what: m.what,
            fix: format!("calibrate --only {}", m.fix),
        }
    }
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
    /// Seconds per update, t_comp / (ry·rx).
    pub update_s: f64,
    /// A rank's working set, both arrays with their frames, bytes.
    pub working_set_bytes: f64,
    /// The memory level that holds it (a label).
    pub level: String,
    /// The sweep as the loop model predicts it: each term and what binds.
    pub sweep: work::Prediction,
    pub messages: Vec<MessageCost>,
    /// The f used (non-blocking variants).
    pub overlap_fraction: Option<f64>,
    /// The sweep's binding with its level, e.g. "memory + load/store
    /// (DRAM)", or "network latency (T0)" or "network bandwidth".
    pub binding: String,
    /// Caveats (an assumed overlap).
    pub notes: Vec<String>,
    /// When the sweep has two states (`work::Prediction::states_s`): the
    /// iteration's time with the sweep in each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states_s: Option<[f64; 2]>,
}

/// The ghost messages the busiest rank of `s` pays for, its block being
/// `ry` × `rx`: one-way rows in rounds (blocking), else exchanges of rows
/// and columns with up to two neighbours each way.
fn messages(
    profile: &Profile,
    s: &Setup,
    rx: usize,
    ry: usize,
    after_evicting_sweep: bool,
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
        .map(|(bytes, k, startups)| message_cost(profile, bytes, k, startups, after_evicting_sweep))
        .collect()
}

/// What bounds the iteration: the `sweep`'s binding when it outlasts the
/// exposed communication, else the network's start-ups when they are at
/// least half of it, else its bandwidth.
fn binding(
    sweep: &str,
    messages: &[MessageCost],
    compute_s: f64,
    comm_s: f64,
    hidden_s: f64,
) -> String {
    let exposed = comm_s - hidden_s;
    if compute_s >= exposed {
        return sweep.to_string();
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

/// The largest block of `s`, (rows, columns).
fn block(s: &Setup) -> (usize, usize) {
    (split(s.n, s.grid.py, 0).1, split(s.n, s.grid.px, 0).1)
}

/// A rank's sweep of the largest block as the loop model describes it: the
/// thread stencil's row-major sweep on f64, the ranks on the busiest host
/// as its threads.
///
/// # Errors
/// [`Missing`] when the profile has no detected cache levels.
pub fn sweep_work(profile: &Profile, s: &Setup) -> Result<work::Work, Missing> {
    let (ry, rx) = block(s);
    let cache = Machine::new(profile).largest_cache_bytes()?;
    let shape = Shape::new(ry, rx + 2, Precision::F64);
    Ok(Sweep::RowMajor.work(shape, s.ranks_per_host.max(1), cache))
}

/// Predicts one iteration of `s.variant` on the machine as profiled.
///
/// # Errors
/// [`Missing`] naming the figure the profile lacks and the command that
/// measures it.
pub fn predict(profile: &Profile, s: &Setup) -> Result<Prediction, Missing> {
    predict_now(profile, s, Now::default())
}

/// Predicts one iteration of `s.variant` on the machine as it runs `now`
/// (the paired re-measure next to the run; `Now::default()`: as profiled).
///
/// # Errors
/// As [`predict`].
pub fn predict_now(profile: &Profile, s: &Setup, now: Now) -> Result<Prediction, Missing> {
    let px = s.grid.px;
    let (ry, rx) = block(s);
    let ws = 2.0 * ((ry + 2) * (rx + 2) * ELEM_BYTES) as f64;
    let machine = Machine::paired(profile, now);
    let ranks = s.ranks_per_host.max(1);
    let work = sweep_work(profile, s)?;
    let sweep = work::predict(&work, &machine, ranks)?;
    let level = machine.holding_level_name(ws, ranks).to_string();
    let update_s = sweep.seconds / (ry * rx) as f64;
    let compute_s = sweep.seconds;
    let mut notes = Vec::new();

    let horizontal = (px - 1).min(2) as f64;
    // A sweep the private caches do not hold evicts the messages' buffers
    // and the transport's state from them.
    let evicting = !machine.private_level_holds(ws, ranks);
    let messages = messages(profile, s, rx, ry, evicting)?;
    let comm_s: f64 = messages.iter().map(|m| m.sequential * m.time_s).sum();

    let overlap_fraction = match s.variant {
        Variant::Blocking => None,
        Variant::Nonblocking | Variant::TwoD => Some(
            match profile.network.as_ref().and_then(|n| n.overlap_fraction) {
                Some(e) => e.point.clamp(0.0, 1.0),
                None => {
                    if comm_s > 0.0 {
                        notes.push("the profile has no measured overlap fraction; full overlap assumed (the lecture's max(compute, comm)); run `mpirun -np 2 calibrate --only pingpong`".into());
                    }
                    1.0
                }
            },
        ),
    };
    // The inner sweep, which can overlap the messages, and the part of
    // them it hides, for a sweep of `sweep_s`: the busiest rank leaves out
    // its edge rows and the columns next to its horizontal neighbours
    // (none in 1D).
    let inner_cells = (ry.saturating_sub(2) * rx.saturating_sub(horizontal as usize)) as f64;
    let overlap = |sweep_s: f64| {
        overlap_fraction.map_or((0.0, 0.0), |f| {
            let inner = inner_cells * sweep_s / (ry * rx) as f64;
            (inner, (f * comm_s).min(inner))
        })
    };
    let (inner_compute_s, hidden_s) = overlap(compute_s);
    let time_s = compute_s + comm_s - hidden_s;
    let states_s = sweep
        .states_s
        .map(|st| st.map(|sweep_s| sweep_s + comm_s - overlap(sweep_s).1));
    let sweep_binding = format!("{} ({level})", sweep.binding);
    let binding = binding(&sweep_binding, &messages, compute_s, comm_s, hidden_s);
    Ok(Prediction {
        time_s,
        compute_s,
        comm_s,
        hidden_s,
        inner_compute_s,
        update_s,
        working_set_bytes: ws,
        level,
        sweep,
        messages,
        overlap_fraction,
        binding,
        notes,
        states_s,
    })
}

#[cfg(test)]
mod tests;
