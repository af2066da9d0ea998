//! What the kernels' predictions read from a machine profile, each figure
//! with the `calibrate --only` section that provides it when it is missing.

use models::profile::Profile;
use serde_json::Value;
use thiserror::Error;

/// A figure the profile does not hold.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("profile lacks {what}; run `calibrate --only {fix}`")]
pub struct Missing {
    pub what: String,
    pub fix: &'static str,
}

fn missing(what: impl Into<String>, fix: &'static str) -> Missing {
    Missing {
        what: what.into(),
        fix,
    }
}

/// Read-only view of a profile for predictions.
pub struct Machine<'a> {
    pub profile: &'a Profile,
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
    pub fn new(profile: &'a Profile) -> Self {
        Self { profile }
    }

    fn section(&self, name: &'static str) -> Result<&'a Value, Missing> {
        self.profile
            .sections
            .get(name)
            .ok_or_else(|| missing(format!("the {name} section"), name))
    }

    /// Bandwidth of STREAM kernel `kernel` ("copy", "scale", "add", "triad",
    /// "load") on `threads` threads for a working set of `per_thread_bytes`
    /// per thread, counting write-allocate traffic (the bytes the memory
    /// really moves with ordinary stores). A working set whose total is
    /// larger than the largest detected cache, or at least the profile's
    /// DRAM size, uses the DRAM figure; a smaller one the sweep point nearest
    /// in log-size.
    pub fn stream_bw_wa(
        &self,
        kernel: &str,
        threads: usize,
        per_thread_bytes: f64,
    ) -> Result<f64, Missing> {
        let s = self.section("stream")?;
        let what = || format!("STREAM {kernel} bandwidth on {threads} thread(s)");
        let total = per_thread_bytes * threads as f64;
        let dram_total = s["dram_bytes"].as_f64().unwrap_or(f64::INFINITY);
        let beyond_caches = self.largest_cache_bytes().is_ok_and(|c| total > c);
        let wa = |p: &Value| p["bandwidth_write_allocate_Bps"].as_f64();
        if beyond_caches || total >= dram_total {
            return s["dram"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["kernel"] == kernel && p["threads"].as_u64() == Some(threads as u64))
                .and_then(wa)
                .ok_or_else(|| missing(what() + " at the DRAM size", "stream"));
        }
        let sweep = s["sweeps"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|w| w["threads"].as_u64() == Some(threads as u64))
            .ok_or_else(|| missing(what(), "stream"))?;
        sweep["points"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["kernel"] == kernel)
            .filter_map(|p| Some((p["per_thread_bytes"].as_f64()?, wa(p)?)))
            .min_by(|a, b| {
                let da = (a.0 / per_thread_bytes).ln().abs();
                let db = (b.0 / per_thread_bytes).ln().abs();
                da.total_cmp(&db)
            })
            .map(|(_, bw)| bw)
            .ok_or_else(|| missing(what(), "stream"))
    }

    /// Highest measured FLOP/s for `precision` ("f32"/"f64") on `threads`
    /// threads, and the ceiling's name.
    pub fn peak_flops(&self, precision: &str, threads: usize) -> Result<(f64, String), Missing> {
        self.profile
            .ceilings
            .iter()
            .filter(|c| c.precision == precision && c.threads == threads)
            .max_by(|a, b| a.flops.point.total_cmp(&b.flops.point))
            .map(|c| (c.flops.point, c.name.clone()))
            .ok_or_else(|| {
                missing(
                    format!("a {precision} compute ceiling on {threads} thread(s)"),
                    "flops",
                )
            })
    }

    /// Wall time per operation of a lock on `threads` threads: the inverse of
    /// its measured throughput at that thread count (§4.5: 1/t_crit once contended).
    pub fn lock_op_s(&self, kind: LockKind, threads: usize) -> Result<f64, Missing> {
        let what = || format!("{} lock throughput on {threads} thread(s)", kind.key());
        let s = self.section("lock")?;
        s["kinds"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|k| k["kind"] == kind.key())
            .and_then(|k| {
                k["points"].as_array()?.iter().find(|p| {
                    p["threads"].as_u64() == Some(threads as u64) && p["oversubscribed"] != true
                })
            })
            .and_then(|p| p["throughput_ops"]["median"].as_f64())
            .map(|ops| 1.0 / ops)
            .ok_or_else(|| missing(what(), "lock"))
    }

    /// One-way latency of a cache line between two cores.
    pub fn line_transfer_s(&self) -> Result<f64, Missing> {
        self.profile
            .summary
            .core_to_core_latency_s
            .ok_or_else(|| missing("the core-to-core latency", "c2c"))
    }

    /// Load-to-use latency of L1: the cost of one dependent
    /// load-modify-store on a line the core owns.
    pub fn l1_latency_s(&self) -> Result<f64, Missing> {
        self.profile
            .summary
            .l1_latency_s
            .ok_or_else(|| missing("the L1 latency", "latency"))
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
