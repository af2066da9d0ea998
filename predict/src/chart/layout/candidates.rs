//! Candidate positions of a label: along its line, around its marker, or
//! down a vertical line or span, in order of preference.

use super::geometry::dist;
use super::{GAP, MARKER_R};
use crate::chart::figure::Along;
use crate::chart::scene::Rect;

/// A candidate position of a label: where its text starts and its angle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Cand {
    pub(super) anchor: (f64, f64),
    pub(super) angle: f64,
    /// Centred on its line, which a halo then interrupts.
    pub(super) inline: bool,
    /// Near the line but not along it: a last resort, since it may read
    /// as another line's label.
    pub(super) loose: bool,
}

/// A horizontal candidate filling `r`.
pub(super) fn flat(r: Rect) -> Cand {
    Cand {
        anchor: (r.x0, r.y0),
        angle: 0.0,
        inline: false,
        loose: false,
    }
}

/// A horizontal last-resort candidate filling `r`.
pub(super) fn loose(r: Rect) -> Cand {
    Cand {
        loose: true,
        ..flat(r)
    }
}

/// Fractions of a line's length where its label may go, from the end
/// `along` prefers.
fn fractions(along: Along) -> Vec<f64> {
    let steps: Vec<f64> = (0..=48).map(|i| 0.02 + 0.02 * f64::from(i)).collect();
    match along {
        Along::Start => steps,
        Along::End => steps.into_iter().rev().collect(),
        Along::Middle => {
            let mut v: Vec<f64> = steps;
            v.sort_by(|a, b| {
                (a - 0.5)
                    .abs()
                    .total_cmp(&(b - 0.5).abs())
                    .then(a.total_cmp(b))
            });
            v
        }
    }
}

/// The point `target` pixels along the polyline (`cum` its cumulative
/// lengths) and the angle of its segment, read left to right, in degrees
/// counter-clockwise on the screen.
fn point_at(points: &[(f64, f64)], cum: &[f64], target: f64) -> ((f64, f64), f64) {
    let i = cum
        .iter()
        .rposition(|&c| c <= target)
        .unwrap_or(0)
        .min(points.len() - 2);
    let (a, b) = (points[i], points[i + 1]);
    let seg = cum[i + 1] - cum[i];
    let t = if seg > 0.0 {
        (target - cum[i]) / seg
    } else {
        0.0
    };
    let (mut dx, mut dy) = (b.0 - a.0, b.1 - a.1);
    if dx < 0.0 {
        (dx, dy) = (-dx, -dy);
    }
    (
        (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1)),
        (-dy).atan2(dx).to_degrees(),
    )
}

/// Candidates along a polyline: at fractions of its length (from the end
/// `along` prefers), the text parallel to the line just above it; then the
/// same just below it, then further off (clear of markers on the line);
/// then centred on the line (drawn on a halo that interrupts it); then
/// horizontal boxes beside the same points.
pub(super) fn line_candidates(points: &[(f64, f64)], along: Along, w: f64, h: f64) -> Vec<Cand> {
    let mut out = Vec::new();
    if points.len() < 2 {
        return out;
    }
    let mut cum = vec![0.0];
    for s in points.windows(2) {
        cum.push(cum.last().expect("starts with 0") + dist(s[0], s[1]));
    }
    let total = *cum.last().expect("two points");
    if total <= 0.0 {
        return out;
    }
    let order = fractions(along);
    let g = GAP;
    let mut below = Vec::new();
    let mut lifted = Vec::new();
    let mut on_line = Vec::new();
    let mut flats = Vec::new();
    for f in order {
        let ((px, py), angle) = point_at(points, &cum, f * total);
        let (u, v) = {
            let r = angle.to_radians();
            ((r.cos(), -r.sin()), (r.sin(), r.cos()))
        };
        // The text centred on the point, starting at it, or ending at it.
        let at = |back: f64, off: f64| Cand {
            anchor: (px - back * u.0 + off * v.0, py - back * u.1 + off * v.1),
            angle,
            inline: false,
            loose: false,
        };
        for back in [w / 2.0, 0.0, w] {
            out.push(at(back, -(h + g)));
            below.push(at(back, g));
            // Clear of a marker sitting on the line.
            lifted.push(at(back, -(h + g + MARKER_R)));
            lifted.push(at(back, g + MARKER_R));
        }
        on_line.push(Cand {
            inline: true,
            ..at(w / 2.0, -h / 2.0)
        });
        flats.push(loose(Rect::new(px - g - w, py - g - h, px - g, py - g)));
        flats.push(loose(Rect::new(px + g, py + g, px + g + w, py + g + h)));
        flats.push(loose(Rect::new(px + g, py - g - h, px + g + w, py - g)));
        flats.push(loose(Rect::new(px - g - w, py + g, px - g, py + g + h)));
    }
    out.extend(below);
    out.extend(lifted);
    out.extend(on_line);
    out.extend(flats);
    out
}

pub(super) fn point_candidates(c: (f64, f64), w: f64, h: f64) -> Vec<Cand> {
    let mut out = Vec::new();
    for k in [1.0, 2.0, 3.5] {
        let d = MARKER_R * k + GAP;
        let (x, y) = c;
        for r in [
            Rect::new(x + d, y - h / 2.0, x + d + w, y + h / 2.0),
            Rect::new(x + d, y + d * 0.5, x + d + w, y + d * 0.5 + h),
            Rect::new(x + d, y - d * 0.5 - h, x + d + w, y - d * 0.5),
            Rect::new(x - d - w, y - h / 2.0, x - d, y + h / 2.0),
            Rect::new(x - w / 2.0, y - d - h, x + w / 2.0, y - d),
            Rect::new(x - w / 2.0, y + d, x + w / 2.0, y + d + h),
            Rect::new(x - d - w, y - d * 0.5 - h, x - d, y - d * 0.5),
            Rect::new(x - d - w, y + d * 0.5, x - d, y + d * 0.5 + h),
        ] {
            out.push(flat(r));
        }
    }
    out
}

/// Where a column of candidates starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum From {
    /// At the top, going down (a span's label).
    Top,
    /// At the foot, going up: a drop line's label (a Roofline's ridge)
    /// leaves the crowded top, where the lines it drops from meet, to
    /// their own labels.
    Foot,
}

/// Candidates in rows between `top` (pixels) and the bottom of `area`,
/// starting at `from`: beside the vertical line at `cx`, right then left
/// (`beside`), or centred on it (a span's label).
pub(super) fn column_candidates(
    cx: f64,
    top: f64,
    (w, h): (f64, f64),
    area: &Rect,
    beside: bool,
    from: From,
) -> Vec<Cand> {
    let mut out = Vec::new();
    let rows = ((area.y1 - top - GAP) / (h + GAP)).floor().max(0.0) as u32;
    for i in 0..rows {
        let row = match from {
            From::Top => i,
            From::Foot => rows - 1 - i,
        };
        let y0 = top + GAP + f64::from(row) * (h + GAP);
        if beside {
            out.push(flat(Rect::new(cx + GAP, y0, cx + GAP + w, y0 + h)));
            out.push(flat(Rect::new(cx - GAP - w, y0, cx - GAP, y0 + h)));
        } else {
            out.push(flat(Rect::new(cx - w / 2.0, y0, cx + w / 2.0, y0 + h)));
        }
    }
    out
}
