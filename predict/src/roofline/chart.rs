//! The Roofline figure: log-log axes, one sloped roof per memory level and
//! one flat roof per compute ceiling (each labelled with its value and
//! shaded with its 95% interval), the ridge point marked, and each point
//! as a filled marker with its interval (when it has one) and, for a
//! kernel, a hollow marker at its prediction. The legend lists only what
//! is drawn.

use std::collections::BTreeMap;

use super::data::{ai_text, CeilingKind, CeilingRow, PointRow, RooflineData};
use crate::chart::figure::{
    palette, shape, Along, Axis, Color, Dash, Figure, Item, LegendEntry, Marker, MarkerPoint,
    Panel, Scale, Shape, Stroke, Symbol, TickFormat,
};

/// Colour of the roofs: dark grey, so the coloured points stand out.
pub const ROOF: Color = Color::rgb(70, 70, 70);

/// The roofs' 95% intervals: a light grey band.
pub const BAND: Color = Color::rgb(70, 70, 70).with_alpha(0.16);

/// Compute ceilings closer than this (relative) to the next higher one are
/// one roof on the chart: 3% is 0.013 of a decade, less than a line's
/// width at print size, and no label could tell them apart (the Zen 4's
/// AVX2 and AVX-512 FMA peaks are the same 118 GFLOP/s: its 512-bit FMA
/// runs as two 256-bit halves).
const SAME_ROOF: f64 = 0.03;

/// The compute roofs as drawn, highest first: ceilings within
/// [`SAME_ROOF`] of the highest of their group drawn once, at its value and
/// interval, labelled with every name ([`joined_names`]).
fn drawn_computes(computes: &[&CeilingRow]) -> Vec<CeilingRow> {
    let mut groups: Vec<Vec<&CeilingRow>> = Vec::new();
    for &c in computes {
        match groups.last_mut() {
            Some(g) if c.value >= g[0].value * (1.0 - SAME_ROOF) => g.push(c),
            _ => groups.push(vec![c]),
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let top = g[0].clone();
            if g.len() == 1 {
                return top;
            }
            let names: Vec<&str> = g.iter().map(|c| c.name.as_str()).collect();
            let value = top.label.strip_prefix(top.name.as_str()).unwrap_or("");
            CeilingRow {
                label: format!("{}{value}", joined_names(&names)),
                ..top
            }
        })
        .collect()
}

/// Names with their common first and last words written once:
/// ["f64 AVX2 FMA", "f64 AVX-512 FMA"] → "f64 AVX2 / AVX-512 FMA".
fn joined_names(names: &[&str]) -> String {
    let words: Vec<Vec<&str>> = names
        .iter()
        .map(|n| n.split_whitespace().collect())
        .collect();
    let shortest = words.iter().map(Vec::len).min().unwrap_or(0);
    // Words shared by every name, counted from the start or from the end.
    let common = |from_end: bool| {
        let at = |w: &[&str], i: usize| if from_end { w.len() - 1 - i } else { i };
        (0..shortest)
            .take_while(|&i| {
                let first = words[0][at(&words[0], i)];
                words.iter().all(|w| w[at(w, i)] == first)
            })
            .count()
    };
    // Every name keeps at least one word of its own.
    let head = common(false).min(shortest.saturating_sub(1));
    let tail = common(true).min(shortest.saturating_sub(head + 1));
    let middles: Vec<String> = words
        .iter()
        .map(|w| w[head..w.len() - tail].join(" "))
        .collect();
    let first = &words[0];
    [
        first[..head].join(" "),
        middles.join(" / "),
        first[first.len() - tail..].join(" "),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join(" ")
}

/// The axes' ranges: (x_min, x_max, y_min, y_max).
struct Ranges {
    x: (f64, f64),
    y: (f64, f64),
}

fn lo_of(p: &PointRow) -> f64 {
    p.measured_flops_lo.unwrap_or(p.measured_flops)
}

fn hi_of(p: &PointRow) -> f64 {
    p.measured_flops_hi.unwrap_or(p.measured_flops)
}

/// x from 1/64 of the DRAM ridge (or the lowest point) to 16× the ridge;
/// y with room above the peak for its label, a little below the slowest
/// roof's left end for that roof's label, down to the lowest point.
fn ranges(d: &RooflineData, bandwidths: &[&CeilingRow], peak: f64, lowest: f64) -> Ranges {
    let ai = d.points.iter().map(|p| p.ai);
    let ai_lo = ai.clone().fold(d.ridge.ai / 64.0, f64::min);
    let ai_hi = ai.fold(d.ridge.ai * 16.0, f64::max);
    let (x_min, x_max) = Axis::log_range(ai_lo, ai_hi, 1.6, 10.0, false);
    let low_roof = bandwidths
        .iter()
        .map(|c| c.value * x_min / 2.0)
        .fold(lowest, f64::min);
    let y_lo = d
        .points
        .iter()
        .flat_map(|p| [lo_of(p), p.predicted_flops.unwrap_or(f64::INFINITY)])
        .fold(low_roof.max(peak / 1e4), f64::min);
    let y_hi = d
        .points
        .iter()
        .flat_map(|p| [hi_of(p), p.predicted_flops.unwrap_or(0.0)])
        .fold(peak, f64::max);
    let (y_min, y_max) = Axis::log_range(y_lo, y_hi, 1.6, 10.0, false);
    Ranges {
        x: (x_min, x_max),
        y: (y_min, y_max * 1.4),
    }
}

/// The roofs' interval bands, underneath everything.
fn bands(bw: &[&CeilingRow], computes: &[&CeilingRow], peak: f64, r: &Ranges) -> Vec<Item> {
    let mut items = Vec::new();
    for c in bw.iter().filter(|c| c.hi > c.lo) {
        // The sloped band lo·AI .. hi·AI, capped by the peak.
        let x = vec![r.x.0, peak / c.hi, peak / c.value, peak / c.lo];
        let cap = |b: f64| x.iter().map(|a| (a * b).min(peak)).collect();
        items.push(Item::Band {
            lo: cap(c.lo),
            hi: cap(c.hi),
            x,
            color: BAND,
        });
    }
    let top_bw = bw.iter().map(|c| c.value).fold(0.0, f64::max);
    for c in computes.iter().filter(|c| c.hi > c.lo) {
        items.push(Item::Band {
            x: vec![c.value / top_bw, r.x.1],
            lo: vec![c.lo; 2],
            hi: vec![c.hi; 2],
            color: BAND,
        });
    }
    items
}

/// The roofs, each labelled, and the DRAM ridge with its guide line.
fn roofs(d: &RooflineData, bw: &[&CeilingRow], computes: &[&CeilingRow], r: &Ranges) -> Vec<Item> {
    let peak = d.ridge.flops;
    let x_min = r.x.0;
    let mut items = Vec::new();
    for (i, c) in bw.iter().enumerate() {
        items.push(Item::Line {
            points: vec![(x_min, c.value * x_min), (peak / c.value, peak)],
            stroke: Stroke::new(
                ROOF,
                if i + 1 == bw.len() { 1.25 } else { 0.9 },
                Dash::Solid,
            ),
            label: Some((c.label.clone(), Along::Start)),
        });
    }
    let top_bw = bw.iter().map(|c| c.value).fold(0.0, f64::max);
    for (i, c) in computes.iter().enumerate() {
        let (width, dash) = if i == 0 {
            (1.25, Dash::Solid)
        } else {
            (0.9, Dash::Dashed)
        };
        items.push(Item::Line {
            points: vec![(c.value / top_bw, c.value), (r.x.1, c.value)],
            stroke: Stroke::new(ROOF, width, dash),
            label: Some((c.label.clone(), Along::End)),
        });
    }
    // The ridge's label goes beside its drop line, away from the ceilings
    // that crowd the ridge point itself.
    items.push(Item::VLine {
        x: d.ridge.ai,
        top: Some(d.ridge.flops),
        stroke: Stroke::new(ROOF, 0.6, Dash::Dotted),
        label: Some(format!("ridge {}", ai_text(d.ridge.ai))),
    });
    items.push(Item::Markers {
        points: vec![MarkerPoint::at(d.ridge.ai, d.ridge.flops)],
        marker: Marker {
            shape: Shape::Diamond,
            color: ROOF,
            filled: true,
        },
    });
    items
}

/// Series names in order of first appearance.
fn series(d: &RooflineData) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for p in &d.points {
        if !order.contains(&p.name) {
            order.push(p.name.clone());
        }
    }
    order
}

fn marker_of(i: usize, filled: bool) -> Marker {
    Marker {
        shape: shape(i),
        color: palette(i),
        filled,
    }
}

/// The predictions (hollow) under the measured points (filled).
fn point_items(d: &RooflineData, order: &[String]) -> Vec<Item> {
    let index: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut items = Vec::new();
    for p in &d.points {
        if let Some(pred) = p.predicted_flops {
            items.push(Item::Markers {
                points: vec![MarkerPoint::at(p.ai, pred)],
                marker: marker_of(index[p.name.as_str()], false),
            });
        }
    }
    for p in &d.points {
        let y_err = p.measured_flops_lo.zip(p.measured_flops_hi);
        items.push(Item::Markers {
            points: vec![MarkerPoint {
                y_err,
                ..MarkerPoint::at(p.ai, p.measured_flops)
            }],
            marker: marker_of(index[p.name.as_str()], true),
        });
    }
    items
}

/// One entry per series, then one per kind of mark that is drawn.
fn legend(
    d: &RooflineData,
    order: &[String],
    bw: &[&CeilingRow],
    computes: &[&CeilingRow],
) -> Vec<LegendEntry> {
    let mut legend: Vec<LegendEntry> = order
        .iter()
        .enumerate()
        .map(|(i, name)| LegendEntry {
            symbol: Symbol::Marker(marker_of(i, true)),
            text: name.clone(),
        })
        .collect();
    let neutral = |filled| Marker {
        shape: Shape::Circle,
        color: ROOF,
        filled,
    };
    if d.points.iter().any(|p| p.measured_flops_lo.is_some()) {
        legend.push(LegendEntry {
            symbol: Symbol::MarkerWithBar(neutral(true)),
            text: "measured, 95% interval".into(),
        });
    }
    if d.points.iter().any(|p| p.predicted_flops.is_some()) {
        legend.push(LegendEntry {
            symbol: Symbol::Marker(neutral(false)),
            text: "model prediction".into(),
        });
    }
    let bw_threads = bw.first().map_or(d.threads, |c| c.threads);
    let c_threads = computes.first().map_or(d.threads, |c| c.threads);
    let roofs = if bw_threads == c_threads {
        format!("roofs, {bw_threads} thr")
    } else {
        format!("roofs, {bw_threads} thr (compute {c_threads} thr)")
    };
    legend.push(LegendEntry {
        symbol: Symbol::Line(Stroke::new(ROOF, 1.0, Dash::Solid)),
        text: roofs,
    });
    if bw.iter().chain(computes).any(|c| c.hi > c.lo) {
        legend.push(LegendEntry {
            symbol: Symbol::Patch(BAND),
            text: "roof 95% interval".into(),
        });
    }
    legend
}

/// The chart of `d`, titled `title`.
pub fn figure(d: &RooflineData, title: Option<String>) -> Figure {
    let of = |kind| -> Vec<&CeilingRow> { d.ceilings.iter().filter(|c| c.kind == kind).collect() };
    let bw = of(CeilingKind::Bandwidth);
    let drawn = drawn_computes(&of(CeilingKind::Compute));
    let computes: Vec<&CeilingRow> = drawn.iter().collect();
    let peak = d.ridge.flops;
    let lowest = computes
        .iter()
        .map(|c| c.value)
        .fold(f64::INFINITY, f64::min);
    let r = ranges(d, &bw, peak, lowest);
    let order = series(d);
    let mut items = bands(&bw, &computes, peak, &r);
    items.extend(roofs(d, &bw, &computes, &r));
    items.extend(point_items(d, &order));
    Figure {
        title,
        width_in: 3.5,
        legend: legend(d, &order, &bw, &computes),
        panels: vec![Panel {
            x: Axis::new(
                "Arithmetic intensity [flop/byte]",
                Scale::Log10,
                r.x.0,
                r.x.1,
            ),
            y: Axis::new("Performance [GFLOP/s]", Scale::Log10, r.y.0, r.y.1)
                .format(TickFormat::Number { divisor: 1e9 }),
            aspect: 0.68,
            items,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compute(name: &str, value: f64) -> CeilingRow {
        CeilingRow {
            kind: CeilingKind::Compute,
            name: name.into(),
            label: format!("{name} {} GFLOP/s", value / 1e9),
            value,
            lo: value * 0.99,
            hi: value * 1.01,
            unit: "FLOP/s",
            threads: 2,
            ridge_ai: 1.0,
            method: String::new(),
        }
    }

    #[test]
    fn names_share_their_common_words() {
        assert_eq!(
            joined_names(&["f64 AVX2 FMA", "f64 AVX-512 FMA"]),
            "f64 AVX2 / AVX-512 FMA"
        );
        assert_eq!(
            joined_names(&["f64 dgemm", "f64 AVX2 FMA"]),
            "f64 dgemm / AVX2 FMA"
        );
        assert_eq!(joined_names(&["f64 FMA", "f64 FMA x"]), "f64 FMA / FMA x");
        assert_eq!(joined_names(&["a", "b", "c"]), "a / b / c");
    }

    #[test]
    fn ceilings_a_reader_cannot_tell_apart_are_one_roof() {
        let rows = [
            compute("f64 AVX-512 FMA", 118.4e9),
            compute("f64 AVX2 FMA", 117.9e9),
            compute("f64 dgemm", 107e9),
            compute("f64 AVX-512 mul+add", 102e9),
            compute("f64 scalar FMA", 29.5e9),
        ];
        let drawn = drawn_computes(&rows.iter().collect::<Vec<_>>());
        let labels: Vec<&str> = drawn.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "f64 AVX-512 / AVX2 FMA 118.4 GFLOP/s",
                "f64 dgemm 107 GFLOP/s",
                "f64 AVX-512 mul+add 102 GFLOP/s",
                "f64 scalar FMA 29.5 GFLOP/s"
            ]
        );
        assert_eq!(drawn[0].value, 118.4e9);
        assert_eq!(drawn[0].name, "f64 AVX-512 FMA");
    }
}
