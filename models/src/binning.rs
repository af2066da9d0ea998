//! Cost of the three strategies for putting n items into buckets in parallel
//! (lecture §2.9, §3.5, §4.5, thought question 3), and which one to pick.

use serde::Serialize;

use crate::error::{non_negative, positive, Result};

/// Machine and problem figures for the binning decision.
#[allow(non_snake_case)]
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BinningInputs {
    /// Items to place.
    pub items: f64,
    /// Wall time per insert under one global lock at the thread count of
    /// interest (the contended t_crit; §4.5 measures 437–633 ns on 16 threads).
    pub global_lock_op_s: f64,
    /// Wall time per insert with one lock per bucket (§4.5: 277–294 ns).
    pub bucket_lock_op_s: f64,
    /// Extra bytes the data-parallel counting sort moves per item (20 in §3.5:
    /// read x,y 8 B, write sorted index and cell 8 B, re-read cell 4 B).
    pub sort_bytes_per_item: f64,
    /// Streaming bandwidth available to the sort, bytes/s.
    pub bandwidth_Bps: f64,
    /// Per-item compute of the sort beyond its traffic, wall seconds (0 if unknown).
    pub sort_op_s: f64,
}

/// The three strategies (§2.9 solutions 2, 3 and 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    GlobalLock,
    BucketLocks,
    DataParallel,
}

impl Strategy {
    /// The strategy's name in tables and legends, e.g. "16 bucket locks".
    pub fn name(self, buckets: f64) -> String {
        match self {
            Strategy::GlobalLock => "global lock".into(),
            Strategy::BucketLocks => format!("{buckets} bucket locks"),
            Strategy::DataParallel => "data-parallel sort".into(),
        }
    }
}

/// The estimated time of each strategy and the pick.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BinningCosts {
    /// n · t_global.
    pub global_lock_s: f64,
    /// n · t_bucket.
    pub bucket_locks_s: f64,
    /// max(n · bytes / B, n · t_sort): the sort is bandwidth-bound unless its
    /// own work is slower.
    pub data_parallel_s: f64,
    /// The cheapest.
    pub choice: Strategy,
}

/// Estimates the three strategies and picks the cheapest: put both kinds of
/// cost in the same unit (time) and compare (§4.5 decision rule).
pub fn costs(inp: &BinningInputs) -> Result<BinningCosts> {
    let n = positive("items", inp.items)?;
    let global = n * positive("global-lock-op", inp.global_lock_op_s)?;
    let bucket = n * positive("bucket-lock-op", inp.bucket_lock_op_s)?;
    let traffic = n * non_negative("sort-bytes", inp.sort_bytes_per_item)?
        / positive("bandwidth", inp.bandwidth_Bps)?;
    let data_parallel = traffic.max(n * non_negative("sort-op", inp.sort_op_s)?);
    let choice = [
        (global, Strategy::GlobalLock),
        (bucket, Strategy::BucketLocks),
        (data_parallel, Strategy::DataParallel),
    ]
    .into_iter()
    .min_by(|a, b| a.0.total_cmp(&b.0))
    .map(|(_, s)| s)
    .expect("three candidates");
    Ok(BinningCosts {
        global_lock_s: global,
        bucket_locks_s: bucket,
        data_parallel_s: data_parallel,
        choice,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> BinningInputs {
        BinningInputs {
            items: 1e6,
            global_lock_op_s: 10e-9,
            bucket_lock_op_s: 12e-9,
            sort_bytes_per_item: 20.0,
            bandwidth_Bps: 1e9,
            sort_op_s: 0.0,
        }
    }

    #[test]
    fn cheap_locks_win_on_a_slow_memory_machine() {
        // 20 MB at 1 GB/s = 20 ms against 10 ms under an uncontended lock.
        let c = costs(&inputs()).unwrap();
        assert_eq!(c.choice, Strategy::GlobalLock);
    }

    #[test]
    fn sort_work_can_dominate_traffic() {
        let mut i = inputs();
        i.bandwidth_Bps = 100e9;
        i.sort_op_s = 3e-9;
        let c = costs(&i).unwrap();
        assert!((c.data_parallel_s - 3e-3).abs() < 1e-12);
        assert_eq!(c.choice, Strategy::DataParallel);
    }
}
