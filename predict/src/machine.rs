//! What the kernels' predictions read from a machine profile, each figure
//! with the `calibrate --only` section that provides it when it is missing.

use models::profile::c2c::C2cSection;
use models::profile::lock::{HandOff, LockSection};
use models::profile::stream::Placements;
use models::profile::stream::StreamSection;
use models::profile::{CeilingKernel, Profile};
use thiserror::Error;

use crate::loop_figures::levels::LastCache;
use crate::loop_figures::Bound;

mod trust;
use trust::warn_once;
pub use trust::{other_machine_warning, this_machine, unreliable_lock_warning, unreliable_warning};

/// A figure the profile does not hold.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("profile lacks {what}; run `calibrate --only {fix}`")]
pub struct Missing {
    pub what: String,
    pub fix: &'static str,
}

pub(crate) fn missing(what: impl Into<String>, fix: &'static str) -> Missing {
    Missing {
        what: what.into(),
        fix,
    }
}

/// Read-only view of a profile for predictions, with the machine as it
/// runs now against the profile.
#[derive(Clone, Copy)]
pub struct Machine<'a> {
    pub profile: &'a Profile,
    pub now: Now,
    /// Whether the threads run where they share no cache
    /// ([`Machine::apart`]): each then has the last cache to itself.
    apart: bool,
    /// Whether the loop's arrays are on huge pages (else 4 KiB pages):
    /// which STREAM figures its streams read ([`Machine::on_pages`]).
    huge_pages: bool,
    /// How much of the last cache the loop's data gets
    /// ([`Machine::with_last_cache`]).
    last_cache: LastCache,
}

/// How the machine runs now against its profile, from the paired
/// re-measure next to a kernel ([`crate::kernels::paired`]): the scale of
/// every memory roof, of every compute ceiling, of the counters'
/// increment and local-sum rates, of the locks' rates on more than one
/// thread, of the reused loads' rates and of the chains within iterations'
/// (1 = as profiled).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Now {
    pub memory: f64,
    pub compute: f64,
    /// Increments per second now over the profile's (its times divided).
    pub increments: f64,
    /// Steps of a local sum per second now over the profile's.
    pub local_sums: f64,
    /// Items per second of the counting sort's loops now over the
    /// profile's (their times per item divided).
    pub bin_loops: f64,
    /// Items per second of the scatter beyond L1 at its curve point nearest
    /// the pass, now over the profile's; `None`: not re-measured, and the
    /// memory drift stands for it.
    pub scatters: Option<f64>,
    /// Contended lock operations per second on more than one thread now
    /// over the profile's (the times of every contended lock divided).
    pub handoffs: f64,
    /// Spread-mutex operations per second on more than one thread now over
    /// the profile's (the line migrations' figure divided).
    pub migrations: f64,
    /// Bytes per second that loads hitting L1 move, on all the threads at
    /// once, now over the profile's (the reused loads' rates scaled).
    pub loads: f64,
    /// Elements per second of iterations with a chain inside now over the
    /// profile's (the span curve's times divided).
    pub span: f64,
}

impl Default for Now {
    fn default() -> Self {
        Self {
            memory: 1.0,
            compute: 1.0,
            increments: 1.0,
            local_sums: 1.0,
            bin_loops: 1.0,
            scatters: None,
            handoffs: 1.0,
            migrations: 1.0,
            loads: 1.0,
            span: 1.0,
        }
    }
}

/// The paired re-measure's scale `now` of lock rates on `threads` threads:
/// one thread hands nothing off, so its times are not scaled.
fn contended(threads: usize, now: f64) -> f64 {
    if threads > 1 {
        now
    } else {
        1.0
    }
}

/// Kind of lock whose measured throughput curve a prediction uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    Mutex,
    Spin,
    FetchAdd,
}

impl LockKind {
    fn key(self) -> &'static str {
        match self {
            LockKind::Mutex => "mutex",
            LockKind::Spin => "spin",
            LockKind::FetchAdd => "fetch_add",
        }
    }
}

impl<'a> Machine<'a> {
    /// The machine as profiled.
    pub fn new(profile: &'a Profile) -> Self {
        Self::paired(profile, Now::default())
    }

    /// The profiled machine as it runs `now`.
    pub fn paired(profile: &'a Profile, now: Now) -> Self {
        Self {
            profile,
            now,
            apart: false,
            huge_pages: true,
            last_cache: LastCache::AsProfiled,
        }
    }

    /// The machine as a loop whose arrays are on huge pages, or on 4 KiB
    /// pages, sees it: its streams read the STREAM sweep on those pages
    /// beyond the private caches, when the profile has it
    /// (`models::profile::stream::StreamSection::points_on`).
    pub fn on_pages(&self, huge_pages: bool) -> Self {
        Self {
            huge_pages,
            ..*self
        }
    }

    /// The machine with the loop's data given `share` of the last cache
    /// ([`LastCache`]).
    pub fn with_last_cache(&self, share: LastCache) -> Self {
        Self {
            last_cache: share,
            ..*self
        }
    }

    /// The share of the last cache the loop's data gets
    /// ([`Machine::with_last_cache`]).
    pub(crate) fn last_cache(&self) -> LastCache {
        self.last_cache
    }

    /// Whether this machine's streams read 4 KiB-page figures: the loop is
    /// on 4 KiB pages and the profile measured them on `threads` threads.
    pub(crate) fn on_base_pages(&self, threads: usize) -> bool {
        !self.huge_pages && self.stream().is_ok_and(|s| s.has_base_pages(threads))
    }

    /// Whether the loop's arrays are on huge pages ([`Machine::on_pages`]).
    pub(crate) fn huge_pages(&self) -> bool {
        self.huge_pages
    }

    /// The machine with its threads placed where they share no cache, as
    /// the far placement of the profile's DRAM bursts on `threads` threads
    /// puts them when a line between them takes at least half a DRAM
    /// access (it crosses the memory fabric, not a shared cache: on the
    /// Zen 4 VM 146–173 ns against a 140–157 ns DRAM latency, where the
    /// near placement's 30–33 ns is an L3 transfer); `None` otherwise.
    /// Each thread then has the last cache to itself
    /// (`Machine::holding_level`'s capacities).
    pub fn apart(&self, threads: usize) -> Option<Self> {
        self.apart_in(&self.dram_placements(threads)?)
    }

    /// [`Machine::apart`] for placements already read.
    pub fn apart_in(&self, placements: &Placements) -> Option<Self> {
        self.apart_at(placements.far_line_s)
    }

    /// The machine with its threads where a line between the first two
    /// takes `line_s` one way, when that says they share no cache (at
    /// least half a DRAM access, as for [`Machine::apart`]); `None`
    /// otherwise or without the profile's DRAM latency.
    pub fn apart_at(&self, line_s: f64) -> Option<Self> {
        let dram = self.profile.summary.dram_latency_s?;
        (line_s >= 0.5 * dram).then_some(Self {
            apart: true,
            ..*self
        })
    }

    /// Whether the threads share no cache ([`Machine::apart`]).
    pub(crate) fn is_apart(&self) -> bool {
        self.apart
    }

    /// Prints [`unreliable_warning`] on stderr, once per figure and process.
    pub(crate) fn lean_on(&self, key: &str) {
        warn_once(key, unreliable_warning(self.profile, key));
    }

    /// Prints [`unreliable_lock_warning`] for the lock point that
    /// `lock_op_s` or `mutex_op_s` reads, once per point and process.
    fn lean_on_lock(&self, lock: &LockSection, kind: &str, threads: usize) {
        if let Some(p) = lock.point(kind, threads) {
            let key = format!("lock {kind} on {threads} thread(s)");
            warn_once(&key, unreliable_lock_warning(&key, &p.throughput_ops));
        }
    }

    /// The stream section.
    pub(crate) fn stream(&self) -> Result<&'a StreamSection, Missing> {
        self.profile
            .sections
            .stream
            .as_ref()
            .ok_or_else(|| missing("the stream section", "stream"))
    }

    fn lock(&self) -> Result<&'a LockSection, Missing> {
        self.profile
            .sections
            .lock
            .as_ref()
            .ok_or_else(|| missing("the lock section", "lock"))
    }

    pub(crate) fn c2c(&self) -> Result<&'a C2cSection, Missing> {
        self.profile
            .sections
            .c2c
            .as_ref()
            .ok_or_else(|| missing("the c2c section", "c2c"))
    }

    /// FLOP/s of the highest `kernel` ceiling for `precision` ("f32"/"f64")
    /// on `threads` threads, of the FMA kernel compiled for `isa` when one
    /// is named, read at `bound`, the ceiling's name, and the FLOP/s of
    /// its two states, fast then slow, when its bursts saw them.
    pub fn flops_ceiling(
        &self,
        precision: &str,
        threads: usize,
        kernel: CeilingKernel,
        isa: Option<&str>,
        bound: Bound,
    ) -> Result<(f64, String, Option<[f64; 2]>), Missing> {
        self.lean_on(if threads == 1 {
            "peak_flops_f64_1t"
        } else {
            "peak_flops_f64"
        });
        self.profile
            .ceiling(precision, threads, kernel, isa)
            .map(|c| {
                let now = self.now.compute;
                let states = c.states.map(|s| [s.fast_flops * now, s.slow_flops * now]);
                (bound.of_rate(&c.flops) * now, c.name.clone(), states)
            })
            .ok_or_else(|| {
                let what = match kernel {
                    CeilingKernel::Registers => "compute",
                    CeilingKernel::Dgemm => "dgemm",
                };
                let isa = isa.map_or(String::new(), |i| format!(" {i}"));
                missing(
                    format!("a {precision}{isa} {what} ceiling on {threads} thread(s)"),
                    "flops",
                )
            })
    }

    /// Wall time per operation of a lock on `threads` threads in hand-off
    /// state `state`: the inverse of its measured throughput at that thread
    /// count (§4.5: 1/t_crit once contended).
    pub fn lock_op_s(
        &self,
        kind: LockKind,
        threads: usize,
        state: HandOff,
    ) -> Result<f64, Missing> {
        let what = || format!("{} lock throughput on {threads} thread(s)", kind.key());
        let lock = self.lock()?;
        self.lean_on_lock(lock, kind.key(), threads);
        lock.op_s(kind.key(), threads, state)
            .map(|t| t / contended(threads, self.now.handoffs))
            .ok_or_else(|| missing(what(), "lock"))
    }

    /// Wall time per operation of a std mutex on `threads` threads around
    /// a critical section of `critical_s` seconds, and the length of the
    /// profile's section: linear in the length through the two measured
    /// ones, `mutex_empty` (0 s) and `mutex` (`critical_steps · step_s` of
    /// the lock section), and beyond the longer one growing with the
    /// section's own length (`LockSection::mutex_op_s`); in hand-off state
    /// `state`.
    pub fn mutex_op_s(
        &self,
        threads: usize,
        critical_s: f64,
        state: HandOff,
    ) -> Result<(f64, f64), Missing> {
        let lock = self.lock()?;
        self.lean_on_lock(lock, "mutex", threads);
        self.lean_on_lock(lock, "mutex_empty", threads);
        lock.mutex_op_s(threads, critical_s, state)
            .map(|(t, at)| (t / contended(threads, self.now.handoffs), at))
            .map_err(|kind| {
                missing(
                    format!("{kind} lock throughput on {threads} thread(s)"),
                    "lock",
                )
            })
    }

    /// Wall time per operation of the spread mutexes (one of many, at
    /// random) on `threads` threads around a critical section of
    /// `critical_s` seconds, in hand-off state `state`: linear in the
    /// length through the two measured ones, `mutex_spread_empty` and
    /// `mutex_spread` (`LockSection::spread_op_s`).
    pub fn spread_op_s(
        &self,
        threads: usize,
        critical_s: f64,
        state: HandOff,
    ) -> Result<f64, Missing> {
        let lock = self.lock()?;
        self.lean_on_lock(lock, "mutex_spread", threads);
        self.lean_on_lock(lock, "mutex_spread_empty", threads);
        lock.spread_op_s(threads, critical_s, state)
            .map(|t| t / contended(threads, self.now.migrations))
            .ok_or_else(|| {
                missing(
                    format!("mutex_spread lock throughput on {threads} thread(s)"),
                    "lock",
                )
            })
    }

    /// One-way latency of a cache line between two cores.
    pub fn line_transfer_s(&self) -> Result<f64, Missing> {
        self.lean_on("core_to_core_latency_s");
        self.profile
            .summary
            .core_to_core_latency_s
            .ok_or_else(|| missing("the core-to-core latency", "c2c"))
    }

    /// Time per dependent increment of a counter, per thread, with
    /// `sharers` threads' counters on one line (1: a line each), from the
    /// c2c section's increments; the shared-line figure of the measured
    /// thread count nearest to `sharers` (the first measured on a tie),
    /// which is returned too; in hand-off state `state`.
    pub fn increment_s(&self, sharers: usize, state: HandOff) -> Result<(f64, usize), Missing> {
        let (t, at) = self.c2c()?.increment_s(sharers, state).ok_or_else(|| {
            missing(
                format!("the increment time with {sharers} thread(s) per line"),
                "c2c",
            )
        })?;
        Ok((t / self.now.increments, at))
    }

    /// Seconds of an empty parallel region of the pinned team on `threads`
    /// threads and the thread count it was measured on (the nearest), from
    /// the c2c section's `regions`; `None` when the profile has none.
    pub fn region_s(&self, threads: usize) -> Option<(f64, usize)> {
        self.c2c().ok()?.region_s(threads)
    }

    /// Time per step of a local sum (one L1 load and one dependent add),
    /// per thread with all the profile's threads at once, from the c2c
    /// section's increments.
    pub fn local_step_s(&self) -> Result<f64, Missing> {
        self.c2c()?
            .local_step_s()
            .map(|t| t / self.now.local_sums)
            .ok_or_else(|| missing("the time per step of a local sum", "c2c"))
    }

    /// Time per item of the counting sort's `loop_name` loop ("histogram"
    /// or "scatter"), per thread with all the profile's threads at once, on
    /// an L1-resident sequence, from the c2c section's increments.
    pub fn bin_item_s(&self, loop_name: &'static str) -> Result<f64, Missing> {
        self.c2c()?
            .bin_item_s(loop_name)
            .map(|t| t / self.now.bin_loops)
            .ok_or_else(|| missing(format!("the time per item of a {loop_name} loop"), "c2c"))
    }

    /// Bytes per second one thread loads from L1 in code built for `isa`,
    /// and the instruction set the figure was measured in: the L1 level's
    /// read bandwidth on one thread (the STREAM load kernel on its
    /// plateau), measured in `isa` when the stream section has it
    /// (`StreamSection::level_read_in`: a core loads a fixed number of
    /// vectors per cycle, so narrower loads move fewer bytes), else in the
    /// section's widest set; at `bound`, scaled by the loads' drift.
    pub fn l1_read_bandwidth(
        &self,
        bound: Bound,
        isa: Option<&str>,
    ) -> Result<(f64, String), Missing> {
        let stream = self.profile.sections.stream.as_ref();
        let in_isa = stream
            .zip(isa)
            .and_then(|(s, i)| Some((s.level_read_in("L1", 1, i)?, i)));
        let widest = || {
            let l1 = self.profile.levels.iter().find(|l| l.name == "L1")?;
            let set = stream.map_or("the widest set", |s| s.isa.as_str());
            Some((l1.bandwidth_1t_Bps?, set))
        };
        in_isa
            .or_else(widest)
            .map(|(e, set)| (bound.of_rate(&e) * self.now.loads, set.to_string()))
            .ok_or_else(|| missing("the L1 read bandwidth on one thread", "stream"))
    }

    /// The core clock.
    pub fn clock_hz(&self) -> Result<f64, Missing> {
        self.profile
            .provenance
            .clock_hz
            .ok_or_else(|| missing("the core clock", "latency"))
    }

    /// Capacity of the largest detected cache level (per core), bytes.
    pub fn largest_cache_bytes(&self) -> Result<f64, Missing> {
        self.profile
            .levels
            .iter()
            .filter_map(|l| l.size_bytes)
            .reduce(f64::max)
            .ok_or_else(|| missing("the detected cache levels", "latency"))
    }

    /// Logical CPUs of the profiled machine.
    pub fn cpus(&self) -> usize {
        self.profile.provenance.logical_cpus.max(1)
    }
}
