//! The `latency` section: the pointer-chase curve on 4 KiB and 2 MiB
//! pages, and the levels detected on it (§2: the memory hierarchy's
//! load-to-use latencies).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sample::{whole, whole_opt, Sample};
use crate::Estimate;

/// Results of the latency benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LatencySection {
    /// Bytes of a cache line.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_opt"
    )]
    pub line_bytes: Option<u64>,
    /// Pages of the curve the levels were detected on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detection_pages: Option<String>,
    /// Largest working set of the sweep, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_bytes: Option<u64>,
    /// Whether the curve reached the main-memory plateau.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reached_dram_plateau: Option<bool>,
    /// Clock of the cycle figures, Hz.
    pub clock_hz: Option<f64>,
    /// One point per working set and page size.
    pub points: Vec<LatencyPoint>,
    /// The plateaus detected, nearest first, DRAM last.
    pub levels: Vec<Plateau>,
    /// Breakpoints of the segmented fit, bytes.
    pub breakpoints_bytes: Vec<f64>,
    /// Working sets of the isolated spikes left out of the fit, bytes.
    pub spikes_bytes: Vec<f64>,
    /// Latency the 4 KiB pages add at the DRAM size (page walks), seconds.
    pub tlb_s: Option<Estimate>,
}

/// One working set on one page size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencyPoint {
    #[serde(deserialize_with = "whole")]
    pub size_bytes: u64,
    /// "4KiB" or "2MiB".
    pub pages: String,
    /// Bytes of the buffer the kernel backed with huge pages.
    #[serde(default, deserialize_with = "whole_opt")]
    pub huge_page_bytes: Option<u64>,
    /// Load-to-use latency per access.
    pub latency_s: Sample,
    /// The same in core cycles.
    #[serde(default)]
    pub latency_cycles: Option<f64>,
}

/// A plateau of the latency curve: one cache level, or main memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plateau {
    /// "L1", "L2", ... or "DRAM".
    pub name: String,
    /// Smallest measured working set on the plateau, bytes.
    pub from_bytes: f64,
    /// Largest measured working set on the plateau, bytes.
    pub to_bytes: f64,
    /// Detected capacity, bytes; `None` for main memory.
    pub size_bytes: Option<f64>,
    /// Median latency on the plateau with its 95% interval, seconds.
    pub latency_s: Estimate,
    /// Whether the latencies on the plateau spread too much.
    #[serde(default)]
    pub noisy: bool,
    /// Points on the plateau.
    #[serde(default)]
    pub points: usize,
}

impl LatencySection {
    /// The (size, latency) curve on `pages` sorted by size, each latency
    /// the capability estimate (low quantile) with its interval.
    pub fn curve(&self, pages: &str) -> Vec<(f64, Estimate)> {
        let mut c: Vec<(f64, Estimate)> = self
            .points
            .iter()
            .filter(|p| p.pages == pages)
            .map(|p| (p.size_bytes as f64, p.latency_s.time()))
            .collect();
        c.sort_by(|a, b| a.0.total_cmp(&b.0));
        c
    }

    /// Latency of one access at a random place of a `region_bytes` region
    /// on `pages` pages, with the estimate's value chosen by `pick`: the
    /// curve linear in log-size between its points, its first or last
    /// value outside them; `None` without points on those pages.
    pub fn latency_at(
        &self,
        region_bytes: f64,
        pages: &str,
        pick: impl Fn(&Estimate) -> f64,
    ) -> Option<f64> {
        let curve: Vec<(f64, f64)> = self
            .curve(pages)
            .into_iter()
            .map(|(x, e)| (x, pick(&e)))
            .collect();
        match curve.as_slice() {
            [] => None,
            [first, ..] if region_bytes <= first.0 => Some(first.1),
            [.., last] if region_bytes >= last.0 => Some(last.1),
            points => Some(log_interpolate(points, region_bytes)),
        }
    }
}

/// `y` at `x` on the piecewise-linear curve through `points` in (ln x, y),
/// `points` sorted by x and bracketing `x`.
pub fn log_interpolate(points: &[(f64, f64)], x: f64) -> f64 {
    if points.len() < 2 {
        return points.last().map_or(f64::NAN, |p| p.1);
    }
    let k = points
        .partition_point(|p| p.0 < x)
        .clamp(1, points.len() - 1);
    let ((x0, y0), (x1, y1)) = (points[k - 1], points[k]);
    if x1 <= x0 {
        return y1;
    }
    let f = (x.ln() - x0.ln()) / (x1.ln() - x0.ln());
    y0 + f * (y1 - y0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(size: u64, pages: &str, t: f64) -> LatencyPoint {
        LatencyPoint {
            size_bytes: size,
            pages: pages.into(),
            huge_page_bytes: None,
            latency_s: Sample::new(t, t * 0.9, t * 1.1),
            latency_cycles: None,
        }
    }

    #[test]
    fn latency_interpolates_in_log_size_per_page_size() {
        let s = LatencySection {
            points: vec![
                point(4096, "4KiB", 1e-9),
                point(16384, "4KiB", 3e-9),
                point(4096, "2MiB", 2e-9),
            ],
            ..Default::default()
        };
        let at = |x: f64, pages: &str| s.latency_at(x, pages, |e| e.point).unwrap();
        assert_eq!(at(1000.0, "4KiB"), 1e-9);
        assert!((at(8192.0, "4KiB") - 2e-9).abs() < 1e-18);
        assert_eq!(at(1e9, "4KiB"), 3e-9);
        assert_eq!(at(1e9, "2MiB"), 2e-9);
        assert!((s.latency_at(1000.0, "4KiB", |e| e.hi).unwrap() - 1.1e-9).abs() < 1e-20);
        assert_eq!(s.latency_at(1.0, "1GiB", |e| e.point), None);
    }
}
