//! Pure library of the classic parallel-performance models of the lecture
//! on locality, communication and contention, and the fits that calibrate
//! them to a machine.
//!
//! Every formula names the lecture section it comes from. Quantities are SI
//! base units with the unit in the name (`t0_s`, `bandwidth_Bps`); inputs
//! that make no sense are refused with a [`ModelError`] naming the parameter.
//! The library measures nothing and does no I/O: `calibrate` measures,
//! `predict` presents.
//!
//! | module | lecture | models |
//! |---|---|---|
//! | [`pipeline`] | §2.1 | pipeline latency and throughput |
//! | [`alpha_beta`] | §2.1, §2.2, §4.1 | T(n) = T0 + n/B, effective bandwidth, overlap |
//! | [`decomposition`] | §2.5, §2.7.4, §4.6 | 1D/2D assignments, artifactual traffic |
//! | [`locality`] | §2.7, §3.2–3.4 | fusion, tiling, false sharing |
//! | [`work_span`] | §4.2 | greedy bounds, latency in the span |
//! | [`little`] | §4.3 | Little's law, memory-level parallelism |
//! | [`roofline`] | §4.4 | ceilings, ridge point, binding roof |
//! | [`saturation`] | §4.4 | one core's time and the shared memory system's, with a calibrated knee |
//! | [`speedup`] | §4.6 | Amdahl, Gustafson, Karp–Flatt |
//! | [`amdahl_comm`] | §4.6, §4.1, §4.2 | Amdahl plus a communication term c·g(P), fitted to runs |
//! | [`contention`] | §2.8, §4.5 | locks, combining trees, queues |
//! | [`binning`] | §2.9, §3.5, thought question 3 | lock vs data-parallel binning |
//! | [`stencil`] | §3.1, §4.1, §4.2 | ghost-row strong and weak scaling |
//! | [`kernel`] | §2.5, §2.7, §4.3, §4.4 | a loop described by its work: arrays, flops, chains |
//! | [`traffic`] | §2.5, §4.3, §4.4 | read, write and bus roofs of a memory level |
//! | [`fit`], [`stats`], [`quantile`], [`interference`] | — | fits with intervals, sample statistics, capability estimates, disturbed batches |

pub mod alpha_beta;
pub mod amdahl_comm;
pub mod binning;
pub mod contention;
pub mod decomposition;
pub mod error;
pub mod estimate;
pub mod fit;
pub mod identity;
pub mod interference;
pub mod kernel;
pub mod little;
pub mod locality;
pub mod pipeline;
pub mod profile;
pub mod profile_check;
pub mod quantile;
pub mod random;
pub mod roofline;
pub mod saturation;
pub mod speedup;
pub mod stats;
pub mod stencil;
pub mod traffic;
pub mod units;
pub mod work_span;

pub use error::{ModelError, Result};
pub use estimate::Estimate;
