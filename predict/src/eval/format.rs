//! The one number formatter of `predict eval`: every value, in the work
//! and in the results, goes through [`q`] (or [`show`], which adds a
//! second reading for bytes and long times).
//!
//! Four significant digits, a decimal SI prefix for dimensioned units, a
//! power of ten when no prefix fits, and rates per second as `/s` (never a
//! milli-prefixed "m/s").

use models::units::SI_PREFIXES as PREFIXES;

/// A dimensionless number: up to 4 significant digits, no trailing zeros,
/// a power of ten (`1.5e-5`) outside [1e-3, 1e7).
pub fn plain(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".into();
    }
    if v.fract() == 0.0 && v.abs() < 1e7 {
        return format!("{v}");
    }
    if v.abs() >= 1e7 || v.abs() < 1e-3 {
        let s = format!("{v:.3e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{e}", trim(m));
    }
    let int_digits = v.abs().log10().floor() as i32 + 1;
    let decimals = (4 - int_digits).max(0) as usize;
    trim(&format!("{v:.decimals$}"))
}

fn trim(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// True for a rate of events (`/s`, `op/s`, `msg/s`): printed without a
/// prefix so 0.8 per second never reads as "800 m/s".
fn is_event_rate(unit: &str) -> bool {
    unit.ends_with("/s") && !matches!(unit, "B/s" | "FLOP/s")
}

/// A quantity as it appears in the work: `2 µs`, `6.4 GB/s`, `32768 B`,
/// `0.8/s`, `12 op/s`, `0.15 flop/B`, or a plain number.
pub fn q(v: f64, unit: &str) -> String {
    if unit.is_empty() {
        return plain(v);
    }
    if unit == "/s" {
        return format!("{}/s", plain(v));
    }
    if is_event_rate(unit) || unit == "flop/B" || !v.is_finite() || v == 0.0 {
        return format!("{} {unit}", plain(v));
    }
    if unit == "B" && v.fract() == 0.0 && v.abs() < 1e7 {
        return format!("{v} B");
    }
    // Seconds take no multiple prefix: 1800 s, not 1.8 ks.
    if unit == "s" && v.abs() >= 1.0 {
        return format!("{} s", plain(v));
    }
    let a = v.abs();
    match PREFIXES.iter().find(|(s, _)| a >= *s * 0.99995) {
        Some((s, p)) if a / s < 1e4 => format!("{} {p}{unit}", plain(v / s)),
        _ => format!("{} {unit}", plain(v)),
    }
}

/// A result for people: [`q`], with a whole multiple of 1024 bytes also in
/// binary units and a time of a minute or more also in minutes.
pub fn show(v: f64, unit: &str) -> String {
    let base = q(v, unit);
    match unit {
        "B" if v.fract() == 0.0 && v.abs() < 1e15 => models::units::exact_binary(v)
            .map_or(base.clone(), |(n, u)| format!("{base} ({} {u})", plain(n))),
        "s" if v.abs() >= 60.0 && v.is_finite() => format!("{base} ({} min)", plain(v / 60.0)),
        _ => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers() {
        assert_eq!(plain(32.0), "32");
        assert_eq!(plain(0.5), "0.5");
        assert_eq!(plain(1.0 / 3.0), "0.3333");
        assert_eq!(plain(61.4946), "61.49");
        assert_eq!(plain(1570.9004), "1571");
        assert_eq!(plain(262144.0), "262144");
        assert_eq!(plain(1.5e-5), "1.5e-5");
        assert_eq!(plain(1e300), "1e300");
        assert_eq!(plain(-0.013), "-0.013");
    }

    #[test]
    fn quantities() {
        assert_eq!(q(2e-6, "s"), "2 µs");
        assert_eq!(q(6.4e9, "B/s"), "6.4 GB/s");
        assert_eq!(q(12800.0, "B"), "12800 B");
        assert_eq!(q(1.28e7, "B"), "12.8 MB");
        assert_eq!(q(0.8, "/s"), "0.8/s");
        assert_eq!(q(1e300, "/s"), "1e300/s");
        assert_eq!(q(1e300, "B/s"), "1e300 B/s");
        assert_eq!(q(1.6667e6, "op/s"), "1666700 op/s");
        assert_eq!(q(7.1200001e-6, "s"), "7.12 µs");
        assert_eq!(q(0.15, "flop/B"), "0.15 flop/B");
    }

    #[test]
    fn results_add_a_second_reading() {
        assert_eq!(show(32768.0, "B"), "32768 B (32 KiB)");
        assert_eq!(show(64.0, "B"), "64 B");
        assert_eq!(show(1200.0, "s"), "1200 s (20 min)");
        assert_eq!(q(1800.0, "s"), "1800 s");
    }
}
