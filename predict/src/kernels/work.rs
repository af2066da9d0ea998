//! What a kernel declares it does ([`Work`], its [`Demand`]s), and, in
//! `prediction`, the time the machine profile says that takes: the
//! slowest of its resources binds (the Roofline's max of compute and
//! traffic times, extended to locks and line transfers).

use models::kernel::{RandomAccesses, Traffic};
use models::profile::CeilingKernel;
use serde::Serialize;

use super::terms;
use crate::machine::Machine;

mod prediction;
pub use prediction::{predict, predict_at, Prediction, Term};

/// One resource a kernel run uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "resource", rename_all = "kebab-case")]
pub enum Demand {
    /// Floating-point operations on all the run's threads, at the rate of
    /// the `ceiling` kind of code (§4.4).
    Flops {
        flops: f64,
        precision: &'static str,
        ceiling: CeilingKernel,
        /// The instruction set whose ceiling applies (`None`: the highest).
        isa: Option<&'static str>,
    },
    /// Streamed memory traffic (`models::kernel::Traffic`: loads, stores,
    /// write-allocate reads) of a loop whose working set is
    /// `per_thread_bytes` per thread, which picks the level and its roofs,
    /// its arrays on huge pages or on 4 KiB pages (which sweep the roofs
    /// come from beyond the private caches). One thread's rates from DRAM
    /// are those measured in the instruction set `isa` the loop's code was
    /// built for, when the profile has them
    /// (`models::profile::stream::StreamSection::dram_points_in`; `None`:
    /// the profile's STREAM set, the widest).
    Memory {
        traffic: Traffic,
        per_thread_bytes: f64,
        huge_pages: bool,
        isa: Option<&'static str>,
    },
    /// Random accesses, each a separate miss into a region, served at the
    /// region's latency with the core's misses overlapping (§4.3).
    Random {
        accesses: RandomAccesses,
        huge_pages: bool,
    },
    /// Steps of a loop-carried floating-point chain per thread, each
    /// waiting for the one before (§4.2).
    Chain { steps_per_thread: f64 },
    /// Iterations (elements) per thread whose operations wait for one
    /// another `depth` steps deep within each iteration, vectorised with
    /// `isa` (`None`: the widest the profile measured): independent chains
    /// the core overlaps only as far as its out-of-order window holds them
    /// (§4.2's span per iteration, §4.3's Little's law on the chains in
    /// flight).
    Span {
        depth: f64,
        elements_per_thread: f64,
        precision: &'static str,
        isa: Option<&'static str>,
    },
    /// Operations under a lock of a measured kind, spread over `lanes`
    /// independent locks (1 = a global lock); the critical section runs
    /// `critical_s` seconds of work (besides a load and a store of the
    /// protected data) and writes `data_lines` cache lines of shared data
    /// apart from the lock's own line, which move with it (§4.5).
    Lock {
        ops: f64,
        kind: LockKindName,
        lanes: f64,
        critical_s: f64,
        data_lines: f64,
    },
    /// Dependent load-add-store increments of counters, `sharers` threads'
    /// counters on each cache line: 1 when every counter has its own line,
    /// more under false sharing (§3.4).
    Increments { per_thread: f64, sharers: f64 },
    /// Steps of a local sum, one L1 load and one dependent register add
    /// each, at the calibrated time per step (§3.4's fix for false sharing).
    LocalSum { steps_per_thread: f64 },
    /// Items of one of the counting sort's loops
    /// (`calibrate::harness::kernels::bins`), per thread, at the calibrated time per
    /// item in L1. This is load/store-port work, which the core does not
    /// overlap with the same loop's cache-line transfers, so its time adds
    /// to the core's own transfers instead of competing with them (the ECM
    /// model's T = T_nOL + T_data, for the non-overlapping load/store
    /// cycles; see [`predict`]).
    /// A scatter also pays what its 256 output streams cost over one
    /// stream in the level that holds its loop's working set, beyond L1
    /// (`Machine::scatter_streams_s`).
    BinLoop {
        kind: SortLoop,
        items_per_thread: f64,
        working_set_per_thread: f64,
    },
    /// Bytes each thread loads again from lines its loop brought in
    /// `window_bytes` of traffic before (0: lines still in L1;
    /// `models::kernel::LoopKernel::reused_bytes` and `windowed_reuse`):
    /// load-port work, plus the lines' way back when L1 cannot hold the
    /// window, that adds to the core's transfers as [`Demand::BinLoop`]'s
    /// does.
    Reuse {
        bytes_per_thread: f64,
        window_bytes: f64,
    },
    /// Runs of `segment_bytes` each thread's streams make before jumping
    /// elsewhere (`models::kernel::LoopKernel::segment_iterations`), tile
    /// columns of `column_bytes` per thread when the loop says how far apart
    /// its runs start (`LoopKernel::column_bytes`), over a working set of
    /// `per_thread_bytes`: each run restarts the streams, a stall that adds
    /// to the core's transfers as [`Demand::BinLoop`]'s work does.
    Restarts {
        runs_per_thread: f64,
        segment_bytes: f64,
        column_bytes: Option<f64>,
        per_thread_bytes: f64,
    },
    /// Parallel regions the run starts and joins on the pinned team, each
    /// at the time of an empty one (§2.2's overhead of a step: handing the
    /// threads their calls and waiting for the last). It is paid before
    /// and after the work whatever the work is, so it adds to the time of
    /// the resource that binds instead of competing with it.
    Regions { count: f64 },
}

impl Demand {
    /// Load/store-port work that adds to the core's own transfers instead
    /// of competing with them ([`Demand::BinLoop`], [`Demand::Reuse`],
    /// [`Demand::Restarts`]; see [`predict`]).
    pub fn is_load_store(&self) -> bool {
        matches!(
            self,
            Demand::BinLoop { .. } | Demand::Reuse { .. } | Demand::Restarts { .. }
        )
    }
}

pub use models::kernel::SortLoop;

/// Lock kinds as they appear in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKindName {
    Mutex,
    Spin,
}

/// Everything a kernel variant does in one timed run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Work {
    pub demands: Vec<Demand>,
}

impl Work {
    /// The same work run as `count` parallel regions of the team
    /// ([`Demand::Regions`]): how `predict run` times every thread
    /// kernel, one region per timed call.
    pub fn in_regions(mut self, count: f64) -> Self {
        self.demands.push(Demand::Regions { count });
        self
    }

    /// Floating-point operations (0 when none are declared).
    pub fn flops(&self) -> f64 {
        self.demands
            .iter()
            .map(|d| match d {
                Demand::Flops { flops, .. } => *flops,
                _ => 0.0,
            })
            .sum()
    }

    /// Bytes as the kernel counts them (loads + stores, no write-allocate).
    pub fn bytes(&self) -> f64 {
        self.memory().map(|(t, ..)| t.counted_bytes()).sum()
    }

    /// Each [`Demand::Memory`]: its traffic, its working set per thread
    /// and the instruction set of its code.
    pub fn memory(&self) -> impl Iterator<Item = (&Traffic, f64, Option<&'static str>)> {
        self.demands.iter().filter_map(|d| match d {
            Demand::Memory {
                traffic,
                per_thread_bytes,
                isa,
                ..
            } => Some((traffic, *per_thread_bytes, *isa)),
            _ => None,
        })
    }

    /// Whether the streams' arrays are on huge pages: those of its memory
    /// demands (all of one loop's, or one kernel's, are alike); true
    /// without any.
    pub fn huge_pages(&self) -> bool {
        self.demands.iter().all(|d| match d {
            Demand::Memory { huge_pages, .. } => *huge_pages,
            _ => true,
        })
    }

    /// Bytes its reuses load from memory again on `threads` threads, all
    /// threads together: those whose window no cache holds
    /// ([`terms::reused_from_memory`]); and the largest such window.
    pub fn reloads(&self, m: &Machine, threads: usize) -> (f64, f64) {
        self.demands
            .iter()
            .filter_map(|d| match d {
                Demand::Reuse {
                    bytes_per_thread,
                    window_bytes,
                } if terms::reused_from_memory(m, *window_bytes, threads) => {
                    Some((bytes_per_thread * threads as f64, *window_bytes))
                }
                _ => None,
            })
            .fold((0.0, 0.0), |(b, w), (bytes, window)| {
                (b + bytes, f64::max(w, window))
            })
    }
}

/// The resource of a [`Demand::Memory`] term.
pub const MEMORY_BANDWIDTH: &str = "memory bandwidth";

/// The resource of a [`Demand::Chain`] term.
pub const CHAIN: &str = "loop-carried chain";

/// The resource of a [`Demand::Span`] term.
pub const SPAN: &str = "chains within iterations";

/// The resource of the chains within iterations with the loads read again
/// beside them (`terms::chains_with_loads`).
pub const CHAINS_WITH_LOADS: &str = "chains + loads";

/// The resource of a [`Demand::Regions`] term.
pub const REGIONS: &str = "team start and join";

#[cfg(test)]
mod tests;
