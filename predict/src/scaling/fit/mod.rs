//! `predict scaling --fit runs.csv`: a scaling model fitted to any code's
//! own runs, its communication term chosen from the runs.
//!
//! The model is T(P) = T1·(f + (1 − f)/P) + c·g(P) (lecture §4.6 and §4.1,
//! §4.2), g chosen among the candidates of [`super::terms`] by the AICc
//! of each candidate's bounded fit ([`models::fit::aicc`]). The fit is weighted least squares of
//! relative errors under the physical bounds 0 ≤ f ≤ 1, c ≥ 0
//! ([`models::fit::non_negative`] on a = T1·f, b = T1·(1 − f), c): a run's
//! noise is taken to scale with its time, so the fast runs at large P
//! count as much as the slow ones. The weights are 1/T̂², of the model's
//! own times, settled by iteration (iteratively reweighted least squares,
//! the quasi-likelihood of errors proportional to the mean), not 1/T² of
//! the measured ones: a run far below the others (a failed or mis-timed
//! run) would otherwise weigh as much as all of them together and flatten
//! the fit towards itself. Since the weights depend on the candidate, its
//! AICc carries the likelihood's 2·Σ ln(T̂ᵢ/Tᵢ) too. The 95%
//! intervals are percentiles of a residual bootstrap
//! ([`models::fit::bootstrap_joint_with`]): every resample is refitted as
//! the runs were, its weights settled again and under the same bounds, so
//! the intervals carry the weights' variability and no interval crosses
//! a bound. The resampled (T1, f, c) then drive
//! the Monte Carlo of the knees.
//!
//! When the runs carry a measured communication time, computation and
//! communication are fitted separately: T − comm = T1·(f + (1 − f)/P) and
//! comm = c·g(P), the term chosen on the communication alone. Both share
//! each run's comm, so their bootstrap draws the same runs for both
//! ([`models::fit::bootstrap_joint_with`], which refits each resample's
//! parts together, the weights settled again on their sum).
//!
//! Each run at P ≥ 2 also gets the Karp–Flatt serial fraction
//! e = (1/S − 1/P)/(1 − 1/P) ([`models::speedup::karp_flatt`]) with
//! S = T(1)/T(P): an e that grows with P points at overhead (the c term),
//! a constant e at a true serial fraction.

use models::fit::{aicc_min_points, bootstrap_joint_with, percentile, t_stretched, FitError};
use models::random::SplitMix64;
use models::Estimate;
use serde::Serialize;

pub use super::runs::{read_runs, Run};
use super::terms::{Domain, Ranked, Term};

mod diagnostics;
mod weighted;
use super::uncertainty::{Param, Uncertainty};
use crate::error::BadInput;
use weighted::{Data, Settled};

/// Bootstrap resamples of the fit.
pub const RESAMPLES: usize = 2000;

/// How to fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    /// The domain of the surface-to-volume term (`--n`, `--dims`); without
    /// it that term is not a candidate.
    pub domain: Option<Domain>,
    /// Seed of the bootstrap.
    pub seed: u64,
}

/// Karp–Flatt at one P.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KarpFlatt {
    pub p: f64,
    /// Median time of the runs at this P.
    pub time_s: f64,
    pub speedup: f64,
    pub serial_fraction: f64,
}

/// The fitted parameters T1, f, c with their bootstrap intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamsFit {
    pub names: Vec<String>,
    pub params: Vec<Estimate>,
    /// Weighted R² of the total time, 1 − Σwr²/Σw(T − T̄_w)².
    pub r_squared: f64,
    pub weighted_rss: f64,
    pub n: usize,
    /// Bootstrap resamples behind the intervals.
    pub resamples: usize,
    pub method: String,
}

/// The fit of the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunsFit {
    pub runs: Vec<Run>,
    /// The chosen communication term.
    pub term: Term,
    /// The model with the chosen term.
    pub formula: String,
    /// The candidates that could be assessed, best first.
    pub ranking: Vec<Ranked>,
    /// Computation and communication fitted separately from a measured
    /// communication column.
    pub separate: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<Domain>,
    pub fit: ParamsFit,
    pub karp_flatt: Vec<KarpFlatt>,
    /// "measured" when runs at P = 1 exist, else "fitted T1".
    pub t1_source: String,
    pub notes: Vec<String>,
    /// The bootstrap's (T1, f, c), for the Monte Carlo.
    #[serde(skip)]
    pub samples: Vec<Vec<f64>>,
}

impl RunsFit {
    /// (T1, f, c) at their point estimates.
    pub fn values(&self) -> [f64; 3] {
        [
            self.fit.params[0].point,
            self.fit.params[1].point,
            self.fit.params[2].point,
        ]
    }

    /// The largest measured P.
    pub fn p_max(&self) -> f64 {
        self.runs.iter().map(|r| r.p).fold(1.0, f64::max)
    }
}

fn candidates(d: &Data) -> Vec<Term> {
    Term::ALL
        .into_iter()
        .filter(|&t| t != Term::Surface || d.domain.is_some())
        .collect()
}

/// Scores every candidate; the ones the runs cannot assess go to `notes`.
fn rank(d: &Data, notes: &mut Vec<String>) -> Vec<Ranked> {
    let mut ranking = Vec::new();
    for term in candidates(d) {
        match d.score(term) {
            Ok(score) if score.is_finite() => ranking.push(Ranked { term, score }),
            Ok(_) => notes.push(format!("{}: no finite score", term.name())),
            Err(e) => notes.push(format!(
                "{} is not ranked: the runs cannot tell it apart ({e})",
                term.name()
            )),
        }
    }
    // Stable: a tie keeps the simpler term first.
    ranking.sort_by(|a, b| a.score.total_cmp(&b.score));
    ranking
}

/// Refuses runs too few to fit the model's shape (distinct P) or to score
/// every candidate term (runs, since AICc counts each run; repeats at one
/// P count).
fn too_few(source: &str, d: &Data) -> Option<BadInput> {
    let (k, n) = (d.distinct.len(), d.t.len());
    let (needed_p, what) = if d.comm.is_some() {
        (
            3,
            "fitting T1 and f to the computation and choosing the communication term",
        )
    } else {
        (4, "choosing the communication term and fitting T1, f and c")
    };
    let needed_runs = candidates(d)
        .into_iter()
        .map(|t| aicc_min_points(d.coefficients(t)))
        .max()
        .unwrap_or(0)
        .max(needed_p);
    (k < needed_p || n < needed_runs).then(|| {
        BadInput(format!(
            "{source}: {n} run(s) at {k} different P; {what} needs {needed_runs} or more runs at {needed_p} or more different P (e.g. 1, 2, 4, 8, 16, 32, or repeats at one P)"
        ))
    })
}

/// (a, b, c) of `term` under its settled weights, and their bootstrap
/// resamples: each resample's times are refitted as the runs were, its
/// weights settled again.
fn fit_term(
    d: &Data,
    term: Term,
    settled: &Settled,
    rng: &mut SplitMix64,
) -> Result<(Vec<f64>, Vec<Vec<f64>>), FitError> {
    let resettled = |t: Vec<f64>, comm: Option<Vec<f64>>| {
        let s = d.with_times(t, comm).settle(term)?;
        Ok(vec![s.fit.abc.to_vec()])
    };
    let boot = match &d.comm {
        None => {
            let rows = d.joint_rows(term);
            bootstrap_joint_with(
                &[(&rows, &d.t)],
                Some(&settled.w),
                RESAMPLES,
                rng,
                |ys, _| resettled(ys[0].clone(), None),
            )?
            .1
        }
        // The computation T − comm and the communication comm share each
        // run's measurement: one resample of the runs serves both fits.
        Some(comm) => {
            let rows = d.compute_rows();
            let compute = d.compute(comm);
            let g = d.g(term);
            let mut parts: Vec<(&[Vec<f64>], &[f64])> = vec![(&rows, &compute)];
            if term != Term::None {
                parts.push((&g, comm));
            }
            bootstrap_joint_with(&parts, Some(&settled.w), RESAMPLES, rng, |ys, _| {
                let comm = ys.get(1).unwrap_or(comm);
                let t = ys[0].iter().zip(comm).map(|(a, b)| a + b).collect();
                resettled(t, Some(comm.clone()))
            })?
            .1
        }
    };
    Ok((
        settled.fit.abc.to_vec(),
        boot.into_iter().map(|mut b| b.remove(0)).collect(),
    ))
}

/// (a, b, c) -> (T1, f, c).
fn natural(abc: &[f64]) -> Option<Vec<f64>> {
    let t1 = abc[0] + abc[1];
    (t1 > 0.0).then(|| vec![t1, abc[0] / t1, abc[2]])
}

/// Chooses the communication term and fits T1, f and c to the runs.
pub fn fit_runs(runs: Vec<Run>, source: &str, opts: FitOptions) -> Result<RunsFit, BadInput> {
    let d = Data::new(&runs, opts.domain);
    if let Some(e) = too_few(source, &d) {
        return Err(e);
    }
    let mut notes = Vec::new();
    let ranking = rank(&d, &mut notes);
    let term = ranking.first().map(|r| r.term).ok_or_else(|| {
        BadInput(format!(
            "{source}: no communication term can be fitted to these runs; add runs at more different P"
        ))
    })?;
    if let Some(r) = ranking.get(1).filter(|r| r.score - ranking[0].score < 2.0) {
        notes.push(format!(
            "{} is within ΔAICc = {:.2} of {}: these runs do not clearly tell the two apart (runs at larger P would)",
            r.term.name(),
            r.score - ranking[0].score,
            term.name()
        ));
    }
    let cannot = |e: FitError| {
        BadInput(format!(
            "{source}: the {} model cannot be fitted: {e}",
            term.name()
        ))
    };
    let settled = d.settle(term).map_err(cannot)?;
    let w = &settled.w;
    let mut rng = SplitMix64::new(opts.seed);
    let (abc, boot) = fit_term(&d, term, &settled, &mut rng).map_err(cannot)?;
    let point = natural(&abc).ok_or_else(|| {
        BadInput(format!(
            "{source}: the fitted time of one process is not positive"
        ))
    })?;
    let natural_samples: Vec<Vec<f64>> = boot.iter().filter_map(|s| natural(s)).collect();
    // Runs at one P share its placement and network state, so the
    // process counts, not the runs, are the independent evidence for the
    // model's shape: the t quantile takes distinct P − parameters degrees
    // of freedom (as Extra-P fits one value per P).
    let dof = d.distinct.len().saturating_sub(if d.comm.is_some() {
        2
    } else {
        term.parameters()
    });
    // Each parameter's resamples stretched by t/z: the intervals printed
    // and the Monte Carlo of the knees carry the same spread.
    let bounds = [(0.0, f64::INFINITY), (0.0, 1.0), (0.0, f64::INFINITY)];
    let columns: Vec<Vec<f64>> = (0..3)
        .map(|j| {
            let v: Vec<f64> = natural_samples.iter().map(|s| s[j]).collect();
            t_stretched(point[j], &v, dof, bounds[j])
        })
        .collect();
    let params: Vec<Estimate> = (0..3).map(|j| percentile(point[j], &columns[j])).collect();
    let samples: Vec<Vec<f64>> = (0..natural_samples.len())
        .map(|i| columns.iter().map(|c| c[i]).collect())
        .collect();
    let fit = ParamsFit {
        names: vec!["T1".into(), "f".into(), "c".into()],
        r_squared: r_squared(&d, w, term, &point),
        weighted_rss: wrss(&d, w, term, &point),
        n: runs.len(),
        resamples: samples.len(),
        method: "non-negative weighted least squares of relative errors (weights 1/T̂² of the fitted times, iterated); 95% residual-bootstrap percentile intervals (each resample's weights settled again), stretched by t/z with (distinct P − parameters) degrees of freedom".into(),
        params,
    };
    diagnostics::bound_notes(term, &fit, &mut notes);
    diagnostics::far_off_notes(&d, term, &point, &runs, &mut notes);
    diagnostics::poor_fit_note(&fit, &mut notes);
    let (kf, t1_source) = diagnostics::karp_flatt_table(&runs, &d.distinct, point[0], &mut notes);
    Ok(RunsFit {
        runs,
        term,
        formula: format!("T(P) = T1·(f + (1 − f)/P) + {}", term.formula(opts.domain)),
        ranking,
        separate: d.comm.is_some(),
        domain: opts.domain,
        fit,
        karp_flatt: kf,
        t1_source,
        notes,
        samples,
    })
}

/// Σwᵢ(Tᵢ − T(Pᵢ))² of the model `theta`.
fn wrss(d: &Data, w: &[f64], term: Term, theta: &[f64]) -> f64 {
    (0..d.t.len())
        .map(|i| w[i] * (d.t[i] - super::terms::time_s(term, d.domain, theta, d.p[i])).powi(2))
        .sum()
}

fn r_squared(d: &Data, w: &[f64], term: Term, theta: &[f64]) -> f64 {
    let sw: f64 = w.iter().sum();
    let mean = d.t.iter().zip(w).map(|(t, w)| t * w).sum::<f64>() / sw;
    let tss: f64 = d.t.iter().zip(w).map(|(t, w)| w * (t - mean).powi(2)).sum();
    if tss > 0.0 {
        1.0 - wrss(d, w, term, theta) / tss
    } else {
        1.0
    }
}

/// The fitted T1, f, c as an uncertainty drawn from the bootstrap's
/// resamples (so draws keep the bounds and the correlations of the fit).
pub fn uncertainty(f: &RunsFit, source: &str) -> Uncertainty {
    resampled(f, source, 3)
}

/// T1 and f alone (the computation), for a code whose communication is
/// described instead of fitted.
pub fn compute_uncertainty(f: &RunsFit, source: &str) -> Uncertainty {
    resampled(f, source, 2)
}

/// The first `k` of T1, f, c with their columns of the resamples.
fn resampled(f: &RunsFit, source: &str, k: usize) -> Uncertainty {
    let e = &f.fit.params;
    let src = format!("fit of {source}");
    let mut params = vec![
        Param::positive("T1", "s", e[0], &src),
        Param::fraction("f", e[1], &src),
        Param::non_negative("c", "s", e[2], &src),
    ];
    params.truncate(k);
    Uncertainty::resampled(params, f.samples.iter().map(|s| s[..k].to_vec()).collect())
}
