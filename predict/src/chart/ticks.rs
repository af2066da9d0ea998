//! Tick positions and their labels.
//!
//! Log axes get a tick at every power of ten (or two) in range and unlabelled
//! minor ticks between; when the labels would not fit side by side, only
//! every k-th tick is labelled, k chosen from a fixed list so the result
//! only depends on the axis and the font.

use super::figure::{Axis, Scale, TickFormat};

/// A tick: its value and, when labelled, its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: Option<String>,
    /// Major ticks get a grid line; minor ones only a short mark.
    pub major: bool,
}

/// The ticks of `axis`. `fits(labels)` tells whether a set of labels fits
/// the axis's length; labels are thinned until it does.
pub fn ticks(axis: &Axis, fits: &dyn Fn(&[Tick]) -> bool) -> Vec<Tick> {
    match axis.scale {
        Scale::Log10 => log_ticks(axis, 10.0, &[1, 2, 3, 4, 5], fits),
        Scale::Log2 => {
            let steps: &[i64] = match axis.format {
                // Keep labels on KiB/MiB/GiB boundaries where possible.
                TickFormat::BinaryBytes => &[1, 2, 4, 5, 10],
                TickFormat::Number { .. } => &[1, 2, 3, 4, 5, 6, 8, 10],
            };
            log_ticks(axis, 2.0, steps, fits)
        }
        Scale::Linear => linear_ticks(axis),
    }
}

fn log_ticks(axis: &Axis, base: f64, steps: &[i64], fits: &dyn Fn(&[Tick]) -> bool) -> Vec<Tick> {
    let lo = axis.min.log(base);
    let hi = axis.max.log(base);
    let first = (lo - 1e-9).ceil() as i64;
    let last = (hi + 1e-9).floor() as i64;
    let mut majors: Vec<f64> = (first..=last).map(|k| base.powi(k as i32)).collect();
    let exponents: Vec<i64> = (first..=last).collect();
    // Fewer than two powers in range: add 2× and 5× (log10) so the reader
    // still has a scale.
    let mut minors = Vec::new();
    if base == 10.0 {
        for k in (first - 1)..=last {
            for m in 2..=9 {
                let v = f64::from(m) * 10f64.powi(k as i32);
                if v >= axis.min * (1.0 - 1e-9) && v <= axis.max * (1.0 + 1e-9) {
                    minors.push(v);
                }
            }
        }
    }
    if majors.len() < 2 && base == 10.0 {
        majors.extend(
            minors
                .iter()
                .copied()
                .filter(|v| matches!(mantissa(*v), 2 | 5)),
        );
        majors.sort_by(f64::total_cmp);
        let labels: Vec<Tick> = majors
            .iter()
            .map(|&v| Tick {
                value: v,
                label: Some(format_value(v, axis.format, false)),
                major: true,
            })
            .collect();
        return merge_minor(labels, &minors);
    }
    let pow_labels = base == 10.0 && needs_powers(&majors, axis.format);
    for &step in steps {
        let ticks: Vec<Tick> = majors
            .iter()
            .zip(&exponents)
            .map(|(&v, &k)| Tick {
                value: v,
                label: (k.rem_euclid(step) == 0).then(|| {
                    if pow_labels {
                        power_of_ten(k)
                    } else {
                        format_value(v, axis.format, false)
                    }
                }),
                major: true,
            })
            .collect();
        if fits(&ticks) || step == *steps.last().expect("steps are not empty") {
            return merge_minor(ticks, &minors);
        }
    }
    unreachable!("the last step is always returned")
}

fn mantissa(v: f64) -> i64 {
    (v / 10f64.powf(v.log10().floor())).round() as i64
}

fn merge_minor(mut ticks: Vec<Tick>, minors: &[f64]) -> Vec<Tick> {
    for &m in minors {
        if !ticks.iter().any(|t| (t.value / m - 1.0).abs() < 1e-9) {
            ticks.push(Tick {
                value: m,
                label: None,
                major: false,
            });
        }
    }
    ticks.sort_by(|a, b| a.value.total_cmp(&b.value));
    ticks
}

fn needs_powers(majors: &[f64], format: TickFormat) -> bool {
    match format {
        TickFormat::Number { divisor } => majors
            .iter()
            .map(|v| v / divisor)
            .any(|v| !(1e-3 * 0.999..1e5).contains(&v.abs())),
        TickFormat::BinaryBytes => false,
    }
}

/// 10ⁿ with superscript digits.
fn power_of_ten(k: i64) -> String {
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let digits: String = k
        .unsigned_abs()
        .to_string()
        .chars()
        .map(|c| SUP[c.to_digit(10).expect("a digit") as usize])
        .collect();
    format!("10{}{digits}", if k < 0 { "⁻" } else { "" })
}

fn linear_ticks(axis: &Axis) -> Vec<Tick> {
    let span = axis.max - axis.min;
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let first = (axis.min / step - 1e-9).ceil() as i64;
    let last = (axis.max / step + 1e-9).floor() as i64;
    (first..=last)
        .map(|i| {
            let v = i as f64 * step;
            Tick {
                value: v,
                label: Some(format_value(v, axis.format, true)),
                major: true,
            }
        })
        .collect()
}

/// A tick value as text.
pub fn format_value(v: f64, format: TickFormat, linear: bool) -> String {
    match format {
        TickFormat::Number { divisor } => number(v / divisor, linear),
        TickFormat::BinaryBytes => binary_bytes(v),
    }
}

/// The shortest plain decimal of `v` with at most 3 decimals; 10ⁿ style
/// outside [0.001, 10⁵) on log axes.
pub fn number(v: f64, linear: bool) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !linear && !(1e-3 * 0.999..1e5).contains(&v.abs()) {
        let k = v.abs().log10().round() as i64;
        if (10f64.powi(k as i32) / v.abs() - 1.0).abs() < 1e-9 {
            return power_of_ten(k);
        }
        return format!("{v:e}");
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

pub use models::units::binary_bytes;

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(t: &[Tick]) -> Vec<String> {
        t.iter().filter_map(|t| t.label.clone()).collect()
    }

    #[test]
    fn log10_ticks_at_decades() {
        let a = Axis::new("x", Scale::Log10, 0.01, 100.0);
        let t = ticks(&a, &|_| true);
        assert_eq!(labels(&t), ["0.01", "0.1", "1", "10", "100"]);
        assert!(t.iter().any(|t| !t.major && (t.value - 0.02).abs() < 1e-12));
    }

    #[test]
    fn log10_axis_with_one_decade_gets_2_and_5() {
        let a = Axis::new("x", Scale::Log10, 1.5, 30.0);
        assert_eq!(labels(&ticks(&a, &|_| true)), ["2", "5", "10", "20"]);
    }

    #[test]
    fn log2_labels_are_thinned_until_they_fit() {
        let a = Axis::new("P", Scale::Log2, 1.0, 4096.0);
        let all = ticks(&a, &|_| true);
        assert_eq!(labels(&all).len(), 13);
        let thin = ticks(&a, &|t| t.iter().filter(|t| t.label.is_some()).count() <= 7);
        assert_eq!(labels(&thin), ["1", "4", "16", "64", "256", "1024", "4096"]);
    }

    #[test]
    fn bytes_ticks_use_binary_prefixes() {
        let a = Axis::new("ws", Scale::Log2, 4096.0, 1024.0 * 1024.0 * 1024.0)
            .format(TickFormat::BinaryBytes);
        let t = ticks(&a, &|t| t.iter().filter(|t| t.label.is_some()).count() <= 5);
        assert_eq!(
            labels(&t),
            ["4 KiB", "64 KiB", "1 MiB", "16 MiB", "256 MiB"]
        );
    }

    #[test]
    fn numbers_and_powers() {
        assert_eq!(number(0.125, false), "0.125");
        assert_eq!(number(1e6, false), "10⁶");
        assert_eq!(number(1e-4, false), "10⁻⁴");
        assert_eq!(number(2.5, true), "2.5");
        let a = Axis::new("y", Scale::Linear, 0.0, 1.05);
        assert_eq!(
            labels(&ticks(&a, &|_| true)),
            ["0", "0.2", "0.4", "0.6", "0.8", "1"]
        );
    }
}
