//! Which profile point a drift re-measures: for a work's memory time, the
//! STREAM kernel nearest its load/store mix at the sweep size nearest its
//! working set (or at DRAM); for its reused loads, the load kernel in L1
//! (see the module docs of [`super`]); for its chains within iterations,
//! the Horner loop at the measured depth nearest theirs; for its scatter
//! beyond L1, the scatter's curve point nearest its pass.

use anyhow::Result;
use calibrate::harness::kernels::stream::Kernel as StreamKernel;
use calibrate::harness::kernels::Isa;
use calibrate::harness::mem::Pages;
use calibrate::harness::pin::Team;
use calibrate::harness::timer::Plan;
use calibrate::harness::StreamRegions;
use models::kernel::Traffic;
use models::profile::c2c::ScatterPoint;
use models::profile::flops::SpanPoint;
use models::profile::stream::{StreamPoint, StreamSection};
use models::profile::Profile;

use super::Drift;
use crate::kernels::work::{Demand, SortLoop, Work};
use crate::loop_figures::{mix_of, SCATTER_ITEM_BYTES};
use crate::machine::Machine;

/// The profile's Horner point a work's chains within iterations lean on:
/// the measured depth nearest (in log) to theirs, on the set their term
/// reads, at the threads running at once whose curve their term reads,
/// one thread's time per element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpanTarget {
    pub isa: Isa,
    pub depth: usize,
    /// Threads of the point: the work's, or one where the profile has no
    /// curve on as many.
    pub threads: usize,
    /// The profile's seconds per element there.
    pub profile_s: f64,
}

impl SpanTarget {
    /// The point for `work` on `threads` threads; none without chains
    /// within iterations, a curve in their set, or that set on this CPU.
    pub fn of(work: &Work, profile: &Profile, threads: usize) -> Option<Self> {
        let (depth, isa) = work.demands.iter().find_map(|d| match d {
            Demand::Span { depth, isa, .. } => Some((*depth, *isa)),
            _ => None,
        })?;
        let flops = profile.sections.flops.as_ref()?;
        let set = flops.span_set(isa)?;
        let point = flops.span_points(set, threads).min_by(|a, b| {
            let off = |p: &SpanPoint| (p.depth as f64 / depth).ln().abs();
            off(a).total_cmp(&off(b))
        })?;
        let isa = Isa::from_name(set).filter(|i| i.supported())?;
        Some(Self {
            isa,
            depth: point.depth as usize,
            threads: point.threads,
            profile_s: point.element.time().point,
        })
    }

    /// The drift of `now_s` seconds per element on one thread of `on`
    /// ("2 thr", "each of 2 rank(s)").
    pub fn drift(&self, now_s: f64, on: &str) -> Drift {
        Drift {
            what: format!("{} chains {} steps deep, {on}", self.isa, self.depth),
            profile: 1.0 / self.profile_s,
            now: 1.0 / now_s,
            unit: "elements/s",
        }
    }
}

/// The STREAM figure a memory or loads drift re-measures: a profile
/// point's kernel and size, and its bandwidth there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamTarget {
    pub kernel: StreamKernel,
    pub per_thread_bytes: u64,
    /// The profile's bandwidth at the point, write-allocate counted, B/s.
    pub profile_bandwidth: f64,
    /// Whether the point was measured on huge pages (else 4 KiB pages),
    /// as it is measured again.
    pub huge_pages: bool,
    /// Whether a cache holds the working set whose point this is, as the
    /// model's levels count it (`crate::machine::Machine::beyond_caches`).
    pub cached: bool,
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
        let (traffic, bytes, _) = work
            .memory()
            .max_by(|a, b| a.0.bus_bytes().total_cmp(&b.0.bus_bytes()))?;
        let s = profile.sections.stream.as_ref()?;
        let (p, kernel) = nearest_point(s, threads, bytes, traffic, work.huge_pages())?;
        let on_base_pages = s.base_page_points(threads).any(|b| std::ptr::eq(b, p));
        Some(Self {
            kernel,
            per_thread_bytes: p.per_thread_bytes,
            profile_bandwidth: p.bandwidth_write_allocate_Bps,
            huge_pages: !on_base_pages,
            cached: !Machine::new(profile).beyond_caches(bytes, threads),
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
            huge_pages: true,
            cached: true,
        })
    }

    /// The pages the target is measured on.
    pub fn pages(&self) -> Pages {
        if self.huge_pages {
            Pages::Huge
        } else {
            Pages::Small
        }
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
/// `per_thread_bytes` per thread on `threads` threads, its arrays on huge
/// pages or not (`StreamSection::points_on`), and its kernel: at the
/// measured size nearest the working set, or at the DRAM size (the
/// largest) when the working set lies beyond every other size or all
/// threads' reach the DRAM working set.
pub(super) fn nearest_point<'a>(
    s: &'a StreamSection,
    threads: usize,
    per_thread_bytes: f64,
    traffic: &Traffic,
    huge_pages: bool,
) -> Option<(&'a StreamPoint, StreamKernel)> {
    let points = s.points_on(threads, huge_pages, None);
    let last = points.iter().map(|p| p.per_thread_bytes).max()?;
    let dram_total = s.dram_bytes.map_or(f64::INFINITY, |b| b as f64);
    let below = points
        .iter()
        .map(|p| p.per_thread_bytes)
        .filter(|&b| b < last)
        .max();
    let beyond = below.map_or(true, |b| per_thread_bytes > b as f64);
    let size = if beyond || per_thread_bytes * threads as f64 >= dram_total {
        last
    } else {
        let distance =
            |p: &&&StreamPoint| (p.per_thread_bytes as f64 / per_thread_bytes).ln().abs();
        points
            .iter()
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))?
            .per_thread_bytes
    };
    let candidates = points.into_iter().filter(|p| p.per_thread_bytes == size);
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

/// The longest pass of the scatter a round re-measures: a round times it
/// twice after every timing of the kernel.
const SCATTER_PASS_S: f64 = 10e-3;

/// The profile's scatter point a paired round re-measures for `work` on
/// `threads` threads: the curve point nearest (in log size) to the work's
/// scattering pass (`Machine::scatter_streams_s` reads the curve at the
/// pass's bytes). Where the host shares its last cache the curve's step to
/// DRAM speed moves within minutes (on the Xeon VM between 12 and 20 MiB
/// of output over two threads), and the STREAM kernels of the memory drift
/// do not see it. None without a scatter beyond L1, for a point measured
/// on another thread count, and where the DRAM point is nearest or one
/// pass over the point's output would take more than [`SCATTER_PASS_S`]:
/// the memory drift stands for the scatter there.
pub fn scatter_target(work: &Work, threads: usize, profile: &Profile) -> Option<ScatterPoint> {
    let pass = work.demands.iter().find_map(|d| match d {
        Demand::BinLoop {
            kind: SortLoop::Scatter,
            working_set_per_thread,
            ..
        } => Some(*working_set_per_thread),
        _ => None,
    })?;
    if Machine::new(profile).holding_level_name(pass, threads) == "L1" {
        return None;
    }
    let c2c = profile.sections.c2c.as_ref()?;
    let dram = c2c
        .increments
        .as_ref()
        .and_then(|i| i.scatter_dram.as_ref()?.output_bytes);
    let distance = |bytes: u64| (bytes as f64 / pass).ln().abs();
    c2c.scatter_beyond_l1()
        .into_iter()
        .min_by(|a, b| distance(a.output_bytes).total_cmp(&distance(b.output_bytes)))
        .filter(|p| {
            Some(p.output_bytes) != dram
                && p.threads == threads
                && p.item_s * p.output_bytes as f64 / SCATTER_ITEM_BYTES <= SCATTER_PASS_S
        })
}
