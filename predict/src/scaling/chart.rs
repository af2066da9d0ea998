//! The planner's two-panel chart: speed-up and efficiency against P
//! (log₂ P axis), 95% bands, knees with their 95% ranges clipped to the
//! plotted P range. With a fit, the region beyond the largest measured P is
//! shaded and labelled, and every curve is dashed there.

use super::analysis::Knee;
use super::report::{pct, Report};
use crate::chart::figure::{
    palette, Along, Axis, Color, Dash, Figure, Item, LegendEntry, Marker, MarkerPoint, Panel,
    Scale, Shape, Stroke, Symbol, TickFormat,
};

/// A knee's marker with its 95% range, the range clipped to [P_min, P_max]
/// (a range open to the right ends at P_max).
fn knee_marker(
    k: &Knee,
    (p_min, p_max): (f64, f64),
    y_at: impl Fn(f64) -> f64,
    shape: Shape,
    color: Color,
) -> Option<Item> {
    let p = k.point?;
    let clip = |lo: f64, hi: f64| (lo.max(p_min), hi.min(p_max));
    let x_err = match (k.lo, k.hi) {
        (Some(lo), Some(hi)) if hi > lo => Some(clip(lo, hi)),
        (Some(lo), None) => Some(clip(lo, p_max)),
        _ => None,
    }
    .filter(|(lo, hi)| hi > lo);
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

const GREY: Color = Color::rgb(90, 90, 90);

/// (lowest speed-up, highest speed-up, highest efficiency) to show.
fn y_extent(r: &Report) -> (f64, f64, f64) {
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
    (s_lo, s_hi, e_hi)
}

/// The measured runs as markers; their legend entry.
fn runs_items(r: &Report, speed: &mut Vec<Item>, eff: &mut Vec<Item>) -> Option<LegendEntry> {
    let f = r.fit.as_ref()?;
    let t1 = f.fit.params[0].point;
    let m = Marker {
        shape: Shape::Circle,
        color: Color::rgb(40, 40, 40),
        filled: true,
    };
    let at = |y: &dyn Fn(&super::runs::Run) -> f64| Item::Markers {
        points: f
            .runs
            .iter()
            .map(|run| MarkerPoint::at(run.p, y(run)))
            .collect(),
        marker: m,
    };
    speed.push(at(&|run| t1 / run.time_s));
    eff.push(at(&|run| t1 / run.time_s / run.p));
    Some(LegendEntry {
        symbol: Symbol::Marker(m),
        text: "measured runs (T1 / T(P))".into(),
    })
}

/// A curve as lines: solid up to the largest measured P, dashed beyond.
fn lines(points: Vec<(f64, f64)>, color: Color, measured: Option<f64>) -> Vec<Item> {
    let solid = Stroke::new(color, 1.1, Dash::Solid);
    let line = |points: Vec<(f64, f64)>, stroke| Item::Line {
        points,
        stroke,
        label: None,
    };
    let Some(m) = measured else {
        return vec![line(points, solid)];
    };
    let split = points
        .iter()
        .position(|(p, _)| *p > m)
        .unwrap_or(points.len());
    let mut out = Vec::new();
    if split > 0 {
        out.push(line(points[..split].to_vec(), solid));
    }
    if split < points.len() {
        let from = split.saturating_sub(1);
        out.push(line(
            points[from..].to_vec(),
            Stroke::new(color, 1.1, Dash::Dashed),
        ));
    }
    out
}

/// One series: band, line, knees.
fn series_items(r: &Report, i: usize, speed: &mut Vec<Item>, eff: &mut Vec<Item>) -> LegendEntry {
    let cfg = &r.config;
    let s = &r.series[i];
    let color = palette(i);
    let ps: Vec<f64> = s.curve.iter().map(|row| row.point.p).collect();
    let sp: Vec<f64> = s.curve.iter().map(|row| row.point.speedup).collect();
    let ef: Vec<f64> = s.curve.iter().map(|row| row.point.efficiency).collect();
    if cfg.draws > 0 {
        let band = |lo: Vec<f64>, hi: Vec<f64>| Item::Band {
            x: ps.clone(),
            lo,
            hi,
            color: color.with_alpha(0.2),
        };
        speed.push(band(
            s.curve.iter().map(|row| row.speedup_lo).collect(),
            s.curve.iter().map(|row| row.speedup_hi).collect(),
        ));
        eff.push(band(
            s.curve.iter().map(|row| row.efficiency_lo).collect(),
            s.curve.iter().map(|row| row.efficiency_hi).collect(),
        ));
    }
    let zip = |ys: &[f64]| ps.iter().copied().zip(ys.iter().copied()).collect();
    speed.extend(lines(zip(&sp), color, r.measured_p_max));
    eff.extend(lines(zip(&ef), color, r.measured_p_max));
    let range = (cfg.p_min, cfg.p_max);
    let on_speed = |p| interp(&ps, &sp, p);
    speed.extend(knee_marker(
        &s.knees.crossover,
        range,
        on_speed,
        Shape::Triangle,
        color,
    ));
    let best = Knee {
        lo: None,
        hi: None,
        ..s.knees.best
    };
    speed.extend(knee_marker(&best, range, on_speed, Shape::Diamond, color));
    eff.extend(knee_marker(
        &s.knees.efficiency,
        range,
        |_| cfg.efficiency,
        Shape::Square,
        color,
    ));
    LegendEntry {
        symbol: Symbol::Line(Stroke::new(color, 1.1, Dash::Solid)),
        text: s.name.clone(),
    }
}

/// The legend's entries after the series.
fn legend_tail(r: &Report, legend: &mut Vec<LegendEntry>) {
    let cfg = &r.config;
    if r.measured_p_max.is_some_and(|m| m < cfg.p_max) {
        legend.push(LegendEntry {
            symbol: Symbol::Line(Stroke::new(GREY, 1.1, Dash::Dashed)),
            text: "extrapolated beyond the runs".into(),
        });
    }
    if cfg.draws > 0 {
        legend.push(LegendEntry {
            symbol: Symbol::Patch(palette(0).with_alpha(0.2)),
            text: "95% band".into(),
        });
    }
    let neutral = |shape| Marker {
        shape,
        color: GREY,
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
}

/// The two-panel chart.
pub fn figure(r: &Report, title: Option<String>) -> Figure {
    let cfg = &r.config;
    let (x_min, x_max) = (cfg.p_min / 1.25, cfg.p_max * 1.25);
    let (s_lo, s_hi, e_hi) = y_extent(r);
    let mut speed = vec![Item::Line {
        points: vec![(x_min, x_min), (x_max, x_max)],
        stroke: Stroke::new(GREY, 0.7, Dash::Dotted),
        label: Some(("ideal".into(), Along::End)),
    }];
    let mut eff = vec![Item::Line {
        points: vec![(x_min, cfg.efficiency), (x_max, cfg.efficiency)],
        stroke: Stroke::new(GREY, 0.7, Dash::Dashed),
        label: Some((format!("E = {}", pct(cfg.efficiency)), Along::Start)),
    }];
    if let Some(m) = r.measured_p_max.filter(|m| *m < cfg.p_max) {
        let span = |label| Item::VSpan {
            x0: m,
            x1: x_max,
            color: GREY.with_alpha(0.08),
            label,
        };
        speed.insert(0, span(Some("extrapolated".into())));
        eff.insert(0, span(None));
    }
    let runs_entry = runs_items(r, &mut speed, &mut eff);
    let mut legend: Vec<LegendEntry> = (0..r.series.len())
        .map(|i| series_items(r, i, &mut speed, &mut eff))
        .collect();
    legend.extend(runs_entry);
    legend_tail(r, &mut legend);
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
                    if r.scaling == "weak" {
                        "Scaled speed-up"
                    } else {
                        "Speed-up"
                    },
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
