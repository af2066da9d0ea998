//! Figures measured as the difference of two timings taken right after
//! each other: the host's memory system drifts by tens of per cent within
//! seconds, more than the difference, so each is timed in [`PAIRS`] pairs
//! and the figure is the median of the pairs' differences, its interval
//! their range.

use anyhow::Result;
use models::Estimate;

/// Pairs per figure.
pub const PAIRS: usize = 3;

/// The median and range of `difference()` over [`PAIRS`] calls.
pub fn over_pairs(mut difference: impl FnMut() -> Result<f64>) -> Result<Estimate> {
    let d = (0..PAIRS)
        .map(|_| difference())
        .collect::<Result<Vec<f64>>>()?;
    Ok(median_range(d))
}

/// The median of an odd number of values (the upper middle one of an
/// even number) and their range.
pub fn median_range(mut values: Vec<f64>) -> Estimate {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Estimate::new(values[n / 2], values[0], values[n - 1])
}
