//! The ghost stencil's paired re-measure: right after a variant, every rank
//! runs the STREAM kernels its sweep's memory time and its reused loads
//! lean on, all at once, as `predict run`'s thread kernels re-measure
//! theirs on their threads (`crate::kernels::paired`). The ranks of a host
//! share its memory path and its cores as the threads of the profile's
//! point do, so their bandwidth together is the figure to hold against
//! that point's.
//!
//! The ranks are separate processes, so each timing starts after a barrier
//! and lasts as long as the slowest rank: a host's bandwidth in a timing is
//! its ranks' bytes over that time. Every rank makes the same calls in the
//! same order (the timings' count and length are agreed first), so no rank
//! waits on a collective another never reaches.

use calibrate::harness::kernels::stream::{run, words_for_all, Kernel};
use calibrate::harness::kernels::Isa;
use calibrate::harness::mem::{Pages, Region};
use models::stats::{Better, Sample};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// Timings of the probe.
const TIMINGS: usize = 9;
/// Each timing lasts at least this long on the slowest rank.
const MIN_TIMING_S: f64 = 2e-3;

/// Bandwidth of `kernel` on the `ranks_per_host` ranks of a host at once,
/// each on its own `per_rank_bytes` working set, B/s with write-allocate
/// traffic counted as the profile counts it: the capability (high) estimate
/// over [`TIMINGS`] timings. `None` on every rank when a rank could not
/// allocate its working set.
pub fn stream_on_ranks(
    world: &SimpleCommunicator,
    kernel: Kernel,
    per_rank_bytes: u64,
    ranks_per_host: usize,
) -> Option<f64> {
    let region = Region::new(words_for_all(per_rank_bytes as usize) * 8, Pages::Huge).ok();
    let mut all_ok = 0i32;
    world.all_reduce_into(
        &i32::from(region.is_some()),
        &mut all_ok,
        SystemOperation::min(),
    );
    let mut region = region.filter(|_| all_ok == 1)?;
    let mem = region.f64s_mut();
    mem.fill(1.0);
    let (isa, n) = (Isa::detect(), kernel.elems_for(per_rank_bytes as usize));
    let timed = |sweeps: u64, mem: &mut [f64]| {
        world.barrier();
        let t0 = mpi::time();
        std::hint::black_box(run(isa, kernel, mem, n, sweeps));
        mpi::time() - t0
    };
    // One sweep, which also warms the pages, sets how many make a timing.
    let mut slowest = 0.0f64;
    world.all_reduce_into(&timed(1, mem), &mut slowest, SystemOperation::max());
    let sweeps = (MIN_TIMING_S / slowest.max(1e-9)).ceil().max(1.0) as u64;
    let times: [f64; TIMINGS] = std::array::from_fn(|_| timed(sweeps, mem));
    let mut slowest = [0.0f64; TIMINGS];
    world.all_reduce_into(&times[..], &mut slowest[..], SystemOperation::max());
    let bytes =
        ranks_per_host as f64 * kernel.bytes_per_elem_write_allocate() * n as f64 * sweeps as f64;
    let rates = slowest.iter().map(|t| bytes / t).collect();
    Sample::new(rates)
        .ok()
        .map(|s| s.summary().capability(Better::Higher).point)
}
