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

use models::profile::Profile;
use models::units::Si;
use serde::Serialize;
use serde_json::Value;

use crate::chart::figure::{
    palette, Axis, Color, Dash, Figure, Item, LegendEntry, Panel, Scale, Stroke, Symbol, TickFormat,
};
use crate::chart::output::Num;
use crate::chart::ticks::binary_bytes;
use crate::BadInput;

/// One measured working set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    pub working_set_bytes: f64,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Latency or bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Quantity {
    Latency,
    Bandwidth,
}

/// One curve of the mountain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    pub quantity: Quantity,
    pub name: String,
    pub threads: usize,
    /// Page size of the buffer ("4KiB", "2MiB"), when known.
    pub pages: Option<String>,
    /// STREAM kernel of a bandwidth curve.
    pub kernel: Option<String>,
    /// "s" or "B/s".
    pub unit: &'static str,
    pub points: Vec<CurvePoint>,
}

/// A detected memory level.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelMark {
    pub name: String,
    /// Largest working set the level serves, bytes (None for DRAM).
    pub size_bytes: Option<f64>,
    pub latency_s: Option<f64>,
    pub bandwidth_Bps: Option<f64>,
}

/// Everything the mountain chart shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MountainData {
    pub machine: String,
    pub curves: Vec<Curve>,
    pub levels: Vec<LevelMark>,
    pub notes: Vec<String>,
}

/// (point, lo, hi) of a figure written as a number or as a summary object
/// (`median`/`point`, `ci_lo`/`lo`, `ci_hi`/`hi`).
fn stat(v: &Value) -> Option<(f64, f64, f64)> {
    if let Some(x) = v.as_f64() {
        return Some((x, x, x));
    }
    let o = v.as_object()?;
    let get = |keys: &[&str]| keys.iter().find_map(|k| o.get(*k).and_then(Value::as_f64));
    let p = get(&["median", "point", "value"])?;
    let lo = get(&["ci_lo", "lo"]).unwrap_or(p);
    let hi = get(&["ci_hi", "hi"]).unwrap_or(p);
    Some((p, lo.min(p), hi.max(p)))
}

fn sorted(mut points: Vec<CurvePoint>) -> Vec<CurvePoint> {
    points.sort_by(|a, b| a.working_set_bytes.total_cmp(&b.working_set_bytes));
    points.dedup_by(|a, b| a.working_set_bytes == b.working_set_bytes);
    points
}

fn latency_curves(section: &Value) -> Vec<Curve> {
    let Some(points) = section.get("points").and_then(Value::as_array) else {
        return Vec::new();
    };
    // One curve per page size, in order of first appearance.
    let mut pages: Vec<String> = Vec::new();
    for p in points {
        let pg = p
            .get("pages")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !pages.contains(&pg) {
            pages.push(pg);
        }
    }
    pages
        .into_iter()
        .filter_map(|pg| {
            let pts: Vec<CurvePoint> = points
                .iter()
                .filter(|p| p.get("pages").and_then(Value::as_str).unwrap_or("") == pg)
                .filter_map(|p| {
                    let ws = p.get("size_bytes")?.as_f64()?;
                    let (v, lo, hi) = stat(p.get("latency_s")?)?;
                    (ws > 0.0 && v > 0.0).then_some(CurvePoint {
                        working_set_bytes: ws,
                        value: v,
                        lo,
                        hi,
                    })
                })
                .collect();
            (pts.len() >= 2).then(|| Curve {
                quantity: Quantity::Latency,
                name: if pg.is_empty() {
                    "latency, 1 thread".into()
                } else {
                    format!("latency, {} pages", pretty_pages(&pg))
                },
                threads: 1,
                pages: (!pg.is_empty()).then_some(pg),
                kernel: None,
                unit: "s",
                points: sorted(pts),
            })
        })
        .collect()
}

/// "4KiB" -> "4 KiB".
fn pretty_pages(p: &str) -> String {
    let split = p.find(|c: char| !c.is_ascii_digit()).unwrap_or(p.len());
    format!("{} {}", &p[..split], &p[split..])
        .trim()
        .to_string()
}

fn bandwidth_curves(section: &Value) -> Vec<Curve> {
    let Some(sweeps) = section.get("sweeps").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for sweep in sweeps {
        let threads = sweep.get("threads").and_then(Value::as_u64).unwrap_or(1) as usize;
        let Some(points) = sweep.get("points").and_then(Value::as_array) else {
            continue;
        };
        let kernel_of = |p: &Value| {
            p.get("kernel")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let kernels: Vec<String> = points.iter().map(kernel_of).collect();
        let kernel = ["load", "read", "triad"]
            .iter()
            .find(|k| kernels.iter().any(|x| x == *k))
            .map(|k| k.to_string())
            .or_else(|| kernels.first().cloned())
            .unwrap_or_default();
        let pts: Vec<CurvePoint> = points
            .iter()
            .filter(|p| kernel_of(p) == kernel)
            .filter_map(|p| {
                let ws = p
                    .get("per_thread_bytes")
                    .or_else(|| p.get("total_bytes"))?
                    .as_f64()?;
                let (v, lo, hi) = stat(p.get("bandwidth_Bps")?)?;
                (ws > 0.0 && v > 0.0).then_some(CurvePoint {
                    working_set_bytes: ws,
                    value: v,
                    lo,
                    hi,
                })
            })
            .collect();
        if pts.len() >= 2 {
            let what = if kernel == "load" || kernel == "read" {
                "read bandwidth".to_string()
            } else {
                format!("{kernel} bandwidth")
            };
            out.push(Curve {
                quantity: Quantity::Bandwidth,
                name: format!(
                    "{what}, {threads} thread{}",
                    if threads == 1 { "" } else { "s" }
                ),
                threads,
                pages: None,
                kernel: (!kernel.is_empty()).then_some(kernel),
                unit: "B/s",
                points: sorted(pts),
            });
        }
    }
    out.sort_by_key(|c| c.threads);
    out
}

/// The mountain's curves and levels from a profile's raw sections.
pub fn build(profile: &Profile) -> Result<MountainData, BadInput> {
    let mut curves = Vec::new();
    let mut notes = Vec::new();
    match profile.sections.get("latency") {
        Some(s) => curves.extend(latency_curves(s)),
        None => notes.push("no latency curve: run `calibrate --only latency` to add it".into()),
    }
    match profile.sections.get("stream") {
        Some(s) => curves.extend(bandwidth_curves(s)),
        None => notes.push("no bandwidth curve: run `calibrate --only stream` to add it".into()),
    }
    if curves.is_empty() {
        return Err(BadInput(
            "the profile has no latency or bandwidth curves to draw; run `calibrate --only latency,stream` (without --quick for the full sweep)".into(),
        ));
    }
    let levels = profile
        .levels
        .iter()
        .map(|l| LevelMark {
            name: l.name.clone(),
            size_bytes: l.size_bytes,
            latency_s: l.latency_s.map(|e| e.point),
            bandwidth_Bps: l.bandwidth_1t_Bps.map(|e| e.point),
        })
        .collect();
    Ok(MountainData {
        machine: profile.provenance.cpu_model.clone(),
        curves,
        levels,
        notes,
    })
}

/// The two-panel chart: latency on top, bandwidth below, levels shaded.
pub fn figure(d: &MountainData, title: Option<String>) -> Figure {
    let all = || d.curves.iter().flat_map(|c| c.points.iter());
    let ws_lo = all()
        .map(|p| p.working_set_bytes)
        .fold(f64::INFINITY, f64::min);
    let ws_hi = all().map(|p| p.working_set_bytes).fold(0.0, f64::max);
    let (x_min, x_max) = (ws_lo / 1.25, ws_hi * 1.25);
    let x_axis =
        |title: &str| Axis::new(title, Scale::Log2, x_min, x_max).format(TickFormat::BinaryBytes);
    let x_title = "Working set per thread";

    // Level spans: [previous boundary, this level's size], DRAM to the end.
    let mut spans = Vec::new();
    let mut start = x_min;
    for (i, l) in d.levels.iter().enumerate() {
        let end = l.size_bytes.unwrap_or(x_max).min(x_max);
        if end > start {
            let label = match l.size_bytes {
                Some(s) => format!("{} {}", l.name, binary_bytes(s)),
                None => l.name.clone(),
            };
            spans.push((start, end, i, label));
            start = end;
        }
    }
    let span_items = |labelled: bool| -> Vec<Item> {
        spans
            .iter()
            .map(|(a, b, i, label)| Item::VSpan {
                x0: *a,
                x1: *b,
                color: if i % 2 == 0 {
                    Color::rgb(236, 236, 236)
                } else {
                    Color::WHITE
                },
                label: labelled.then(|| label.clone()),
            })
            .collect()
    };

    let mut legend = Vec::new();
    let mut panels = Vec::new();
    for (q, y_title, unit_div, first) in [
        (Quantity::Latency, "Latency [ns]", 1e-9, true),
        (Quantity::Bandwidth, "Bandwidth [GB/s]", 1e9, false),
    ] {
        let curves: Vec<&Curve> = d.curves.iter().filter(|c| c.quantity == q).collect();
        if curves.is_empty() {
            continue;
        }
        let labelled = first || panels.is_empty();
        let mut items = span_items(labelled);
        let lo = curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.lo))
            .fold(f64::INFINITY, f64::min);
        let hi = curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.hi))
            .fold(0.0, f64::max);
        let (y_min, y_max) = Axis::log_range(lo, hi, 1.3, 10.0, false);
        // Room at the top for the level labels.
        let y_max = if labelled {
            y_max * (y_max / y_min).powf(0.18)
        } else {
            y_max
        };
        for c in &curves {
            let k = d
                .curves
                .iter()
                .position(|x| std::ptr::eq(x, *c))
                .unwrap_or(0);
            let color = palette(k);
            let xs: Vec<f64> = c.points.iter().map(|p| p.working_set_bytes).collect();
            items.push(Item::Band {
                x: xs.clone(),
                lo: c.points.iter().map(|p| p.lo).collect(),
                hi: c.points.iter().map(|p| p.hi).collect(),
                color: color.with_alpha(0.25),
            });
            items.push(Item::Line {
                points: c
                    .points
                    .iter()
                    .map(|p| (p.working_set_bytes, p.value))
                    .collect(),
                stroke: Stroke::new(color, 1.0, Dash::Solid),
                label: None,
            });
            legend.push(LegendEntry {
                symbol: Symbol::Line(Stroke::new(color, 1.0, Dash::Solid)),
                text: c.name.clone(),
            });
        }
        panels.push(Panel {
            x: x_axis(x_title),
            y: Axis::new(y_title, Scale::Log10, y_min, y_max)
                .format(TickFormat::Number { divisor: unit_div }),
            aspect: 0.42,
            items,
        });
    }
    legend.push(LegendEntry {
        symbol: Symbol::Patch(Color::rgb(236, 236, 236)),
        text: "detected levels (shaded by turns)".into(),
    });
    legend.push(LegendEntry {
        symbol: Symbol::Patch(palette(0).with_alpha(0.25)),
        text: "95% interval".into(),
    });
    Figure {
        title,
        width_in: 3.5,
        legend,
        panels,
    }
}

/// One CSV table: rows of `record` = latency | bandwidth | level.
pub fn to_csv(d: &MountainData) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut row = |r: CsvRow| w.serialize(r).expect("writing to memory");
    for c in &d.curves {
        let record = match c.quantity {
            Quantity::Latency => "latency",
            Quantity::Bandwidth => "bandwidth",
        };
        for p in &c.points {
            row(CsvRow {
                record,
                curve: Some(c.name.clone()),
                threads: Some(c.threads),
                pages: Some(c.pages.clone().unwrap_or_default()),
                kernel: Some(c.kernel.clone().unwrap_or_default()),
                working_set_bytes: Some(Num(p.working_set_bytes)),
                value: Some(Num(p.value)),
                lo: Some(Num(p.lo)),
                hi: Some(Num(p.hi)),
                unit: Some(c.unit.to_string()),
                ..CsvRow::default()
            });
        }
    }
    for l in &d.levels {
        row(CsvRow {
            record: "level",
            level: Some(l.name.clone()),
            level_size_bytes: l.size_bytes.map(Num),
            level_latency_s: l.latency_s.map(Num),
            level_bandwidth_1t_Bps: l.bandwidth_Bps.map(Num),
            ..CsvRow::default()
        });
    }
    String::from_utf8(w.into_inner().expect("in-memory writer")).expect("UTF-8 fields")
}

/// One row of the mountain CSV; the columns its kind does not use stay
/// empty.
#[derive(Debug, Default, Serialize)]
#[allow(non_snake_case)]
struct CsvRow {
    record: &'static str,
    curve: Option<String>,
    threads: Option<usize>,
    pages: Option<String>,
    kernel: Option<String>,
    working_set_bytes: Option<Num>,
    value: Option<Num>,
    lo: Option<Num>,
    hi: Option<Num>,
    unit: Option<String>,
    level: Option<String>,
    level_size_bytes: Option<Num>,
    level_latency_s: Option<Num>,
    level_bandwidth_1t_Bps: Option<Num>,
}

/// The human summary of `predict mountain`.
pub fn to_text(d: &MountainData) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Memory mountain of {}\n\n",
        if d.machine.is_empty() {
            "this machine"
        } else {
            &d.machine
        }
    ));
    s.push_str(&format!(
        "{:<6} {:>12} {:>14} {:>20}\n",
        "level", "size", "latency", "bandwidth (1 thr)"
    ));
    for l in &d.levels {
        s.push_str(&format!(
            "{:<6} {:>12} {:>14} {:>20}\n",
            l.name,
            l.size_bytes.map_or("—".into(), binary_bytes),
            l.latency_s.map_or("—".into(), |v| Si(v, "s").to_string()),
            l.bandwidth_Bps
                .map_or("—".into(), |v| Si(v, "B/s").to_string()),
        ));
    }
    s.push('\n');
    for c in &d.curves {
        let first = c.points.first().expect("curves have points");
        let last = c.points.last().expect("curves have points");
        s.push_str(&format!(
            "{}: {} points, {} at {} to {} at {}\n",
            c.name,
            c.points.len(),
            Si(first.value, c.unit),
            binary_bytes(first.working_set_bytes),
            Si(last.value, c.unit),
            binary_bytes(last.working_set_bytes),
        ));
    }
    for n in &d.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}
