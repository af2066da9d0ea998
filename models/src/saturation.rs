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
//! from DRAM, on one core and on all of them, and [`fit_exponent`] solves
//! each window's measurement for k.

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
    /// The exponent k in [1, [`SHARP`]] with
    /// [`saturated_s`]`(core, bus, stream, k)` = measured, from the point
    /// estimates, by bisection in log k (the time falls as k grows, from
    /// T_core + T_bus − T_stream at k = 1 to max(T_core, T_bus)); 1 when
    /// the measurement is slower than the two adding, [`SHARP`] when it is
    /// no slower than the larger. `None` when the point cannot tell k:
    /// unless the all-core copy and the one-core lagged copy are both
    /// slower than the one-core copy in every pair (their intervals apart),
    /// T_bus^k − T_stream^k is a difference of noise, and so is k.
    pub fn exponent(&self) -> Option<f64> {
        let apart = |slower: &Estimate| slower.lo > self.stream_s.hi;
        if !apart(&self.bus_s) || !apart(&self.core_s) {
            return None;
        }
        let [stream_s, core_s, bus_s, measured_s] =
            [self.stream_s, self.core_s, self.bus_s, self.measured_s].map(|e| e.point);
        if ![stream_s, core_s, bus_s, measured_s]
            .iter()
            .all(|t| t.is_finite() && *t > 0.0)
        {
            return None;
        }
        let at = |k: f64| saturated_s(core_s, bus_s, stream_s, k);
        if measured_s >= at(1.0) {
            return Some(1.0);
        }
        if measured_s <= at(SHARP) {
            return Some(SHARP);
        }
        let (mut lo, mut hi) = (0.0_f64, SHARP.ln());
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if at(mid.exp()) > measured_s {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some((0.5 * (lo + hi)).exp())
    }
}

/// The knee's exponent from the windows' measurements: the median of the
/// points' exponents, the interval their range; `None` without an
/// informative point.
pub fn fit_exponent(points: &[KneeMeasurement]) -> Option<Estimate> {
    let mut ks: Vec<f64> = points
        .iter()
        .filter_map(KneeMeasurement::exponent)
        .collect();
    if ks.is_empty() {
        return None;
    }
    ks.sort_by(f64::total_cmp);
    let n = ks.len();
    let median = if n % 2 == 1 {
        ks[n / 2]
    } else {
        (ks[n / 2 - 1] * ks[n / 2]).sqrt()
    };
    Some(Estimate::new(median, ks[0], ks[n - 1]))
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
    fn uninformative_points_give_no_exponent() {
        let p = |stream_s, core_s, bus_s, measured_s| exact(stream_s, core_s, bus_s, measured_s);
        assert_eq!(p(0.5, 0.8, 0.45, 0.8).exponent(), None);
        assert_eq!(p(0.5, 0.5, 0.9, 0.9).exponent(), None);
        assert_eq!(p(0.5, 0.8, 0.9, 1.5).exponent(), Some(1.0));
        assert_eq!(p(0.5, 0.8, 0.9, 0.9).exponent(), Some(SHARP));
        assert_eq!(fit_exponent(&[p(0.5, 0.8, 0.45, 0.8)]), None);
        // An all-core copy whose pairs overlap the one-core copy's.
        let mut q = p(0.5, 0.8, 0.55, 0.9);
        assert!(q.exponent().is_some());
        q.stream_s = Estimate::new(0.5, 0.45, 0.56);
        assert_eq!(q.exponent(), None);
    }

    #[test]
    fn the_fit_is_the_median_point_with_their_range() {
        let point = |k: f64| exact(0.45, 0.8, 0.85, saturated_s(0.8, 0.85, 0.45, k));
        let e = fit_exponent(&[point(3.0), point(5.0), point(4.0)]).unwrap();
        assert!((e.point - 4.0).abs() < 1e-6, "{e:?}");
        assert!((e.lo - 3.0).abs() < 1e-6 && (e.hi - 5.0).abs() < 1e-6);
    }

    proptest! {
        #[test]
        fn the_exponent_is_recovered(
            stream in 0.2f64..1.0,
            core_over in 1.05f64..3.0,
            bus_over in 1.05f64..3.0,
            k in 1.2f64..40.0,
        ) {
            let (core, bus) = (stream * core_over, stream * bus_over);
            let measured = saturated_s(core, bus, stream, k);
            let p = exact(stream, core, bus, measured);
            let got = p.exponent().unwrap();
            // Recovered wherever the time still tells k apart.
            let back = saturated_s(core, bus, stream, got);
            prop_assert!((back - measured).abs() <= 1e-9 * measured);
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
