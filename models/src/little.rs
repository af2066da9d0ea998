//! Little's law and memory-level parallelism (lecture §4.3).

use crate::error::{positive, Result};

/// Default cache-line size, bytes.
pub const LINE_BYTES: f64 = 64.0;

/// Requests that must be in flight to sustain a bandwidth (§4.3):
/// MLP = B·L / line, with B in bytes/s, L in seconds, line in bytes.
#[allow(non_snake_case)]
pub fn outstanding_lines(bandwidth_Bps: f64, latency_s: f64, line_bytes: f64) -> Result<f64> {
    Ok(
        positive("bandwidth", bandwidth_Bps)? * positive("latency", latency_s)?
            / positive("line-bytes", line_bytes)?,
    )
}

/// Bandwidth reached with `outstanding` requests in flight (§4.3):
/// B = MLP·line / L, bytes/s.
pub fn bandwidth_from_concurrency(
    outstanding: f64,
    latency_s: f64,
    line_bytes: f64,
) -> Result<f64> {
    Ok(
        positive("outstanding", outstanding)? * positive("line-bytes", line_bytes)?
            / positive("latency", latency_s)?,
    )
}

/// Line transfers per second that carry a bandwidth (§4.3): B / line.
#[allow(non_snake_case)]
pub fn lines_per_s(bandwidth_Bps: f64, line_bytes: f64) -> Result<f64> {
    Ok(positive("bandwidth", bandwidth_Bps)? / positive("line-bytes", line_bytes)?)
}

/// Misses each of `cores` cores must keep in flight so that together they
/// sustain `outstanding` (§4.3): MLP / cores.
pub fn mlp_per_core(outstanding: f64, cores: f64) -> Result<f64> {
    Ok(positive("outstanding", outstanding)? / crate::error::count("cores", cores)?)
}

/// Lower bound on the time of a pass over `bytes` at `bandwidth_Bps`:
/// t = bytes / B (§4.3, "every full sweep costs at least this").
#[allow(non_snake_case)]
pub fn sweep_time_s(bytes: f64, bandwidth_Bps: f64) -> Result<f64> {
    Ok(positive("bytes", bytes)? / positive("bandwidth", bandwidth_Bps)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_forms_are_inverse() {
        let k = outstanding_lines(20e9, 66.7e-9, 64.0).unwrap();
        let b = bandwidth_from_concurrency(k, 66.7e-9, 64.0).unwrap();
        assert!((b - 20e9).abs() < 1e-3);
    }

    #[test]
    fn refuses_zero() {
        assert!(outstanding_lines(0.0, 1e-9, 64.0).is_err());
        assert!(bandwidth_from_concurrency(1.0, 0.0, 64.0).is_err());
    }
}
