//! The planner's outputs: the human table, the JSON document and the CSV
//! of the curves (the chart is [`super::chart`]). With a fit, every P
//! beyond the largest measured one is marked as extrapolated: `*` in the
//! table, `extrapolated = true` in the CSV.

use models::units::Si;
use serde::Serialize;

use super::analysis::{Config, Knee, SeriesResult, BEST_TOLERANCE};
use super::fit::RunsFit;
use crate::chart::output::Num;

/// Everything `predict scaling` computed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// "ghost-row stencil", "binning", "fit".
    pub kernel: String,
    /// "strong" or "weak".
    pub scaling: String,
    /// One line per fixed input (N, bytes per update, ...).
    pub setup: Vec<String>,
    pub config: Config,
    pub series: Vec<SeriesResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<RunsFit>,
    /// The largest P of the runs a fit came from: beyond it, extrapolation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_p_max: Option<f64>,
    pub notes: Vec<String>,
}

impl Report {
    /// Whether P lies beyond the measured runs.
    pub fn extrapolated(&self, p: f64) -> Option<bool> {
        self.measured_p_max.map(|m| p > m * (1.0 + 1e-9))
    }
}

/// P as text: whole numbers from 10 up, one decimal below.
pub fn fmt_p(p: f64) -> String {
    if p >= 9.95 {
        format!("{}", p.round())
    } else {
        let s = format!("{p:.1}");
        s.trim_end_matches(".0").to_string()
    }
}

pub(super) fn pct(v: f64) -> String {
    format!("{:.0}%", 100.0 * v)
}

/// "value (lo–hi)", or just the value when the range is empty.
fn ranged(v: f64, lo: f64, hi: f64, f: impl Fn(f64) -> String) -> String {
    if (hi - lo).abs() <= 1e-9 * v.abs().max(1e-300) || !(lo.is_finite() && hi.is_finite()) {
        f(v)
    } else {
        format!("{} ({}–{})", f(v), f(lo), f(hi))
    }
}

/// "between P = 1490 and 1660 (point estimate 1571)" and its variants.
pub fn knee_text(k: &Knee, p_max: f64) -> String {
    let beyond = format!("beyond P = {}", fmt_p(p_max));
    match (k.point, k.lo, k.hi) {
        (None, None, _) => format!("{beyond} (not reached in range)"),
        (point, Some(lo), Some(hi)) if (hi - lo).abs() < 0.5 => {
            format!("at P = {}", fmt_p(point.unwrap_or(lo)))
        }
        (point, Some(lo), hi) => format!(
            "between P = {} and {} (point estimate {}{})",
            fmt_p(lo),
            hi.map_or(beyond.clone(), fmt_p),
            point.map_or(beyond.clone(), fmt_p),
            if k.beyond_share > 0.0 {
                format!(
                    "; {:.0}% of the draws stay above until P_max",
                    100.0 * k.beyond_share
                )
            } else {
                String::new()
            }
        ),
        (Some(p), None, _) => format!("at P = {} (no range: the draws do not reach it)", fmt_p(p)),
    }
}

/// The human report.
pub fn to_text(r: &Report) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{} — {} scaling, P = {} to {}\n",
        r.kernel,
        r.scaling,
        fmt_p(r.config.p_min),
        fmt_p(r.config.p_max)
    ));
    for line in &r.setup {
        s.push_str(&format!("  {line}\n"));
    }
    if r.config.draws > 0 {
        s.push_str(&format!(
            "  uncertainty: {} Monte Carlo draws of the parameters (seed {}), 95% ranges\n",
            r.config.draws, r.config.seed
        ));
    }
    if let Some(f) = &r.fit {
        s.push_str(&fit_text(f));
    }
    for series in &r.series {
        s.push_str(&series_text(r, series));
    }
    if let Some(m) = r.measured_p_max {
        s.push_str(&format!(
            "* extrapolated: beyond the largest measured P = {}\n",
            fmt_p(m)
        ));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// One series: its parameters, its table and its knees.
fn series_text(r: &Report, series: &SeriesResult) -> String {
    let mut s = String::new();
    s.push_str(&format!("\n{}\n", series.name));
    for p in &series.params {
        s.push_str(&format!(
            "  {:<22} {:<40} {}\n",
            p.name,
            super::network::fmt_est(&p.estimate, p.unit),
            p.source
        ));
    }
    s.push_str(&format!(
        "  {:>6} {:>12} {:>22} {:>20} {:>12}\n",
        "P", "time", "speed-up (95%)", "efficiency (95%)", "comm/comp"
    ));
    for row in &series.rows {
        let pt = &row.point;
        let ratio = if pt.compute_s > 0.0 {
            format!("{:.3}", pt.comm_s / pt.compute_s)
        } else {
            "—".into()
        };
        let mark = if r.extrapolated(pt.p) == Some(true) {
            "*"
        } else {
            ""
        };
        s.push_str(&format!(
            "  {:>6} {:>12} {:>22} {:>20} {:>12}\n",
            format!("{}{mark}", fmt_p(pt.p)),
            Si(pt.time_s, "s").to_string(),
            ranged(pt.speedup, row.speedup_lo, row.speedup_hi, |v| format!(
                "{v:.1}"
            )),
            ranged(pt.efficiency, row.efficiency_lo, row.efficiency_hi, pct),
            ratio
        ));
    }
    let k = &series.knees;
    s.push_str(&format!(
        "  {}: {}\n",
        series.crossover_means,
        knee_text(&k.crossover, r.config.p_max)
    ));
    s.push_str(&format!(
        "  efficiency < {}: {}\n",
        pct(r.config.efficiency),
        knee_text(&k.efficiency, r.config.p_max)
    ));
    let best = knee_text(&k.best, r.config.p_max);
    let at_end = k.best.point.is_some_and(|p| p >= r.config.p_max * 0.999);
    s.push_str(&format!(
        "  best time (within {:.0}% of the fastest): {best}{}\n",
        100.0 * BEST_TOLERANCE,
        if at_end {
            " — the time still falls at the largest P considered"
        } else {
            ""
        }
    ));
    s
}

fn fit_text(f: &RunsFit) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "  fit: {}, {} runs, R² = {:.4}{}\n",
        f.formula,
        f.fit.n,
        f.fit.r_squared,
        if f.separate {
            "; computation (time − comm) and communication fitted separately"
        } else {
            ""
        }
    ));
    s.push_str(&format!(
        "  communication term chosen by AICc{} (lower is better; Δ ≥ 2 is a clear preference):\n",
        if f.separate {
            " of the communication"
        } else {
            ""
        }
    ));
    let best = f.ranking.first().map_or(0.0, |r| r.score);
    for (i, r) in f.ranking.iter().enumerate() {
        s.push_str(&format!(
            "    {}{:<8} AICc {:>9.2}  Δ {:>7.2}{}\n",
            if i == 0 { "> " } else { "  " },
            r.term.name(),
            r.score,
            r.score - best,
            if i == 0 { "  chosen" } else { "" }
        ));
    }
    s.push_str(&format!(
        "  parameters, 0 ≤ f ≤ 1 and c ≥ 0, 95% intervals from {} bootstrap resamples:\n",
        f.fit.resamples
    ));
    for (name, e) in f.fit.names.iter().zip(&f.fit.params) {
        let text = if name == "f" {
            format!("{:.4} (95%: {:.4} – {:.4})", e.point, e.lo, e.hi)
        } else {
            let unit = if name == "T1" { "s" } else { c_unit(f) };
            format!(
                "{} (95%: {} – {})",
                Si(e.point, unit),
                Si(e.lo, unit),
                Si(e.hi, unit)
            )
        };
        s.push_str(&format!("    {name:<3} = {text}\n"));
    }
    s.push_str(&karp_flatt_text(f));
    for n in &f.notes {
        s.push_str(&format!("  note: {n}\n"));
    }
    s
}

/// The unit of c: seconds per unit of g(P).
fn c_unit(f: &RunsFit) -> &'static str {
    match f.term {
        super::terms::Term::Surface => "s/point",
        _ => "s",
    }
}

fn karp_flatt_text(f: &RunsFit) -> String {
    let mut s = format!("  Karp–Flatt serial fraction (T(1) {}):\n", f.t1_source);
    s.push_str(&format!(
        "  {:>6} {:>12} {:>10} {:>10}\n",
        "P", "time", "speed-up", "e"
    ));
    for k in &f.karp_flatt {
        s.push_str(&format!(
            "  {:>6} {:>12} {:>10.2} {:>10.4}\n",
            fmt_p(k.p),
            Si(k.time_s, "s").to_string(),
            k.speedup,
            k.serial_fraction
        ));
    }
    s
}

/// The curves on the fine grid, the knees, and the measured runs, as one
/// CSV table (`record` = curve | knee | measured).
pub fn to_csv(r: &Report) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut row = |r: CsvRow| w.serialize(r).expect("writing to memory");
    for s in &r.series {
        for c in &s.curve {
            let p = &c.point;
            row(CsvRow {
                record: "curve",
                series: s.name.clone(),
                p: Some(Num(p.p)),
                time_s: Some(Num(p.time_s)),
                time_lo_s: Some(Num(c.time_lo_s)),
                time_hi_s: Some(Num(c.time_hi_s)),
                compute_s: Some(Num(p.compute_s)),
                comm_s: Some(Num(p.comm_s)),
                speedup: Some(Num(p.speedup)),
                speedup_lo: Some(Num(c.speedup_lo)),
                speedup_hi: Some(Num(c.speedup_hi)),
                efficiency: Some(Num(p.efficiency)),
                efficiency_lo: Some(Num(c.efficiency_lo)),
                efficiency_hi: Some(Num(c.efficiency_hi)),
                extrapolated: r.extrapolated(p.p),
                ..CsvRow::default()
            });
        }
        for (name, k) in [
            ("crossover", &s.knees.crossover),
            ("efficiency", &s.knees.efficiency),
            ("best", &s.knees.best),
        ] {
            row(CsvRow {
                record: "knee",
                series: s.name.clone(),
                p: k.point.map(Num),
                knee: Some(name),
                p_lo: k.lo.map(Num),
                p_hi: k.hi.map(Num),
                ..CsvRow::default()
            });
        }
    }
    if let Some(f) = &r.fit {
        let t1 = f.fit.params[0].point;
        for run in &f.runs {
            // Speed-up against the fitted T1 (T(1) of the model).
            let sp = t1 / run.time_s;
            row(CsvRow {
                record: "measured",
                series: "runs".into(),
                p: Some(Num(run.p)),
                time_s: Some(Num(run.time_s)),
                speedup: Some(Num(sp)),
                efficiency: Some(Num(sp / run.p)),
                ..CsvRow::default()
            });
        }
    }
    String::from_utf8(w.into_inner().expect("in-memory writer")).expect("UTF-8 fields")
}

/// One row of the scaling CSV; the columns its kind does not use stay
/// empty.
#[derive(Debug, Default, Serialize)]
struct CsvRow {
    record: &'static str,
    series: String,
    p: Option<Num>,
    time_s: Option<Num>,
    time_lo_s: Option<Num>,
    time_hi_s: Option<Num>,
    compute_s: Option<Num>,
    comm_s: Option<Num>,
    speedup: Option<Num>,
    speedup_lo: Option<Num>,
    speedup_hi: Option<Num>,
    efficiency: Option<Num>,
    efficiency_lo: Option<Num>,
    efficiency_hi: Option<Num>,
    knee: Option<&'static str>,
    p_lo: Option<Num>,
    p_hi: Option<Num>,
    /// Curve points beyond the largest measured P of a fit.
    extrapolated: Option<bool>,
}
