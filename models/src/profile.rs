//! The machine profile: what `calibrate` measured and fitted, with
//! provenance, as one versioned JSON document that `predict` reads.
//!
//! JSON keys use SI base units with the unit in the key (`t0_s`,
//! `bandwidth_Bps`, `peak_flops`). Every section is optional: a profile made
//! with `calibrate --only latency` has only the latency section, and a later
//! run with `--only stream` adds the stream section to it
//! ([`Profile::merge_from`]).
//!
//! Every section is a typed struct of its own module, read and written
//! through serde; the queries a prediction makes of a section are methods
//! beside its type. The JSON schema of the whole profile is generated from
//! these types ([`schema`]).

pub mod c2c;
pub mod flops;
pub mod latency;
pub mod lock;
pub mod mlp;
pub mod network;
pub mod pingpong;
pub mod sample;
pub mod sections;
pub mod stream;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::Estimate;
pub use network::{regime_index, Network, NetworkRegime, SizeRange};
pub use sample::Sample;
pub use sections::{Section, Sections};

/// Schema version of the profile. Bump it whenever a key changes meaning or
/// disappears; adding an optional key does not need a bump. Version 2 types
/// the sections (their layout is that of version 1, which still reads).
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest schema version this tool still reads.
pub const OLDEST_READABLE_VERSION: u32 = 1;

/// The JSON schema of the profile, generated from the types.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Profile)).expect("a schema always serializes")
}

/// Why a profile cannot be used.
#[derive(Debug, Error)]
pub enum ProfileError {
    /// The parser's message is part of this one's, not a source of its
    /// own, so that a chain of contexts prints it once.
    #[error("the profile is not valid JSON for this schema: {0}")]
    Malformed(serde_json::Error),
    #[error(
        "the profile has schema version {found}, this tool reads version {expected}; re-run `calibrate` to make a new one"
    )]
    Version { found: u32, expected: u32 },
    /// A figure that no measurement can give (see [`crate::profile_check`]).
    #[error("the profile's {field} = {} is not accepted: it must be {accepted}", crate::units::exact(*value))]
    Invalid {
        field: String,
        value: f64,
        accepted: String,
    },
    /// An interval that does not hold its point.
    #[error("the profile's {field} = {point} lies outside its interval [lo {lo}, hi {hi}]")]
    Interval {
        field: String,
        lo: f64,
        point: f64,
        hi: f64,
    },
}

impl From<serde_json::Error> for ProfileError {
    fn from(e: serde_json::Error) -> Self {
        Self::Malformed(e)
    }
}

/// The headline figures, each a number in SI units or null when it was not
/// measured. These keys are a fixed contract.
#[allow(non_snake_case)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// STREAM triad on all cores with a DRAM-sized working set, bytes/s
    /// (counted without write-allocate traffic, as STREAM does).
    pub stream_triad_Bps: Option<f64>,
    /// STREAM triad on one thread, DRAM-sized, bytes/s.
    pub stream_triad_1t_Bps: Option<f64>,
    /// Peak f64 FLOP/s on all cores (widest SIMD with FMA).
    pub peak_flops_f64: Option<f64>,
    /// Peak f64 FLOP/s on one thread.
    pub peak_flops_f64_1t: Option<f64>,
    /// Load-to-use latency of the first cache level, seconds.
    pub l1_latency_s: Option<f64>,
    /// Latency of main memory, seconds.
    pub dram_latency_s: Option<f64>,
    /// One-way latency of a cache line between two cores, seconds.
    pub core_to_core_latency_s: Option<f64>,
    /// Time a contended lock is held per operation (1 / saturated throughput), seconds.
    pub t_crit_s: Option<f64>,
    /// MPI small-message start-up time T0, seconds.
    pub mpi_t0_s: Option<f64>,
    /// MPI large-message bandwidth B, bytes/s.
    pub mpi_bandwidth_Bps: Option<f64>,
}

/// How far a headline figure can be trusted: the timed batches behind it
/// and, when it was kept out of the summary, why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FigureTrust {
    /// Timed batches the figure was computed from.
    pub clean_batches: usize,
    /// Timed batches set aside because the OS reported them disturbed
    /// (steal or run-queue waits above a share of their duration).
    pub disturbed_batches: usize,
    /// Why the figure is not the machine's (its summary key is then null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreliable: Option<String>,
}

impl Summary {
    /// The figure stored under the summary key `key`, when that key
    /// exists and the figure was measured.
    pub fn figure(&self, key: &str) -> Option<f64> {
        self.figures()
            .into_iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v)
    }

    /// Every figure of the summary under its key.
    pub fn figures(&self) -> [(&'static str, Option<f64>); 10] {
        [
            ("stream_triad_Bps", self.stream_triad_Bps),
            ("stream_triad_1t_Bps", self.stream_triad_1t_Bps),
            ("peak_flops_f64", self.peak_flops_f64),
            ("peak_flops_f64_1t", self.peak_flops_f64_1t),
            ("l1_latency_s", self.l1_latency_s),
            ("dram_latency_s", self.dram_latency_s),
            ("core_to_core_latency_s", self.core_to_core_latency_s),
            ("t_crit_s", self.t_crit_s),
            ("mpi_t0_s", self.mpi_t0_s),
            ("mpi_bandwidth_Bps", self.mpi_bandwidth_Bps),
        ]
    }

    /// The figure stored under the summary key `key`, for setting.
    pub fn figure_mut(&mut self, key: &str) -> Option<&mut Option<f64>> {
        Some(match key {
            "stream_triad_Bps" => &mut self.stream_triad_Bps,
            "stream_triad_1t_Bps" => &mut self.stream_triad_1t_Bps,
            "peak_flops_f64" => &mut self.peak_flops_f64,
            "peak_flops_f64_1t" => &mut self.peak_flops_f64_1t,
            "l1_latency_s" => &mut self.l1_latency_s,
            "dram_latency_s" => &mut self.dram_latency_s,
            "core_to_core_latency_s" => &mut self.core_to_core_latency_s,
            "t_crit_s" => &mut self.t_crit_s,
            "mpi_t0_s" => &mut self.mpi_t0_s,
            "mpi_bandwidth_Bps" => &mut self.mpi_bandwidth_Bps,
            _ => return None,
        })
    }
}

/// Where and how the profile was measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    pub cpu_model: String,
    /// Logical CPUs the OS shows.
    pub logical_cpus: usize,
    /// Threads the "all cores" figures used.
    pub threads: usize,
    /// How threads were pinned (e.g. "one thread per logical CPU, 0..n").
    pub pinning: String,
    /// Widest SIMD instruction set detected at run time (e.g. "avx512f").
    pub simd: String,
    /// Nominal or measured core clock, Hz, used for the cycle figures.
    pub clock_hz: Option<f64>,
    /// How the clock was obtained ("measured: dependent add chain", "/proc/cpuinfo", ...).
    pub clock_source: String,
    /// Cache sizes the OS reports, bytes, by level name; may differ from the
    /// detected levels (a VM can report the host's last-level cache).
    pub os_reported_caches: Vec<ReportedCache>,
    pub hostname: String,
    pub os: String,
    /// Memory the OS reports (MemTotal), bytes: no loop's arrays on this
    /// machine can take more (profiles from before it lack it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// RFC 3339 time the profile was written.
    pub date: String,
    pub tool_version: String,
    /// The command line that produced the profile.
    pub command: String,
    /// Free-form notes: quick mode, memory budget, huge pages, warnings.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Provenance {
    /// Whether `calibrate` measured the profile: it writes its version
    /// number as `tool_version`, where a profile written by hand from
    /// nominal figures (the lecture's machine, a vendor's sheet) says how
    /// it was made.
    pub fn measured(&self) -> bool {
        self.tool_version
            .trim_start_matches('v')
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    }
}

/// A cache the OS reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReportedCache {
    pub level: u32,
    /// "Data", "Instruction" or "Unified".
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u64>,
}

/// One level of the memory hierarchy as the measured curves show it.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryLevel {
    /// "L1", "L2", "L3" or "DRAM".
    pub name: String,
    /// Largest working set still served by this level (the detected
    /// breakpoint), bytes; null for DRAM.
    pub size_bytes: Option<f64>,
    /// Load-to-use latency (pointer chase), seconds.
    pub latency_s: Option<Estimate>,
    /// Read bandwidth with one thread, bytes/s.
    pub bandwidth_1t_Bps: Option<Estimate>,
    /// Read bandwidth with all threads, bytes/s.
    pub bandwidth_Bps: Option<Estimate>,
}

impl MemoryLevel {
    /// A cache level of `size_bytes` read by one thread at `read_1t_Bps`,
    /// nothing else known (hand-written profiles, tests).
    #[allow(non_snake_case)]
    pub fn cache(name: &str, size_bytes: f64, read_1t_Bps: f64) -> Self {
        Self {
            name: name.into(),
            size_bytes: Some(size_bytes),
            latency_s: None,
            bandwidth_1t_Bps: Some(Estimate::exact(read_1t_Bps)),
            bandwidth_Bps: None,
        }
    }
}

/// One horizontal roof of the Roofline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComputeCeiling {
    /// A label such as "f64 avx512 fma".
    pub name: String,
    /// "f64" or "f32".
    pub precision: String,
    /// "scalar", "avx2", "avx512", ...
    pub isa: String,
    pub fma: bool,
    pub threads: usize,
    pub flops: Estimate,
    /// The code measured; profiles before this field held only peaks.
    #[serde(default)]
    pub kernel: CeilingKernel,
    /// The host's two states of this ceiling, when its bursts over the
    /// calibrate run saw them; none otherwise, and in profiles before them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub states: Option<CeilingStates>,
}

/// A ceiling read in bursts spread over the calibrate run whose reliable
/// bursts' own capability estimates are `lock::two_states` apart: the
/// slowest and the fastest of them, FLOP/s. A loop bound by the ceiling
/// runs at one or the other, as a lock hands off in one of two states
/// (§4.5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CeilingStates {
    pub slow_flops: f64,
    pub fast_flops: f64,
}

/// What a compute ceiling measures (§4.4: the roof is the peak; ceilings
/// below it are what a given instruction mix attains).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CeilingKernel {
    /// Independent FMA (or multiply and add) chains in registers: the peak.
    #[default]
    Registers,
    /// A packed, register-blocked matrix multiply on operands that fit in
    /// cache: the in-core ceiling of dense linear algebra, with its loads,
    /// broadcasts and packing.
    Dgemm,
}

/// The whole profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Profile {
    pub schema_version: u32,
    pub provenance: Provenance,
    pub summary: Summary,
    /// Memory levels detected from the measured curves, nearest first.
    #[serde(default)]
    pub levels: Vec<MemoryLevel>,
    /// Compute ceilings, highest first.
    #[serde(default)]
    pub ceilings: Vec<ComputeCeiling>,
    #[serde(default)]
    pub network: Option<Network>,
    /// The detailed results of each microbenchmark, one typed section each.
    #[serde(default)]
    pub sections: Sections,
    /// Batch counts of the headline figures, by summary key, and the reason
    /// for each one left null as unreliable. Profiles written before this
    /// key have none.
    #[serde(default)]
    pub trust: std::collections::BTreeMap<String, FigureTrust>,
}

impl Profile {
    /// The highest ceiling of `kernel` for `precision` on `threads`
    /// threads; with `isa`, only the FMA ceilings of that instruction set.
    pub fn ceiling(
        &self,
        precision: &str,
        threads: usize,
        kernel: CeilingKernel,
        isa: Option<&str>,
    ) -> Option<&ComputeCeiling> {
        self.ceilings
            .iter()
            .filter(|c| c.precision == precision && c.threads == threads && c.kernel == kernel)
            .filter(|c| isa.map_or(true, |i| c.isa == i && c.fma))
            .max_by(|a, b| a.flops.point.total_cmp(&b.flops.point))
    }

    /// Name of the level a working set of `bytes` per thread lives in:
    /// the first detected cache level that holds it, else "DRAM".
    pub fn level_of(&self, bytes: f64) -> &str {
        self.levels
            .iter()
            .find(|l| l.size_bytes.is_some_and(|s| bytes <= s))
            .map_or("DRAM", |l| l.name.as_str())
    }

    /// An empty profile of the current schema.
    pub fn new(provenance: Provenance) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            provenance,
            summary: Summary::default(),
            levels: Vec::new(),
            ceilings: Vec::new(),
            network: None,
            sections: Default::default(),
            trust: Default::default(),
        }
    }

    /// Parses a profile, checks its schema version and validates every
    /// figure ([`crate::profile_check::validate`]).
    pub fn from_json(text: &str) -> Result<Self, ProfileError> {
        #[derive(Deserialize)]
        struct VersionOnly {
            schema_version: u32,
        }
        let v: VersionOnly = serde_json::from_str(text)?;
        if !(OLDEST_READABLE_VERSION..=SCHEMA_VERSION).contains(&v.schema_version) {
            return Err(ProfileError::Version {
                found: v.schema_version,
                expected: SCHEMA_VERSION,
            });
        }
        let mut p: Profile = serde_json::from_str(text)?;
        crate::profile_check::validate(&p)?;
        p.schema_version = SCHEMA_VERSION;
        Ok(p)
    }

    /// Pretty JSON of the profile.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a profile always serializes")
    }

    /// Takes every section `newer` measured, keeping the rest of `self`:
    /// how `calibrate --only` updates an existing profile.
    pub fn merge_from(&mut self, newer: Profile) {
        macro_rules! take {
            ($($k:ident),*) => { $( if newer.summary.$k.is_some() { self.summary.$k = newer.summary.$k; } )* };
        }
        take!(
            stream_triad_Bps,
            stream_triad_1t_Bps,
            peak_flops_f64,
            peak_flops_f64_1t,
            l1_latency_s,
            dram_latency_s,
            core_to_core_latency_s,
            t_crit_s,
            mpi_t0_s,
            mpi_bandwidth_Bps
        );
        if !newer.levels.is_empty() {
            self.levels = merge_levels(std::mem::take(&mut self.levels), newer.levels);
        }
        if !newer.ceilings.is_empty() {
            self.ceilings = newer.ceilings;
        }
        if newer.network.is_some() {
            self.network = newer.network;
        }
        self.sections.merge_from(newer.sections);
        for (key, t) in newer.trust {
            // A newer unreliable measurement withdraws the older figure.
            if t.unreliable.is_some() {
                if let Some(f) = self.summary.figure_mut(&key) {
                    *f = None;
                }
            }
            self.trust.insert(key, t);
        }
        self.provenance = newer.provenance;
    }
}

/// Levels by name: fields the newer run measured replace the older ones.
fn merge_levels(old: Vec<MemoryLevel>, newer: Vec<MemoryLevel>) -> Vec<MemoryLevel> {
    let mut out = newer;
    for o in old {
        match out.iter_mut().find(|n| n.name == o.name) {
            Some(n) => {
                n.size_bytes = n.size_bytes.or(o.size_bytes);
                n.latency_s = n.latency_s.or(o.latency_s);
                n.bandwidth_1t_Bps = n.bandwidth_1t_Bps.or(o.bandwidth_1t_Bps);
                n.bandwidth_Bps = n.bandwidth_Bps.or(o.bandwidth_Bps);
            }
            None => out.push(o),
        }
    }
    out.sort_by_key(|l| level_rank(&l.name));
    out
}

/// Sort key of a level name: L1 < L2 < L3 < DRAM.
pub fn level_rank(name: &str) -> u32 {
    name.strip_prefix('L')
        .and_then(|d| d.parse::<u32>().ok())
        .unwrap_or(100)
}

#[cfg(test)]
mod tests;
