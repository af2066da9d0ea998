//! A measured sample as the profile's sections store it: the median with
//! its 95% interval, the spread, the outlier counts, the capability
//! estimates and the batch counts behind them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Estimate;

/// One measured figure of a section (`models::stats::Summary` as stored).
/// Profiles from before the capability estimates and batch counts were
/// recorded lack those keys; they read as `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sample {
    /// Median of the timed values, the point estimate.
    pub median: f64,
    /// Lower end of the distribution-free 95% interval of the median
    /// (hand-written sections may leave the interval out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_lo: Option<f64>,
    /// Upper end of that interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_hi: Option<f64>,
    /// Coefficient of variation, standard deviation / mean.
    #[serde(default)]
    pub cv: f64,
    /// Number of timed values.
    #[serde(default)]
    pub n: usize,
    /// Values below the median flagged as outliers (modified Z-score).
    #[serde(default)]
    pub outliers_low: usize,
    /// Values above the median flagged as outliers.
    #[serde(default)]
    pub outliers_high: usize,
    /// Whether the spread or the outliers make the figure untrustworthy.
    #[serde(default)]
    pub noisy: bool,
    /// The capability estimate of a time: its low quantile and interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_quantile: Option<Estimate>,
    /// The capability estimate of a rate: its high quantile and interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_quantile: Option<Estimate>,
    /// Timed batches the figure was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_batches: Option<usize>,
    /// Timed batches set aside as disturbed by the OS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed_batches: Option<usize>,
    /// Why the figure is not the machine's, when too few batches were clean.
    #[serde(default)]
    pub unreliable: Option<String>,
}

impl Sample {
    /// A sample of `median` with the interval [`lo`, `hi`].
    pub fn new(median: f64, lo: f64, hi: f64) -> Self {
        Self {
            median,
            ci_lo: Some(lo),
            ci_hi: Some(hi),
            ..Default::default()
        }
    }

    /// The median with its interval (the median itself where the
    /// interval was not recorded).
    pub fn estimate(&self) -> Estimate {
        Estimate::new(
            self.median,
            self.ci_lo.unwrap_or(self.median),
            self.ci_hi.unwrap_or(self.median),
        )
    }

    /// The capability estimate of a time (the low quantile with its
    /// interval) or, in profiles from before it was recorded, the median.
    pub fn time(&self) -> Estimate {
        self.low_quantile.unwrap_or_else(|| self.estimate())
    }

    /// The capability estimate of a rate (the high quantile with its
    /// interval) or, in profiles from before it was recorded, the median.
    pub fn rate(&self) -> Estimate {
        self.high_quantile.unwrap_or_else(|| self.estimate())
    }

    /// The same sample with the median and its interval times `factor`
    /// (a round trip from a one-way time).
    pub fn scaled(&self, factor: f64) -> Self {
        Self {
            median: self.median * factor,
            ci_lo: self.ci_lo.map(|x| x * factor),
            ci_hi: self.ci_hi.map(|x| x * factor),
            ..self.clone()
        }
    }
}

/// A whole number of bytes or items, also when written as a float
/// (`33554432.0`, as hand-written sections have it).
pub(crate) fn whole<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let x = f64::deserialize(d)?;
    if x >= 0.0 && x.fract() == 0.0 && x <= u64::MAX as f64 {
        Ok(x as u64)
    } else {
        Err(serde::de::Error::custom(format!(
            "{x} is not a whole number >= 0"
        )))
    }
}

/// [`whole`] of an optional figure.
pub(crate) fn whole_opt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match Option::<f64>::deserialize(d)? {
        None => Ok(None),
        Some(x) => whole(serde::de::value::F64Deserializer::<D::Error>::new(x)).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_samples_fall_back_to_the_median() {
        let s: Sample =
            serde_json::from_str(r#"{"median": 2.0, "ci_lo": 1.0, "ci_hi": 3.0}"#).unwrap();
        assert_eq!(s.time(), Estimate::new(2.0, 1.0, 3.0));
        assert_eq!(s.rate(), Estimate::new(2.0, 1.0, 3.0));
        let q = Sample {
            low_quantile: Some(Estimate::new(1.5, 1.4, 1.6)),
            ..s.clone()
        };
        assert_eq!(q.time().point, 1.5);
        assert_eq!(q.rate().point, 2.0);
        assert_eq!(s.scaled(2.0).ci_hi, Some(6.0));
        let bare: Sample = serde_json::from_str(r#"{"median": 2.0}"#).unwrap();
        assert_eq!(bare.time(), Estimate::exact(2.0));
        // An unbounded interval end, written as null, reads as f64::MAX.
        let e: Estimate = serde_json::from_str(r#"{"point": 1.0, "lo": 0.5, "hi": null}"#).unwrap();
        assert_eq!(e.hi, f64::MAX);
        #[derive(serde::Deserialize)]
        struct Bytes {
            #[serde(deserialize_with = "whole")]
            n: u64,
        }
        let b: Bytes = serde_json::from_str(r#"{"n": 33554432.0}"#).unwrap();
        assert_eq!(b.n, 33554432);
        assert!(serde_json::from_str::<Bytes>(r#"{"n": 1.5}"#).is_err());
    }
}
