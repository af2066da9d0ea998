//! The ghost stencil's paired re-measure: while a variant runs, every rank
//! runs the STREAM kernels its sweep's memory time and its reused loads
//! lean on, and the Horner loop its chains lean on, all at once, between
//! the variant's sweeps, as `predict run`'s thread kernels re-measure
//! theirs on their threads (`crate::kernels::paired`). The ranks of a host
//! share its memory path and its cores as the threads of the profile's
//! point do, so their bandwidth together is the figure to hold against
//! that point's; the Horner loop is a core's own figure, one rank's rate
//! against the profile's point on as many threads at once, where a rank
//! whose core's sibling the host gives to other work runs slower.
//!
//! The ranks are separate processes, so each timing starts after a barrier
//! and lasts as long as the slowest rank: a host's bandwidth in a timing is
//! its ranks' bytes over that time. The timings are spread over the
//! variant's run ([`Probe::every`]), so that they see the machine the
//! sweeps see: on a shared VM the memory bandwidth can change state within
//! a second, and a probe run only after the sweeps once read a copy 1.9×
//! faster than the profile's while the sweeps beside it ran as profiled.
//! Every rank makes the same calls in the same order (the timings' count
//! and length are agreed first), so no rank waits on a collective another
//! never reaches.
//!
//! A STREAM point that a cache holds is restored before each timing, as
//! the thread kernels' memory figure is (`crate::kernels::team::Pace`):
//! the sweeps between two timings push its arrays out, and on the Xeon VM
//! the copy at 32 MiB per rank, timed on arrays the sweeps had evicted
//! from the L3, read 0.44× of the profile's bandwidth while the N = 2048
//! sweeps beside it moved their bytes at 0.94× of it (the paired
//! prediction +84% to +115%). Alternated in two runs each, the paired
//! prediction read +77% to +97% without the restore and −4% to −15% with
//! it, the sweeps taking 1.6–1.7 ms either way.

use std::convert::Infallible;

use calibrate::harness::kernels::span::{self, ELEMENTS};
use calibrate::harness::kernels::stream::{run, Kernel};
use calibrate::harness::kernels::Isa;
use calibrate::harness::mem::{Pages, Region};
use calibrate::harness::stream_region;
use models::stats::{Better, Sample};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::driver::slowest;
use crate::kernels::team::Pace;

/// Timings of a probe over a variant's run.
pub const TIMINGS: usize = 9;
/// Each timing lasts at least this long on the slowest rank.
const MIN_TIMING_S: f64 = 2e-3;

/// What a probe times on every rank.
enum Load {
    /// A STREAM kernel over `n` elements per array (calibrate's arrays).
    Stream {
        kernel: Kernel,
        region: Region,
        n: usize,
    },
    /// The Horner loop `depth` steps deep over calibrate's elements in L1.
    Span {
        depth: usize,
        x: Vec<f64>,
        y: Vec<f64>,
    },
}

/// A kernel ready to be timed on every rank at once.
pub struct Probe {
    load: Load,
    isa: Isa,
    /// Ranks on this host, whose STREAM bytes together make its bandwidth.
    ranks_per_host: usize,
    /// Sweeps per timing.
    sweeps: u64,
    /// For a STREAM point a cache holds, its pace (seconds per byte of the
    /// host) against the profile's, restored before each timing.
    pace: Option<Pace>,
    /// This rank's time of each timing so far, seconds.
    times: Vec<f64>,
}

impl Probe {
    /// `kernel` on a working set of `per_rank_bytes` on every rank
    /// (calibrate's STREAM arrays), of `ranks_per_host` ranks on each
    /// host; `cached_bandwidth` is the profile's bandwidth there (B/s,
    /// write-allocate counted) when a cache holds the point, which each
    /// timing is then restored to. A collective: `None` on every rank when
    /// a rank could not allocate.
    pub fn new(
        world: &SimpleCommunicator,
        kernel: Kernel,
        per_rank_bytes: u64,
        ranks_per_host: usize,
        cached_bandwidth: Option<f64>,
    ) -> Option<Self> {
        let load = stream_region(per_rank_bytes, Pages::Huge)
            .ok()
            .map(|region| Load::Stream {
                kernel,
                region,
                n: kernel.elems_for(per_rank_bytes as usize),
            });
        let mut probe = Self::ready(world, load, Isa::detect(), ranks_per_host)?;
        probe.pace = cached_bandwidth.map(|b| Pace::from(1.0 / b));
        Some(probe)
    }

    /// The Horner loop `depth` steps deep on `isa` (calibrate's span
    /// kernel, one per rank). A collective.
    pub fn span(world: &SimpleCommunicator, isa: Isa, depth: usize) -> Option<Self> {
        let load = Load::Span {
            depth,
            x: span::inputs(),
            y: vec![0.0; ELEMENTS],
        };
        Self::ready(world, Some(load), isa, 1)
    }

    /// The probe of `load` when every rank has one, swept once, which
    /// sets how many sweeps make a timing (a collective).
    fn ready(
        world: &SimpleCommunicator,
        load: Option<Load>,
        isa: Isa,
        ranks_per_host: usize,
    ) -> Option<Self> {
        let mut all_ok = 0i32;
        world.all_reduce_into(
            &i32::from(load.is_some()),
            &mut all_ok,
            SystemOperation::min(),
        );
        let mut probe = Self {
            load: load.filter(|_| all_ok == 1)?,
            isa,
            ranks_per_host,
            sweeps: 1,
            pace: None,
            times: Vec::new(),
        };
        let first = slowest(world, &[probe.timed(world)])[0];
        probe.sweeps = (MIN_TIMING_S / first.max(1e-9)).ceil().max(1.0) as u64;
        Some(probe)
    }

    /// One timing on every rank, kept (a collective), after the untimed
    /// ones that restore a cached point ([`Pace::restore`]); every rank
    /// reads each untimed one's slowest time, so all run as many.
    pub fn time(&mut self, world: &SimpleCommunicator) {
        if let Some(mut pace) = self.pace.take() {
            let Ok(()) = pace.restore(|| {
                let t = slowest(world, &[self.timed(world)])[0];
                Ok::<_, Infallible>(t / self.units())
            });
            self.pace = Some(pace);
        }
        let t = self.timed(world);
        self.times.push(t);
    }

    /// This rank's seconds for one timing, started after a barrier.
    fn timed(&mut self, world: &SimpleCommunicator) -> f64 {
        world.barrier();
        let t0 = mpi::time();
        match &mut self.load {
            Load::Stream { kernel, region, n } => {
                std::hint::black_box(run(self.isa, *kernel, region.f64s_mut(), *n, self.sweeps));
            }
            Load::Span { depth, x, y } => {
                std::hint::black_box(span::run(self.isa, *depth, x, y, self.sweeps));
            }
        }
        mpi::time() - t0
    }

    /// The units one timing does: a STREAM kernel's bytes of the host's
    /// ranks together, with write-allocate traffic counted as the profile
    /// counts it; the Horner loop's elements of one rank, as the profile's
    /// one thread.
    fn units(&self) -> f64 {
        let per_sweep = match &self.load {
            Load::Stream { kernel, n, .. } => {
                self.ranks_per_host as f64 * kernel.bytes_per_elem_write_allocate() * *n as f64
            }
            Load::Span { x, .. } => x.len() as f64,
        };
        per_sweep * self.sweeps as f64
    }

    /// The rate over the timings kept, each timing's units (above) over
    /// its slowest rank's time, the capability (high) estimate (a
    /// collective): B/s of a host's ranks for a STREAM kernel, elements/s
    /// of one rank for the Horner loop. `None` with fewer than two timings.
    pub fn rate(&self, world: &SimpleCommunicator) -> Option<f64> {
        let units = self.units();
        let rates = slowest(world, &self.times)
            .iter()
            .map(|t| units / t)
            .collect();
        Sample::new(rates)
            .ok()
            .map(|s| s.summary().capability(Better::Higher).point)
    }

    /// The sweeps after which a variant of `iterations` sweeps, the first
    /// `warmup` untimed, times its probes: up to [`TIMINGS`] of them spread
    /// evenly over the timed sweeps, at most every other one, none after
    /// the last. The sweep after each runs on caches the probe has just
    /// used and is left out of the variant's sample, so at least half the
    /// timed sweeps stay in it.
    pub fn every(iterations: usize, warmup: usize) -> impl Fn(usize) -> bool {
        let step = (iterations.saturating_sub(warmup) / TIMINGS).max(2);
        move |sweep: usize| {
            sweep > warmup
                && sweep < iterations
                && (sweep - warmup) % step == 0
                && (sweep - warmup) / step <= TIMINGS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_are_spread_over_the_timed_sweeps() {
        // 200 sweeps, 10 untimed: every 21st after the warm-up, 9 of them.
        let at = Probe::every(200, 10);
        let sweeps: Vec<usize> = (1..=200).filter(|&s| at(s)).collect();
        assert_eq!(sweeps.len(), TIMINGS);
        assert_eq!((sweeps[0], sweeps[8]), (31, 199));
        // 20 sweeps, 2 untimed: every other one, none after the last.
        let at = Probe::every(20, 2);
        let sweeps: Vec<usize> = (1..=20).filter(|&s| at(s)).collect();
        assert_eq!(sweeps, (4..=18).step_by(2).collect::<Vec<_>>());
        // Few sweeps: every other one, never after the last.
        let at = Probe::every(6, 0);
        assert_eq!((1..=6).filter(|&s| at(s)).collect::<Vec<_>>(), [2, 4]);
        assert_eq!((1..=2).filter(|&s| Probe::every(2, 0)(s)).count(), 0);
    }
}
