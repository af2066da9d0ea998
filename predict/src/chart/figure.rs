//! What a chart shows, in data coordinates: the only chart type the
//! analyses (Roofline, memory mountain, scaling) build. They never see
//! pixels or the drawing library; [`super::layout`] turns a [`Figure`] into
//! a [`super::scene::Scene`] and a [`super::Plotter`] draws that.

/// An sRGB colour with opacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Color {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    /// 0 (transparent) to 1 (opaque).
    pub alpha: f64,
}

impl Color {
    pub const fn rgb(r: u8, g: u8, b: u8) -> Self {
        Self {
            r,
            g,
            b,
            alpha: 1.0,
        }
    }

    /// The same colour with opacity `alpha`.
    pub const fn with_alpha(self, alpha: f64) -> Self {
        Self { alpha, ..self }
    }

    pub const BLACK: Color = Color::rgb(0, 0, 0);
    pub const WHITE: Color = Color::rgb(255, 255, 255);
    pub const TEXT: Color = Color::rgb(26, 26, 26);
    pub const GRID: Color = Color::rgb(225, 225, 225);
    pub const AXIS: Color = Color::rgb(60, 60, 60);
}

/// Okabe and Ito's palette for colour-blind readers (yellow left out: it
/// disappears on white paper).
pub const PALETTE: [Color; 6] = [
    Color::rgb(0, 114, 178),   // blue
    Color::rgb(213, 94, 0),    // vermillion
    Color::rgb(0, 158, 115),   // bluish green
    Color::rgb(204, 121, 167), // reddish purple
    Color::rgb(230, 159, 0),   // orange
    Color::rgb(86, 180, 233),  // sky blue
];

/// The `i`-th colour of [`PALETTE`], cycling.
pub fn palette(i: usize) -> Color {
    PALETTE[i % PALETTE.len()]
}

/// How an axis maps data to length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Logarithmic with ticks at powers of ten.
    Log10,
    /// Logarithmic with ticks at powers of two.
    Log2,
    Linear,
}

/// How tick values are written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TickFormat {
    /// value / `divisor` as a plain number (e.g. FLOP/s with divisor 1e9 on
    /// an axis titled "GFLOP/s"), or as 10ⁿ when the numbers get long.
    Number { divisor: f64 },
    /// Bytes with binary prefixes: 4 KiB, 1 MiB, 2 GiB.
    BinaryBytes,
}

/// One axis: its title (with the unit), scale and range.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub title: String,
    pub scale: Scale,
    pub min: f64,
    pub max: f64,
    pub format: TickFormat,
}

impl Axis {
    pub fn new(title: impl Into<String>, scale: Scale, min: f64, max: f64) -> Self {
        Self {
            title: title.into(),
            scale,
            min,
            max,
            format: TickFormat::Number { divisor: 1.0 },
        }
    }

    pub fn format(mut self, format: TickFormat) -> Self {
        self.format = format;
        self
    }

    /// A log range that covers `lo..hi` with `pad` (a factor, e.g. 1.5) on
    /// each side, snapped outwards to whole powers of `base` when `snap`.
    pub fn log_range(lo: f64, hi: f64, pad: f64, base: f64, snap: bool) -> (f64, f64) {
        let (mut a, mut b) = (lo / pad, hi * pad);
        if snap {
            a = base.powf((a.log(base) + 1e-9).floor());
            b = base.powf((b.log(base) - 1e-9).ceil());
        }
        (a, b)
    }
}

/// Dash pattern of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
}

/// How a line is stroked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stroke {
    pub color: Color,
    /// Width in points (1/72 in).
    pub width_pt: f64,
    pub dash: Dash,
}

impl Stroke {
    pub fn new(color: Color, width_pt: f64, dash: Dash) -> Self {
        Self {
            color,
            width_pt,
            dash,
        }
    }
}

/// Marker shapes: closed outlines, so that each reads filled (measured)
/// and hollow (predicted), with silhouettes that stay apart at a marker's
/// size (a pentagon or a hexagon there reads as a circle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    InvertedTriangle,
    /// A thick upright cross.
    Plus,
    /// A five-pointed star.
    Star,
    /// A thick diagonal cross.
    Cross,
}

/// The `i`-th marker shape, cycling. Series beyond the first few are told
/// apart by their shape even in print without colour, and a series that
/// comes back to a shape gets another colour ([`palette`], whose six
/// colours cycle against these eight shapes, so no two of the first 24
/// series share both).
pub fn shape(i: usize) -> Shape {
    const ALL: [Shape; 8] = [
        Shape::Circle,
        Shape::Square,
        Shape::Triangle,
        Shape::Diamond,
        Shape::InvertedTriangle,
        Shape::Plus,
        Shape::Star,
        Shape::Cross,
    ];
    ALL[i % ALL.len()]
}

/// How a marker is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marker {
    pub shape: Shape,
    pub color: Color,
    /// Filled (measured) or hollow (predicted).
    pub filled: bool,
}

/// One marker, with optional error bars in data units.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerPoint {
    pub x: f64,
    pub y: f64,
    /// Vertical interval [lo, hi].
    pub y_err: Option<(f64, f64)>,
    /// Horizontal interval [lo, hi].
    pub x_err: Option<(f64, f64)>,
    /// A text placed next to the marker without covering anything.
    pub label: Option<String>,
}

impl MarkerPoint {
    pub fn at(x: f64, y: f64) -> Self {
        Self {
            x,
            y,
            y_err: None,
            x_err: None,
            label: None,
        }
    }
}

/// Where along a line its label should go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Along {
    /// Near the start (left end) of the line.
    Start,
    /// Near the end (right end).
    End,
    Middle,
}

/// Something drawn in a panel, in data coordinates.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A polyline, optionally labelled next to itself.
    Line {
        points: Vec<(f64, f64)>,
        stroke: Stroke,
        label: Option<(String, Along)>,
    },
    /// A filled band between `lo` and `hi` over `x` (an uncertainty band).
    Band {
        x: Vec<f64>,
        lo: Vec<f64>,
        hi: Vec<f64>,
        color: Color,
    },
    /// A vertical line up from the panel's bottom to `top` (the panel's
    /// top when `None`), optionally labelled beside it, as near its foot as
    /// the other marks allow (a Roofline's ridge, away from the ceilings
    /// that meet at its top).
    VLine {
        x: f64,
        top: Option<f64>,
        stroke: Stroke,
        label: Option<String>,
    },
    /// A shaded vertical span with a label at its top.
    VSpan {
        x0: f64,
        x1: f64,
        color: Color,
        label: Option<String>,
    },
    /// Markers of one series.
    Markers {
        points: Vec<MarkerPoint>,
        marker: Marker,
    },
}

/// One plot: two axes and what is drawn in them.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub x: Axis,
    pub y: Axis,
    /// Height of the plot area relative to the figure's width (e.g. 0.62).
    pub aspect: f64,
    pub items: Vec<Item>,
}

/// The symbol a legend entry shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Symbol {
    Line(Stroke),
    Marker(Marker),
    /// A marker with a vertical error bar.
    MarkerWithBar(Marker),
    Patch(Color),
}

/// One line of the legend.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    pub symbol: Symbol,
    pub text: String,
}

/// A whole figure: panels stacked top to bottom, one legend below them.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub title: Option<String>,
    pub panels: Vec<Panel>,
    pub legend: Vec<LegendEntry>,
    /// Width in inches (3.5 for one column of a two-column paper).
    pub width_in: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_series_differ_in_shape_and_twenty_four_in_shape_or_colour() {
        let shapes: Vec<Shape> = (0..8).map(shape).collect();
        for (i, a) in shapes.iter().enumerate() {
            assert!(
                !shapes[i + 1..].contains(a),
                "{a:?} repeats among the first 8"
            );
        }
        let marks: Vec<(Shape, Color)> = (0..24).map(|i| (shape(i), palette(i))).collect();
        for (i, a) in marks.iter().enumerate() {
            assert!(!marks[i + 1..].contains(a), "series {i} repeats {a:?}");
        }
    }
}
