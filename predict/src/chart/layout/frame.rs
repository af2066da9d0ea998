//! The frame of a panel: tick marks, grid lines, tick labels, and text
//! sizing helpers.

use super::geometry::{frac, Mapper};
use super::marks::line;
use super::{GAP, MINOR_TICK_LEN, PT, TICK_FONT, TICK_LEN};
use crate::chart::figure::{Axis, Color};
use crate::chart::scene::{Prim, Rect, Text, TextRole};
use crate::chart::text::{width as text_width, BOX_EMS};
use crate::chart::ticks::Tick;

/// A text that fits `room` pixels: `size`, or smaller.
pub(super) fn fit_size(text: &str, size: f64, room: f64) -> f64 {
    let w = text_width(text, size);
    if w <= room || w == 0.0 {
        size
    } else {
        (size * room / w).floor()
    }
}

pub(super) fn horizontal(text: &str, size: f64, x0: f64, y0: f64, role: TextRole) -> Text {
    Text {
        text: text.to_string(),
        size,
        color: Color::TEXT,
        anchor: (x0, y0),
        angle_deg: 0.0,
        width: text_width(text, size),
        role,
    }
}

pub(super) fn fits_horizontal(axis: &Axis, area: Rect, t: &[Tick]) -> bool {
    let map = |v: f64| frac(axis, v).map(|f| area.x0 + f * area.width());
    let spans: Vec<(f64, f64)> = t
        .iter()
        .filter_map(|t| {
            let w = text_width(t.label.as_deref()?, TICK_FONT);
            let c = map(t.value)?;
            Some((c - w / 2.0, c + w / 2.0))
        })
        .collect();
    spans.windows(2).all(|w| w[1].0 - w[0].1 >= 2.0 * GAP)
}

pub(super) fn fits_vertical(axis: &Axis, height: f64, t: &[Tick]) -> bool {
    let ys: Vec<f64> = t
        .iter()
        .filter(|t| t.label.is_some())
        .filter_map(|t| frac(axis, t.value).map(|f| f * height))
        .collect();
    ys.windows(2)
        .all(|w| (w[1] - w[0]).abs() >= 1.6 * TICK_FONT * BOX_EMS)
}

pub(super) fn draw_grid_and_ticks(
    prims: &mut Vec<Prim>,
    labels: &mut Vec<Text>,
    map: &Mapper,
    x_ticks: &[Tick],
    y_ticks: &[Tick],
) {
    let a = map.area;
    let tick_w = 0.6 * PT;
    for t in x_ticks {
        let Some(x) = map.px_x(t.value) else { continue };
        if x < a.x0 - 0.5 || x > a.x1 + 0.5 {
            continue;
        }
        if t.major {
            prims.push(line(
                vec![(x, a.y0), (x, a.y1)],
                Color::GRID,
                0.5 * PT,
                None,
            ));
        }
        let len = if t.major { TICK_LEN } else { MINOR_TICK_LEN };
        prims.push(line(
            vec![(x, a.y1), (x, a.y1 + len)],
            Color::AXIS,
            tick_w,
            None,
        ));
        if let Some(l) = &t.label {
            let w = text_width(l, TICK_FONT);
            labels.push(horizontal(
                l,
                TICK_FONT,
                x - w / 2.0,
                a.y1 + TICK_LEN + GAP,
                TextRole::TickLabel,
            ));
        }
    }
    for t in y_ticks {
        let Some(y) = map.px_y(t.value) else { continue };
        if y < a.y0 - 0.5 || y > a.y1 + 0.5 {
            continue;
        }
        if t.major {
            prims.push(line(
                vec![(a.x0, y), (a.x1, y)],
                Color::GRID,
                0.5 * PT,
                None,
            ));
        }
        let len = if t.major { TICK_LEN } else { MINOR_TICK_LEN };
        prims.push(line(
            vec![(a.x0 - len, y), (a.x0, y)],
            Color::AXIS,
            tick_w,
            None,
        ));
        if let Some(l) = &t.label {
            let w = text_width(l, TICK_FONT);
            labels.push(horizontal(
                l,
                TICK_FONT,
                a.x0 - TICK_LEN - GAP - w,
                y - TICK_FONT * BOX_EMS / 2.0,
                TextRole::TickLabel,
            ));
        }
    }
}
