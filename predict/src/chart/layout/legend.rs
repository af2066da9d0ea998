//! The legend: rows of symbol and text, below the panels or in a framed box
//! inside the first plot area, in the corner that covers the fewest marks.

use super::frame::horizontal;
use super::marks::{dash_px, line, marker_prims, Obstacles};
use super::{GAP, LEGEND_FONT, MARKER_R, PT};
use crate::chart::figure::{LegendEntry, Symbol};
use crate::chart::scene::{convex_intersect, rect_quad, Prim, Rect, Text, TextRole};
use crate::chart::text::{width as text_width, BOX_EMS};

/// Where the legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LegendPlace {
    /// In rows below the panels.
    #[default]
    Below,
    /// In a framed box in a corner of the first plot area.
    Inside,
    /// Not drawn.
    None,
}

/// The grid the entries are set in.
struct Grid {
    cols: usize,
    rows: usize,
    col_w: f64,
    col_gap: f64,
    row_h: f64,
    symbol_w: f64,
}

impl Grid {
    /// As many columns as fit `room` pixels.
    fn new(entries: &[LegendEntry], room: f64, max_cols: usize) -> Self {
        let size = LEGEND_FONT;
        let symbol_w = 2.2 * size;
        let col_gap = 1.2 * size;
        let col_w = entries
            .iter()
            .map(|e| symbol_w + GAP * 2.0 + text_width(&e.text, size))
            .fold(0.0, f64::max);
        let fit = ((room + col_gap) / (col_w + col_gap)).floor() as usize;
        let cols = fit.clamp(1, entries.len().min(max_cols).max(1));
        Self {
            cols,
            rows: entries.len().div_ceil(cols),
            col_w,
            col_gap,
            row_h: size * BOX_EMS + GAP * 1.5,
            symbol_w,
        }
    }

    fn width(&self) -> f64 {
        self.cols as f64 * self.col_w + (self.cols - 1) as f64 * self.col_gap
    }

    fn height(&self) -> f64 {
        self.rows as f64 * self.row_h
    }
}

/// Draws the legend in rows below the panels; returns its height.
pub(super) fn draw_legend(
    prims: &mut Vec<Prim>,
    labels: &mut Vec<Text>,
    entries: &[LegendEntry],
    x0: f64,
    y0: f64,
    room: f64,
) -> f64 {
    if entries.is_empty() {
        return 0.0;
    }
    let grid = Grid::new(entries, room, usize::MAX);
    let left = x0 + ((room - grid.width()) / 2.0).max(0.0);
    draw_entries(prims, labels, entries, &grid, (left, y0));
    grid.height()
}

/// Draws the legend in a framed box inside `area`, one column, in the
/// corner whose box crosses the fewest lines and markers; returns the box
/// (which the labels then avoid). Where every corner would cover a data
/// marker nothing is drawn and `None` returned: a legend must not hide
/// data, and the caller puts it below instead.
pub(super) fn draw_legend_inside(
    prims: &mut Vec<Prim>,
    labels: &mut Vec<Text>,
    entries: &[LegendEntry],
    area: Rect,
    obs: &Obstacles,
) -> Option<Rect> {
    if entries.is_empty() {
        return None;
    }
    let grid = Grid::new(entries, 0.0, 1);
    let (w, h) = (grid.width() + 2.0 * GAP, grid.height() + GAP);
    let m = 2.0 * GAP;
    let corners = [
        Rect::new(area.x0 + m, area.y0 + m, area.x0 + m + w, area.y0 + m + h),
        Rect::new(area.x1 - m - w, area.y1 - m - h, area.x1 - m, area.y1 - m),
        Rect::new(area.x1 - m - w, area.y0 + m, area.x1 - m, area.y0 + m + h),
        Rect::new(area.x0 + m, area.y1 - m - h, area.x0 + m + w, area.y1 - m),
    ];
    let cost = |r: &Rect| {
        let q = rect_quad(r);
        let lines = obs
            .segments
            .iter()
            .filter(|(_, a, b)| convex_intersect(&q, &[*a, *b]))
            .count();
        let marks = obs.markers.iter().filter(|m| m.intersects(r)).count();
        let texts = obs
            .texts
            .iter()
            .filter(|t| convex_intersect(&t[..], &q))
            .count();
        10 * marks + 10 * texts + lines
    };
    let best = *corners.iter().min_by_key(|r| cost(r))?;
    if obs.markers.iter().any(|m| m.intersects(&best)) {
        return None;
    }
    prims.push(Prim::Rect {
        rect: best,
        fill: Some(crate::chart::figure::Color::WHITE),
        stroke: Some((crate::chart::figure::Color::AXIS, 0.5 * PT)),
    });
    draw_entries(
        prims,
        labels,
        entries,
        &grid,
        (best.x0 + GAP, best.y0 + GAP * 0.75),
    );
    Some(best)
}

/// Draws each entry's symbol and text in the grid from `origin`.
fn draw_entries(
    prims: &mut Vec<Prim>,
    labels: &mut Vec<Text>,
    entries: &[LegendEntry],
    grid: &Grid,
    origin: (f64, f64),
) {
    let size = LEGEND_FONT;
    for (i, e) in entries.iter().enumerate() {
        let (r, c) = (i / grid.cols, i % grid.cols);
        let x = origin.0 + c as f64 * (grid.col_w + grid.col_gap);
        let y = origin.1 + r as f64 * grid.row_h;
        let cy = y + size * BOX_EMS / 2.0;
        prims.extend(symbol_prims(&e.symbol, x, cy, grid.symbol_w));
        labels.push(horizontal(
            &e.text,
            size,
            x + grid.symbol_w + 2.0 * GAP,
            y,
            TextRole::Legend,
        ));
    }
}

/// The primitives of a legend symbol `w` wide, centred on `cy`.
fn symbol_prims(symbol: &Symbol, x: f64, cy: f64, w: f64) -> Vec<Prim> {
    let size = LEGEND_FONT;
    match symbol {
        Symbol::Line(s) => vec![line(
            vec![(x, cy), (x + w, cy)],
            s.color,
            s.width_pt * PT,
            dash_px(s),
        )],
        Symbol::Marker(m) => marker_prims(m, (x + w / 2.0, cy), MARKER_R),
        Symbol::MarkerWithBar(m) => {
            let cx = x + w / 2.0;
            let half = size * 0.45;
            let mut out = vec![line(
                vec![(cx, cy - half), (cx, cy + half)],
                m.color,
                0.7 * PT,
                None,
            )];
            for yy in [cy - half, cy + half] {
                out.push(line(
                    vec![(cx - 0.8 * MARKER_R, yy), (cx + 0.8 * MARKER_R, yy)],
                    m.color,
                    0.7 * PT,
                    None,
                ));
            }
            out.extend(marker_prims(m, (cx, cy), MARKER_R));
            out
        }
        Symbol::Patch(color) => vec![Prim::Rect {
            rect: Rect::new(x, cy - size * 0.35, x + w, cy + size * 0.35),
            fill: Some(*color),
            stroke: None,
        }],
    }
}
