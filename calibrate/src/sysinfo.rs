//! What the OS says about the machine: CPU model, logical CPUs, RAM, the
//! caches it reports in `/sys`, SIMD support, host and OS names.
//!
//! The reported caches are recorded for comparison only: working sets are
//! sized from the levels the latency curve shows (a VM may report the host's
//! last-level cache).

use std::fs;
use std::path::Path;

use models::profile::ReportedCache;

use crate::kernels::{Isa, MAX_ISA_VAR};

/// A cache as `/sys/devices/system/cpu/cpu0/cache/index*` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct OsCache {
    /// The level, type, size and line size.
    pub reported: ReportedCache,
    /// Logical CPUs sharing it (from `shared_cpu_list`).
    pub shared_with: Vec<usize>,
}

impl OsCache {
    /// A data or unified cache, not an instruction cache.
    pub fn holds_data(&self) -> bool {
        self.reported.kind != "Instruction"
    }
}

/// The machine as the OS reports it.
#[derive(Debug, Clone)]
pub struct SysInfo {
    /// "model name" of /proc/cpuinfo (the architecture if absent).
    pub cpu_model: String,
    /// Logical CPUs this process may run on.
    pub logical_cpus: usize,
    /// Physical memory, bytes (0 if unknown).
    pub ram_bytes: u64,
    /// Caches of CPU 0 as /sys reports them, by level.
    pub caches: Vec<OsCache>,
    /// Widest SIMD level detected at run time.
    pub isa: Isa,
    /// Whether the CPU has FMA.
    pub fma: bool,
    /// Coherency line size of the first data cache, bytes (64 if unknown).
    pub line_bytes: usize,
    /// "cpu MHz" of /proc/cpuinfo, Hz, if present.
    pub cpuinfo_hz: Option<f64>,
    /// The host name.
    pub hostname: String,
    /// Distribution and kernel release.
    pub os: String,
    /// Transparent huge page mode ("always", "madvise", "never"), if known.
    pub thp_mode: Option<String>,
}

impl SysInfo {
    /// Reads everything; missing files give defaults, never errors.
    pub fn read(logical_cpus: usize) -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let caches = read_caches(Path::new("/sys/devices/system/cpu/cpu0/cache"));
        let line_bytes = caches
            .iter()
            .find(|c| c.reported.level == 1 && c.holds_data())
            .and_then(|c| c.reported.line_bytes)
            .map(|b| b as usize)
            .filter(|&b| b >= 8 && b.is_power_of_two())
            .unwrap_or(64);
        let isa = Isa::detect();
        Self {
            cpu_model: cpuinfo_field(&cpuinfo, "model name")
                .unwrap_or_else(|| std::env::consts::ARCH.to_string()),
            logical_cpus,
            ram_bytes: meminfo_total(&fs::read_to_string("/proc/meminfo").unwrap_or_default()),
            caches,
            isa,
            fma: Isa::scalar_fma(),
            line_bytes,
            cpuinfo_hz: cpuinfo_field(&cpuinfo, "cpu MHz")
                .and_then(|s| s.parse::<f64>().ok())
                .map(|mhz| mhz * 1e6),
            hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_default(),
            os: os_name(),
            thp_mode: read_trim("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|s| thp_selected(&s)),
        }
    }

    /// The caches as the profile records them.
    pub fn reported_caches(&self) -> Vec<ReportedCache> {
        self.caches.iter().map(|c| c.reported.clone()).collect()
    }

    /// SIMD description for the profile ("avx512f+fma", "avx2+fma",
    /// "scalar"), naming the cap when `PERFMODEL_MAX_ISA` narrowed it.
    pub fn simd(&self) -> String {
        let level = match self.isa {
            Isa::Avx512 => "avx512f+fma",
            Isa::Avx2 => "avx2+fma",
            Isa::Scalar if self.fma => "scalar+fma",
            Isa::Scalar => "scalar",
        };
        match Isa::cap() {
            Ok(Some(cap)) if cap < Isa::widest_of_cpu() => {
                format!("{level} (capped by {MAX_ISA_VAR})")
            }
            _ => level.into(),
        }
    }

    /// The data and unified caches the OS reports, nearest first.
    pub fn data_caches(&self) -> Vec<&OsCache> {
        let mut caches: Vec<&OsCache> = self.caches.iter().filter(|c| c.holds_data()).collect();
        caches.sort_by_key(|c| c.reported.level);
        caches
    }

    /// Sizes of [`Self::data_caches`], bytes, nearest first.
    pub fn data_cache_sizes(&self) -> Vec<f64> {
        self.data_caches()
            .iter()
            .map(|c| c.reported.size_bytes as f64)
            .collect()
    }

    /// CPUs sharing the OS-reported data or unified cache of `level`, among
    /// `cpus`; 1 when the OS reports no such cache.
    pub fn sharing(&self, level: u32, cpus: &[usize]) -> usize {
        self.data_caches()
            .into_iter()
            .find(|c| c.reported.level == level)
            .map(|c| {
                c.shared_with
                    .iter()
                    .filter(|x| cpus.contains(x))
                    .count()
                    .max(1)
            })
            .unwrap_or(1)
    }
}

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The value of the first `key : value` line of /proc/cpuinfo.
fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// MemTotal of /proc/meminfo, bytes.
fn meminfo_total(meminfo: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// The bracketed choice of a sysfs multiple-choice file ("always [madvise] never").
fn thp_selected(s: &str) -> Option<String> {
    let start = s.find('[')?;
    let end = s[start..].find(']')? + start;
    Some(s[start + 1..end].to_string())
}

fn os_name() -> String {
    let pretty = fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    match read_trim("/proc/sys/kernel/osrelease") {
        Some(k) => format!("{pretty}, kernel {k}"),
        None => pretty,
    }
}

/// Parses a sysfs cache size such as "32K", "1024K", "2M", "260M".
pub fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// The logical CPUs of the NUMA node that holds `cpu`, from
/// `/sys/devices/system/node/node*/cpulist`; `None` where the OS shows no
/// nodes.
pub fn node_cpus(cpu: usize) -> Option<Vec<usize>> {
    std::fs::read_dir("/sys/devices/system/node")
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("node"))
        .filter_map(|e| std::fs::read_to_string(e.path().join("cpulist")).ok())
        .map(|list| parse_cpu_list(&list))
        .find(|cpus| cpus.contains(&cpu))
}

/// Parses a CPU list such as "0-3,8,10-11".
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    v.extend(a..=b);
                }
            }
            None => v.extend(part.parse::<usize>().ok()),
        }
    }
    v
}

/// The largest data or unified cache the OS reports as CPU 0's own
/// (shared with no other CPU), bytes.
pub fn largest_private_cache_of_cpu0() -> Option<u64> {
    largest_private(&read_caches(Path::new(
        "/sys/devices/system/cpu/cpu0/cache",
    )))
}

fn largest_private(caches: &[OsCache]) -> Option<u64> {
    caches
        .iter()
        .filter(|c| c.holds_data() && c.shared_with.len() <= 1)
        .map(|c| c.reported.size_bytes)
        .max()
}

/// The caches under `dir` (index0, index1, ...), by level.
fn read_caches(dir: &Path) -> Vec<OsCache> {
    let mut out = Vec::new();
    for i in 0.. {
        let d = dir.join(format!("index{i}"));
        if !d.exists() {
            break;
        }
        let get = |f: &str| {
            fs::read_to_string(d.join(f))
                .ok()
                .map(|s| s.trim().to_string())
        };
        let (Some(level), Some(kind), Some(size)) = (
            get("level").and_then(|s| s.parse::<u32>().ok()),
            get("type"),
            get("size").and_then(|s| parse_cache_size(&s)),
        ) else {
            continue;
        };
        out.push(OsCache {
            reported: ReportedCache {
                level,
                kind,
                size_bytes: size,
                line_bytes: get("coherency_line_size").and_then(|s| s.parse().ok()),
            },
            shared_with: get("shared_cpu_list")
                .map(|s| parse_cpu_list(&s))
                .unwrap_or_default(),
        });
    }
    out.sort_by_key(|c| c.reported.level);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers() {
        assert_eq!(parse_cache_size("32K"), Some(32 * 1024));
        assert_eq!(parse_cache_size("260M"), Some(260 << 20));
        assert_eq!(parse_cache_size("1G"), Some(1 << 30));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("x"), None);
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("1"), [1]);
        assert_eq!(
            thp_selected("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            meminfo_total("MemTotal:       24576000 kB\nMemFree: 1 kB"),
            24576000 * 1024
        );
        assert_eq!(
            cpuinfo_field("processor\t: 0\nmodel name\t: AMD EPYC\n", "model name").as_deref(),
            Some("AMD EPYC")
        );
    }

    #[test]
    fn the_largest_private_cache_is_shared_with_no_other_cpu() {
        let cache = |level, kind: &str, size_bytes, shared_with: Vec<usize>| OsCache {
            reported: ReportedCache {
                level,
                kind: kind.into(),
                size_bytes,
                line_bytes: Some(64),
            },
            shared_with,
        };
        let caches = [
            cache(1, "Data", 48 << 10, vec![0]),
            cache(1, "Instruction", 4 << 20, vec![0]),
            cache(2, "Unified", 2 << 20, vec![0]),
            cache(3, "Unified", 260 << 20, vec![0, 1]),
        ];
        assert_eq!(largest_private(&caches), Some(2 << 20));
        assert_eq!(largest_private(&caches[3..]), None);
    }

    #[test]
    fn reads_this_machine() {
        let s = SysInfo::read(1);
        assert!(!s.cpu_model.is_empty());
        assert!(s.line_bytes >= 8);
        assert_eq!(s.sharing(99, &[0]), 1);
    }
}
