//! The two-panel mountain chart: latency on top, bandwidth below, the
//! detected levels shaded by turns.

use super::data::{Curve, MountainData, Quantity};
use crate::chart::figure::{
    palette, Axis, Color, Dash, Figure, Item, LegendEntry, Panel, Scale, Stroke, Symbol, TickFormat,
};
use crate::chart::ticks::binary_bytes;

/// The level spans: [previous boundary, this level's size], DRAM to the
/// end, each with its index and label.
fn level_spans(d: &MountainData, x_min: f64, x_max: f64) -> Vec<(f64, f64, usize, String)> {
    let mut spans = Vec::new();
    let mut start = x_min;
    for (i, l) in d.levels.iter().enumerate() {
        let end = l.size_bytes.unwrap_or(x_max).min(x_max);
        if end > start {
            let label = match l.size_bytes {
                Some(s) => format!("{} {}", l.name, binary_bytes(s)),
                None => l.name.clone(),
            };
            spans.push((start, end, i, label));
            start = end;
        }
    }
    spans
}

/// The spans shaded by turns, labelled when `labelled`.
fn span_items(spans: &[(f64, f64, usize, String)], labelled: bool) -> Vec<Item> {
    spans
        .iter()
        .map(|(a, b, i, label)| Item::VSpan {
            x0: *a,
            x1: *b,
            color: if i % 2 == 0 { SHADE } else { Color::WHITE },
            label: labelled.then(|| label.clone()),
        })
        .collect()
}

/// The shade of every other level.
const SHADE: Color = Color::rgb(236, 236, 236);

/// The y range of `curves`, with room at the top for the level labels
/// when the panel carries them.
fn y_range(curves: &[&Curve], labelled: bool) -> (f64, f64) {
    let points = || curves.iter().flat_map(|c| c.points.iter());
    let lo = points().map(|p| p.lo).fold(f64::INFINITY, f64::min);
    let hi = points().map(|p| p.hi).fold(0.0, f64::max);
    let (y_min, y_max) = Axis::log_range(lo, hi, 1.3, 10.0, false);
    if labelled {
        (y_min, y_max * (y_max / y_min).powf(0.18))
    } else {
        (y_min, y_max)
    }
}

/// Each curve's interval band and line, in the colour of its index in
/// `d.curves`; its legend entry goes to `legend`.
fn curve_items(d: &MountainData, curves: &[&Curve], legend: &mut Vec<LegendEntry>) -> Vec<Item> {
    let mut items = Vec::new();
    for c in curves {
        let k = d
            .curves
            .iter()
            .position(|x| std::ptr::eq(x, *c))
            .unwrap_or(0);
        let color = palette(k);
        // Curves on 4 KiB pages dashed, beside their huge-page ones.
        let dash = if c.pages.as_deref() == Some("4KiB") {
            Dash::Dashed
        } else {
            Dash::Solid
        };
        items.push(Item::Band {
            x: c.points.iter().map(|p| p.working_set_bytes).collect(),
            lo: c.points.iter().map(|p| p.lo).collect(),
            hi: c.points.iter().map(|p| p.hi).collect(),
            color: color.with_alpha(0.25),
        });
        items.push(Item::Line {
            points: c
                .points
                .iter()
                .map(|p| (p.working_set_bytes, p.value))
                .collect(),
            stroke: Stroke::new(color, 1.0, dash),
            label: None,
        });
        legend.push(LegendEntry {
            symbol: Symbol::Line(Stroke::new(color, 1.0, dash)),
            text: c.name.clone(),
        });
    }
    items
}

/// The two-panel chart: latency on top, bandwidth below, levels shaded.
pub fn figure(d: &MountainData, title: Option<String>) -> Figure {
    let all = || d.curves.iter().flat_map(|c| c.points.iter());
    let ws_lo = all()
        .map(|p| p.working_set_bytes)
        .fold(f64::INFINITY, f64::min);
    let ws_hi = all().map(|p| p.working_set_bytes).fold(0.0, f64::max);
    let (x_min, x_max) = (ws_lo / 1.25, ws_hi * 1.25);
    let spans = level_spans(d, x_min, x_max);
    let mut legend = Vec::new();
    let mut panels = Vec::new();
    for (q, y_title, unit_div, first) in [
        (Quantity::Latency, "Latency [ns]", 1e-9, true),
        (Quantity::Bandwidth, "Bandwidth [GB/s]", 1e9, false),
    ] {
        let curves: Vec<&Curve> = d.curves.iter().filter(|c| c.quantity == q).collect();
        if curves.is_empty() {
            continue;
        }
        let labelled = first || panels.is_empty();
        let mut items = span_items(&spans, labelled);
        let (y_min, y_max) = y_range(&curves, labelled);
        items.extend(curve_items(d, &curves, &mut legend));
        panels.push(Panel {
            x: Axis::new("Working set per thread", Scale::Log2, x_min, x_max)
                .format(TickFormat::BinaryBytes),
            y: Axis::new(y_title, Scale::Log10, y_min, y_max)
                .format(TickFormat::Number { divisor: unit_div }),
            aspect: 0.42,
            items,
        });
    }
    legend.push(LegendEntry {
        symbol: Symbol::Patch(SHADE),
        text: "detected levels (shaded by turns)".into(),
    });
    legend.push(LegendEntry {
        symbol: Symbol::Patch(palette(0).with_alpha(0.25)),
        text: "95% interval".into(),
    });
    Figure {
        title,
        width_in: 3.5,
        legend,
        panels,
    }
}
