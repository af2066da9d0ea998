//! One candidate's fit to the runs: weighted least squares of relative
//! errors under the bounds 0 ≤ f ≤ 1, c ≥ 0, its weights 1/T̂² of its own
//! fitted times settled by iteration (iteratively reweighted least
//! squares), and its AICc with the weights' share of the likelihood.

use models::fit::{aicc, non_negative, FitError, RSS_FLOOR};

use super::Run;
use crate::scaling::terms::{Domain, Term};

/// The runs as fitting data.
pub(super) struct Data {
    pub(super) p: Vec<f64>,
    pub(super) t: Vec<f64>,
    pub(super) comm: Option<Vec<f64>>,
    pub(super) distinct: Vec<f64>,
    pub(super) domain: Option<Domain>,
}

/// A candidate's fit under given weights.
pub(super) struct Fitted {
    /// T̂ at each run.
    pub(super) times: Vec<f64>,
    /// The scored part's weighted residual sum of squares (the time's, or
    /// the communication's when it was measured).
    pub(super) rss: f64,
    /// The coefficients (a, b, c) of T̂ = a + b/P + c·g(P).
    pub(super) abc: [f64; 3],
}

/// A candidate's fit with its settled weights.
pub(super) struct Settled {
    /// 1/T̂² of the fit's own times.
    pub(super) w: Vec<f64>,
    /// The fit under `w`.
    pub(super) fit: Fitted,
    /// Σ ln(T̂ᵢ/Tᵢ), the likelihood's share of the weights.
    pub(super) log_scale: f64,
}

/// Most reweighting rounds; the weights usually settle within ten.
const REWEIGHTS: usize = 100;

/// A weight 1/T̂² takes T̂ as at least this share of the run's measured
/// time: a candidate that puts a run near zero cannot give it a weight
/// without bound.
const LEAST_FITTED_SHARE: f64 = 0.1;

impl Data {
    pub(super) fn new(runs: &[Run], domain: Option<Domain>) -> Self {
        let mut distinct: Vec<f64> = runs.iter().map(|r| r.p).collect();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        let comm = runs.iter().map(|r| r.comm_s).collect::<Option<Vec<f64>>>();
        Self {
            p: runs.iter().map(|r| r.p).collect(),
            t: runs.iter().map(|r| r.time_s).collect(),
            comm,
            distinct,
            domain,
        }
    }

    pub(super) fn g(&self, term: Term) -> Vec<Vec<f64>> {
        self.p
            .iter()
            .map(|&p| vec![term.g(p, self.domain)])
            .collect()
    }

    /// Rows (1, 1/P[, g(P)]).
    pub(super) fn joint_rows(&self, term: Term) -> Vec<Vec<f64>> {
        self.p
            .iter()
            .map(|&p| {
                let mut r = vec![1.0, 1.0 / p];
                if term != Term::None {
                    r.push(term.g(p, self.domain));
                }
                r
            })
            .collect()
    }

    /// The same runs with other times (a bootstrap resample's).
    pub(super) fn with_times(&self, t: Vec<f64>, comm: Option<Vec<f64>>) -> Self {
        Self {
            p: self.p.clone(),
            t,
            comm,
            distinct: self.distinct.clone(),
            domain: self.domain,
        }
    }

    /// Rows (1, 1/P) of the computation alone.
    pub(super) fn compute_rows(&self) -> Vec<Vec<f64>> {
        self.p.iter().map(|&p| vec![1.0, 1.0 / p]).collect()
    }

    pub(super) fn compute(&self, comm: &[f64]) -> Vec<f64> {
        self.t.iter().zip(comm).map(|(t, c)| t - c).collect()
    }

    /// The coefficients the candidate's score fits: (a, b[, c]) to the
    /// time, or c alone (none for no term) to a measured communication.
    pub(super) fn coefficients(&self, term: Term) -> usize {
        match (&self.comm, term) {
            (None, _) => term.parameters(),
            (Some(_), Term::None) => 0,
            (Some(_), _) => 1,
        }
    }

    /// The candidate's fit under the weights `w`.
    pub(super) fn fitted(&self, term: Term, w: &[f64]) -> Result<Fitted, FitError> {
        let Some(comm) = &self.comm else {
            let rows = self.joint_rows(term);
            let fit = non_negative(&rows, &self.t, Some(w))?;
            let b = &fit.beta;
            return Ok(Fitted {
                times: rows.iter().map(|r| fit.predict(r)).collect(),
                rss: fit.weighted_rss,
                abc: [b[0], b[1], b.get(2).copied().unwrap_or(0.0)],
            });
        };
        let rows = self.compute_rows();
        let compute = non_negative(&rows, &self.compute(comm), Some(w))?;
        let (comm_fit, rss, c) = if term == Term::None {
            let rss = comm.iter().zip(w).map(|(c, w)| w * c * c).sum();
            (vec![0.0; comm.len()], rss, 0.0)
        } else {
            let g = self.g(term);
            let fit = non_negative(&g, comm, Some(w))?;
            let comm_fit = g.iter().map(|r| fit.predict(r)).collect();
            (comm_fit, fit.weighted_rss, fit.beta[0])
        };
        Ok(Fitted {
            times: rows
                .iter()
                .zip(comm_fit)
                .map(|(r, c)| compute.predict(r) + c)
                .collect(),
            rss,
            abc: [compute.beta[0], compute.beta[1], c],
        })
    }

    /// The candidate's fit under weights 1/T̂² of its own times, from
    /// 1/T² of the measured ones, refitted until they settle.
    pub(super) fn settle(&self, term: Term) -> Result<Settled, FitError> {
        let weights = |fitted: &[f64]| -> Vec<f64> {
            fitted
                .iter()
                .zip(&self.t)
                .map(|(f, t)| f.max(LEAST_FITTED_SHARE * t.abs()).powi(-2))
                .collect()
        };
        let mut w = weights(&self.t);
        let mut fit = self.fitted(term, &w)?;
        for _ in 0..REWEIGHTS {
            let next = weights(&fit.times);
            let moved = next
                .iter()
                .zip(&w)
                .map(|(a, b)| (a / b - 1.0).abs())
                .fold(0.0, f64::max);
            w = next;
            fit = self.fitted(term, &w)?;
            if moved < 1e-9 {
                break;
            }
        }
        // The weights the last fit used are the ones its residuals carry.
        let log_scale = w
            .iter()
            .zip(&self.t)
            .map(|(w, t)| -0.5 * w.ln() - t.ln())
            .sum();
        Ok(Settled { w, fit, log_scale })
    }

    /// The candidate's AICc (of the communication alone when it was
    /// measured), with the settled weights' share of the likelihood.
    pub(super) fn score(&self, term: Term) -> Result<f64, FitError> {
        let s = self.settle(term)?;
        let scored = self.comm.as_deref().unwrap_or(&self.t);
        let floor = RSS_FLOOR * scored.iter().zip(&s.w).map(|(y, w)| w * y * y).sum::<f64>();
        Ok(aicc(s.fit.rss.max(floor), self.t.len(), self.coefficients(term))? + 2.0 * s.log_scale)
    }
}
