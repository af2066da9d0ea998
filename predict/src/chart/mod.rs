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
//! 4. with [`TextMode::Text`] (the default of the chart commands) every text
//!    stays an SVG `<text>` element naming the bundled font first in a
//!    font stack, so journals and co-authors can restyle it, and the PDF
//!    embeds the bundled font; with [`TextMode::Outlines`] [`output`] hands
//!    the SVG to usvg with a font database holding only the bundled font,
//!    so every text becomes paths (byte-identical on any machine);
//! 5. [`output`] writes SVG, PNG (resvg/tiny-skia) or PDF (svg2pdf), always
//!    rendering text with the bundled font.
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
pub use layout::LegendPlace;
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

/// How a chart's text is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TextMode {
    /// Real text: SVG `<text>` elements with a font stack, a PDF with the
    /// bundled font embedded.
    #[default]
    Text,
    /// Every glyph as a path: no font needed anywhere, byte-identical files.
    Outlines,
}

/// How a figure is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RenderOptions {
    pub text: TextMode,
    pub legend: LegendPlace,
}

/// Draws a laid-out scene as an SVG document, text as `<text>` elements.
/// With [`TextMode::Text`] they name [`text::FONT_STACK`] and are what the
/// file keeps; with [`TextMode::Outlines`] they are converted to paths
/// afterwards and only need to name the bundled font.
///
/// The analyses never call a drawing library themselves: a new backend (a
/// pgfplots writer, say) implements this trait.
pub trait Plotter {
    fn draw(&self, scene: &Scene, text: TextMode) -> Result<String, ChartError>;
}

/// A chart ready to be written.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The layout, with every text's box.
    pub scene: Scene,
    /// The final SVG: real text, or text converted to paths with the
    /// bundled font.
    pub svg: String,
}

/// Lays out `fig` with the legend below and draws it with text as paths.
pub fn render(fig: &Figure, plotter: &dyn Plotter) -> Result<Rendered, ChartError> {
    render_with(
        fig,
        plotter,
        RenderOptions {
            text: TextMode::Outlines,
            legend: LegendPlace::Below,
        },
    )
}

/// Lays out `fig` and draws it with `plotter` as `opts` say.
pub fn render_with(
    fig: &Figure,
    plotter: &dyn Plotter,
    opts: RenderOptions,
) -> Result<Rendered, ChartError> {
    let scene = layout::layout_with(fig, opts.legend);
    let svg = plotter.draw(&scene, opts.text)?;
    let svg = match opts.text {
        TextMode::Text => svg,
        TextMode::Outlines => output::text_to_paths(&svg)?,
    };
    Ok(Rendered { scene, svg })
}
