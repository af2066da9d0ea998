//! Places the annotations of a panel: each label takes the first free
//! candidate position, in a fixed order, so the layout is deterministic.
//!
//! A label may sit across its own line on a white halo (as maps label
//! roads), but a halo never hides another line: a roof that a label's box
//! would cut is a roof the reader loses.

use super::candidates::{line_candidates, point_candidates, top_candidates, Cand};
use super::geometry::{clip_polyline, Mapper};
use super::marks::Obstacles;
use super::{GAP, LABEL_FONT};
use crate::chart::figure::{Color, Item, Panel};
use crate::chart::scene::{convex_intersect, rect_quad, Halo, Quad, Rect, Text, TextRole};
use crate::chart::text::{width as text_width, BOX_EMS};

/// One label waiting to be placed, with the candidates for it.
pub(super) struct Request {
    text: String,
    color: Color,
    width: f64,
    /// The panel item (a line) the label belongs to.
    owner: Option<usize>,
    candidates: Vec<Cand>,
}

/// The labels of every item of `panel`, with their candidate positions.
fn requests(map: &Mapper, panel: &Panel) -> Vec<Request> {
    let a = map.area;
    let h = LABEL_FONT * BOX_EMS;
    let req = |text: &str, color: Color, owner: Option<usize>, cands: &dyn Fn(f64) -> Vec<Cand>| {
        let width = text_width(text, LABEL_FONT);
        Request {
            text: text.to_string(),
            color,
            width,
            owner,
            candidates: cands(width),
        }
    };
    let mut out = Vec::new();
    for (i, item) in panel.items.iter().enumerate() {
        match item {
            Item::Line {
                points,
                stroke,
                label: Some((text, along)),
            } => {
                let px: Vec<(f64, f64)> =
                    points.iter().filter_map(|&(x, y)| map.px(x, y)).collect();
                let pieces = clip_polyline(&px, &a);
                out.push(req(text, darker(stroke.color), Some(i), &|w| {
                    pieces
                        .iter()
                        .flat_map(|p| line_candidates(p, *along, w, h))
                        .collect()
                }));
            }
            Item::Markers { points, marker } => {
                for p in points {
                    if let (Some(text), Some(c)) = (&p.label, map.px(p.x, p.y)) {
                        out.push(req(text, darker(marker.color), None, &|w| {
                            point_candidates(c, w, h)
                        }));
                    }
                }
            }
            Item::VLine {
                x,
                stroke,
                label: Some(text),
            } => {
                if let Some(px) = map.px_x(*x) {
                    out.push(req(text, darker(stroke.color), Some(i), &|w| {
                        top_candidates(px, w, h, &a, true)
                    }));
                }
            }
            Item::VSpan {
                x0,
                x1,
                label: Some(text),
                ..
            } => {
                if let (Some(p0), Some(p1)) = (map.px_x(*x0), map.px_x(*x1)) {
                    let mid = (p0.max(a.x0) + p1.min(a.x1)) / 2.0;
                    out.push(req(text, Color::TEXT, None, &|w| {
                        top_candidates(mid, w, h, &a, false)
                    }));
                }
            }
            _ => {}
        }
    }
    out
}

/// What a panel's labels are placed among.
struct Placer<'a> {
    obs: &'a Obstacles,
    /// The plot area less a small margin.
    inner: Rect,
    /// Texts already placed (and the panel's tick labels).
    placed: Vec<Quad>,
    markers: Vec<Quad>,
    /// Items that are labelled lines: no halo may hide them.
    labelled: Vec<usize>,
}

impl Placer<'_> {
    fn text_at(req: &Request, c: &Cand) -> Text {
        Text {
            text: req.text.clone(),
            size: LABEL_FONT,
            color: req.color,
            anchor: c.anchor,
            angle_deg: c.angle,
            width: req.width,
            role: TextRole::Annotation,
        }
    }

    fn inside(&self, t: &Text) -> bool {
        let r = self.inner;
        t.quad(0.0)
            .iter()
            .all(|&(x, y)| x >= r.x0 && x <= r.x1 && y >= r.y0 && y <= r.y1)
    }

    /// Inside the plot and clear of every text and marker.
    fn free_of_text(&self, t: &Text) -> bool {
        let q = t.quad(GAP / 2.0);
        self.inside(t)
            && !self.placed.iter().any(|p| convex_intersect(p, &q))
            && !self.markers.iter().any(|m| convex_intersect(m, &q))
    }

    /// Segments the text's box crosses: of item `owner` or of an
    /// unlabelled guide line (which a halo may hide), and of other labelled
    /// lines (which it must not).
    fn crossings(&self, t: &Text, owner: Option<usize>) -> (usize, usize) {
        let q = t.quad(GAP / 2.0);
        self.obs
            .segments
            .iter()
            .filter(|(_, p, r)| convex_intersect(&q, &[*p, *r]))
            .fold((0, 0), |(hideable, other), (o, _, _)| {
                if Some(*o) == owner || !self.labelled.contains(o) {
                    (hideable + 1, other)
                } else {
                    (hideable, other + 1)
                }
            })
    }

    /// A free spot, in order of preference: beside the line and clear of
    /// every line; centred on its own line; near it and clear of every
    /// line; beside it across a guide line; beside it across other lines
    /// at an angle. The flag says "needs a halo", which only ever hides the
    /// label's own line or an unlabelled guide.
    fn choose(&self, req: &Request) -> Option<(Text, bool)> {
        let texts: Vec<(Text, &Cand)> = req
            .candidates
            .iter()
            .map(|c| (Self::text_at(req, c), c))
            .collect();
        let ok = |t: &Text, pick: fn(&Cand) -> bool, c: &Cand, hide_ok: bool| {
            if !pick(c) || !self.free_of_text(t) {
                return false;
            }
            let (hideable, other) = self.crossings(t, req.owner);
            other == 0 && (hide_ok || hideable == 0)
        };
        let beside = |c: &Cand| !c.inline && !c.loose;
        let inline = |c: &Cand| c.inline;
        let loose = |c: &Cand| c.loose;
        let find = |pick: fn(&Cand) -> bool, hide_ok: bool| {
            texts
                .iter()
                .find(|(t, c)| ok(t, pick, c, hide_ok))
                .map(|(t, _)| t.clone())
        };
        find(beside, false)
            .map(|t| (t, false))
            .or_else(|| find(inline, true).map(|t| (t, true)))
            .or_else(|| find(loose, false).map(|t| (t, false)))
            .or_else(|| find(beside, true).map(|t| (t, true)))
            .or_else(|| self.across_lines(&texts, req).map(|t| (t, false)))
    }

    /// The last resort before giving up: beside the line (or near it),
    /// free of text, crossing the fewest other lines at an angle, with no
    /// halo, so every roof stays whole and runs behind the letters.
    fn across_lines(&self, texts: &[(Text, &Cand)], req: &Request) -> Option<Text> {
        texts
            .iter()
            .filter(|(t, c)| !c.inline && self.free_of_text(t) && !self.along_a_line(t))
            .min_by_key(|(t, _)| self.crossings(t, req.owner).1)
            .map(|(t, _)| t.clone())
    }

    /// True when a line crossing the text runs along it (within 30°), so
    /// the text would read as that line's label.
    fn along_a_line(&self, t: &Text) -> bool {
        let q = t.quad(GAP / 2.0);
        let (u, _) = t.frame();
        self.obs.segments.iter().any(|(_, p, r)| {
            let (dx, dy) = (r.0 - p.0, r.1 - p.1);
            let len = (dx * dx + dy * dy).sqrt();
            len > 0.0
                && ((u.0 * dy - u.1 * dx) / len).abs() < 0.5
                && convex_intersect(&q, &[*p, *r])
        })
    }

    /// True when some candidate is clear of text, markers and lines.
    fn has_clear_spot(&self, req: &Request) -> bool {
        req.candidates.iter().any(|c| {
            let t = Self::text_at(req, c);
            !c.inline && self.free_of_text(&t) && self.crossings(&t, None) == (0, 0)
        })
    }

    /// The candidate inside the plot least covered by placed text, for a
    /// label that has no free spot.
    fn least_covered(&self, req: &Request) -> Option<Text> {
        let cover = |t: &Text| {
            let b = t.bbox();
            self.placed
                .iter()
                .map(|p| b.overlap_area(&quad_bbox(p)))
                .sum::<f64>()
        };
        req.candidates
            .iter()
            .map(|c| Self::text_at(req, c))
            .filter(|t| self.inside(t))
            .min_by(|x, y| cover(x).total_cmp(&cover(y)))
    }
}

fn quad_bbox(q: &Quad) -> Rect {
    let xs = q.iter().map(|c| c.0);
    let ys = q.iter().map(|c| c.1);
    Rect::new(
        xs.clone().fold(f64::INFINITY, f64::min),
        ys.clone().fold(f64::INFINITY, f64::min),
        xs.fold(f64::NEG_INFINITY, f64::max),
        ys.fold(f64::NEG_INFINITY, f64::max),
    )
}

/// Where the labels of a panel go: texts, halos and warnings.
pub(super) struct Placed<'a> {
    pub(super) labels: &'a mut Vec<Text>,
    pub(super) halos: &'a mut Vec<Halo>,
    pub(super) warnings: &'a mut Vec<String>,
    /// Index of the panel, for the halos.
    pub(super) panel: usize,
}

/// Places the panel's annotations. Labels with no clear spot at all go
/// first, while the space they need is still free; the others keep the
/// figure's order.
pub(super) fn place_labels(out: Placed, obs: &Obstacles, map: &Mapper, panel: &Panel) {
    let mut placer = Placer {
        obs,
        inner: map.area.inflate(-GAP),
        placed: obs.texts.clone(),
        markers: obs.markers.iter().map(rect_quad).collect(),
        labelled: labelled_lines(panel),
    };
    let mut reqs = requests(map, panel);
    reqs.sort_by_key(|r| placer.has_clear_spot(r));
    for req in reqs {
        let text = match placer.choose(&req) {
            Some((t, halo)) => {
                if halo {
                    out.halos.push(Halo {
                        quad: t.quad(GAP / 2.0),
                        panel: out.panel,
                        owner: req.owner,
                    });
                }
                t
            }
            None => {
                out.warnings.push(format!(
                    "the label '{}' could not be placed without covering other text or lines",
                    req.text
                ));
                match placer.least_covered(&req) {
                    Some(t) => t,
                    None => continue,
                }
            }
        };
        placer.placed.push(text.quad(0.0));
        out.labels.push(text);
    }
}

/// Indices of the panel's items that are lines with a label of their own.
pub fn labelled_lines(panel: &Panel) -> Vec<usize> {
    panel
        .items
        .iter()
        .enumerate()
        .filter(|(_, item)| {
            matches!(
                item,
                Item::Line { label: Some(_), .. } | Item::VLine { label: Some(_), .. }
            )
        })
        .map(|(i, _)| i)
        .collect()
}

/// A label colour a little darker than its line, for contrast on white.
pub(super) fn darker(c: Color) -> Color {
    let f = |v: u8| (f64::from(v) * 0.75).round() as u8;
    Color::rgb(f(c.r), f(c.g), f(c.b))
}
