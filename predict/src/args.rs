//! Command-line value parsers for human units (see `models::units`).

use models::units::{cycles_to_seconds, parse, Dimension, Parsed};

/// A time as given: seconds, or clock cycles that need `--clock`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Time(pub Parsed);

impl Time {
    /// Seconds; a time in cycles is converted with `clock_hz`, and refused
    /// without it.
    pub fn seconds(&self, flag: &str, clock_hz: Option<f64>) -> anyhow::Result<f64> {
        match (self.0.cycles, clock_hz) {
            (false, _) => Ok(self.0.value),
            (true, Some(f)) if !(f.is_finite() && f > 0.0) => Err(crate::error::BadInput(format!(
                "--clock {f} Hz is not accepted: --{flag} is given in cycles and needs a clock > 0 to convert it"
            ))
            .into()),
            (true, Some(f)) => Ok(cycles_to_seconds(self.0.value, f)),
            (true, None) => Err(crate::error::BadInput(format!(
                "--{flag} is given in cycles: add --clock (e.g. --clock 3GHz) to convert it"
            ))
            .into()),
        }
    }
}

thread_local! {
    /// Dimensioned values given as bare numbers since the last
    /// [`take_bare`]: (as typed, the SI unit it was read in).
    static BARE: std::cell::RefCell<Vec<(String, &'static str)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Notes a bare number (no unit) given for a quantity of `dim`.
fn remember_bare(s: &str, dim: Dimension) {
    let unit = match dim {
        Dimension::Time => "s",
        Dimension::Bandwidth => "B/s",
        Dimension::Frequency => "Hz",
        Dimension::FlopRate => "FLOP/s",
        Dimension::Bytes | Dimension::Count => return,
    };
    // Zero is zero in any unit.
    if s.trim().parse::<f64>().is_ok_and(|v| v != 0.0) {
        BARE.with(|b| b.borrow_mut().push((s.trim().to_string(), unit)));
    }
}

/// The bare numbers parsed on this thread since the last call, as
/// (as typed, SI unit), so the work can say how they were read.
pub fn take_bare() -> Vec<(String, &'static str)> {
    BARE.with(|b| std::mem::take(&mut *b.borrow_mut()))
}

fn value(s: &str, dim: Dimension) -> Result<f64, String> {
    remember_bare(s, dim);
    parse(s, dim).map(|p| p.value).map_err(|e| e.to_string())
}

/// `2us`, `1.5ms`, `200cycles`.
pub fn time(s: &str) -> Result<Time, String> {
    remember_bare(s, Dimension::Time);
    parse(s, Dimension::Time)
        .map(Time)
        .map_err(|e| e.to_string())
}

/// `4096`, `32KiB`, `12.8kB`.
pub fn bytes(s: &str) -> Result<f64, String> {
    value(s, Dimension::Bytes)
}

/// `6.4GB/s`, `100Gbit/s`.
pub fn bandwidth(s: &str) -> Result<f64, String> {
    value(s, Dimension::Bandwidth)
}

/// `3GHz`.
pub fn frequency(s: &str) -> Result<f64, String> {
    value(s, Dimension::Frequency)
}

/// `768GFLOP/s`.
pub fn flop_rate(s: &str) -> Result<f64, String> {
    value(s, Dimension::FlopRate)
}

/// `64`, `1e6`, `4k`.
pub fn number(s: &str) -> Result<f64, String> {
    value(s, Dimension::Count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_need_a_clock() {
        let t = time("200cycles").unwrap();
        assert!(t.seconds("latency", None).is_err());
        assert!((t.seconds("latency", Some(3e9)).unwrap() - 66.666e-9).abs() < 1e-12);
        assert_eq!(time("2us").unwrap().seconds("t0", None).unwrap(), 2e-6);
    }

    #[test]
    fn a_zero_clock_is_named() {
        let e = time("6000cycles")
            .unwrap()
            .seconds("t0", Some(0.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--clock 0"), "{e}");
    }

    #[test]
    fn bare_numbers_are_remembered() {
        take_bare();
        time("2").unwrap();
        time("2us").unwrap();
        bandwidth("1e9").unwrap();
        assert_eq!(
            take_bare(),
            vec![("2".to_string(), "s"), ("1e9".to_string(), "B/s")]
        );
    }

    #[test]
    fn parsers_report_accepted_forms() {
        let e = bandwidth("fast").unwrap_err();
        assert!(e.contains("6.4GB/s"), "{e}");
        assert_eq!(bytes("32KiB"), Ok(32768.0));
    }
}
