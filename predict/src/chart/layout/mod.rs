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

mod candidates;
mod frame;
mod geometry;
mod labels;
mod legend;
mod marks;

pub use labels::labelled_lines;
pub use legend::LegendPlace;
pub use marks::Segment;

use super::figure::{Color, Figure, Panel};
use super::scene::{Halo, Prim, Rect, Scene, Text, TextRole};
use super::text::{width as text_width, BOX_EMS};
use super::ticks::{ticks, Tick};
use frame::{draw_grid_and_ticks, fit_size, fits_horizontal, fits_vertical, horizontal};
use geometry::Mapper;
use labels::{place_labels, Placed};
use legend::{draw_legend, draw_legend_inside};
use marks::{draw_items, Obstacles};

/// Pixels per inch of the canvas.
pub const DPI: f64 = 300.0;
pub(super) const PT: f64 = DPI / 72.0;
pub(super) const TICK_FONT: f64 = 7.0 * PT;
pub(super) const AXIS_FONT: f64 = 8.0 * PT;
pub(super) const LABEL_FONT: f64 = 6.5 * PT;
pub(super) const LEGEND_FONT: f64 = 7.0 * PT;
pub(super) const TITLE_FONT: f64 = 8.5 * PT;
pub(super) const PAD: f64 = 3.0 * PT;
pub(super) const GAP: f64 = 1.5 * PT;
pub(super) const TICK_LEN: f64 = 3.0 * PT;
pub(super) const MINOR_TICK_LEN: f64 = 1.8 * PT;
pub(super) const MARKER_R: f64 = 2.3 * PT;
pub(super) const FRAME_W: f64 = 0.75 * PT;

/// Lays out `fig` with the legend below the panels.
pub fn layout(fig: &Figure) -> Scene {
    layout_with(fig, LegendPlace::Below)
}

/// What the layout collects while it goes down the figure.
#[derive(Default)]
struct Builder {
    prims: Vec<Prim>,
    /// Every text, drawn last so lines never cross letters.
    labels: Vec<Text>,
    halos: Vec<Halo>,
    warnings: Vec<String>,
    plot_areas: Vec<Rect>,
    marker_boxes: Vec<Rect>,
    segments: Vec<Vec<Segment>>,
    legend_box: Option<Rect>,
    /// The legend was asked inside, but every corner covered data.
    legend_moved_below: bool,
}

/// The horizontal frame shared by the panels: canvas width, left margin
/// (set by the widest y tick label) and plot width, and each panel's
/// height and y ticks.
struct Columns {
    width: f64,
    left: f64,
    plot_w: f64,
    heights: Vec<f64>,
    y_ticks: Vec<Vec<Tick>>,
}

impl Columns {
    fn new(fig: &Figure) -> Self {
        let width = (fig.width_in * DPI).round();
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
        let y_title = if has_y_title {
            AXIS_FONT * BOX_EMS + GAP
        } else {
            0.0
        };
        let left = (PAD + y_title + y_label_w + GAP + TICK_LEN).round();
        // The last x tick label is centred on the right edge: leave it room.
        let right = (PAD + 0.5 * text_width("00000", TICK_FONT)).round();
        Self {
            width,
            left,
            plot_w: width - left - right,
            heights,
            y_ticks,
        }
    }
}

/// Lays out `fig`, the legend at `legend`.
pub fn layout_with(fig: &Figure, legend: LegendPlace) -> Scene {
    let cols = Columns::new(fig);
    let mut b = Builder::default();
    let mut top = title(&mut b, fig, cols.width);
    for i in 0..fig.panels.len() {
        let inside = (legend == LegendPlace::Inside && i == 0).then_some(&fig.legend[..]);
        top = panel(&mut b, fig, i, &cols, top, inside);
    }
    if b.legend_moved_below {
        b.warnings.push(
            "--legend inside: every corner of the plot would cover a data marker; the legend is drawn below instead".into(),
        );
    }
    if legend == LegendPlace::Below || b.legend_moved_below {
        top += draw_legend(
            &mut b.prims,
            &mut b.labels,
            &fig.legend,
            PAD,
            top,
            cols.width - 2.0 * PAD,
        );
    }
    finish(b, cols.width, top)
}

/// The title, centred; returns where the first panel starts.
fn title(b: &mut Builder, fig: &Figure, width: f64) -> f64 {
    let Some(title) = &fig.title else {
        return PAD + GAP;
    };
    let size = fit_size(title, TITLE_FONT, width - 2.0 * PAD);
    let w = text_width(title, size);
    b.prims.push(Prim::Text(horizontal(
        title,
        size,
        ((width - w) / 2.0).max(PAD),
        PAD,
        TextRole::Title,
    )));
    PAD + size * BOX_EMS + 2.0 * GAP
}

/// Lays out panel `i` from `top` (with the legend inside it when `inside`
/// is given); returns where the next block starts.
fn panel(
    b: &mut Builder,
    fig: &Figure,
    i: usize,
    cols: &Columns,
    top: f64,
    inside: Option<&[crate::chart::figure::LegendEntry]>,
) -> f64 {
    let panel = &fig.panels[i];
    let area = Rect::new(
        cols.left,
        top,
        cols.left + cols.plot_w,
        top + cols.heights[i],
    );
    let x_ticks = ticks(&panel.x, &|t| fits_horizontal(&panel.x, area, t));
    let map = Mapper {
        x: &panel.x,
        y: &panel.y,
        area,
    };
    draw_grid_and_ticks(
        &mut b.prims,
        &mut b.labels,
        &map,
        &x_ticks,
        &cols.y_ticks[i],
    );
    let mut obstacles = Obstacles::default();
    draw_items(&mut b.prims, &mut obstacles, &map, panel);
    b.prims.push(Prim::Rect {
        rect: area,
        fill: None,
        stroke: Some((Color::AXIS, FRAME_W)),
    });
    obstacles.texts.extend(b.labels.iter().map(|t| t.quad(0.0)));
    if let Some(entries) = inside {
        b.legend_box = draw_legend_inside(&mut b.prims, &mut b.labels, entries, area, &obstacles);
        match b.legend_box {
            Some(r) => obstacles.texts.push(crate::chart::scene::rect_quad(&r)),
            None => b.legend_moved_below = !entries.is_empty(),
        }
    }
    let out = Placed {
        labels: &mut b.labels,
        halos: &mut b.halos,
        leaders: &mut b.prims,
        warnings: &mut b.warnings,
        panel: i,
    };
    place_labels(out, &obstacles, &map, panel);
    b.marker_boxes.extend(obstacles.markers.iter().copied());
    b.segments.push(obstacles.segments);
    let last_of_kind = i + 1 == fig.panels.len() || fig.panels[i + 1].x.title != panel.x.title;
    let bottom = axis_titles(b, panel, area, last_of_kind);
    b.plot_areas.push(area);
    bottom
        + if i + 1 == fig.panels.len() {
            2.0 * GAP
        } else {
            3.0 * GAP
        }
}

/// The x title under the panel (when `with_x`) and the y title beside it;
/// returns the bottom of what was placed under the panel.
fn axis_titles(b: &mut Builder, panel: &Panel, area: Rect, with_x: bool) -> f64 {
    let mut bottom = area.y1 + TICK_LEN + GAP + TICK_FONT * BOX_EMS;
    if with_x && !panel.x.title.is_empty() {
        bottom += GAP;
        let size = fit_size(&panel.x.title, AXIS_FONT, area.width());
        let w = text_width(&panel.x.title, size);
        b.labels.push(horizontal(
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
        b.labels.push(Text {
            text: panel.y.title.clone(),
            size,
            color: Color::TEXT,
            anchor: (PAD, cy + w / 2.0),
            angle_deg: 90.0,
            width: w,
            role: TextRole::AxisTitle,
        });
    }
    bottom
}

/// The scene: a white canvas, the marks, the halos, then every text.
fn finish(b: Builder, width: f64, top: f64) -> Scene {
    let height = (top + PAD).round();
    let mut prims = vec![Prim::Rect {
        rect: Rect::new(0.0, 0.0, width, height),
        fill: Some(Color::WHITE),
        stroke: None,
    }];
    prims.extend(b.prims);
    prims.extend(b.halos.iter().map(|h| Prim::Polygon {
        points: h.quad.to_vec(),
        fill: Color::WHITE,
    }));
    prims.extend(b.labels.into_iter().map(Prim::Text));
    Scene {
        width: width as u32,
        height: height as u32,
        dpi: DPI,
        prims,
        plot_areas: b.plot_areas,
        marker_boxes: b.marker_boxes,
        segments: b.segments,
        halos: b.halos,
        legend_box: b.legend_box,
        warnings: b.warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::geometry::{clip_polygon, clip_polyline};
    use super::*;
    use crate::chart::figure::{Along, Axis, Dash, Item, LegendEntry, Scale, Stroke, Symbol};

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

    #[test]
    fn length_of_a_segment_inside_a_box() {
        use super::geometry::length_inside;
        let square = [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)];
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(
            length_inside(&square, (-5.0, 5.0), (15.0, 5.0)),
            10.0
        ));
        assert!(close(length_inside(&square, (2.0, 2.0), (5.0, 6.0)), 5.0));
        // A corner clipped: the diagonal through (8, 10) and (10, 8).
        assert!(close(
            length_inside(&square, (6.0, 12.0), (12.0, 6.0)),
            8f64.sqrt()
        ));
        assert!(close(
            length_inside(&square, (11.0, 0.0), (11.0, 10.0)),
            0.0
        ));
        // Either winding of the corners.
        let reversed = [square[3], square[2], square[1], square[0]];
        assert!(close(
            length_inside(&reversed, (-5.0, 5.0), (15.0, 5.0)),
            10.0
        ));
        // A rotated box (a label along a 45° line).
        let diamond = [(0.0, 5.0), (5.0, 0.0), (10.0, 5.0), (5.0, 10.0)];
        assert!(close(
            length_inside(&diamond, (0.0, 5.0), (10.0, 5.0)),
            10.0
        ));
    }
}
