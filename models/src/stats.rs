//! Samples of repeated measurements and their summary: median, a
//! distribution-free 95% interval of the median, coefficient of variation and
//! outliers counted by the modified Z-score, and the capability estimate of
//! a figure that interference can only make worse (see [`capability`]).
//!
//! Every measured figure in the toolkit goes through [`Sample::summary`], so a
//! number is never reported without its spread.
//!
//! ```
//! use models::stats::Sample;
//! let s = Sample::new(vec![1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 5.0]).unwrap();
//! let sum = s.summary();
//! assert_eq!(sum.median, 1.0);
//! assert_eq!(sum.outliers.high, 1); // the 5.0
//! ```

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, DiscreteCDF};
use thiserror::Error;

pub use crate::quantile::{capability, Better, CAPABILITY_QUANTILE};
use crate::Estimate;

/// Modified Z-score above which a value counts as an outlier
/// (Iglewicz and Hoaglin's recommendation).
pub const OUTLIER_Z: f64 = 3.5;
/// Coefficient of variation above which a figure is flagged as noisy.
pub const NOISY_CV: f64 = 0.05;
/// Share of outliers above which a figure is flagged as noisy.
pub const NOISY_OUTLIER_SHARE: f64 = 0.10;
/// Smallest spread, as a share of the median, that outliers are scored
/// against: timings of one loop differ by about 1% from one repetition to
/// the next however quiet the machine (timer granularity, clock steps), so
/// a tight sample's MAD is floored here: only a value more than about 5%
/// (`OUTLIER_Z / 0.6745` × 1%) off the median counts as an outlier.
pub const MAD_FLOOR_SHARE: f64 = 0.01;

/// Why a set of values is not a usable sample.
#[derive(Debug, Error, PartialEq)]
pub enum StatsError {
    #[error("a sample needs at least 2 values, got {0}; increase the repetitions")]
    TooFew(usize),
    #[error("value {index} of the sample is {value}, not a finite number")]
    NotFinite { index: usize, value: f64 },
}

/// At least two finite measurements of one quantity, kept in the order taken,
/// with the timings that were set aside as disturbed counted beside them.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    values: Vec<f64>,
    disturbed: usize,
    unreliable: Option<String>,
}

/// Counts of outliers by modified Z-score; they are reported, never dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outliers {
    /// Values far below the median.
    pub low: usize,
    /// Values far above the median (the usual sign of interference).
    pub high: usize,
}

impl Outliers {
    /// All outliers.
    pub fn total(&self) -> usize {
        self.low + self.high
    }
}

/// The summary of a [`Sample`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "StatsSummary")]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Median, the point estimate.
    pub median: f64,
    /// Lower end of the 95% interval of the median.
    pub ci_lo: f64,
    /// Upper end of the 95% interval of the median.
    pub ci_hi: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1).
    pub std_dev: f64,
    /// Coefficient of variation, std_dev / |mean|.
    pub cv: f64,
    pub min: f64,
    pub max: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    pub outliers: Outliers,
    /// Set when the figure should not be trusted: CV above [`NOISY_CV`] or
    /// more than [`NOISY_OUTLIER_SHARE`] of the values are outliers.
    pub noisy: bool,
    /// [`capability`] with [`Better::Lower`]: the low quantile and its interval.
    #[serde(default)]
    pub low_quantile: Estimate,
    /// [`capability`] with [`Better::Higher`]: the high quantile and its interval.
    #[serde(default)]
    pub high_quantile: Estimate,
    /// Timings the OS reported disturbed: set aside (not in `n`), unless
    /// too few were clean (`unreliable`), when every timing is kept.
    #[serde(default)]
    pub disturbed: usize,
    /// Why the figure is not the machine's (too few clean timings), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreliable: Option<String>,
}

impl Summary {
    /// The median with its 95% interval.
    pub fn estimate(&self) -> Estimate {
        Estimate::new(self.median, self.ci_lo, self.ci_hi)
    }

    /// The capability estimate with its interval: [`Self::low_quantile`] for
    /// times, [`Self::high_quantile`] for rates.
    pub fn capability(&self, better: Better) -> Estimate {
        match better {
            Better::Lower => self.low_quantile,
            Better::Higher => self.high_quantile,
        }
    }
}

impl Sample {
    /// Checks the invariants once: at least two values, all finite.
    pub fn new(values: Vec<f64>) -> Result<Self, StatsError> {
        if values.len() < 2 {
            return Err(StatsError::TooFew(values.len()));
        }
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(StatsError::NotFinite { index, value });
        }
        Ok(Self {
            values,
            disturbed: 0,
            unreliable: None,
        })
    }

    /// The same values, with `disturbed` timings counted as set aside and,
    /// when too few clean ones were left, the reason the figure is unreliable.
    pub fn with_interference(self, disturbed: usize, unreliable: Option<String>) -> Self {
        Self {
            disturbed,
            unreliable,
            ..self
        }
    }

    /// The values in the order they were taken.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Timings set aside as disturbed.
    pub fn disturbed(&self) -> usize {
        self.disturbed
    }

    /// Why the sample is not to be trusted as the machine's figure, if so.
    pub fn unreliable(&self) -> Option<&str> {
        self.unreliable.as_deref()
    }

    /// A new sample with `f` applied to each value (for example time to
    /// bandwidth), keeping the interference counts. `f` must keep values
    /// finite.
    pub fn map(&self, f: impl Fn(f64) -> f64) -> Result<Self, StatsError> {
        Ok(Self::new(self.values.iter().map(|&v| f(v)).collect())?
            .with_interference(self.disturbed, self.unreliable.clone()))
    }

    /// Median, interval, spread and outliers.
    pub fn summary(&self) -> Summary {
        let mut sorted = self.values.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = median_of_sorted(&sorted);
        let (ci_lo, ci_hi) = median_interval(&sorted);
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let var = sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let std_dev = var.sqrt();
        let cv = if mean != 0.0 {
            std_dev / mean.abs()
        } else {
            0.0
        };
        let mad = mad_of(&sorted, median);
        let outliers = count_outliers(&sorted, median, mad.max(MAD_FLOOR_SHARE * median.abs()));
        let noisy = cv > NOISY_CV || outliers.total() as f64 > NOISY_OUTLIER_SHARE * n as f64;
        Summary {
            n,
            median,
            ci_lo,
            ci_hi,
            mean,
            std_dev,
            cv,
            min: sorted[0],
            max: sorted[n - 1],
            mad,
            outliers,
            noisy,
            low_quantile: capability(&sorted, Better::Lower),
            high_quantile: capability(&sorted, Better::Higher),
            disturbed: self.disturbed,
            unreliable: self.unreliable.clone(),
        }
    }
}

/// The q-quantile (0..1) of sorted values, linearly interpolated.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    let frac = pos - i as f64;
    if i + 1 < sorted.len() {
        sorted[i] + frac * (sorted[i + 1] - sorted[i])
    } else {
        sorted[i]
    }
}

/// Median of `values` in any order ([`median_of_sorted`] once sorted).
///
/// # Panics
/// If `values` is empty.
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    median_of_sorted(&values)
}

/// Median of values sorted ascending (mean of the two middle ones for even
/// n). Panics on an empty slice, which has none.
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn mad_of(sorted: &[f64], median: f64) -> f64 {
    self::median(sorted.iter().map(|v| (v - median).abs()).collect())
}

/// Modified Z-score of `x`: M = 0.6745·(x − median)/MAD.
///
/// When MAD is 0 (more than half of the values are identical) any value
/// different from the median is infinitely far away in MAD units, so it is
/// an outlier, and values equal to the median score 0.
pub fn modified_z(x: f64, median: f64, mad: f64) -> f64 {
    let d = x - median;
    if d == 0.0 {
        0.0
    } else if mad == 0.0 {
        d.signum() * f64::INFINITY
    } else {
        0.6745 * d / mad
    }
}

fn count_outliers(sorted: &[f64], median: f64, mad: f64) -> Outliers {
    let mut o = Outliers::default();
    for &v in sorted {
        let z = modified_z(v, median, mad);
        if z > OUTLIER_Z {
            o.high += 1;
        } else if z < -OUTLIER_Z {
            o.low += 1;
        }
    }
    o
}

/// Distribution-free 95% interval of the median from order statistics.
///
/// The number of values below the true median is Binomial(n, ½); the interval
/// is `[x₍ⱼ₎, x₍ₙ₋ⱼ₊₁₎]` with the largest j for which
/// P(j ≤ Bin(n,½) ≤ n − j) ≥ 0.95. Below n = 6 no pair of order statistics
/// reaches 95% and the interval is the whole range [min, max].
pub fn median_interval(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len();
    let bin = match Binomial::new(0.5, n as u64) {
        Ok(b) => b,
        Err(_) => return (sorted[0], sorted[n - 1]),
    };
    // Coverage of [x_(j), x_(n-j+1)] (1-based) is 1 − 2·P(Bin ≤ j − 1).
    let mut j = 1;
    while j < n / 2 && 1.0 - 2.0 * bin.cdf(j as u64) >= 0.95 {
        j += 1;
    }
    (sorted[j - 1], sorted[n - j])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 5.0);
        assert_eq!(quantile(&v, 0.125), 1.5);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn rejects_too_few_and_nan() {
        assert_eq!(Sample::new(vec![1.0]), Err(StatsError::TooFew(1)));
        assert!(matches!(
            Sample::new(vec![1.0, f64::NAN]),
            Err(StatsError::NotFinite { index: 1, .. })
        ));
        assert!(Sample::new(vec![1.0, f64::INFINITY]).is_err());
    }

    #[test]
    fn median_even_and_odd() {
        assert_eq!(median_of_sorted(&[1.0, 2.0, 3.0]), 2.0);
        assert_eq!(median_of_sorted(&[1.0, 2.0, 3.0, 10.0]), 2.5);
        assert_eq!(median(vec![10.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn zero_mad_flags_every_differing_value() {
        // Seven identical values and one 10% slower: MAD = 0.
        let s = Sample::new(vec![2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.2]).unwrap();
        let sum = s.summary();
        assert_eq!(sum.mad, 0.0);
        assert_eq!(sum.outliers, Outliers { low: 0, high: 1 });
        assert_eq!(modified_z(2.0, 2.0, 0.0), 0.0);
        assert_eq!(modified_z(1.0, 2.0, 0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn one_per_cent_apart_is_quiet() {
        // A tight sample (MAD 0.1%) whose extremes are 1.5% off: outliers
        // by MAD alone, within the resolution of a timing.
        let v = vec![1.000, 1.001, 0.999, 1.000, 1.001, 1.015, 0.985];
        let sum = Sample::new(v).unwrap().summary();
        assert_eq!(sum.outliers.total(), 0);
        assert!(!sum.noisy);
        let v = vec![1.000, 1.001, 0.999, 1.000, 1.001, 1.015, 1.08];
        assert_eq!(Sample::new(v).unwrap().summary().outliers.high, 1);
    }

    #[test]
    fn all_identical_is_quiet() {
        let sum = Sample::new(vec![3.0; 10]).unwrap().summary();
        assert_eq!(sum.outliers.total(), 0);
        assert_eq!(sum.cv, 0.0);
        assert!(!sum.noisy);
        assert_eq!((sum.ci_lo, sum.ci_hi), (3.0, 3.0));
    }

    #[test]
    fn outliers_on_both_sides() {
        let mut v: Vec<f64> = (0..20).map(|i| 10.0 + 0.01 * i as f64).collect();
        v.push(100.0);
        v.push(0.5);
        let sum = Sample::new(v).unwrap().summary();
        assert_eq!(sum.outliers, Outliers { low: 1, high: 1 });
        assert!(sum.noisy, "CV is far above 5%");
    }

    #[test]
    fn median_interval_order_statistics() {
        // n = 5: no pair reaches 95%, so the full range.
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(median_interval(&v), (1.0, 5.0));
        // n = 10: the textbook interval is [x(2), x(9)] (coverage 97.9%).
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(median_interval(&v), (2.0, 9.0));
        // n = 100: [x(40), x(61)] (coverage 96.5%).
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(median_interval(&v), (40.0, 61.0));
    }

    #[test]
    fn interference_counts_survive_map_and_summary() {
        let s = Sample::new(vec![1.0, 2.0, 4.0])
            .unwrap()
            .with_interference(3, Some("too few".into()))
            .map(|t| 1.0 / t)
            .unwrap();
        assert_eq!((s.disturbed(), s.unreliable()), (3, Some("too few")));
        let sum = s.summary();
        assert_eq!(
            (sum.disturbed, sum.unreliable.as_deref()),
            (3, Some("too few"))
        );
        assert_eq!(sum.capability(Better::Higher).point, 1.0);
    }

    #[test]
    fn median_interval_covers_true_median() {
        // Coverage check with a deterministic LCG over many synthetic samples.
        let mut rng = crate::random::SplitMix64::new(12345);
        let mut uniform = || rng.uniform();
        let trials = 2000;
        let mut covered = 0;
        for _ in 0..trials {
            let mut v: Vec<f64> = (0..25).map(|_| uniform()).collect();
            v.sort_by(f64::total_cmp);
            let (lo, hi) = median_interval(&v);
            if lo <= 0.5 && 0.5 <= hi {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!(rate > 0.93 && rate < 0.995, "coverage {rate}");
    }
}
