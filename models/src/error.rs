//! The one error type of the formulas: a parameter outside the values that
//! make sense, named as the command line names it.

use thiserror::Error;

/// Why a formula refused its inputs.
#[derive(Debug, Error, PartialEq)]
pub enum ModelError {
    /// A parameter outside its meaningful range.
    #[error("{name} = {} is not accepted: it must be {accepted}", crate::units::exact(*value))]
    OutOfRange {
        name: &'static str,
        value: f64,
        accepted: &'static str,
    },
    /// Parameters that are each valid but do not fit together.
    #[error("{0}")]
    Inconsistent(String),
}

/// Shorthand for results of the formulas.
pub type Result<T> = std::result::Result<T, ModelError>;

fn check(name: &'static str, value: f64, ok: bool, accepted: &'static str) -> Result<f64> {
    if ok && value.is_finite() {
        Ok(value)
    } else {
        Err(ModelError::OutOfRange {
            name,
            value,
            accepted,
        })
    }
}

/// `value` > 0.
pub fn positive(name: &'static str, value: f64) -> Result<f64> {
    check(name, value, value > 0.0, "a finite number > 0")
}

/// `value` ≥ 0.
pub fn non_negative(name: &'static str, value: f64) -> Result<f64> {
    check(name, value, value >= 0.0, "a finite number >= 0")
}

/// 0 ≤ `value` ≤ 1.
pub fn fraction(name: &'static str, value: f64) -> Result<f64> {
    check(name, value, (0.0..=1.0).contains(&value), "in [0, 1]")
}

/// A real number ≥ 1 (a processor count on a continuous scaling curve).
pub fn at_least_one(name: &'static str, value: f64) -> Result<f64> {
    check(name, value, value >= 1.0, "a number >= 1")
}

/// The largest whole number an f64 holds exactly, 2^53: a count above it
/// has already been rounded by the parser.
pub const MAX_EXACT_COUNT: f64 = 9007199254740992.0;

/// A whole number ≥ 1 and ≤ 2^53 (processor counts, message counts, grid
/// sides).
pub fn count(name: &'static str, value: f64) -> Result<f64> {
    check(
        name,
        value,
        value >= 1.0 && value.fract() == 0.0 && value <= MAX_EXACT_COUNT,
        "a whole number >= 1 and <= 2^53 (larger ones are not exact)",
    )
}

/// A whole number ≥ 0 and ≤ 2^53.
pub fn whole(name: &'static str, value: f64) -> Result<f64> {
    check(
        name,
        value,
        value >= 0.0 && value.fract() == 0.0 && value <= MAX_EXACT_COUNT,
        "a whole number >= 0 and <= 2^53",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_parameter() {
        let e = fraction("serial-fraction", 1.5).unwrap_err();
        assert_eq!(
            e.to_string(),
            "serial-fraction = 1.5 is not accepted: it must be in [0, 1]"
        );
        assert!(positive("bandwidth", 0.0).is_err());
        assert!(positive("bandwidth", f64::INFINITY).is_err());
        assert!(non_negative("t0", 0.0).is_ok());
        assert!(count("p", 2.5).is_err());
        assert!(count("p", 0.0).is_err());
        assert_eq!(count("p", 64.0), Ok(64.0));
        assert!(count("p", 18446744073709551617.0).is_err());
        assert!(whole("ops", 0.0).is_ok() && whole("ops", 0.5).is_err());
        // A refused number reads as given, not as three hundred digits.
        assert_eq!(
            count("p", 1e300).unwrap_err().to_string(),
            "p = 1e300 is not accepted: it must be a whole number >= 1 and <= 2^53 (larger ones are not exact)"
        );
        assert!(fraction("f", 1.00001)
            .unwrap_err()
            .to_string()
            .starts_with("f = 1.00001 is"));
    }
}
