//! Validation of a machine profile when it is loaded: every figure a
//! prediction may read must be a finite number, the measured quantities
//! positive, and every interval must hold its point (lo ≤ point ≤ hi).
//! A profile that fails is refused with one line naming the field, so no
//! model ever divides by a zero throughput or a negative bandwidth.

use serde_json::Value;

use crate::profile::{Profile, ProfileError};
use crate::Estimate;

/// Checks every figure of `p`.
///
/// - `summary.*`, `provenance.clock_hz`, each level's latency and bandwidths,
///   each ceiling's FLOP/s and each network regime's B: finite, > 0,
///   lo ≤ point ≤ hi; a regime's T0 (a fitted intercept, negative in some
///   large-message regimes) finite and ordered, with T0 + n/B > 0 from the
///   regime's first size;
/// - `network.overlap_fraction`: in [0, 1];
/// - `sections`: every number finite; every sample (`median`, `ci_lo`,
///   `ci_hi`) positive (signed for fractions, errors and ratios) with its
///   interval around it; every estimate
///   (`point`, `lo`, `hi`) ordered (fitted intercepts there may be
///   negative); every bare `*_Bps`, `*_flops` or `*_hz` figure positive.
///
/// # Errors
/// [`ProfileError::Invalid`] naming the first field that fails.
pub fn validate(p: &Profile) -> Result<(), ProfileError> {
    let s = &p.summary;
    let summary = [
        ("stream_triad_Bps", s.stream_triad_Bps),
        ("stream_triad_1t_Bps", s.stream_triad_1t_Bps),
        ("peak_flops_f64", s.peak_flops_f64),
        ("peak_flops_f64_1t", s.peak_flops_f64_1t),
        ("l1_latency_s", s.l1_latency_s),
        ("dram_latency_s", s.dram_latency_s),
        ("core_to_core_latency_s", s.core_to_core_latency_s),
        ("t_crit_s", s.t_crit_s),
        ("mpi_t0_s", s.mpi_t0_s),
        ("mpi_bandwidth_Bps", s.mpi_bandwidth_Bps),
    ];
    for (key, v) in summary {
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
        for (i, r) in n.regimes.iter().enumerate() {
            let at = format!("network.regimes[{i}]");
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
    for (name, v) in &p.sections {
        section(&format!("sections.{name}"), v)?;
    }
    Ok(())
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

/// Whether the sample at `at` is a signed, dimensionless quantity (an
/// overlap fraction, a model error, a ratio), which may be negative as
/// measured: the share of a message hidden behind computation is below
/// zero when the non-blocking exchange was the slower one.
fn signed(at: &str) -> bool {
    let key = at.rsplit('.').next().unwrap_or(at);
    ["fraction", "error", "ratio"]
        .iter()
        .any(|w| key.contains(w))
}

/// Walks a section of raw results (see [`validate`]).
fn section(at: &str, v: &Value) -> Result<(), ProfileError> {
    match v {
        Value::Object(m) => {
            let num = |k: &str| m.get(k).and_then(Value::as_f64);
            if let (Some(med), Some(lo), Some(hi)) = (num("median"), num("ci_lo"), num("ci_hi")) {
                interval(&format!("{at}.median"), med, lo, hi, !signed(at))?;
            }
            if let (Some(pt), Some(lo), Some(hi)) = (num("point"), num("lo"), num("hi")) {
                interval(&format!("{at}.point"), pt, lo, hi, false)?;
            }
            for (k, x) in m {
                let field = format!("{at}.{k}");
                if let Some(f) = x.as_f64() {
                    let rate = [".", "_"].iter().any(|sep| {
                        ["Bps", "flops", "hz"]
                            .iter()
                            .any(|u| k.ends_with(&format!("{sep}{u}")) || k == u)
                    });
                    if rate {
                        positive(&field, f)?;
                    } else {
                        finite(&field, f)?;
                    }
                }
                section(&field, x)?;
            }
            Ok(())
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| section(&format!("{at}[{i}]"), x)),
        _ => Ok(()),
    }
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
        p.sections.insert(
            "lock".into(),
            serde_json::json!({"kinds": [{"kind": "mutex", "points": [
                {"threads": 2, "throughput_ops": {"median": 5e6, "ci_lo": 4e6, "ci_hi": 6e6}}
            ]}], "t_work_s": 0.0, "fit": {"t0_s": {"point": -1e-7, "lo": -2e-7, "hi": 1e-7}}}),
        );
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
        p.sections.get_mut("lock").unwrap()["kinds"][0]["points"][0]["throughput_ops"] =
            serde_json::json!({"median": 0.0, "ci_lo": 0.0, "ci_hi": 0.0});
        let e = validate(&p).unwrap_err().to_string();
        assert!(
            e.contains("sections.lock.kinds[0].points[0].throughput_ops.median"),
            "{e}"
        );
        let mut p = good();
        p.sections.insert(
            "stream".into(),
            serde_json::json!({"dram": [{"bandwidth_write_allocate_Bps": -3.0}]}),
        );
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
        });
        validate(&p).unwrap();
        // 881744 B at 6.6 GB/s take 134 µs: an intercept of -200 µs makes
        // the line negative there.
        p.network.as_mut().unwrap().regimes[0] = regime(-2e-4);
        let e = validate(&p).unwrap_err().to_string();
        assert!(e.contains("network.regimes[0].t0_s"), "{e}");
    }

    #[test]
    fn a_measured_overlap_fraction_may_be_negative() {
        let mut p = good();
        p.sections.insert(
            "pingpong".into(),
            serde_json::json!({"overlap": {"fraction": {"median": -0.35, "ci_lo": -0.5, "ci_hi": 0.1}}}),
        );
        validate(&p).unwrap();
        p.sections.get_mut("pingpong").unwrap()["overlap"]["fraction"]["ci_lo"] =
            serde_json::json!(-0.2);
        let e = validate(&p).unwrap_err().to_string();
        assert!(
            e.contains("sections.pingpong.overlap.fraction.median"),
            "{e}"
        );
    }
}
