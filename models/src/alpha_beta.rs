//! The alpha-beta (latency-bandwidth) model of one communication, and its
//! refinements (lecture §2.1, §2.2, §4.1).

use crate::error::{count, non_negative, positive, ModelError, Result};

/// A link or transport described by its start-up time and bandwidth:
/// T(n) = T0 + n/B (§2.2).
///
/// ```
/// use models::alpha_beta::AlphaBeta;
/// let net = AlphaBeta::new(2e-6, 6.4e9).unwrap();
/// assert!((net.time_s(32768.0) - 7.12e-6).abs() < 1e-12);
/// assert_eq!(net.half_peak_bytes(), 12800.0);
/// ```
#[allow(non_snake_case)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlphaBeta {
    /// T0, start-up latency: the time until the first bit arrives, seconds.
    pub t0_s: f64,
    /// B, link bandwidth, bytes per second.
    pub bandwidth_Bps: f64,
}

impl AlphaBeta {
    /// Checks T0 ≥ 0 and B > 0.
    #[allow(non_snake_case)]
    pub fn new(t0_s: f64, bandwidth_Bps: f64) -> Result<Self> {
        Ok(Self {
            t0_s: non_negative("t0", t0_s)?,
            bandwidth_Bps: positive("bandwidth", bandwidth_Bps)?,
        })
    }

    /// One protocol regime of a fitted network: the line T(n) = T0 + n/B
    /// that holds for messages of `from_bytes` and more. Its T0 is the
    /// line's intercept, not a start-up one could measure, and a
    /// large-message regime can have it negative (the protocol's fixed cost
    /// drops as messages grow); the line is refused only when it gives no
    /// positive time from `from_bytes` on. B > 0.
    #[allow(non_snake_case)]
    pub fn regime(t0_s: f64, bandwidth_Bps: f64, from_bytes: f64) -> Result<Self> {
        let bandwidth_Bps = positive("bandwidth", bandwidth_Bps)?;
        let from = non_negative("regime start", from_bytes)?;
        if !t0_s.is_finite() || t0_s + from / bandwidth_Bps <= 0.0 {
            return Err(ModelError::OutOfRange {
                name: "t0",
                value: t0_s,
                accepted: "an intercept giving a positive time at the regime's first size",
            });
        }
        Ok(Self {
            t0_s,
            bandwidth_Bps,
        })
    }

    /// T(n) = T0 + n/B: time of one message of `bytes` bytes, seconds (§2.2).
    pub fn time_s(&self, bytes: f64) -> f64 {
        self.t0_s + bytes / self.bandwidth_Bps
    }

    /// BW_eff(n) = n / T(n) = B / (1 + T0·B/n), bytes/s (§4.1). Always below B
    /// when T0 > 0.
    #[allow(non_snake_case)]
    pub fn effective_bandwidth_Bps(&self, bytes: f64) -> f64 {
        bytes / self.time_s(bytes)
    }

    /// BW_eff(n) / B = 1 / (1 + T0·B/n), the fraction of the link's peak a
    /// message of `bytes` reaches (§4.1).
    pub fn fraction_of_peak(&self, bytes: f64) -> f64 {
        self.effective_bandwidth_Bps(bytes) / self.bandwidth_Bps
    }

    /// n½ = T0·B: the message size at which half the peak bandwidth is
    /// reached, bytes (§2.2, §4.1).
    pub fn half_peak_bytes(&self) -> f64 {
        self.t0_s * self.bandwidth_Bps
    }

    /// `k` messages of `bytes_each` bytes sent one after another, none
    /// overlapped: k·(T0 + n/B), seconds (§4.1, "send fewer, larger messages").
    pub fn sequential_messages_time_s(&self, k: f64, bytes_each: f64) -> Result<f64> {
        Ok(count("messages", k)? * self.time_s(bytes_each))
    }

    /// The gain of coalescing: time of `k` separate messages that carry
    /// `total_bytes` between them, over the time of one message carrying it
    /// all: (k·T0 + n/B) / (T0 + n/B).
    pub fn coalescing_gain(&self, k: f64, total_bytes: f64) -> Result<f64> {
        let k = count("messages", k)?;
        Ok((k * self.t0_s + total_bytes / self.bandwidth_Bps) / self.time_s(total_bytes))
    }

    /// Steady-state message rate when messages are not pipelined: 1/T(n),
    /// messages per second (§2.2).
    pub fn unpipelined_rate(&self, bytes: f64) -> f64 {
        1.0 / self.time_s(bytes)
    }
}

/// Steady-state throughput of a pipeline: 1/occupancy of its slowest stage,
/// operations per second (§2.1, §2.2). The latency of one operation is
/// unchanged by pipelining.
pub fn pipelined_rate(occupancy_s: f64) -> Result<f64> {
    Ok(1.0 / positive("occupancy", occupancy_s)?)
}

/// The three-part decomposition of one communication (§2.2):
/// total = overhead + occupancy + network delay, and cost = total − overlap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommBreakdown {
    /// Time the processor spends on the communication (call, copy), seconds.
    pub overhead_s: f64,
    /// Time the data occupies the slowest component (T0 + n/B of the slowest link), seconds.
    pub occupancy_s: f64,
    /// Everything else in flight, seconds.
    pub network_delay_s: f64,
}

impl CommBreakdown {
    /// Checks that all three parts are ≥ 0.
    pub fn new(overhead_s: f64, occupancy_s: f64, network_delay_s: f64) -> Result<Self> {
        Ok(Self {
            overhead_s: non_negative("overhead", overhead_s)?,
            occupancy_s: non_negative("occupancy", occupancy_s)?,
            network_delay_s: non_negative("network-delay", network_delay_s)?,
        })
    }

    /// Total communication time = overhead + occupancy + network delay, seconds.
    pub fn total_s(&self) -> f64 {
        self.overhead_s + self.occupancy_s + self.network_delay_s
    }

    /// Cost = total time − overlap: the part the processor actually waits,
    /// seconds (§2.2). The overlap must lie in [0, total].
    pub fn cost_s(&self, overlap_s: f64) -> Result<f64> {
        cost_s(self.total_s(), overlap_s)
    }
}

/// Cost = communication time − overlap, seconds (§2.2). The overlap must lie
/// in [0, time].
pub fn cost_s(time_s: f64, overlap_s: f64) -> Result<f64> {
    non_negative("time", time_s)?;
    non_negative("overlap", overlap_s)?;
    if overlap_s > time_s {
        return Err(ModelError::Inconsistent(format!(
            "overlap ({}) cannot exceed the communication time ({})",
            crate::units::Si(overlap_s, "s"),
            crate::units::Si(time_s, "s")
        )));
    }
    Ok(time_s - overlap_s)
}

/// Message size at which the effective bandwidth n/T(n) reaches the
/// fraction `f` of B (§2.2, §4.1): n/(T0 + n/B) = f·B gives
/// n = f·T0·B / (1 − f); f = 1/2 is the half-peak size T0·B.
pub fn bytes_for_fraction(net: &AlphaBeta, fraction: f64) -> Result<f64> {
    let f = crate::error::fraction("fraction", fraction)?;
    if f >= 1.0 || f <= 0.0 {
        return Err(crate::ModelError::OutOfRange {
            name: "fraction",
            value: f,
            accepted:
                "strictly between 0 and 1 (the full bandwidth is reached only at infinite size)",
        });
    }
    if net.t0_s == 0.0 {
        return Err(ModelError::Inconsistent(
            "with T0 = 0 a message of any size crosses at the full bandwidth B: no size is needed to reach a fraction of it".into(),
        ));
    }
    Ok(f * net.t0_s * net.bandwidth_Bps / (1.0 - f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_bad_parameters() {
        assert!(AlphaBeta::new(-1e-6, 1e9).is_err());
        // A regime from 1 MB: -100 µs + 1 MB / 1 GB/s = 900 µs > 0.
        let r = AlphaBeta::regime(-100e-6, 1e9, 1e6).unwrap();
        assert!((r.time_s(1e6) - 900e-6).abs() < 1e-15);
        assert!(AlphaBeta::regime(-2e-3, 1e9, 1e6).is_err());
        assert!(AlphaBeta::regime(f64::NAN, 1e9, 1e6).is_err());
        assert!(AlphaBeta::regime(1e-6, 0.0, 0.0).is_err());
        assert!(AlphaBeta::new(1e-6, 0.0).is_err());
        let ab = AlphaBeta::new(1e-6, 1e9).unwrap();
        assert!(ab.sequential_messages_time_s(0.0, 8.0).is_err());
        assert!(cost_s(1.0, 2.0).is_err());
        assert!(pipelined_rate(0.0).is_err());
    }

    #[test]
    fn zero_latency_reaches_peak() {
        let ab = AlphaBeta::new(0.0, 1e9).unwrap();
        assert!((ab.fraction_of_peak(1.0) - 1.0).abs() < 1e-15);
        assert_eq!(ab.half_peak_bytes(), 0.0);
    }

    #[test]
    fn half_peak_is_half() {
        let ab = AlphaBeta::new(3e-6, 5e9).unwrap();
        assert!((ab.fraction_of_peak(ab.half_peak_bytes()) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn breakdown_and_overlap() {
        let c = CommBreakdown::new(1e-6, 4e-6, 2e-6).unwrap();
        assert!((c.total_s() - 7e-6).abs() < 1e-18);
        assert!((c.cost_s(5e-6).unwrap() - 2e-6).abs() < 1e-18);
        assert!(c.cost_s(8e-6).is_err());
    }
}
