//! What the kernels' predictions read from a machine profile, each figure
//! with the `calibrate --only` section that provides it when it is missing.

use models::identity::MachineId;
use models::profile::{CeilingKernel, Profile};
use serde_json::Value;
use thiserror::Error;

use crate::loop_figures::Bound;

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
    /// A mutex around an empty critical section.
    MutexEmpty,
    /// A mutex picked at random among many for every operation.
    MutexSpread,
}

impl LockKind {
    fn key(self) -> &'static str {
        match self {
            LockKind::Mutex => "mutex",
            LockKind::Spin => "spin",
            LockKind::FetchAdd => "fetch_add",
            LockKind::MutexEmpty => "mutex_empty",
            LockKind::MutexSpread => "mutex_spread",
        }
    }
}

/// The one-line warning for a prediction that leans on summary figure
/// `key` of `profile` when calibrate flagged it unreliable, else `None`.
pub fn unreliable_warning(profile: &Profile, key: &str) -> Option<String> {
    let why = profile.trust.get(key)?.unreliable.as_ref()?;
    Some(format!(
        "warning: this prediction leans on the profile's {key}, which calibrate flagged unreliable ({why})"
    ))
}

impl<'a> Machine<'a> {
    pub fn new(profile: &'a Profile) -> Self {
        Self { profile }
    }

    /// Prints [`unreliable_warning`] on stderr, once per figure and process.
    pub(crate) fn lean_on(&self, key: &str) {
        static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        if let Some(w) = unreliable_warning(self.profile, key) {
            let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
            if !said.iter().any(|k| k == key) {
                said.push(key.to_string());
                eprintln!("{w}");
            }
        }
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
    /// really moves with ordinary stores).
    ///
    /// The measured sweep decides, not the detected level sizes: a working
    /// set inside the sweep reads the curve, interpolated linearly in
    /// log-size between its two nearest points; one beyond the sweep (or at
    /// least the DRAM size) uses the DRAM figure. On a VM the pointer chase
    /// can see only part of a shared L3 that streaming loops still use,
    /// and the sweep shows where the bandwidth really falls.
    pub fn stream_bw_wa(
        &self,
        kernel: &str,
        threads: usize,
        per_thread_bytes: f64,
    ) -> Result<f64, Missing> {
        self.lean_on(if threads == 1 {
            "stream_triad_1t_Bps"
        } else {
            "stream_triad_Bps"
        });
        let s = self.section("stream")?;
        let what = || format!("STREAM {kernel} bandwidth on {threads} thread(s)");
        let wa = |p: &Value| p["bandwidth_write_allocate_Bps"].as_f64();
        let dram = || {
            s["dram"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["kernel"] == kernel && p["threads"].as_u64() == Some(threads as u64))
                .and_then(wa)
                .ok_or_else(|| missing(what() + " at the DRAM size", "stream"))
        };
        let dram_total = s["dram_bytes"].as_f64().unwrap_or(f64::INFINITY);
        if per_thread_bytes * threads as f64 >= dram_total {
            return dram();
        }
        let mut curve: Vec<(f64, f64)> = sweep_points(s, threads)
            .filter(|p| p["kernel"] == kernel)
            .filter_map(|p| Some((p["per_thread_bytes"].as_f64()?, wa(p)?)))
            .collect();
        curve.sort_by(|a, b| a.0.total_cmp(&b.0));
        match curve.as_slice() {
            [] => Err(missing(what(), "stream")),
            [.., last] if per_thread_bytes > last.0 => dram(),
            [first, ..] if per_thread_bytes <= first.0 => Ok(first.1),
            points => Ok(log_interpolate(points, per_thread_bytes)),
        }
    }

    /// FLOP/s of the highest `kernel` ceiling for `precision` ("f32"/"f64")
    /// on `threads` threads, of the FMA kernel compiled for `isa` when one
    /// is named, read at `bound`, and the ceiling's name.
    pub fn flops_ceiling(
        &self,
        precision: &str,
        threads: usize,
        kernel: CeilingKernel,
        isa: Option<&str>,
        bound: Bound,
    ) -> Result<(f64, String), Missing> {
        self.lean_on(if threads == 1 {
            "peak_flops_f64_1t"
        } else {
            "peak_flops_f64"
        });
        self.profile
            .ceilings
            .iter()
            .filter(|c| c.precision == precision && c.threads == threads && c.kernel == kernel)
            .filter(|c| isa.map_or(true, |i| c.isa == i && c.fma))
            .max_by(|a, b| a.flops.point.total_cmp(&b.flops.point))
            .map(|c| {
                (
                    bound.rate(c.flops.point, Some(c.flops.lo), Some(c.flops.hi)),
                    c.name.clone(),
                )
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

    /// Wall time per operation of a lock on `threads` threads: the inverse of
    /// its measured throughput at that thread count (§4.5: 1/t_crit once contended).
    pub fn lock_op_s(&self, kind: LockKind, threads: usize) -> Result<f64, Missing> {
        let what = || format!("{} lock throughput on {threads} thread(s)", kind.key());
        self.lean_on("t_crit_s");
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

    /// Wall time per operation of a std mutex on `threads` threads around
    /// a critical section of `critical_s` seconds, and the length of the
    /// profile's section: linear in the length through the two measured
    /// ones, `mutex_empty` (0 s) and `mutex` (`critical_steps · step_s` of
    /// the lock section), and extrapolated beyond them.
    pub fn mutex_op_s(&self, threads: usize, critical_s: f64) -> Result<(f64, f64), Missing> {
        let s = self.section("lock")?;
        let measured_s =
            s["critical_steps"].as_f64().unwrap_or(0.0) * s["step_s"].as_f64().unwrap_or(0.0);
        let full = self.lock_op_s(LockKind::Mutex, threads)?;
        if measured_s <= 0.0 {
            return Ok((full, measured_s));
        }
        let empty = self.lock_op_s(LockKind::MutexEmpty, threads)?;
        // Never below the smaller measurement, whatever noise does to the
        // slope.
        let t = empty + (full - empty) * critical_s / measured_s;
        Ok((t.max(empty.min(full)), measured_s))
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
    /// which is returned too.
    pub fn increment_s(&self, sharers: usize) -> Result<(f64, usize), Missing> {
        let inc = &self.section("c2c")?["increments"];
        let median = |p: &Value| p["per_increment_s"]["median"].as_f64();
        let found = if sharers <= 1 {
            median(&inc["own_line"]).map(|t| (t, 1))
        } else {
            inc["shared_line"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| Some((median(p)?, p["threads"].as_u64()? as usize)))
                .min_by_key(|(_, at)| at.abs_diff(sharers))
        };
        found.ok_or_else(|| {
            missing(
                format!("the increment time with {sharers} thread(s) per line"),
                "c2c",
            )
        })
    }

    /// Time per step of a local sum (one L1 load and one dependent add),
    /// per thread with all the profile's threads at once, from the c2c
    /// section's increments.
    pub fn local_step_s(&self) -> Result<f64, Missing> {
        self.section("c2c")?["increments"]["local"]["per_step_s"]["median"]
            .as_f64()
            .ok_or_else(|| missing("the time per step of a local sum", "c2c"))
    }

    /// Time per item of the counting sort's `loop_name` loop ("histogram"
    /// or "scatter"), per thread with all the profile's threads at once, on
    /// an L1-resident sequence, from the c2c section's increments.
    pub fn bin_item_s(&self, loop_name: &'static str) -> Result<f64, Missing> {
        self.section("c2c")?["increments"][loop_name]["per_item_s"]["median"]
            .as_f64()
            .ok_or_else(|| missing(format!("the time per item of a {loop_name} loop"), "c2c"))
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

/// The machine this process runs on: the CPU model of `/proc/cpuinfo` and
/// the host name (compare with [`models::identity::difference`]).
pub fn this_machine() -> MachineId {
    let sys = calibrate::sysinfo::SysInfo::read(1);
    MachineId::new(sys.cpu_model, sys.hostname)
}

/// The one-line warning when `profile` (read from `label`) was measured on
/// another machine than this one, or `None`.
pub fn other_machine_warning(profile: &Profile, label: &str) -> Option<String> {
    models::identity::profile_warning(label, &profile.provenance, &this_machine())
}

/// The STREAM sweep's points on `threads` threads, of every kernel and
/// size, from the stream section `s`.
pub(crate) fn sweep_points(s: &Value, threads: usize) -> impl Iterator<Item = &Value> {
    s["sweeps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |w| w["threads"].as_u64() == Some(threads as u64))
        .flat_map(|w| w["points"].as_array().into_iter().flatten())
}

/// `y` at `x` on the piecewise-linear curve through `points` in (ln x, y),
/// `points` sorted by x and bracketing `x`.
pub(crate) fn log_interpolate(points: &[(f64, f64)], x: f64) -> f64 {
    if points.len() < 2 {
        return points.last().map_or(f64::NAN, |p| p.1);
    }
    let k = points
        .partition_point(|p| p.0 < x)
        .clamp(1, points.len() - 1);
    let ((x0, y0), (x1, y1)) = (points[k - 1], points[k]);
    if x1 <= x0 {
        return y1;
    }
    let f = (x.ln() - x0.ln()) / (x1.ln() - x0.ln());
    y0 + f * (y1 - y0)
}

#[cfg(test)]
mod trust_tests {
    use super::*;
    use models::profile::{FigureTrust, Provenance};

    #[test]
    fn a_figure_flagged_unreliable_warns() {
        let mut p = Profile::new(Provenance::default());
        assert_eq!(unreliable_warning(&p, "peak_flops_f64"), None);
        p.trust.insert(
            "peak_flops_f64".into(),
            FigureTrust {
                clean_batches: 1,
                disturbed_batches: 20,
                unreliable: Some("only 1 of 21 timed batches were clean".into()),
            },
        );
        p.trust.insert("t_crit_s".into(), FigureTrust::default());
        let w = unreliable_warning(&p, "peak_flops_f64").unwrap();
        assert!(w.starts_with("warning: this prediction leans on the profile's peak_flops_f64"));
        assert!(w.contains("only 1 of 21") && !w.contains('\n'));
        assert_eq!(
            unreliable_warning(&p, "t_crit_s"),
            None,
            "clean figures are quiet"
        );
    }
}
