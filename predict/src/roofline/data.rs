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

use models::profile::{CeilingKernel, ComputeCeiling, MemoryLevel, Profile};
use models::roofline::{Ceiling, Roofline};
use models::units::Si;
use models::Estimate;
use serde::Serialize;

use super::records::Record;
use crate::chart::output::Num;
use crate::BadInput;

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

/// One kernel variant on the chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointRow {
    pub kernel: String,
    pub variant: String,
    pub threads: Option<u64>,
    pub size: String,
    /// flop/byte.
    pub ai: f64,
    pub measured_flops: f64,
    pub measured_flops_lo: f64,
    pub measured_flops_hi: f64,
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

/// Everything the chart shows, as data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RooflineData {
    pub machine: String,
    /// Threads the ceilings were measured with.
    pub threads: usize,
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
}

/// Estimate from a profile figure.
fn bounds(e: &Estimate) -> (f64, f64, f64) {
    (e.point, e.lo.min(e.point), e.hi.max(e.point))
}

/// "avx512" -> "AVX-512", "avx2" -> "AVX2", "scalar" -> "scalar".
fn isa_label(isa: &str) -> String {
    match isa.to_ascii_lowercase().as_str() {
        "avx512" | "avx512f" | "avx-512" => "AVX-512".into(),
        "scalar" => "scalar".into(),
        other => other.to_ascii_uppercase(),
    }
}

fn compute_name(c: &ComputeCeiling) -> String {
    match c.kernel {
        CeilingKernel::Dgemm => format!("{} dgemm", c.precision),
        CeilingKernel::Registers => format!(
            "{} {} {}",
            c.precision,
            isa_label(&c.isa),
            if c.fma { "FMA" } else { "mul+add" }
        ),
    }
}

fn bandwidth_of(l: &MemoryLevel, one_thread: bool) -> Option<&Estimate> {
    if one_thread {
        l.bandwidth_1t_Bps.as_ref()
    } else {
        l.bandwidth_Bps.as_ref()
    }
}

/// Builds the chart data from a profile and records.
pub fn build(
    profile: &Profile,
    records: &[Record],
    sel: &Selection,
) -> Result<RooflineData, BadInput> {
    let mut notes = Vec::new();
    let all_threads = profile.provenance.threads.max(1);
    let want_threads = if sel.one_thread { 1 } else { all_threads };

    // Bandwidth ceilings, nearest level first.
    let mut memory: Vec<(String, (f64, f64, f64))> = profile
        .levels
        .iter()
        .filter_map(|l| bandwidth_of(l, sel.one_thread).map(|b| (l.name.clone(), bounds(b))))
        .filter(|(_, b)| b.0 > 0.0 && b.0.is_finite())
        .collect();
    for l in &profile.levels {
        if bandwidth_of(l, sel.one_thread).is_none() {
            notes.push(format!(
                "level {} has no measured bandwidth; no ceiling drawn for it",
                l.name
            ));
        }
    }
    if memory.is_empty() {
        let stream = if sel.one_thread {
            profile.summary.stream_triad_1t_Bps
        } else {
            profile.summary.stream_triad_Bps
        };
        match stream {
            Some(b) if b > 0.0 => {
                notes.push(
                    "no per-level bandwidths in the profile: the DRAM ceiling is the STREAM triad"
                        .into(),
                );
                memory.push(("DRAM".into(), (b, b, b)));
            }
            _ => return Err(BadInput(
                "the profile has no memory bandwidth; run `calibrate --only stream` to measure it"
                    .into(),
            )),
        }
    }

    // Compute ceilings at the wanted thread count (or the nearest measured).
    let candidates: Vec<&ComputeCeiling> = profile
        .ceilings
        .iter()
        .filter(|c| {
            sel.precision
                .as_deref()
                .map_or(true, |p| c.precision.eq_ignore_ascii_case(p))
        })
        .collect();
    let threads = candidates
        .iter()
        .map(|c| c.threads)
        .min_by_key(|t| t.abs_diff(want_threads))
        .unwrap_or(want_threads);
    let mut compute: Vec<(String, (f64, f64, f64))> = candidates
        .iter()
        .filter(|c| c.threads == threads && c.flops.point > 0.0)
        .map(|c| (compute_name(c), bounds(&c.flops)))
        .collect();
    if !candidates.is_empty() && threads != want_threads {
        notes.push(format!(
            "the profile has no compute ceilings on {want_threads} thread(s); those on {threads} are drawn"
        ));
    }
    if compute.is_empty() {
        let peak = if sel.one_thread {
            profile.summary.peak_flops_f64_1t
        } else {
            profile.summary.peak_flops_f64
        };
        match peak {
            Some(p) if p > 0.0 => compute.push(("f64 peak".into(), (p, p, p))),
            _ => {
                let what = sel
                    .precision
                    .as_deref()
                    .map_or(String::new(), |p| format!(" for {p}"));
                return Err(BadInput(format!(
                    "the profile has no compute ceiling{what}; run `calibrate --only flops` to measure them"
                )));
            }
        }
    }
    compute.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    dedupe_names(&mut compute);

    let roof = Roofline::new(
        compute
            .iter()
            .map(|(n, v)| Ceiling {
                name: n.clone(),
                value: v.0,
            })
            .collect(),
        memory
            .iter()
            .map(|(n, v)| Ceiling {
                name: n.clone(),
                value: v.0,
            })
            .collect(),
    )
    .map_err(|e| BadInput(format!("the profile's ceilings are unusable: {e}")))?;
    let dram = roof
        .memory
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case("dram"))
        .unwrap_or_else(|| roof.memory.last().expect("at least one level"))
        .clone();
    let peak = roof.peak().clone();

    let mut ceilings = Vec::new();
    for (c, (name, (_, lo, hi))) in roof.memory.iter().zip(&memory) {
        ceilings.push(CeilingRow {
            kind: CeilingKind::Bandwidth,
            name: name.clone(),
            label: format!("{name} {}", Si(c.value, "B/s")),
            value: c.value,
            lo: *lo,
            hi: *hi,
            unit: "B/s",
            threads: want_threads,
            ridge_ai: roof.ridge_ai(c),
        });
    }
    for (c, (name, (_, lo, hi))) in roof.compute.iter().zip(&compute) {
        ceilings.push(CeilingRow {
            kind: CeilingKind::Compute,
            name: name.clone(),
            label: format!("{name} {}", Si(c.value, "FLOP/s")),
            value: c.value,
            lo: *lo,
            hi: *hi,
            unit: "FLOP/s",
            threads,
            ridge_ai: c.value / dram.value,
        });
    }

    let mut points = Vec::new();
    let mut skipped = Vec::new();
    for r in records {
        let skip = |reason: String| Skipped {
            kernel: r.kernel.clone(),
            variant: r.variant.clone(),
            reason,
        };
        if !(r.flops > 0.0 && r.flops.is_finite()) {
            skipped.push(skip(
                "no floating-point work (flops = 0): not on a Roofline".into(),
            ));
            continue;
        }
        if !(r.bytes > 0.0 && r.bytes.is_finite()) {
            skipped.push(skip(
                "no memory traffic (bytes = 0): its intensity is infinite".into(),
            ));
            continue;
        }
        if !(r.measured_s > 0.0 && r.measured_s.is_finite()) {
            skipped.push(skip(format!(
                "measured_s = {} is not a positive time",
                r.measured_s
            )));
            continue;
        }
        let ai = r.flops / r.bytes;
        let measured = r.flops / r.measured_s;
        let (lo, hi) = match r.measured_ci_s {
            Some((a, b)) if a > 0.0 && b > 0.0 => (r.flops / a.max(b), r.flops / a.min(b)),
            _ => (measured, measured),
        };
        let predicted = r
            .predicted_s
            .filter(|p| *p > 0.0 && p.is_finite())
            .map(|p| r.flops / p);
        let attainable = roof
            .attainable(ai, &dram)
            .map_err(|e| BadInput(format!("{}: {e}", r.source)))?
            .flops;
        points.push(PointRow {
            kernel: r.kernel.clone(),
            variant: r.variant.clone(),
            threads: r.threads,
            size: r.size.clone(),
            ai,
            measured_flops: measured,
            measured_flops_lo: lo.min(measured),
            measured_flops_hi: hi.max(measured),
            predicted_flops: predicted,
            attainable_flops: attainable,
            binding: r.binding.clone(),
            source: r.source.clone(),
        });
    }
    for p in &points {
        if p.measured_flops > 1.05 * peak.value {
            notes.push(format!(
                "{} runs at {}, above the peak {} of the profile: check its flop count, or whether the profile's ceilings are for fewer threads",
                p.series_name(),
                Si(p.measured_flops, "FLOP/s"),
                Si(peak.value, "FLOP/s")
            ));
        } else if p.measured_flops > 1.05 * p.attainable_flops {
            notes.push(format!(
                "{} runs at {} above its DRAM roof ({}): part of its data comes from a cache, or its mix of loads and stores streams faster than the roof's read bandwidth",
                p.series_name(),
                Si(p.measured_flops, "FLOP/s"),
                Si(p.attainable_flops, "FLOP/s")
            ));
        }
    }

    Ok(RooflineData {
        machine: profile.provenance.cpu_model.clone(),
        threads: want_threads,
        ridge: Ridge {
            ai: roof.ridge_ai(&dram),
            flops: peak.value,
            memory: dram.name.clone(),
            compute: peak.name.clone(),
        },
        ceilings,
        points,
        skipped,
        notes,
    })
}

/// Two ceilings with one name get " (2)", " (3)" appended.
fn dedupe_names(list: &mut [(String, (f64, f64, f64))]) {
    let names: Vec<String> = list.iter().map(|(n, _)| n.clone()).collect();
    for (i, item) in list.iter_mut().enumerate() {
        let before = names[..i].iter().filter(|n| **n == names[i]).count();
        if before > 0 {
            item.0 = format!("{} ({})", names[i], before + 1);
        }
    }
}

/// The chart data as one CSV table: a `record` column says whether a row
/// is a `ceiling`, the `ridge` or a `point`; the other columns are empty
/// where they do not apply. Numbers are in SI units (B/s, FLOP/s,
/// flop/byte), written with the shortest exact representation.
pub fn to_csv(d: &RooflineData) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut row = |r: CsvRow| w.serialize(r).expect("writing to memory");
    for c in &d.ceilings {
        row(CsvRow {
            record: "ceiling",
            kind: Some(match c.kind {
                CeilingKind::Bandwidth => "bandwidth",
                CeilingKind::Compute => "compute",
            }),
            name: Some(c.name.clone()),
            label: Some(c.label.clone()),
            value: Some(Num(c.value)),
            value_lo: Some(Num(c.lo)),
            value_hi: Some(Num(c.hi)),
            unit: Some(c.unit),
            threads: Some(c.threads as u64),
            ridge_ai_flop_per_byte: Some(Num(c.ridge_ai)),
            ..CsvRow::default()
        });
    }
    row(CsvRow {
        record: "ridge",
        name: Some(format!("{} x {}", d.ridge.memory, d.ridge.compute)),
        label: Some(format!("ridge {}", ai_text(d.ridge.ai))),
        value: Some(Num(d.ridge.flops)),
        unit: Some("FLOP/s"),
        threads: Some(d.threads as u64),
        ridge_ai_flop_per_byte: Some(Num(d.ridge.ai)),
        ai_flop_per_byte: Some(Num(d.ridge.ai)),
        ..CsvRow::default()
    });
    for p in &d.points {
        row(CsvRow {
            record: "point",
            name: Some(p.series_name()),
            unit: Some("FLOP/s"),
            threads: p.threads,
            kernel: Some(p.kernel.clone()),
            variant: Some(p.variant.clone()),
            size: Some(p.size.clone()),
            ai_flop_per_byte: Some(Num(p.ai)),
            measured_flops: Some(Num(p.measured_flops)),
            measured_flops_lo: Some(Num(p.measured_flops_lo)),
            measured_flops_hi: Some(Num(p.measured_flops_hi)),
            predicted_flops: p.predicted_flops.map(Num),
            attainable_flops: Some(Num(p.attainable_flops)),
            binding: p.binding.clone(),
            ..CsvRow::default()
        });
    }
    String::from_utf8(w.into_inner().expect("in-memory writer")).expect("UTF-8 fields")
}

/// One row of the chart's CSV: a ceiling, the ridge or a kernel point; the
/// columns its kind does not use stay empty.
#[derive(Debug, Default, Serialize)]
struct CsvRow {
    record: &'static str,
    kind: Option<&'static str>,
    name: Option<String>,
    label: Option<String>,
    value: Option<Num>,
    value_lo: Option<Num>,
    value_hi: Option<Num>,
    unit: Option<&'static str>,
    threads: Option<u64>,
    ridge_ai_flop_per_byte: Option<Num>,
    kernel: Option<String>,
    variant: Option<String>,
    size: Option<String>,
    ai_flop_per_byte: Option<Num>,
    measured_flops: Option<Num>,
    measured_flops_lo: Option<Num>,
    measured_flops_hi: Option<Num>,
    predicted_flops: Option<Num>,
    attainable_flops: Option<Num>,
    binding: Option<String>,
}

/// An intensity as text: "5.2 flop/B".
pub fn ai_text(ai: f64) -> String {
    let digits = if ai >= 100.0 {
        0
    } else if ai >= 10.0 {
        1
    } else if ai >= 1.0 {
        2
    } else {
        3
    };
    format!("{ai:.digits$} flop/B")
}

/// The human table of `predict roofline`.
pub fn to_text(d: &RooflineData) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Roofline of {} ({} thread{})\n\n",
        if d.machine.is_empty() {
            "this machine"
        } else {
            &d.machine
        },
        d.threads,
        if d.threads == 1 { "" } else { "s" }
    ));
    s.push_str(&format!(
        "{:<10} {:<22} {:>16} {:>26} {:>12}\n",
        "ceiling", "name", "value", "95% interval", "ridge AI"
    ));
    for c in &d.ceilings {
        let kind = match c.kind {
            CeilingKind::Bandwidth => "bandwidth",
            CeilingKind::Compute => "compute",
        };
        s.push_str(&format!(
            "{:<10} {:<22} {:>16} {:>26} {:>12}\n",
            kind,
            c.name,
            Si(c.value, c.unit).to_string(),
            format!("{} – {}", Si(c.lo, c.unit), Si(c.hi, c.unit)),
            ai_text(c.ridge_ai)
        ));
    }
    s.push_str(&format!(
        "\nridge point: {} at {} ({} meets {})\n",
        ai_text(d.ridge.ai),
        Si(d.ridge.flops, "FLOP/s"),
        d.ridge.memory,
        d.ridge.compute
    ));
    if !d.points.is_empty() {
        s.push_str(&format!(
            "\n{:<30} {:>14} {:>15} {:>27} {:>15} {:>15}  {}\n",
            "kernel", "AI", "measured", "95% interval", "predicted", "roof (DRAM)", "binding"
        ));
        for p in &d.points {
            s.push_str(&format!(
                "{:<30} {:>14} {:>15} {:>27} {:>15} {:>15}  {}\n",
                p.series_name(),
                ai_text(p.ai),
                Si(p.measured_flops, "FLOP/s").to_string(),
                format!(
                    "{} – {}",
                    Si(p.measured_flops_lo, "FLOP/s"),
                    Si(p.measured_flops_hi, "FLOP/s")
                ),
                p.predicted_flops
                    .map_or("—".to_string(), |v| Si(v, "FLOP/s").to_string()),
                Si(p.attainable_flops, "FLOP/s").to_string(),
                p.binding.as_deref().unwrap_or("—")
            ));
        }
    }
    for k in &d.skipped {
        s.push_str(&format!(
            "not on the chart: {} {}: {}\n",
            k.kernel, k.variant, k.reason
        ));
    }
    for n in &d.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}
