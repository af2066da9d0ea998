//! `predict roofline`: the calibrated machine as a Roofline chart with the
//! measured kernels (or the user's own points) on it (lecture §4.4), as
//! SVG/PNG/PDF and as data (CSV/JSON); and what the chart commands share
//! (their arguments, output files and report). The memory mountain (§2.6)
//! is [`crate::mountain`].
//!
//! ```text
//! predict roofline [--profile FILE] [--measurements FILE|DIR]... [--point NAME:AI:FLOPS[:LO:HI]]...
//!                  [--points FILE] [--ceilings NAME,...] [--labels OLD=NEW]...
//!                  [--legend below|inside|none] [--caption] [--out chart.svg|.png|.pdf]
//!                  [--text text|outlines] [--csv FILE] [--json] [--title T]
//!                  [--precision f64|f32|all] [--one-thread]
//! ```

pub mod ceilings;
pub mod chart;
pub mod checks;
pub mod data;
pub mod points;
pub mod table;

use std::io::Write;
use std::path::{Path, PathBuf};

use calibrate::harness::atomic::AtomicFile;
use clap::{Args, ValueEnum};

use crate::chart::output::{self, encode, Format};
use crate::chart::{render_with, Figure, LegendPlace, PlottersSvg, RenderOptions, TextMode};
use crate::error::BadInput;
use crate::record::read as records;

pub use crate::mountain::{run_mountain, MountainArgs};
pub use crate::profiles::{DEFAULT_MEASUREMENTS, DEFAULT_PROFILE};

/// What both chart commands take: the profile, and where the chart and
/// its data go.
#[derive(Debug, Clone, Args)]
pub struct ChartArgs {
    /// Machine profile written by `calibrate`: a file, or a name under
    /// data/profiles/ such as `textbook`.
    #[arg(long, default_value = DEFAULT_PROFILE)]
    pub profile: PathBuf,
    /// Write the chart: .svg, .png (300 dpi) or .pdf, 3.5 in wide.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write the chart's data as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Print the chart's data as one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// A title above the chart (none by default: papers use captions).
    #[arg(long)]
    pub title: Option<String>,
    /// `text`: real, editable text (SVG `<text>` with a font stack, PDF
    /// with the bundled font embedded); `outlines`: every glyph as a path.
    #[arg(long, value_enum, default_value = "text")]
    pub text: TextMode,
}

/// `predict roofline`: the ceilings, the ridge and the kernels' points.
#[derive(Debug, Clone, Args)]
pub struct RooflineArgs {
    #[command(flatten)]
    pub chart: ChartArgs,
    /// Records of `predict run` (JSON or CSV): a file, or every such file
    /// of a directory; repeatable [default, when no --point or --points is
    /// given either: data/measurements/ when it exists].
    #[arg(long, value_name = "FILE|DIR")]
    pub measurements: Vec<PathBuf>,
    /// A point of your own: name, intensity in flop/byte, performance, and
    /// optionally its interval, e.g. `SpMV:0.16:3.1GFLOP/s` or
    /// `SpMV:0.16:3.1GFLOP/s:2.9GFLOP/s:3.3GFLOP/s`; repeatable.
    #[arg(long = "point", value_name = "NAME:AI:FLOPS[:LO:HI]")]
    pub point: Vec<String>,
    /// Points of your own as CSV with the columns name, ai, flops and
    /// optionally lo, hi, threads (rates in FLOP/s or with units).
    #[arg(long, value_name = "FILE")]
    pub points: Option<PathBuf>,
    /// Draw only these roofs, named as the table and CSV list them
    /// (`DRAM,L2,f64 AVX2 FMA`); a word such as `fma` takes the highest
    /// roof whose name has it.
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub ceilings: Option<Vec<String>>,
    /// Rename a point on the chart: `OLD=NEW`, OLD its name as the table
    /// lists it or its kernel; repeatable.
    #[arg(long = "labels", value_name = "OLD=NEW")]
    pub labels: Vec<String>,
    /// Where the legend goes.
    #[arg(long, value_enum, default_value = "below")]
    pub legend: LegendArg,
    /// Print a caption for the figure (machine, threads, each roof and how
    /// it was measured, calibration date, versions) instead of the table.
    #[arg(long)]
    pub caption: bool,
    /// Draw the compute ceilings of this precision (`all` for both).
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32", "all"])]
    pub precision: String,
    /// One-thread ceilings and bandwidths instead of all-threads ones.
    #[arg(long)]
    pub one_thread: bool,
}

/// `--legend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LegendArg {
    Below,
    Inside,
    None,
}

impl From<LegendArg> for LegendPlace {
    fn from(l: LegendArg) -> Self {
        match l {
            LegendArg::Below => LegendPlace::Below,
            LegendArg::Inside => LegendPlace::Inside,
            LegendArg::None => LegendPlace::None,
        }
    }
}

/// The output files of a chart command, opened before any work.
pub struct Outputs {
    pub chart: Option<(AtomicFile, Format)>,
    pub csv: Option<AtomicFile>,
    /// How the chart is rendered (outlined text and the legend below
    /// unless [`Outputs::render`] says otherwise).
    pub opts: RenderOptions,
}

impl Outputs {
    /// Checks the chart's extension and creates both temporary files.
    pub fn open(chart: Option<&Path>, csv: Option<&Path>) -> Result<Self, BadInput> {
        let chart = match chart {
            Some(p) => {
                let format = Format::from_path(p)?;
                Some((output::open(p)?, format))
            }
            None => None,
        };
        let csv = csv.map(output::open).transpose()?;
        let opts = RenderOptions {
            text: TextMode::Outlines,
            legend: LegendPlace::Below,
        };
        Ok(Self { chart, csv, opts })
    }

    /// Renders the chart as `opts` say.
    pub fn render(mut self, opts: RenderOptions) -> Self {
        self.opts = opts;
        self
    }

    /// Draws `fig` into the chart file (if any) and writes `csv` (if any);
    /// returns the layout's warnings and the paths written.
    pub fn finish(
        self,
        fig: &Figure,
        csv: impl FnOnce() -> String,
    ) -> anyhow::Result<(Vec<String>, Vec<String>)> {
        let mut warnings = Vec::new();
        let mut written = Vec::new();
        if let Some((file, format)) = self.chart {
            let rendered = render_with(fig, &PlottersSvg, self.opts)?;
            warnings.extend(rendered.scene.warnings.iter().cloned());
            let bytes = encode(
                &rendered.svg,
                format,
                rendered.scene.width,
                rendered.scene.dpi,
            )?;
            written.push(commit(file, &bytes)?);
        }
        if let Some(file) = self.csv {
            written.push(commit(file, csv().as_bytes())?);
        }
        Ok((warnings, written))
    }
}

/// Puts `file` in place with `bytes`; returns its path for the summary.
fn commit(file: AtomicFile, bytes: &[u8]) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let path = file.path().display().to_string();
    file.commit(bytes)
        .with_context(|| format!("writing {path}"))?;
    Ok(path)
}

/// The records of `--measurements` (or of the default directory when no
/// input is given at all), and what was noticed reading them.
fn load_records(a: &RooflineArgs) -> Result<(Vec<records::Record>, Vec<String>), BadInput> {
    let mut paths = a.measurements.clone();
    let own_points = !a.point.is_empty() || a.points.is_some();
    if paths.is_empty() && !own_points {
        if !Path::new(DEFAULT_MEASUREMENTS).is_dir() {
            return Ok((Vec::new(), vec![format!(
                "no measurements given and no {DEFAULT_MEASUREMENTS}/: the chart shows the machine only (run `predict run` first, or pass --measurements or --point)"
            )]));
        }
        paths.push(PathBuf::from(DEFAULT_MEASUREMENTS));
    }
    let l = records::load_all(&paths)?;
    Ok((l.records, l.notes))
}

/// The points of `--point` and `--points`.
fn user_points(a: &RooflineArgs) -> Result<Vec<points::UserPoint>, BadInput> {
    let mut out: Vec<points::UserPoint> = a
        .point
        .iter()
        .map(|s| points::parse_point(s))
        .collect::<Result<_, _>>()?;
    if let Some(f) = &a.points {
        out.extend(points::load_points(f)?);
    }
    let mut names: Vec<&str> = out.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(BadInput(format!(
            "two points are named '{}': the chart and its table could not tell them apart; rename one",
            w[0]
        )));
    }
    Ok(out)
}

/// Runs `predict roofline`.
pub fn run_roofline(a: &RooflineArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let outputs =
        Outputs::open(a.chart.out.as_deref(), a.chart.csv.as_deref())?.render(RenderOptions {
            text: a.chart.text,
            legend: a.legend.into(),
        });
    let (profile, located) = crate::profiles::load(&a.chart.profile)?;
    let (records, mut notes) = load_records(a)?;
    let own = user_points(a)?;
    let sel = data::Selection {
        precision: (a.precision != "all").then(|| a.precision.clone()),
        one_thread: a.one_thread,
        ceilings: a.ceilings.clone(),
    };
    let inputs = data::Inputs {
        profile: &profile,
        profile_file: &located.label,
        records: &records,
        points: &own,
        labels: &a.labels,
    };
    let mut d = data::build(&inputs, &sel)?;
    d.notes.append(&mut notes);
    let fig = chart::figure(&d, a.chart.title.clone());
    let (warnings, written) = outputs.finish(&fig, || data::to_csv(&d))?;
    d.notes.extend(warnings);
    if a.caption && !a.chart.json {
        writeln!(out, "{}", table::caption(&d))?;
        for n in &d.notes {
            eprintln!("note: {n}");
        }
        return Ok(());
    }
    let caption = table::caption(&d);
    report_with(
        &d,
        data::to_text,
        &written,
        a.chart.json,
        Some(&caption),
        out,
    )
}

/// Prints a chart's data: one JSON document with the files written, or the
/// table and one line per file.
pub fn report<T: serde::Serialize>(
    d: &T,
    text: impl Fn(&T) -> String,
    written: &[String],
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    report_with(d, text, written, json, None, out)
}

/// [`report`], with the figure's caption in the JSON document.
fn report_with<T: serde::Serialize>(
    d: &T,
    text: impl Fn(&T) -> String,
    written: &[String],
    json: bool,
    caption: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if json {
        let mut v = serde_json::to_value(d)?;
        v["files"] = serde_json::json!(written);
        if let Some(c) = caption {
            v["caption"] = serde_json::json!(c);
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        write!(out, "{}", text(d))?;
        for w in written {
            writeln!(out, "wrote {w}")?;
        }
    }
    Ok(())
}
