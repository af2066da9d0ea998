//! The microbenchmarks, each behind one small trait.
//!
//! A [`Bench`] gets the shared [`Context`] (settings, pinned threads, clock,
//! what earlier benchmarks found) and returns an [`Outcome`]: its headline
//! figures, memory levels and compute ceilings for the profile, its typed
//! section (`models::profile::Section`), its lines of the human table and
//! its warnings.

pub mod bursts;
pub mod c2c;
pub mod flops;
pub mod increments;
pub mod latency;
pub mod lock;
pub mod mlp;
pub mod regions;
pub mod stream;

use anyhow::Result;
use models::profile::{ComputeCeiling, MemoryLevel, Profile, Sample, Section, Summary};
use models::stats::Summary as Stats;

use crate::cli::BenchName;
use crate::clock::Clock;
use crate::config::{dram_working_set, Config};
use crate::mem::{Pages, Region};
use crate::pin::Team;
use crate::progress::Progress;
use crate::sysinfo::SysInfo;

/// One microbenchmark.
pub trait Bench {
    /// Its `--only` name and profile section key.
    fn name(&self) -> &'static str;
    /// Measures and reports.
    fn run(&self, ctx: &Context) -> Result<Outcome>;
}

/// A cache level's name and detected size in bytes.
pub type NamedSize = (String, f64);

/// Everything a benchmark may use.
pub struct Context {
    /// The validated settings of the run.
    pub config: Config,
    /// What the OS reports about the machine.
    pub sys: SysInfo,
    /// Core clock for cycle figures, if known.
    pub clock: Option<Clock>,
    /// One thread pinned to the first CPU.
    pub one: Team,
    /// `config.threads` threads pinned one per CPU.
    pub all: Team,
    /// What is known so far: an existing profile merged with the outcomes
    /// of this run's earlier benchmarks (levels size later working sets).
    pub known: Profile,
    /// Progress bars (drawn only on a terminal).
    pub progress: Progress,
    /// Bursts of the core-to-core ping-pong and of the contended locks taken
    /// before each benchmark that runs ahead of `c2c` and `lock`, which
    /// pool them with their own.
    pub bursts: bursts::Bursts,
}

impl Context {
    /// The ids of the run's first `threads` CPUs: those a team of that
    /// many threads is pinned to.
    pub fn cpu_ids(&self, threads: usize) -> Vec<usize> {
        self.config
            .cpus
            .iter()
            .take(threads)
            .map(|c| c.id)
            .collect()
    }

    /// The teams a figure measured on one thread and on all is taken on:
    /// the one thread, then all of them when there are more than one.
    pub fn teams(&self) -> Vec<&Team> {
        if self.all.threads() > 1 {
            vec![&self.one, &self.all]
        } else {
            vec![&self.one]
        }
    }

    /// Octaves between the points of a curve measured an octave apart in a
    /// full run: one, or two with `--quick` (the c2c hand-offs, the stream
    /// restarts and reuse windows). A prediction reads such a curve
    /// linearly in log size between its points, so a quick curve
    /// interpolates the sizes it skips. On the Zen 4 VM the one-thread
    /// restart at 8 KiB runs, in four runs, lay 2–8% from the mean of the
    /// 4 and 16 KiB ones; at one octave apart the restart and window curves
    /// took about 4 s each of a quick run's 16 s.
    pub fn octave_step(&self) -> usize {
        if self.config.quick {
            2
        } else {
            1
        }
    }

    /// Cycles for a time in seconds, when the clock is known.
    pub fn cycles(&self, seconds: f64) -> Option<f64> {
        self.clock.as_ref().map(|c| seconds * c.hz)
    }

    /// Known cache levels with a detected size, nearest first.
    pub fn known_caches(&self) -> Vec<NamedSize> {
        self.known
            .levels
            .iter()
            .filter(|l| l.name != "DRAM")
            .filter_map(|l| l.size_bytes.map(|s| (l.name.clone(), s)))
            .collect()
    }

    /// The cache levels known so far, or, when neither this run nor an
    /// existing profile has them, those of a quick probe of the latency curve
    /// (with a note saying so).
    pub fn caches_or_probe(&self) -> Result<(Vec<NamedSize>, Option<String>)> {
        let known = self.known_caches();
        if !known.is_empty() {
            return Ok((known, None));
        }
        let sw = latency::probe(self)?;
        let caches = sw
            .detection
            .caches
            .iter()
            .filter_map(|c| c.size_bytes.map(|s| (c.name.clone(), s)))
            .collect();
        Ok((
            caches,
            Some("no levels were known, so a quick latency probe (huge pages) sized the working sets".into()),
        ))
    }

    /// The DRAM working set of the STREAM sweep, of the pointer chase's
    /// DRAM latency and of the MLP curves, for a largest detected cache of
    /// `largest` bytes ([`dram_working_set`]): at least twice the largest
    /// cache the OS reports as well. On a VM the bandwidth keeps falling
    /// and the latency keeps rising past the detected levels while the
    /// host's last-level cache still serves part of the working set; and
    /// the detected levels move between runs on a shared host, where the
    /// OS's figure does not, so the DRAM figures are taken at the same size
    /// every run, and Little's law divides a bandwidth by a latency taken
    /// at the same size.
    pub fn dram_bytes(&self, largest: f64) -> u64 {
        let os_largest = self
            .sys
            .caches
            .iter()
            .map(|c| c.reported.size_bytes as f64)
            .fold(0.0, f64::max);
        dram_working_set(
            largest,
            os_largest,
            self.config.budget_bytes,
            self.config.quick,
        )
    }

    /// Keeps dropped working sets resident for the next ones, and faults
    /// in, once, from the first pinned thread, the smallest DRAM working
    /// set the latency, STREAM and MLP benchmarks will ask for (its floor
    /// from the OS-reported caches), when any of them runs. On a VM each
    /// fresh huge-page working set otherwise costs the host's faults again
    /// ([`crate::mem::pool`]).
    pub fn warm_huge_pages(&self) -> Result<()> {
        crate::mem::pool::enable();
        let large = [BenchName::Latency, BenchName::Stream, BenchName::Mlp];
        if !self.config.benches.iter().any(|b| large.contains(b)) {
            return Ok(());
        }
        let bytes = self.dram_bytes(0.0) as usize;
        self.one
            .each(|_| Region::new(bytes, Pages::Huge).map(drop))
            .swap_remove(0)
    }
}

/// What one benchmark reports.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Headline figures it measured (others left `None`).
    pub summary: Summary,
    /// Memory levels, with the fields it measured.
    pub levels: Vec<MemoryLevel>,
    /// Compute ceilings.
    pub ceilings: Vec<ComputeCeiling>,
    /// Detailed results, stored as the profile's section of that kind.
    pub section: Option<Section>,
    /// Its part of the human table.
    pub table: String,
    /// Figures not to be trusted as they stand (noisy, above a bound,
    /// cache-resident), one sentence each.
    pub warnings: Vec<String>,
    /// Other facts worth keeping in the profile notes.
    pub notes: Vec<String>,
    /// Batch counts of the summary figures it set, by key ([`crate::trust`]).
    pub trust: std::collections::BTreeMap<String, models::profile::FigureTrust>,
}

/// Every benchmark, by name.
pub fn by_name(name: crate::cli::BenchName) -> Box<dyn Bench> {
    use crate::cli::BenchName as B;
    match name {
        B::Latency => Box::new(latency::Latency),
        B::Flops => Box::new(flops::Flops),
        B::Stream => Box::new(stream::Stream),
        B::Mlp => Box::new(mlp::Mlp),
        B::C2c => Box::new(c2c::C2c),
        B::Lock => Box::new(lock::Lock),
        B::Pingpong => unreachable!("run::run sends pingpong to crate::network before any Bench"),
    }
}

/// A statistics summary as stored in sections: median, interval, spread,
/// the capability estimates (`low_quantile` of times, `high_quantile` of
/// rates, each `{point, lo, hi}`), the clean and disturbed batch counts and,
/// when too few batches were clean, why the figure is unreliable.
pub fn sample(s: &Stats) -> Sample {
    let t = crate::trust::trust_of(s);
    Sample {
        median: s.median,
        ci_lo: Some(s.ci_lo),
        ci_hi: Some(s.ci_hi),
        cv: s.cv,
        n: s.n,
        outliers_low: s.outliers.low,
        outliers_high: s.outliers.high,
        noisy: s.noisy,
        low_quantile: Some(s.low_quantile),
        high_quantile: Some(s.high_quantile),
        clean_batches: Some(t.clean_batches),
        disturbed_batches: Some(t.disturbed_batches),
        unreliable: t.unreliable,
    }
}

/// The warning for a noisy headline figure, or `None`.
pub fn noisy_warning(what: &str, s: &Stats) -> Option<String> {
    s.noisy.then(|| {
        format!(
            "{what} is noisy (CV {:.1}%, {} of {} values outliers): the machine was busy; re-run to trust it",
            100.0 * s.cv,
            s.outliers.total(),
            s.n
        )
    })
}

/// One note on the noisy points of a curve, or `None` when none is.
pub fn noisy_points_note<'a>(
    what: &str,
    points: impl IntoIterator<Item = &'a Stats>,
) -> Option<String> {
    let (mut noisy, mut n) = (0, 0);
    for s in points {
        n += 1;
        noisy += usize::from(s.noisy);
    }
    (noisy > 0).then(|| {
        format!("{noisy} of the {n} {what} are noisy (CV or outliers; see the section's \"noisy\" flags)")
    })
}

/// A memory level with only its name set.
pub fn level(name: &str) -> MemoryLevel {
    MemoryLevel {
        name: name.to_string(),
        size_bytes: None,
        latency_s: None,
        bandwidth_1t_Bps: None,
        bandwidth_Bps: None,
    }
}

/// Sizes on a grid of `per_octave` points per doubling from `from` to `to`
/// bytes (both included when on the grid), rounded down to multiples of
/// `align` bytes, without duplicates.
pub fn size_grid(from: u64, to: u64, per_octave: u32, align: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut k = 0u32;
    loop {
        let s = (from as f64 * 2f64.powf(k as f64 / per_octave as f64)).round() as u64;
        let s = (s / align).max(1) * align;
        if s > to {
            break;
        }
        if v.last() != Some(&s) {
            v.push(s);
        }
        k += 1;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid() {
        assert_eq!(
            size_grid(4096, 65536, 1, 64),
            [4096, 8192, 16384, 32768, 65536]
        );
        let g = size_grid(4096, 16384, 2, 64);
        assert_eq!(g, [4096, 5760, 8192, 11584, 16384]);
        assert!(g.iter().all(|s| s % 64 == 0));
    }
}
