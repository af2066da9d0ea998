//! The paired re-measure: beside a variant's timings, the profile figures
//! its prediction leans on are measured again on the same threads, so that
//! a prediction need not assume the machine stayed as it was when
//! `calibrate` ran (on a shared VM the memory bandwidth drifts by tens of
//! per cent within minutes, and where the host runs the vCPUs changes
//! within a second). Every figure is interleaved with the timings
//! ([`Beside`]).
//!
//! These figures are re-measured, each with calibrate's own benchmark, at a
//! point the profile holds, so that the pair compares like with like:
//!
//! * **memory**: the STREAM kernel whose share of stored bytes (stores and
//!   write-allocate reads over all bytes moved) is nearest the variant's,
//!   at the profile's sweep size nearest (in log-size) the variant's
//!   working set per thread, or at the profile's DRAM size when the working
//!   set lies beyond the sweep, as the model reads the level
//!   (`crate::loop_figures`' level curve);
//! * **compute**: the ceiling the variant's compute term reads, the
//!   register FMA peak of its precision or the dgemm ceiling;
//! * **increments**: the time per increment of a counter, on its own line
//!   or on one line with the variant's other sharers, as `calibrate`'s c2c
//!   benchmark measures it. Whether a line's writes cross between the two
//!   vCPUs cheaply or not depends on where the host places them, which can
//!   change between `calibrate` and the kernel;
//! * **local sums**: the time per step of a local sum (one L1 load and one
//!   dependent add), all the variant's threads at once, as the c2c
//!   benchmark measures it: two vCPUs on one core's siblings share its
//!   load ports, on two cores they do not;
//! * **bin loops**: the time per item of the counting sort's histogram and
//!   scatter loops the variant runs, summed, all its threads at once on
//!   their L1-resident sequences, as the c2c benchmark measures them. Like
//!   the local sums they are bound by the core's load and store ports, and
//!   on the Zen 4 VM they moved by up to 2× between runs of `calibrate`
//!   an hour apart (0.45–0.60 ns against 0.95–1.10 ns per histogram item)
//!   while the FMA peak held;
//! * **scatters**: for a scatter beyond L1, the scatter at the profile's
//!   curve point nearest its pass's bytes, all its threads at once, as the
//!   c2c benchmark measures it: where the host shares its last cache the
//!   step of that curve to DRAM speed moves within minutes, which the
//!   STREAM kernels do not see (where the re-measure would be too long,
//!   the memory drift stands for it);
//! * **hand-offs**: for a lock-bound variant on more than one thread, the
//!   throughput of its kind of lock contended by the variant's threads
//!   (`mutex` or `spin`, with the profile's critical section), the figure a
//!   single lock's hand-offs come from;
//! * **migrations**: for the same variants, the throughput of the spread
//!   mutexes (256 mutexes taken at random, so that a lock's line moves
//!   between the cores about every other operation; `mutex_spread_empty`
//!   for a variant whose section is shorter than half the profile's, else
//!   `mutex_spread`), the figure the lock model's line migration comes
//!   from. Where the host
//!   places the two vCPUs sets both, but not in the same proportion: on
//!   the Zen 4 VM the spread mutexes' drift, applied to a single contended
//!   mutex, put the global lock's paired prediction at −45% of the kernel
//!   in one run's median round and at +148% in another's;
//! * **loads**: for a variant with loads that hit lines already in the
//!   caches (a stencil's neighbours), the STREAM load kernel at the
//!   profile's smallest sweep size, in L1, on all its threads at once.
//!   Those loads are load-port work, and two vCPUs on one core's siblings
//!   share the ports, as they do for the local sums and the bin loops.
//!
//! Each gives a [`Drift`], now / profile (of rates). The paired prediction
//! is the same model with every memory roof scaled by the memory drift,
//! every compute ceiling by the compute drift, every increment time divided
//! by the increments drift, every local-sum step by the local-sums drift,
//! every bin-loop item in L1 by the bin loops' drift and a scatter's cost
//! beyond L1 by the scatters drift, every contended lock time on more than
//! one thread by the hand-offs drift, the spread mutexes' time by the
//! migrations drift and the reused loads' rates (L1's and the window level's read bandwidths) by
//! the loads drift, and the chains within iterations' times per element by
//! the span drift ([`crate::machine::Now`]); the other figures (latencies,
//! one-thread lock times) are not re-measured. Where the line probe beside
//! the kernel says the threads share no cache (a line between them takes
//! half a DRAM access or more: on two chiplets of the Zen 4 VM), each
//! thread has the last cache to itself, as the far placement's state of
//! a profile-only prediction has it: there the row-major stencil over
//! 8 MiB rows keeps its three-row window (24 MiB per thread) in its own
//! 32 MiB L3.

use anyhow::Result;
use calibrate::harness::pin::Team;
use calibrate::harness::timer::Plan;
use calibrate::harness::StreamRegions;
use models::profile::Profile;
use serde::Serialize;

use super::team::team;
use super::work::{predict, Prediction, Work};
use crate::machine::{Machine, Missing, Now};

/// A profile figure measured again next to a kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// What was measured, e.g. "triad, 2 thr, 1 MiB per thread".
    pub what: String,
    /// The profile's figure.
    pub profile: f64,
    /// The figure now.
    pub now: f64,
    /// The unit of both: "B/s" (with write-allocate traffic), "FLOP/s",
    /// "increments/s", "steps/s" or "elements/s" (per thread) or "op/s"
    /// (locks, all threads).
    pub unit: &'static str,
}

impl Drift {
    /// now / profile: above 1 the machine is faster now than when profiled.
    pub fn ratio(&self) -> f64 {
        self.now / self.profile
    }
}

/// The figures re-measured next to one variant.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Paired {
    pub memory: Option<Drift>,
    pub compute: Option<Drift>,
    pub increments: Option<Drift>,
    pub local_sums: Option<Drift>,
    pub bin_loops: Option<Drift>,
    pub scatters: Option<Drift>,
    pub handoffs: Option<Drift>,
    pub migrations: Option<Drift>,
    pub loads: Option<Drift>,
    pub span: Option<Drift>,
    /// Where the host ran the threads beside the variant: the one-way
    /// latency of a line between the first two, s
    /// (`calibrate::harness::placement`); none on one thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_line_s: Option<f64>,
}

/// A drift beyond this share (either way) says the machine changed since
/// the profile was measured.
pub const CHANGED: f64 = 0.15;

impl Paired {
    /// The scales the paired prediction applies to the profile's roofs.
    pub fn now(&self) -> Now {
        Now {
            memory: self.memory.as_ref().map_or(1.0, Drift::ratio),
            compute: self.compute.as_ref().map_or(1.0, Drift::ratio),
            increments: self.increments.as_ref().map_or(1.0, Drift::ratio),
            local_sums: self.local_sums.as_ref().map_or(1.0, Drift::ratio),
            bin_loops: self.bin_loops.as_ref().map_or(1.0, Drift::ratio),
            scatters: self.scatters.as_ref().map(Drift::ratio),
            handoffs: self.handoffs.as_ref().map_or(1.0, Drift::ratio),
            migrations: self.migrations.as_ref().map_or(1.0, Drift::ratio),
            loads: self.loads.as_ref().map_or(1.0, Drift::ratio),
            span: self.span.as_ref().map_or(1.0, Drift::ratio),
        }
    }

    /// `work` on `threads` threads predicted on the profile as the machine
    /// runs now: the one model, its roofs scaled by the drifts, and the
    /// last cache each thread's own where the line probe beside the
    /// kernel says the threads share none ([`Machine::apart_at`]).
    pub fn predict(
        &self,
        work: &Work,
        profile: &Profile,
        threads: usize,
    ) -> Result<Prediction, Missing> {
        let now = Machine::paired(profile, self.now());
        let placed = self
            .placement_line_s
            .and_then(|line| now.apart_at(line))
            .unwrap_or(now);
        predict(work, &placed, threads)
    }

    /// Every figure re-measured.
    pub fn measured(&self) -> impl Iterator<Item = &Drift> {
        [
            &self.memory,
            &self.compute,
            &self.increments,
            &self.local_sums,
            &self.bin_loops,
            &self.scatters,
            &self.handoffs,
            &self.migrations,
            &self.loads,
            &self.span,
        ]
        .into_iter()
        .flatten()
    }

    /// The re-measured figures that moved by more than [`CHANGED`].
    pub fn changed(&self) -> Vec<&Drift> {
        self.measured()
            .filter(|d| (d.ratio() - 1.0).abs() > CHANGED)
            .collect()
    }
}

/// Re-measures the figures `work` on `threads` threads leans on, each with
/// `calibrate`'s quick plan (seven timings of at least 1 ms), short enough
/// to sit next to the kernel.
pub fn probe(work: &Work, threads: usize, profile: &Profile) -> Result<Paired> {
    let team = team(threads)?;
    let plan = Plan::quick();
    Ok(Paired {
        memory: memory_drift(work, &team, profile, &plan)?,
        ..between(work, &team, profile, &plan)?
    })
}

/// The STREAM bandwidth of the work's largest memory demand, now against
/// the profile's ([`StreamTarget::memory`]).
fn memory_drift(work: &Work, team: &Team, profile: &Profile, plan: &Plan) -> Result<Option<Drift>> {
    let target = StreamTarget::memory(work, team.threads(), profile);
    target.map(|t| stream_drift(t, team, plan)).transpose()
}

/// The load kernel's bandwidth in L1 on all the threads at once, now
/// against the profile's ([`StreamTarget::loads`]).
fn loads_drift(work: &Work, team: &Team, profile: &Profile, plan: &Plan) -> Result<Option<Drift>> {
    let target = StreamTarget::loads(work, team.threads(), profile);
    target.map(|t| stream_drift(t, team, plan)).transpose()
}

/// `target` measured again on `team`, on regions of its own.
fn stream_drift(target: StreamTarget, team: &Team, plan: &Plan) -> Result<Drift> {
    let regions = StreamRegions::new(team, target.per_thread_bytes, target.pages())?;
    let now = target.now(&regions, team, plan)?;
    Ok(target.drift(now, &format!("{} thr", team.threads())))
}

mod beside;
mod between;
mod target;
pub use beside::{Beside, MEMORY_ROUNDS};
use between::between;
pub use target::{SpanTarget, StreamTarget};

#[cfg(test)]
mod tests;
