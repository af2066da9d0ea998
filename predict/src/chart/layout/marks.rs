//! What a panel draws in data coordinates, in pixels: spans, bands, lines
//! and markers with their error bars; each mark is also recorded as an
//! obstacle for the labels.

use super::geometry::{clip_polygon, clip_polyline, union, Mapper};
use super::{MARKER_R, PT};
use crate::chart::figure::{Color, Dash, Item, Marker, MarkerPoint, Panel, Shape, Stroke};
use crate::chart::scene::{DashPx, Prim, Quad, Rect};

pub(super) fn line(points: Vec<(f64, f64)>, color: Color, width: f64, dash: DashPx) -> Prim {
    Prim::Polyline {
        points,
        color,
        width,
        dash,
    }
}

pub(super) fn dash_px(s: &Stroke) -> DashPx {
    let w = s.width_pt * PT;
    match s.dash {
        Dash::Solid => None,
        Dash::Dashed => Some((4.0 * w, 2.5 * w)),
        Dash::Dotted => Some((1.2 * w, 1.8 * w)),
    }
}

/// A line segment in pixels and the index of the panel item it belongs to.
pub type Segment = (usize, (f64, f64), (f64, f64));

/// What labels must avoid in one panel.
#[derive(Default)]
pub(super) struct Obstacles {
    /// Line segments, pixels, tagged with the item they belong to.
    pub(super) segments: Vec<Segment>,
    pub(super) markers: Vec<Rect>,
    pub(super) texts: Vec<Quad>,
}

/// Draws the panel's items: spans and bands first, then lines, then
/// markers, so markers stay on top.
pub(super) fn draw_items(prims: &mut Vec<Prim>, obs: &mut Obstacles, map: &Mapper, panel: &Panel) {
    for item in &panel.items {
        draw_underlay(prims, map, item);
    }
    for (owner, item) in panel.items.iter().enumerate() {
        draw_line(prims, obs, map, owner, item);
    }
    for item in &panel.items {
        if let Item::Markers { points, marker } = item {
            for p in points {
                draw_marker_point(prims, obs, map, p, marker);
            }
        }
    }
}

/// A shaded span or an uncertainty band, clipped to the plot area.
fn draw_underlay(prims: &mut Vec<Prim>, map: &Mapper, item: &Item) {
    let a = map.area;
    match item {
        Item::VSpan { x0, x1, color, .. } => {
            if let (Some(p0), Some(p1)) = (map.px_x(*x0), map.px_x(*x1)) {
                let r = Rect::new(p0.max(a.x0), a.y0, p1.min(a.x1), a.y1);
                if r.width() > 0.0 {
                    prims.push(Prim::Rect {
                        rect: r,
                        fill: Some(*color),
                        stroke: None,
                    });
                }
            }
        }
        Item::Band { x, lo, hi, color } => {
            let edge = |ys: &[f64]| -> Vec<(f64, f64)> {
                x.iter()
                    .zip(ys)
                    .filter_map(|(&x, &y)| map.px(x, y))
                    .collect()
            };
            let mut poly = edge(hi);
            poly.extend(edge(lo).into_iter().rev());
            let clipped = clip_polygon(&poly, &a);
            if clipped.len() > 2 {
                prims.push(Prim::Polygon {
                    points: clipped,
                    fill: *color,
                });
            }
        }
        _ => {}
    }
}

/// Where a vertical line up to `top` (data units; `None`: the panel's top)
/// ends, in pixels, within the plot area.
pub(super) fn vline_top(map: &Mapper, top: Option<f64>) -> f64 {
    let a = map.area;
    top.and_then(|y| map.px_y(y))
        .map_or(a.y0, |y| y.clamp(a.y0, a.y1))
}

/// A polyline or vertical line, clipped, its segments recorded as
/// obstacles owned by item `owner`.
fn draw_line(prims: &mut Vec<Prim>, obs: &mut Obstacles, map: &Mapper, owner: usize, item: &Item) {
    let a = map.area;
    let (pieces, stroke) = match item {
        Item::Line { points, stroke, .. } => {
            let px: Vec<(f64, f64)> = points.iter().filter_map(|&(x, y)| map.px(x, y)).collect();
            (clip_polyline(&px, &a), stroke)
        }
        Item::VLine { x, top, stroke, .. } => {
            match map.px_x(*x).filter(|px| *px >= a.x0 && *px <= a.x1) {
                Some(px) => (vec![vec![(px, vline_top(map, *top)), (px, a.y1)]], stroke),
                None => return,
            }
        }
        _ => return,
    };
    for piece in pieces {
        obs.segments
            .extend(piece.windows(2).map(|w| (owner, w[0], w[1])));
        prims.push(line(
            piece,
            stroke.color,
            stroke.width_pt * PT,
            dash_px(stroke),
        ));
    }
}

pub(super) fn draw_marker_point(
    prims: &mut Vec<Prim>,
    obs: &mut Obstacles,
    map: &Mapper,
    p: &MarkerPoint,
    marker: &Marker,
) {
    let a = map.area;
    let Some((x, y)) = map.px(p.x, p.y) else {
        return;
    };
    if !a.inflate(0.5).contains(&Rect::new(x, y, x, y)) {
        return;
    }
    let mut bbox = Rect::new(x - MARKER_R, y - MARKER_R, x + MARKER_R, y + MARKER_R);
    let bar_w = 0.7 * PT;
    let cap = 0.8 * MARKER_R;
    if let Some((lo, hi)) = p.y_err {
        let y_lo = map.px_y(lo).unwrap_or(a.y1).clamp(a.y0, a.y1);
        let y_hi = map.px_y(hi).unwrap_or(a.y0).clamp(a.y0, a.y1);
        prims.push(line(vec![(x, y_lo), (x, y_hi)], marker.color, bar_w, None));
        for yy in [y_lo, y_hi] {
            prims.push(line(
                vec![(x - cap, yy), (x + cap, yy)],
                marker.color,
                bar_w,
                None,
            ));
        }
        bbox = union(bbox, Rect::new(x - cap, y_hi, x + cap, y_lo));
    }
    if let Some((lo, hi)) = p.x_err {
        let x_lo = map.px_x(lo).unwrap_or(a.x0).clamp(a.x0, a.x1);
        let x_hi = map.px_x(hi).unwrap_or(a.x1).clamp(a.x0, a.x1);
        prims.push(line(vec![(x_lo, y), (x_hi, y)], marker.color, bar_w, None));
        for xx in [x_lo, x_hi] {
            prims.push(line(
                vec![(xx, y - cap), (xx, y + cap)],
                marker.color,
                bar_w,
                None,
            ));
        }
        bbox = union(bbox, Rect::new(x_lo, y - cap, x_hi, y + cap));
    }
    prims.extend(marker_prims(marker, (x, y), MARKER_R));
    obs.markers.push(bbox);
}

/// A cross of arms `s` long from `c` and 0.36·`s` wide, turned by
/// `angle` (0: upright), as the 12 corners of its outline.
fn cross(c: (f64, f64), s: f64, angle: f64) -> Vec<(f64, f64)> {
    let w = 0.36 * s;
    // One arm's three outer corners, going round; the other arms turned.
    let arm = [(s, -w), (s, w), (w, w)];
    let (sin, cos) = angle.sin_cos();
    (0..4)
        .flat_map(|q| {
            let (qs, qc) = (f64::from(q) * std::f64::consts::FRAC_PI_2).sin_cos();
            arm.map(move |(u, v)| (u * qc - v * qs, u * qs + v * qc))
        })
        .map(|(u, v)| (c.0 + u * cos - v * sin, c.1 + u * sin + v * cos))
        .collect()
}

/// The primitives of one marker centred at `c`.
pub(super) fn marker_prims(marker: &Marker, c: (f64, f64), r: f64) -> Vec<Prim> {
    // Hollow markers have no fill, so a measured point under its
    // prediction stays visible.
    let (fill, stroke) = if marker.filled {
        (Some(marker.color), None)
    } else {
        (None, Some((marker.color, 0.8 * PT)))
    };
    let (x, y) = c;
    let poly: Vec<(f64, f64)> = match marker.shape {
        Shape::Circle => {
            return vec![Prim::Circle {
                center: c,
                radius: r,
                fill,
                stroke,
            }]
        }
        Shape::Square => {
            let s = 0.85 * r;
            vec![
                (x - s, y - s),
                (x + s, y - s),
                (x + s, y + s),
                (x - s, y + s),
            ]
        }
        Shape::Diamond => {
            let s = 1.2 * r;
            vec![(x, y - s), (x + s, y), (x, y + s), (x - s, y)]
        }
        Shape::Triangle => {
            let s = 1.15 * r;
            vec![(x, y - s), (x + s, y + 0.75 * s), (x - s, y + 0.75 * s)]
        }
        Shape::InvertedTriangle => {
            let s = 1.15 * r;
            vec![(x, y + s), (x + s, y - 0.75 * s), (x - s, y - 0.75 * s)]
        }
        Shape::Plus => cross(c, 1.1 * r, 0.0),
        Shape::Cross => cross(c, 1.2 * r, std::f64::consts::FRAC_PI_4),
        Shape::Star => (0..10)
            .map(|k| {
                // Points up: the first vertex at the top (screen y grows down).
                let a = std::f64::consts::PI * f64::from(k) / 5.0;
                let rk = if k % 2 == 0 { 1.35 * r } else { 0.55 * r };
                (x + rk * a.sin(), y - rk * a.cos())
            })
            .collect(),
    };
    let mut out: Vec<Prim> = fill
        .map(|fill| Prim::Polygon {
            points: poly.clone(),
            fill,
        })
        .into_iter()
        .collect();
    if let Some((color, w)) = stroke {
        let mut closed = poly.clone();
        closed.push(poly[0]);
        out.push(line(closed, color, w, None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twice the signed area of a polygon (positive: one way round).
    fn area2(p: &[(f64, f64)]) -> f64 {
        (0..p.len())
            .map(|i| {
                let (a, b) = (p[i], p[(i + 1) % p.len()]);
                a.0 * b.1 - b.0 * a.1
            })
            .sum()
    }

    #[test]
    fn a_cross_is_a_simple_twelve_cornered_outline_around_its_centre() {
        for angle in [0.0, std::f64::consts::FRAC_PI_4] {
            let p = cross((10.0, 20.0), 5.0, angle);
            assert_eq!(p.len(), 12);
            // Its area is the five squares of arm width (0.36·s each way)
            // plus the four arms' rectangles beyond them: the outline goes
            // round once, without folding over itself.
            let w = 0.36 * 5.0;
            let expected = 4.0 * w * w + 4.0 * (2.0 * w) * (5.0 - w);
            assert!((area2(&p).abs() / 2.0 - expected).abs() < 1e-9, "{p:?}");
            let (cx, cy) = p.iter().fold((0.0, 0.0), |a, q| (a.0 + q.0, a.1 + q.1));
            assert!((cx / 12.0 - 10.0).abs() < 1e-9 && (cy / 12.0 - 20.0).abs() < 1e-9);
        }
    }
}
