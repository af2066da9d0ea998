//! The profile figures the loop model reads, each at its point estimate or
//! at either end of its 95% interval ([`Bound`]), so that a prediction
//! carries the profile's uncertainty as a range:
//!
//! * here, the streams: the read, write and bus roofs of the level a
//!   working set lives in (from the STREAM sweep's kernels), one core's
//!   share of them, the DRAM points' two states, the knee between one
//!   core and the shared memory system, what a stream's restart and a
//!   scatter's streams cost;
//! * [`levels`]: which cache holds a working set or a reuse window, the
//!   share of a sweep that comes from DRAM, and the last cache's step,
//!   where a loop may get all of that cache or none;
//! * [`latency`]: the latency of a random access (the pointer-chase
//!   curve), the misses one core keeps in flight (the MLP curve), a
//!   loop-carried chain's step and the chains within iterations.

use calibrate::harness::kernels::stream::Kernel as StreamKernel;
use models::kernel::Traffic;
use models::profile::c2c::ScatterPoint;
use models::profile::stream::{Placements, StreamSection};
use models::traffic::{time_at, LevelModel};
use models::units::Si;
use models::Estimate;

use crate::machine::{missing, Machine, Missing};

pub mod latency;
pub mod levels;
pub use levels::ReuseLevel;

/// Bytes the counting sort's scatter stores per item (a `u32` index).
pub const SCATTER_ITEM_BYTES: f64 = 4.0;

/// Which value of each measured figure a prediction uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The point estimates.
    Point,
    /// Every rate at the top of its interval, every latency at the bottom:
    /// the fastest the measurements allow.
    Fast,
    /// The opposite end: the slowest.
    Slow,
}

impl Bound {
    /// `point` moved to the interval end this bound stands for, for a rate
    /// (higher is faster) with interval [`lo`, `hi`].
    pub(crate) fn rate(self, point: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
        match self {
            Bound::Point => point,
            Bound::Fast => hi.unwrap_or(point),
            Bound::Slow => lo.unwrap_or(point),
        }
    }

    /// The same for a time (lower is faster).
    fn time(self, point: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
        match self {
            Bound::Point => point,
            Bound::Fast => lo.unwrap_or(point),
            Bound::Slow => hi.unwrap_or(point),
        }
    }
}

/// Load, store and allocate bytes per element of a STREAM kernel: from the
/// profile when it lists them, else from calibrate's kernel table (profiles
/// from before the section carried them).
pub(crate) fn mix_of(section: &StreamSection, kernel: &str) -> Option<(f64, f64, f64)> {
    if let Some(mix) = section.mix(kernel) {
        return Some(mix);
    }
    let k = StreamKernel::ALL.into_iter().find(|k| k.name() == kernel)?;
    Some((
        8.0 * k.loaded_arrays() as f64,
        8.0 * k.stored_arrays() as f64,
        k.allocate_bytes_per_elem(),
    ))
}

impl Bound {
    /// The value of a rate estimate this bound stands for.
    pub fn of_rate(self, e: &Estimate) -> f64 {
        self.rate(e.point, Some(e.lo), Some(e.hi))
    }

    /// The value of a time estimate this bound stands for.
    fn of_time(self, e: &Estimate) -> f64 {
        self.time(e.point, Some(e.lo), Some(e.hi))
    }
}

impl<'a> Machine<'a> {
    /// The traffic model of every size of the STREAM sweep on `threads`
    /// threads (`models::traffic::LevelModel`, built from all the kernels
    /// measured at that size), the DRAM points of code built for `isa`
    /// included (`StreamSection::dram_points_in`), sorted by size; leaning
    /// on the summary's triad of that many threads.
    fn level_curve(
        &self,
        threads: usize,
        isa: Option<&str>,
        bound: Bound,
    ) -> Result<Vec<(f64, LevelModel)>, Missing> {
        self.lean_on(if threads == 1 {
            "stream_triad_1t_Bps"
        } else {
            "stream_triad_Bps"
        });
        let s = self.stream()?;
        let curve = s.level_curve(
            threads,
            self.huge_pages(),
            isa,
            |k| mix_of(s, k),
            |e| bound.of_rate(e),
        );
        if curve.is_empty() {
            return Err(Missing {
                what: format!("a STREAM sweep on {threads} thread(s)"),
                fix: "stream",
            });
        }
        Ok(curve)
    }

    /// Seconds a loop's streamed `traffic` takes on `threads` threads with
    /// `per_thread_bytes` of working set per thread, its code built for
    /// `isa` (`None`: the profile's STREAM set), and the level model of the
    /// nearest measured size.
    pub fn traffic_time(
        &self,
        traffic: &Traffic,
        threads: usize,
        per_thread_bytes: f64,
        isa: Option<&str>,
        bound: Bound,
    ) -> Result<(f64, LevelModel), Missing> {
        let curve = self.level_curve(threads, isa, bound)?;
        let at = self.swept_at(per_thread_bytes, threads, per_thread_bytes, threads);
        let (seconds, level) = time_at(&curve, at, traffic).expect("a curve with points");
        Ok((seconds / self.now.memory, level))
    }

    /// Seconds one of `threads` threads takes for its share of `traffic`
    /// at one thread's STREAM rates: the core's own data transfers (ECM's
    /// T_data), which the shared memory system's time on all threads
    /// ([`Machine::traffic_time`]) bounds apart (ECM's saturation,
    /// T = max(T_core, T_bus), or near it the calibrated knee of
    /// `models::saturation`). The thread's lines come from the level that
    /// holds `per_thread_bytes` on `threads` threads: a private level (L1,
    /// L2) at that size on one thread's curve, the shared last cache or
    /// DRAM at the whole working set, `threads` × `per_thread_bytes`. A
    /// paired drift measured on all threads is the shared system's and
    /// does not scale this time; on one thread it is the core's own. A
    /// profile without a one-thread sweep gives the all-thread time.
    pub fn one_core_traffic_time(
        &self,
        traffic: &Traffic,
        threads: usize,
        per_thread_bytes: f64,
        isa: Option<&str>,
        bound: Bound,
    ) -> Result<f64, Missing> {
        let all = || {
            Ok(self
                .traffic_time(traffic, threads, per_thread_bytes, isa, bound)?
                .0)
        };
        if threads <= 1 {
            return all();
        }
        let Ok(curve) = self.level_curve(1, isa, bound) else {
            return all();
        };
        let p = threads as f64;
        let share = Traffic {
            load_bytes: traffic.load_bytes / p,
            store_bytes: traffic.store_bytes / p,
            allocate_bytes: traffic.allocate_bytes / p,
        };
        let seen = if self.private_level_holds(per_thread_bytes, threads) {
            per_thread_bytes
        } else {
            per_thread_bytes * p
        };
        let at = self.swept_at(seen, 1, per_thread_bytes, threads);
        Ok(time_at(&curve, at, &share).expect("a curve with points").0)
    }

    /// Seconds one thread pays per byte it reads again from a reuse window
    /// of `window_bytes` while its streams come from DRAM (the stream
    /// section's window curve, `StreamSection::window_read_s`); `None` for
    /// a profile without it.
    pub fn window_read_s(&self, window_bytes: f64, bound: Bound) -> Option<f64> {
        let s = self.profile.sections.stream.as_ref()?;
        s.window_read_s(window_bytes).map(|e| bound.of_time(&e))
    }

    /// Seconds one thread pays per byte it reads again from lines L1 holds
    /// while its streams, `streamed_per_thread_bytes` on `threads`
    /// threads, come from beyond L1 (the stream section's L1 rereads at
    /// that working set, `StreamSection::l1_reread_s`); `None` when L1
    /// holds the streams or the profile lacks the curve.
    pub fn l1_reread_s(
        &self,
        streamed_per_thread_bytes: f64,
        threads: usize,
        bound: Bound,
    ) -> Option<(f64, &'a str)> {
        let from = self.holding_level_name(streamed_per_thread_bytes, threads);
        if streamed_per_thread_bytes <= 0.0 || from == "L1" {
            return None;
        }
        let s = self.profile.sections.stream.as_ref()?;
        s.l1_reread_s(streamed_per_thread_bytes)
            .map(|e| (bound.of_time(&e), from))
    }

    /// Whether the profile's DRAM points on `threads` threads saw the
    /// host's memory path in two states (`StreamSection::dram_two_states`):
    /// then the ends of their intervals are the two states' rates. The
    /// 4 KiB-page points are measured in one go, with no bursts: a loop
    /// that reads them names no states.
    pub fn dram_two_states(&self, threads: usize) -> bool {
        !self.on_base_pages(threads) && self.stream().is_ok_and(|s| s.dram_two_states(threads))
    }

    /// The two placements of the threads the profile's DRAM bursts on
    /// `threads` threads ran in (`StreamSection::dram_placements`); none
    /// for a loop that reads the 4 KiB-page points.
    pub fn dram_placements(&self, threads: usize) -> Option<Placements> {
        if self.on_base_pages(threads) {
            return None;
        }
        self.stream().ok()?.dram_placements(threads)
    }

    /// The exponent k of the knee between one core's time and the shared
    /// memory system's for a loop on `threads` threads
    /// (`models::saturation`), fitted to the stream section's lagged
    /// copies on all threads; `None` on one thread or for a profile
    /// without it. A larger k is the faster end of its interval.
    pub fn knee_exponent(&self, threads: usize, bound: Bound) -> Option<f64> {
        if threads <= 1 {
            return None;
        }
        let k = self.profile.sections.stream.as_ref()?.knee.as_ref()?;
        Some(bound.of_rate(&k.exponent))
    }

    /// Seconds a thread loses per restart of its streams, runs of
    /// `segment_bytes` on `threads` threads in tile columns of
    /// `column_bytes` per thread (`None`: the smallest measured; the stream
    /// section's restart curves, `StreamSection::restart_s`).
    pub fn restart_s(
        &self,
        threads: usize,
        segment_bytes: f64,
        column_bytes: Option<f64>,
        bound: Bound,
    ) -> Result<f64, Missing> {
        self.stream()?
            .restart_s(threads, segment_bytes, column_bytes)
            .map(|e| bound.of_time(&e))
            .ok_or_else(|| missing("the cost of a stream's restart", "stream"))
    }

    /// What a scatter's 256 output streams cost per item over what the
    /// loop model charges for the same loop, in a pass whose own working
    /// set is `pass_bytes` per thread on `threads` threads: the calibrated
    /// scatter's curve read at that size (`C2cSection::scatter_at`; the
    /// calibrated loop's input sits in L1, so its output is its working
    /// set), less the same loop in L1 and less its output stream
    /// ([`SCATTER_ITEM_BYTES`] stored per item, with write-allocate) at
    /// the streaming rate the memory term reads there; never below 0. None
    /// in L1, where the calibrated loop itself ran. Paired, the excess is
    /// the level's (the re-measured scatter's drift divides it, or the
    /// memory drift where the scatter was not re-measured), while the
    /// loop in L1 follows the bin loops' drift ([`Machine::bin_item_s`]):
    /// the three figures are the profile's, so a slower level lengthens
    /// the excess rather than shortening it. The calibrated times are per
    /// item of one thread while every thread scatters, so the stream
    /// charged is every thread's item at the all-thread rate. Beside the
    /// figure, the breakdown for the explanation.
    ///
    /// The 256 streams are more than the prefetchers follow, so their
    /// write-allocates wait on the level the output's lines come from, in
    /// L3 as at DRAM: on the Xeon VM (2 threads) the loop took 1.4–2.1 ns
    /// per item up to 2–4 MiB of output over both threads, 2.1–3.1 ns up
    /// to 12–16 MiB and 4.6–6.9 ns beyond, that step moving between runs
    /// minutes apart and lying far inside the 260 MB L3 the OS reports.
    /// The pass, not the kernel, is read: the counting sort of 1 Mi
    /// particles (20 MiB in all) ran its scatter at the curve's speed for
    /// its pass's 8 MiB of cells and output, not for the 20 MiB that lay
    /// past the step. A curve that does not reach the pass's level
    /// (an older profile with a point per level) is no answer there.
    pub fn scatter_streams_s(
        &self,
        pass_bytes: f64,
        threads: usize,
        bound: Bound,
    ) -> Result<Option<(f64, String)>, Missing> {
        let level = self.holding_index(pass_bytes, threads);
        if level == Some(0) {
            return Ok(None);
        }
        let name = self.holding_level_name(pass_bytes, threads);
        let c2c = self.c2c()?;
        let curve = c2c.scatter_beyond_l1();
        let in_level =
            |p: &ScatterPoint| self.holding_index(p.output_bytes as f64, p.threads) == level;
        let reached = matches!((curve.first(), curve.last()), (Some(a), Some(z))
            if (a.output_bytes as f64 <= pass_bytes || in_level(a))
                && (z.output_bytes as f64 >= pass_bytes || in_level(z)));
        let point = c2c
            .scatter_at(pass_bytes)
            .filter(|_| reached)
            .ok_or_else(|| {
                missing(
                    format!("the time per item of a scatter with its output in {name}"),
                    "c2c",
                )
            })?;
        let t_l1 = c2c
            .bin_item_s("scatter")
            .ok_or_else(|| missing("the time per item of a scatter loop", "c2c"))?;
        let streamed = SCATTER_ITEM_BYTES * point.threads as f64;
        let bytes = point.output_bytes as f64;
        let stream = Traffic::streaming(0.0, streamed);
        // The profile's figures all three: the level's pace now scales
        // the excess as a whole.
        let now = self.now.memory;
        let (t_stream, _) = self.traffic_time(&stream, point.threads, bytes, None, bound)?;
        let t_stream = t_stream * now;
        let (drift, which) = self
            .now
            .scatters
            .map_or((now, "memory"), |s| (s, "scatter's"));
        let excess = (point.item_s - t_l1 - t_stream).max(0.0) / drift;
        let paired = if drift == 1.0 {
            String::new()
        } else {
            format!(", divided by the {which} drift {drift:.3}")
        };
        let how = format!(
            "Δ = t_{name} − t_L1 − {streamed} B streamed (an item on each thread) = {:.3e} − {t_l1:.3e} − {t_stream:.3e} s{paired} \
             (the calibrated scatter's curve at the pass's {} per thread, on {} thread(s))",
            point.item_s,
            Si(bytes, "B"),
            point.threads
        );
        Ok(Some((excess, how)))
    }
}
