//! The validated settings of a run, and every way the input can be refused.
//!
//! All checks happen before anything is measured: a refused input costs no
//! time and leaves files alone ([`UsageError`], exit code 2).

use std::path::PathBuf;

use core_affinity::CoreId;
use models::profile::Profile;
use models::units::binary_bytes;
use thiserror::Error;

use crate::cli::{BenchName, RunArgs, BENCHES};
use crate::sysinfo::SysInfo;
use crate::timer::Plan;

/// Smallest DRAM working set, bytes (128 MiB): large enough to leave any
/// cache a VM is likely to show at its last level, small enough to measure
/// quickly, and large enough that the process's own few MiB stay under 10%
/// of the peak memory.
pub const DRAM_MIN_BYTES: u64 = 128 << 20;
/// The DRAM working set aims at this multiple of the largest detected cache.
pub const DRAM_CACHE_FACTOR: f64 = 8.0;
/// The STREAM sweep's DRAM working set is also at least this multiple of the
/// largest cache the OS reports. A VM's latency curve can show only a slice
/// of its host's last-level cache (a level of tens of MiB) while the rest of
/// that cache still serves part of a working set several times the slice:
/// the bandwidth keeps falling up to about the reported size.
pub const DRAM_OS_CACHE_FACTOR: f64 = 2.0;
/// A "DRAM" figure whose working set is below this multiple of the largest
/// detected cache is flagged as possibly cache-resident.
pub const RESIDENT_FACTOR: f64 = 4.0;
/// Largest DRAM working set of `--quick` (512 MiB). A VM can show its host's
/// last-level cache of hundreds of MiB; eight times that would take minutes.
/// Beyond the cap the DRAM figures are flagged as possibly cache-resident.
pub const QUICK_DRAM_MAX_BYTES: u64 = 512 << 20;

/// The largest working set a run measures: the memory budget and, with
/// `--quick`, [`QUICK_DRAM_MAX_BYTES`].
pub fn working_set_cap(budget_bytes: u64, quick: bool) -> u64 {
    if quick {
        budget_bytes.min(QUICK_DRAM_MAX_BYTES)
    } else {
        budget_bytes
    }
}

/// The DRAM working set for a largest detected cache of `largest` bytes and
/// a largest OS-reported cache of `os_largest` bytes:
/// max(128 MiB, 8 × largest, 2 × os_largest), capped by
/// [`working_set_cap`].
pub fn dram_working_set(largest: f64, os_largest: f64, budget_bytes: u64, quick: bool) -> u64 {
    let want = (DRAM_CACHE_FACTOR * largest)
        .max(DRAM_OS_CACHE_FACTOR * os_largest)
        .max(DRAM_MIN_BYTES as f64) as u64;
    want.min(working_set_cap(budget_bytes, quick))
}
/// Longest accepted critical section, ns.
pub const MAX_CRITICAL_NS: f64 = 1e6;

/// The lock benchmark's critical section without `--critical-ns`, ns.
pub const DEFAULT_CRITICAL_NS: f64 = 5.0;

/// A refused input: one line for the user, exit code 2, nothing measured.
#[derive(Debug, Error)]
pub enum UsageError {
    /// `--threads 0`.
    #[error("--threads 0: at least one thread is needed")]
    ZeroThreads,
    #[error("--threads {asked}: this process may run on only {cpus} logical CPU{}", if *.cpus == 1 { "" } else { "s" })]
    /// More threads than CPUs this process may use.
    TooManyThreads {
        /// Threads asked for.
        asked: usize,
        /// CPUs available.
        cpus: usize,
    },
    #[error("c2c needs 2 logical CPUs to bounce a cache line between, but this run has {0} (--threads, or the machine)")]
    /// `--only c2c` with fewer than 2 CPUs (the count).
    C2cNeedsTwo(usize),
    #[error("--max-memory {given} is too small for the {level} level: it needs at least {needs} ({why})")]
    /// A memory budget too small for a level's working set.
    MemoryTooSmall {
        /// The budget, as shown.
        given: String,
        /// The level that does not fit.
        level: String,
        /// What it needs, as shown.
        needs: String,
        /// Why it needs that much.
        why: String,
    },
    #[error("--max-memory {given} is more than this machine's {ram} of RAM")]
    /// A memory budget above the machine's RAM.
    MemoryAboveRam {
        /// The budget, as shown.
        given: String,
        /// The RAM, as shown.
        ram: String,
    },
    #[error("--critical-ns {0}: give a number of nanoseconds from 0 to 1000000")]
    /// A critical section out of range (the value given).
    CriticalNs(f64),
    #[error("cannot write --out {path}: {reason}")]
    /// An `--out` that cannot be written.
    Out {
        /// The path given.
        path: String,
        /// The OS's reason.
        reason: String,
    },
    #[error("the existing profile {path} cannot be updated with --only ({reason}); remove it or choose another --out")]
    /// An existing profile that `--only` cannot update.
    Existing {
        /// Its path.
        path: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// Bad options of `calibrate point` (the sentence).
    #[error("{0}")]
    Point(String),
    /// An option whose benchmark `--only` leaves out, or a `--only
    /// pingpong` that cannot run as asked (the sentence).
    #[error("{0}")]
    Only(String),
}

/// Settings of one calibration run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Benchmarks to run, in running order.
    pub benches: Vec<BenchName>,
    /// Whether `--only` chose them (then an existing profile is updated).
    pub only: bool,
    /// Threads of the all-core figures.
    pub threads: usize,
    /// The CPUs used, thread i on `cpus[i]`.
    pub cpus: Vec<CoreId>,
    /// `--quick`: fewer sizes and repetitions.
    pub quick: bool,
    /// Repetitions and timing length.
    pub plan: Plan,
    /// Memory budget of the working sets, bytes.
    pub budget_bytes: u64,
    /// Where the budget came from, for the notes.
    pub budget_source: String,
    /// Critical-section length of the lock benchmark, ns.
    pub critical_ns: f64,
    /// Where the profile goes.
    pub out: PathBuf,
    /// `--json`: also print the profile on stdout.
    pub json: bool,
}

impl Config {
    /// Checks `args` against the machine (`allowed` are the CPUs this
    /// process may use) and an existing profile, if any.
    pub fn new(
        args: &RunArgs,
        sys: &SysInfo,
        allowed: &[CoreId],
        existing: Option<&Profile>,
    ) -> Result<Self, UsageError> {
        let threads = match args.threads {
            Some(0) => return Err(UsageError::ZeroThreads),
            Some(n) if n > allowed.len() => {
                return Err(UsageError::TooManyThreads {
                    asked: n,
                    cpus: allowed.len(),
                })
            }
            Some(n) => n,
            None => allowed.len().max(1),
        };
        let only = !args.only.is_empty();
        let benches: Vec<BenchName> = BENCHES
            .iter()
            .map(|(_, b)| *b)
            .filter(|b| !only || args.only.contains(b))
            .collect();
        if only && benches.contains(&BenchName::C2c) && threads < 2 {
            return Err(UsageError::C2cNeedsTwo(threads));
        }
        let critical_ns = args.critical_ns.unwrap_or(DEFAULT_CRITICAL_NS);
        if !(0.0..=MAX_CRITICAL_NS).contains(&critical_ns) || !critical_ns.is_finite() {
            return Err(UsageError::CriticalNs(critical_ns));
        }
        let (budget_bytes, budget_source) = match args.max_memory {
            Some(b) => (b, format!("--max-memory {}", binary_bytes(b as f64))),
            None => (
                sys.ram_bytes / 4,
                format!(
                    "a quarter of the {} of RAM",
                    binary_bytes(sys.ram_bytes as f64)
                ),
            ),
        };
        if let Some(b) = args.max_memory {
            if sys.ram_bytes > 0 && b > sys.ram_bytes {
                return Err(UsageError::MemoryAboveRam {
                    given: binary_bytes(b as f64),
                    ram: binary_bytes(sys.ram_bytes as f64),
                });
            }
        }
        if benches.iter().any(|b| b.uses_memory()) {
            check_budget(budget_bytes, existing, &budget_source)?;
        }
        Ok(Self {
            benches,
            only,
            threads,
            cpus: allowed[..threads.min(allowed.len())].to_vec(),
            quick: args.quick,
            plan: if args.quick {
                Plan::quick()
            } else {
                Plan::full()
            },
            budget_bytes,
            budget_source,
            critical_ns,
            out: args.out.clone(),
            json: args.json,
        })
    }
}

/// The DRAM level needs [`DRAM_MIN_BYTES`], and at least
/// [`RESIDENT_FACTOR`] × the largest cache an earlier run detected.
fn check_budget(budget: u64, existing: Option<&Profile>, source: &str) -> Result<(), UsageError> {
    let given = binary_bytes(budget as f64);
    let given = if source.starts_with("--max-memory") {
        given
    } else {
        format!("{given} (default)")
    };
    if budget < DRAM_MIN_BYTES {
        return Err(UsageError::MemoryTooSmall {
            given,
            level: "DRAM".into(),
            needs: binary_bytes(DRAM_MIN_BYTES as f64),
            why: "the smallest working set that is sure to leave the caches".into(),
        });
    }
    let largest = existing.and_then(|p| {
        p.levels
            .iter()
            .filter(|l| l.name != "DRAM")
            .filter_map(|l| l.size_bytes.map(|s| (l.name.clone(), s)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    });
    if let Some((name, size)) = largest {
        let needs = RESIDENT_FACTOR * size;
        if (budget as f64) < needs {
            return Err(UsageError::MemoryTooSmall {
                given,
                level: "DRAM".into(),
                needs: binary_bytes(needs),
                why: format!(
                    "{RESIDENT_FACTOR}× the {} {name} detected in the existing profile",
                    binary_bytes(size)
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;

    #[test]
    fn dram_working_sets_scale_with_the_cache_and_quick_caps_them() {
        let gib = 1u64 << 30;
        // 8 × a 32 MiB cache; at least 128 MiB; never above the budget.
        let mib = |m: f64| m * 1048576.0;
        assert_eq!(dram_working_set(mib(32.0), 0.0, 4 * gib, false), 256 << 20);
        assert_eq!(dram_working_set(1e6, 0.0, 4 * gib, false), DRAM_MIN_BYTES);
        assert_eq!(dram_working_set(mib(256.0), 0.0, gib, false), gib);
        // A host's 256 MiB cache seen from a VM: 2 GiB, or 512 MiB when quick.
        assert_eq!(dram_working_set(mib(256.0), 0.0, 4 * gib, false), 2 * gib);
        assert_eq!(
            dram_working_set(mib(256.0), 0.0, 4 * gib, true),
            QUICK_DRAM_MAX_BYTES
        );
        // A 16 MiB slice detected, 480 MiB reported: twice the reported.
        assert_eq!(
            dram_working_set(mib(16.0), mib(480.0), 4 * gib, false),
            960 << 20
        );
    }
    use clap::Parser;
    use models::profile::{MemoryLevel, Provenance};

    fn args(a: &[&str]) -> RunArgs {
        Cli::try_parse_from(std::iter::once("calibrate").chain(a.iter().copied()))
            .unwrap()
            .run
    }

    fn cpus(n: usize) -> Vec<CoreId> {
        (0..n).map(|id| CoreId { id }).collect()
    }

    fn sys() -> SysInfo {
        let mut s = SysInfo::read(2);
        s.ram_bytes = 8 << 30;
        s
    }

    #[test]
    fn threads_are_checked() {
        assert!(matches!(
            Config::new(&args(&["--threads", "0"]), &sys(), &cpus(2), None),
            Err(UsageError::ZeroThreads)
        ));
        let e = Config::new(&args(&["--threads", "3"]), &sys(), &cpus(2), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--threads 3: this process may run on only 2 logical CPUs"
        );
        let c = Config::new(&args(&[]), &sys(), &cpus(2), None).unwrap();
        assert_eq!((c.threads, c.cpus.len()), (2, 2));
        let e = Config::new(
            &args(&["--only", "c2c", "--threads", "1"]),
            &sys(),
            &cpus(2),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("needs 2 logical CPUs"), "{e}");
    }

    #[test]
    fn only_keeps_running_order() {
        let c = Config::new(
            &args(&["--only", "lock,stream,latency,stream"]),
            &sys(),
            &cpus(2),
            None,
        )
        .unwrap();
        assert_eq!(
            c.benches,
            [BenchName::Latency, BenchName::Stream, BenchName::Lock]
        );
        assert!(c.only);
        let c = Config::new(&args(&[]), &sys(), &cpus(2), None).unwrap();
        assert_eq!(c.benches.len(), BENCHES.len());
        assert_eq!(c.budget_bytes, 2 << 30);
    }

    #[test]
    fn memory_budget_is_checked() {
        let e = Config::new(&args(&["--max-memory", "10MiB"]), &sys(), &cpus(2), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--max-memory 10 MiB is too small for the DRAM level: it needs at least 128 MiB (the smallest working set that is sure to leave the caches)"
        );
        // Not needed by benchmarks that allocate nothing.
        assert!(Config::new(
            &args(&["--max-memory", "10MiB", "--only", "flops,lock"]),
            &sys(),
            &cpus(2),
            None
        )
        .is_ok());
        assert!(matches!(
            Config::new(&args(&["--max-memory", "1TiB"]), &sys(), &cpus(2), None),
            Err(UsageError::MemoryAboveRam { .. })
        ));
        let mut p = Profile::new(Provenance::default());
        p.levels.push(MemoryLevel {
            name: "L3".into(),
            size_bytes: Some(64.0 * 1048576.0),
            latency_s: None,
            bandwidth_1t_Bps: None,
            bandwidth_Bps: None,
        });
        let e = Config::new(
            &args(&["--max-memory", "200MiB"]),
            &sys(),
            &cpus(2),
            Some(&p),
        )
        .unwrap_err();
        assert!(e.to_string().contains("L3"), "{e}");
        assert!(Config::new(
            &args(&["--max-memory", "300MiB"]),
            &sys(),
            &cpus(2),
            Some(&p)
        )
        .is_ok());
    }

    #[test]
    fn critical_section_is_checked() {
        assert!(Config::new(&args(&["--critical-ns=-1"]), &sys(), &cpus(2), None).is_err());
        assert!(Config::new(&args(&["--critical-ns", "20"]), &sys(), &cpus(2), None).is_ok());
    }
}
