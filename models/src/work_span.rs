//! The work-span model and greedy scheduling (lecture §4.2).

use serde::Serialize;

use crate::error::{count, positive, ModelError, Result};

/// Bounds on the running time of a computation of work W and span S on P
/// processors under any greedy scheduler (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WorkSpanBounds {
    /// max(W/P, S): no schedule beats either the work or the critical path.
    pub time_lower_bound: f64,
    /// W/P + S: Brent/Graham bound for greedy schedules.
    pub time_upper_bound: f64,
    /// W/S: the largest P that can still be kept busy.
    pub parallelism: f64,
    /// (W/P)/T_P ≥ 1/(1 + S·P/W).
    pub efficiency_lower_bound: f64,
}

/// Evaluates the bounds for work `w` and span `s` (same time unit, or unit
/// operations) on `p` processors. The span cannot exceed the work.
pub fn bounds(w: f64, s: f64, p: f64) -> Result<WorkSpanBounds> {
    let w = positive("work", w)?;
    let s = positive("span", s)?;
    let p = count("p", p)?;
    if s > w {
        return Err(ModelError::Inconsistent(format!(
            "span ({s}) cannot exceed work ({w}): the critical path is part of the work"
        )));
    }
    Ok(WorkSpanBounds {
        time_lower_bound: (w / p).max(s),
        time_upper_bound: w / p + s,
        parallelism: w / s,
        efficiency_lower_bound: 1.0 / (1.0 + s * p / w),
    })
}

/// A message latency expressed as equivalent element updates:
/// L_updates = latency / time per update (§4.2 example B).
pub fn latency_in_updates(latency_s: f64, update_s: f64) -> Result<f64> {
    Ok(positive("latency", latency_s)? / positive("update-time", update_s)?)
}

/// Efficiency bound of the ghost-row solver with latency folded into the
/// span (§4.2 example B): per iteration W = N², S = N/P + L, so
/// efficiency ≥ 1 / (1 + S·P/W) = 1 / (1 + (N + P·L)/N²), with L in element updates.
pub fn stencil_efficiency_with_latency(n: f64, p: f64, latency_updates: f64) -> Result<f64> {
    let n = positive("n", n)?;
    let s = n / count("p", p)? + positive("latency", latency_updates)?;
    Ok(bounds(n * n, s.min(n * n), p)?.efficiency_lower_bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_ordered() {
        let b = bounds(1e6, 1e3, 16.0).unwrap();
        assert!(b.time_lower_bound <= b.time_upper_bound);
        assert_eq!(b.parallelism, 1000.0);
    }

    #[test]
    fn span_larger_than_work_is_refused() {
        assert!(bounds(10.0, 20.0, 2.0).is_err());
        assert!(bounds(10.0, 1.0, 0.0).is_err());
    }
}
