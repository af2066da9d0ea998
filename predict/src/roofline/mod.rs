//! `predict roofline` and `predict mountain`: the calibrated machine as a
//! Roofline chart with the measured kernels on it (lecture §4.4), and its
//! memory mountain (§2.6), as SVG/PNG/PDF and as data (CSV/JSON).
//!
//! ```text
//! predict roofline [--profile FILE] [--measurements FILE|DIR] [--out chart.svg|.png|.pdf]
//!                  [--csv FILE] [--json] [--title T] [--precision f64|f32|all] [--one-thread]
//! predict mountain [--profile FILE] [--out chart.svg|.png|.pdf] [--csv FILE] [--json] [--title T]
//! ```

pub mod chart;
pub mod data;
pub mod mountain;
pub mod records;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::chart::output::{encode, Format, PendingFile};
use crate::chart::{render, Figure, PlottersSvg};
use crate::BadInput;

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
}

/// `predict roofline`: the ceilings, the ridge and the kernels' points.
#[derive(Debug, Clone, Args)]
pub struct RooflineArgs {
    #[command(flatten)]
    pub chart: ChartArgs,
    /// Records of `predict run` (JSON or CSV): one file, or every such file
    /// of a directory [default: data/measurements/ when it exists].
    #[arg(long)]
    pub measurements: Option<PathBuf>,
    /// Draw the compute ceilings of this precision (`all` for both).
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32", "all"])]
    pub precision: String,
    /// One-thread ceilings and bandwidths instead of all-threads ones.
    #[arg(long)]
    pub one_thread: bool,
}

/// `predict mountain`: the profile's `latency` and `stream` curves and
/// its levels.
#[derive(Debug, Clone, Args)]
pub struct MountainArgs {
    #[command(flatten)]
    pub chart: ChartArgs,
}

/// The output files of a chart command, opened before any work.
pub struct Outputs {
    pub chart: Option<(PendingFile, Format)>,
    pub csv: Option<PendingFile>,
}

impl Outputs {
    /// Checks the chart's extension and creates both temporary files.
    pub fn open(chart: Option<&Path>, csv: Option<&Path>) -> Result<Self, BadInput> {
        let chart = match chart {
            Some(p) => {
                let format = Format::from_path(p)?;
                Some((PendingFile::create(p)?, format))
            }
            None => None,
        };
        let csv = csv.map(PendingFile::create).transpose()?;
        Ok(Self { chart, csv })
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
            let rendered = render(fig, &PlottersSvg)?;
            warnings.extend(rendered.scene.warnings.iter().cloned());
            let bytes = encode(&rendered.svg, format, rendered.scene.width)?;
            written.push(file.path().display().to_string());
            file.commit(&bytes)?;
        }
        if let Some(file) = self.csv {
            written.push(file.path().display().to_string());
            file.commit(csv().as_bytes())?;
        }
        Ok((warnings, written))
    }
}

/// Runs `predict roofline`.
pub fn run_roofline(a: &RooflineArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let outputs = Outputs::open(a.chart.out.as_deref(), a.chart.csv.as_deref())?;
    let (profile, _) = crate::profiles::load(&a.chart.profile)?;
    let (records, mut notes) = match &a.measurements {
        Some(p) => {
            let l = records::load(p)?;
            (l.records, l.notes)
        }
        None if Path::new(DEFAULT_MEASUREMENTS).is_dir() => {
            let l = records::load(Path::new(DEFAULT_MEASUREMENTS))?;
            (l.records, l.notes)
        }
        None => (
            Vec::new(),
            vec![format!(
                "no measurements given and no {DEFAULT_MEASUREMENTS}/: the chart shows the machine only (run `predict run` first, or pass --measurements)"
            )],
        ),
    };
    let sel = data::Selection {
        precision: (a.precision != "all").then(|| a.precision.clone()),
        one_thread: a.one_thread,
    };
    let mut d = data::build(&profile, &records, &sel)?;
    d.notes.append(&mut notes);
    let fig = chart::figure(&d, a.chart.title.clone());
    let (warnings, written) = outputs.finish(&fig, || data::to_csv(&d))?;
    d.notes.extend(warnings);
    report(&d, data::to_text, &written, a.chart.json, out)
}

/// Runs `predict mountain`.
pub fn run_mountain(a: &MountainArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let outputs = Outputs::open(a.chart.out.as_deref(), a.chart.csv.as_deref())?;
    let (profile, _) = crate::profiles::load(&a.chart.profile)?;
    let mut d = mountain::build(&profile)?;
    let fig = mountain::figure(&d, a.chart.title.clone());
    let (warnings, written) = outputs.finish(&fig, || mountain::to_csv(&d))?;
    d.notes.extend(warnings);
    report(&d, mountain::to_text, &written, a.chart.json, out)
}

/// Prints a chart's data: one JSON document with the files written, or the
/// table and one line per file.
fn report<T: serde::Serialize>(
    d: &T,
    text: impl Fn(&T) -> String,
    written: &[String],
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if json {
        let mut v = serde_json::to_value(d)?;
        v["files"] = serde_json::json!(written);
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        write!(out, "{}", text(d))?;
        for w in written {
            writeln!(out, "wrote {w}")?;
        }
    }
    Ok(())
}
