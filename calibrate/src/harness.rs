//! The measurement harness: what `predict` borrows from `calibrate` to time
//! its own kernels the way `calibrate` times the machine.
//!
//! A prediction is only comparable with a measurement taken under the same
//! rules as the profile's figures, so `predict run` does not build a second
//! harness: it times its kernels with this one. The harness is
//!
//! * [`timer`]: repetitions after warm-up, disturbed timings set aside,
//!   capability and median with their intervals;
//! * [`pin`]: teams of threads pinned one per logical CPU;
//! * [`mem`]: buffers on huge pages where the system allows them;
//! * [`kernels`]: the loops themselves (STREAM, dgemm, the increments and
//!   bins), so a built-in kernel of `predict` runs the same code as the
//!   benchmark whose figure predicts it;
//! * [`placement`]: a short ping-pong that tells where the host runs two
//!   CPUs, beside a kernel whose speed depends on it;
//! * [`measure_size`], [`measure_flops`] and [`measure_dgemm`]: calibrate's
//!   STREAM, peak and dgemm measurements themselves, for re-measuring a
//!   profile figure next to a kernel (`predict run`'s paired prediction),
//!   and [`stream_region`],
//!   one thread's STREAM arrays, for timing them another way (across MPI
//!   ranks);
//! * [`sysinfo`]: the CPU model, RAM and host name of the provenance;
//! * [`atomic`]: files written atomically, for profiles, CSV, records and
//!   charts alike;
//! * [`exit`] and [`clap_error_line`]: one line on stderr and the exit
//!   status for bad input, shared by both binaries;
//! * `watchdog` (with MPI): a stop for a job whose peer has gone.

pub use crate::atomic;
pub use crate::bench::c2c::placement;
pub use crate::bench::flops::span::measure_span;
pub use crate::bench::flops::{measure_dgemm, measure_flops};
pub use crate::bench::increments::{
    bin_items, local_sum_steps, own_line_increments, scatter_items_beyond_caches,
    shared_line_increments,
};
pub use crate::bench::lock::{throughput as lock_throughput, Kind as LockKind};
pub use crate::bench::stream::{measure_size, region as stream_region, Regions as StreamRegions};
pub use crate::cli::{clap_error_line, parse_seconds};
pub use crate::exit;
pub use crate::kernels;
pub use crate::mem;
pub use crate::pin;
#[cfg(feature = "mpi")]
pub use crate::pingpong::watchdog;
pub use crate::sysinfo;
pub use crate::timer;
