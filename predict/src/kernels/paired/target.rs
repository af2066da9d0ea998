//! Which profile point a STREAM drift re-measures: for a work's memory
//! time, the kernel nearest its load/store mix at the sweep size nearest
//! its working set (or at DRAM); for its reused loads, the load kernel in
//! L1 (see the module docs of [`super`]).

use anyhow::Result;
use calibrate::harness::kernels::stream::Kernel as StreamKernel;
use calibrate::harness::pin::Team;
use calibrate::harness::timer::Plan;
use calibrate::harness::StreamRegions;
use models::kernel::Traffic;
use models::profile::stream::{StreamPoint, StreamSection};
use models::profile::Profile;

use super::Drift;
use crate::kernels::work::{Demand, Work};
use crate::loop_figures::mix_of;

/// The STREAM figure a memory or loads drift re-measures: a profile
/// point's kernel and size, and its bandwidth there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamTarget {
    pub kernel: StreamKernel,
    pub per_thread_bytes: u64,
    /// The profile's bandwidth at the point, write-allocate counted, B/s.
    pub profile_bandwidth: f64,
}

impl StreamTarget {
    /// The profile point that the memory time of `work` on `threads`
    /// threads leans on most: its largest memory demand's mix and working
    /// set (see the module docs); none without such a demand or a profile
    /// point for it. The mix is the declared streams', without the loads
    /// of reuses no cache holds that the memory term adds: with them the
    /// row-major stencil over 8 MiB rows re-measured the triad instead of
    /// the copy on the Zen 4 VM, whose drift in the host's slow two-thread
    /// state (0.61–0.64) overshot the kernel's (its paired prediction read
    /// +13% to +19% in four runs, against −0% to −8% with the copy).
    pub fn memory(work: &Work, threads: usize, profile: &Profile) -> Option<Self> {
        let (traffic, bytes) = work
            .memory()
            .max_by(|a, b| a.0.bus_bytes().total_cmp(&b.0.bus_bytes()))?;
        let (p, kernel) =
            nearest_point(profile.sections.stream.as_ref()?, threads, bytes, traffic)?;
        Some(Self {
            kernel,
            per_thread_bytes: p.per_thread_bytes,
            profile_bandwidth: p.bandwidth_write_allocate_Bps,
        })
    }

    /// The profile point that the reused loads of `work` on `threads`
    /// threads lean on: the load kernel at the all-thread sweep's smallest
    /// working set, in L1; none without reused loads or that point.
    pub fn loads(work: &Work, threads: usize, profile: &Profile) -> Option<Self> {
        let reuses = work.demands.iter().any(
            |d| matches!(d, Demand::Reuse { bytes_per_thread, .. } if *bytes_per_thread > 0.0),
        );
        let p = profile
            .sections
            .stream
            .as_ref()?
            .sweep_points(threads)
            .filter(|p| p.kernel == StreamKernel::Load.name())
            .min_by_key(|p| p.per_thread_bytes)
            .filter(|_| reuses)?;
        Some(Self {
            kernel: StreamKernel::Load,
            per_thread_bytes: p.per_thread_bytes,
            profile_bandwidth: p.bandwidth_write_allocate_Bps,
        })
    }

    /// The target's kernel measured on `regions` of `team` (which
    /// allocated them) with `plan`: B/s, write-allocate counted, the
    /// capability estimate as the profile's.
    pub fn now(&self, regions: &StreamRegions, team: &Team, plan: &Plan) -> Result<f64> {
        Ok(regions
            .measure(team, &[self.kernel], plan)?
            .remove(0)
            .write_allocate_best())
    }

    /// The drift of the figure measured `now` (B/s, write-allocate
    /// counted) on `on` ("2 thr", "2 ranks").
    pub fn drift(&self, now: f64, on: &str) -> Drift {
        Drift {
            what: format!(
                "{}, {on}, {} per thread",
                self.kernel.name(),
                models::units::binary_bytes(self.per_thread_bytes as f64)
            ),
            profile: self.profile_bandwidth,
            now,
            unit: "B/s",
        }
    }
}

/// The profile's STREAM point to re-measure for `traffic` with
/// `per_thread_bytes` per thread on `threads` threads, and its kernel.
pub(super) fn nearest_point<'a>(
    s: &'a StreamSection,
    threads: usize,
    per_thread_bytes: f64,
    traffic: &Traffic,
) -> Option<(&'a StreamPoint, StreamKernel)> {
    let sweep: Vec<&StreamPoint> = s.sweep_points(threads).collect();
    let last = sweep
        .iter()
        .map(|p| p.per_thread_bytes as f64)
        .reduce(f64::max);
    let dram_total = s.dram_bytes.map_or(f64::INFINITY, |b| b as f64);
    let beyond = per_thread_bytes * threads as f64 >= dram_total
        || last.map_or(true, |l| per_thread_bytes > l);
    let candidates: Vec<&StreamPoint> = if beyond {
        s.dram_points(threads).collect()
    } else {
        let distance = |p: &&StreamPoint| (p.per_thread_bytes as f64 / per_thread_bytes).ln().abs();
        let nearest = sweep
            .iter()
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))?;
        let size = nearest.per_thread_bytes;
        sweep
            .into_iter()
            .filter(|p| p.per_thread_bytes == size)
            .collect()
    };
    let stored_share =
        |load: f64, store: f64, allocate: f64| (store + allocate) / (load + store + allocate);
    let want = stored_share(
        traffic.load_bytes,
        traffic.store_bytes,
        traffic.allocate_bytes,
    );
    candidates
        .into_iter()
        .filter_map(|p| {
            let k = StreamKernel::ALL
                .into_iter()
                .find(|k| k.name() == p.kernel)?;
            let (l, st, a) = mix_of(s, &p.kernel)?;
            Some((p, k, (stored_share(l, st, a) - want).abs()))
        })
        .min_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(p, k, _)| (p, k))
}
