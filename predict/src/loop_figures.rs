//! The profile figures the loop model reads: the read, write and bus roofs
//! of the level a working set lives in (from the STREAM sweep's kernels),
//! the latency of a random access into a region (the pointer-chase curve),
//! the memory-level parallelism of one core (the MLP curve) and the
//! latency of a loop-carried chain.
//!
//! Each figure can be read at its point estimate or at either end of its
//! 95% interval ([`Bound`]), so a prediction carries the profile's
//! uncertainty as a range.

use calibrate::kernels::stream::Kernel as StreamKernel;
use models::kernel::Traffic;
use models::traffic::{time_at, LevelModel, MixSample};
use serde_json::Value;

use crate::machine::{sweep_points, Machine, Missing};

/// Which value of each measured figure a prediction uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The point estimates.
    Point,
    /// Every rate at the top of its interval, every latency at the bottom:
    /// the fastest the measurements allow.
    Fast,
    /// The opposite end: the slowest.
    Slow,
}

impl Bound {
    /// `point` moved to the interval end this bound stands for, for a rate
    /// (higher is faster) with interval [`lo`, `hi`].
    pub(crate) fn rate(self, point: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
        match self {
            Bound::Point => point,
            Bound::Fast => hi.unwrap_or(point),
            Bound::Slow => lo.unwrap_or(point),
        }
    }

    /// The same for a time (lower is faster).
    fn time(self, point: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
        match self {
            Bound::Point => point,
            Bound::Fast => lo.unwrap_or(point),
            Bound::Slow => hi.unwrap_or(point),
        }
    }
}

/// Load, store and allocate bytes per element of a STREAM kernel: from the
/// profile when it lists them, else from calibrate's kernel table (profiles
/// from before the section carried them).
fn mix_of(section: &Value, kernel: &str) -> Option<(f64, f64, f64)> {
    let b = &section["bytes_per_elem"][kernel];
    if let (Some(l), Some(s), Some(a)) = (
        b["load"].as_f64(),
        b["store"].as_f64(),
        b["allocate"].as_f64(),
    ) {
        return Some((l, s, a));
    }
    let k = StreamKernel::ALL.into_iter().find(|k| k.name() == kernel)?;
    Some((
        8.0 * k.loaded_arrays() as f64,
        8.0 * k.stored_arrays() as f64,
        k.allocate_bytes_per_elem(),
    ))
}

/// A statistics object's capability estimate and interval: the low
/// quantile of a time or the high quantile of a rate (`models::stats`),
/// or, in profiles from before those were recorded, the median.
fn stats(v: &Value, key: &str) -> Option<(f64, Option<f64>, Option<f64>)> {
    let q = &v[key];
    if let Some(point) = q["point"].as_f64() {
        return Some((point, q["lo"].as_f64(), q["hi"].as_f64()));
    }
    Some((
        v["median"].as_f64()?,
        v["ci_lo"].as_f64(),
        v["ci_hi"].as_f64(),
    ))
}

/// [`stats`] of a time.
fn time_stats(v: &Value) -> Option<(f64, Option<f64>, Option<f64>)> {
    stats(v, "low_quantile")
}

/// [`stats`] of a rate.
fn rate_stats(v: &Value) -> Option<(f64, Option<f64>, Option<f64>)> {
    stats(v, "high_quantile")
}

impl Machine<'_> {
    fn stream_section(&self) -> Result<&Value, Missing> {
        self.profile.sections.get("stream").ok_or_else(|| Missing {
            what: "the stream section".into(),
            fix: "stream",
        })
    }

    /// The traffic model of every size of the STREAM sweep on `threads`
    /// threads (`models::traffic::LevelModel`, built from all the kernels
    /// measured at that size), the DRAM points included, sorted by size.
    fn level_curve(&self, threads: usize, bound: Bound) -> Result<Vec<(f64, LevelModel)>, Missing> {
        let s = self.stream_section()?;
        let mut by_size: Vec<(f64, Vec<MixSample>)> = Vec::new();
        let points = sweep_points(s, threads).chain(
            s["dram"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["threads"].as_u64() == Some(threads as u64)),
        );
        for p in points {
            let (Some(sample), Some(size)) =
                (self.mix_sample(s, p, bound), p["per_thread_bytes"].as_f64())
            else {
                continue;
            };
            match by_size.iter_mut().find(|(x, _)| *x == size) {
                Some((_, v)) => v.push(sample),
                None => by_size.push((size, vec![sample])),
            }
        }
        let mut curve: Vec<(f64, LevelModel)> = by_size
            .into_iter()
            .filter_map(|(x, v)| Some((x, LevelModel::from_samples(&v)?)))
            .collect();
        curve.sort_by(|a, b| a.0.total_cmp(&b.0));
        if curve.is_empty() {
            return Err(Missing {
                what: format!("a STREAM sweep on {threads} thread(s)"),
                fix: "stream",
            });
        }
        Ok(curve)
    }

    /// One STREAM point as bytes per element and seconds per element.
    fn mix_sample(&self, s: &Value, p: &Value, bound: Bound) -> Option<MixSample> {
        let (load_bytes, store_bytes, allocate_bytes) = mix_of(s, p["kernel"].as_str()?)?;
        let wa = p["bandwidth_write_allocate_Bps"].as_f64()?;
        // The interval of the counted bandwidth, carried to the
        // write-allocate one in proportion.
        let scale = match rate_stats(&p["bandwidth_Bps"]) {
            Some((m, lo, hi)) if m > 0.0 => bound.rate(m, lo, hi) / m,
            _ => 1.0,
        };
        let total = load_bytes + store_bytes + allocate_bytes;
        Some(MixSample {
            load_bytes,
            store_bytes,
            allocate_bytes,
            seconds: total / (wa * scale),
        })
    }

    /// Seconds a loop's streamed `traffic` takes on `threads` threads with
    /// `per_thread_bytes` of working set per thread, and the level model
    /// of the nearest measured size.
    pub fn traffic_time(
        &self,
        traffic: &Traffic,
        threads: usize,
        per_thread_bytes: f64,
        bound: Bound,
    ) -> Result<(f64, LevelModel), Missing> {
        self.lean_on(if threads == 1 {
            "stream_triad_1t_Bps"
        } else {
            "stream_triad_Bps"
        });
        let curve = self.level_curve(threads, bound)?;
        Ok(time_at(&curve, per_thread_bytes, traffic).expect("a curve with points"))
    }

    /// Latency of one access at a random place of a `region_bytes` region,
    /// from the pointer chase's curve with `huge_pages` (2 MiB) or 4 KiB
    /// pages, linear in log-size between its points (the page walks of
    /// small pages are part of it).
    pub fn random_latency_s(
        &self,
        region_bytes: f64,
        huge_pages: bool,
        bound: Bound,
    ) -> Result<f64, Missing> {
        let missing = || Missing {
            what: "the pointer-chase latency curve".into(),
            fix: "latency",
        };
        let pages = if huge_pages { "2MiB" } else { "4KiB" };
        let l = self.profile.sections.get("latency").ok_or_else(missing)?;
        let mut curve: Vec<(f64, f64)> = l["points"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["pages"] == pages)
            .filter_map(|p| {
                let (m, lo, hi) = time_stats(&p["latency_s"])?;
                Some((p["size_bytes"].as_f64()?, bound.time(m, lo, hi)))
            })
            .collect();
        curve.sort_by(|a, b| a.0.total_cmp(&b.0));
        match curve.as_slice() {
            [] => Err(missing()),
            [first, ..] if region_bytes <= first.0 => Ok(first.1),
            [.., last] if region_bytes >= last.0 => Ok(last.1),
            points => Ok(crate::machine::log_interpolate(points, region_bytes)),
        }
    }

    /// Misses one core keeps in flight with the given page size, by
    /// Little's law (§4.3: concurrency = throughput × latency): the MLP
    /// curve's largest line rate times the pointer-chase latency at the
    /// curve's own buffer size and page size. Without that latency, the
    /// curve's largest bandwidth over its one-chain bandwidth. With 4 KiB
    /// pages a miss may first need a page walk, so the core's page walkers
    /// can cap the concurrency below the huge-page curve's. A profile
    /// without the asked curve (older ones measured huge pages only) gives
    /// the other.
    pub fn miss_concurrency(&self, huge_pages: bool) -> Result<f64, Missing> {
        let missing = || Missing {
            what: "the memory-level-parallelism curve".into(),
            fix: "mlp",
        };
        let m = self.profile.sections.get("mlp").ok_or_else(missing)?;
        let points = m["points"].as_array().ok_or_else(missing)?;
        // Points without a page size are from profiles that measured huge
        // pages only.
        let pages_of = |p: &serde_json::Value| p["pages"].as_str().unwrap_or("2MiB").to_owned();
        let wanted = if huge_pages { "2MiB" } else { "4KiB" };
        let pages = if points.iter().any(|p| pages_of(p) == wanted) {
            wanted.to_owned()
        } else {
            points.first().map(pages_of).ok_or_else(missing)?
        };
        let curve: Vec<_> = points.iter().filter(|p| pages_of(p) == pages).collect();
        let max = curve
            .iter()
            .filter_map(|p| p["bandwidth_Bps"].as_f64())
            .fold(0.0, f64::max);
        let latency = m["dram_bytes"]
            .as_f64()
            .and_then(|b| self.random_latency_s(b, pages == "2MiB", Bound::Point).ok());
        if let Some(l) = latency {
            return Ok((max / self.line_bytes() * l).max(1.0));
        }
        let one = curve
            .iter()
            .find(|p| p["k"].as_u64() == Some(1))
            .and_then(|p| p["bandwidth_Bps"].as_f64())
            .ok_or_else(missing)?;
        Ok((max / one).max(1.0))
    }

    /// Seconds per operation of a loop-carried f64 chain of `op` ("add" or
    /// "fma"), from the flops section.
    pub fn chain_latency_s(&self, op: &str, bound: Bound) -> Result<f64, Missing> {
        self.profile
            .sections
            .get("flops")
            .and_then(|f| time_stats(&f["chain"][op]))
            .map(|(m, lo, hi)| bound.time(m, lo, hi))
            .ok_or_else(|| Missing {
                what: format!("the latency of a loop-carried {op} chain"),
                fix: "flops",
            })
    }

    /// Bytes of a cache line (64 when the profile does not say).
    pub fn line_bytes(&self) -> f64 {
        self.profile
            .sections
            .get("latency")
            .and_then(|l| l["line_bytes"].as_f64())
            .unwrap_or(64.0)
    }

    /// Name of the level a working set of `per_thread_bytes` per thread
    /// lives in: the first detected cache level that holds it, else DRAM.
    pub fn level_of(&self, per_thread_bytes: f64) -> String {
        self.profile
            .levels
            .iter()
            .find(|l| l.size_bytes.is_some_and(|s| per_thread_bytes <= s))
            .map_or_else(|| "DRAM".to_string(), |l| l.name.clone())
    }
}
