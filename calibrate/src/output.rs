//! The human table, and the profile file written atomically.
//!
//! The `--out` path is checked before anything is measured
//! ([`OutFile::prepare`]): its directory is created if missing and an
//! [`AtomicFile`] is opened and dropped there, so a path that cannot be
//! written fails at once. The profile itself is written through a new
//! [`AtomicFile`]: a run that is interrupted or fails leaves an existing
//! profile untouched.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use models::profile::Profile;
use models::units::{binary_bytes, Si};

use crate::atomic::AtomicFile;
use crate::config::UsageError;

/// The checked `--out` target.
#[derive(Debug, Clone)]
pub struct OutFile {
    path: PathBuf,
}

impl OutFile {
    /// Creates the parent directory if needed and checks that a file can be
    /// created there and that `path` is not a directory.
    pub fn prepare(path: &Path) -> Result<Self, UsageError> {
        AtomicFile::create_all(path).map_err(|e| UsageError::Out {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            path: path.to_path_buf(),
        })
    }

    /// The target path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The profile already at the target, if there is one: `Ok(None)` when
    /// there is no file, `Err(reason)` when it cannot be used.
    pub fn existing(&self) -> Result<Option<Profile>, String> {
        match fs::read_to_string(&self.path) {
            Ok(text) => Profile::from_json(&text)
                .map(Some)
                .map_err(|e| e.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Writes `text` and a final newline atomically.
    pub fn write(&self, text: &str) -> Result<()> {
        let what = || format!("writing the profile to {}", self.path.display());
        let file = AtomicFile::create_all(&self.path)
            .map_err(anyhow::Error::from)
            .with_context(what)?;
        file.commit(format!("{text}\n").as_bytes())
            .with_context(what)
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// The readable report: machine, levels, ceilings, headline figures, each
/// benchmark's own lines, then the warnings.
pub fn table(p: &Profile, bench_lines: &[String], warnings: &[String]) -> String {
    let pr = &p.provenance;
    let mut t = format!(
        "calibrate {} on {} ({} logical CPUs; {} thread{} for all-core figures, {})\n",
        pr.tool_version,
        pr.cpu_model,
        pr.logical_cpus,
        pr.threads,
        if pr.threads == 1 { "" } else { "s" },
        pr.pinning
    );
    t += &format!(
        "SIMD {}; clock {} ({})\n\n",
        pr.simd,
        opt(pr.clock_hz, |h| Si(h, "Hz").to_string()),
        pr.clock_source
    );
    t += &levels(p);
    t += &ceilings(p);
    for line in bench_lines.iter().filter(|l| !l.is_empty()) {
        t += line;
        if !line.ends_with('\n') {
            t += "\n";
        }
        t += "\n";
    }
    let s = &p.summary;
    t += "Summary\n";
    let rows: [(&str, Option<f64>, &str); 10] = [
        ("stream_triad_Bps", s.stream_triad_Bps, "B/s"),
        ("stream_triad_1t_Bps", s.stream_triad_1t_Bps, "B/s"),
        ("peak_flops_f64", s.peak_flops_f64, "FLOP/s"),
        ("peak_flops_f64_1t", s.peak_flops_f64_1t, "FLOP/s"),
        ("l1_latency_s", s.l1_latency_s, "s"),
        ("dram_latency_s", s.dram_latency_s, "s"),
        ("core_to_core_latency_s", s.core_to_core_latency_s, "s"),
        ("t_crit_s", s.t_crit_s, "s"),
        ("mpi_t0_s", s.mpi_t0_s, "s"),
        ("mpi_bandwidth_Bps", s.mpi_bandwidth_Bps, "B/s"),
    ];
    for (k, v, unit) in rows {
        t += &summary_row(p, k, v, unit);
    }
    for w in warnings {
        t += &format!("warning: {w}\n");
    }
    t
}

/// The memory levels: size, latency (also in cycles) and read bandwidths.
fn levels(p: &Profile) -> String {
    if p.levels.is_empty() {
        return String::new();
    }
    let pr = &p.provenance;
    let clock = pr.clock_hz;
    let mut t = String::new();
    t += &format!(
        "{:<6} {:>10} {:>12} {:>8} {:>14} {:>14}\n",
        "level",
        "size",
        "latency",
        "cycles",
        "read bw 1t",
        format!("read bw {}t", pr.threads)
    );
    for l in &p.levels {
        let lat = l.latency_s.map(|e| e.point);
        t += &format!(
            "{:<6} {:>10} {:>12} {:>8} {:>14} {:>14}\n",
            l.name,
            opt(l.size_bytes, binary_bytes),
            opt(lat, |s| Si(s, "s").to_string()),
            opt(lat.zip(clock).map(|(s, h)| s * h), |c| format!("{c:.1}")),
            opt(l.bandwidth_1t_Bps.map(|e| e.point), |b| Si(b, "B/s")
                .to_string()),
            opt(l.bandwidth_Bps.map(|e| e.point), |b| Si(b, "B/s")
                .to_string()),
        );
    }
    t += "\n";
    t
}

/// The compute ceilings, highest first.
fn ceilings(p: &Profile) -> String {
    if p.ceilings.is_empty() {
        return String::new();
    }
    let mut t = String::new();
    t += "Compute ceilings (highest first)\n";
    for c in &p.ceilings {
        t += &format!(
            "  {:<22} {:>2} thread{} {:>14}\n",
            c.name,
            c.threads,
            if c.threads == 1 { " " } else { "s" },
            Si(c.flops.point, "FLOP/s").to_string()
        );
    }
    t += "\n";
    t
}

/// One line of the summary: the figure (or "-", or "unreliable") and the
/// clean and disturbed batches behind it when they are known.
fn summary_row(p: &Profile, key: &str, v: Option<f64>, unit: &'static str) -> String {
    let trust = p.trust.get(key);
    let value = match (v, trust.and_then(|t| t.unreliable.as_ref())) {
        (Some(x), _) => Si(x, unit).to_string(),
        (None, Some(_)) => "unreliable".into(),
        (None, None) => "-".into(),
    };
    let counts = trust.map_or(String::new(), |t| {
        format!(
            "  ({} clean, {} disturbed batches)",
            t.clean_batches, t.disturbed_batches
        )
    });
    format!("  {key:<24} {value:>14}{counts}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::profile::{FigureTrust, Provenance};

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/profile.json");
        let out = OutFile::prepare(&path).unwrap();
        assert!(path.parent().unwrap().is_dir());
        assert_eq!(out.existing().unwrap(), None);
        out.write("{}").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
        assert!(out.existing().is_err(), "not a profile");
        let p = Profile::new(Provenance::default());
        out.write(&p.to_json()).unwrap();
        assert_eq!(out.existing().unwrap(), Some(p));
        let names: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "only the profile is left");
    }

    #[test]
    fn bad_targets_fail_at_once() {
        let dir = tempfile::tempdir().unwrap();
        assert!(OutFile::prepare(dir.path()).is_err(), "a directory");
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        let e = OutFile::prepare(&file.join("profile.json")).unwrap_err();
        assert!(e.to_string().starts_with("cannot write --out"), "{e}");
    }

    #[test]
    fn table_shows_nulls_as_dashes() {
        let p = Profile::new(Provenance {
            threads: 2,
            ..Default::default()
        });
        let t = table(&p, &["extra line".into()], &["be careful".into()]);
        assert!(t.contains("mpi_t0_s"));
        assert!(t.contains("extra line"));
        assert!(t.contains("warning: be careful"));
    }

    #[test]
    fn unreliable_figures_say_so_with_their_counts() {
        let mut p = Profile::new(Provenance::default());
        p.summary.t_crit_s = Some(50e-9);
        p.trust.insert(
            "t_crit_s".into(),
            FigureTrust {
                clean_batches: 7,
                disturbed_batches: 1,
                unreliable: None,
            },
        );
        p.trust.insert(
            "peak_flops_f64".into(),
            FigureTrust {
                clean_batches: 2,
                disturbed_batches: 26,
                unreliable: Some("too few clean batches".into()),
            },
        );
        let t = table(&p, &[], &[]);
        let line = |k: &str| {
            t.lines()
                .find(|l| l.trim_start().starts_with(k))
                .unwrap()
                .to_string()
        };
        assert!(
            line("t_crit_s").contains("(7 clean, 1 disturbed batches)"),
            "{t}"
        );
        assert!(line("peak_flops_f64 ").contains("unreliable"), "{t}");
        assert!(line("l1_latency_s").contains(" -"), "{t}");
    }
}
