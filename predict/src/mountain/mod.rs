//! The memory mountain of lecture §2.6, as two curves against the working
//! set: load-to-use latency (the pointer chase of `calibrate`'s `latency`
//! section) and read bandwidth (the `load` kernel of its `stream` section,
//! one curve per thread count), with the memory levels `calibrate`
//! detected shaded and labelled. Where a curve steps up (latency) or down
//! (bandwidth), the working set has outgrown a level: the "knee" the
//! lecture tells architects and programmers to look for.
//!
//! The x axis is the working set per thread (log₂, binary prefixes): the
//! size each thread touches, so that the steps of every thread count line
//! up with the per-core cache sizes.
//!
//! ```text
//! predict mountain [--profile FILE] [--out chart.svg|.png|.pdf] [--text text|outlines]
//!                  [--csv FILE] [--json] [--title T]
//! ```

pub mod data;
pub mod figure;
pub mod table;

use std::io::Write;

use clap::Args;

pub use data::{build, Curve, CurvePoint, LevelMark, MountainData, Quantity};
pub use figure::figure;
pub use table::{to_csv, to_text};

use crate::chart::{LegendPlace, RenderOptions};
use crate::roofline::{report, ChartArgs, Outputs};

/// `predict mountain`: the profile's `latency` and `stream` curves and
/// its levels.
#[derive(Debug, Clone, Args)]
pub struct MountainArgs {
    #[command(flatten)]
    pub chart: ChartArgs,
}

/// Runs `predict mountain`.
pub fn run_mountain(a: &MountainArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let outputs =
        Outputs::open(a.chart.out.as_deref(), a.chart.csv.as_deref())?.render(RenderOptions {
            text: a.chart.text,
            legend: LegendPlace::Below,
        });
    let (profile, _) = crate::profiles::load(&a.chart.profile)?;
    let mut d = build(&profile)?;
    let fig = figure(&d, a.chart.title.clone());
    let (warnings, written) = outputs.finish(&fig, || to_csv(&d))?;
    d.notes.extend(warnings);
    report(&d, to_text, &written, a.chart.json, out)
}
