//! The numbers of a Roofline chart (lecture §4.4), independent of any
//! drawing: the ceilings of the calibrated machine, the ridge point, and the
//! measured and predicted kernel points.
//!
//! * Bandwidth ceiling of memory level i: P = AI · Bᵢ, Bᵢ the level's
//!   all-threads read bandwidth from the profile.
//! * Compute ceiling j: P = Cⱼ (FLOP/s), from the profile's ceilings.
//! * Ridge point of level i: AI_ridge,i = C_peak / Bᵢ; the chart marks the
//!   DRAM ridge, where a kernel that streams from memory turns compute-bound.
//!   A compute ceiling's `ridge_ai` is Cⱼ / B_DRAM, where it meets the DRAM
//!   roof.
//! * A kernel point: AI = flops / bytes, measured P = flops / measured_s
//!   with the interval [flops / hi_s, flops / lo_s], predicted P = flops /
//!   predicted_s; `attainable` is min(C_peak, AI · B_DRAM) from
//!   [`models::roofline::Roofline::attainable`].
//! * A point the user gives (`--point`, `--points`) has its AI and FLOP/s
//!   as given, and an interval only when one is given.

use models::profile::Profile;
use models::roofline::{Ceiling, Roofline};
use models::units::Si;
use serde::Serialize;

use super::ceilings::{roofs, Roof, Roofs};
use super::points::UserPoint;
use crate::error::BadInput;
use crate::record::read::Record;

pub use super::table::{ai_text, to_csv, to_text};

/// Bandwidth or compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CeilingKind {
    Bandwidth,
    Compute,
}

/// One roof of the chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CeilingRow {
    pub kind: CeilingKind,
    /// "DRAM", "L2", "f64 avx2 fma", ...
    pub name: String,
    /// The label drawn on the chart, with the value.
    pub label: String,
    /// Bytes/s for bandwidth, FLOP/s for compute.
    pub value: f64,
    /// The 95% interval of the value.
    pub lo: f64,
    pub hi: f64,
    /// "B/s" or "FLOP/s".
    pub unit: &'static str,
    pub threads: usize,
    /// Bandwidth: C_peak / B; compute: C / B_DRAM (flop/byte).
    pub ridge_ai: f64,
    /// How `calibrate` measured it.
    pub method: String,
}

/// The ridge point the chart marks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ridge {
    /// flop/byte.
    pub ai: f64,
    /// FLOP/s (the peak).
    pub flops: f64,
    pub memory: String,
    pub compute: String,
}

/// One kernel variant, or one point the user gave, on the chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointRow {
    /// The name on the chart: "kernel variant, N thr", the user's name, or
    /// what `--labels` renamed it to.
    pub name: String,
    pub kernel: String,
    pub variant: String,
    pub threads: Option<u64>,
    pub size: String,
    /// flop/byte.
    pub ai: f64,
    pub measured_flops: f64,
    /// The interval of the measured performance; None when the input gave
    /// none (a point without an interval).
    pub measured_flops_lo: Option<f64>,
    pub measured_flops_hi: Option<f64>,
    pub predicted_flops: Option<f64>,
    /// min(C_peak, AI · B_DRAM), FLOP/s.
    pub attainable_flops: f64,
    /// The resource the model says binds, as the record gives it.
    pub binding: Option<String>,
    pub source: String,
}

impl PointRow {
    /// "kernel variant, N thr".
    pub fn series_name(&self) -> String {
        let mut s = self.kernel.clone();
        if !self.variant.is_empty() {
            s.push(' ');
            s.push_str(&self.variant);
        }
        if let Some(t) = self.threads {
            s.push_str(&format!(", {t} thr"));
        }
        s
    }
}

/// A record that cannot be a point on a log-log chart, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub kernel: String,
    pub variant: String,
    pub reason: String,
}

/// Everything the chart shows, as data, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RooflineData {
    pub machine: String,
    /// Threads the ceilings were measured with.
    pub threads: usize,
    /// The profile file the roofs come from.
    pub profile: String,
    /// Whether `calibrate` measured the profile's figures (false for a
    /// profile written by hand from nominal ones).
    pub measured: bool,
    /// When the profile was calibrated (RFC 3339).
    pub calibration_date: String,
    /// The version of `calibrate` that wrote the profile.
    pub calibrated_with: String,
    /// The version of this tool.
    pub tool_version: String,
    pub ceilings: Vec<CeilingRow>,
    pub ridge: Ridge,
    pub points: Vec<PointRow>,
    pub skipped: Vec<Skipped>,
    pub notes: Vec<String>,
}

/// Which of the profile's ceilings to draw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Only ceilings of this precision ("f64", "f32"); all when None.
    pub precision: Option<String>,
    /// One-thread ceilings and bandwidths instead of all-threads ones.
    pub one_thread: bool,
    /// Only these roofs (names as the CSV lists them); all when None.
    pub ceilings: Option<Vec<String>>,
}

/// What the chart is drawn from.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub profile: &'a Profile,
    /// The profile's file, for the provenance.
    pub profile_file: &'a str,
    pub records: &'a [Record],
    pub points: &'a [UserPoint],
    /// `OLD=NEW` renamings of points (`--labels`).
    pub labels: &'a [String],
}

/// The model of the selected roofs, and its DRAM (or slowest) level.
fn model(r: &Roofs) -> Result<(Roofline, Ceiling), BadInput> {
    let ceil = |v: &[Roof]| -> Vec<Ceiling> {
        v.iter()
            .map(|c| Ceiling {
                name: c.name.clone(),
                value: c.value.0,
            })
            .collect()
    };
    let roof = Roofline::new(ceil(&r.compute), ceil(&r.memory))
        .map_err(|e| BadInput(format!("the profile's ceilings are unusable: {e}")))?;
    let dram = roof
        .memory
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case("dram"))
        .or(roof.memory.last())
        .ok_or_else(|| BadInput("the profile has no memory bandwidth".into()))?
        .clone();
    Ok((roof, dram))
}

/// The rows of the roofs, bandwidths first.
fn ceiling_rows(r: &Roofs, roof: &Roofline, dram: &Ceiling) -> Vec<CeilingRow> {
    let row = |kind, c: &Ceiling, src: &Roof, unit, threads, ridge_ai| CeilingRow {
        kind,
        name: src.name.clone(),
        label: format!("{} {}", src.name, Si(c.value, unit)),
        value: c.value,
        lo: src.value.1,
        hi: src.value.2,
        unit,
        threads,
        ridge_ai,
        method: src.method.clone(),
    };
    let mut rows: Vec<CeilingRow> = roof
        .memory
        .iter()
        .zip(&r.memory)
        .map(|(c, src)| {
            let ridge = roof.ridge_ai(c);
            row(
                CeilingKind::Bandwidth,
                c,
                src,
                "B/s",
                r.memory_threads,
                ridge,
            )
        })
        .collect();
    rows.extend(roof.compute.iter().zip(&r.compute).map(|(c, src)| {
        let ridge = c.value / dram.value;
        row(
            CeilingKind::Compute,
            c,
            src,
            "FLOP/s",
            r.compute_threads,
            ridge,
        )
    }));
    rows
}

/// Why a record cannot be a point, if it cannot.
fn unplottable(r: &Record) -> Option<String> {
    let exact = models::units::exact;
    if r.flops < 0.0 || !r.flops.is_finite() {
        Some(format!(
            "flops = {} is not a count of operations",
            exact(r.flops)
        ))
    } else if r.bytes < 0.0 || !r.bytes.is_finite() {
        Some(format!(
            "bytes = {} is not a count of bytes",
            exact(r.bytes)
        ))
    } else if r.flops == 0.0 {
        Some("no floating-point work (flops = 0): not on a Roofline".into())
    } else if r.bytes == 0.0 {
        Some("no memory traffic (bytes = 0): its intensity is infinite".into())
    } else if !(r.measured_s > 0.0 && r.measured_s.is_finite()) {
        Some(format!(
            "measured_s = {} is not a positive time",
            exact(r.measured_s)
        ))
    } else if let Some((lo, hi)) = r.measured_ci_s.filter(|&(lo, hi)| {
        !(lo > 0.0 && lo <= r.measured_s && r.measured_s <= hi && hi.is_finite())
    }) {
        Some(format!(
            "measured_ci_s = [{}, {}] is no interval around measured_s = {}",
            exact(lo),
            exact(hi),
            exact(r.measured_s)
        ))
    } else {
        None
    }
}

/// A record as a point: AI = flops / bytes, P = flops / time.
fn record_point(r: &Record, attainable: f64, ai: f64) -> PointRow {
    let measured = r.flops / r.measured_s;
    // unplottable() let only lo ≤ measured ≤ hi through.
    let interval = r.measured_ci_s.map(|(lo, hi)| (r.flops / hi, r.flops / lo));
    let mut p = PointRow {
        name: String::new(),
        kernel: r.kernel.clone(),
        variant: r.variant.clone(),
        threads: r.threads,
        size: r.size.clone(),
        ai,
        measured_flops: measured,
        measured_flops_lo: interval.map(|i| i.0),
        measured_flops_hi: interval.map(|i| i.1),
        predicted_flops: r
            .predicted_s
            .filter(|p| *p > 0.0 && p.is_finite())
            .map(|p| r.flops / p),
        attainable_flops: attainable,
        binding: r.binding.clone(),
        source: r.source.clone(),
    };
    p.name = p.series_name();
    p
}

/// A point the user gave, as given.
fn user_point(u: &UserPoint, attainable: f64) -> PointRow {
    let mut p = PointRow {
        name: String::new(),
        kernel: u.name.clone(),
        variant: String::new(),
        threads: u.threads,
        size: String::new(),
        ai: u.ai,
        measured_flops: u.flops,
        measured_flops_lo: u.interval.map(|i| i.0),
        measured_flops_hi: u.interval.map(|i| i.1),
        predicted_flops: None,
        attainable_flops: attainable,
        binding: None,
        source: u.source.clone(),
    };
    p.name = p.series_name();
    p
}

/// The records' and the user's points, and the records that cannot be.
fn points(
    inputs: &Inputs,
    roof: &Roofline,
    dram: &Ceiling,
) -> Result<(Vec<PointRow>, Vec<Skipped>), BadInput> {
    let attainable = |ai: f64, source: &str| {
        roof.attainable(ai, dram)
            .map(|a| a.flops)
            .map_err(|e| BadInput(format!("{source}: {e}")))
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for r in inputs.records {
        if let Some(reason) = unplottable(r) {
            skipped.push(Skipped {
                kernel: r.kernel.clone(),
                variant: r.variant.clone(),
                reason,
            });
            continue;
        }
        let ai = r.flops / r.bytes;
        out.push(record_point(r, attainable(ai, &r.source)?, ai));
    }
    for u in inputs.points {
        out.push(user_point(u, attainable(u.ai, &u.source)?));
    }
    Ok((out, skipped))
}

/// Builds the chart data from a profile, records and the user's points.
pub fn build(inputs: &Inputs, sel: &Selection) -> Result<RooflineData, BadInput> {
    let profile = inputs.profile;
    let mut notes = Vec::new();
    let r = roofs(profile, sel, &mut notes)?;
    let (roof, dram) = model(&r)?;
    let peak = roof.peak().clone();
    let (points, skipped) = points(inputs, &roof, &dram)?;
    let prov = &profile.provenance;
    let mut d = RooflineData {
        machine: prov.cpu_model.clone(),
        threads: r.memory_threads,
        profile: inputs.profile_file.to_string(),
        measured: prov.measured(),
        calibration_date: prov.date.clone(),
        calibrated_with: prov.tool_version.clone(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        ceilings: ceiling_rows(&r, &roof, &dram),
        ridge: Ridge {
            ai: roof.ridge_ai(&dram),
            flops: peak.value,
            memory: dram.name.clone(),
            compute: peak.name.clone(),
        },
        points,
        skipped,
        notes,
    };
    relabel(&mut d, inputs.labels)?;
    super::checks::check(&mut d, inputs.records);
    Ok(d)
}

/// Renames points: each `OLD=NEW` (from `--labels`) gives the point whose
/// name (as the table lists it) or kernel is OLD the name NEW.
fn relabel(d: &mut RooflineData, labels: &[String]) -> Result<(), BadInput> {
    for spec in labels {
        let Some((old, new)) = spec.split_once('=') else {
            return Err(BadInput(format!(
                "--labels '{spec}': expected OLD=NEW, e.g. 'fusion fused, 2 thr=fused loop'"
            )));
        };
        let (old, new) = (old.trim(), new.trim());
        if new.is_empty() {
            return Err(BadInput(format!(
                "--labels '{spec}': the new name is empty; leave the point's name as it is by dropping this --labels"
            )));
        }
        let mut hit = false;
        for p in &mut d.points {
            if p.name == old || p.series_name() == old || p.kernel == old {
                p.name = new.to_string();
                hit = true;
            }
        }
        if !hit {
            let names: Vec<&str> = d.points.iter().map(|p| p.name.as_str()).collect();
            return Err(BadInput(format!(
                "--labels: no point '{old}'; the points are: {}",
                if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(flops: f64, bytes: f64, measured_s: f64, ci: Option<(f64, f64)>) -> Record {
        Record {
            kernel: "k".into(),
            variant: "v".into(),
            threads: Some(1),
            size: "1".into(),
            measured_s,
            measured_ci_s: ci,
            predicted_s: None,
            binding: None,
            flops,
            bytes,
            cpu_model: None,
            profile: None,
            date: None,
            source: "test".into(),
        }
    }

    #[test]
    fn only_sound_records_become_points() {
        assert_eq!(
            unplottable(&record(1e6, 1e6, 1e-3, Some((0.9e-3, 1.2e-3)))),
            None
        );
        assert_eq!(unplottable(&record(1e6, 1e6, 1e-3, None)), None);
        let why = |r| unplottable(&r).unwrap();
        assert!(why(record(1e6, -5.0, 1e-3, None)).contains("bytes = -5 is not"));
        assert!(why(record(-1.0, 1e6, 1e-3, None)).contains("flops = -1 is not"));
        assert!(why(record(1e6, 0.0, 1e-3, None)).contains("intensity is infinite"));
        assert!(why(record(1e6, 1e6, 0.0, None)).contains("not a positive time"));
        // An interval that is inverted, or misses the time it is of.
        assert!(why(record(1e6, 1e6, 1e-3, Some((1.0, 0.5)))).contains("no interval around"));
        assert!(why(record(1e6, 1e6, 1e-3, Some((2e-3, 3e-3)))).contains("no interval around"));
    }
}
