//! The Roofline figure: log-log axes, one sloped roof per memory level and
//! one flat roof per compute ceiling (each labelled with its value), the
//! DRAM ridge point marked, and each kernel variant as a filled marker with
//! its 95% interval and a hollow marker at its prediction.

use std::collections::BTreeMap;

use super::data::{ai_text, CeilingKind, RooflineData};
use crate::chart::figure::{
    palette, shape, Along, Axis, Color, Dash, Figure, Item, LegendEntry, Marker, MarkerPoint,
    Panel, Scale, Shape, Stroke, Symbol,
};

/// Colour of the roofs: dark grey, so the coloured points stand out.
pub const ROOF: Color = Color::rgb(70, 70, 70);

/// The chart of `d`, titled `title`.
pub fn figure(d: &RooflineData, title: Option<String>) -> Figure {
    let bandwidths: Vec<_> = d
        .ceilings
        .iter()
        .filter(|c| c.kind == CeilingKind::Bandwidth)
        .collect();
    let computes: Vec<_> = d
        .ceilings
        .iter()
        .filter(|c| c.kind == CeilingKind::Compute)
        .collect();
    let peak = computes.iter().map(|c| c.value).fold(0.0, f64::max);
    let lowest_compute = computes
        .iter()
        .map(|c| c.value)
        .fold(f64::INFINITY, f64::min);
    let top_bw = bandwidths.iter().map(|c| c.value).fold(0.0, f64::max);

    // x: from 1/64 of the DRAM ridge (or the lowest point) to 16× the ridge.
    let ai_lo = d
        .points
        .iter()
        .map(|p| p.ai)
        .fold(d.ridge.ai / 64.0, f64::min);
    let ai_hi = d
        .points
        .iter()
        .map(|p| p.ai)
        .fold(d.ridge.ai * 16.0, f64::max);
    let (x_min, x_max) = Axis::log_range(ai_lo, ai_hi, 1.6, 10.0, false);
    // y: room above the peak for its label, a little below the slowest
    // roof's left end for that roof's label, down to the lowest point.
    let low_roof = bandwidths
        .iter()
        .map(|c| c.value * x_min / 2.0)
        .fold(lowest_compute, f64::min);
    let y_lo = d
        .points
        .iter()
        .flat_map(|p| {
            [
                p.measured_flops_lo,
                p.predicted_flops.unwrap_or(f64::INFINITY),
            ]
        })
        .fold(low_roof.max(peak / 1e4), f64::min);
    let y_hi = d
        .points
        .iter()
        .flat_map(|p| [p.measured_flops_hi, p.predicted_flops.unwrap_or(0.0)])
        .fold(peak, f64::max);
    let (y_min, y_max) = Axis::log_range(y_lo, y_hi, 1.6, 10.0, false);
    let y_max = y_max * 1.4;
    let divisor = 1e9;

    let mut items = Vec::new();
    for (i, c) in bandwidths.iter().enumerate() {
        let ridge = peak / c.value;
        items.push(Item::Line {
            points: vec![(x_min, c.value * x_min), (ridge, peak)],
            stroke: Stroke::new(
                ROOF,
                if i + 1 == bandwidths.len() { 1.25 } else { 0.9 },
                Dash::Solid,
            ),
            label: Some((c.label.clone(), Along::Start)),
        });
    }
    for (i, c) in computes.iter().enumerate() {
        let start = c.value / top_bw;
        items.push(Item::Line {
            points: vec![(start, c.value), (x_max, c.value)],
            stroke: Stroke::new(
                ROOF,
                if i == 0 { 1.25 } else { 0.9 },
                if i == 0 { Dash::Solid } else { Dash::Dashed },
            ),
            label: Some((c.label.clone(), Along::End)),
        });
    }
    items.push(Item::Line {
        points: vec![(d.ridge.ai, y_min), (d.ridge.ai, d.ridge.flops)],
        stroke: Stroke::new(ROOF, 0.6, Dash::Dotted),
        label: None,
    });
    items.push(Item::Markers {
        points: vec![MarkerPoint {
            label: Some(format!("ridge {}", ai_text(d.ridge.ai))),
            ..MarkerPoint::at(d.ridge.ai, d.ridge.flops)
        }],
        marker: Marker {
            shape: Shape::Diamond,
            color: ROOF,
            filled: true,
        },
    });

    // One colour and shape per series (kernel variant and threads), in order
    // of first appearance.
    let mut series: BTreeMap<String, usize> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for p in &d.points {
        let name = p.series_name();
        if !series.contains_key(&name) {
            series.insert(name.clone(), order.len());
            order.push(name);
        }
    }
    let marker_of = |i: usize, filled: bool| Marker {
        shape: shape(i),
        color: palette(i),
        filled,
    };
    for p in &d.points {
        let i = series[&p.series_name()];
        if let Some(pred) = p.predicted_flops {
            items.push(Item::Markers {
                points: vec![MarkerPoint::at(p.ai, pred)],
                marker: marker_of(i, false),
            });
        }
    }
    for p in &d.points {
        let i = series[&p.series_name()];
        items.push(Item::Markers {
            points: vec![MarkerPoint {
                y_err: Some((p.measured_flops_lo, p.measured_flops_hi)),
                ..MarkerPoint::at(p.ai, p.measured_flops)
            }],
            marker: marker_of(i, true),
        });
    }

    let mut legend: Vec<LegendEntry> = order
        .iter()
        .enumerate()
        .map(|(i, name)| LegendEntry {
            symbol: Symbol::Marker(marker_of(i, true)),
            text: name.clone(),
        })
        .collect();
    if !d.points.is_empty() {
        let neutral = |filled| Marker {
            shape: Shape::Circle,
            color: ROOF,
            filled,
        };
        legend.push(LegendEntry {
            symbol: Symbol::MarkerWithBar(neutral(true)),
            text: "measured, 95% interval".into(),
        });
        legend.push(LegendEntry {
            symbol: Symbol::Marker(neutral(false)),
            text: "model prediction".into(),
        });
    }
    legend.push(LegendEntry {
        symbol: Symbol::Line(Stroke::new(ROOF, 1.0, Dash::Solid)),
        text: format!(
            "bandwidth roofs, {} thr",
            bandwidths.first().map_or(d.threads, |c| c.threads)
        ),
    });
    legend.push(LegendEntry {
        symbol: Symbol::Line(Stroke::new(ROOF, 1.0, Dash::Dashed)),
        text: format!(
            "compute roofs, {} thr",
            computes.first().map_or(d.threads, |c| c.threads)
        ),
    });

    Figure {
        title,
        width_in: 3.5,
        legend,
        panels: vec![Panel {
            x: Axis::new(
                "Arithmetic intensity [flop/byte]",
                Scale::Log10,
                x_min,
                x_max,
            ),
            y: Axis::new("Performance [GFLOP/s]", Scale::Log10, y_min, y_max)
                .format(crate::chart::figure::TickFormat::Number { divisor }),
            aspect: 0.68,
            items,
        }],
    }
}
