//! The time a memory level takes for a loop's traffic, from the STREAM
//! kernels measured at the same working set and thread count (§2.5, §4.3,
//! §4.4).
//!
//! One "bandwidth" per level cannot serve loops whose mixes of loads and
//! stores differ: on some machines a copy (one load, one store) runs at the
//! same elements per second as a triad (two loads, one store), as if the
//! stores set the pace; on others every byte on the bus counts alike. The
//! model has three roofs, each the highest rate any measured kernel reached
//! on that resource:
//!
//! - reads: B_r = max_k L_k / t_k (the loads' concurrency, Little's law §4.3),
//! - writes: B_w = max_k S_k / t_k (write-back and write-combining),
//! - the bus: B_bus = max_k (L_k + A_k + S_k) / t_k (all bytes moved,
//!   allocate reads A included),
//!
//! and a loop's traffic (L, S, A) takes
//! T = max(L / B_r, S / B_w, (L + A + S) / B_bus),
//! the Roofline's max over resources applied inside the memory system. Each
//! roof is a rate that was reached, so T never undercuts a measured kernel
//! of the same mix, and it reproduces every measured kernel whose own
//! binding resource set one of the maxima.

use crate::kernel::Traffic;
use serde::Serialize;

/// One measured kernel: bytes per element it loads, stores and allocates,
/// and its time per element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixSample {
    pub load_bytes: f64,
    pub store_bytes: f64,
    pub allocate_bytes: f64,
    pub seconds: f64,
}

/// The three roofs of a memory level for one thread count, bytes/s (all
/// threads together).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[allow(non_snake_case)]
pub struct TrafficRoofs {
    pub read_Bps: f64,
    pub write_Bps: f64,
    pub bus_Bps: f64,
}

/// Which roof a traffic time came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Roof {
    Read,
    Write,
    Bus,
}

impl Roof {
    pub fn name(self) -> &'static str {
        match self {
            Roof::Read => "read",
            Roof::Write => "write",
            Roof::Bus => "bus",
        }
    }
}

impl TrafficRoofs {
    /// The highest rates the samples reached; `None` without a usable
    /// sample. A roof no sample exercised (no stores measured) is infinite:
    /// nothing measured bounds it.
    pub fn from_samples(samples: &[MixSample]) -> Option<TrafficRoofs> {
        let usable: Vec<&MixSample> = samples
            .iter()
            .filter(|s| s.seconds.is_finite() && s.seconds > 0.0)
            .collect();
        if usable.is_empty() {
            return None;
        }
        let best = |f: &dyn Fn(&MixSample) -> f64| {
            let r = usable.iter().map(|s| f(s) / s.seconds).fold(0.0, f64::max);
            if r > 0.0 {
                r
            } else {
                f64::INFINITY
            }
        };
        Some(TrafficRoofs {
            read_Bps: best(&|s| s.load_bytes),
            write_Bps: best(&|s| s.store_bytes),
            bus_Bps: best(&|s| s.load_bytes + s.allocate_bytes + s.store_bytes),
        })
    }

    /// T = max(L / B_r, S / B_w, (L + A + S) / B_bus), and the roof that
    /// binds.
    pub fn time_s(&self, t: &Traffic) -> (f64, Roof) {
        [
            (t.load_bytes / self.read_Bps, Roof::Read),
            (t.store_bytes / self.write_Bps, Roof::Write),
            (t.bus_bytes() / self.bus_Bps, Roof::Bus),
        ]
        .into_iter()
        .map(|(s, r)| (if s.is_nan() { 0.0 } else { s }, r))
        .fold((0.0, Roof::Bus), |a, b| if b.0 > a.0 { b } else { a })
    }

    /// Each roof scaled by `k` (an interval end of the measurements).
    pub fn scaled(self, k: f64) -> TrafficRoofs {
        TrafficRoofs {
            read_Bps: self.read_Bps * k,
            write_Bps: self.write_Bps * k,
            bus_Bps: self.bus_Bps * k,
        }
    }
}

/// The roofs at working set `x` on a curve of (working set, roofs) sorted by
/// working set: each roof linear in log-size between the two nearest
/// points, the end points' roofs outside the curve.
pub fn roofs_at(curve: &[(f64, TrafficRoofs)], x: f64) -> Option<TrafficRoofs> {
    let (first, last) = (curve.first()?, curve.last()?);
    if x <= first.0 {
        return Some(first.1);
    }
    if x >= last.0 {
        return Some(last.1);
    }
    let k = curve.partition_point(|p| p.0 < x).clamp(1, curve.len() - 1);
    let ((x0, a), (x1, b)) = (curve[k - 1], curve[k]);
    let f = if x1 > x0 {
        (x.ln() - x0.ln()) / (x1.ln() - x0.ln())
    } else {
        1.0
    };
    // Interpolate the time per byte (the inverse rate), so an infinite roof
    // stays infinite only where both ends are.
    let mix = |p: f64, q: f64| 1.0 / ((1.0 - f) / p + f / q);
    Some(TrafficRoofs {
        read_Bps: mix(a.read_Bps, b.read_Bps),
        write_Bps: mix(a.write_Bps, b.write_Bps),
        bus_Bps: mix(a.bus_Bps, b.bus_Bps),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(l: f64, s: f64, a: f64, ns: f64) -> MixSample {
        MixSample {
            load_bytes: l,
            store_bytes: s,
            allocate_bytes: a,
            seconds: ns * 1e-9,
        }
    }

    /// A machine whose stores set the pace: copy and triad at the same
    /// time per element, loads alone faster.
    #[test]
    fn store_bound_machine_reproduces_its_kernels() {
        let samples = [
            sample(8.0, 0.0, 0.0, 0.27),  // load
            sample(8.0, 8.0, 8.0, 0.62),  // copy
            sample(16.0, 8.0, 8.0, 0.62), // triad
        ];
        let r = TrafficRoofs::from_samples(&samples).unwrap();
        for s in &samples {
            let t = Traffic {
                load_bytes: s.load_bytes,
                store_bytes: s.store_bytes,
                allocate_bytes: s.allocate_bytes,
            };
            let (secs, _) = r.time_s(&t);
            assert!((secs - s.seconds).abs() < 1e-15, "{secs} vs {}", s.seconds);
        }
        // Stores bind the triad here.
        let triad = Traffic::streaming(16.0, 8.0);
        assert_eq!(r.time_s(&triad).1, Roof::Write);
    }

    /// A machine where every byte on the bus counts alike.
    #[test]
    fn bus_bound_machine() {
        let samples = [
            sample(8.0, 0.0, 0.0, 0.52),
            sample(8.0, 8.0, 8.0, 1.12),
            sample(16.0, 8.0, 8.0, 1.51),
        ];
        let r = TrafficRoofs::from_samples(&samples).unwrap();
        let (t, roof) = r.time_s(&Traffic::streaming(16.0, 8.0));
        assert_eq!(roof, Roof::Bus);
        assert!((t - 1.5e-9).abs() < 0.02e-9, "{t}");
        // Loads alone: the read roof.
        let (t, roof) = r.time_s(&Traffic::streaming(8.0, 0.0));
        assert_eq!(roof, Roof::Read);
        assert!((t - 0.52e-9).abs() < 1e-15);
    }

    #[test]
    fn unmeasured_roofs_do_not_bind() {
        let r = TrafficRoofs::from_samples(&[sample(8.0, 0.0, 0.0, 1.0)]).unwrap();
        assert!(r.write_Bps.is_infinite());
        let (t, _) = r.time_s(&Traffic::streaming(8.0, 8.0));
        assert!(t.is_finite());
        assert!(TrafficRoofs::from_samples(&[]).is_none());
    }

    #[test]
    fn interpolation_between_sizes() {
        let roof = |b| TrafficRoofs {
            read_Bps: b,
            write_Bps: b,
            bus_Bps: b,
        };
        let curve = [(1e3, roof(100.0)), (1e5, roof(50.0))];
        assert_eq!(roofs_at(&curve, 10.0).unwrap().bus_Bps, 100.0);
        assert_eq!(roofs_at(&curve, 1e7).unwrap().bus_Bps, 50.0);
        // Halfway in log-size: the harmonic mean of the rates.
        let mid = roofs_at(&curve, 1e4).unwrap().bus_Bps;
        assert!((mid - 1.0 / (0.5 / 100.0 + 0.5 / 50.0)).abs() < 1e-9);
    }
}
