//! The alpha–beta model fitted per protocol regime (lecture §2.2, §4.1).
//!
//! An MPI library sends small messages eagerly (copied into a buffer the
//! receiver drains) and large ones by rendezvous (a handshake, then one copy
//! or a zero-copy transfer), and the memory hierarchy adds its own kinks
//! (a message larger than the last-level cache copies at DRAM speed). One
//! straight line T(n) = T0 + n/B through all sizes is then wrong at both
//! ends. [`fit_regimes`] fits independent lines with the segmented fit of
//! `models::fit` (breakpoints placed exactly by dynamic programming, their
//! number chosen by a penalised BIC), weighting each point by 1/t² so that
//! relative errors count and the 1 B…16 MiB decades weigh alike.
//!
//! Per regime: T0 = intercept, B = 1/slope, both with 95% intervals, R², and
//! the sizes the regime covers. The headline pair is the small-message T0
//! (intercept of the first regime) and the large-message B (1/slope of the
//! last regime).

use models::fit::{relative_weights, segmented, FitError, SegmentFit, SegmentedOptions};
use models::profile::NetworkRegime;
use models::Estimate;
use serde::Serialize;

/// The fewest sizes a regime may hold: with 4, a line keeps two degrees of
/// freedom for its intervals, and a few noisy sizes at the end of the sweep
/// cannot form a regime of their own.
pub const MIN_POINTS: usize = 4;

/// One mode's sweep fitted regime by regime.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegimeFit {
    /// The regimes in increasing size.
    pub regimes: Vec<NetworkRegime>,
    /// Points in each regime.
    pub points_per_regime: Vec<usize>,
    /// Breakpoints between regimes, bytes (midpoints of the gaps).
    pub breakpoints_bytes: Vec<f64>,
    /// The penalised BIC of 1, 2, … regimes (the minimum was chosen).
    pub criterion: Vec<f64>,
    /// Caveats on individual regimes.
    pub notes: Vec<String>,
}

/// B = 1/slope with its interval. `f64::MAX` stands for "no upper bound"
/// (JSON has no infinity): when the slope's interval reaches 0 the data
/// cannot rule out an unlimited bandwidth, which is the normal case for a
/// regime of small messages whose time is all start-up.
pub fn bandwidth_from_slope(slope: &Estimate) -> Estimate {
    let inv = |s: f64| if s > 0.0 { 1.0 / s } else { f64::MAX };
    Estimate::new(inv(slope.point), inv(slope.hi), inv(slope.lo))
}

/// Fits up to `max_regimes` lines to one-way times `one_way_s` against
/// message sizes `bytes`.
///
/// # Errors
/// The fit's refusals: fewer than 3 points, a zero time, non-finite data.
pub fn fit_regimes(
    bytes: &[f64],
    one_way_s: &[f64],
    max_regimes: usize,
) -> Result<RegimeFit, FitError> {
    let w = relative_weights(one_way_s)?;
    let options = SegmentedOptions {
        min_points_per_segment: MIN_POINTS,
        ..SegmentedOptions::lines(max_regimes.max(1))
    };
    let fit = segmented(bytes, one_way_s, Some(&w), &options)?;
    let mut regimes = Vec::new();
    let mut points_per_regime = Vec::new();
    let mut notes = Vec::new();
    for (k, seg) in fit.segments.iter().enumerate() {
        let SegmentFit::Line(line) = &seg.fit else {
            unreachable!("a fit of lines has line segments")
        };
        let bw = bandwidth_from_slope(&line.slope);
        let range = format!("{}..{} B", seg.x_min, seg.x_max);
        if line.intercept.point < 0.0 {
            notes.push(format!(
                "regime {} ({range}): the fitted T0 is negative ({:.3e} s); the line only describes times inside its size range",
                k + 1,
                line.intercept.point
            ));
        }
        if line.slope.lo <= 0.0 {
            notes.push(format!(
                "regime {} ({range}): the time hardly grows with size, so B is not resolved (its upper bound is open); T0 describes this regime",
                k + 1
            ));
        }
        regimes.push(NetworkRegime {
            from_bytes: seg.x_min,
            to_bytes: seg.x_max,
            t0_s: line.intercept,
            bandwidth_Bps: bw,
            r_squared: line.r_squared,
        });
        points_per_regime.push(seg.len());
    }
    Ok(RegimeFit {
        regimes,
        points_per_regime,
        breakpoints_bytes: fit.breakpoints,
        criterion: fit.criterion,
        notes,
    })
}

/// The headline pair of a fit.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    /// T0 of the first regime (small messages), seconds.
    pub t0_s: Estimate,
    /// B of the last regime whose bandwidth is resolved (large messages), bytes/s.
    pub bandwidth_Bps: Estimate,
    /// Index of the regime B comes from.
    pub bandwidth_regime: usize,
    /// Set when B could not come from the last regime.
    pub note: Option<String>,
}

/// The headline pair: the small-message T0 (first regime) and the
/// large-message B (the last regime, or the last one before it whose
/// bandwidth is resolved, with a note).
///
/// # Errors
/// A sentence saying what is wrong when the first regime's T0 is negative
/// or no regime resolves a bandwidth.
pub fn headline(fit: &RegimeFit) -> Result<Headline, String> {
    let Some(first) = fit.regimes.first() else {
        return Err("no regime was fitted".into());
    };
    if first.t0_s.point < 0.0 {
        return Err(format!(
            "the small-message latency T0 fitted negative ({:.3e} s), which is not physical; measure again with more samples (the machine may be noisy)",
            first.t0_s.point
        ));
    }
    let last = fit.regimes.len() - 1;
    let Some(k) = (0..=last)
        .rev()
        .find(|&k| fit.regimes[k].bandwidth_Bps.hi != f64::MAX)
    else {
        return Err(
            "the time does not grow clearly with the message size in any regime, so no bandwidth is resolved; raise the largest size or the samples".into(),
        );
    };
    let r = &fit.regimes[last];
    let note = (k != last).then(|| {
        format!(
            "the bandwidth of the largest messages ({}..{} B) is not resolved; the headline B comes from regime {} ({}..{} B)",
            r.from_bytes,
            r.to_bytes,
            k + 1,
            fit.regimes[k].from_bytes,
            fit.regimes[k].to_bytes
        )
    });
    Ok(Headline {
        t0_s: first.t0_s,
        bandwidth_Bps: fit.regimes[k].bandwidth_Bps,
        bandwidth_regime: k,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pingpong::sizes::powers_of_two;

    /// A deterministic ±`amp` relative jitter.
    fn jitter(i: usize, amp: f64) -> f64 {
        let x = ((i as u64).wrapping_mul(2654435761) % 1000) as f64 / 1000.0;
        1.0 + amp * (2.0 * x - 1.0)
    }

    /// Eager up to 2 KiB (T0 = 0.2 µs, B = 5 GB/s), rendezvous above
    /// (T0 = 4 µs, B = 10 GB/s), with 1% noise.
    fn synthetic() -> (Vec<f64>, Vec<f64>) {
        let x: Vec<f64> = powers_of_two(16 << 20).iter().map(|&b| b as f64).collect();
        let y = x
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let t = if n <= 2048.0 {
                    0.2e-6 + n / 5e9
                } else {
                    4e-6 + n / 10e9
                };
                t * jitter(i, 0.01)
            })
            .collect();
        (x, y)
    }

    #[test]
    fn finds_eager_and_rendezvous() {
        let (x, y) = synthetic();
        let fit = fit_regimes(&x, &y, 4).unwrap();
        assert_eq!(fit.regimes.len(), 2, "{:?}", fit.breakpoints_bytes);
        assert!(fit.breakpoints_bytes[0] > 2048.0 && fit.breakpoints_bytes[0] < 4096.0);
        let h = headline(&fit).unwrap();
        let (t0, bw) = (h.t0_s, h.bandwidth_Bps);
        assert!(h.note.is_none());
        assert!((t0.point - 0.2e-6).abs() < 0.02e-6, "{t0:?}");
        assert!(t0.lo <= t0.point && t0.point <= t0.hi);
        assert!((bw.point - 10e9).abs() < 0.3e9, "{bw:?}");
        assert!(fit.regimes[1].r_squared > 0.99);
        assert_eq!(fit.regimes[0].from_bytes, 1.0);
        assert_eq!(fit.regimes[1].to_bytes, (16 << 20) as f64);
        assert_eq!(fit.points_per_regime.iter().sum::<usize>(), x.len());
    }

    #[test]
    fn one_line_stays_one_regime() {
        let x: Vec<f64> = powers_of_two(1 << 20).iter().map(|&b| b as f64).collect();
        let y: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, n)| (1e-6 + n / 2e9) * jitter(i, 0.01))
            .collect();
        let fit = fit_regimes(&x, &y, 4).unwrap();
        assert_eq!(fit.regimes.len(), 1);
    }

    #[test]
    fn bandwidth_interval_is_open_when_slope_may_be_zero() {
        let b = bandwidth_from_slope(&Estimate::new(1e-10, -1e-11, 2e-10));
        assert_eq!(b.point, 1e10);
        assert_eq!(b.lo, 5e9);
        assert_eq!(b.hi, f64::MAX);
        let flat = bandwidth_from_slope(&Estimate::new(-1e-12, -2e-12, 1e-12));
        assert_eq!(flat.point, f64::MAX);
        assert_eq!(flat.lo, 1e12);
    }

    #[test]
    fn headline_falls_back_to_the_last_resolved_regime() {
        let (x, y) = synthetic();
        let mut fit = fit_regimes(&x, &y, 4).unwrap();
        let good = fit.regimes[1].bandwidth_Bps;
        let mut flat = fit.regimes[1].clone();
        flat.bandwidth_Bps = Estimate::new(f64::MAX, 1e9, f64::MAX);
        fit.regimes.push(flat);
        let h = headline(&fit).unwrap();
        assert_eq!((h.bandwidth_Bps, h.bandwidth_regime), (good, 1));
        assert!(h.note.unwrap().contains("not resolved"));
    }

    #[test]
    fn headline_refuses_flat_large_messages() {
        let (x, _) = synthetic();
        // Times that shrink with size: no positive bandwidth fits.
        let y: Vec<f64> = x.iter().map(|n| 1e-3 - n * 1e-12).collect();
        let fit = fit_regimes(&x, &y, 1).unwrap();
        let e = headline(&fit).unwrap_err();
        assert!(e.contains("does not grow clearly"), "{e}");
    }
}
