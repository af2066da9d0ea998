//! A point estimate with its 95% interval: the one shape every measured or
//! fitted figure takes in this toolkit.

use serde::{Deserialize, Serialize};

/// A point estimate with a 95% interval `[lo, hi]` and, where it is known,
/// the standard error of the point. The default (all zero) stands for "not
/// recorded" in files written before a field existed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Estimate {
    /// The point estimate (a median or, for capability figures, a low
    /// quantile of times for samples; a least-squares value for fits).
    pub point: f64,
    /// Lower end of the 95% interval.
    pub lo: f64,
    /// Upper end of the 95% interval; `f64::MAX` stands for "no upper
    /// bound" (JSON has no infinity), which files written with an infinite
    /// end hold as null.
    #[serde(deserialize_with = "max_if_null")]
    #[schemars(with = "Option<f64>")]
    pub hi: f64,
    /// Standard error of the point, when the method gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std_err: Option<f64>,
}

/// A number, or `f64::MAX` for null (an unbounded interval end).
fn max_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::MAX))
}

impl Estimate {
    /// An estimate with an interval and no standard error.
    pub fn new(point: f64, lo: f64, hi: f64) -> Self {
        Self {
            point,
            lo,
            hi,
            std_err: None,
        }
    }

    /// An exact value: the interval is the point itself.
    pub fn exact(point: f64) -> Self {
        Self::new(point, point, point)
    }

    /// Half the width of the interval relative to the point (0 for an exact value).
    pub fn relative_half_width(&self) -> f64 {
        if self.point == 0.0 {
            0.0
        } else {
            (self.hi - self.lo).abs() / 2.0 / self.point.abs()
        }
    }

    /// The same estimate under a monotone map `f` (for example a reciprocal):
    /// the interval ends are mapped and reordered.
    pub fn map(&self, f: impl Fn(f64) -> f64) -> Self {
        let (a, b) = (f(self.lo), f(self.hi));
        Self {
            point: f(self.point),
            lo: a.min(b),
            hi: a.max(b),
            std_err: None,
        }
    }
}
