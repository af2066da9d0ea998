//! Chart files: SVG with text as paths, PNG and PDF, written atomically.
//!
//! usvg parses the plotters SVG with a font database that holds only the
//! bundled font ([`super::text::FONT_BYTES`]) and writes it back with every
//! text converted to paths; PNG (resvg + tiny-skia, at the scene's 300 dpi)
//! and PDF (svg2pdf, page size = the figure's size in inches) are made from
//! that path-only SVG, so no step needs any font on the machine.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use calibrate::harness::atomic::{AtomicFile, TargetError};
use usvg::fontdb;

use super::text::{FAMILY, FONT_BYTES};
use super::ChartError;
use crate::error::BadInput;

/// A number in a CSV cell of the chart data, written as Rust displays it
/// (`10`, not serde's `10.0`).
#[derive(Debug, Clone, Copy)]
pub struct Num(pub f64);

impl serde::Serialize for Num {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// usvg's user units per inch.
const USVG_DPI: f32 = 96.0;

/// A chart file format, from the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
    Pdf,
}

impl Format {
    /// The format named by `path`'s extension (case-insensitive).
    pub fn from_path(path: &Path) -> Result<Self, BadInput> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            Some("pdf") => Ok(Format::Pdf),
            Some(other) => Err(BadInput(format!(
                "{}: unsupported chart format '.{other}'; use .svg, .png or .pdf",
                path.display()
            ))),
            None => Err(BadInput(format!(
                "{}: the chart file needs an extension: .svg, .png or .pdf",
                path.display()
            ))),
        }
    }
}

fn options() -> usvg::Options<'static> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    let db = DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(FONT_BYTES.to_vec());
        db.set_sans_serif_family(FAMILY);
        Arc::new(db)
    });
    usvg::Options {
        font_family: FAMILY.to_string(),
        dpi: USVG_DPI,
        fontdb: Arc::clone(db),
        ..usvg::Options::default()
    }
}

fn parse(svg: &str) -> Result<usvg::Tree, ChartError> {
    usvg::Tree::from_str(svg, &options()).map_err(|e| ChartError::Convert(e.to_string()))
}

/// Rewrites an SVG with every text converted to paths of the bundled font.
pub fn text_to_paths(svg: &str) -> Result<String, ChartError> {
    let tree = parse(svg)?;
    let opts = usvg::WriteOptions {
        coordinates_precision: 2,
        transforms_precision: 5,
        indent: usvg::Indent::None,
        attributes_indent: usvg::Indent::None,
        ..usvg::WriteOptions::default()
    };
    Ok(tree.to_string(&opts))
}

/// The chart as bytes of `format`. `svg` is the path-only SVG of
/// [`super::Rendered`]; `width_px` the PNG's width (the scene's width) and
/// `dpi` its resolution, which the PNG records (its `pHYs` chunk), so that
/// a layout program places it at the figure's width in inches.
pub fn encode(svg: &str, format: Format, width_px: u32, dpi: f64) -> Result<Vec<u8>, ChartError> {
    match format {
        Format::Svg => Ok(svg.as_bytes().to_vec()),
        Format::Png => {
            let tree = parse(svg)?;
            let size = tree.size();
            let scale = width_px as f32 / size.width();
            let height = (size.height() * scale).round() as u32;
            let mut pixmap = resvg::tiny_skia::Pixmap::new(width_px, height)
                .ok_or_else(|| ChartError::Convert("the chart has no area".into()))?;
            pixmap.fill(resvg::tiny_skia::Color::WHITE);
            resvg::render(
                &tree,
                resvg::tiny_skia::Transform::from_scale(scale, scale),
                &mut pixmap.as_mut(),
            );
            png_at(&pixmap, dpi).map_err(|e| ChartError::Convert(e.to_string()))
        }
        Format::Pdf => {
            let tree = parse(svg)?;
            let page = svg2pdf::PageOptions { dpi: USVG_DPI };
            svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page)
                .map_err(|e| ChartError::Convert(e.to_string()))
        }
    }
}

/// The pixmap as an 8-bit RGBA PNG that records `dpi` (as pixels per
/// metre, the unit PNG has). The pixmap is opaque (drawn on white), so its
/// premultiplied pixels are the straight ones PNG stores.
fn png_at(pixmap: &resvg::tiny_skia::Pixmap, dpi: f64) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let per_metre = (dpi / 0.0254).round() as u32;
    encoder.set_pixel_dims(Some(png::PixelDimensions {
        xppu: per_metre,
        yppu: per_metre,
        unit: png::Unit::Meter,
    }));
    encoder.write_header()?.write_image_data(pixmap.data())?;
    Ok(out)
}

/// Opens an output file (chart, CSV) before the work starts, in an existing
/// directory: a bad path fails here, and the file appears only when its
/// [`AtomicFile::commit`] succeeds.
pub fn open(path: &Path) -> Result<AtomicFile, BadInput> {
    AtomicFile::create(path).map_err(|e| {
        BadInput(match e {
            TargetError::Directory => {
                format!("{} is a directory; give a file name", path.display())
            }
            TargetError::NoFileName => format!("{} is not a file name", path.display()),
            other => format!("cannot write {}: {other}", path.display()),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_extensions() {
        assert_eq!(
            Format::from_path(Path::new("a/b.SVG")).unwrap(),
            Format::Svg
        );
        assert_eq!(Format::from_path(Path::new("b.png")).unwrap(), Format::Png);
        assert_eq!(Format::from_path(Path::new("b.pdf")).unwrap(), Format::Pdf);
        let e = Format::from_path(Path::new("b.jpg")).unwrap_err();
        assert!(e.0.contains("unsupported chart format '.jpg'"), "{e}");
        assert!(Format::from_path(Path::new("chart")).is_err());
    }

    #[test]
    fn output_files_need_an_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let e = open(&dir.path().join("missing/out.csv")).unwrap_err();
        assert!(e.0.starts_with("cannot write "), "{e}");
        let e = open(dir.path()).unwrap_err();
        assert!(e.0.ends_with("is a directory; give a file name"), "{e}");
        open(&dir.path().join("out.csv")).unwrap();
    }

    #[test]
    fn text_becomes_paths_with_the_bundled_font() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="1in" height="0.5in" viewBox="0 0 300 150"><text x="10" y="50" font-family="DejaVu Sans" font-size="30">Hi µs</text></svg>"#;
        let out = text_to_paths(svg).unwrap();
        assert!(!out.contains("<text"), "{out}");
        assert!(out.contains("<path"), "{out}");
        let png = encode(&out, Format::Png, 300, 300.0).unwrap();
        // 300 dpi recorded: 11811 pixels per metre on both axes.
        let d = png::Decoder::new(std::io::Cursor::new(&png))
            .read_info()
            .unwrap();
        let dims = d.info().pixel_dims.unwrap();
        assert_eq!(
            (dims.xppu, dims.yppu, dims.unit),
            (11811, 11811, png::Unit::Meter)
        );
        assert_eq!(&png[1..4], b"PNG");
        let pdf = encode(&out, Format::Pdf, 300, 300.0).unwrap();
        assert!(pdf.starts_with(b"%PDF"));
    }
}
