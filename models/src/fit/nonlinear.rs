//! Nonlinear weighted least squares through argmin.
//!
//! Minimises S(θ) = Σwᵢ(yᵢ − f(θ, xᵢ))² with argmin's Nelder–Mead simplex
//! (restarted from its best vertex until a restart no longer improves S),
//! then polishes the optimum with a few damped Gauss–Newton steps solved by
//! the SVD of [`linear`](super::linear). At the optimum θ̂ the Jacobian
//! Jᵢⱼ = ∂f(θ̂, xᵢ)/∂θⱼ is taken by central differences, and
//!
//! * covariance: s²(JᵀWJ)⁻¹ with s² = S(θ̂)/(n − p),
//! * interval: θ̂ⱼ ± t₀.₉₇₅,ₙ₋ₚ·se(θ̂ⱼ),
//! * R² = 1 − S(θ̂)/Σw(y − ȳ_w)².
//!
//! The intervals are the usual linearised ones: good when the model is
//! close to linear in θ over the interval, optimistic otherwise.

use argmin::core::{CostFunction, Error as ArgminError, Executor, State, TerminationReason};
use argmin::solver::neldermead::NelderMead;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use super::linear::WeightedSolver;
use super::{check_data, check_finite, estimate_from_se, t_quantile_95, FitError, Goodness};
use crate::Estimate;

/// Settings of [`nonlinear_with`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NonlinearOptions {
    /// Iteration limit of each Nelder–Mead run; reaching it is
    /// [`FitError::NotConverged`].
    pub max_iters: u64,
    /// Convergence tolerance on the spread (standard deviation) of the
    /// simplex's costs, with S normalised by Σwy², and on the relative
    /// improvement that justifies another restart.
    pub tolerance: f64,
    /// How many times Nelder–Mead is restarted from its best vertex.
    pub restarts: usize,
    /// Size of the initial simplex relative to each parameter (a zero
    /// parameter gets the absolute step 0.00025).
    pub initial_step: f64,
}

impl Default for NonlinearOptions {
    /// 10 000 iterations per run, tolerance 10⁻¹³, 4 restarts, steps of 10%.
    fn default() -> Self {
        Self {
            max_iters: 10_000,
            tolerance: 1e-13,
            restarts: 4,
            initial_step: 0.1,
        }
    }
}

/// A nonlinear least-squares fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NonlinearFit {
    /// Parameter names, as given (or "p0", "p1", … when none were).
    pub names: Vec<String>,
    /// θ̂ⱼ with the interval θ̂ⱼ ± t₀.₉₇₅,ₙ₋ₚ·se(θ̂ⱼ), in the order of `initial`.
    pub params: Vec<Estimate>,
    /// The covariance s²(JᵀWJ)⁻¹ (p rows of p).
    pub covariance: Vec<Vec<f64>>,
    /// R², residual error and degrees of freedom; the weighted residual
    /// sum of squares is S(θ̂).
    #[serde(flatten)]
    pub goodness: Goodness,
    /// Nelder–Mead iterations used, over all restarts.
    pub iterations: u64,
}

impl NonlinearFit {
    /// The estimate of the parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&Estimate> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &self.params[i])
    }

    /// The point values θ̂, ready to pass back to the model.
    pub fn values(&self) -> Vec<f64> {
        self.params.iter().map(|e| e.point).collect()
    }
}

/// Fits y ≈ `model`(θ, x) by weighted least squares from the starting
/// point `initial`, with default [`NonlinearOptions`]. `names` labels the
/// parameters (empty for "p0", "p1", …). Give every parameter a nonzero
/// starting value of the right magnitude: the first simplex is scaled by it.
///
/// ```
/// use models::fit::nonlinear;
///
/// // Amdahl: T(P) = T1·(f + (1 − f)/P), with T1 = 8 and f = 0.1.
/// let p = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
/// let t: Vec<f64> = p.iter().map(|&p| 8.0 * (0.1 + 0.9 / p)).collect();
/// let amdahl = |th: &[f64], p: f64| th[0] * (th[1] + (1.0 - th[1]) / p);
/// let fit = nonlinear(amdahl, &p, &t, None, &[5.0, 0.3], &["T1", "f"])?;
/// assert!((fit.param("f").unwrap().point - 0.1).abs() < 1e-6);
/// # Ok::<(), models::fit::FitError>(())
/// ```
///
/// # Errors
/// See [`nonlinear_with`].
pub fn nonlinear<F: Fn(&[f64], f64) -> f64>(
    model: F,
    x: &[f64],
    y: &[f64],
    weights: Option<&[f64]>,
    initial: &[f64],
    names: &[&str],
) -> Result<NonlinearFit, FitError> {
    nonlinear_with(
        model,
        x,
        y,
        weights,
        initial,
        names,
        &NonlinearOptions::default(),
    )
}

/// [`nonlinear`] with explicit [`NonlinearOptions`].
///
/// # Errors
/// [`FitError::InvalidOption`] for no parameters or a wrong number of
/// names, the input errors of [`line()`](super::line()) (also for `initial`),
/// [`FitError::TooFewPoints`] unless n ≥ p + 1,
/// [`FitError::ModelNotFinite`] when the model is undefined at `initial`,
/// [`FitError::NotConverged`] when Nelder–Mead reaches its iteration limit,
/// and [`FitError::Singular`] when the data do not determine every
/// parameter (a rank-deficient Jacobian at the optimum).
pub fn nonlinear_with<F: Fn(&[f64], f64) -> f64>(
    model: F,
    x: &[f64],
    y: &[f64],
    weights: Option<&[f64]>,
    initial: &[f64],
    names: &[&str],
    options: &NonlinearOptions,
) -> Result<NonlinearFit, FitError> {
    let p = initial.len();
    check_options(p, names, options)?;
    check_finite("x", x)?;
    let w = check_data(x.len(), y, weights)?;
    check_finite("initial", initial)?;
    let n = x.len();
    if n < p + 1 {
        return Err(FitError::TooFewPoints {
            what: "this nonlinear fit",
            needed: p + 1,
            got: n,
        });
    }
    if let Some((xi, value)) = x
        .iter()
        .map(|&xi| (xi, model(initial, xi)))
        .find(|(_, v)| !v.is_finite())
    {
        return Err(FitError::ModelNotFinite { x: xi, value });
    }

    let scale = y.iter().zip(&w).map(|(a, b)| b * a * a).sum::<f64>();
    let problem = Sse {
        model: &model,
        x,
        y,
        w: &w,
        scale: if scale > 0.0 { scale } else { 1.0 },
    };

    let (best, iterations) = minimise(&problem, initial, options)?;

    // Intervals from the Jacobian at the optimum.
    let jac = jacobian(&model, &best, initial, x);
    let names: Vec<String> = if names.is_empty() {
        (0..p).map(|j| format!("p{j}")).collect()
    } else {
        names.iter().map(|s| s.to_string()).collect()
    };
    check_jacobian(&jac, &names)?;
    let solver = WeightedSolver::new(&jac, &w).map_err(|_| FitError::Singular {
        detail: format!(
            "the parameters {} cannot all be told apart from these points (the Jacobian at the optimum is rank-deficient); vary x more or fix a parameter",
            names.join(", ")
        ),
    })?;
    let weighted_rss = problem.sse(&best) * problem.scale;
    let goodness = Goodness::new(y, &w, weighted_rss, p);
    let cov = solver.unscaled_covariance() * goodness.residual_variance();
    let t = t_quantile_95(goodness.dof);
    Ok(NonlinearFit {
        params: (0..p)
            .map(|j| estimate_from_se(best[j], cov[(j, j)].max(0.0).sqrt(), t))
            .collect(),
        names,
        covariance: cov
            .row_iter()
            .map(|r| r.iter().copied().collect())
            .collect(),
        goodness,
        iterations,
    })
}

/// Refuses no parameters, a wrong number of names and non-positive
/// options.
fn check_options(p: usize, names: &[&str], options: &NonlinearOptions) -> Result<(), FitError> {
    if p == 0 {
        return Err(FitError::InvalidOption {
            detail: "no initial parameters were given; give one starting value per parameter"
                .into(),
        });
    }
    if !names.is_empty() && names.len() != p {
        return Err(FitError::InvalidOption {
            detail: format!(
                "{} names were given for {p} parameters; give one name per parameter or none",
                names.len()
            ),
        });
    }
    if !(options.tolerance > 0.0 && options.initial_step > 0.0 && options.max_iters > 0) {
        return Err(FitError::InvalidOption {
            detail: "tolerance, initial_step and max_iters must all be positive".into(),
        });
    }
    Ok(())
}

/// Nelder–Mead from `initial`, restarted from its best vertex while that
/// still helps, then polished by Gauss–Newton: the optimum and the
/// Nelder–Mead iterations used.
fn minimise<F: Fn(&[f64], f64) -> f64>(
    problem: &Sse<'_, F>,
    initial: &[f64],
    options: &NonlinearOptions,
) -> Result<(Vec<f64>, u64), FitError> {
    let mut best = initial.to_vec();
    let mut best_cost = problem.sse(&best);
    let mut iterations = 0;
    for run in 0..=options.restarts {
        let (theta, cost, iters) = nelder_mead(problem, &best, options)?;
        iterations += iters;
        let gain = best_cost - cost;
        if cost < best_cost {
            best = theta;
            best_cost = cost;
        }
        if run > 0 && gain <= options.tolerance * best_cost.max(f64::MIN_POSITIVE) {
            break;
        }
    }
    gauss_newton_polish(problem, &mut best, &mut best_cost);
    Ok((best, iterations))
}

/// Refuses a Jacobian at the optimum that cannot give intervals: a
/// parameter the model does not depend on, or slopes that are not finite.
fn check_jacobian(jac: &DMatrix<f64>, names: &[String]) -> Result<(), FitError> {
    let p = jac.ncols();
    if let Some(j) = (0..p).find(|&j| jac.column(j).iter().all(|&v| v == 0.0)) {
        return Err(FitError::Singular {
            detail: format!(
                "the model does not change with parameter '{}' at these points; drop it or measure where it matters",
                names[j]
            ),
        });
    }
    if jac.iter().any(|v| !v.is_finite()) {
        return Err(FitError::Singular {
            detail: "the model is not finite next to the optimum, so its slopes (and the intervals) cannot be taken; constrain the model".into(),
        });
    }
    Ok(())
}

/// The normalised cost S(θ)/Σwy², +∞ wherever the model is not finite.
struct Sse<'a, F> {
    model: &'a F,
    x: &'a [f64],
    y: &'a [f64],
    w: &'a [f64],
    scale: f64,
}

impl<F: Fn(&[f64], f64) -> f64> Sse<'_, F> {
    fn sse(&self, theta: &[f64]) -> f64 {
        let s: f64 = (0..self.x.len())
            .map(|i| self.w[i] * (self.y[i] - (self.model)(theta, self.x[i])).powi(2))
            .sum::<f64>()
            / self.scale;
        if s.is_finite() {
            s
        } else {
            f64::INFINITY
        }
    }
}

impl<F: Fn(&[f64], f64) -> f64> CostFunction for &Sse<'_, F> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, theta: &Vec<f64>) -> Result<f64, ArgminError> {
        Ok(self.sse(theta))
    }
}

/// One Nelder–Mead run from `start`: (best θ, its cost, iterations).
fn nelder_mead<F: Fn(&[f64], f64) -> f64>(
    problem: &Sse<'_, F>,
    start: &[f64],
    options: &NonlinearOptions,
) -> Result<(Vec<f64>, f64, u64), FitError> {
    let mut simplex = vec![start.to_vec()];
    for j in 0..start.len() {
        let mut v = start.to_vec();
        v[j] += if v[j] != 0.0 {
            options.initial_step * v[j]
        } else {
            0.00025
        };
        simplex.push(v);
    }
    let failed = |e: ArgminError| FitError::NotConverged {
        iterations: 0,
        reason: e.to_string(),
    };
    let solver = NelderMead::new(simplex)
        .with_sd_tolerance(options.tolerance)
        .map_err(failed)?;
    let result = Executor::new(problem, solver)
        .configure(|s| s.max_iters(options.max_iters))
        .timer(false)
        .run()
        .map_err(failed)?;
    let state = result.state();
    let iters = state.get_iter();
    match state.get_termination_reason() {
        Some(TerminationReason::SolverConverged) => {}
        Some(TerminationReason::MaxItersReached) => {
            return Err(FitError::NotConverged {
                iterations: iters,
                reason: format!("the limit of {} iterations was reached", options.max_iters),
            })
        }
        other => {
            return Err(FitError::NotConverged {
                iterations: iters,
                reason: other.map_or_else(|| "it stopped early".into(), |r| r.text().to_string()),
            })
        }
    }
    let theta = state
        .get_best_param()
        .cloned()
        .unwrap_or_else(|| start.to_vec());
    let cost = state.get_best_cost();
    if !cost.is_finite() {
        return Err(FitError::NotConverged {
            iterations: iters,
            reason: "the model was not finite anywhere the simplex went".into(),
        });
    }
    Ok((theta, cost, iters))
}

/// Central-difference Jacobian ∂f(θ, xᵢ)/∂θⱼ, step ∛ε·|θⱼ| (∛ε·|initialⱼ|
/// or ∛ε when θⱼ is zero).
fn jacobian<F: Fn(&[f64], f64) -> f64>(
    model: &F,
    theta: &[f64],
    initial: &[f64],
    x: &[f64],
) -> DMatrix<f64> {
    let eps = f64::EPSILON.cbrt();
    let mut jac = DMatrix::zeros(x.len(), theta.len());
    for j in 0..theta.len() {
        let size = if theta[j] != 0.0 {
            theta[j].abs()
        } else if initial[j] != 0.0 {
            initial[j].abs()
        } else {
            1.0
        };
        let h = eps * size;
        let (mut up, mut down) = (theta.to_vec(), theta.to_vec());
        up[j] += h;
        down[j] -= h;
        let step = up[j] - down[j];
        for (i, &xi) in x.iter().enumerate() {
            jac[(i, j)] = (model(&up, xi) - model(&down, xi)) / step;
        }
    }
    jac
}

/// A few Gauss–Newton steps θ ← θ + λδ, δ = argmin‖W^½(r − Jδ)‖, halving λ
/// until S decreases; stops at the first step that does not help.
fn gauss_newton_polish<F: Fn(&[f64], f64) -> f64>(
    problem: &Sse<'_, F>,
    theta: &mut Vec<f64>,
    cost: &mut f64,
) {
    let initial = theta.clone();
    for _ in 0..10 {
        let jac = jacobian(problem.model, theta, &initial, problem.x);
        if jac.iter().any(|v| !v.is_finite()) {
            return;
        }
        let Ok(solver) = WeightedSolver::new(&jac, problem.w) else {
            return;
        };
        let r: Vec<f64> = (0..problem.x.len())
            .map(|i| problem.y[i] - (problem.model)(theta, problem.x[i]))
            .collect();
        let delta = solver.solve(&r);
        let mut lambda = 1.0;
        let mut improved = false;
        for _ in 0..20 {
            let trial: Vec<f64> = theta
                .iter()
                .zip(delta.iter())
                .map(|(a, d)| a + lambda * d)
                .collect();
            let c = problem.sse(&trial);
            if c < *cost {
                *theta = trial;
                *cost = c;
                improved = true;
                break;
            }
            lambda *= 0.5;
        }
        if !improved {
            return;
        }
    }
}
