//! One core's latency figures: a random access into a region (the
//! pointer-chase curve), the misses it keeps in flight (the MLP curve), a
//! loop-carried chain's step, iterations with a chain inside and the
//! chain's overlap with its loop's transfers.

use models::profile::flops::SpanSource;
use models::profile::mlp::pages_label;

use super::Bound;
use crate::machine::{Machine, Missing};

impl<'a> Machine<'a> {
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
        let pages = pages_label(huge_pages);
        self.profile
            .sections
            .latency
            .as_ref()
            .and_then(|l| l.latency_at(region_bytes, pages, |e| bound.of_time(e)))
            .ok_or_else(missing)
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
        let m = self.profile.sections.mlp.as_ref().ok_or_else(missing)?;
        let pages = m.measured_pages(huge_pages).ok_or_else(missing)?;
        let latency = (m.dram_bytes > 0)
            .then(|| {
                self.random_latency_s(
                    m.dram_bytes as f64,
                    pages == pages_label(true),
                    Bound::Point,
                )
            })
            .and_then(Result::ok);
        match latency {
            Some(l) => {
                let line = match m.line_bytes {
                    0 => self.line_bytes(),
                    b => b as f64,
                };
                Ok((m.max_bandwidth(pages) / line * l).max(1.0))
            }
            None => m.miss_concurrency(pages).ok_or_else(missing),
        }
    }

    /// Seconds per operation of a loop-carried f64 chain of `op` ("add" or
    /// "fma"), from the flops section.
    pub fn chain_latency_s(&self, op: &str, bound: Bound) -> Result<f64, Missing> {
        self.profile
            .sections
            .flops
            .as_ref()
            .and_then(|f| f.chain_latency(op))
            .map(|e| bound.of_time(&e))
            .ok_or_else(|| Missing {
                what: format!("the latency of a loop-carried {op} chain"),
                fix: "flops",
            })
    }

    /// Seconds per element of an iteration with a chain `depth` steps deep
    /// inside, vectorised with `isa` (`None`: the widest measured), on each
    /// of `threads` threads, and where it was read
    /// (`models::profile::flops::FlopsSection::span_element_s`).
    pub fn span_element_s(
        &self,
        isa: Option<&str>,
        depth: f64,
        threads: usize,
        bound: Bound,
    ) -> Result<(f64, SpanSource), Missing> {
        self.profile
            .sections
            .flops
            .as_ref()
            .and_then(|f| f.span_element_s(isa, depth, threads, |e| bound.of_time(e)))
            .map(|(t, at)| (t / self.now.span, at))
            .ok_or_else(|| Missing {
                what: format!(
                    "the time of iterations with a chain inside{}",
                    isa.map_or(String::new(), |i| format!(" on {i}"))
                ),
                fix: "flops",
            })
    }

    /// Seconds one thread pays per byte of loads that hit L1 beside the
    /// chains of iterations vectorised with `isa` (`None`: the widest
    /// measured) on each of `threads` threads, and where it was read
    /// (`models::profile::flops::FlopsSection::span_load_s`), scaled as
    /// the span curve is; `None` for a profile without it.
    pub fn span_load_s(
        &self,
        isa: Option<&str>,
        threads: usize,
        bound: Bound,
    ) -> Option<(f64, SpanSource)> {
        let (e, at) = self
            .profile
            .sections
            .flops
            .as_ref()?
            .span_load_s(isa, threads)?;
        Some((bound.of_time(&e) / self.now.span, at))
    }

    /// The measured overlap ω of a loop-carried chain with its loop's
    /// transfers at a working set of `per_thread_bytes`
    /// (`models::profile::flops::ChainOverlap`); `None` for a profile
    /// without it.
    pub fn chain_overlap(&self, per_thread_bytes: f64) -> Option<f64> {
        self.profile
            .sections
            .flops
            .as_ref()?
            .chain_overlap_at(per_thread_bytes)
    }
}
