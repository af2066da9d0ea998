//! What a stream's restart costs: the profile's points and the query a
//! loop's runs read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{log_curve, StreamSection};
use crate::Estimate;

/// STREAM's copy at the DRAM working set run in segments (each array as
/// rows of `runs_per_row` runs of `segment_bytes`, swept tile column by
/// tile column) against the contiguous copy of the same arrays timed right
/// before it, in pairs: what each thread loses per run, as the
/// prefetchers find each new stream again.
///
/// The prefetchers also run past each run's end, into lines of the next
/// tile column; whether those are still cached when the sweep comes back
/// for that column depends on how much a column holds
/// ([`Self::column_bytes`]): a column larger than the caches has them
/// fetched twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamRestart {
    pub threads: usize,
    /// Bytes of one array per run.
    pub segment_bytes: f64,
    /// Runs to a row: a tile column's runs start this many runs apart, and
    /// a column holds this fraction of the thread's arrays (profiles
    /// before this key measured two).
    #[serde(default = "StreamRestart::near_runs_per_row")]
    pub runs_per_row: f64,
    /// Working set of each thread (both arrays), bytes.
    pub per_thread_bytes: f64,
    /// Seconds a thread loses per run: (t_segments − t_contiguous) / runs
    /// from the capability estimates of both times, at least 0; the
    /// median over the pairs, the interval their range.
    pub per_segment_s: Estimate,
}

impl StreamRestart {
    /// The runs to a row of the restart points of profiles that did not
    /// record it: the even runs, then the odd ones.
    pub fn near_runs_per_row() -> f64 {
        2.0
    }

    /// Bytes of one tile column of the thread's arrays (both arrays),
    /// what the sweep takes before it comes back for the next column:
    /// `per_thread_bytes / runs_per_row`.
    pub fn column_bytes(&self) -> f64 {
        self.per_thread_bytes / self.runs_per_row
    }
}

impl StreamSection {
    /// Seconds a thread loses per restart of its streams, runs of
    /// `segment_bytes` on `threads` threads whose tile columns hold
    /// `column_bytes` of the thread's arrays (`None`: the smallest column
    /// measured, as for a tile over long rows): the measured curves of the
    /// team [`Self::restart_columns`] reads, each linear in log segment
    /// length between its points and flat beyond them, and between the
    /// curves linear in log column bytes, flat beyond the measured ones;
    /// `None` without restart points.
    pub fn restart_s(
        &self,
        threads: usize,
        segment_bytes: f64,
        column_bytes: Option<f64>,
    ) -> Option<Estimate> {
        let columns = self.restart_columns(threads);
        let x = column_bytes.unwrap_or(*columns.first()?);
        let curves = columns.into_iter().filter_map(|column| {
            let pts = self
                .restart_points(threads)
                .filter(|r| r.column_bytes() == column)
                .map(|r| (r.segment_bytes, r.per_segment_s));
            Some((column, log_curve(pts, segment_bytes)?))
        });
        log_curve(curves, x)
    }

    /// The restart points a run on `threads` threads reads: those of the
    /// nearest measured thread count at most `threads`, else the nearest.
    fn restart_points(&self, threads: usize) -> impl Iterator<Item = &StreamRestart> + '_ {
        let counts = self.restarts.iter().map(|r| r.threads);
        let on = counts
            .clone()
            .filter(|&t| t <= threads)
            .max()
            .or_else(|| counts.min());
        self.restarts.iter().filter(move |r| Some(r.threads) == on)
    }

    /// The tile columns (bytes per thread) the restart points read on
    /// `threads` threads were measured at, ascending.
    pub fn restart_columns(&self, threads: usize) -> Vec<f64> {
        let mut columns: Vec<f64> = self
            .restart_points(threads)
            .map(StreamRestart::column_bytes)
            .collect();
        columns.sort_by(f64::total_cmp);
        columns.dedup();
        columns
    }
}
