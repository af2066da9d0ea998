//! `predict kernel`: a user's loop, described by its work, predicted from
//! the machine profile through the same model as the built-in kernels,
//! with every term shown; optionally checked against a measured time and
//! recorded for the Roofline chart.

mod report;
pub mod spec;

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};
use models::kernel::{LoopKernel, Precision};
use models::profile::Profile;
use models::units::Si;

use crate::args::Time;
use crate::error::BadInput;
use crate::kernels::described::{loop_work, Build};
use crate::kernels::work::{predict_at, Prediction};
use crate::loop_figures::Bound;
use crate::machine::Machine;
use crate::profiles::DEFAULT_MEASUREMENTS;
use spec::{count_value, parse_array, DescriptionFile};

/// The instruction set a loop's code was compiled for: its compute
/// ceiling, its chains within an iteration and one thread's DRAM rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Simd {
    /// The widest vector set the profile measured (the set of its STREAM
    /// kernels), for every term alike; a profile whose STREAM set is none
    /// of the others takes each term's highest figure.
    Widest,
    Avx512,
    Avx2,
    Scalar,
}

#[derive(Debug, Args)]
pub struct KernelArgs {
    /// A JSON description (see data/README.md); flags given as well win,
    /// and --array adds arrays to the file's.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The kernel's name in records and on the Roofline chart.
    #[arg(long)]
    pub name: Option<String>,
    /// Iterations of all threads together.
    #[arg(long, value_parser = crate::args::number)]
    pub n: Option<f64>,
    /// Threads, each running a contiguous n/threads of the iterations (default 1).
    #[arg(long)]
    pub threads: Option<usize>,
    /// An array the loop uses (repeat the flag).
    #[arg(long = "array", value_name = "NAME:MODE:BYTES[:stride=S][:random=SIZE]", value_parser = parse_array)]
    pub arrays: Vec<models::kernel::ArrayUse>,
    /// Floating-point operations per iteration (default 0).
    #[arg(long, value_parser = crate::args::number)]
    pub flops: Option<f64>,
    /// Precision of the arithmetic (default f64).
    #[arg(long, value_enum)]
    pub precision: Option<PrecisionArg>,
    /// Dependent steps per iteration that wait for the previous
    /// iteration's result, an FMA one step (`s += a[i]*x[i]`: 1, since the
    /// multiply waits for nothing), each at the latency of a dependent
    /// f64 add (default 0).
    #[arg(long, value_parser = crate::args::number)]
    pub chain: Option<f64>,
    /// Dependent steps within one iteration, the longest chain of its
    /// operations each waiting for the one before: Horner's scheme of
    /// degree 16 built with FMA has 16, without FMA 32 (default 0). The
    /// iterations' chains overlap only as far as the core's out-of-order
    /// window holds them, at the profile's measured time per element.
    #[arg(long, value_parser = crate::args::number)]
    pub span: Option<f64>,
    /// Bytes per iteration the loop loads again from lines already in L1,
    /// beyond its arrays' bytes: a 5-point stencil on f64 whose old-grid
    /// array moves 8 B per update names 40 B of loads, so 32 (default 0).
    #[arg(long, value_parser = crate::args::number)]
    pub reused: Option<f64>,
    /// Bytes per iteration the loop loads again from lines it used WINDOW
    /// bytes of its own traffic before (repeat the flag): found in L1 only
    /// if L1 holds the window (the layer condition), else brought back from
    /// the level that does. A 5-point f64 stencil on rows of W elements
    /// reloads its row above and its own row: 16@(4W−2)·8.
    #[arg(long = "windowed-reuse", value_name = "BYTES@WINDOW", value_parser = spec::parse_reuse)]
    pub windowed_reuse: Vec<models::kernel::Reuse>,
    /// Iterations a thread runs over contiguous elements before its
    /// streams jump elsewhere (a tile's width): each jump restarts the
    /// streams, at the profile's measured cost per restart (default: one
    /// contiguous run per thread).
    #[arg(long, value_parser = crate::args::number)]
    pub segment: Option<f64>,
    /// Iterations from one run's start to the next's, in memory (the row of
    /// the array a tile runs over): with the thread's share it gives a tile
    /// column's bytes, and a column larger than the caches costs more per
    /// restart, as the lines the prefetchers fetch past each run's end are
    /// evicted before the loop comes back for them (default: far apart,
    /// small columns, as a tile over long rows)
    #[arg(long = "segment-stride", value_parser = crate::args::number)]
    pub segment_stride: Option<f64>,
    /// One item of the counting sort's histogram or scatter loop per
    /// iteration (repeat the flag for both), at the profile's calibrated
    /// time per item over 256 bins; a scatter whose working set lies beyond
    /// the caches also pays what its 256 output streams cost there.
    #[arg(long = "sort-loop", value_enum)]
    pub sort_loops: Vec<SortLoopArg>,
    /// The arrays are backed by 2 MiB pages: streams then read the
    /// huge-page STREAM sweep and random accesses the huge-page latency
    /// curve (without it, beyond the private caches, the 4 KiB-page ones,
    /// as for arrays from a plain malloc where transparent huge pages are
    /// given only on request).
    #[arg(long)]
    pub huge_pages: bool,
    /// The instruction set the loop's code was built for.
    #[arg(long, value_enum, default_value = "widest")]
    pub simd: Simd,
    /// Machine profile written by `calibrate`: a file, or a name under
    /// data/profiles/.
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// One JSON object on stdout instead of the worked text.
    #[arg(long)]
    pub json: bool,
    /// A time you measured for one pass of all n iterations (`12.3ms`):
    /// the prediction's error is shown.
    #[arg(long, value_parser = crate::args::time)]
    pub time: Option<Time>,
    /// Re-measure now the profile figures the prediction leans on (the
    /// STREAM bandwidth at the loop's level and mix, the FMA peak, the
    /// counting sort's loops it runs, the load kernel in L1 for reused
    /// bytes, the Horner loop for a span) and add the prediction on the
    /// machine as it runs now: run it right after timing the loop.
    #[arg(long)]
    pub paired: bool,
    /// With --time: append a record that `predict roofline` draws.
    #[arg(long, requires = "time")]
    pub record: bool,
    /// Folder whose `records.jsonl` --record appends to.
    #[arg(long, default_value = DEFAULT_MEASUREMENTS)]
    pub measurements: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortLoopArg {
    Histogram,
    Scatter,
}

impl From<SortLoopArg> for models::kernel::SortLoop {
    fn from(a: SortLoopArg) -> Self {
        match a {
            SortLoopArg::Histogram => Self::Histogram,
            SortLoopArg::Scatter => Self::Scatter,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    F64,
    F32,
}

/// The description the flags and the file give together.
fn description(a: &KernelArgs) -> Result<(String, LoopKernel, bool)> {
    let file = match &a.file {
        Some(p) => DescriptionFile::read(p)?,
        None => DescriptionFile::default(),
    };
    let n = match (a.n, &file.n) {
        (Some(n), _) => n,
        (None, Some(v)) => count_value("n", v)?,
        (None, None) => {
            return Err(BadInput(
                "missing --n: give the loop's iteration count (all threads together)".into(),
            )
            .into())
        }
    };
    let number = |flag: Option<f64>, v: &Option<serde_json::Value>, field: &str| match (flag, v) {
        (Some(x), _) => Ok(x),
        (None, Some(v)) => count_value(field, v),
        (None, None) => Ok(0.0),
    };
    let mut arrays = file
        .arrays
        .iter()
        .map(|s| parse_array(s).map_err(BadInput))
        .collect::<Result<Vec<_>, _>>()?;
    arrays.extend(a.arrays.iter().cloned());
    let precision = match a.precision {
        Some(PrecisionArg::F32) => Precision::F32,
        Some(PrecisionArg::F64) => Precision::F64,
        None => file.precision.unwrap_or_default(),
    };
    let k = LoopKernel {
        n,
        threads: a.threads.or(file.threads).unwrap_or(1),
        arrays,
        flops: number(a.flops, &file.flops, "flops")?,
        precision,
        chain: number(a.chain, &file.chain, "chain")?,
        span: number(a.span, &file.span, "span")?,
        reused_bytes: number(a.reused, &file.reused, "reused")?,
        windowed_reuse: if a.windowed_reuse.is_empty() {
            file.windowed_reuse
        } else {
            a.windowed_reuse.clone()
        },
        segment_iterations: a.segment.or(file.segment),
        segment_stride_iterations: a.segment_stride.or(file.segment_stride),
        sort_loops: if a.sort_loops.is_empty() {
            file.sort_loops
        } else {
            a.sort_loops.iter().map(|&l| l.into()).collect()
        },
    };
    k.validate().map_err(|e| BadInput(e.to_string()))?;
    let name = a
        .name
        .clone()
        .or(file.name)
        .unwrap_or_else(|| "kernel".into());
    if name.trim().is_empty() {
        return Err(BadInput(
            "the kernel's name is empty: give one that records and charts can show (--name, or \"name\" in the file)".into(),
        )
        .into());
    }
    Ok((name, k, a.huge_pages || file.huge_pages.unwrap_or(false)))
}

/// The instruction set `simd` names on `profile`: one for every term, so
/// that the compute ceiling, the span and one thread's DRAM points come
/// from one build (`widest` read each term's own widest or highest: on
/// the Zen 4 VM an AVX2 ceiling beside AVX-512 DRAM points).
fn isa_of(simd: Simd, profile: &Profile) -> Option<&'static str> {
    match simd {
        Simd::Widest => {
            let set = profile.sections.stream.as_ref().map(|s| s.isa.as_str());
            ["avx512", "avx2", "scalar"]
                .into_iter()
                .find(|i| Some(*i) == set)
        }
        Simd::Avx512 => Some("avx512"),
        Simd::Avx2 => Some("avx2"),
        Simd::Scalar => Some("scalar"),
    }
}

/// A prediction with its range: the point, and the fastest and slowest
/// the profile's 95% intervals allow.
pub struct Ranged {
    pub point: Prediction,
    pub lo_s: f64,
    pub hi_s: f64,
}

/// Runs `predict kernel`.
pub fn run(a: &KernelArgs, out: &mut dyn std::io::Write) -> Result<()> {
    let (name, k, huge_pages) = description(a)?;
    let (profile, located) =
        crate::profiles::load_or_default(a.profile.as_deref())?.ok_or_else(|| {
            BadInput(format!(
                "no profile at {}: run `calibrate` first, or pass --profile FILE|NAME",
                crate::profiles::DEFAULT_PROFILE
            ))
        })?;
    if let Some(memory) = profile.provenance.memory_bytes.filter(|m| *m > 0) {
        let footprint = k.footprint_bytes();
        if footprint > memory as f64 {
            return Err(BadInput(format!(
                "the loop's arrays take {}, more than the {} of memory the profiled machine has ({}): no run of it there to predict",
                Si(footprint, "B"),
                Si(memory as f64, "B"),
                located.label
            ))
            .into());
        }
    }
    let measured_threads = profile.provenance.threads;
    if measured_threads > 0 && k.threads > measured_threads {
        return Err(BadInput(format!(
            "--threads {}: the profile ({}) was measured on at most {measured_threads} thread(s); a loop on more has no figures to read there",
            k.threads, located.label
        ))
        .into());
    }
    let m = Machine::new(&profile);
    let build = Build {
        line_bytes: m.line_bytes(),
        huge_pages,
        isa: isa_of(a.simd, &profile),
    };
    let work = loop_work(&k, build);
    let at = |b| predict_at(&work, &m, k.threads, b).map_err(|e| BadInput(e.to_string()));
    let ranged = Ranged {
        point: at(Bound::Point)?,
        lo_s: at(Bound::Fast)?.seconds,
        hi_s: at(Bound::Slow)?.seconds,
    };
    let measured = a.time.map(|t| t.seconds("time", None)).transpose()?;
    if let Some(t) = measured {
        if !(t.is_finite() && t > 0.0) {
            return Err(BadInput(format!("--time must be a time > 0, not {t}")).into());
        }
    }
    let paired = if a.paired {
        let drifts = crate::kernels::paired::probe(&work, k.threads, &profile)?;
        let p = drifts
            .predict(&work, &profile, k.threads)
            .map_err(|e| BadInput(e.to_string()))?;
        Some((drifts, p.seconds))
    } else {
        None
    };
    let r = report::Report::new(&name, &k, &m, ranged, measured, &located.label)
        .with_reloaded(work.reloads(&m, k.threads).0)
        .with_paired(paired);
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r.json())?)?;
    } else {
        write!(out, "{}", r.text())?;
    }
    if a.record {
        let path = a.measurements.join(crate::record::RECORDS_FILE);
        crate::record::append_jsonl(&path, &[r.record()?])
            .with_context(|| format!("appending the record to {}", path.display()))?;
        if !a.json {
            writeln!(out, "record appended to {}", path.display())?;
        }
    }
    Ok(())
}
