//! The mountain's curves and levels, read from the profile's `latency` and
//! `stream` sections and its detected levels.

use models::profile::latency::LatencySection;
use models::profile::stream::{StreamSection, StreamSweep};
use models::profile::{Profile, Sample};
use serde::Serialize;

use crate::error::BadInput;

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

/// (median, lo, hi) of a sample, the interval widened to hold the median.
/// A point of a curve: a sample's estimate at a working set, with its
/// interval widened to hold the point; none for a zero size or value.
fn curve_point(working_set_bytes: f64, s: &Sample) -> Option<CurvePoint> {
    let e = s.estimate();
    (working_set_bytes > 0.0 && e.point > 0.0).then_some(CurvePoint {
        working_set_bytes,
        value: e.point,
        lo: e.lo.min(e.point),
        hi: e.hi.max(e.point),
    })
}

fn sorted(mut points: Vec<CurvePoint>) -> Vec<CurvePoint> {
    points.sort_by(|a, b| a.working_set_bytes.total_cmp(&b.working_set_bytes));
    points.dedup_by(|a, b| a.working_set_bytes == b.working_set_bytes);
    points
}

fn latency_curves(section: &LatencySection) -> Vec<Curve> {
    let points = &section.points;
    // One curve per page size, in order of first appearance.
    let mut pages: Vec<String> = Vec::new();
    for p in points {
        if !pages.contains(&p.pages) {
            pages.push(p.pages.clone());
        }
    }
    pages
        .into_iter()
        .filter_map(|pg| {
            let pts: Vec<CurvePoint> = points
                .iter()
                .filter(|p| p.pages == pg)
                .filter_map(|p| curve_point(p.size_bytes as f64, &p.latency_s))
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

/// One bandwidth curve per sweep: on huge pages (the section's `pages`)
/// and, where `calibrate` ran it, on 4 KiB pages from the largest private
/// cache on; the page size is named only when both are drawn.
fn bandwidth_curves(section: &StreamSection) -> Vec<Curve> {
    let both = !section.base_pages.is_empty();
    let huge = section.pages.clone().unwrap_or_else(|| "2MiB".into());
    let mut out: Vec<Curve> = section
        .sweeps
        .iter()
        .map(|w| (w, both.then(|| huge.clone())))
        .chain(
            section
                .base_pages
                .iter()
                .map(|w| (w, Some("4KiB".to_string()))),
        )
        .filter_map(|(w, pages)| sweep_curve(w, pages))
        .collect();
    out.sort_by_key(|c| c.threads);
    out
}

/// The read bandwidth of one sweep (its load kernel, else its triad, else
/// its first kernel) against the working set; none under two points.
fn sweep_curve(sweep: &StreamSweep, pages: Option<String>) -> Option<Curve> {
    let threads = sweep.threads;
    let points = &sweep.points;
    let kernels: Vec<&str> = points.iter().map(|p| p.kernel.as_str()).collect();
    let kernel = ["load", "read", "triad"]
        .iter()
        .find(|k| kernels.iter().any(|x| x == *k))
        .map(|k| k.to_string())
        .or_else(|| kernels.first().map(|k| k.to_string()))
        .unwrap_or_default();
    let pts: Vec<CurvePoint> = points
        .iter()
        .filter(|p| p.kernel == kernel)
        .filter_map(|p| curve_point(p.per_thread_bytes as f64, p.bandwidth_Bps.as_ref()?))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let what = if kernel == "load" || kernel == "read" {
        "read bandwidth".to_string()
    } else {
        format!("{kernel} bandwidth")
    };
    let on = pages
        .as_deref()
        .map_or(String::new(), |p| format!(", {} pages", pretty_pages(p)));
    Some(Curve {
        quantity: Quantity::Bandwidth,
        name: format!(
            "{what}, {threads} thread{}{on}",
            if threads == 1 { "" } else { "s" }
        ),
        threads,
        pages,
        kernel: (!kernel.is_empty()).then_some(kernel),
        unit: "B/s",
        points: sorted(pts),
    })
}

/// The mountain's curves and levels from a profile's sections.
pub fn build(profile: &Profile) -> Result<MountainData, BadInput> {
    let mut curves = Vec::new();
    let mut notes = Vec::new();
    match &profile.sections.latency {
        Some(s) => curves.extend(latency_curves(s)),
        None => notes.push("no latency curve: run `calibrate --only latency` to add it".into()),
    }
    match &profile.sections.stream {
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

#[cfg(test)]
mod tests {
    use super::*;
    use models::profile::stream::StreamPoint;

    fn sweep(threads: usize, sizes: &[u64]) -> StreamSweep {
        let sample = Sample {
            median: 1e10,
            ..Default::default()
        };
        StreamSweep {
            threads,
            points: sizes
                .iter()
                .map(|&b| StreamPoint {
                    bandwidth_Bps: Some(sample.clone()),
                    ..StreamPoint::with_bandwidth_wa("load", b, None, 1e10)
                })
                .collect(),
        }
    }

    #[test]
    fn the_4_kib_page_sweeps_are_curves_of_their_own_named_by_their_pages() {
        let mut s = StreamSection {
            pages: Some("2MiB".into()),
            sweeps: vec![sweep(1, &[1 << 14, 1 << 20, 1 << 27])],
            ..Default::default()
        };
        let names = |s: &StreamSection| -> Vec<String> {
            bandwidth_curves(s).into_iter().map(|c| c.name).collect()
        };
        // Without the 4 KiB-page sweep the page size goes unnamed.
        assert_eq!(names(&s), ["read bandwidth, 1 thread"]);
        s.base_pages = vec![sweep(1, &[1 << 20, 1 << 27])];
        assert_eq!(
            names(&s),
            [
                "read bandwidth, 1 thread, 2 MiB pages",
                "read bandwidth, 1 thread, 4 KiB pages"
            ]
        );
        let base = &bandwidth_curves(&s)[1];
        assert_eq!(base.pages.as_deref(), Some("4KiB"));
        assert_eq!(base.points.len(), 2);
    }
}
