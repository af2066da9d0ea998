//! Turns a [`Figure`] into a [`Scene`]: margins from the measured tick
//! labels, data mapped to pixels, lines clipped to the plot area, and every
//! annotation placed where it covers no other text, marker or line.
//!
//! Sizes are chosen for print: the canvas is the figure's width in inches at
//! 300 pixels per inch, tick labels are 7 pt, axis titles 8 pt, annotations
//! 6.5 pt, lines 0.75–1.25 pt. Label placement is a deterministic greedy
//! search: each label, in the order the figure lists them, takes the first
//! free candidate position of a fixed list (along its line, around its
//! marker, down its span), so the same figure always gives the same layout.

use super::figure::{
    Along, Axis, Color, Dash, Figure, Item, LegendEntry, Marker, MarkerPoint, Panel, Scale, Shape,
    Stroke, Symbol,
};
use super::scene::{convex_intersect, rect_quad, DashPx, Prim, Quad, Rect, Scene, Text, TextRole};
use super::text::{width as text_width, BOX_EMS};
use super::ticks::{ticks, Tick};

/// Pixels per inch of the canvas.
pub const DPI: f64 = 300.0;
const PT: f64 = DPI / 72.0;
const TICK_FONT: f64 = 7.0 * PT;
const AXIS_FONT: f64 = 8.0 * PT;
const LABEL_FONT: f64 = 6.5 * PT;
const LEGEND_FONT: f64 = 7.0 * PT;
const TITLE_FONT: f64 = 8.5 * PT;
const PAD: f64 = 3.0 * PT;
const GAP: f64 = 1.5 * PT;
const TICK_LEN: f64 = 3.0 * PT;
const MINOR_TICK_LEN: f64 = 1.8 * PT;
const MARKER_R: f64 = 2.3 * PT;
const FRAME_W: f64 = 0.75 * PT;

/// Lays out `fig`.
pub fn layout(fig: &Figure) -> Scene {
    let width = (fig.width_in * DPI).round();
    let mut prims = Vec::new();
    let mut warnings = Vec::new();

    // Vertical ticks first: their labels set the left margin.
    let heights: Vec<f64> = fig
        .panels
        .iter()
        .map(|p| (p.aspect * width).round())
        .collect();
    let y_ticks: Vec<Vec<Tick>> = fig
        .panels
        .iter()
        .zip(&heights)
        .map(|(p, &h)| ticks(&p.y, &|t| fits_vertical(&p.y, h, t)))
        .collect();
    let y_label_w = y_ticks
        .iter()
        .flatten()
        .filter_map(|t| t.label.as_deref())
        .map(|l| text_width(l, TICK_FONT))
        .fold(0.0, f64::max);
    let has_y_title = fig.panels.iter().any(|p| !p.y.title.is_empty());
    let left =
        (PAD + if has_y_title {
            AXIS_FONT * BOX_EMS + GAP
        } else {
            0.0
        } + y_label_w
            + GAP
            + TICK_LEN)
            .round();
    // The last x tick label is centred on the right edge: leave it room.
    let right = (PAD + 0.5 * text_width("00000", TICK_FONT)).round();
    let plot_w = width - left - right;

    let mut top = PAD;
    if let Some(title) = &fig.title {
        let size = fit_size(title, TITLE_FONT, width - 2.0 * PAD);
        let w = text_width(title, size);
        prims.push(Prim::Text(horizontal(
            title,
            size,
            ((width - w) / 2.0).max(PAD),
            top,
            TextRole::Title,
        )));
        top += size * BOX_EMS + 2.0 * GAP;
    } else {
        top += GAP;
    }

    let mut plot_areas = Vec::new();
    let mut marker_boxes = Vec::new();
    let mut labels: Vec<Text> = Vec::new();
    let mut halos: Vec<Quad> = Vec::new();
    let n_panels = fig.panels.len();
    for (i, panel) in fig.panels.iter().enumerate() {
        let area = Rect::new(left, top, left + plot_w, top + heights[i]);
        let x_ticks = ticks(&panel.x, &|t| fits_horizontal(&panel.x, area, t));
        let map = Mapper {
            x: &panel.x,
            y: &panel.y,
            area,
        };
        draw_grid_and_ticks(&mut prims, &mut labels, &map, &x_ticks, &y_ticks[i]);
        let mut obstacles = Obstacles::default();
        draw_items(&mut prims, &mut obstacles, &map, panel);
        prims.push(Prim::Rect {
            rect: area,
            fill: None,
            stroke: Some((Color::AXIS, FRAME_W)),
        });
        obstacles.texts.extend(labels.iter().map(|t| t.quad(0.0)));
        place_labels(
            &mut labels,
            &mut halos,
            &mut warnings,
            &obstacles,
            &map,
            panel,
        );
        marker_boxes.extend(obstacles.markers.iter().copied());

        // Axis titles.
        let mut bottom = area.y1 + TICK_LEN + GAP + TICK_FONT * BOX_EMS;
        let last_of_kind = i + 1 == n_panels || fig.panels[i + 1].x.title != panel.x.title;
        if last_of_kind && !panel.x.title.is_empty() {
            bottom += GAP;
            let size = fit_size(&panel.x.title, AXIS_FONT, plot_w);
            let w = text_width(&panel.x.title, size);
            labels.push(horizontal(
                &panel.x.title,
                size,
                area.x0 + (area.width() - w) / 2.0,
                bottom,
                TextRole::AxisTitle,
            ));
            bottom += size * BOX_EMS;
        }
        if !panel.y.title.is_empty() {
            let size = fit_size(&panel.y.title, AXIS_FONT, area.height());
            let w = text_width(&panel.y.title, size);
            let cy = area.y0 + area.height() / 2.0;
            labels.push(Text {
                text: panel.y.title.clone(),
                size,
                color: Color::TEXT,
                anchor: (PAD, cy + w / 2.0),
                angle_deg: 90.0,
                width: w,
                role: TextRole::AxisTitle,
            });
        }
        plot_areas.push(area);
        top = bottom
            + if i + 1 == n_panels {
                2.0 * GAP
            } else {
                3.0 * GAP
            };
    }

    let legend_h = draw_legend(
        &mut prims,
        &mut labels,
        &fig.legend,
        PAD,
        top,
        width - 2.0 * PAD,
    );
    top += legend_h;
    prims.extend(halos.into_iter().map(|q| Prim::Polygon {
        points: q.to_vec(),
        fill: Color::WHITE,
    }));
    prims.extend(labels.into_iter().map(Prim::Text));
    let height = (top + PAD).round();
    let mut all = vec![Prim::Rect {
        rect: Rect::new(0.0, 0.0, width, height),
        fill: Some(Color::WHITE),
        stroke: None,
    }];
    all.extend(prims);
    Scene {
        width: width as u32,
        height: height as u32,
        dpi: DPI,
        prims: all,
        plot_areas,
        marker_boxes,
        warnings,
    }
}

/// A text that fits `room` pixels: `size`, or smaller.
fn fit_size(text: &str, size: f64, room: f64) -> f64 {
    let w = text_width(text, size);
    if w <= room || w == 0.0 {
        size
    } else {
        (size * room / w).floor()
    }
}

fn horizontal(text: &str, size: f64, x0: f64, y0: f64, role: TextRole) -> Text {
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

/// Maps data to pixels in one plot area.
struct Mapper<'a> {
    x: &'a Axis,
    y: &'a Axis,
    area: Rect,
}

fn frac(axis: &Axis, v: f64) -> Option<f64> {
    match axis.scale {
        Scale::Linear => Some((v - axis.min) / (axis.max - axis.min)),
        Scale::Log10 | Scale::Log2 => {
            (v > 0.0).then(|| (v.ln() - axis.min.ln()) / (axis.max.ln() - axis.min.ln()))
        }
    }
}

impl Mapper<'_> {
    fn px(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        Some((self.px_x(x)?, self.px_y(y)?))
    }

    fn px_x(&self, x: f64) -> Option<f64> {
        frac(self.x, x).map(|f| self.area.x0 + f * self.area.width())
    }

    fn px_y(&self, y: f64) -> Option<f64> {
        frac(self.y, y).map(|f| self.area.y1 - f * self.area.height())
    }
}

fn fits_horizontal(axis: &Axis, area: Rect, t: &[Tick]) -> bool {
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

fn fits_vertical(axis: &Axis, height: f64, t: &[Tick]) -> bool {
    let ys: Vec<f64> = t
        .iter()
        .filter(|t| t.label.is_some())
        .filter_map(|t| frac(axis, t.value).map(|f| f * height))
        .collect();
    ys.windows(2)
        .all(|w| (w[1] - w[0]).abs() >= 1.6 * TICK_FONT * BOX_EMS)
}

fn draw_grid_and_ticks(
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

fn line(points: Vec<(f64, f64)>, color: Color, width: f64, dash: DashPx) -> Prim {
    Prim::Polyline {
        points,
        color,
        width,
        dash,
    }
}

fn dash_px(s: &Stroke) -> DashPx {
    let w = s.width_pt * PT;
    match s.dash {
        Dash::Solid => None,
        Dash::Dashed => Some((4.0 * w, 2.5 * w)),
        Dash::Dotted => Some((1.2 * w, 1.8 * w)),
    }
}

/// What labels must avoid in one panel.
#[derive(Default)]
struct Obstacles {
    /// Line segments, pixels, tagged with the item they belong to.
    segments: Vec<((f64, f64), (f64, f64))>,
    markers: Vec<Rect>,
    texts: Vec<Quad>,
}

/// Clips the polyline to `area`, splitting it where it leaves.
fn clip_polyline(points: &[(f64, f64)], area: &Rect) -> Vec<Vec<(f64, f64)>> {
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
fn clip_segment(a: (f64, f64), b: (f64, f64), r: &Rect) -> Option<((f64, f64), (f64, f64))> {
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
fn clip_polygon(points: &[(f64, f64)], r: &Rect) -> Vec<(f64, f64)> {
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

fn lerp_x(a: (f64, f64), b: (f64, f64), x: f64) -> (f64, f64) {
    let t = (x - a.0) / (b.0 - a.0);
    (x, a.1 + t * (b.1 - a.1))
}

fn lerp_y(a: (f64, f64), b: (f64, f64), y: f64) -> (f64, f64) {
    let t = (y - a.1) / (b.1 - a.1);
    (a.0 + t * (b.0 - a.0), y)
}

fn draw_items(prims: &mut Vec<Prim>, obs: &mut Obstacles, map: &Mapper, panel: &Panel) {
    let a = map.area;
    // Spans and bands underneath everything else.
    for item in &panel.items {
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
                let upper: Vec<(f64, f64)> = x
                    .iter()
                    .zip(hi)
                    .filter_map(|(&x, &y)| map.px(x, y))
                    .collect();
                let lower: Vec<(f64, f64)> = x
                    .iter()
                    .zip(lo)
                    .filter_map(|(&x, &y)| map.px(x, y))
                    .collect();
                let mut poly = upper;
                poly.extend(lower.into_iter().rev());
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
    for item in &panel.items {
        match item {
            Item::Line { points, stroke, .. } => {
                let px: Vec<(f64, f64)> =
                    points.iter().filter_map(|&(x, y)| map.px(x, y)).collect();
                for piece in clip_polyline(&px, &a) {
                    obs.segments.extend(piece.windows(2).map(|w| (w[0], w[1])));
                    prims.push(line(
                        piece,
                        stroke.color,
                        stroke.width_pt * PT,
                        dash_px(stroke),
                    ));
                }
            }
            Item::VLine { x, stroke, .. } => {
                if let Some(px) = map.px_x(*x).filter(|px| *px >= a.x0 && *px <= a.x1) {
                    obs.segments.push(((px, a.y0), (px, a.y1)));
                    prims.push(line(
                        vec![(px, a.y0), (px, a.y1)],
                        stroke.color,
                        stroke.width_pt * PT,
                        dash_px(stroke),
                    ));
                }
            }
            _ => {}
        }
    }
    for item in &panel.items {
        if let Item::Markers { points, marker } = item {
            for p in points {
                draw_marker_point(prims, obs, map, p, marker);
            }
        }
    }
}

fn draw_marker_point(
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

fn union(a: Rect, b: Rect) -> Rect {
    Rect::new(
        a.x0.min(b.x0),
        a.y0.min(b.y0),
        a.x1.max(b.x1),
        a.y1.max(b.y1),
    )
}

/// The primitives of one marker centred at `c`.
fn marker_prims(marker: &Marker, c: (f64, f64), r: f64) -> Vec<Prim> {
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

/// A candidate position of a label: where its text starts and its angle.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cand {
    anchor: (f64, f64),
    angle: f64,
    /// Centred on its line, which a halo then interrupts.
    inline: bool,
    /// Near the line but not along it: a last resort, since it may read
    /// as another line's label.
    loose: bool,
}

/// A horizontal candidate filling `r`.
fn flat(r: Rect) -> Cand {
    Cand {
        anchor: (r.x0, r.y0),
        angle: 0.0,
        inline: false,
        loose: false,
    }
}

/// A horizontal last-resort candidate filling `r`.
fn loose(r: Rect) -> Cand {
    Cand {
        loose: true,
        ..flat(r)
    }
}

/// Candidates along a polyline: at fractions of its length (from the end
/// `along` prefers), the text parallel to the line just above it; then the
/// same just below it, then further off (clear of markers on the line);
/// then centred on the line (drawn on a halo that interrupts it); then
/// horizontal boxes beside the same points.
fn line_candidates(points: &[(f64, f64)], along: Along, w: f64, h: f64) -> Vec<Cand> {
    let mut out = Vec::new();
    if points.len() < 2 {
        return out;
    }
    let mut cum = vec![0.0];
    for s in points.windows(2) {
        let d = ((s[1].0 - s[0].0).powi(2) + (s[1].1 - s[0].1).powi(2)).sqrt();
        cum.push(cum.last().expect("starts with 0") + d);
    }
    let total = *cum.last().expect("two points");
    if total <= 0.0 {
        return out;
    }
    let steps: Vec<f64> = (0..=48).map(|i| 0.02 + 0.02 * f64::from(i)).collect();
    let order: Vec<f64> = match along {
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
    };
    let g = GAP;
    let mut below = Vec::new();
    let mut lifted = Vec::new();
    let mut on_line = Vec::new();
    let mut flats = Vec::new();
    for f in order {
        let target = f * total;
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
        let (px, py) = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
        let (mut dx, mut dy) = (b.0 - a.0, b.1 - a.1);
        if dx < 0.0 {
            (dx, dy) = (-dx, -dy);
        }
        let angle = (-dy).atan2(dx).to_degrees();
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

fn point_candidates(c: (f64, f64), w: f64, h: f64) -> Vec<Cand> {
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

fn top_candidates(cx: f64, w: f64, h: f64, area: &Rect, beside: bool) -> Vec<Cand> {
    let mut out = Vec::new();
    for row in 0..12 {
        let y0 = area.y0 + GAP + f64::from(row) * (h + GAP);
        if beside {
            out.push(flat(Rect::new(cx + GAP, y0, cx + GAP + w, y0 + h)));
            out.push(flat(Rect::new(cx - GAP - w, y0, cx - GAP, y0 + h)));
        } else {
            out.push(flat(Rect::new(cx - w / 2.0, y0, cx + w / 2.0, y0 + h)));
        }
    }
    out
}

/// One label waiting to be placed, with the candidates for it.
struct Request {
    text: String,
    color: Color,
    width: f64,
    candidates: Vec<Cand>,
}

/// Places the panel's annotations. A label that could only be placed
/// across a line gets a white halo (in `halos`) that hides the line under
/// its letters, as maps do.
fn place_labels(
    labels: &mut Vec<Text>,
    halos: &mut Vec<Quad>,
    warnings: &mut Vec<String>,
    obs: &Obstacles,
    map: &Mapper,
    panel: &Panel,
) {
    let a = map.area;
    let size = LABEL_FONT;
    let h = size * BOX_EMS;
    let mut requests = Vec::new();
    for item in &panel.items {
        match item {
            Item::Line {
                points,
                stroke,
                label: Some((text, along)),
            } => {
                let px: Vec<(f64, f64)> =
                    points.iter().filter_map(|&(x, y)| map.px(x, y)).collect();
                let w = text_width(text, size);
                let candidates = clip_polyline(&px, &a)
                    .iter()
                    .flat_map(|p| line_candidates(p, *along, w, h))
                    .collect();
                requests.push(Request {
                    text: text.clone(),
                    color: darker(stroke.color),
                    width: w,
                    candidates,
                });
            }
            Item::Markers { points, marker } => {
                for p in points {
                    if let (Some(text), Some(c)) = (&p.label, map.px(p.x, p.y)) {
                        let w = text_width(text, size);
                        requests.push(Request {
                            text: text.clone(),
                            color: darker(marker.color),
                            width: w,
                            candidates: point_candidates(c, w, h),
                        });
                    }
                }
            }
            Item::VLine {
                x,
                stroke,
                label: Some(text),
            } => {
                if let Some(px) = map.px_x(*x) {
                    let w = text_width(text, size);
                    requests.push(Request {
                        text: text.clone(),
                        color: darker(stroke.color),
                        width: w,
                        candidates: top_candidates(px, w, h, &a, true),
                    });
                }
            }
            Item::VSpan {
                x0,
                x1,
                label: Some(text),
                ..
            } => {
                if let (Some(p0), Some(p1)) = (map.px_x(*x0), map.px_x(*x1)) {
                    let (p0, p1) = (p0.max(a.x0), p1.min(a.x1));
                    let w = text_width(text, size);
                    requests.push(Request {
                        text: text.clone(),
                        color: Color::TEXT,
                        width: w,
                        candidates: top_candidates((p0 + p1) / 2.0, w, h, &a, false),
                    });
                }
            }
            _ => {}
        }
    }
    let mut placed: Vec<Quad> = obs.texts.clone();
    let markers: Vec<Quad> = obs.markers.iter().map(rect_quad).collect();
    let inner = a.inflate(-GAP);
    // Labels with no clear spot at all go first, while the space they need
    // is still free; the others keep the figure's order.
    let has_clear_spot = |req: &Request| {
        req.candidates.iter().any(|c| {
            let t = Text {
                text: req.text.clone(),
                size,
                color: req.color,
                anchor: c.anchor,
                angle_deg: c.angle,
                width: req.width,
                role: TextRole::Annotation,
            };
            let q = t.quad(GAP / 2.0);
            !c.inline
                && t.quad(0.0)
                    .iter()
                    .all(|&(x, y)| x >= inner.x0 && x <= inner.x1 && y >= inner.y0 && y <= inner.y1)
                && !placed.iter().any(|p| convex_intersect(p, &q))
                && !markers.iter().any(|m| convex_intersect(m, &q))
                && !obs
                    .segments
                    .iter()
                    .any(|(p, r)| convex_intersect(&q, &[*p, *r]))
        })
    };
    requests.sort_by_key(|r| has_clear_spot(r));
    for req in requests {
        let text_at = |c: &Cand| Text {
            text: req.text.clone(),
            size,
            color: req.color,
            anchor: c.anchor,
            angle_deg: c.angle,
            width: req.width,
            role: TextRole::Annotation,
        };
        let inside = |t: &Text| {
            t.quad(0.0)
                .iter()
                .all(|&(x, y)| x >= inner.x0 && x <= inner.x1 && y >= inner.y0 && y <= inner.y1)
        };
        let free_of_text = |t: &Text| {
            let q = t.quad(GAP / 2.0);
            inside(t)
                && !placed.iter().any(|p| convex_intersect(p, &q))
                && !markers.iter().any(|m| convex_intersect(m, &q))
        };
        let clear_of_lines = |t: &Text| {
            let q = t.quad(GAP / 2.0);
            !obs.segments
                .iter()
                .any(|(p, r)| convex_intersect(&q, &[*p, *r]))
        };
        let texts: Vec<Text> = req.candidates.iter().map(text_at).collect();
        let crossings = |t: &Text| {
            let q = t.quad(GAP / 2.0);
            obs.segments
                .iter()
                .filter(|(p, r)| convex_intersect(&q, &[*p, *r]))
                .count()
        };
        let pairs = || texts.iter().zip(&req.candidates);
        // Where a label crosses a line running along it, it may read as
        // that line's label; a line crossing it at an angle reads as passing
        // behind it.
        let crosses_parallel = |t: &Text| {
            let q = t.quad(GAP / 2.0);
            let (u, _) = t.frame();
            obs.segments.iter().any(|(p, r)| {
                let (dx, dy) = (r.0 - p.0, r.1 - p.1);
                let len = (dx * dx + dy * dy).sqrt();
                len > 0.0
                    && ((u.0 * dy - u.1 * dx) / len).abs() < 0.5
                    && convex_intersect(&q, &[*p, *r])
            })
        };
        // In order of preference: beside the line and clear of every line;
        // beside it, crossed only at an angle by other lines; centred on
        // it; anywhere free of text. All but the first get a halo.
        let clear = pairs()
            .find(|(t, c)| !c.inline && !c.loose && free_of_text(t) && clear_of_lines(t))
            .map(|(t, _)| t);
        let fewest = |pick: &dyn Fn(&Cand) -> bool, parallel_ok: bool| {
            pairs()
                .filter(|(t, c)| {
                    pick(c) && free_of_text(t) && (parallel_ok || !crosses_parallel(t))
                })
                .min_by_key(|(t, _)| crossings(t))
                .map(|(t, _)| t)
        };
        let beside = |c: &Cand| !c.inline && !c.loose;
        let crossing = match clear {
            Some(_) => None,
            None => fewest(&beside, false)
                .or_else(|| fewest(&|c: &Cand| c.inline, true))
                .or_else(|| fewest(&|c: &Cand| c.loose, true))
                .or_else(|| fewest(&beside, true)),
        };
        if let Some(t) = crossing {
            halos.push(t.quad(GAP / 2.0));
        }
        let chosen = clear.or(crossing).cloned();
        let text = match chosen {
            Some(t) => t,
            None => {
                warnings.push(format!(
                    "the label '{}' could not be placed without covering other text",
                    req.text
                ));
                // The least covered candidate inside the plot, so it stays readable.
                let cover = |t: &Text| {
                    let b = t.bbox();
                    placed
                        .iter()
                        .map(|p| {
                            let xs = p.iter().map(|c| c.0);
                            let ys = p.iter().map(|c| c.1);
                            b.overlap_area(&Rect::new(
                                xs.clone().fold(f64::INFINITY, f64::min),
                                ys.clone().fold(f64::INFINITY, f64::min),
                                xs.fold(f64::NEG_INFINITY, f64::max),
                                ys.fold(f64::NEG_INFINITY, f64::max),
                            ))
                        })
                        .sum::<f64>()
                };
                let Some(best) = texts
                    .iter()
                    .filter(|t| inside(t))
                    .min_by(|x, y| cover(x).total_cmp(&cover(y)))
                    .cloned()
                else {
                    continue;
                };
                best
            }
        };
        placed.push(text.quad(0.0));
        labels.push(text);
    }
}

/// A label colour a little darker than its line, for contrast on white.
fn darker(c: Color) -> Color {
    let f = |v: u8| (f64::from(v) * 0.75).round() as u8;
    Color::rgb(f(c.r), f(c.g), f(c.b))
}

/// Draws the legend in rows below the panels; returns its height.
fn draw_legend(
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
    let size = LEGEND_FONT;
    let symbol_w = 2.2 * size;
    let col_gap = 1.2 * size;
    let widths: Vec<f64> = entries
        .iter()
        .map(|e| symbol_w + GAP * 2.0 + text_width(&e.text, size))
        .collect();
    let col_w = widths.iter().copied().fold(0.0, f64::max);
    let cols = (((room + col_gap) / (col_w + col_gap)).floor() as usize).clamp(1, entries.len());
    let rows = entries.len().div_ceil(cols);
    let row_h = size * BOX_EMS + GAP * 1.5;
    let used = cols as f64 * col_w + (cols - 1) as f64 * col_gap;
    let left = x0 + ((room - used) / 2.0).max(0.0);
    for (i, e) in entries.iter().enumerate() {
        let (r, c) = (i / cols, i % cols);
        let x = left + c as f64 * (col_w + col_gap);
        let y = y0 + r as f64 * row_h;
        let cy = y + size * BOX_EMS / 2.0;
        match &e.symbol {
            Symbol::Line(s) => prims.push(line(
                vec![(x, cy), (x + symbol_w, cy)],
                s.color,
                s.width_pt * PT,
                dash_px(s),
            )),
            Symbol::Marker(m) => prims.extend(marker_prims(m, (x + symbol_w / 2.0, cy), MARKER_R)),
            Symbol::MarkerWithBar(m) => {
                let cx = x + symbol_w / 2.0;
                let half = size * 0.45;
                prims.push(line(
                    vec![(cx, cy - half), (cx, cy + half)],
                    m.color,
                    0.7 * PT,
                    None,
                ));
                for yy in [cy - half, cy + half] {
                    prims.push(line(
                        vec![(cx - 0.8 * MARKER_R, yy), (cx + 0.8 * MARKER_R, yy)],
                        m.color,
                        0.7 * PT,
                        None,
                    ));
                }
                prims.extend(marker_prims(m, (cx, cy), MARKER_R));
            }
            Symbol::Patch(color) => prims.push(Prim::Rect {
                rect: Rect::new(x, cy - size * 0.35, x + symbol_w, cy + size * 0.35),
                fill: Some(*color),
                stroke: None,
            }),
        }
        labels.push(horizontal(
            &e.text,
            size,
            x + symbol_w + 2.0 * GAP,
            y,
            TextRole::Legend,
        ));
    }
    rows as f64 * row_h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::figure::{Along, Axis, Dash, Scale, Stroke};

    fn figure() -> Figure {
        let stroke = Stroke::new(Color::BLACK, 1.0, Dash::Solid);
        Figure {
            title: Some("test".into()),
            width_in: 3.5,
            legend: vec![LegendEntry {
                symbol: Symbol::Line(stroke),
                text: "a line".into(),
            }],
            panels: vec![Panel {
                x: Axis::new("x", Scale::Log10, 0.01, 100.0),
                y: Axis::new("y", Scale::Log10, 1.0, 1e4),
                aspect: 0.6,
                items: vec![
                    Item::Line {
                        points: vec![(0.001, 0.1), (1e3, 1e6)],
                        stroke,
                        label: Some(("rising".into(), Along::Start)),
                    },
                    Item::Line {
                        points: vec![(0.01, 1000.0), (100.0, 1000.0)],
                        stroke,
                        label: Some(("flat".into(), Along::End)),
                    },
                ],
            }],
        }
    }

    #[test]
    fn lines_are_clipped_and_labels_do_not_overlap() {
        let s = layout(&figure());
        assert_eq!(s.width, 1050);
        let area = s.plot_areas[0];
        for p in &s.prims {
            if let Prim::Polyline { points, .. } = p {
                for &(x, y) in points {
                    assert!(x >= -1.0 && y >= -1.0 && x <= 1051.0, "{x},{y}");
                }
            }
        }
        assert!(
            s.overlapping_texts().is_empty(),
            "{:?}",
            s.overlapping_texts()
        );
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let labels: Vec<_> = s
            .texts()
            .filter(|t| t.role == TextRole::Annotation)
            .collect();
        assert_eq!(labels.len(), 2);
        assert!(labels.iter().all(|t| area.contains(&t.bbox())));
        // The rising line's label runs along it.
        assert!(labels.iter().any(|t| t.angle_deg > 10.0), "{labels:?}");
    }

    #[test]
    fn clipping_helpers() {
        let r = Rect::new(0.0, 0.0, 10.0, 10.0);
        let pieces = clip_polyline(&[(-5.0, 5.0), (5.0, 5.0), (15.0, 5.0)], &r);
        assert_eq!(pieces, vec![vec![(0.0, 5.0), (5.0, 5.0), (10.0, 5.0)]]);
        let poly = clip_polygon(&[(-5.0, -5.0), (15.0, -5.0), (15.0, 5.0), (-5.0, 5.0)], &r);
        assert!(poly
            .iter()
            .all(|&(x, y)| (0.0..=10.0).contains(&x) && (0.0..=10.0).contains(&y)));
        assert_eq!(poly.len(), 4);
    }
}
