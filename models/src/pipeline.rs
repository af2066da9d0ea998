//! Pipelining (§2.1): a pipeline does not shorten one item's latency, but
//! in steady state it finishes one item per occupancy of its slowest stage.

use serde::Serialize;

use crate::error::{count, positive, ModelError, Result};
use crate::units::Si;

/// Latency, throughput and total time of a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pipeline {
    /// One item through every stage: the sum of the stage times, seconds.
    pub latency_s: f64,
    /// Items per second in steady state: 1 / slowest stage.
    pub throughput_per_s: f64,
    /// `items` items: latency + (items − 1)·slowest stage, seconds.
    pub time_s: f64,
    /// The same items one after another without pipelining: items·latency.
    pub unpipelined_s: f64,
}

/// A pipeline of `stages` stages of `stage_s` each, one of which may be
/// slower (`slowest_s`, which then replaces one ordinary stage), running
/// `items` items (§2.1): latency L = (stages − 1)·t + t_slowest,
/// throughput 1/t_slowest, time L + (items − 1)·t_slowest.
///
/// # Errors
/// Besides the ranges of the inputs, a slowest stage that is faster than
/// the others, or given for a pipeline of one stage (whose one time is
/// `stage_s`): each contradicts what the slowest stage means.
pub fn pipeline(stages: f64, stage_s: f64, items: f64, slowest_s: Option<f64>) -> Result<Pipeline> {
    let k = count("stages", stages)?;
    let t = positive("stage-time", stage_s)?;
    let n = count("items", items)?;
    let slow = match slowest_s {
        Some(_) if k == 1.0 => {
            return Err(ModelError::Inconsistent(
                "a pipeline of one stage has no slowest stage besides it: give its time as the stage time alone".into(),
            ))
        }
        Some(s) if positive("slowest-stage", s)? < t => {
            return Err(ModelError::Inconsistent(format!(
                "the slowest stage ({}) is faster than the other stages ({}): give the one slower stage, or leave it out when all stages take the same time",
                Si(s, "s"),
                Si(t, "s")
            )))
        }
        Some(s) => s,
        None => t,
    };
    let latency = (k - 1.0) * t + slow;
    Ok(Pipeline {
        latency_s: latency,
        throughput_per_s: 1.0 / slow,
        time_s: latency + (n - 1.0) * slow,
        unpipelined_s: n * latency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_stage_instruction_pipeline() {
        // §2.1: IF, D, EX, WB of one cycle each: latency 4, one per cycle.
        let p = pipeline(4.0, 1.0, 100.0, None).unwrap();
        assert_eq!(p.latency_s, 4.0);
        assert_eq!(p.throughput_per_s, 1.0);
        assert_eq!(p.time_s, 103.0);
        assert_eq!(p.unpipelined_s, 400.0);
        // A slow stage sets the throughput.
        let s = pipeline(3.0, 0.5, 10.0, Some(1.0)).unwrap();
        assert_eq!(s.latency_s, 2.0);
        assert_eq!(s.throughput_per_s, 1.0);
        assert!(pipeline(0.0, 1.0, 1.0, None).is_err());
        // A "slowest" stage faster than the rest, or beside a single stage,
        // contradicts itself.
        assert!(pipeline(3.0, 2.0, 1.0, Some(1.0)).is_err());
        assert!(pipeline(1.0, 1.0, 1.0, Some(2.0)).is_err());
        assert!(pipeline(3.0, 1.0, 1.0, Some(1.0)).is_ok());
    }
}
