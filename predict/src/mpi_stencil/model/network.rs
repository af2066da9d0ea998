//! The cost of the ghost messages from the profile's network (§4.1:
//! T(n) = T0 + n/B per regime).

use models::alpha_beta::AlphaBeta;
use models::profile::{NetworkRegime, Profile};
use serde::Serialize;

use super::Missing;

/// The cost of one kind of ghost message.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageCost {
    pub bytes: f64,
    /// How many the busiest rank pays for one after the other.
    pub sequential: f64,
    /// Start-ups in each: 1 for a one-way message, 2 for an exchange
    /// (send and receive).
    pub startups_each: f64,
    pub t0_s: f64,
    pub bandwidth_Bps: f64,
    /// The cost of one: startups_each·T0 + n/B.
    pub time_s: f64,
    /// The profile regime used, e.g. "4096..1048576 B".
    pub regime: String,
}

/// The regime that holds `bytes`: the profile's one selector
/// ([`models::profile::regime_index`]: the one whose range contains it, in
/// a gap between two regimes the nearer one (by the midpoint of the gap),
/// below the first or above the last the first or last).
pub fn regime_for(regimes: &[NetworkRegime], bytes: f64) -> Option<&NetworkRegime> {
    models::profile::regime_index(regimes, bytes).map(|i| &regimes[i])
}

/// The cost of `sequential` messages of `bytes` with `startups_each`
/// start-ups, from the profile's network.
pub(super) fn message_cost(
    profile: &Profile,
    bytes: f64,
    sequential: f64,
    startups_each: f64,
) -> Result<MessageCost, Missing> {
    let missing = || Missing {
        what: "the MPI network (T0 and B)".into(),
        fix: "mpirun -np 2 calibrate --only pingpong".into(),
    };
    let (t0, bw, regime) = match profile.network.as_ref().filter(|n| !n.regimes.is_empty()) {
        Some(net) => {
            let r = regime_for(&net.regimes, bytes).ok_or_else(missing)?;
            (
                r.t0_s.point,
                r.bandwidth_Bps.point,
                format!("{}..{} B", r.from_bytes, r.to_bytes),
            )
        }
        None => match (profile.summary.mpi_t0_s, profile.summary.mpi_bandwidth_Bps) {
            (Some(t0), Some(bw)) => (t0, bw, "summary T0 and B".to_string()),
            _ => return Err(missing()),
        },
    };
    let time_s = match AlphaBeta::new(t0, bw) {
        // One-way T(n), plus the extra start-up of an exchange.
        Ok(ab) => ab.time_s(bytes) + (startups_each - 1.0) * ab.t0_s,
        // A regime fitted with a negative intercept: its line, floored at 0.
        Err(_) => (startups_each * t0 + bytes / bw).max(0.0),
    };
    Ok(MessageCost {
        bytes,
        sequential,
        startups_each,
        t0_s: t0,
        bandwidth_Bps: bw,
        time_s,
        regime,
    })
}
