//! The command line (a fixed contract):
//!
//! ```text
//! calibrate [--quick] [--only LIST] [--threads N] [--out FILE] [--json]
//!           [--max-memory SIZE] [--critical-ns NS]
//! calibrate point KERNEL [--size SIZE] [--threads N] [--pages small|huge] [--quick] [--json]
//! ```
//!
//! `LIST` takes names from [`BENCHES`], the one list to extend when a
//! benchmark is added. `point` measures a single figure (one kernel, one
//! working set, one thread count) for benchmark scripts that compare with
//! other tools.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use models::units::{parse, Dimension};

use crate::kernels::fma::Precision;
use crate::kernels::stream::Kernel;
use crate::mem::Pages;

/// A microbenchmark `--only` can select.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BenchName {
    /// Pointer-chase latency per level ([`crate::bench::latency`]).
    Latency,
    /// Peak FLOP/s ([`crate::bench::flops`]).
    Flops,
    /// STREAM bandwidth per level ([`crate::bench::stream`]).
    Stream,
    /// Memory-level parallelism ([`crate::bench::mlp`]).
    Mlp,
    /// Core-to-core latency and hand-off ([`crate::bench::c2c`]).
    C2c,
    /// Lock throughput and t_crit ([`crate::bench::lock`]).
    Lock,
    /// MPI ping-pong between two ranks (`crate::pingpong`, needs `mpirun
    /// -np 2` and the `mpi` feature); never part of a full run.
    Pingpong,
}

/// The `--only` name of the MPI ping-pong, which runs alone under mpirun.
pub const PINGPONG: (&str, BenchName) = ("pingpong", BenchName::Pingpong);

/// Every benchmark by its `--only` name, in the order they run: latency
/// first, as its levels size the others' working sets; c2c, lock and
/// flops last, as they pool bursts taken before every benchmark ahead of
/// them (`crate::bench::bursts`).
pub const BENCHES: &[(&str, BenchName)] = &[
    ("latency", BenchName::Latency),
    ("stream", BenchName::Stream),
    ("mlp", BenchName::Mlp),
    ("c2c", BenchName::C2c),
    ("lock", BenchName::Lock),
    ("flops", BenchName::Flops),
];

impl BenchName {
    /// The `--only` name.
    pub fn name(self) -> &'static str {
        BENCHES
            .iter()
            .chain([&PINGPONG])
            .find(|(_, b)| *b == self)
            .map(|(n, _)| *n)
            .expect("every benchmark is listed in BENCHES")
    }

    /// Whether it allocates working sets that the memory budget limits.
    pub fn uses_memory(self) -> bool {
        matches!(
            self,
            BenchName::Latency | BenchName::Stream | BenchName::Mlp
        )
    }
}

/// Parses one `--only` name.
fn parse_bench(s: &str) -> Result<BenchName, String> {
    BENCHES
        .iter()
        .chain([&PINGPONG])
        .find(|(n, _)| *n == s.trim())
        .map(|(_, b)| *b)
        .ok_or_else(|| {
            let names: Vec<&str> = BENCHES.iter().chain([&PINGPONG]).map(|(n, _)| *n).collect();
            format!("unknown benchmark; choose from {}", names.join(","))
        })
}

/// Parses a byte size in human units (`256MiB`, `1GB`).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let v = parse(s, Dimension::Bytes).map_err(|e| e.to_string())?.value;
    if v >= 2f64.powi(63) {
        Err("a size must be below 8 EiB (2^63 bytes)".into())
    } else if v >= 1.0 {
        Ok(v.round() as u64)
    } else {
        Err("a size must be at least 1 byte".into())
    }
}

/// Parses a duration in human units (`30s`, `500ms`); a bare number is
/// seconds. `predict run --kernel ghost-stencil --timeout` takes the same.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let p = parse(s, Dimension::Time).map_err(|e| e.to_string())?;
    if p.cycles {
        return Err("give the timeout in seconds (e.g. 30s), not cycles".into());
    }
    if p.value.is_finite() && (0.0..=1e6).contains(&p.value) {
        Ok(p.value)
    } else {
        Err("a timeout must be from 0 s to 1000000 s".into())
    }
}

/// Measure this machine and write its profile.
#[derive(Debug, Parser)]
#[command(
    name = "calibrate",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// `point`, or none for a calibration run.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The options of a calibration run.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of a calibration run.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Fewer sizes, kernels and repetitions: on a 2-core VM about 12 s
    /// instead of 70 s with a 128 MiB DRAM working set, 60–90 s instead of
    /// 220 s with 512 MiB (twice an OS-reported 260 MB L3).
    #[arg(long)]
    pub quick: bool,
    /// Run only these benchmarks (comma-separated): latency, stream, mlp,
    /// c2c, lock, flops; or pingpong alone, under `mpirun -np 2`. The other
    /// sections of an existing profile are kept.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_bench)]
    pub only: Vec<BenchName>,
    /// Threads for the all-core figures, pinned one per logical CPU
    /// (default: every CPU this process may use).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Where to write the profile (atomically: temporary file, then rename;
    /// missing folders of the path are created).
    #[arg(long, value_name = "FILE", default_value = "data/profile.json")]
    pub out: PathBuf,
    /// Also print the profile as JSON on stdout (the table then goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Memory budget of the working sets (default: a quarter of the RAM),
    /// e.g. 2GiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_memory: Option<u64>,
    /// Length of the lock benchmark's critical section, ns of dependent work
    /// [default: 5].
    #[arg(long, value_name = "NS")]
    pub critical_ns: Option<f64>,
    /// Ping-pong only: the largest message (default 16MiB), e.g. 4MiB for
    /// a slow link.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_message: Option<u64>,
    /// Ping-pong only: time without progress after which the job is
    /// aborted (default 120s; 0 disables), e.g. 30s.
    #[arg(long, value_name = "TIME", value_parser = parse_seconds)]
    pub timeout: Option<f64>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure one figure: a kernel at one working set and thread count.
    Point(PointArgs),
}

/// What `point` measures: a STREAM kernel's bandwidth, the pointer-chase
/// latency, the peak FLOP/s of the widest SIMD with FMA, the time per
/// element of iterations with a chain of that depth inside, or the time
/// per item of the counting sort's scatter into an output of that size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKernel {
    Stream(Kernel),
    Chase,
    Peak(Precision),
    Span,
    Scatter,
}

impl PointKernel {
    const COUNT: usize = Kernel::ALL.len() + 5;

    /// Every kernel, in the order `--help` lists them.
    const ALL: [PointKernel; Self::COUNT] = {
        let mut all = [PointKernel::Chase; Self::COUNT];
        let mut i = 0;
        while i < Kernel::ALL.len() {
            all[i] = PointKernel::Stream(Kernel::ALL[i]);
            i += 1;
        }
        all[i + 1] = PointKernel::Peak(Precision::F64);
        all[i + 2] = PointKernel::Peak(Precision::F32);
        all[i + 3] = PointKernel::Span;
        all[i + 4] = PointKernel::Scatter;
        all
    };
}

impl ValueEnum for PointKernel {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            PointKernel::Stream(k) => PossibleValue::new(k.name()).help(format!(
                "{} bandwidth: {}",
                k.name(),
                k.formula()
            )),
            PointKernel::Chase => PossibleValue::new("chase").help("pointer-chase latency"),
            PointKernel::Peak(p) => PossibleValue::new(match p {
                Precision::F64 => "peak-f64",
                Precision::F32 => "peak-f32",
            })
            .help(format!("peak {} FLOP/s, widest SIMD with FMA", p.name())),
            PointKernel::Span => PossibleValue::new("span").help(
                "y = p(x) by Horner's scheme --depth steps deep, widest SIMD, in L1: seconds per element",
            ),
            PointKernel::Scatter => PossibleValue::new("scatter").help(
                "the counting sort's scatter over 256 bins, its input in L1 and --size of output over all threads: seconds per item",
            ),
        })
    }
}

/// Options of `point`.
#[derive(Debug, Clone, Args)]
pub struct PointArgs {
    /// The figure to measure.
    #[arg(value_enum)]
    pub kernel: PointKernel,
    /// Working set, all arrays and threads together (needed for stream
    /// kernels, chase and scatter), e.g. 1GB or 256KiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub size: Option<u64>,
    /// Threads, pinned to the first N logical CPUs (chase and span use one).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// Steps of span's chain per element: 4, 8, 16, 32 or 64.
    #[arg(long, value_name = "STEPS")]
    pub depth: Option<usize>,
    /// Page policy of the working set [default: huge].
    #[arg(long, value_enum)]
    pub pages: Option<PagesArg>,
    /// Fewer repetitions.
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object instead of a line of text.
    #[arg(long)]
    pub json: bool,
}

/// `--pages` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PagesArg {
    /// 4 KiB pages (madvise NOHUGEPAGE).
    Small,
    /// Transparent huge pages (madvise HUGEPAGE).
    Huge,
}

impl From<PagesArg> for Pages {
    fn from(p: PagesArg) -> Pages {
        match p {
            PagesArg::Small => Pages::Small,
            PagesArg::Huge => Pages::Huge,
        }
    }
}

/// The one line to print for a clap error (its first line, without the
/// leading "error: "), or `None` for `--help`/`--version`, which clap
/// prints itself.
pub fn clap_error_line(e: &clap::Error) -> Option<String> {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => None,
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => None,
        _ => {
            // The first paragraph, its lines joined, so that "the following
            // required arguments were not provided:" keeps the names below it.
            let text = e.render().to_string();
            let para: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let line = para.join(" ");
            let line = line.trim_start_matches("error: ").trim();
            Some(
                if line.is_empty() {
                    "invalid arguments"
                } else {
                    line
                }
                .to_string(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("calibrate").chain(args.iter().copied()))
    }

    #[test]
    fn defaults() {
        let c = parse_args(&[]).unwrap();
        assert!(c.command.is_none());
        assert!(!c.run.quick && !c.run.json);
        assert!(c.run.only.is_empty());
        assert_eq!(c.run.out, PathBuf::from("data/profile.json"));
        assert_eq!(c.run.threads, None);
        assert_eq!(c.run.critical_ns, None);
    }

    #[test]
    fn only_is_one_comma_list() {
        let c = parse_args(&["--only", "stream,latency,c2c", "--quick", "--threads", "2"]).unwrap();
        assert_eq!(
            c.run.only,
            [BenchName::Stream, BenchName::Latency, BenchName::C2c]
        );
        assert_eq!(c.run.threads, Some(2));
        for (name, b) in BENCHES {
            assert_eq!(parse_args(&["--only", name]).unwrap().run.only, [*b]);
            assert_eq!(b.name(), *name);
        }
        assert_eq!(
            parse_args(&["--only", "pingpong"]).unwrap().run.only,
            [BenchName::Pingpong]
        );
        assert_eq!(BenchName::Pingpong.name(), "pingpong");
        let e = parse_args(&["--only", "stream,nonsense"]).unwrap_err();
        let line = clap_error_line(&e).unwrap();
        assert!(
            line.contains("nonsense") && line.contains("choose from latency,stream"),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn sizes_take_human_units() {
        let c = parse_args(&["--max-memory", "2GiB"]).unwrap();
        assert_eq!(c.run.max_memory, Some(2 << 30));
        let c = parse_args(&["--max-memory", "1GB"]).unwrap();
        assert_eq!(c.run.max_memory, Some(1_000_000_000));
        assert!(parse_args(&["--max-memory", "lots"]).is_err());
        assert!(parse_args(&["--max-memory", "0"]).is_err());
    }

    #[test]
    fn point_subcommand() {
        let c = parse_args(&[
            "point",
            "triad",
            "--size",
            "1GB",
            "--threads",
            "2",
            "--pages",
            "small",
            "--json",
        ])
        .unwrap();
        let Some(Command::Point(p)) = c.command else {
            panic!("no point")
        };
        assert_eq!(p.kernel, PointKernel::Stream(Kernel::Triad));
        assert_eq!(p.size, Some(1_000_000_000));
        assert_eq!(p.threads, 2);
        assert_eq!(p.pages, Some(PagesArg::Small));
        assert!(p.json);
        let c = parse_args(&["point", "peak-f64"]).unwrap();
        let Some(Command::Point(p)) = c.command else {
            panic!("no point")
        };
        assert_eq!(
            (p.kernel, p.threads, p.pages),
            (PointKernel::Peak(Precision::F64), 1, None)
        );
        assert!(parse_args(&["--quick", "point", "chase"]).is_err());
    }

    #[test]
    fn errors_reduce_to_one_line() {
        let e = parse_args(&["--frobnicate"]).unwrap_err();
        let line = clap_error_line(&e).unwrap();
        assert!(
            line.contains("--frobnicate") && !line.starts_with("error"),
            "{line}"
        );
        assert!(clap_error_line(&parse_args(&["--help"]).unwrap_err()).is_none());
    }

    #[test]
    fn pingpong_limits_take_human_units() {
        let c = parse_args(&[
            "--only",
            "pingpong",
            "--max-message",
            "4MiB",
            "--timeout",
            "30s",
        ])
        .unwrap();
        assert_eq!(c.run.max_message, Some(4 << 20));
        assert_eq!(c.run.timeout, Some(30.0));
        assert_eq!(
            parse_args(&["--timeout", "500ms"]).unwrap().run.timeout,
            Some(0.5)
        );
        assert_eq!(
            parse_args(&["--timeout", "0"]).unwrap().run.timeout,
            Some(0.0)
        );
        assert!(parse_args(&["--timeout", "100cycles"]).is_err());
        assert!(parse_args(&["--timeout", "-1s"]).is_err());
        assert!(parse_args(&["--max-message", "0"]).is_err());
    }
}
