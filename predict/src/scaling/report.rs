//! The planner's outputs: the human table, the JSON document, the CSV of
//! the curves, and the two-panel chart (speed-up and efficiency against P,
//! log₂ P axis, 95% bands, knees with their ranges).

use models::units::Si;
use serde::Serialize;

use super::analysis::{Config, Knee, SeriesResult, BEST_TOLERANCE};
use super::fit::RunsFit;
use crate::chart::figure::{
    palette, Along, Axis, Color, Dash, Figure, Item, LegendEntry, Marker, MarkerPoint, Panel,
    Scale, Shape, Stroke, Symbol, TickFormat,
};
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
    pub notes: Vec<String>,
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

fn pct(v: f64) -> String {
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
            s.push_str(&format!(
                "  {:>6} {:>12} {:>22} {:>20} {:>12}\n",
                fmt_p(pt.p),
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
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

fn fit_text(f: &RunsFit) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "  fit: T(P) = T1·(f + (1 − f)/P) + c·log2(P), {} runs, R² = {:.4}\n",
        f.fit.n, f.fit.r_squared
    ));
    for (name, e) in f.fit.names.iter().zip(&f.fit.params) {
        let unit = if name == "f" { "" } else { "s" };
        let text = if unit.is_empty() {
            format!("{:.4} (95%: {:.4} – {:.4})", e.point, e.lo, e.hi)
        } else {
            format!(
                "{} (95%: {} – {})",
                Si(e.point, "s"),
                Si(e.lo, "s"),
                Si(e.hi, "s")
            )
        };
        s.push_str(&format!("    {name:<3} = {text}\n"));
    }
    s.push_str(&format!(
        "  Karp–Flatt serial fraction (T(1) {}):\n",
        f.t1_source
    ));
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
    for n in &f.notes {
        s.push_str(&format!("  note: {n}\n"));
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
}

fn knee_marker(k: &Knee, y_at: impl Fn(f64) -> f64, shape: Shape, color: Color) -> Option<Item> {
    let p = k.point?;
    let x_err = match (k.lo, k.hi) {
        (Some(lo), Some(hi)) if hi > lo => Some((lo, hi)),
        (Some(lo), None) => Some((lo, f64::INFINITY)),
        _ => None,
    };
    Some(Item::Markers {
        points: vec![MarkerPoint {
            x_err,
            ..MarkerPoint::at(p, y_at(p))
        }],
        marker: Marker {
            shape,
            color,
            filled: true,
        },
    })
}

/// Linear interpolation of a curve in log P.
fn interp(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    match xs.iter().position(|&v| v >= x) {
        Some(0) => ys[0],
        Some(i) => {
            let t = (x.ln() - xs[i - 1].ln()) / (xs[i].ln() - xs[i - 1].ln());
            ys[i - 1] + t * (ys[i] - ys[i - 1])
        }
        None => *ys.last().unwrap_or(&f64::NAN),
    }
}

/// The two-panel chart.
pub fn figure(r: &Report, title: Option<String>) -> Figure {
    let cfg = &r.config;
    let (x_min, x_max) = (cfg.p_min / 1.25, cfg.p_max * 1.25);
    let weak = r.scaling == "weak";
    let grey = Color::rgb(90, 90, 90);
    let all_rows = || r.series.iter().flat_map(|s| s.curve.iter());
    let s_lo = all_rows()
        .map(|row| row.speedup_lo.min(row.point.speedup))
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(1.0, f64::min);
    let mut s_hi = all_rows()
        .map(|row| row.speedup_hi.max(row.point.speedup))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max);
    let mut e_hi = all_rows()
        .map(|row| row.efficiency_hi.max(row.point.efficiency))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max);
    if let Some(f) = &r.fit {
        let t1 = f.fit.params[0].point;
        for run in &f.runs {
            s_hi = s_hi.max(t1 / run.time_s);
            e_hi = e_hi.max(t1 / run.time_s / run.p);
        }
    }

    let mut speed = Vec::new();
    let mut eff = Vec::new();
    speed.push(Item::Line {
        points: vec![(x_min, x_min), (x_max, x_max)],
        stroke: Stroke::new(grey, 0.7, Dash::Dotted),
        label: Some(("ideal".into(), Along::End)),
    });
    eff.push(Item::Line {
        points: vec![(x_min, cfg.efficiency), (x_max, cfg.efficiency)],
        stroke: Stroke::new(grey, 0.7, Dash::Dashed),
        label: Some((format!("E = {}", pct(cfg.efficiency)), Along::Start)),
    });
    let mut runs_entry = None;
    if let Some(f) = &r.fit {
        let t1 = f.fit.params[0].point;
        let m = Marker {
            shape: Shape::Circle,
            color: Color::rgb(40, 40, 40),
            filled: true,
        };
        speed.push(Item::Markers {
            points: f
                .runs
                .iter()
                .map(|run| MarkerPoint::at(run.p, t1 / run.time_s))
                .collect(),
            marker: m,
        });
        eff.push(Item::Markers {
            points: f
                .runs
                .iter()
                .map(|run| MarkerPoint::at(run.p, t1 / run.time_s / run.p))
                .collect(),
            marker: m,
        });
        runs_entry = Some(LegendEntry {
            symbol: Symbol::Marker(m),
            text: "measured runs (T1 / T(P))".into(),
        });
    }
    let mut legend = Vec::new();
    for (i, s) in r.series.iter().enumerate() {
        let color = palette(i);
        let ps: Vec<f64> = s.curve.iter().map(|row| row.point.p).collect();
        let sp: Vec<f64> = s.curve.iter().map(|row| row.point.speedup).collect();
        let ef: Vec<f64> = s.curve.iter().map(|row| row.point.efficiency).collect();
        if cfg.draws > 0 {
            speed.push(Item::Band {
                x: ps.clone(),
                lo: s.curve.iter().map(|row| row.speedup_lo).collect(),
                hi: s.curve.iter().map(|row| row.speedup_hi).collect(),
                color: color.with_alpha(0.2),
            });
            eff.push(Item::Band {
                x: ps.clone(),
                lo: s.curve.iter().map(|row| row.efficiency_lo).collect(),
                hi: s.curve.iter().map(|row| row.efficiency_hi).collect(),
                color: color.with_alpha(0.2),
            });
        }
        let stroke = Stroke::new(color, 1.1, Dash::Solid);
        speed.push(Item::Line {
            points: ps.iter().copied().zip(sp.iter().copied()).collect(),
            stroke,
            label: None,
        });
        eff.push(Item::Line {
            points: ps.iter().copied().zip(ef.iter().copied()).collect(),
            stroke,
            label: None,
        });
        legend.push(LegendEntry {
            symbol: Symbol::Line(stroke),
            text: s.name.clone(),
        });
        speed.extend(knee_marker(
            &s.knees.crossover,
            |p| interp(&ps, &sp, p),
            Shape::Triangle,
            color,
        ));
        speed.extend(knee_marker(
            &Knee {
                lo: None,
                hi: None,
                ..s.knees.best
            },
            |p| interp(&ps, &sp, p),
            Shape::Diamond,
            color,
        ));
        eff.extend(knee_marker(
            &s.knees.efficiency,
            |_| cfg.efficiency,
            Shape::Square,
            color,
        ));
    }
    legend.extend(runs_entry);
    if cfg.draws > 0 {
        legend.push(LegendEntry {
            symbol: Symbol::Patch(palette(0).with_alpha(0.2)),
            text: "95% band".into(),
        });
    }
    let neutral = |shape| Marker {
        shape,
        color: grey,
        filled: true,
    };
    let crossover = if r.kernel == "binning" {
        "saturation"
    } else {
        "comm = compute"
    };
    legend.push(LegendEntry {
        symbol: Symbol::Marker(neutral(Shape::Triangle)),
        text: format!("{crossover} (95% range)"),
    });
    legend.push(LegendEntry {
        symbol: Symbol::Marker(neutral(Shape::Square)),
        text: format!("E < {} (95% range)", pct(cfg.efficiency)),
    });
    legend.push(LegendEntry {
        symbol: Symbol::Marker(neutral(Shape::Diamond)),
        text: "best time".into(),
    });

    let p_title = if r.kernel == "binning" {
        "Threads P"
    } else {
        "Processes P"
    };
    let x = || Axis::new(p_title, Scale::Log2, x_min, x_max);
    let (sy0, sy1) = Axis::log_range(s_lo, s_hi * 1.4, 1.4, 2.0, false);
    Figure {
        title,
        width_in: 3.5,
        legend,
        panels: vec![
            Panel {
                x: x(),
                y: Axis::new(
                    if weak { "Scaled speed-up" } else { "Speed-up" },
                    Scale::Log2,
                    sy0,
                    sy1,
                ),
                aspect: 0.46,
                items: speed,
            },
            Panel {
                x: x(),
                y: Axis::new("Efficiency", Scale::Linear, 0.0, (e_hi * 1.08).max(1.08))
                    .format(TickFormat::Number { divisor: 1.0 }),
                aspect: 0.34,
                items: eff,
            },
        ],
    }
}
