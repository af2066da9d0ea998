//! Validation of a machine profile when it is loaded: every figure a
//! prediction may read must be a finite number, the measured quantities
//! positive, and every interval must hold its point (lo ≤ point ≤ hi).
//! A profile that fails is refused with one line naming the field, so no
//! model ever divides by a zero throughput or a negative bandwidth.

mod sections;

use crate::profile::{Profile, ProfileError, Sample, Sections};
use crate::Estimate;

/// Checks every figure of `p`.
///
/// - `summary.*`, `provenance.clock_hz`, each level's latency and bandwidths,
///   each ceiling's FLOP/s and each network regime's B: finite, > 0,
///   lo ≤ point ≤ hi; a regime's T0 (a fitted intercept, negative in some
///   large-message regimes) finite and ordered, with T0 + n/B > 0 from the
///   regime's first size;
/// - `network.overlap_fraction`: in [0, 1];
/// - `sections`, through their types: every number finite; every sample
///   (`median`, `ci_lo`, `ci_hi`) positive (signed for fractions, errors
///   and ratios) with its interval around it; every estimate (`point`,
///   `lo`, `hi`) ordered (fitted intercepts there may be negative); every
///   bare `*_Bps`, `*_flops` or `*_hz` figure positive.
///
/// # Errors
/// [`ProfileError::Invalid`] naming the first field that fails.
pub fn validate(p: &Profile) -> Result<(), ProfileError> {
    for (key, v) in p.summary.figures() {
        if let Some(v) = v {
            positive(&format!("summary.{key}"), v)?;
        }
    }
    if let Some(hz) = p.provenance.clock_hz {
        positive("provenance.clock_hz", hz)?;
    }
    for (i, l) in p.levels.iter().enumerate() {
        let at = format!("levels[{i}] ({})", l.name);
        if let Some(b) = l.size_bytes {
            positive(&format!("{at}.size_bytes"), b)?;
        }
        for (key, e) in [
            ("latency_s", &l.latency_s),
            ("bandwidth_1t_Bps", &l.bandwidth_1t_Bps),
            ("bandwidth_Bps", &l.bandwidth_Bps),
        ] {
            if let Some(e) = e {
                estimate(&format!("{at}.{key}"), e, true)?;
            }
        }
    }
    for (i, c) in p.ceilings.iter().enumerate() {
        estimate(&format!("ceilings[{i}] ({}).flops", c.name), &c.flops, true)?;
    }
    if let Some(n) = &p.network {
        for (key, i, r) in n
            .regimes
            .iter()
            .enumerate()
            .map(|(i, r)| ("regimes", i, r))
            .chain(
                n.evicted_regimes
                    .iter()
                    .enumerate()
                    .map(|(i, r)| ("evicted_regimes", i, r)),
            )
        {
            let at = format!("network.{key}[{i}]");
            // T0 is a fitted intercept, which a large-message regime may
            // have below zero; its line must give a positive time over
            // its own range.
            estimate(&format!("{at}.t0_s"), &r.t0_s, false)?;
            estimate(&format!("{at}.bandwidth_Bps"), &r.bandwidth_Bps, true)?;
            let first = r.t0_s.point + r.from_bytes.max(1.0) / r.bandwidth_Bps.point;
            if first <= 0.0 {
                return Err(invalid(
                    &format!("{at}.t0_s"),
                    r.t0_s.point,
                    "an intercept whose line T0 + n/B stays > 0 from the regime's first size",
                ));
            }
            if !(r.from_bytes >= 0.0 && r.from_bytes <= r.to_bytes) {
                return Err(invalid(
                    &format!("{at}.from_bytes"),
                    r.from_bytes,
                    "a size >= 0 and <= to_bytes",
                ));
            }
        }
        if let Some(f) = &n.overlap_fraction {
            estimate("network.overlap_fraction", f, false)?;
            if !(0.0..=1.0).contains(&f.point) {
                return Err(invalid("network.overlap_fraction", f.point, "in [0, 1]"));
            }
        }
    }
    sections("sections", &p.sections)
}

fn invalid(field: &str, value: f64, accepted: &str) -> ProfileError {
    ProfileError::Invalid {
        field: field.to_string(),
        value,
        accepted: accepted.to_string(),
    }
}

fn positive(field: &str, v: f64) -> Result<f64, ProfileError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(invalid(field, v, "a finite number > 0"))
    }
}

fn finite(field: &str, v: f64) -> Result<f64, ProfileError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(invalid(field, v, "a finite number"))
    }
}

/// lo ≤ point ≤ hi, all finite, and the point positive when `positive_point`.
fn estimate(field: &str, e: &Estimate, positive_point: bool) -> Result<(), ProfileError> {
    interval(field, e.point, e.lo, e.hi, positive_point)
}

fn interval(field: &str, point: f64, lo: f64, hi: f64, pos: bool) -> Result<(), ProfileError> {
    if pos {
        positive(field, point)?;
    } else {
        finite(field, point)?;
    }
    finite(&format!("{field} (lo)"), lo)?;
    finite(&format!("{field} (hi)"), hi)?;
    if lo <= point && point <= hi {
        Ok(())
    } else {
        Err(ProfileError::Interval {
            field: field.to_string(),
            lo,
            point,
            hi,
        })
    }
}

/// Checks of one typed section, each naming its fields from `at`.
trait Check {
    fn check(&self, at: &str) -> Result<(), ProfileError>;
}

impl<T: Check> Check for Option<T> {
    fn check(&self, at: &str) -> Result<(), ProfileError> {
        self.as_ref().map_or(Ok(()), |x| x.check(at))
    }
}

impl<T: Check> Check for Vec<T> {
    fn check(&self, at: &str) -> Result<(), ProfileError> {
        self.iter()
            .enumerate()
            .try_for_each(|(i, x)| x.check(&format!("{at}[{i}]")))
    }
}

/// A measured time, rate or count: positive median inside its interval,
/// the capability estimates ordered.
impl Check for Sample {
    fn check(&self, at: &str) -> Result<(), ProfileError> {
        sample(at, self, true)
    }
}

/// An estimate of a fit or a plateau: finite and ordered, of either sign
/// (fitted intercepts may be negative).
impl Check for Estimate {
    fn check(&self, at: &str) -> Result<(), ProfileError> {
        estimate(at, self, false)
    }
}

/// A bare figure: finite.
impl Check for f64 {
    fn check(&self, at: &str) -> Result<(), ProfileError> {
        finite(at, *self).map(|_| ())
    }
}

/// A bare rate (`*_Bps`, `*_flops`, `*_hz`): finite and > 0.
struct Rate(f64);

impl Check for Rate {
    fn check(&self, at: &str) -> Result<(), ProfileError> {
        positive(at, self.0).map(|_| ())
    }
}

/// `sample`'s median inside its interval (positive unless `pos` is
/// false: an overlap fraction, a model error or a ratio may be negative as
/// measured) and its capability estimates ordered.
fn sample(at: &str, s: &Sample, pos: bool) -> Result<(), ProfileError> {
    let e = s.estimate();
    interval(&format!("{at}.median"), e.point, e.lo, e.hi, pos)?;
    finite(&format!("{at}.cv"), s.cv)?;
    s.low_quantile.check(&format!("{at}.low_quantile"))?;
    s.high_quantile.check(&format!("{at}.high_quantile"))
}

/// [`sample`] of a full statistics summary.
fn summary(at: &str, s: &crate::stats::Summary, pos: bool) -> Result<(), ProfileError> {
    interval(&format!("{at}.median"), s.median, s.ci_lo, s.ci_hi, pos)?;
    for (k, v) in [("mean", s.mean), ("std_dev", s.std_dev), ("cv", s.cv)] {
        finite(&format!("{at}.{k}"), v)?;
    }
    Ok(())
}

/// Checks each `(key, figure)` under `at`.
fn each(at: &str, figures: &[(&str, &dyn Check)]) -> Result<(), ProfileError> {
    figures
        .iter()
        .try_for_each(|(k, c)| c.check(&format!("{at}.{k}")))
}

fn opt_rate(v: Option<f64>) -> Option<Rate> {
    v.map(Rate)
}

fn sections(at: &str, s: &Sections) -> Result<(), ProfileError> {
    each(
        at,
        &[
            ("c2c", &s.c2c),
            ("flops", &s.flops),
            ("latency", &s.latency),
            ("lock", &s.lock),
            ("mlp", &s.mlp),
            ("pingpong", &s.pingpong),
            ("stream", &s.stream),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{MemoryLevel, Provenance};

    fn good() -> Profile {
        let mut p = Profile::new(Provenance {
            clock_hz: Some(3e9),
            ..Default::default()
        });
        p.summary.stream_triad_Bps = Some(20e9);
        p.levels.push(MemoryLevel {
            name: "L1".into(),
            size_bytes: Some(32768.0),
            latency_s: Some(Estimate::new(1.2e-9, 1.1e-9, 1.3e-9)),
            bandwidth_1t_Bps: None,
            bandwidth_Bps: None,
        });
        p.sections
            .insert_json(
                "lock",
                serde_json::json!({"kinds": [{"kind": "mutex", "points": [
                    {"threads": 2, "throughput_ops": {"median": 5e6, "ci_lo": 4e6, "ci_hi": 6e6}}
                ], "t_crit_s": {"point": -1e-7, "lo": -2e-7, "hi": 1e-7}}]}),
            )
            .unwrap();
        p
    }

    #[test]
    fn a_sound_profile_passes() {
        validate(&good()).unwrap();
    }

    #[test]
    fn each_fault_names_its_field() {
        let mut p = good();
        p.summary.stream_triad_Bps = Some(-1.0);
        let e = validate(&p).unwrap_err().to_string();
        assert!(e.contains("summary.stream_triad_Bps = -1"), "{e}");
        let mut p = good();
        p.summary.dram_latency_s = Some(f64::NAN);
        assert!(validate(&p)
            .unwrap_err()
            .to_string()
            .contains("summary.dram_latency_s"));
        let mut p = good();
        p.levels[0].latency_s = Some(Estimate::new(1.2e-9, 1.3e-9, 1.4e-9));
        let e = validate(&p).unwrap_err().to_string();
        assert!(
            e.contains("levels[0] (L1).latency_s") && e.contains("lo"),
            "{e}"
        );
        let mut p = good();
        p.provenance.clock_hz = Some(0.0);
        assert!(validate(&p)
            .unwrap_err()
            .to_string()
            .contains("provenance.clock_hz"));
    }

    #[test]
    fn a_zero_lock_throughput_is_refused() {
        let mut p = good();
        let t = &mut p.sections.lock.as_mut().unwrap().kinds[0].points[0].throughput_ops;
        *t = Sample::new(0.0, 0.0, 0.0);
        let e = validate(&p).unwrap_err().to_string();
        assert!(
            e.contains("sections.lock.kinds[0].points[0].throughput_ops.median"),
            "{e}"
        );
        let mut p = good();
        p.sections
            .insert_json(
                "stream",
                serde_json::json!({"dram": [{"per_thread_bytes": 1, "total_bytes": 1,
                    "kernel": "triad", "bandwidth_Bps": {"median": 1.0, "ci_lo": 1.0, "ci_hi": 1.0},
                    "bandwidth_write_allocate_Bps": -3.0}]}),
            )
            .unwrap();
        let e = validate(&p).unwrap_err().to_string();
        assert!(e.contains("bandwidth_write_allocate_Bps"), "{e}");
    }

    #[test]
    fn a_regime_line_may_have_a_negative_intercept_but_no_negative_time() {
        use crate::profile::{Network, NetworkRegime};
        let regime = |t0: f64| NetworkRegime {
            from_bytes: 881744.0,
            to_bytes: 16777216.0,
            t0_s: Estimate::new(t0, t0 - 1e-5, t0 + 1e-5),
            bandwidth_Bps: Estimate::new(6.6e9, 6.5e9, 6.7e9),
            r_squared: 0.999,
        };
        let mut p = good();
        p.network = Some(Network {
            transport: "tcp".into(),
            hosts: vec![],
            regimes: vec![regime(-4.76e-5)],
            overlap_fraction: None,
            points: vec![],
            evicted_regimes: vec![],
        });
        validate(&p).unwrap();
        // 881744 B at 6.6 GB/s take 134 µs: an intercept of -200 µs makes
        // the line negative there.
        p.network.as_mut().unwrap().regimes[0] = regime(-2e-4);
        let e = validate(&p).unwrap_err().to_string();
        assert!(e.contains("network.regimes[0].t0_s"), "{e}");
        // The evicted regimes are held to the same rule.
        let net = p.network.as_mut().unwrap();
        net.regimes[0] = regime(-4.76e-5);
        net.evicted_regimes = vec![regime(-4.76e-5), regime(-2e-4)];
        let e = validate(&p).unwrap_err().to_string();
        assert!(e.contains("network.evicted_regimes[1].t0_s"), "{e}");
    }

    #[test]
    fn a_measured_overlap_fraction_may_be_negative() {
        let mut p = good();
        let stats = |median: f64, lo: f64| {
            serde_json::json!({"n": 30, "median": median, "ci_lo": lo, "ci_hi": 0.1,
                "mean": median, "std_dev": 0.1, "cv": 0.3, "min": -1.0, "max": 1.0, "mad": 0.1,
                "outliers": {"low": 0, "high": 0}, "noisy": false})
        };
        let overlap = |lo: f64| {
            serde_json::json!({"overlap": {"bytes": 4096, "spin_iters": 10,
                "fraction": stats(-0.35, lo), "comm_s": stats(1e-5, 1e-6),
                "comp_s": stats(1e-5, 1e-6), "total_s": stats(1e-5, 1e-6)}})
        };
        p.sections.insert_json("pingpong", overlap(-0.5)).unwrap();
        validate(&p).unwrap();
        p.sections.insert_json("pingpong", overlap(-0.2)).unwrap();
        let e = validate(&p).unwrap_err().to_string();
        assert!(
            e.contains("sections.pingpong.overlap.fraction.median"),
            "{e}"
        );
    }
}
