//! How a core's own time and the shared memory system's combine on many
//! cores: ECM's saturation with a calibrated knee (§4.4).
//!
//! On p cores a loop's time is bounded by each core's own time, T_core
//! (its transfers at one core's STREAM rate, T_stream, plus the in-core
//! work they do not overlap), and by the shared memory system's, T_bus
//! (the transfers of all cores at the all-core STREAM rate). ECM takes the
//! larger, T = max(T_core, T_bus). Near the knee, where the two are alike,
//! a loop runs slower than either: the cores' requests queue at the shared
//! memory while each core also has work of its own, and neither resource
//! stays busy all the time. With an exponent k,
//!
//! T^k = T_core^k + T_bus^k − T_stream^k,
//!
//! which is T_core on one core (T_bus = T_stream there), T_bus for a loop
//! that only streams (T_core = T_stream: the STREAM kernel that gave T_bus
//! is predicted as measured), T_bus plus the in-core work at k = 1 (the
//! two add) and max(T_core, T_bus) as k → ∞. `calibrate` measures k with
//! a copy that reads lines again from a reuse window beside its streams
//! from DRAM, on one core and on all of them, and [`fit_exponent`] fits k
//! to the windows' measurements.

use argmin::core::{CostFunction, Error as ArgminError, Executor};
use argmin::solver::brent::BrentOpt;

use crate::fit::t_quantile_95;
use crate::Estimate;

/// The exponent past which the knee is taken as sharp: at T_core = T_bus
/// the time exceeds the larger by 2^(1/64) − 1, about 1%.
pub const SHARP: f64 = 64.0;

/// T = (T_core^k + max(0, T_bus^k − T_stream^k))^(1/k): the loop's time
/// from one core's time `core_s`, the shared memory system's `bus_s` and
/// one core's streams alone `stream_s`, with the knee's exponent `k`
/// (≥ 1). Where the all-core streams are no slower than one core's the
/// shared system never binds, and T = T_core.
pub fn saturated_s(core_s: f64, bus_s: f64, stream_s: f64, k: f64) -> f64 {
    let scale = core_s.max(bus_s);
    if scale <= 0.0 || !scale.is_finite() {
        return core_s.max(bus_s);
    }
    let pow = |t: f64| (t / scale).powf(k);
    scale * (pow(core_s) + (pow(bus_s) - pow(stream_s)).max(0.0)).powf(1.0 / k)
}

/// One window's measurement, each a time per element of one thread with
/// its interval (the range over the pairs): the copy and the lagged copy
/// on one core (`stream_s`, `core_s`), and the same on all cores
/// (`bus_s`, `measured_s`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeMeasurement {
    pub stream_s: Estimate,
    pub core_s: Estimate,
    pub bus_s: Estimate,
    pub measured_s: Estimate,
}

impl KneeMeasurement {
    /// Whether the point can tell k: only when the all-core copy and the
    /// one-core lagged copy are both slower than the one-core copy in
    /// every pair (their intervals apart) is T_bus^k − T_stream^k more
    /// than a difference of noise.
    pub fn informative(&self) -> bool {
        let apart = |slower: &Estimate| slower.lo > self.stream_s.hi;
        let positive = [self.stream_s, self.core_s, self.bus_s, self.measured_s]
            .iter()
            .all(|e| e.point.is_finite() && e.point > 0.0);
        positive && apart(&self.bus_s) && apart(&self.core_s)
    }

    /// ln(measured / [`saturated_s`]) at exponent `k`.
    fn residual(&self, k: f64) -> f64 {
        let at = saturated_s(self.core_s.point, self.bus_s.point, self.stream_s.point, k);
        (self.measured_s.point / at).ln()
    }
}

/// The sum of squared log residuals of `points` at k = e^u.
struct Residuals<'a>(&'a [KneeMeasurement]);

impl Residuals<'_> {
    fn at(&self, u: f64) -> f64 {
        self.0.iter().map(|p| p.residual(u.exp()).powi(2)).sum()
    }
}

impl CostFunction for Residuals<'_> {
    type Param = f64;
    type Output = f64;

    fn cost(&self, u: &f64) -> Result<f64, ArgminError> {
        Ok(self.at(*u))
    }
}

/// Steps of ln k over [1, [`SHARP`]] on which the interval is read.
const INTERVAL_STEPS: usize = 256;

/// The knee's exponent fitted to the windows' measurements: the k in
/// [1, [`SHARP`]] that minimises Σ (ln T − ln T_k)² over the informative
/// points ([`KneeMeasurement::informative`]), by Brent's method in ln k.
/// A point near T_bus = T_stream barely moves with k, so it barely
/// weighs. The interval is the profile likelihood's for one parameter:
/// the k whose sum stays within S_min·(1 + t²/(n − 1)), t the 97.5%
/// quantile of Student's t with n − 1 degrees of freedom. `None` with
/// fewer than two informative points (a fit needs n ≥ p + 1).
pub fn fit_exponent(points: &[KneeMeasurement]) -> Option<Estimate> {
    let pts: Vec<KneeMeasurement> = points.iter().copied().filter(|p| p.informative()).collect();
    let n = pts.len();
    if n < 2 {
        return None;
    }
    let top = SHARP.ln();
    let residuals = Residuals(&pts);
    let best_u = Executor::new(
        Residuals(&pts),
        BrentOpt::new(0.0, top).set_tolerance(1e-10, 1e-12),
    )
    .configure(|state| state.max_iters(200))
    .run()
    .ok()
    .and_then(|r| r.state().best_param)?;
    // Brent's method keeps to the inside of its bracket; an end can be
    // the minimum.
    let best_u = [0.0, best_u, top]
        .into_iter()
        .min_by(|a, b| residuals.at(*a).total_cmp(&residuals.at(*b)))?;
    let t = t_quantile_95(n - 1);
    let limit = residuals.at(best_u) * (1.0 + t * t / (n - 1) as f64);
    let within: Vec<f64> = (0..=INTERVAL_STEPS)
        .map(|i| top * i as f64 / INTERVAL_STEPS as f64)
        .filter(|u| residuals.at(*u) <= limit)
        .collect();
    let lo = within.first().copied().unwrap_or(best_u).min(best_u);
    let hi = within.last().copied().unwrap_or(best_u).max(best_u);
    Some(Estimate::new(best_u.exp(), lo.exp(), hi.exp()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A measurement whose pairs agreed exactly.
    fn exact(stream_s: f64, core_s: f64, bus_s: f64, measured_s: f64) -> KneeMeasurement {
        KneeMeasurement {
            stream_s: Estimate::exact(stream_s),
            core_s: Estimate::exact(core_s),
            bus_s: Estimate::exact(bus_s),
            measured_s: Estimate::exact(measured_s),
        }
    }

    #[test]
    fn the_limits_are_the_classic_models() {
        // One core: T_bus = T_stream, so T = T_core at any k.
        assert!((saturated_s(0.8, 0.5, 0.5, 3.0) - 0.8).abs() < 1e-12);
        // Only streams: T_core = T_stream, so T = T_bus.
        assert!((saturated_s(0.5, 0.9, 0.5, 3.0) - 0.9).abs() < 1e-12);
        // k = 1: the in-core work adds to the bus time.
        assert!((saturated_s(0.8, 0.9, 0.5, 1.0) - 1.2).abs() < 1e-12);
        // A sharp knee: the larger.
        assert!((saturated_s(0.8, 0.9, 0.5, 1e4) - 0.9).abs() < 1e-3);
        // The all-core streams no slower than one core's: T_core.
        assert!((saturated_s(0.8, 0.4, 0.5, 3.0) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn only_points_whose_copies_are_apart_inform_the_fit() {
        assert!(exact(0.5, 0.8, 0.9, 0.95).informative());
        // The all-core copy no slower than one core's.
        assert!(!exact(0.5, 0.8, 0.45, 0.8).informative());
        // No window cost.
        assert!(!exact(0.5, 0.5, 0.9, 0.9).informative());
        // An all-core copy whose pairs overlap the one-core copy's.
        let mut q = exact(0.5, 0.8, 0.55, 0.9);
        q.stream_s = Estimate::new(0.5, 0.45, 0.56);
        assert!(!q.informative());
        // A fit needs two informative points.
        assert_eq!(fit_exponent(&[exact(0.5, 0.8, 0.9, 0.95), q]), None);
    }

    #[test]
    fn the_fit_recovers_a_common_exponent_and_narrows_with_agreeing_points() {
        let point =
            |core: f64, bus: f64, k: f64| exact(0.45, core, bus, saturated_s(core, bus, 0.45, k));
        let e = fit_exponent(&[point(0.8, 0.85, 3.0), point(0.7, 0.9, 3.0)]).unwrap();
        assert!((e.point - 3.0).abs() < 1e-3, "{e:?}");
        // The points disagree: the interval spans both, the point between.
        let e = fit_exponent(&[
            point(0.8, 0.85, 2.0),
            point(0.8, 0.86, 6.0),
            point(0.7, 0.9, 4.0),
        ])
        .unwrap();
        assert!(
            e.lo < 2.5 && e.hi > 5.0 && e.point > 2.0 && e.point < 6.0,
            "{e:?}"
        );
        // Slower than the two adding: k = 1; no slower than the larger:
        // the sharp end.
        let e = fit_exponent(&[exact(0.5, 0.8, 0.9, 1.5), exact(0.5, 0.7, 0.9, 1.4)]).unwrap();
        assert!((e.point - 1.0).abs() < 1e-6, "{e:?}");
        let e = fit_exponent(&[exact(0.5, 0.8, 0.9, 0.9), exact(0.5, 0.7, 0.9, 0.9)]).unwrap();
        assert!(e.point > 0.9 * SHARP, "{e:?}");
    }

    proptest! {
        #[test]
        fn the_exponent_is_recovered(
            stream in 0.2f64..1.0,
            core_over in 1.05f64..3.0,
            bus_over in 1.05f64..3.0,
            spread in 1.1f64..2.0,
            k in 1.2f64..40.0,
        ) {
            let (core, bus) = (stream * core_over, stream * bus_over);
            let p = |core: f64| exact(stream, core, bus, saturated_s(core, bus, stream, k));
            let got = fit_exponent(&[p(core), p(core * spread)]).unwrap();
            // Recovered wherever the time still tells k apart.
            for c in [core, core * spread] {
                let back = saturated_s(c, bus, stream, got.point);
                let want = saturated_s(c, bus, stream, k);
                prop_assert!((back - want).abs() <= 1e-6 * want);
            }
        }

        #[test]
        fn the_time_lies_between_the_larger_and_the_sum(
            stream in 0.2f64..1.0,
            core_over in 1.0f64..3.0,
            bus_over in 1.0f64..3.0,
            k in 1.0f64..64.0,
        ) {
            let (core, bus) = (stream * core_over, stream * bus_over);
            let t = saturated_s(core, bus, stream, k);
            prop_assert!(t >= core.max(bus) * (1.0 - 1e-12));
            prop_assert!(t <= (core + bus - stream) * (1.0 + 1e-12));
        }
    }
}
