//! Least-squares fits that calibrate the performance models.
//!
//! Every fitted parameter is reported as an [`Estimate`]: the
//! point value, a 95% interval and the standard error.
//!
//! * [`linear`] — weighted linear least squares, β̂ = (XᵀWX)⁻¹XᵀWy, solved
//!   by an SVD of the column-scaled W^½X (never the normal equations), and
//!   the straight line y = a + b·x ([`line()`]).
//! * [`mod@segmented`] — piecewise fits whose breakpoints are found exactly
//!   by dynamic programming and whose number of pieces is chosen by a
//!   penalised BIC (protocol regimes of message time, cache plateaus of
//!   latency).
//! * [`constrained`] — least squares with non-negative coefficients
//!   (exact subset search), the AICc information criterion, and a
//!   residual bootstrap whose percentile intervals respect the bounds.
//! * [`nonlinear`](mod@nonlinear) — nonlinear least squares through argmin's
//!   Nelder–Mead, with intervals from a numerical Jacobian.
//! * [`FitError`] — every refusal, as one sentence saying what to change.
//!
//! # Weights
//!
//! Weights are relative inverse variances, wᵢ ∝ 1/σᵢ²: only their ratios
//! matter, because the residual variance is estimated from the data as
//! s² = Σwᵢrᵢ²/(n − p). Timing data that spans decades usually wants
//! relative errors: pass [`relative_weights`]`(y)` (wᵢ = 1/yᵢ²) so that the
//! largest sizes do not dominate.
//!
//! # Intervals
//!
//! With p parameters and n points, a parameter's 95% interval is
//! β̂ⱼ ± t₀.₉₇₅,ₙ₋ₚ·se(β̂ⱼ), where se(β̂ⱼ)² is the j-th diagonal entry of
//! the covariance s²(XᵀWX)⁻¹ (for a nonlinear model X is the Jacobian at the
//! optimum). A fit therefore needs n ≥ p + 1 points.

pub mod constrained;
mod error;
pub mod linear;
pub mod nonlinear;
pub mod segmented;

pub use constrained::{
    aicc, aicc_min_points, bootstrap, bootstrap_joint, bootstrap_joint_with, non_negative,
    percentile, t_stretched, JointResample, NonNegativeFit,
};
pub use error::FitError;
pub use linear::{least_squares, least_squares_rows, line, LineFit, LinearFit};
pub use nonlinear::{nonlinear, nonlinear_with, NonlinearFit, NonlinearOptions};
pub use segmented::{
    segmented, Segment, SegmentFit, SegmentKind, SegmentedFit, SegmentedOptions, DEFAULT_PENALTY,
};

use crate::Estimate;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Relative floor on a weighted residual sum of squares an information
/// criterion scores: below 10⁻¹⁸·Σwᵢyᵢ² a residual is rounding noise in
/// an exact fit, so candidates that fit exactly tie instead of being ranked
/// by their rounding.
pub const RSS_FLOOR: f64 = 1e-18;

/// Relative weights wᵢ = 1/yᵢ², which make a least-squares fit minimise the
/// sum of squared *relative* residuals Σ((yᵢ − ŷᵢ)/yᵢ)².
///
/// # Errors
/// [`FitError::NonFinite`] for a NaN or infinite `y`, and
/// [`FitError::ZeroForRelativeWeight`] for a zero `y`.
pub fn relative_weights(y: &[f64]) -> Result<Vec<f64>, FitError> {
    check_finite("y", y)?;
    y.iter()
        .enumerate()
        .map(|(index, &v)| {
            if v == 0.0 {
                Err(FitError::ZeroForRelativeWeight { index })
            } else {
                Ok(1.0 / (v * v))
            }
        })
        .collect()
}

/// The two-sided 95% quantile t₀.₉₇₅ of Student's t with `dof` degrees of
/// freedom (for example 12.706 for 1, 2.228 for 10, → 1.960 as dof → ∞).
///
/// # Panics
/// If `dof` is zero.
pub fn t_quantile_95(dof: usize) -> f64 {
    assert!(dof > 0, "Student's t needs at least one degree of freedom");
    StudentsT::new(0.0, 1.0, dof as f64)
        .expect("location 0, scale 1 and positive freedom are valid")
        .inverse_cdf(0.975)
}

/// An [`Estimate`] `point ± t·se` with its standard error.
pub(crate) fn estimate_from_se(point: f64, se: f64, t: f64) -> Estimate {
    Estimate {
        point,
        lo: point - t * se,
        hi: point + t * se,
        std_err: Some(se),
    }
}

/// Fails on the first NaN or infinite value.
pub(crate) fn check_finite(what: &'static str, v: &[f64]) -> Result<(), FitError> {
    match v.iter().position(|a| !a.is_finite()) {
        Some(index) => Err(FitError::NonFinite {
            what,
            index,
            value: v[index],
        }),
        None => Ok(()),
    }
}

/// Checks `y` (and `weights`) against `n` points and returns the weights,
/// all ones when none are given.
pub(crate) fn check_data(
    n: usize,
    y: &[f64],
    weights: Option<&[f64]>,
) -> Result<Vec<f64>, FitError> {
    if y.len() != n {
        return Err(FitError::LengthMismatch {
            what: "y",
            expected: n,
            got: y.len(),
        });
    }
    check_finite("y", y)?;
    match weights {
        None => Ok(vec![1.0; n]),
        Some(w) => {
            if w.len() != n {
                return Err(FitError::LengthMismatch {
                    what: "weights",
                    expected: n,
                    got: w.len(),
                });
            }
            check_finite("weights", w)?;
            if let Some(index) = w.iter().position(|&a| a <= 0.0) {
                return Err(FitError::NonPositiveWeight {
                    index,
                    value: w[index],
                });
            }
            Ok(w.to_vec())
        }
    }
}

/// How well a weighted least-squares fit with p parameters matches its n
/// points; shared by [`LinearFit`] and [`NonlinearFit`] (and flattened into
/// their JSON).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Goodness {
    /// Weighted R² = 1 − Σwr²/Σw(y − ȳ_w)², with ȳ_w = Σwy/Σw.
    pub r_squared: f64,
    /// Residual standard error s = √(Σwᵢrᵢ²/(n − p)), in the units of y
    /// times √w.
    pub residual_std_error: f64,
    /// The weighted residual sum of squares Σwᵢrᵢ².
    pub weighted_rss: f64,
    /// Number of points n.
    pub n: usize,
    /// Degrees of freedom n − p.
    pub dof: usize,
}

impl Goodness {
    /// The figures of a fit of `params` parameters to `y` with weights `w`
    /// that left `weighted_rss` (n > p, checked by the caller).
    pub(crate) fn new(y: &[f64], w: &[f64], weighted_rss: f64, params: usize) -> Self {
        let n = y.len();
        let dof = n - params;
        Self {
            r_squared: weighted_r_squared(y, w, weighted_rss),
            residual_std_error: (weighted_rss / dof as f64).sqrt(),
            weighted_rss,
            n,
            dof,
        }
    }

    /// The residual variance s² = Σwᵢrᵢ²/(n − p).
    pub fn residual_variance(&self) -> f64 {
        self.weighted_rss / self.dof as f64
    }
}

/// Weighted coefficient of determination R² = 1 − Σwr²/Σw(y − ȳ_w)², with
/// the weighted mean ȳ_w = Σwy/Σw. When every y is equal it is 1 for an
/// exact fit and 0 otherwise.
pub(crate) fn weighted_r_squared(y: &[f64], w: &[f64], weighted_rss: f64) -> f64 {
    let sw: f64 = w.iter().sum();
    let mean = y.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / sw;
    let tss: f64 = y.iter().zip(w).map(|(a, b)| b * (a - mean).powi(2)).sum();
    if tss > 0.0 {
        1.0 - weighted_rss / tss
    } else if weighted_rss == 0.0 {
        1.0
    } else {
        0.0
    }
}
