//! Human units in, SI base units out.
//!
//! The command lines accept `2us`, `6.4GB/s`, `32KiB`, `3GHz`, `200cycles`,
//! `1e6`. Decimal prefixes (`k`, `M`, `G`, `T`) are powers of 1000 and binary
//! prefixes (`Ki`, `Mi`, `Gi`, `Ti`) powers of 1024, so `32KB` is 32 000 bytes
//! and `32KiB` is 32 768. A bare number is taken in the base unit of the
//! quantity asked for (seconds, bytes, bytes per second, hertz, flop/s).
//!
//! ```
//! use models::units::{parse, Dimension};
//! assert_eq!(parse("6.4GB/s", Dimension::Bandwidth).unwrap().value, 6.4e9);
//! assert_eq!(parse("32KiB", Dimension::Bytes).unwrap().value, 32768.0);
//! assert_eq!(parse("2us", Dimension::Time).unwrap().value, 2e-6);
//! ```

use std::fmt;

use thiserror::Error;

/// What a quantity measures, and so which units it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// Seconds; cycles are accepted too and kept as cycles (see [`Parsed::cycles`]).
    Time,
    /// Bytes.
    Bytes,
    /// Bytes per second (bits per second are converted: 8 bits = 1 byte).
    Bandwidth,
    /// Hertz.
    Frequency,
    /// Floating-point operations per second.
    FlopRate,
    /// A plain count (elements, processors, operations).
    Count,
}

impl Dimension {
    fn accepted(self) -> &'static str {
        match self {
            Dimension::Time => "a time such as 2us, 1.5ms, 66.7ns or 200cycles",
            Dimension::Bytes => "a size such as 4096, 32KiB, 12.8kB or 16MiB",
            Dimension::Bandwidth => "a bandwidth such as 6.4GB/s, 20GiB/s or 100Gbit/s",
            Dimension::Frequency => "a frequency such as 3GHz or 2400MHz",
            Dimension::FlopRate => "a rate such as 768GFLOP/s or 1.5e12",
            Dimension::Count => "a number such as 64, 1e6, 4k or 1Mi",
        }
    }
}

/// Why a quantity did not parse.
#[derive(Debug, Error, PartialEq)]
pub enum UnitError {
    #[error("'{input}' is not {accepted}")]
    Malformed {
        input: String,
        accepted: &'static str,
    },
    #[error("unknown unit '{unit}' in '{input}': expected {accepted}")]
    UnknownUnit {
        input: String,
        unit: String,
        accepted: &'static str,
    },
}

/// Which kind of prefix a parsed value used, so a tool can say which it applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixKind {
    None,
    /// Powers of 1000.
    Decimal,
    /// Powers of 1024.
    Binary,
}

/// A parsed quantity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parsed {
    /// The value in SI base units (for cycles: the number of cycles).
    pub value: f64,
    /// True when a time was given in clock cycles; convert with [`cycles_to_seconds`].
    pub cycles: bool,
    /// The prefix kind that was applied.
    pub prefix: PrefixKind,
}

/// Decimal kilo: 1 kB = 1000 B.
pub const KILO: f64 = 1e3;
/// Binary kibi: 1 KiB = 1024 B.
pub const KIBI: f64 = 1024.0;
/// Bits in a byte, for bandwidths given in bit/s.
pub const BITS_PER_BYTE: f64 = 8.0;

/// Cycles at a clock rate, in seconds: t = cycles / f.
pub fn cycles_to_seconds(cycles: f64, clock_hz: f64) -> f64 {
    cycles / clock_hz
}

/// Parses `input` as a quantity of `dim`. Whitespace between number and unit
/// is allowed; unit letters are matched exactly except the hertz and flop
/// spellings, which are case-insensitive.
pub fn parse(input: &str, dim: Dimension) -> Result<Parsed, UnitError> {
    let s = input.trim();
    let split = number_prefix_len(s);
    let malformed = || UnitError::Malformed {
        input: input.to_string(),
        accepted: dim.accepted(),
    };
    if split == 0 {
        return Err(malformed());
    }
    let number: f64 = s[..split].parse().map_err(|_| malformed())?;
    if !number.is_finite() {
        return Err(malformed());
    }
    let unit = s[split..].trim();
    let (factor, prefix, cycles) =
        unit_factor(unit, dim).ok_or_else(|| UnitError::UnknownUnit {
            input: input.to_string(),
            unit: unit.to_string(),
            accepted: dim.accepted(),
        })?;
    Ok(Parsed {
        value: number * factor,
        cycles,
        prefix,
    })
}

/// Length of the leading number (digits, sign, point, exponent).
fn number_prefix_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        i += 1;
    }
    if i == digits_start {
        return 0;
    }
    // An exponent only when digits follow, so "1e6" is a number but "2ms" is not eaten.
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    i
}

/// Splits a multiplier prefix off `unit`, returning (factor, kind, rest).
fn split_prefix(unit: &str) -> (f64, PrefixKind, &str) {
    const BINARY: [(&str, f64); 5] = [
        ("Ki", 1024.0),
        ("Mi", 1048576.0),
        ("Gi", 1073741824.0),
        ("Ti", 1099511627776.0),
        ("Pi", 1125899906842624.0),
    ];
    const DECIMAL: [(&str, f64); 11] = [
        ("k", 1e3),
        ("K", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("m", 1e-3),
        ("u", 1e-6),
        ("µ", 1e-6),
        ("μ", 1e-6),
        ("n", 1e-9),
    ];
    for (p, f) in BINARY {
        if let Some(rest) = unit.strip_prefix(p) {
            return (f, PrefixKind::Binary, rest);
        }
    }
    for (p, f) in DECIMAL {
        if let Some(rest) = unit.strip_prefix(p) {
            return (f, PrefixKind::Decimal, rest);
        }
    }
    if let Some(rest) = unit.strip_prefix('p') {
        return (1e-12, PrefixKind::Decimal, rest);
    }
    (1.0, PrefixKind::None, unit)
}

/// The factor to SI base units for `unit` in `dim`, or None when the unit does
/// not belong to the dimension. Returns (factor, prefix kind, is_cycles).
fn unit_factor(unit: &str, dim: Dimension) -> Option<(f64, PrefixKind, bool)> {
    if unit.is_empty() {
        return Some((1.0, PrefixKind::None, false));
    }
    if dim == Dimension::Time && matches!(unit, "cycles" | "cycle" | "cyc" | "clk") {
        return Some((1.0, PrefixKind::None, true));
    }
    // Minutes and hours are whole words, not prefixed seconds.
    if dim == Dimension::Time {
        match unit {
            "min" => return Some((60.0, PrefixKind::None, false)),
            "h" => return Some((3600.0, PrefixKind::None, false)),
            _ => {}
        }
    }
    // Hertz spellings are case-insensitive: "3ghz" and "2400MHz" alike
    // (nobody means millihertz).
    if dim == Dimension::Frequency {
        return match unit.to_ascii_lowercase().as_str() {
            "hz" => Some((1.0, PrefixKind::None, false)),
            "khz" => Some((1e3, PrefixKind::Decimal, false)),
            "mhz" => Some((1e6, PrefixKind::Decimal, false)),
            "ghz" => Some((1e9, PrefixKind::Decimal, false)),
            "thz" => Some((1e12, PrefixKind::Decimal, false)),
            _ => None,
        };
    }
    let (factor, kind, base) = split_prefix(unit);
    let small = factor < 1.0;
    let base_factor = match dim {
        Dimension::Time if base == "s" => 1.0,
        Dimension::Bytes if base == "B" && !small => 1.0,
        Dimension::Bandwidth if !small => match base {
            "B/s" | "Bps" => 1.0,
            "bit/s" | "b/s" | "bps" => 1.0 / BITS_PER_BYTE,
            _ => return None,
        },
        Dimension::FlopRate
            if !small && matches!(base.to_ascii_lowercase().as_str(), "flop/s" | "flops") =>
        {
            1.0
        }
        Dimension::Count if !small && base.is_empty() => 1.0,
        _ => return None,
    };
    // A bare prefix letter with no base unit only makes sense for counts.
    if base.is_empty() && dim != Dimension::Count {
        return None;
    }
    Some((factor * base_factor, kind, false))
}

/// A number exactly as given (the shortest text that reads back as the
/// same f64), with a power of ten outside [1e-4, 1e15), so that a refused
/// input is shown as the user wrote it: "1.00001", "1e300", not 300
/// digits.
pub fn exact(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&a) {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

/// A value in SI base units, printed with a decimal prefix and 3 significant
/// digits: `Si(6.4e9, "B/s")` prints `6.40 GB/s`; beyond the prefixes, a
/// power of ten (`8.00e30 B`).
#[derive(Debug, Clone, Copy)]
pub struct Si(pub f64, pub &'static str);

/// The decimal SI prefixes results are shown with, largest first.
pub const SI_PREFIXES: [(f64, &str); 10] = [
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
];

impl fmt::Display for Si {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Si(v, unit) = *self;
        if v == 0.0 {
            // −0 (from a product with a negative zero) reads as 0.
            return write!(f, "0 {unit}");
        }
        if !v.is_finite() {
            return write!(f, "{v} {unit}");
        }
        let a = v.abs();
        let (largest, smallest) = (SI_PREFIXES[0].0, SI_PREFIXES[SI_PREFIXES.len() - 1].0);
        if a >= largest * 999.5 || a < smallest * 0.9995 {
            return write!(f, "{v:.2e} {unit}");
        }
        let (scale, p) = SI_PREFIXES
            .iter()
            .copied()
            .find(|(s, _)| a >= *s * 0.9995)
            .unwrap_or((smallest, "p"));
        let x = v / scale;
        let digits = if x.abs() >= 99.95 {
            0
        } else if x.abs() >= 9.995 {
            1
        } else {
            2
        };
        write!(f, "{x:.digits$} {p}{unit}")
    }
}

/// The binary byte units and their factors, smallest first.
pub const BINARY_BYTES: [(f64, &str); 5] = [
    (1.0, "B"),
    (KIBI, "KiB"),
    (KIBI * KIBI, "MiB"),
    (KIBI * KIBI * KIBI, "GiB"),
    (KIBI * KIBI * KIBI * KIBI, "TiB"),
];

/// A byte count in binary units, as caches and buffers are named, to three
/// significant digits without trailing zeros: "4 KiB", "29.9 KiB",
/// "540 KiB", "1.5 GiB".
pub fn binary_bytes(v: f64) -> String {
    let mut x = v;
    let mut i = 0;
    while x >= KIBI && i + 1 < BINARY_BYTES.len() {
        x /= KIBI;
        i += 1;
    }
    let digits = if x >= 99.95 {
        0
    } else if x >= 9.995 {
        1
    } else {
        2
    };
    let s = format!("{x:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s} {}", BINARY_BYTES[i].1)
}

/// A whole number of bytes in the largest binary unit of at least a KiB
/// that divides it exactly, as (count, unit): 4096 -> (4, "KiB"); None when
/// no such unit divides it.
pub fn exact_binary(bytes: f64) -> Option<(f64, &'static str)> {
    BINARY_BYTES[1..]
        .iter()
        .rev()
        .find(|(f, _)| bytes.abs() >= *f && bytes % f == 0.0)
        .map(|(f, u)| (bytes / f, *u))
}

/// A message or buffer size as exactly as it was chosen: "4 KiB",
/// "16 MiB", "3444 B".
pub fn exact_binary_bytes(bytes: u64) -> String {
    match exact_binary(bytes as f64) {
        Some((n, unit)) => format!("{n} {unit}"),
        None => format!("{bytes} B"),
    }
}

#[cfg(test)]
mod tests;
