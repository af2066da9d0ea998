//! `calibrate` measures the machine it runs on and writes a versioned
//! machine profile (`models::profile::Profile`) that `predict` reads.
//!
//! Six microbenchmarks, each behind the [`bench::Bench`] trait, on threads
//! pinned one per logical CPU:
//!
//! | name      | measures                                               | lecture |
//! |-----------|--------------------------------------------------------|---------|
//! | `latency` | pointer-chase latency per level, detected levels, TLB  | §2.1, §2.4, §2.6 |
//! | `flops`   | peak FLOP/s (FMA chains), the Roofline's ceilings       | §4.4 |
//! | `stream`  | STREAM bandwidth per level, 1 thread and all threads    | §2.4, §2.5, §4.4 |
//! | `mlp`     | bandwidth against misses in flight, Little's law        | §4.3 |
//! | `c2c`     | core-to-core latency and hand-off T(n) = T0 + n/B       | §2.2, §2.4 |
//! | `lock`    | lock throughput against threads, t_crit                 | §2.8, §4.5 |
//!
//! Every figure is a sample of repeated timings after warm-up; timings the
//! OS reports disturbed (steal, run-queue waits: [`counters`]) are set aside
//! and counted, and a figure left with too few clean ones is re-measured,
//! then kept out of the summary as unreliable ([`timer`], [`trust`]).
//! Capability figures are a low quantile of the clean times with its
//! interval (`models::stats::capability`), the others the median; noisy
//! figures, figures above a physical bound and "DRAM" figures that may be
//! cache-resident are flagged in the table and in the profile notes.
//!
//! The binary is glue: [`cli`] parses, [`run`] (or [`point`] for one
//! figure) does the work, `main` prints one error line and exits 2 on bad
//! input.
//!
//! `predict` uses this library only through [`harness`]: the timer, the
//! pinned teams, the huge-page buffers, the kernels and the atomic file
//! writer, so that its kernels are measured as the profile was.

pub mod atomic;
pub mod bench;
pub mod cli;
pub mod clock;
pub mod config;
pub mod counters;
pub mod exit;
pub mod harness;
pub mod kernels;
pub mod levels;
pub mod mem;
pub mod network;
pub mod output;
pub mod pin;
#[cfg(feature = "mpi")]
pub mod pingpong;
pub mod point;
pub mod progress;
pub mod run;
pub mod sysinfo;
pub mod timer;
pub mod trust;

pub use config::UsageError;
