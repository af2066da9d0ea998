//! Text metrics from the bundled font (DejaVu Sans, `predict/assets/`).
//!
//! Charts never ask the system for a font: the same bytes measure every
//! label here, and render it later (the PNG and PDF through a font
//! database that holds only this font, which the PDF embeds; outlined SVG
//! as paths of it), so a label's measured box is the box it is drawn in.

use std::sync::OnceLock;

/// The bundled font: DejaVu Sans 2.37 (Bitstream Vera licence, see
/// `predict/assets/DejaVuSans-LICENSE.txt`).
pub static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// The family name the SVG refers to, matched against the bundled font only.
pub const FAMILY: &str = "DejaVu Sans";

/// The font stack of real text in an SVG: the bundled font first, then
/// Verdana and Geneva, whose widths are close to DejaVu Sans' (all three
/// descend from humanist sans designs with wide letters), so a label
/// measured with the bundled font still fits where it was placed.
pub const FONT_STACK: &str = "'DejaVu Sans', Verdana, Geneva, sans-serif";

/// Height of a text box in ems: the bundled font's ascent of capitals and
/// accents above the baseline (0.76 em, where plotters puts the baseline of
/// top-anchored text) plus its descent (0.24 em).
pub const BOX_EMS: f64 = 1.0;

/// Where the baseline lies below the top of a text box, in ems (plotters'
/// `VPos::Top` writes `dy="0.76em"`).
pub const BASELINE_EMS: f64 = 0.76;

fn face() -> &'static rustybuzz::Face<'static> {
    static FACE: OnceLock<rustybuzz::Face<'static>> = OnceLock::new();
    FACE.get_or_init(|| {
        rustybuzz::Face::from_slice(FONT_BYTES, 0)
            .expect("the bundled font is a valid TrueType font")
    })
}

/// Advance width of `text` at `size_px` pixels per em, shaped as usvg shapes
/// it (rustybuzz, with kerning), in pixels.
pub fn width(text: &str, size_px: f64) -> f64 {
    if text.is_empty() {
        return 0.0;
    }
    let face = face();
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(text);
    let glyphs = rustybuzz::shape(face, &[], buffer);
    let units: i64 = glyphs
        .glyph_positions()
        .iter()
        .map(|p| i64::from(p.x_advance))
        .sum();
    units as f64 / f64::from(face.units_per_em()) * size_px
}

/// True when every character of `text` has a glyph in the bundled font.
pub fn covers(text: &str) -> bool {
    let face = face();
    text.chars()
        .all(|c| c.is_whitespace() || face.glyph_index(c).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_grow_with_text_and_size() {
        let a = width("DRAM 18.2 GB/s", 30.0);
        assert!(a > 100.0 && a < 400.0, "{a}");
        assert!((width("DRAM 18.2 GB/s", 60.0) - 2.0 * a).abs() < 1e-9);
        assert!(width("W", 30.0) > width("i", 30.0));
        assert_eq!(width("", 30.0), 0.0);
    }

    #[test]
    fn font_covers_the_symbols_charts_use() {
        assert!(covers("µs ≤ × − ± ∞ ² flop/B GiB KiB"));
    }
}
