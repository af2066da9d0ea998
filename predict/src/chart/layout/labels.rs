//! Places the annotations of a panel: each label takes the first free
//! candidate position, in a fixed order, so the layout is deterministic.
//!
//! A label may sit across its own line on a white halo (as maps label
//! roads), but a halo never hides another line: a roof that a label's box
//! would cut is a roof the reader loses. A label with no room beside what
//! it names (a ceiling between two others closer than a label's height)
//! goes to the nearest clear spot, joined to its line by a thin leader, as
//! cartographers' callouts are.

use super::candidates::{column_candidates, flat, line_candidates, point_candidates, Cand, From};
use super::geometry::{clip_polyline, leaders_to, length_inside, Mapper};
use super::marks::{line, vline_top, Obstacles};
use super::{GAP, LABEL_FONT, PT};
use crate::chart::figure::{Color, Item, Panel};
use crate::chart::scene::{convex_intersect, rect_quad, Halo, Prim, Quad, Rect, Text, TextRole};
use crate::chart::text::{width as text_width, BOX_EMS};

/// One label waiting to be placed, with the candidates for it.
pub(super) struct Request {
    text: String,
    color: Color,
    width: f64,
    /// The panel item (a line) the label belongs to.
    owner: Option<usize>,
    candidates: Vec<Cand>,
    /// What the label names, in pixels (a line's clipped pieces, a marker's
    /// centre), which a leader may join it to; empty: no leader.
    target: Vec<Vec<(f64, f64)>>,
}

/// Longest leader, in label heights: further off, a label no longer reads
/// as its line's.
const MAX_LEADER_HEIGHTS: f64 = 12.0;

/// Width of a leader line, points.
const LEADER_PT: f64 = 0.5;

/// The labels of every item of `panel`, with their candidate positions.
fn requests(map: &Mapper, panel: &Panel) -> Vec<Request> {
    let a = map.area;
    let h = LABEL_FONT * BOX_EMS;
    let req = |text: &str,
               color: Color,
               owner: Option<usize>,
               target: Vec<Vec<(f64, f64)>>,
               cands: &dyn Fn(f64) -> Vec<Cand>| {
        let width = text_width(text, LABEL_FONT);
        Request {
            text: text.to_string(),
            color,
            width,
            owner,
            candidates: cands(width),
            target,
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
                out.push(req(
                    text,
                    darker(stroke.color),
                    Some(i),
                    pieces.clone(),
                    &|w| {
                        pieces
                            .iter()
                            .flat_map(|p| line_candidates(p, *along, w, h))
                            .collect()
                    },
                ));
            }
            Item::Markers { points, marker } => {
                for p in points {
                    if let (Some(text), Some(c)) = (&p.label, map.px(p.x, p.y)) {
                        out.push(req(text, darker(marker.color), None, vec![vec![c]], &|w| {
                            point_candidates(c, w, h)
                        }));
                    }
                }
            }
            Item::VLine {
                x,
                top,
                stroke,
                label: Some(text),
            } => {
                if let Some(px) = map.px_x(*x) {
                    let from = vline_top(map, *top);
                    let target = vec![vec![(px, from), (px, a.y1)]];
                    out.push(req(text, darker(stroke.color), Some(i), target, &|w| {
                        column_candidates(px, from, (w, h), &a, true, From::Foot)
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
                    out.push(req(text, Color::TEXT, None, Vec::new(), &|w| {
                        column_candidates(mid, a.y0, (w, h), &a, false, From::Top)
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

    /// True when item `o` is a labelled line other than `owner`, the
    /// label's own: no halo may hide it.
    fn other_line(&self, o: usize, owner: Option<usize>) -> bool {
        Some(o) != owner && self.labelled.contains(&o)
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
                if self.other_line(*o, owner) {
                    (hideable, other + 1)
                } else {
                    (hideable + 1, other)
                }
            })
    }

    /// A free spot, in order of preference: beside the line and clear of
    /// every line; centred on its own line; near it and clear of every
    /// line; beside it across a guide line; then, reaching [`Reach::Away`],
    /// in clear space nearby with a leader; beside it across other lines at
    /// an angle. A halo only ever hides the label's own line or an
    /// unlabelled guide.
    fn choose(&self, req: &Request, reach: Reach) -> Option<Placement> {
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
        let plain = Placement::plain;
        let haloed = |text| Placement {
            halo: true,
            ..plain(text)
        };
        match reach {
            Reach::Beside => find(beside, false)
                .map(plain)
                .or_else(|| find(inline, true).map(haloed))
                .or_else(|| find(loose, false).map(plain))
                .or_else(|| find(beside, true).map(haloed)),
            Reach::Away => self
                .callout(req)
                .or_else(|| self.across_lines(&texts, req).map(plain)),
        }
    }

    /// Puts `p`, the place of `req`, into `out` and among the obstacles.
    fn commit(&mut self, out: &mut Placed, req: &Request, p: Placement) {
        if p.halo {
            out.halos.push(Halo {
                quad: p.text.quad(GAP / 2.0),
                panel: out.panel,
                owner: req.owner,
            });
        }
        if let Some([a, b]) = p.leader {
            // Later labels keep clear of it as of a text.
            self.placed.push([a, b, b, a]);
            out.leaders
                .push(line(vec![a, b], req.color, LEADER_PT * PT, None));
        }
        self.placed.push(p.text.quad(0.0));
        out.labels.push(p.text);
    }

    /// The clear spot nearest to what the label names, on a grid over the
    /// plot: free of text, markers and labelled lines (a guide it crosses
    /// goes under a halo), its leader crossing no text or marker and at
    /// most [`MAX_LEADER_HEIGHTS`] label heights long. Nearest counts a
    /// label height for each other roof the leader crosses.
    fn callout(&self, req: &Request) -> Option<Placement> {
        let h = LABEL_FONT * BOX_EMS;
        let step = h / 2.0;
        let r = self.inner;
        let mut best: Option<(f64, Placement)> = None;
        let mut y = r.y0;
        while y + h <= r.y1 {
            let mut x = r.x0;
            while x + req.width <= r.x1 {
                let spot = Rect::new(x, y, x + req.width, y + h);
                x += step;
                let dearest = best.as_ref().map_or(f64::INFINITY, |b| b.0);
                let leaders: Vec<(f64, [(f64, f64); 2])> = leaders_to(&req.target, &spot)
                    .into_iter()
                    .filter(|l| l.0 <= MAX_LEADER_HEIGHTS * h && l.0 < dearest)
                    .collect();
                if leaders.is_empty() {
                    continue;
                }
                let text = Self::text_at(req, &flat(spot));
                // Across no labelled line; across a guide on a halo.
                let (guides, other) = self.crossings(&text, req.owner);
                if other > 0 || !self.free_of_text(&text) {
                    continue;
                }
                let clear = |l: &[(f64, f64); 2]| {
                    !self
                        .placed
                        .iter()
                        .chain(&self.markers)
                        .any(|q| convex_intersect(q, l))
                };
                // A leader that crosses other roofs reads less surely as
                // its line's: each crossing costs a label's height.
                let cost = |l: &(f64, [(f64, f64); 2])| {
                    l.0 + h * self.lines_crossed(&l.1, req.owner) as f64
                };
                let cheapest = leaders
                    .iter()
                    .filter(|l| clear(&l.1))
                    .map(|l| (cost(l), l.1))
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                if let Some((c, leader)) = cheapest.filter(|(c, _)| *c < dearest) {
                    let p = Placement {
                        text,
                        halo: guides > 0,
                        leader: Some(leader),
                    };
                    best = Some((c, p));
                }
            }
            y += step;
        }
        best.map(|b| b.1)
    }

    /// Labelled lines other than `owner`'s that the segment crosses.
    fn lines_crossed(&self, segment: &[(f64, f64); 2], owner: Option<usize>) -> usize {
        let mut crossed: Vec<usize> = self
            .obs
            .segments
            .iter()
            .filter(|(o, p, r)| self.other_line(*o, owner) && convex_intersect(segment, &[*p, *r]))
            .map(|(o, _, _)| *o)
            .collect();
        crossed.dedup();
        crossed.len()
    }

    /// The last resort before giving up: beside the line (or near it),
    /// free of text, covering the fewest pixels of other labelled lines at
    /// an angle, with no halo, so every roof stays whole and runs behind
    /// the letters.
    fn across_lines(&self, texts: &[(Text, &Cand)], req: &Request) -> Option<Text> {
        texts
            .iter()
            .filter(|(t, c)| !c.inline && self.free_of_text(t) && !self.along_a_line(t))
            .map(|(t, _)| (t, self.covered(t, req.owner)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(t, _)| t.clone())
    }

    /// Pixels of labelled lines other than `owner`'s inside the text's box.
    fn covered(&self, t: &Text, owner: Option<usize>) -> f64 {
        let q = t.quad(GAP / 2.0);
        self.obs
            .segments
            .iter()
            .filter(|(o, _, _)| self.other_line(*o, owner))
            .map(|(_, p, r)| length_inside(&q, *p, *r))
            .sum()
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

/// How far from what it names a label may go.
#[derive(Clone, Copy)]
enum Reach {
    /// Beside it, along it, or on it.
    Beside,
    /// Anywhere nearby: with a leader, or across other lines.
    Away,
}

/// Where a label is put: its text, whether it needs a halo, and the
/// leader joining it to what it names, if any.
struct Placement {
    text: Text,
    halo: bool,
    leader: Option<[(f64, f64); 2]>,
}

impl Placement {
    /// `text` as it is, with no halo and no leader.
    fn plain(text: Text) -> Self {
        Self {
            text,
            halo: false,
            leader: None,
        }
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

/// Where the labels of a panel go: texts, halos, leaders and warnings.
pub(super) struct Placed<'a> {
    pub(super) labels: &'a mut Vec<Text>,
    pub(super) halos: &'a mut Vec<Halo>,
    /// The leaders' lines, drawn over the panel's marks and under the texts.
    pub(super) leaders: &'a mut Vec<Prim>,
    pub(super) warnings: &'a mut Vec<String>,
    /// Index of the panel, for the halos.
    pub(super) panel: usize,
}

/// Places the panel's annotations. Labels with no clear spot at all go
/// first, while the space they need is still free; the others keep the
/// figure's order. Every label that can sit beside what it names does so
/// before any other is sent away from its own (a leader's spot could be
/// another label's only one).
pub(super) fn place_labels(mut out: Placed, obs: &Obstacles, map: &Mapper, panel: &Panel) {
    let mut placer = Placer {
        obs,
        inner: map.area.inflate(-GAP),
        placed: obs.texts.clone(),
        markers: obs.markers.iter().map(rect_quad).collect(),
        labelled: labelled_lines(panel),
    };
    let mut reqs = requests(map, panel);
    reqs.sort_by_key(|r| placer.has_clear_spot(r));
    let mut away = Vec::new();
    for req in reqs {
        match placer.choose(&req, Reach::Beside) {
            Some(p) => placer.commit(&mut out, &req, p),
            None => away.push(req),
        }
    }
    for req in away {
        if let Some(p) = placer.choose(&req, Reach::Away) {
            placer.commit(&mut out, &req, p);
            continue;
        }
        out.warnings.push(format!(
            "the label '{}' could not be placed without covering other text or lines",
            req.text
        ));
        if let Some(text) = placer.least_covered(&req) {
            placer.commit(&mut out, &req, Placement::plain(text));
        }
    }
}

/// Indices of the panel's items that are lines with a label of their own,
/// which no other label's halo may hide. A vertical line is a guide (a
/// Roofline's drop from its ridge) even when labelled: a label may cross
/// it on a halo.
pub fn labelled_lines(panel: &Panel) -> Vec<usize> {
    panel
        .items
        .iter()
        .enumerate()
        .filter(|(_, item)| matches!(item, Item::Line { label: Some(_), .. }))
        .map(|(i, _)| i)
        .collect()
}

/// A label colour a little darker than its line, for contrast on white.
pub(super) fn darker(c: Color) -> Color {
    let f = |v: u8| (f64::from(v) * 0.75).round() as u8;
    Color::rgb(f(c.r), f(c.g), f(c.b))
}
