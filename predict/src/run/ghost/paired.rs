//! The ghost stencil's paired re-measure, as the thread kernels have it
//! ([`crate::kernels::paired`]): right after a variant's sweeps, every rank
//! runs the STREAM kernel of the profile's point nearest a rank's working
//! set (the copy mix the sweep moves: a load, a store and its
//! write-allocate read), all ranks at once, each on its own CPU. Rank 0
//! compares the ranks' mean with the profile's figure per thread at that
//! point. A rank's working set of 8 to 34 MB sits where the bandwidth
//! falls off the host's last-level cache, and where that happens moves
//! with the other guests' use of it: the two-thread copy sweep of the Zen 4
//! VM fell off at 12 MB per thread in one run and 34 MB in another.

use calibrate::harness::kernels::stream::Kernel as StreamKernel;
use calibrate::harness::measure_size;
use calibrate::harness::mem::Pages;
use calibrate::harness::pin::{allowed_cpus, Team};
use calibrate::harness::timer::Plan;
use models::kernel::Traffic;
use models::profile::Profile;
use models::units::binary_bytes;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::kernels::paired::{nearest_point, Drift};

/// Bytes per update of the sweep: the old grid's new element, the new
/// grid's store and its write-allocate read.
const SWEEP: Traffic = Traffic {
    load_bytes: 8.0,
    store_bytes: 8.0,
    allocate_bytes: 8.0,
};

/// The STREAM figure of a rank's working set `working_set` measured again
/// on every rank of `world` at once, against the `profile`'s (given on
/// rank 0 only) on `ranks_per_host` threads; `local_rank` is the rank's
/// index among those on its host, which picks its CPU. Every rank takes
/// part in the same collective calls whatever happens; a rank that cannot
/// measure makes the drift none everywhere. Rank 0 gets the drift, the
/// other ranks none.
pub(super) fn memory_drift(
    world: &SimpleCommunicator,
    profile: Option<&Profile>,
    ranks_per_host: usize,
    local_rank: usize,
    working_set: f64,
) -> Option<Drift> {
    let point = profile
        .and_then(|p| p.sections.stream.as_ref())
        .and_then(|s| nearest_point(s, ranks_per_host, working_set, &SWEEP))
        .map(|(p, k)| (p.per_thread_bytes, k, p.bandwidth_write_allocate_Bps));
    let mut wanted: [u64; 2] = point
        .and_then(|(bytes, k, _)| {
            let index = StreamKernel::ALL.iter().position(|&x| x == k)?;
            Some([bytes, index as u64])
        })
        .unwrap_or([0, 0]);
    world.process_at_rank(0).broadcast_into(&mut wanted[..]);
    if wanted[0] == 0 {
        return None;
    }
    let kernel = StreamKernel::ALL[wanted[1] as usize];
    let cpus = allowed_cpus();
    world.barrier();
    let now = cpus
        .get(local_rank % cpus.len().max(1))
        .and_then(|&cpu| Team::new(&[cpu]).ok())
        .and_then(|team| {
            measure_size(&team, wanted[0], &[kernel], Pages::Huge, &Plan::quick()).ok()
        })
        .and_then(|mut points| points.pop())
        .map_or(f64::NAN, |p| p.write_allocate_best());
    let mut sum = 0.0f64;
    world.all_reduce_into(&now, &mut sum, SystemOperation::sum());
    let ranks = world.size() as f64;
    let (bytes, kernel, profiled) = point?;
    sum.is_finite().then(|| Drift {
        what: format!(
            "{}, {} rank(s) at once, {} each",
            kernel.name(),
            world.size(),
            binary_bytes(bytes as f64)
        ),
        profile: profiled,
        now: sum / ranks * ranks_per_host as f64,
        unit: "B/s",
    })
}
