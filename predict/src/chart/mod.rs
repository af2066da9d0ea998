//! Charts for papers: a backend-neutral figure description, a deterministic
//! layout, one drawing backend (plotters' SVG) behind the [`Plotter`] trait,
//! and the conversions to the files a paper uses.
//!
//! The pipeline is
//!
//! 1. an analysis ([`crate::roofline`], [`crate::scaling`]) builds a
//!    [`Figure`] in data coordinates;
//! 2. [`layout::layout`] measures every text with the bundled font
//!    ([`text`]), sets margins, maps data to pixels (300 per inch), and
//!    places each annotation where it covers no other text, marker or line,
//!    giving a [`Scene`];
//! 3. a [`Plotter`] ([`PlottersSvg`]) draws the scene as SVG;
//! 4. [`output`] hands that SVG to usvg with a font database holding only
//!    the bundled font, so every text becomes paths, and writes SVG, PNG
//!    (resvg/tiny-skia) or PDF (svg2pdf).
//!
//! No step looks at the system's fonts, clock or locale, so the same inputs
//! give byte-identical files on any machine.

pub mod figure;
pub mod layout;
pub mod output;
pub mod plotters_svg;
pub mod scene;
pub mod text;
pub mod ticks;

pub use figure::Figure;
pub use plotters_svg::PlottersSvg;
pub use scene::Scene;

use thiserror::Error;

/// Why a chart could not be drawn or converted.
#[derive(Debug, Error)]
pub enum ChartError {
    #[error("drawing the chart failed: {0}")]
    Draw(String),
    #[error("converting the chart failed: {0}")]
    Convert(String),
}

/// Draws a laid-out scene as an SVG document (text still as `<text>`
/// elements naming the bundled font's family).
///
/// The analyses never call a drawing library themselves: a new backend (a
/// pgfplots writer, say) implements this trait.
pub trait Plotter {
    fn draw(&self, scene: &Scene) -> Result<String, ChartError>;
}

/// A chart ready to be written.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The layout, with every text's box.
    pub scene: Scene,
    /// The final SVG: text converted to paths with the bundled font.
    pub svg: String,
}

/// Lays out `fig`, draws it with `plotter` and converts its text to paths.
pub fn render(fig: &Figure, plotter: &dyn Plotter) -> Result<Rendered, ChartError> {
    let scene = layout::layout(fig);
    let svg = plotter.draw(&scene)?;
    let svg = output::text_to_paths(&svg)?;
    Ok(Rendered { scene, svg })
}
