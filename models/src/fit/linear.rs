//! Weighted linear least squares and the straight line y = a + b·x.
//!
//! The estimate is β̂ = (XᵀWX)⁻¹XᵀWy, computed without forming XᵀWX: the
//! rows of X are scaled by √wᵢ, its columns by their norms (so that the
//! rank test does not depend on units), and the scaled matrix is
//! decomposed by a thin SVD, W^½XD⁻¹ = UΣVᵀ. Then
//! β̂ = D⁻¹VΣ⁻¹UᵀW^½y and (XᵀWX)⁻¹ = D⁻¹VΣ⁻²VᵀD⁻¹.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use super::{check_data, check_finite, estimate_from_se, t_quantile_95, FitError, Goodness};
use crate::Estimate;

/// Smallest singular value, relative to the largest, of the column-scaled
/// design below which the design is called singular.
const RANK_TOLERANCE: f64 = 1e-10;

/// A weighted linear least-squares fit y ≈ Xβ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// β̂ⱼ with the interval β̂ⱼ ± t₀.₉₇₅,ₙ₋ₚ·se(β̂ⱼ), one per design column.
    pub coefficients: Vec<Estimate>,
    /// The covariance s²(XᵀWX)⁻¹ of the coefficients (p rows of p).
    pub covariance: Vec<Vec<f64>>,
    /// R², residual error and degrees of freedom.
    #[serde(flatten)]
    pub goodness: Goodness,
}

impl LinearFit {
    /// The fitted value ŷ = xᵀβ̂ for one design row `row`.
    ///
    /// # Panics
    /// If `row` does not have one value per coefficient.
    pub fn predict(&self, row: &[f64]) -> f64 {
        assert_eq!(
            row.len(),
            self.coefficients.len(),
            "one value per coefficient"
        );
        row.iter()
            .zip(&self.coefficients)
            .map(|(a, b)| a * b.point)
            .sum()
    }
}

/// A weighted straight-line fit y ≈ a + b·x (intercept a, slope b).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineFit {
    /// The intercept a (the value at x = 0) with its 95% interval.
    pub intercept: Estimate,
    /// The slope b with its 95% interval.
    pub slope: Estimate,
    /// The covariance of intercept and slope, s²[(XᵀWX)⁻¹]₀₁.
    pub covariance: f64,
    /// Weighted R² = 1 − Σwr²/Σw(y − ȳ_w)².
    pub r_squared: f64,
    /// Residual standard error s = √(Σwᵢrᵢ²/(n − 2)).
    pub residual_std_error: f64,
    /// The weighted residual sum of squares Σwᵢrᵢ².
    pub weighted_rss: f64,
    /// Number of points n.
    pub n: usize,
    /// Degrees of freedom n − 2.
    pub dof: usize,
}

impl LineFit {
    /// The fitted value a + b·x.
    pub fn predict(&self, x: f64) -> f64 {
        self.intercept.point + self.slope.point * x
    }

    /// Refuses a negative intercept point, for intercepts that are physical
    /// quantities such as the latency T0 of an alpha–beta fit. `what` names
    /// the quantity in the error message ("latency T0").
    ///
    /// # Errors
    /// [`FitError::NegativeIntercept`] when `intercept.point < 0`.
    pub fn require_nonnegative_intercept(&self, what: &str) -> Result<(), FitError> {
        if self.intercept.point < 0.0 {
            Err(FitError::NegativeIntercept {
                what: what.to_string(),
                value: self.intercept.point,
            })
        } else {
            Ok(())
        }
    }
}

/// Weighted linear least squares: β̂ = argmin Σwᵢ(yᵢ − xᵢᵀβ)² =
/// (XᵀWX)⁻¹XᵀWy, with covariance s²(XᵀWX)⁻¹, s² = Σwᵢrᵢ²/(n − p), and
/// 95% intervals β̂ⱼ ± t₀.₉₇₅,ₙ₋ₚ·se(β̂ⱼ).
///
/// `design` is X, one row per point and one column per parameter;
/// `weights` are relative inverse variances (all 1 when `None`).
///
/// # Errors
/// [`FitError::TooFewPoints`] unless n ≥ p + 1, [`FitError::LengthMismatch`],
/// [`FitError::NonFinite`], [`FitError::NonPositiveWeight`], and
/// [`FitError::Singular`] when the columns of X are (nearly) dependent.
pub fn least_squares(
    design: &DMatrix<f64>,
    y: &[f64],
    weights: Option<&[f64]>,
) -> Result<LinearFit, FitError> {
    let (n, p) = design.shape();
    if p == 0 {
        return Err(FitError::InvalidOption {
            detail: "the design has no columns; give at least one parameter".into(),
        });
    }
    let w = check_data(n, y, weights)?;
    for (i, row) in design.row_iter().enumerate() {
        if let Some(v) = row.iter().find(|v| !v.is_finite()) {
            return Err(FitError::NonFinite {
                what: "design row",
                index: i,
                value: *v,
            });
        }
    }
    if n < p + 1 {
        return Err(FitError::TooFewPoints {
            what: "this linear fit",
            needed: p + 1,
            got: n,
        });
    }
    let solver = WeightedSolver::new(design, &w)?;
    let beta = solver.solve(y);
    let fitted = design * &beta;
    let weighted_rss: f64 = (0..n).map(|i| w[i] * (y[i] - fitted[i]).powi(2)).sum();
    let goodness = Goodness::new(y, &w, weighted_rss, p);
    let cov = solver.unscaled_covariance() * goodness.residual_variance();
    let t = t_quantile_95(goodness.dof);
    let coefficients = (0..p)
        .map(|j| estimate_from_se(beta[j], cov[(j, j)].max(0.0).sqrt(), t))
        .collect();
    Ok(LinearFit {
        coefficients,
        covariance: cov
            .row_iter()
            .map(|r| r.iter().copied().collect())
            .collect(),
        goodness,
    })
}

/// [`least_squares`] with the design given as rows (`rows[i]` is xᵢᵀ).
///
/// # Errors
/// As [`least_squares`], and [`FitError::LengthMismatch`] when rows differ
/// in length.
pub fn least_squares_rows(
    rows: &[Vec<f64>],
    y: &[f64],
    weights: Option<&[f64]>,
) -> Result<LinearFit, FitError> {
    let p = rows.first().map_or(0, Vec::len);
    if let Some(bad) = rows.iter().find(|r| r.len() != p) {
        return Err(FitError::LengthMismatch {
            what: "a design row",
            expected: p,
            got: bad.len(),
        });
    }
    let design = DMatrix::from_fn(rows.len(), p, |i, j| rows[i][j]);
    least_squares(&design, y, weights)
}

/// Weighted straight line y ≈ a + b·x: [`least_squares`] with the design
/// rows (1, xᵢ). Needs at least 3 points (one degree of freedom for the
/// intervals) and two distinct x.
///
/// ```
/// use models::fit::line;
///
/// // y = 1 + 2x, plus a little noise.
/// let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let y = [3.05, 4.96, 7.02, 9.01, 10.95, 13.03];
/// let fit = line(&x, &y, None)?;
/// assert!((fit.slope.point - 2.0).abs() < 0.05);
/// assert!(fit.slope.lo < 2.0 && 2.0 < fit.slope.hi);
/// assert!(fit.intercept.lo < 1.0 && 1.0 < fit.intercept.hi);
/// assert!(fit.r_squared > 0.999);
/// // An alpha–beta fit may refuse a negative latency:
/// fit.require_nonnegative_intercept("latency T0")?;
/// # Ok::<(), models::fit::FitError>(())
/// ```
///
/// # Errors
/// [`FitError::AllXEqual`] when every x is the same, and the errors of
/// [`least_squares`].
pub fn line(x: &[f64], y: &[f64], weights: Option<&[f64]>) -> Result<LineFit, FitError> {
    check_finite("x", x)?;
    check_data(x.len(), y, weights)?;
    if x.len() < 3 {
        return Err(FitError::TooFewPoints {
            what: "a line",
            needed: 3,
            got: x.len(),
        });
    }
    if x.iter().all(|&v| v == x[0]) {
        return Err(FitError::AllXEqual);
    }
    let design = DMatrix::from_fn(x.len(), 2, |i, j| if j == 0 { 1.0 } else { x[i] });
    let fit = least_squares(&design, y, weights)?;
    Ok(LineFit {
        intercept: fit.coefficients[0],
        slope: fit.coefficients[1],
        covariance: fit.covariance[0][1],
        r_squared: fit.goodness.r_squared,
        residual_std_error: fit.goodness.residual_std_error,
        weighted_rss: fit.goodness.weighted_rss,
        n: fit.goodness.n,
        dof: fit.goodness.dof,
    })
}

/// The thin SVD of the row-weighted, column-scaled design W^½XD⁻¹ = UΣVᵀ,
/// from which both β̂ and (XᵀWX)⁻¹ follow. Shared with the nonlinear fit,
/// which uses it on the Jacobian.
pub(crate) struct WeightedSolver {
    u: DMatrix<f64>,
    sigma: DVector<f64>,
    v: DMatrix<f64>,
    col_scale: DVector<f64>,
    sqrt_w: DVector<f64>,
}

impl WeightedSolver {
    /// Decomposes `x` (n × p, n ≥ p) with weights `w` (positive, finite).
    pub(crate) fn new(x: &DMatrix<f64>, w: &[f64]) -> Result<Self, FitError> {
        let (n, p) = x.shape();
        let sqrt_w = DVector::from_iterator(n, w.iter().map(|v| v.sqrt()));
        let mut z = x.clone();
        for (i, mut row) in z.row_iter_mut().enumerate() {
            row *= sqrt_w[i];
        }
        let mut col_scale = DVector::zeros(p);
        for (j, mut col) in z.column_iter_mut().enumerate() {
            let norm = col.norm();
            if norm == 0.0 || !norm.is_finite() {
                return Err(FitError::Singular {
                    detail: format!(
                        "column {j} of the design is zero at every point, so its parameter is not determined; drop it or vary that input"
                    ),
                });
            }
            col /= norm;
            col_scale[j] = norm;
        }
        let svd = z.svd(true, true);
        let sigma = svd.singular_values;
        let (u, v_t) = match (svd.u, svd.v_t) {
            (Some(u), Some(v_t)) => (u, v_t),
            _ => {
                return Err(FitError::Singular {
                    detail: "the singular value decomposition of the design failed; check the inputs for extreme values".into(),
                })
            }
        };
        let max = sigma.max();
        let rank = sigma.iter().filter(|&&s| s > RANK_TOLERANCE * max).count();
        if rank < p {
            return Err(FitError::Singular {
                detail: format!(
                    "only {rank} of the {p} parameters can be told apart from these points (their columns are nearly dependent); vary the inputs more or drop a parameter"
                ),
            });
        }
        Ok(Self {
            u,
            sigma,
            v: v_t.transpose(),
            col_scale,
            sqrt_w,
        })
    }

    /// β̂ = D⁻¹VΣ⁻¹UᵀW^½y.
    pub(crate) fn solve(&self, y: &[f64]) -> DVector<f64> {
        let yw = DVector::from_iterator(
            y.len(),
            y.iter().zip(self.sqrt_w.iter()).map(|(a, b)| a * b),
        );
        let mut c = self.u.tr_mul(&yw);
        c.component_div_assign(&self.sigma);
        let mut beta = &self.v * c;
        beta.component_div_assign(&self.col_scale);
        beta
    }

    /// The leverages hᵢ, the diagonal of the hat matrix
    /// W^½X(XᵀWX)⁻¹XᵀW^½ = UUᵀ: the squared norms of U's rows.
    pub(crate) fn leverages(&self) -> Vec<f64> {
        self.u.row_iter().map(|r| r.norm_squared()).collect()
    }

    /// (XᵀWX)⁻¹ = D⁻¹VΣ⁻²VᵀD⁻¹.
    pub(crate) fn unscaled_covariance(&self) -> DMatrix<f64> {
        let p = self.sigma.len();
        let mut vs = self.v.clone();
        for (j, mut col) in vs.column_iter_mut().enumerate() {
            col /= self.sigma[j];
        }
        let mut cov = &vs * vs.transpose();
        for i in 0..p {
            for j in 0..p {
                cov[(i, j)] /= self.col_scale[i] * self.col_scale[j];
            }
        }
        cov
    }
}
