//! A laid-out chart in pixels: what a [`super::Plotter`] draws. Built by
//! [`super::layout`]; every text carries the box it occupies, so tests can
//! check that no two texts overlap.

use super::figure::Color;

/// An axis-aligned rectangle in pixels (y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Rect {
    pub fn new(x0: f64, y0: f64, x1: f64, y1: f64) -> Self {
        Self {
            x0: x0.min(x1),
            y0: y0.min(y1),
            x1: x0.max(x1),
            y1: y0.max(y1),
        }
    }

    pub fn width(&self) -> f64 {
        self.x1 - self.x0
    }

    pub fn height(&self) -> f64 {
        self.y1 - self.y0
    }

    /// The rectangle grown by `d` on every side.
    pub fn inflate(&self, d: f64) -> Rect {
        Rect::new(self.x0 - d, self.y0 - d, self.x1 + d, self.y1 + d)
    }

    /// True when the interiors overlap (touching edges do not count).
    pub fn intersects(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    pub fn contains(&self, o: &Rect) -> bool {
        o.x0 >= self.x0 && o.x1 <= self.x1 && o.y0 >= self.y0 && o.y1 <= self.y1
    }

    /// Area of the overlap with `o`.
    pub fn overlap_area(&self, o: &Rect) -> f64 {
        let w = (self.x1.min(o.x1) - self.x0.max(o.x0)).max(0.0);
        let h = (self.y1.min(o.y1) - self.y0.max(o.y0)).max(0.0);
        w * h
    }

    /// True when the segment a–b passes through the rectangle's interior
    /// (Liang–Barsky clipping).
    pub fn hits_segment(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let mut t0: f64 = 0.0;
        let mut t1: f64 = 1.0;
        for (p, q) in [
            (-dx, a.0 - self.x0),
            (dx, self.x1 - a.0),
            (-dy, a.1 - self.y0),
            (dy, self.y1 - a.1),
        ] {
            if p == 0.0 {
                if q <= 0.0 {
                    return false;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
                if t0 >= t1 {
                    return false;
                }
            }
        }
        true
    }
}

/// What a text is, for tests and for the drawing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextRole {
    Title,
    AxisTitle,
    TickLabel,
    Legend,
    /// A label placed next to a line, marker or span.
    Annotation,
}

/// A convex quadrilateral, corners in order.
pub type Quad = [(f64, f64); 4];

/// The corners of `r`.
pub fn rect_quad(r: &Rect) -> Quad {
    [(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)]
}

/// True when two convex polygons (or segments, given as two points) have
/// overlapping interiors, by the separating-axis theorem: they are apart
/// when the projections on some edge normal do not overlap (touching
/// counts as apart).
pub fn convex_intersect(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
    let separated_on = |poly: &[(f64, f64)]| {
        (0..poly.len()).any(|i| {
            let p = poly[i];
            let q = poly[(i + 1) % poly.len()];
            let axis = (q.1 - p.1, p.0 - q.0);
            if axis == (0.0, 0.0) {
                return false;
            }
            let project = |s: &[(f64, f64)]| {
                s.iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                        let d = v.0 * axis.0 + v.1 * axis.1;
                        (lo.min(d), hi.max(d))
                    })
            };
            let (a0, a1) = project(a);
            let (b0, b1) = project(b);
            let eps = 1e-9 * (axis.0.abs() + axis.1.abs());
            a1 <= b0 + eps || b1 <= a0 + eps
        })
    };
    !(separated_on(a) || separated_on(b))
}

/// A text and the box it occupies.
///
/// The box is `width` × `size` (one em) in the text's own frame, whose
/// x axis is the reading direction turned `angle_deg` counter-clockwise
/// from the screen's x axis; `anchor` is the box's corner where reading
/// starts, at the top of the letters.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub text: String,
    /// Font size, pixels per em.
    pub size: f64,
    pub color: Color,
    pub anchor: (f64, f64),
    /// Counter-clockwise on the screen, degrees (90 reads upwards).
    pub angle_deg: f64,
    /// Advance width of the text, pixels.
    pub width: f64,
    pub role: TextRole,
}

impl Text {
    /// Unit vectors of the text's frame on the screen: reading direction
    /// and "down" (from the top of the letters to their feet).
    pub fn frame(&self) -> ((f64, f64), (f64, f64)) {
        let t = self.angle_deg.to_radians();
        let (s, c) = (t.sin(), t.cos());
        // Avoid -0.0 and 6e-17 noise for the quarter turns.
        let r = |v: f64| if v.abs() < 1e-12 { 0.0 } else { v };
        ((r(c), r(-s)), (r(s), r(c)))
    }

    /// The box's corners grown by `pad` on every side.
    pub fn quad(&self, pad: f64) -> Quad {
        let (u, v) = self.frame();
        let h = self.size * super::text::BOX_EMS;
        let at = |a: f64, b: f64| {
            (
                self.anchor.0 + a * u.0 + b * v.0,
                self.anchor.1 + a * u.1 + b * v.1,
            )
        };
        [
            at(-pad, -pad),
            at(self.width + pad, -pad),
            at(self.width + pad, h + pad),
            at(-pad, h + pad),
        ]
    }

    /// The axis-aligned box around the text.
    pub fn bbox(&self) -> Rect {
        let q = self.quad(0.0);
        let xs = q.iter().map(|p| p.0);
        let ys = q.iter().map(|p| p.1);
        Rect::new(
            xs.clone().fold(f64::INFINITY, f64::min),
            ys.clone().fold(f64::INFINITY, f64::min),
            xs.fold(f64::NEG_INFINITY, f64::max),
            ys.fold(f64::NEG_INFINITY, f64::max),
        )
    }
}

/// Dash pattern in pixels: (dash, gap), or solid.
pub type DashPx = Option<(f64, f64)>;

/// A drawing primitive in pixels.
#[derive(Debug, Clone, PartialEq)]
pub enum Prim {
    Polyline {
        points: Vec<(f64, f64)>,
        color: Color,
        width: f64,
        dash: DashPx,
    },
    Polygon {
        points: Vec<(f64, f64)>,
        fill: Color,
    },
    Circle {
        center: (f64, f64),
        radius: f64,
        fill: Option<Color>,
        stroke: Option<(Color, f64)>,
    },
    Rect {
        rect: Rect,
        fill: Option<Color>,
        stroke: Option<(Color, f64)>,
    },
    Text(Text),
}

/// A white box behind a label that sits across a line, hiding the line
/// under its letters.
#[derive(Debug, Clone, PartialEq)]
pub struct Halo {
    pub quad: Quad,
    /// Index of the panel.
    pub panel: usize,
    /// The panel item the label belongs to: the only line its halo may hide.
    pub owner: Option<usize>,
}

/// A whole chart in pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// Canvas size, pixels.
    pub width: u32,
    pub height: u32,
    /// Pixels per inch the sizes were chosen for (300: the PNG is printed at
    /// the figure's width in inches).
    pub dpi: f64,
    /// Drawn in order.
    pub prims: Vec<Prim>,
    /// The plot areas, one per panel.
    pub plot_areas: Vec<Rect>,
    /// Boxes of markers (and their error bars) that labels avoid.
    pub marker_boxes: Vec<Rect>,
    /// Per panel, every line segment drawn, tagged with its item's index.
    pub segments: Vec<Vec<super::layout::Segment>>,
    /// White boxes under labels placed across their own line.
    pub halos: Vec<Halo>,
    /// The legend's frame when it is inside a plot area.
    pub legend_box: Option<Rect>,
    /// Labels that could not be placed without touching something.
    pub warnings: Vec<String>,
}

impl Scene {
    /// Every text of the chart.
    pub fn texts(&self) -> impl Iterator<Item = &Text> {
        self.prims.iter().filter_map(|p| match p {
            Prim::Text(t) => Some(t),
            _ => None,
        })
    }

    /// Halos that cover a line of another item than their label's
    /// (empty for a good layout): (label's item, hidden item) per panel.
    pub fn halos_over_other_lines(&self) -> Vec<(usize, Option<usize>, usize)> {
        let mut out = Vec::new();
        for h in &self.halos {
            let Some(segs) = self.segments.get(h.panel) else {
                continue;
            };
            for (owner, a, b) in segs {
                if Some(*owner) != h.owner && convex_intersect(&h.quad, &[*a, *b]) {
                    out.push((h.panel, h.owner, *owner));
                }
            }
        }
        out
    }

    /// Pairs of texts whose boxes overlap (empty for a good layout).
    pub fn overlapping_texts(&self) -> Vec<(String, String)> {
        let texts: Vec<&Text> = self.texts().collect();
        let mut out = Vec::new();
        for (i, a) in texts.iter().enumerate() {
            for b in &texts[i + 1..] {
                if convex_intersect(&a.quad(0.0), &b.quad(0.0)) {
                    out.push((a.text.clone(), b.text.clone()));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangles_and_segments() {
        let r = Rect::new(0.0, 0.0, 10.0, 10.0);
        assert!(r.intersects(&Rect::new(5.0, 5.0, 15.0, 15.0)));
        assert!(!r.intersects(&Rect::new(10.0, 0.0, 20.0, 10.0)), "touching");
        assert!(r.hits_segment((-5.0, 5.0), (15.0, 5.0)));
        assert!(r.hits_segment((-5.0, -5.0), (15.0, 15.0)));
        assert!(!r.hits_segment((-5.0, 12.0), (15.0, 30.0)));
        assert!(!r.hits_segment((11.0, -5.0), (11.0, 15.0)));
        assert_eq!(r.overlap_area(&Rect::new(5.0, 5.0, 15.0, 15.0)), 25.0);
    }

    #[test]
    fn separating_axes() {
        let a = rect_quad(&Rect::new(0.0, 0.0, 10.0, 10.0));
        let diamond = [(15.0, 5.0), (20.0, 0.0), (25.0, 5.0), (20.0, 10.0)];
        assert!(!convex_intersect(&a, &diamond));
        let near = [(9.0, 5.0), (14.0, 0.0), (19.0, 5.0), (14.0, 10.0)];
        assert!(convex_intersect(&a, &near));
        assert!(convex_intersect(&a, &[(-5.0, -5.0), (15.0, 15.0)]));
        assert!(!convex_intersect(&a, &[(12.0, -5.0), (30.0, 15.0)]));
        // A box rotated 45 degrees whose bounding box overlaps but whose
        // area does not.
        let t = Text {
            text: "x".into(),
            size: 10.0,
            color: Color::BLACK,
            anchor: (12.0, 12.0),
            angle_deg: 45.0,
            width: 30.0,
            role: TextRole::Annotation,
        };
        let q = t.quad(0.0);
        let beside = Rect::new(28.0, 12.0, 36.0, 18.0);
        assert!(t.bbox().intersects(&beside));
        assert!(!convex_intersect(&q, &rect_quad(&beside)));
        let up = Text {
            angle_deg: 90.0,
            anchor: (0.0, 100.0),
            ..t
        };
        assert_eq!(up.bbox(), Rect::new(0.0, 70.0, 10.0, 100.0));
    }
}
