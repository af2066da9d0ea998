//! `predict scaling --fit runs.csv`: a scaling model fitted to any code's
//! own runs.
//!
//! The runs are (P, time) pairs. The model is Amdahl's law plus a
//! communication term that grows like the depth of a reduction tree
//! (lecture §4.6 and §4.1):
//!
//! T(P) = T1·(f + (1 − f)/P) + c·log₂P,
//!
//! fitted by weighted nonlinear least squares ([`models::fit::nonlinear`],
//! relative weights 1/T², so that the fast runs at large P count as much as
//! the slow ones). The fit's covariance then drives the Monte Carlo of the
//! knees. Each run at P ≥ 2 also gets the Karp–Flatt serial fraction
//! e = (1/S − 1/P)/(1 − 1/P) ([`models::speedup::karp_flatt`]) with
//! S = T(1)/T(P): an e that grows with P points at overhead (the c term),
//! a constant e at a true serial fraction.

use models::fit::{nonlinear, relative_weights, NonlinearFit};
use models::speedup::karp_flatt;
use models::units::{parse, Dimension};
use serde::Serialize;

use super::curves::AmdahlComm;
use super::uncertainty::{Param, Uncertainty};
use crate::BadInput;

/// One run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Run {
    pub p: f64,
    pub time_s: f64,
    /// Line of the CSV file.
    pub line: u64,
}

/// Column names accepted for P and for the time.
const P_NAMES: [&str; 9] = [
    "p",
    "procs",
    "processes",
    "ranks",
    "np",
    "nprocs",
    "threads",
    "cores",
    "nodes",
];
const T_NAMES: [&str; 10] = [
    "time_s",
    "time",
    "seconds",
    "t",
    "t_s",
    "runtime",
    "runtime_s",
    "elapsed",
    "elapsed_s",
    "wall_s",
];

/// Reads runs from CSV: a header naming a P column and a time column, or
/// no header and P, time as the first two columns. Times take units
/// (`1.5ms`; a bare number is seconds). Errors name the line and column.
pub fn read_runs(text: &str, source: &str) -> Result<Vec<Run>, BadInput> {
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = rd.records();
    let empty = || {
        BadInput(format!(
            "{source} has no runs; expected a header such as `p,time_s` and one line per run"
        ))
    };
    let first = rows.next().ok_or_else(empty)?.map_err(|e| {
        BadInput(format!(
            "{source}: {}",
            crate::roofline::records::csv_error(&e)
        ))
    })?;
    let first_line = first.position().map_or(1, |p| p.line());
    let is_header = first.get(0).is_some_and(|f| f.parse::<f64>().is_err());
    let (cp, ct, header): (usize, usize, Vec<String>) = if is_header {
        let names: Vec<String> = first.iter().map(|h| h.to_ascii_lowercase()).collect();
        let find = |set: &[&str]| names.iter().position(|h| set.contains(&h.as_str()));
        let cp = find(&P_NAMES).ok_or_else(|| {
            BadInput(format!(
                "{source} line {first_line}: no column for P in the header ({}); name it one of: {}",
                names.join(", "),
                P_NAMES.join(", ")
            ))
        })?;
        let ct = find(&T_NAMES).ok_or_else(|| {
            BadInput(format!(
                "{source} line {first_line}: no column for the time in the header ({}); name it one of: {}",
                names.join(", "),
                T_NAMES.join(", ")
            ))
        })?;
        (cp, ct, names)
    } else {
        (0, 1, vec!["p".into(), "time".into()])
    };
    let mut runs = Vec::new();
    let data = (!is_header).then_some(Ok(first)).into_iter().chain(rows);
    for row in data {
        let row = row.map_err(|e| {
            BadInput(format!(
                "{source}: {}",
                crate::roofline::records::csv_error(&e)
            ))
        })?;
        let line = row.position().map_or(0, |p| p.line());
        let at = |c: usize| -> Result<&str, BadInput> {
            match row.get(c) {
                Some(v) if !v.is_empty() => Ok(v),
                _ => Err(BadInput(format!(
                    "{source} line {line}, column {} ({}): the value is missing",
                    c + 1,
                    header[c]
                ))),
            }
        };
        let ps = at(cp)?;
        let p: f64 = ps.parse().map_err(|_| {
            BadInput(format!(
                "{source} line {line}, column {} ({}): '{ps}' is not a number",
                cp + 1,
                header[cp]
            ))
        })?;
        if !(p > 0.0 && p.is_finite()) {
            return Err(BadInput(format!(
                "{source} line {line}, column {} ({}): P = {ps} is not positive",
                cp + 1,
                header[cp]
            )));
        }
        let ts = at(ct)?;
        let t = match parse(ts, Dimension::Time) {
            Ok(v) if !v.cycles => v.value,
            Ok(_) => {
                return Err(BadInput(format!(
                    "{source} line {line}, column {} ({}): '{ts}' is in cycles; give seconds (e.g. 1.5ms)",
                    ct + 1,
                    header[ct]
                )))
            }
            Err(e) => {
                return Err(BadInput(format!(
                    "{source} line {line}, column {} ({}): {e}",
                    ct + 1,
                    header[ct]
                )))
            }
        };
        if !(t > 0.0 && t.is_finite()) {
            return Err(BadInput(format!(
                "{source} line {line}, column {} ({}): the time {ts} is not positive",
                ct + 1,
                header[ct]
            )));
        }
        runs.push(Run { p, time_s: t, line });
    }
    if runs.is_empty() {
        return Err(empty());
    }
    Ok(runs)
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

/// The fit of the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunsFit {
    pub runs: Vec<Run>,
    pub fit: NonlinearFit,
    pub karp_flatt: Vec<KarpFlatt>,
    /// "measured" when runs at P = 1 exist, else "fitted T1".
    pub t1_source: String,
    pub notes: Vec<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Fits T(P) = T1·(f + (1 − f)/P) + c·log₂P to the runs.
pub fn fit_runs(runs: Vec<Run>, source: &str) -> Result<RunsFit, BadInput> {
    let mut distinct: Vec<f64> = runs.iter().map(|r| r.p).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 4 {
        return Err(BadInput(format!(
            "{source}: runs at {} different P; fitting T1, f and c needs runs at 4 or more different P (e.g. 1, 2, 4, 8, 16)",
            distinct.len()
        )));
    }
    let x: Vec<f64> = runs.iter().map(|r| r.p).collect();
    let y: Vec<f64> = runs.iter().map(|r| r.time_s).collect();
    let w = relative_weights(&y).map_err(|e| BadInput(format!("{source}: {e}")))?;
    let p0 = distinct[0];
    let t_p0 = median(
        runs.iter()
            .filter(|r| r.p == p0)
            .map(|r| r.time_s)
            .collect(),
    );
    let t1_guess = t_p0 * p0;
    // A few starting points; the best converged fit wins.
    let mut best: Option<NonlinearFit> = None;
    let mut last_err = None;
    for (f0, c0) in [(0.05, 1e-3), (0.01, 1e-2), (0.2, 1e-4)] {
        match nonlinear(
            AmdahlComm::time_s,
            &x,
            &y,
            Some(&w),
            &[t1_guess, f0, c0 * t1_guess],
            &["T1", "f", "c"],
        ) {
            Ok(f) => {
                if best
                    .as_ref()
                    .map_or(true, |b| f.weighted_rss < b.weighted_rss)
                {
                    best = Some(f);
                }
            }
            Err(e) => last_err = Some(e),
        }
    }
    let fit = best.ok_or_else(|| {
        BadInput(format!(
            "{source}: the model T1·(f + (1 − f)/P) + c·log2(P) cannot be fitted: {}",
            last_err.map_or_else(|| "no fit converged".to_string(), |e| e.to_string())
        ))
    })?;
    let mut notes = Vec::new();
    let v = fit.values();
    if !(0.0..=1.0).contains(&v[1]) {
        notes.push(format!(
            "the fitted serial fraction f = {:.4} is outside [0, 1]: the runs do not follow Amdahl's law (superlinear speed-up from caches?)",
            v[1]
        ));
    }
    if v[2] < 0.0 {
        notes.push(format!(
            "the fitted communication term c = {:.3e} s is negative: the runs speed up faster than the model allows",
            v[2]
        ));
    }
    let measured_t1: Vec<f64> = runs
        .iter()
        .filter(|r| r.p == 1.0)
        .map(|r| r.time_s)
        .collect();
    let (t1, t1_source) = if measured_t1.is_empty() {
        (v[0], "fitted T1 (no run at P = 1)".to_string())
    } else {
        (median(measured_t1), "measured at P = 1".to_string())
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
    Ok(RunsFit {
        runs,
        fit,
        karp_flatt: kf,
        t1_source,
        notes,
    })
}

/// The fitted parameters as an uncertainty with the fit's covariance;
/// draws are truncated to T1 > 0, 0 ≤ f ≤ 1, c ≥ 0.
pub fn uncertainty(f: &RunsFit, source: &str) -> Uncertainty {
    let e = &f.fit.params;
    let src = format!("fit of {source}");
    Uncertainty::correlated(
        vec![
            Param::positive("T1", "s", e[0], &src),
            Param::fraction("f", e[1], &src),
            Param::non_negative("c", "s", e[2], &src),
        ],
        &f.fit.covariance,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_headers_units_and_bare_columns() {
        let r = read_runs("p,time_s\n1,8\n2,4.2\n", "r.csv").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[1],
            Run {
                p: 2.0,
                time_s: 4.2,
                line: 3
            }
        );
        let r = read_runs("ranks,elapsed\n4,1.5ms\n", "r.csv").unwrap();
        assert_eq!(r[0].time_s, 1.5e-3);
        let r = read_runs("# my runs\n1,8\n2,4\n", "r.csv").unwrap();
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = read_runs("", "r.csv").unwrap_err();
        assert!(e.0.contains("r.csv has no runs"), "{e}");
        let e = read_runs("p,time_s\n", "r.csv").unwrap_err();
        assert!(e.0.contains("has no runs"), "{e}");
        let e = read_runs("p,time_s\n1,8\n0,4\n", "r.csv").unwrap_err();
        assert_eq!(e.0, "r.csv line 3, column 1 (p): P = 0 is not positive");
        let e = read_runs("p,time_s\n1,8\n2,fast\n", "r.csv").unwrap_err();
        assert!(
            e.0.starts_with("r.csv line 3, column 2 (time_s): 'fast' is not"),
            "{e}"
        );
        let e = read_runs("p,time_s\n1\n", "r.csv").unwrap_err();
        assert_eq!(e.0, "r.csv line 2, column 2 (time_s): the value is missing");
        let e = read_runs("n,seconds\n1,2\n", "r.csv").unwrap_err();
        assert!(e.0.contains("no column for P"), "{e}");
    }
}
