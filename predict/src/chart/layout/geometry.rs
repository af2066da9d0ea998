//! Data-to-pixel mapping, clipping of lines and polygons to a plot area,
//! and the segment geometry of label boxes and their leaders.

use super::GAP;
use crate::chart::figure::{Axis, Scale};
use crate::chart::scene::{Quad, Rect};

/// Maps data to pixels in one plot area.
pub(super) struct Mapper<'a> {
    pub(super) x: &'a Axis,
    pub(super) y: &'a Axis,
    pub(super) area: Rect,
}

pub(super) fn frac(axis: &Axis, v: f64) -> Option<f64> {
    match axis.scale {
        Scale::Linear => Some((v - axis.min) / (axis.max - axis.min)),
        Scale::Log10 | Scale::Log2 => {
            (v > 0.0).then(|| (v.ln() - axis.min.ln()) / (axis.max.ln() - axis.min.ln()))
        }
    }
}

impl Mapper<'_> {
    pub(super) fn px(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        Some((self.px_x(x)?, self.px_y(y)?))
    }

    pub(super) fn px_x(&self, x: f64) -> Option<f64> {
        frac(self.x, x).map(|f| self.area.x0 + f * self.area.width())
    }

    pub(super) fn px_y(&self, y: f64) -> Option<f64> {
        frac(self.y, y).map(|f| self.area.y1 - f * self.area.height())
    }
}

/// Clips the polyline to `area`, splitting it where it leaves.
pub(super) fn clip_polyline(points: &[(f64, f64)], area: &Rect) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    for w in points.windows(2) {
        match clip_segment(w[0], w[1], area) {
            Some((a, b)) => {
                if current.last() != Some(&a) {
                    if current.len() > 1 {
                        out.push(std::mem::take(&mut current));
                    }
                    current.clear();
                    current.push(a);
                }
                current.push(b);
                if b != w[1] {
                    out.push(std::mem::take(&mut current));
                }
            }
            None => {
                if current.len() > 1 {
                    out.push(std::mem::take(&mut current));
                }
                current.clear();
            }
        }
    }
    if current.len() > 1 {
        out.push(current);
    }
    out
}

/// Liang–Barsky clipping of a segment to a rectangle.
pub(super) fn clip_segment(
    a: (f64, f64),
    b: (f64, f64),
    r: &Rect,
) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - r.x0),
        (dx, r.x1 - a.0),
        (-dy, a.1 - r.y0),
        (dy, r.y1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| (a.0 + t * dx, a.1 + t * dy);
    Some((
        if t0 > 0.0 { at(t0) } else { a },
        if t1 < 1.0 { at(t1) } else { b },
    ))
}

/// Sutherland–Hodgman clipping of a polygon to a rectangle.
pub(super) fn clip_polygon(points: &[(f64, f64)], r: &Rect) -> Vec<(f64, f64)> {
    type Inside = fn(&Rect, (f64, f64)) -> bool;
    type Cross = fn(&Rect, (f64, f64), (f64, f64)) -> (f64, f64);
    let edges: [(Inside, Cross); 4] = [
        (|r, p| p.0 >= r.x0, |r, a, b| lerp_x(a, b, r.x0)),
        (|r, p| p.0 <= r.x1, |r, a, b| lerp_x(a, b, r.x1)),
        (|r, p| p.1 >= r.y0, |r, a, b| lerp_y(a, b, r.y0)),
        (|r, p| p.1 <= r.y1, |r, a, b| lerp_y(a, b, r.y1)),
    ];
    let mut poly = points.to_vec();
    for (inside, cross) in edges {
        if poly.is_empty() {
            break;
        }
        let input = std::mem::take(&mut poly);
        for i in 0..input.len() {
            let cur = input[i];
            let prev = input[(i + input.len() - 1) % input.len()];
            match (inside(r, cur), inside(r, prev)) {
                (true, true) => poly.push(cur),
                (true, false) => {
                    poly.push(cross(r, prev, cur));
                    poly.push(cur);
                }
                (false, true) => poly.push(cross(r, prev, cur)),
                (false, false) => {}
            }
        }
    }
    poly
}

pub(super) fn lerp_x(a: (f64, f64), b: (f64, f64), x: f64) -> (f64, f64) {
    let t = (x - a.0) / (b.0 - a.0);
    (x, a.1 + t * (b.1 - a.1))
}

pub(super) fn lerp_y(a: (f64, f64), b: (f64, f64), y: f64) -> (f64, f64) {
    let t = (y - a.1) / (b.1 - a.1);
    (a.0 + t * (b.0 - a.0), y)
}

pub(super) fn union(a: Rect, b: Rect) -> Rect {
    Rect::new(
        a.x0.min(b.x0),
        a.y0.min(b.y0),
        a.x1.max(b.x1),
        a.y1.max(b.y1),
    )
}

/// Length of the segment a–b inside the convex quadrilateral `q`
/// (Cyrus–Beck: the segment's parameter range on the inner side of every
/// edge).
pub(super) fn length_inside(q: &Quad, a: (f64, f64), b: (f64, f64)) -> f64 {
    let d = (b.0 - a.0, b.1 - a.1);
    // Twice the signed area: which side of an edge is inside.
    let orient: f64 = (0..4)
        .map(|i| {
            let (p, r) = (q[i], q[(i + 1) % 4]);
            p.0 * r.1 - r.0 * p.1
        })
        .sum::<f64>()
        .signum();
    let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
    for i in 0..4 {
        let (p, r) = (q[i], q[(i + 1) % 4]);
        // Inward normal of edge p–r.
        let n = (-(r.1 - p.1) * orient, (r.0 - p.0) * orient);
        let num = n.0 * (a.0 - p.0) + n.1 * (a.1 - p.1);
        let den = n.0 * d.0 + n.1 * d.1;
        if den == 0.0 {
            if num < 0.0 {
                return 0.0;
            }
        } else {
            let t = -num / den;
            if den > 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    (t1 - t0).max(0.0) * (d.0 * d.0 + d.1 * d.1).sqrt()
}

/// Points along each segment of a target a leader may start from, besides
/// the one nearest to the label.
const LEADER_STARTS: u32 = 16;

/// Leaders from `target` (polylines, or a point) to the box `spot`,
/// shortest first, each with its length: from the target's point nearest
/// to the box's centre, and from points spread along it (a straight drop
/// may be blocked by another label where a slanted one is not). Each ends
/// [`GAP`] short of the box, at the box's point nearest to its start.
pub(super) fn leaders_to(target: &[Vec<(f64, f64)>], spot: &Rect) -> Vec<(f64, [(f64, f64); 2])> {
    let centre = ((spot.x0 + spot.x1) / 2.0, (spot.y0 + spot.y1) / 2.0);
    let starts = target.iter().flat_map(|piece| match piece.as_slice() {
        [p] => vec![*p],
        _ => piece
            .windows(2)
            .flat_map(|s| {
                let along = (0..=LEADER_STARTS).map(move |i| {
                    let t = f64::from(i) / f64::from(LEADER_STARTS);
                    (
                        s[0].0 + t * (s[1].0 - s[0].0),
                        s[0].1 + t * (s[1].1 - s[0].1),
                    )
                });
                along.chain([nearest_on(s[0], s[1], centre)])
            })
            .collect(),
    });
    let mut out: Vec<(f64, [(f64, f64); 2])> = starts
        .filter_map(|on| {
            let edge = (on.0.clamp(spot.x0, spot.x1), on.1.clamp(spot.y0, spot.y1));
            let d = dist(on, edge);
            (d > GAP).then(|| {
                let end = (
                    edge.0 + (on.0 - edge.0) * GAP / d,
                    edge.1 + (on.1 - edge.1) * GAP / d,
                );
                (d, [on, end])
            })
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The point of segment a–b nearest to `p`.
fn nearest_on(a: (f64, f64), b: (f64, f64), p: (f64, f64)) -> (f64, f64) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a.0 + t * dx, a.1 + t * dy)
}

/// The distance between two points.
pub(super) fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}
