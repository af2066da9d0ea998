//! The plotters backend: draws a [`Scene`] with plotters' SVG backend.
//!
//! Only plotters' drawing primitives are used (paths, polygons, circles,
//! rectangles, text); positions and sizes come from the scene, so the
//! layout does not depend on plotters' own text measurement (which, with
//! its default `ttf` feature, would ask fontconfig for a system font).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::figure::Color;
use super::scene::{Prim, Scene, Text};
use super::text::{BASELINE_EMS, FAMILY, FONT_STACK};
use super::{ChartError, Plotter, TextMode};

/// Draws scenes as SVG through plotters.
#[derive(Debug, Default, Clone, Copy)]
pub struct PlottersSvg;

/// plotters writes `font-size = size / 1.24`; this undoes it.
const PLOTTERS_FONT_FACTOR: f64 = 1.24;

fn rgba(c: Color) -> RGBAColor {
    RGBAColor(c.r, c.g, c.b, c.alpha)
}

fn ipt(p: (f64, f64)) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

fn style(c: Color, width: f64, filled: bool) -> ShapeStyle {
    ShapeStyle {
        color: rgba(c),
        filled,
        stroke_width: width.round().max(1.0) as u32,
    }
}

/// Splits a polyline into dashes of `on` pixels separated by `off`, the
/// pattern running on across vertices.
fn dashes(points: &[(f64, f64)], on: f64, off: f64) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut current = vec![points[0]];
    let mut drawing = true;
    let mut left = on;
    for w in points.windows(2) {
        let (mut a, b) = (w[0], w[1]);
        let mut len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        while len > 0.0 {
            let step = left.min(len);
            let t = step / len;
            let p = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
            if drawing {
                current.push(p);
            }
            len -= step;
            left -= step;
            a = p;
            if left <= 1e-9 {
                if drawing {
                    out.push(std::mem::take(&mut current));
                } else {
                    current = vec![p];
                }
                drawing = !drawing;
                left = if drawing { on } else { off };
            }
        }
    }
    if drawing && current.len() > 1 {
        out.push(current);
    }
    out
}

fn err(e: impl std::fmt::Display) -> ChartError {
    ChartError::Draw(e.to_string())
}

/// For outlines, horizontal and vertical text goes through plotters; text
/// at any other angle (labels along a sloped roof), which plotters'
/// `FontTransform` cannot express, is collected and written as SVG `<text>`
/// elements with the same attributes plotters uses. Real text is all
/// written by [`text_element`].
fn draw_text(
    b: &mut SVGBackend,
    t: &Text,
    mode: TextMode,
    rotated: &mut Vec<String>,
) -> Result<(), ChartError> {
    if mode == TextMode::Text {
        rotated.push(text_element(t));
        return Ok(());
    }
    let transform = if t.angle_deg == 0.0 {
        FontTransform::None
    } else if t.angle_deg == 90.0 {
        FontTransform::Rotate270
    } else {
        rotated.push(rotated_text(t));
        return Ok(());
    };
    let font = FontDesc::new(
        FontFamily::Name(FAMILY),
        t.size * PLOTTERS_FONT_FACTOR,
        FontStyle::Normal,
    );
    let color = rgba(t.color);
    let ts = font
        .color(&color)
        .pos(Pos::new(HPos::Left, VPos::Top))
        .transform(transform);
    b.draw_text(&t.text, &ts, ipt(t.anchor)).map_err(err)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A text as an editable SVG `<text>` element: `x`, `y` at its baseline,
/// the font stack, and a rotation about its anchor when it is not
/// horizontal.
fn text_element(t: &Text) -> String {
    let (x, y) = t.anchor;
    let base = y + BASELINE_EMS * t.size;
    let rotate = if t.angle_deg == 0.0 {
        String::new()
    } else {
        format!(" transform=\"rotate({:.3} {x:.1} {y:.1})\"", -t.angle_deg)
    };
    format!(
        "<text x=\"{x:.1}\" y=\"{base:.1}\" font-family=\"{FONT_STACK}\" font-size=\"{size:.2}\" fill=\"#{r:02X}{g:02X}{bl:02X}\"{rotate}>{text}</text>\n",
        size = t.size,
        r = t.color.r,
        g = t.color.g,
        bl = t.color.b,
        text = escape(&t.text),
    )
}

fn rotated_text(t: &Text) -> String {
    let escaped = escape(&t.text);
    let (x, y) = (t.anchor.0, t.anchor.1);
    format!(
        "<text x=\"{x:.1}\" y=\"{y:.1}\" dy=\"{BASELINE_EMS}em\" text-anchor=\"start\" font-family=\"{FAMILY}\" font-size=\"{size:.2}\" fill=\"#{r:02X}{g:02X}{bl:02X}\" transform=\"rotate({a:.3}, {x:.1}, {y:.1})\">{escaped}</text>\n",
        size = t.size,
        r = t.color.r,
        g = t.color.g,
        bl = t.color.b,
        a = -t.angle_deg,
    )
}

fn draw(
    b: &mut SVGBackend,
    scene: &Scene,
    mode: TextMode,
    rotated: &mut Vec<String>,
) -> Result<(), ChartError> {
    for p in &scene.prims {
        match p {
            Prim::Polyline {
                points,
                color,
                width,
                dash,
            } => {
                if points.len() < 2 {
                    continue;
                }
                let st = style(*color, *width, false);
                let pieces = match dash {
                    None => vec![points.clone()],
                    Some((on, off)) => dashes(points, *on, *off),
                };
                for piece in pieces {
                    b.draw_path(piece.into_iter().map(ipt), &st).map_err(err)?;
                }
            }
            Prim::Polygon { points, fill } => {
                b.fill_polygon(points.iter().copied().map(ipt), &style(*fill, 1.0, true))
                    .map_err(err)?;
            }
            Prim::Circle {
                center,
                radius,
                fill,
                stroke,
            } => {
                let r = radius.round() as u32;
                if let Some(f) = fill {
                    b.draw_circle(ipt(*center), r, &style(*f, 1.0, true), true)
                        .map_err(err)?;
                }
                if let Some((c, w)) = stroke {
                    b.draw_circle(ipt(*center), r, &style(*c, *w, false), false)
                        .map_err(err)?;
                }
            }
            Prim::Rect { rect, fill, stroke } => {
                let (a, z) = (ipt((rect.x0, rect.y0)), ipt((rect.x1, rect.y1)));
                if let Some(f) = fill {
                    b.draw_rect(a, z, &style(*f, 1.0, true), true)
                        .map_err(err)?;
                }
                if let Some((c, w)) = stroke {
                    b.draw_rect(a, z, &style(*c, *w, false), false)
                        .map_err(err)?;
                }
            }
            Prim::Text(t) => draw_text(b, t, mode, rotated)?,
        }
    }
    b.present().map_err(err)
}

impl Plotter for PlottersSvg {
    fn draw(&self, scene: &Scene, mode: TextMode) -> Result<String, ChartError> {
        let mut svg = String::new();
        let mut rotated = Vec::new();
        {
            let mut backend = SVGBackend::with_string(&mut svg, (scene.width, scene.height));
            draw(&mut backend, scene, mode, &mut rotated)?;
        }
        if !rotated.is_empty() {
            let end = svg
                .rfind("</svg>")
                .ok_or_else(|| ChartError::Draw("plotters wrote no closing </svg>".into()))?;
            svg.insert_str(end, &rotated.concat());
        }
        // Give the canvas its physical size: the pixels are 1/dpi inch.
        let old = format!("width=\"{}\" height=\"{}\"", scene.width, scene.height);
        let new = format!(
            "width=\"{}in\" height=\"{}in\"",
            f64::from(scene.width) / scene.dpi,
            f64::from(scene.height) / scene.dpi
        );
        Ok(svg.replacen(&old, &new, 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_follow_the_pattern_across_vertices() {
        let d = dashes(&[(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)], 4.0, 2.0);
        assert_eq!(d.len(), 4);
        assert_eq!(d[0], vec![(0.0, 0.0), (4.0, 0.0)]);
        assert_eq!(d[1], vec![(6.0, 0.0), (10.0, 0.0)]);
        assert_eq!(d[2], vec![(10.0, 2.0), (10.0, 6.0)]);
    }
}
