//! The `mlp` section: bandwidth of k independent pointer chases at once
//! in a DRAM-sized buffer, and what Little's law makes of it (§4.3:
//! concurrency = throughput × latency).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sample::{whole, whole_opt, Sample};

/// Results of the memory-level-parallelism benchmark. The top-level
/// figures (`max_bandwidth_Bps`, `saturation_k`, `little`) are those of the
/// 2 MiB-page curve.
#[allow(non_snake_case)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct MlpSection {
    /// Bytes of the chase buffer.
    #[serde(deserialize_with = "whole")]
    pub dram_bytes: u64,
    /// Pages of the top-level curve: "2MiB".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<String>,
    /// Bytes of the buffer the kernel backed with huge pages.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_opt"
    )]
    pub huge_page_bytes: Option<u64>,
    /// Bytes of a cache line.
    #[serde(deserialize_with = "whole")]
    pub line_bytes: u64,
    /// One point per chain count k and page size.
    pub points: Vec<MlpPoint>,
    /// Largest bandwidth of the 2 MiB curve, bytes/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bandwidth_Bps: Option<f64>,
    /// First k reaching `saturation_share` of the largest bandwidth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saturation_k: Option<usize>,
    /// Share of the largest bandwidth that counts as saturated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saturation_share: Option<f64>,
    /// Little's law on the latency and bandwidth of other benchmarks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub little: Option<Little>,
}

/// The chains at one count.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MlpPoint {
    /// Independent chains walked at once.
    pub k: usize,
    /// Pages of the buffer, "4KiB" or "2MiB"; points without it (older
    /// profiles) are 2 MiB points.
    #[serde(default = "huge")]
    pub pages: String,
    /// Time of one step of all k chains (hand-written sections may
    /// give only the bandwidth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_per_step_s: Option<Sample>,
    /// Lines fetched per second, bytes/s.
    pub bandwidth_Bps: f64,
}

/// Lines in flight that Little's law asks for.
#[allow(non_snake_case)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Little {
    pub latency_s: Option<f64>,
    pub latency_source: String,
    pub bandwidth_Bps: Option<f64>,
    pub bandwidth_source: String,
    /// Lines in flight: bandwidth × latency / line bytes.
    pub k: Option<f64>,
}

/// The label of 2 MiB pages.
pub const HUGE_PAGES: &str = "2MiB";
/// The label of 4 KiB pages.
pub const SMALL_PAGES: &str = "4KiB";

/// The label of huge (2 MiB) or 4 KiB pages.
pub fn pages_label(huge: bool) -> &'static str {
    if huge {
        HUGE_PAGES
    } else {
        SMALL_PAGES
    }
}

fn huge() -> String {
    HUGE_PAGES.into()
}

impl MlpSection {
    /// The points of the curve on `pages` ("4KiB" or "2MiB").
    pub fn curve<'a>(&'a self, pages: &'a str) -> impl Iterator<Item = &'a MlpPoint> + 'a {
        self.points.iter().filter(move |p| p.pages == pages)
    }

    /// The page size whose curve answers for huge (2 MiB) or 4 KiB pages:
    /// the asked one when it was measured, else the other (older profiles
    /// measured 2 MiB pages only); `None` when no curve has a one-chain
    /// point.
    pub fn measured_pages(&self, huge: bool) -> Option<&'static str> {
        [pages_label(huge), pages_label(!huge)]
            .into_iter()
            .find(|p| self.curve(p).any(|q| q.k == 1))
    }

    /// The largest bandwidth of the `pages` curve, bytes/s.
    pub fn max_bandwidth(&self, pages: &str) -> f64 {
        self.curve(pages)
            .map(|p| p.bandwidth_Bps)
            .fold(0.0, f64::max)
    }

    /// Misses one core keeps in flight with `pages` pages, from this
    /// section alone: the curve's largest bandwidth over its one-chain
    /// bandwidth, at least 1 (Little's law, §4.3, with the latency of one
    /// chain). Predictions take the latency from the pointer-chase curve
    /// instead when the profile has it; this is their fallback. When that page size was not measured, the other
    /// one's curve answers; `None` when neither has a one-chain point.
    pub fn miss_concurrency(&self, pages: &str) -> Option<f64> {
        let pages = self.measured_pages(pages == HUGE_PAGES)?;
        let one = self.curve(pages).find(|p| p.k == 1)?.bandwidth_Bps;
        Some((self.max_bandwidth(pages) / one).max(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(k: usize, pages: &str, bw: f64) -> MlpPoint {
        MlpPoint {
            k,
            pages: pages.into(),
            time_per_step_s: None,
            bandwidth_Bps: bw,
        }
    }

    #[test]
    fn concurrency_per_page_size_with_fallback() {
        let mut s = MlpSection {
            points: vec![
                point(1, HUGE_PAGES, 1e9),
                point(8, HUGE_PAGES, 6e9),
                point(1, SMALL_PAGES, 1e9),
                point(8, SMALL_PAGES, 3e9),
            ],
            ..Default::default()
        };
        assert_eq!(s.miss_concurrency(HUGE_PAGES), Some(6.0));
        assert_eq!(s.miss_concurrency(SMALL_PAGES), Some(3.0));
        s.points.truncate(2);
        assert_eq!(s.miss_concurrency(SMALL_PAGES), Some(6.0));
        s.points[1].bandwidth_Bps = 0.5e9;
        assert_eq!(s.miss_concurrency(HUGE_PAGES), Some(1.0), "floor 1");
        s.points.clear();
        assert_eq!(s.miss_concurrency(HUGE_PAGES), None);
    }

    #[test]
    fn points_without_pages_are_huge_page_points() {
        let p: MlpPoint = serde_json::from_str(
            r#"{"k": 1, "time_per_step_s": {"median": 1e-7, "ci_lo": 1e-7, "ci_hi": 1e-7}, "bandwidth_Bps": 6e8}"#,
        )
        .unwrap();
        assert_eq!(p.pages, HUGE_PAGES);
        let small = point(1, SMALL_PAGES, 1e9);
        let text = serde_json::to_string(&small).unwrap();
        assert!(text.contains("\"pages\":\"4KiB\""), "{text}");
    }
}
