//! Least squares with non-negative coefficients, the AICc information
//! criterion, and a residual bootstrap whose intervals stay inside the
//! bounds.
//!
//! * [`non_negative`]: β̂ = argmin Σwᵢ(yᵢ − xᵢᵀβ)² subject to β ≥ 0. For the
//!   few columns of a scaling model every subset S of columns is tried: the
//!   optimum is the unconstrained fit on its passive set S (the KKT
//!   conditions), that fit is feasible, and every feasible subset fit has a
//!   residual at least as large, so the feasible subset fit with the least
//!   residual is the optimum (2ᵖ small solves, exact, no iteration).
//! * [`aicc`]: the small-sample Akaike information criterion of a
//!   least-squares fit, AICc = n·ln(RSS_w/n) + 2k + 2k(k + 1)/(n − k − 1)
//!   with k the fitted coefficients plus one for the residual variance;
//!   lower is better, and a difference of 2 or more is a clear preference.
//! * [`bootstrap`]: B refits to ŷ + r*, where r* is resampled from the
//!   weighted residuals √wᵢ·rᵢ/√(1 − hᵢ) (hᵢ the leverage of point i:
//!   a fit pulls towards its high-leverage points, whose raw residuals
//!   understate the noise), centred, and divided by √wᵢ again. Each
//!   refit is non-negative, so percentile intervals ([`percentile`]) never
//!   cross a bound, unlike β̂ ± t·se. [`bootstrap_joint`] resamples
//!   several fits to the same points with the same draws, and
//!   [`bootstrap_joint_with`] refits each resample by the caller's whole
//!   estimator (weights settled by iteration, for one).

use nalgebra::DMatrix;

use super::linear::WeightedSolver;
use super::{check_data, FitError};
use crate::random::SplitMix64;
use crate::Estimate;

/// Most columns [`non_negative`] accepts (it tries 2ᵖ subsets).
pub const MAX_COLUMNS: usize = 12;

/// A least-squares fit with β ≥ 0.
#[derive(Debug, Clone, PartialEq)]
pub struct NonNegativeFit {
    pub beta: Vec<f64>,
    /// Σwᵢ(yᵢ − xᵢᵀβ̂)².
    pub weighted_rss: f64,
}

impl NonNegativeFit {
    /// xᵀβ̂ for one design row.
    pub fn predict(&self, row: &[f64]) -> f64 {
        row.iter().zip(&self.beta).map(|(a, b)| a * b).sum()
    }
}

fn design(rows: &[Vec<f64>], cols: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(rows.len(), cols.len(), |i, j| rows[i][cols[j]])
}

fn rss(rows: &[Vec<f64>], y: &[f64], w: &[f64], beta: &[f64]) -> f64 {
    rows.iter()
        .zip(y)
        .zip(w)
        .map(|((r, &yi), &wi)| {
            let f: f64 = r.iter().zip(beta).map(|(a, b)| a * b).sum();
            wi * (yi - f).powi(2)
        })
        .sum()
}

/// Weighted least squares with every coefficient ≥ 0 (`rows[i]` is xᵢᵀ,
/// weights all 1 when `None`).
///
/// ```
/// use models::fit::non_negative;
/// // y = 2 + 3x exactly: the unconstrained fit is already feasible.
/// let rows: Vec<Vec<f64>> = (1..=4).map(|x| vec![1.0, x as f64]).collect();
/// let y = [5.0, 8.0, 11.0, 14.0];
/// let f = non_negative(&rows, &y, None)?;
/// assert!((f.beta[0] - 2.0).abs() < 1e-9 && (f.beta[1] - 3.0).abs() < 1e-9);
/// // A falling line cannot have a non-negative slope: the slope sticks at 0.
/// let f = non_negative(&rows, &[4.0, 3.0, 2.0, 1.0], None)?;
/// assert_eq!(f.beta[1], 0.0);
/// assert!((f.beta[0] - 2.5).abs() < 1e-9);
/// # Ok::<(), models::fit::FitError>(())
/// ```
///
/// # Errors
/// [`FitError::TooFewPoints`] with fewer points than columns,
/// [`FitError::Singular`] when the columns are (nearly) dependent, so that
/// a coefficient is not determined, and the data errors of
/// [`super::least_squares`].
pub fn non_negative(
    rows: &[Vec<f64>],
    y: &[f64],
    weights: Option<&[f64]>,
) -> Result<NonNegativeFit, FitError> {
    let p = rows.first().map_or(0, Vec::len);
    if p == 0 || p > MAX_COLUMNS {
        return Err(FitError::InvalidOption {
            detail: format!("a non-negative fit takes 1 to {MAX_COLUMNS} columns, not {p}"),
        });
    }
    if let Some(bad) = rows.iter().find(|r| r.len() != p) {
        return Err(FitError::LengthMismatch {
            what: "a design row",
            expected: p,
            got: bad.len(),
        });
    }
    let w = check_data(rows.len(), y, weights)?;
    if rows.len() < p {
        return Err(FitError::TooFewPoints {
            what: "this fit",
            needed: p,
            got: rows.len(),
        });
    }
    let all: Vec<usize> = (0..p).collect();
    // The full design must have full rank: otherwise a coefficient is not
    // determined and the subset search would pick one arbitrarily.
    WeightedSolver::new(&design(rows, &all), &w)?;
    let mut best = NonNegativeFit {
        beta: vec![0.0; p],
        weighted_rss: rss(rows, y, &w, &vec![0.0; p]),
    };
    for mask in 1u32..(1 << p) {
        let cols: Vec<usize> = (0..p).filter(|j| mask & (1 << j) != 0).collect();
        let Ok(solver) = WeightedSolver::new(&design(rows, &cols), &w) else {
            continue;
        };
        let sub = solver.solve(y);
        if sub.iter().any(|b| b.is_nan() || *b < 0.0) {
            continue;
        }
        let mut beta = vec![0.0; p];
        for (k, &j) in cols.iter().enumerate() {
            beta[j] = sub[k];
        }
        let r = rss(rows, y, &w, &beta);
        if r < best.weighted_rss {
            best = NonNegativeFit {
                beta,
                weighted_rss: r,
            };
        }
    }
    Ok(best)
}

/// The fewest points [`aicc`] scores a fit of `coefficients` on: k + 2
/// with k = coefficients + 1, so that its correction's denominator
/// n − k − 1 is positive.
pub fn aicc_min_points(coefficients: usize) -> usize {
    coefficients + 3
}

/// AICc = n·ln(RSS_w/n) + 2k + 2k(k + 1)/(n − k − 1) of a least-squares
/// fit of `coefficients` to `n` points (k = coefficients + 1 for the
/// variance). A zero residual counts as the smallest positive number.
///
/// # Errors
/// [`FitError::TooFewPoints`] unless n ≥ [`aicc_min_points`].
pub fn aicc(weighted_rss: f64, n: usize, coefficients: usize) -> Result<f64, FitError> {
    let k = coefficients + 1;
    let needed = aicc_min_points(coefficients);
    if n < needed {
        return Err(FitError::TooFewPoints {
            what: "the information criterion",
            needed,
            got: n,
        });
    }
    let (nf, kf) = (n as f64, k as f64);
    let rss = weighted_rss.max(f64::MIN_POSITIVE);
    Ok(nf * (rss / nf).ln() + 2.0 * kf + 2.0 * kf * (kf + 1.0) / (nf - kf - 1.0))
}

/// Residual bootstrap of [`non_negative`]: `resamples` coefficient vectors
/// refitted to ŷᵢ + r*ⱼ/√wᵢ (r*ⱼ drawn with replacement from the
/// leverage-adjusted weighted residuals √wⱼ·rⱼ/√(1 − hⱼ), centred).
/// Resamples whose fit fails are left out.
///
/// # Errors
/// The errors of [`non_negative`] on the data itself.
pub fn bootstrap(
    rows: &[Vec<f64>],
    y: &[f64],
    weights: Option<&[f64]>,
    resamples: usize,
    rng: &mut SplitMix64,
) -> Result<(NonNegativeFit, Vec<Vec<f64>>), FitError> {
    let (mut fits, samples) = bootstrap_joint(&[(rows, y)], weights, resamples, rng)?;
    let samples = samples.into_iter().map(|mut s| s.remove(0)).collect();
    Ok((fits.remove(0), samples))
}

/// One resample of [`bootstrap_joint`]: a coefficient vector per part.
pub type JointResample = Vec<Vec<f64>>;

/// [`bootstrap`] of several fits to the same points at once (`parts`: each
/// a design and its response), every resample drawing the same points'
/// residuals for all of them, so that fits whose responses share a
/// measurement (a run's computation and its communication, T − comm and
/// comm) keep the correlation it gives them. A resample is left out of
/// every part when one part's fit fails.
///
/// # Errors
/// The errors of [`non_negative`] on the data itself; parts of different
/// lengths.
pub fn bootstrap_joint(
    parts: &[(&[Vec<f64>], &[f64])],
    weights: Option<&[f64]>,
    resamples: usize,
    rng: &mut SplitMix64,
) -> Result<(Vec<NonNegativeFit>, Vec<JointResample>), FitError> {
    bootstrap_joint_with(parts, weights, resamples, rng, |responses, w| {
        parts
            .iter()
            .zip(responses)
            .map(|(&(rows, _), ys)| non_negative(rows, ys, Some(w)).map(|f| f.beta))
            .collect()
    })
}

/// [`bootstrap_joint`] whose resamples are refitted by `refit`, given each
/// part's resampled response and the weights of the fits to the data. An
/// estimator that does more than one weighted fit (weights that depend on
/// its own fitted values, settled by iteration) is bootstrapped whole this
/// way: each resample goes through all of it, so the intervals carry the
/// weights' variability too. A resample `refit` refuses is left out.
///
/// # Errors
/// As [`bootstrap_joint`].
pub fn bootstrap_joint_with(
    parts: &[(&[Vec<f64>], &[f64])],
    weights: Option<&[f64]>,
    resamples: usize,
    rng: &mut SplitMix64,
    mut refit: impl FnMut(&[Vec<f64>], &[f64]) -> Result<JointResample, FitError>,
) -> Result<(Vec<NonNegativeFit>, Vec<JointResample>), FitError> {
    struct Part {
        fitted: Vec<f64>,
        res: Vec<f64>,
    }
    let n = parts.first().map_or(0, |(rows, _)| rows.len());
    let mut fits = Vec::with_capacity(parts.len());
    let mut prepared = Vec::with_capacity(parts.len());
    let mut w = Vec::new();
    for &(rows, y) in parts {
        if rows.len() != n {
            return Err(FitError::LengthMismatch {
                what: "a part of a joint bootstrap",
                expected: n,
                got: rows.len(),
            });
        }
        let fit = non_negative(rows, y, weights)?;
        w = check_data(n, y, weights)?;
        let all: Vec<usize> = (0..fit.beta.len()).collect();
        let h = WeightedSolver::new(&design(rows, &all), &w)?.leverages();
        let fitted: Vec<f64> = rows.iter().map(|r| fit.predict(r)).collect();
        let mut res: Vec<f64> = (0..n)
            .map(|i| w[i].sqrt() * (y[i] - fitted[i]) / (1.0 - h[i]).max(1e-9).sqrt())
            .collect();
        let mean = res.iter().sum::<f64>() / n as f64;
        for r in &mut res {
            *r -= mean;
        }
        fits.push(fit);
        prepared.push(Part { fitted, res });
    }
    let mut out = Vec::with_capacity(resamples);
    let mut picks = vec![0; n];
    let mut responses = vec![vec![0.0; n]; prepared.len()];
    for _ in 0..resamples {
        for p in &mut picks {
            *p = rng.below(n as u64) as usize;
        }
        for (part, ys) in prepared.iter().zip(&mut responses) {
            for i in 0..n {
                ys[i] = part.fitted[i] + part.res[picks[i]] / w[i].sqrt();
            }
        }
        if let Ok(betas) = refit(&responses, &w) {
            out.push(betas);
        }
    }
    Ok((fits, out))
}

/// `samples` moved away from `point` by t₀.₉₇₅,dof / z₀.₉₇₅: the bootstrap
/// mimics the estimate's spread with σ known, and for few points the
/// Student t quantile is the right multiplier of an estimated σ. A sample
/// moved past a bound stays on it (`lower`, `upper`). With `dof` = 0 (no
/// t quantile) the samples are returned as they are. A Monte Carlo that
/// draws the resamples (the knees of a scaling fit) then carries the same
/// spread as the intervals printed.
pub fn t_stretched(
    point: f64,
    samples: &[f64],
    dof: usize,
    (lower, upper): (f64, f64),
) -> Vec<f64> {
    let k = if dof == 0 {
        1.0
    } else {
        super::t_quantile_95(dof) / 1.959_963_984_540_054
    };
    samples
        .iter()
        .map(|&x| (point + k * (x - point)).clamp(lower, upper))
        .collect()
}

/// The 95% percentile interval of `samples` around `point`, with the
/// samples' standard deviation as the standard error. The interval is
/// widened to hold the point when the samples all fall on one side of it.
/// For few points, stretch the samples first ([`t_stretched`]).
pub fn percentile(point: f64, samples: &[f64]) -> Estimate {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 2 {
        return Estimate::exact(point);
    }
    v.sort_by(f64::total_cmp);
    let q = |q: f64| crate::stats::quantile(&v, q);
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt();
    Estimate {
        point,
        lo: q(0.025).min(point),
        hi: q(0.975).max(point),
        std_err: Some(sd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_coefficients_stick_at_zero_and_the_rest_refit() {
        // y = 1 + 0·x + 2·x² with x ≥ 0 but a pull towards a negative x term.
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0];
        let rows: Vec<Vec<f64>> = xs.iter().map(|&x| vec![1.0, x, x * x]).collect();
        let y: Vec<f64> = xs.iter().map(|&x| 1.0 - 0.5 * x + 2.0 * x * x).collect();
        let f = non_negative(&rows, &y, None).unwrap();
        assert_eq!(f.beta[1], 0.0);
        assert!(f.beta.iter().all(|b| *b >= 0.0));
        // Among fits with the x term at 0, it is the least-squares one.
        let sub: Vec<Vec<f64>> = xs.iter().map(|&x| vec![1.0, x * x]).collect();
        let l = crate::fit::least_squares_rows(&sub, &y, None).unwrap();
        assert!((l.coefficients[0].point - f.beta[0]).abs() < 1e-9);
        assert!((l.coefficients[1].point - f.beta[2]).abs() < 1e-9);
    }

    #[test]
    fn dependent_columns_are_refused() {
        let rows: Vec<Vec<f64>> = (1..6).map(|x| vec![1.0, x as f64, 1.0]).collect();
        let e = non_negative(&rows, &[1.0, 2.0, 3.0, 4.0, 5.0], None).unwrap_err();
        assert!(matches!(e, FitError::Singular { .. }), "{e}");
    }

    #[test]
    fn aicc_penalises_parameters() {
        // Same residual: the fit with more coefficients scores worse.
        let a = aicc(1.0, 10, 2).unwrap();
        let b = aicc(1.0, 10, 3).unwrap();
        // n = 10, k = 3: 10·ln(0.1) + 6 + 24/6.
        assert!((a - (10.0 * 0.1f64.ln() + 6.0 + 4.0)).abs() < 1e-12);
        assert!(b > a);
        assert!(aicc(1.0, 4, 2).is_err());
    }

    #[test]
    fn bootstrap_intervals_respect_the_bound_and_hold_the_point() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let rows: Vec<Vec<f64>> = xs.iter().map(|&x| vec![1.0, x]).collect();
        let mut rng = SplitMix64::new(7);
        // Slope 0 plus noise: about half the refits want a negative slope.
        let y: Vec<f64> = xs.iter().map(|_| 5.0 + 0.1 * rng.normal()).collect();
        let (fit, boot) = bootstrap(&rows, &y, None, 500, &mut rng).unwrap();
        assert!(boot.len() > 450);
        let slope: Vec<f64> = boot.iter().map(|b| b[1]).collect();
        let e = percentile(fit.beta[1], &slope);
        assert!(e.lo >= 0.0 && e.lo <= e.point && e.point <= e.hi, "{e:?}");
        assert!(e.hi > 0.0);
    }

    #[test]
    fn a_joint_bootstrap_keeps_the_correlation_the_parts_share() {
        // Two responses that share each point's noise with opposite signs,
        // as T − comm and comm share a run's comm: their resampled
        // intercepts move together.
        let mut rng = SplitMix64::new(3);
        let noise: Vec<f64> = (0..12).map(|_| rng.normal()).collect();
        let rows: Vec<Vec<f64>> = vec![vec![1.0]; 12];
        let up: Vec<f64> = noise.iter().map(|e| 10.0 + e).collect();
        let down: Vec<f64> = noise.iter().map(|e| 20.0 - e).collect();
        let (fits, boot) =
            bootstrap_joint(&[(&rows, &up), (&rows, &down)], None, 400, &mut rng).unwrap();
        assert_eq!((fits.len(), boot.len()), (2, 400));
        let (a, b): (Vec<f64>, Vec<f64>) = boot.iter().map(|r| (r[0][0], r[1][0])).unzip();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (ma, mb) = (mean(&a), mean(&b));
        let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let var = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
        let corr = cov / (var(&a, ma) * var(&b, mb)).sqrt();
        assert!(corr < -0.99, "{corr}");
        // One part alone is the plain bootstrap, draw for draw.
        let (mut r1, mut r2) = (SplitMix64::new(9), SplitMix64::new(9));
        let (_, plain) = bootstrap(&rows, &up, None, 50, &mut r1).unwrap();
        let (_, joint) = bootstrap_joint(&[(&rows, &up)], None, 50, &mut r2).unwrap();
        assert!(plain.iter().zip(&joint).all(|(p, j)| *p == j[0]));
        assert!(
            bootstrap_joint(&[(&rows, &up), (&rows[..6], &up[..6])], None, 5, &mut r1).is_err()
        );
    }

    /// The plain refit through `bootstrap_joint_with` is `bootstrap_joint`,
    /// draw for draw, and a resample its refit refuses is left out.
    #[test]
    fn a_joint_bootstrap_with_its_own_refit() {
        let rows: Vec<Vec<f64>> = (1..=10).map(|x| vec![1.0, x as f64]).collect();
        let y: Vec<f64> = (1..=10)
            .map(|x| 2.0 + 0.5 * x as f64 + 0.01 * (x % 3) as f64)
            .collect();
        let parts: [(&[Vec<f64>], &[f64]); 1] = [(&rows, &y)];
        let (mut r1, mut r2) = (SplitMix64::new(5), SplitMix64::new(5));
        let (_, plain) = bootstrap_joint(&parts, None, 40, &mut r1).unwrap();
        let (_, with) = bootstrap_joint_with(&parts, None, 40, &mut r2, |ys, w| {
            Ok(vec![non_negative(&rows, &ys[0], Some(w))?.beta])
        })
        .unwrap();
        assert_eq!(plain, with);
        let mut calls = 0;
        let (_, every_other) = bootstrap_joint_with(&parts, None, 40, &mut r1, |ys, w| {
            calls += 1;
            if calls % 2 == 0 {
                return Err(FitError::LengthMismatch {
                    what: "a refused resample",
                    expected: 0,
                    got: 1,
                });
            }
            Ok(vec![non_negative(&rows, &ys[0], Some(w))?.beta])
        })
        .unwrap();
        assert_eq!((calls, every_other.len()), (40, 20));
    }

    #[test]
    fn a_t_stretch_widens_interval_and_spread_alike_and_keeps_the_bounds() {
        let samples: Vec<f64> = (0..1000)
            .map(|i| 10.0 + (i as f64 - 499.5) / 1000.0)
            .collect();
        let plain = percentile(10.0, &samples);
        // Two degrees of freedom: t = 4.303, a stretch of 2.195.
        let k = 4.302_652_729_911_275 / 1.959_963_984_540_054;
        let wide = percentile(10.0, &t_stretched(10.0, &samples, 2, (0.0, f64::INFINITY)));
        assert!(
            (10.0 - wide.lo - k * (10.0 - plain.lo)).abs() < 1e-9,
            "{wide:?}"
        );
        assert!(
            (wide.hi - 10.0 - k * (plain.hi - 10.0)).abs() < 1e-9,
            "{wide:?}"
        );
        let se = |e: &Estimate| e.std_err.unwrap();
        assert!((se(&wide) / se(&plain) - k).abs() < 1e-9);
        // A bound stops the stretch; no t quantile leaves the samples.
        let bounded = t_stretched(10.0, &samples, 2, (9.5, 10.5));
        assert!(bounded.iter().all(|&x| (9.5..=10.5).contains(&x)));
        assert!(bounded.contains(&9.5) && bounded.contains(&10.5));
        assert_eq!(t_stretched(10.0, &samples, 0, (0.0, 20.0)), samples);
    }
}
