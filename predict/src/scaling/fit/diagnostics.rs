//! What the fit of one's own runs says about them beside its parameters:
//! the Karp–Flatt serial fraction at each P (lecture §4.6), the runs far
//! off the fit, a fit that does not describe the runs, and parameters at
//! their bounds.

use models::speedup::karp_flatt;
use models::stats::median;
use models::units::Si;

use super::{Data, KarpFlatt, ParamsFit, Run, Term};
use crate::scaling::terms::time_s;

/// Below this weighted R² the chosen model is said not to describe the runs.
const POOR_R_SQUARED: f64 = 0.5;

/// Says so when the chosen model explains little of the runs.
pub(super) fn poor_fit_note(fit: &ParamsFit, notes: &mut Vec<String>) {
    if fit.r_squared < POOR_R_SQUARED {
        notes.push(format!(
            "the fit explains little of how the runs' times vary (R² = {:.2}): Amdahl's law with one communication term does not describe these runs, and the curves below follow the model, not the runs",
            fit.r_squared
        ));
    }
}

/// How far beyond the runs' typical scatter a run lies before it is
/// named: robust z-scores of ln(T/T̂) above this.
const FAR_OFF_Z: f64 = 5.0;

/// Names each run whose time lies far off the fit, measured against the
/// runs' own scatter: |ln(Tᵢ/T̂ᵢ)| > 5·s, with s = 1.4826·median|ln(T/T̂)|
/// (a robust scale of the residuals about the fit, which the far runs
/// themselves do not inflate), and off by a factor of 1.1 or more either
/// way. Such a run is usually a failed or mis-timed one, and it still pulls
/// the fit.
pub(super) fn far_off_notes(
    d: &Data,
    term: Term,
    theta: &[f64],
    runs: &[Run],
    notes: &mut Vec<String>,
) {
    let fitted: Vec<f64> =
        d.p.iter()
            .map(|&p| time_s(term, d.domain, theta, p))
            .collect();
    let logs: Vec<f64> = d.t.iter().zip(&fitted).map(|(t, f)| (t / f).ln()).collect();
    if logs.iter().any(|l| !l.is_finite()) {
        return;
    }
    let scatter = 1.4826 * median(logs.iter().map(|l| l.abs()).collect());
    for ((run, l), f) in runs.iter().zip(&logs).zip(&fitted) {
        if l.abs() > (FAR_OFF_Z * scatter).max(1.1f64.ln()) {
            notes.push(format!(
                "the run at P = {} (line {}: {}) is {:.2}× the fit's {}, far beyond the other runs' scatter (±{:.1}%): a failed or mis-timed run pulls the whole fit; check it, and drop it if it is one",
                run.p,
                run.line,
                Si(run.time_s, "s"),
                l.exp(),
                Si(*f, "s"),
                100.0 * scatter.exp_m1()
            ));
        }
    }
}

pub(super) fn bound_notes(term: Term, fit: &ParamsFit, notes: &mut Vec<String>) {
    let f = fit.params[1];
    if f.point == 0.0 {
        notes.push("f = 0 at its bound: the runs show no serial part".into());
    }
    if term != Term::None && fit.params[2].point == 0.0 {
        notes.push(format!(
            "c = 0 at its bound: the runs show no {} communication",
            term.name()
        ));
    }
}

pub(super) fn karp_flatt_table(
    runs: &[Run],
    distinct: &[f64],
    fitted_t1: f64,
    notes: &mut Vec<String>,
) -> (Vec<KarpFlatt>, String) {
    let measured: Vec<f64> = runs
        .iter()
        .filter(|r| r.p == 1.0)
        .map(|r| r.time_s)
        .collect();
    let (t1, source) = if measured.is_empty() {
        (fitted_t1, "fitted T1 (no run at P = 1)".to_string())
    } else {
        (median(measured), "measured at P = 1".to_string())
    };
    let mut kf = Vec::new();
    for &p in distinct.iter().filter(|&&p| p >= 2.0) {
        let t = median(runs.iter().filter(|r| r.p == p).map(|r| r.time_s).collect());
        let s = t1 / t;
        match karp_flatt(s, p) {
            Ok(e) => kf.push(KarpFlatt {
                p,
                time_s: t,
                speedup: s,
                serial_fraction: e,
            }),
            Err(e) => notes.push(format!("no Karp–Flatt fraction at P = {p}: {e}")),
        }
    }
    (kf, source)
}
