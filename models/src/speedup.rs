//! Amdahl's and Gustafson's laws and the Karp–Flatt metric (lecture §4.6).

use crate::error::{count, fraction, positive, ModelError, Result};

/// Amdahl's speed-up with serial fraction f on P processors (§4.6):
/// S(P) = 1 / (f + (1 − f)/P). It never exceeds min(P, 1/f).
pub fn amdahl_speedup(f: f64, p: f64) -> Result<f64> {
    let f = fraction("serial-fraction", f)?;
    let p = count("p", p)?;
    Ok(1.0 / (f + (1.0 - f) / p))
}

/// The limit of Amdahl's speed-up as P → ∞: 1/f (infinite when f = 0).
pub fn amdahl_limit(f: f64) -> Result<f64> {
    Ok(1.0 / fraction("serial-fraction", f)?)
}

/// Gustafson's scaled speed-up when the parallel part grows with P and the
/// serial fraction f is measured on the P-processor run: S = P − f·(P − 1).
pub fn gustafson_speedup(f: f64, p: f64) -> Result<f64> {
    let f = fraction("serial-fraction", f)?;
    let p = count("p", p)?;
    Ok(p - f * (p - 1.0))
}

/// Karp–Flatt experimentally determined serial fraction from a measured
/// speed-up S on P > 1 processors: e = (1/S − 1/P) / (1 − 1/P).
pub fn karp_flatt(speedup: f64, p: f64) -> Result<f64> {
    let s = positive("speedup", speedup)?;
    let p = count("p", p)?;
    if p < 2.0 {
        return Err(ModelError::Inconsistent(
            "the Karp-Flatt metric needs a run on p >= 2 processors".into(),
        ));
    }
    Ok((1.0 / s - 1.0 / p) / (1.0 - 1.0 / p))
}

/// Parallel efficiency E = S / P.
pub fn efficiency(speedup: f64, p: f64) -> Result<f64> {
    Ok(positive("speedup", speedup)? / count("p", p)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn karp_flatt_inverts_amdahl() {
        let s = amdahl_speedup(0.03, 24.0).unwrap();
        assert!((karp_flatt(s, 24.0).unwrap() - 0.03).abs() < 1e-12);
    }

    #[test]
    fn edge_cases() {
        assert_eq!(amdahl_speedup(0.0, 8.0).unwrap(), 8.0);
        assert_eq!(amdahl_speedup(1.0, 8.0).unwrap(), 1.0);
        assert_eq!(amdahl_limit(0.0).unwrap(), f64::INFINITY);
        assert!(amdahl_speedup(1.5, 8.0).is_err());
        assert!(amdahl_speedup(-0.1, 8.0).is_err());
        assert!(karp_flatt(1.0, 1.0).is_err());
        assert_eq!(gustafson_speedup(0.0, 16.0).unwrap(), 16.0);
    }
}
