//! Carrying the intervals of calibrated parameters into a prediction by
//! Monte Carlo.
//!
//! Each parameter is drawn from a normal distribution matching its
//! [`Estimate`]: mean = the point, standard deviation = the standard error
//! when the estimate has one, else (hi − lo)/3.92 (a 95% interval spans
//! ±1.96 σ). Draws outside a parameter's admissible range (a time or a
//! bandwidth ≤ 0, a fraction outside [0, 1]) are redrawn: the distribution
//! is truncated, not clipped. Correlated parameters (a fit's covariance)
//! are drawn as θ = θ̂ + L·z with L the Cholesky factor of the covariance.
//!
//! A fit's parameters can instead come as resamples (a bootstrap): a draw
//! then takes one resample at random for them, which keeps their bounds and
//! their correlations, and draws the remaining parameters as above.
//!
//! The random numbers come from SplitMix64 with a fixed seed, and normals
//! from the Box–Muller transform, so a run is reproducible bit for bit.

use models::random::SplitMix64;
use models::Estimate;
use serde::Serialize;

/// Half-width of a 95% interval in standard deviations.
pub const Z95: f64 = 1.959_963_984_540_054;

/// One uncertain parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub name: String,
    /// The unit of the value ("s", "B/s", "" for a fraction).
    pub unit: &'static str,
    pub estimate: Estimate,
    /// Where the value came from ("profile: DRAM bandwidth, 1 thread", "--network").
    pub source: String,
    /// Admissible range, exclusive of a 0 lower bound for positive figures.
    #[serde(skip)]
    pub lower: f64,
    #[serde(skip)]
    pub upper: f64,
    #[serde(skip)]
    pub strictly_positive: bool,
}

impl Param {
    /// A figure that must be > 0 (a time, a bandwidth).
    pub fn positive(name: &str, unit: &'static str, estimate: Estimate, source: &str) -> Self {
        Self {
            name: name.into(),
            unit,
            estimate,
            source: source.into(),
            lower: 0.0,
            upper: f64::INFINITY,
            strictly_positive: true,
        }
    }

    /// A figure that must be ≥ 0.
    pub fn non_negative(name: &str, unit: &'static str, estimate: Estimate, source: &str) -> Self {
        Self {
            strictly_positive: false,
            ..Self::positive(name, unit, estimate, source)
        }
    }

    /// A figure with no admissible bound, such as the intercept of a line
    /// that only describes values inside its own range.
    pub fn unbounded(name: &str, unit: &'static str, estimate: Estimate, source: &str) -> Self {
        Self {
            lower: f64::NEG_INFINITY,
            strictly_positive: false,
            ..Self::positive(name, unit, estimate, source)
        }
    }

    /// A fraction in [0, 1].
    pub fn fraction(name: &str, estimate: Estimate, source: &str) -> Self {
        Self {
            upper: 1.0,
            strictly_positive: false,
            ..Self::positive(name, "", estimate, source)
        }
    }

    /// The standard deviation the draws use.
    pub fn sd(&self) -> f64 {
        sd_of(&self.estimate)
    }

    fn admits(&self, v: f64) -> bool {
        v.is_finite()
            && v <= self.upper
            && if self.strictly_positive {
                v > self.lower
            } else {
                v >= self.lower
            }
    }
}

/// σ of an estimate: its standard error, or (hi − lo)/3.92.
pub fn sd_of(e: &Estimate) -> f64 {
    match e.std_err {
        Some(se) if se.is_finite() && se >= 0.0 => se,
        _ => ((e.hi - e.lo) / (2.0 * Z95)).abs(),
    }
}

/// A set of parameters and how they vary together.
#[derive(Debug, Clone, PartialEq)]
pub struct Uncertainty {
    pub params: Vec<Param>,
    /// Lower-triangular L with L·Lᵀ = covariance (diagonal of σ for
    /// independent parameters).
    chol: Vec<Vec<f64>>,
    /// Resamples of the first parameters (each of the same length k): a
    /// draw takes one of them for parameters 0..k.
    samples: Vec<Vec<f64>>,
}

/// Most redraws of one parameter vector before giving up on truncation and
/// clamping into range (only reached when the range holds almost none of
/// the distribution).
const MAX_REDRAWS: usize = 1000;

impl Uncertainty {
    /// Independent parameters.
    pub fn independent(params: Vec<Param>) -> Self {
        let n = params.len();
        let mut chol = vec![vec![0.0; n]; n];
        for (i, p) in params.iter().enumerate() {
            chol[i][i] = p.sd();
        }
        Self {
            params,
            chol,
            samples: Vec::new(),
        }
    }

    /// Parameters whose first k are drawn from `samples` (each a vector of
    /// k values, e.g. a fit's bootstrap), the rest independently. Without
    /// samples every parameter is drawn independently.
    pub fn resampled(params: Vec<Param>, samples: Vec<Vec<f64>>) -> Self {
        let k = samples.first().map_or(0, Vec::len);
        let ok = k <= params.len() && samples.iter().all(|s| s.len() == k);
        Self {
            samples: if ok { samples } else { Vec::new() },
            ..Self::independent(params)
        }
    }

    /// These parameters followed by `more`, drawn independently of them.
    pub fn extended(&self, more: Vec<Param>) -> Self {
        let mut out = self.clone();
        let n = self.params.len() + more.len();
        for row in &mut out.chol {
            row.resize(n, 0.0);
        }
        for p in more {
            let mut row = vec![0.0; n];
            row[out.params.len()] = p.sd();
            out.chol.push(row);
            out.params.push(p);
        }
        out
    }

    /// Parameters with a covariance matrix (falls back to the diagonal when
    /// the matrix is not positive definite).
    pub fn correlated(params: Vec<Param>, covariance: &[Vec<f64>]) -> Self {
        match cholesky(covariance) {
            Some(chol) if chol.len() == params.len() => Self {
                params,
                chol,
                samples: Vec::new(),
            },
            _ => Self::independent(params),
        }
    }

    /// The point values.
    pub fn point(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.estimate.point).collect()
    }

    /// The same parameters with every interval scaled by `k` (0 gives the
    /// point estimate in every draw).
    pub fn scaled(&self, k: f64) -> Self {
        let mut out = self.clone();
        for p in &mut out.params {
            let e = p.estimate;
            p.estimate = Estimate {
                point: e.point,
                lo: e.point - k * (e.point - e.lo),
                hi: e.point + k * (e.hi - e.point),
                std_err: e.std_err.map(|s| k * s),
            };
        }
        for row in &mut out.chol {
            for v in row.iter_mut() {
                *v *= k;
            }
        }
        let mean = self.point();
        for s in &mut out.samples {
            for (j, v) in s.iter_mut().enumerate() {
                *v = mean[j] + k * (*v - mean[j]);
            }
        }
        out
    }

    /// One draw of all parameters.
    pub fn draw(&self, rng: &mut SplitMix64) -> Vec<f64> {
        let mean = self.point();
        let n = mean.len();
        let fixed: &[f64] = if self.samples.is_empty() {
            &[]
        } else {
            &self.samples[rng.below(self.samples.len() as u64) as usize]
        };
        let k = fixed.len();
        for _ in 0..MAX_REDRAWS {
            let z: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let theta: Vec<f64> = (0..n)
                .map(|i| {
                    if i < k {
                        fixed[i]
                    } else {
                        mean[i] + (k..=i).map(|j| self.chol[i][j] * z[j]).sum::<f64>()
                    }
                })
                .collect();
            if theta.iter().zip(&self.params).all(|(v, p)| p.admits(*v)) {
                return theta;
            }
        }
        mean.iter()
            .zip(&self.params)
            .enumerate()
            .map(|(i, (v, p))| fixed.get(i).copied().unwrap_or(*v).clamp(p.lower, p.upper))
            .collect()
    }
}

/// Cholesky factor of a symmetric positive-definite matrix.
pub fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        if a[i].len() != n {
            return None;
        }
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = a[i][i] - s;
                if !(d > 0.0 && d.is_finite()) {
                    return None;
                }
                l[i][j] = d.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    Some(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_respect_ranges_and_spread() {
        let p = Param::positive("bw", "B/s", Estimate::new(1.0, 0.0, 2.0), "test");
        assert!((p.sd() - 2.0 / 3.92).abs() < 1e-3);
        let u = Uncertainty::independent(vec![
            p,
            Param::fraction("f", Estimate::new(0.01, 0.0, 0.05), "t"),
        ]);
        let mut r = SplitMix64::new(3);
        for _ in 0..2000 {
            let d = u.draw(&mut r);
            assert!(d[0] > 0.0);
            assert!((0.0..=1.0).contains(&d[1]));
        }
        let exact = u.scaled(0.0);
        assert_eq!(exact.draw(&mut r), vec![1.0, 0.01]);
    }

    #[test]
    fn resampled_parameters_come_from_the_samples() {
        let u = Uncertainty::resampled(
            vec![
                Param::positive("a", "s", Estimate::new(1.0, 0.5, 2.0), "t"),
                Param::fraction("f", Estimate::new(0.1, 0.0, 0.2), "t"),
            ],
            vec![vec![0.5, 0.0], vec![2.0, 0.2]],
        )
        .extended(vec![Param::positive(
            "B",
            "B/s",
            Estimate::new(10.0, 9.0, 11.0),
            "t",
        )]);
        let mut r = SplitMix64::new(5);
        let mut seen = [false; 2];
        for _ in 0..200 {
            let d = u.draw(&mut r);
            assert_eq!(d.len(), 3);
            let i = if d[0] == 0.5 { 0 } else { 1 };
            assert_eq!(d[1], [0.0, 0.2][i], "{d:?}");
            seen[i] = true;
            assert!(d[2] > 8.0 && d[2] < 12.0 && d[2] != 10.0, "{d:?}");
        }
        assert_eq!(seen, [true, true]);
        assert_eq!(u.scaled(0.0).draw(&mut r), vec![1.0, 0.1, 10.0]);
    }

    #[test]
    fn cholesky_of_a_covariance() {
        let l = cholesky(&[vec![4.0, 2.0], vec![2.0, 3.0]]).unwrap();
        assert_eq!(l[0][0], 2.0);
        assert_eq!(l[1][0], 1.0);
        assert!((l[1][1] - 2f64.sqrt()).abs() < 1e-12);
        assert!(cholesky(&[vec![1.0, 2.0], vec![2.0, 1.0]]).is_none());
    }
}
