//! The cost of the ghost messages from the profile's network (§4.1:
//! T(n) = T0 + n/B per regime).
//!
//! A rank sends its edge rows right after its sweep. When that sweep
//! covers more than the private caches hold, it has pushed the receive
//! buffers and the transport's own state out of them, and a message costs
//! what the ping-pong after an evicting sweep measured
//! (`network.evicted_regimes`, from `calibrate`'s `pingpong::evicted`),
//! not what it costs with everything in cache. On the Xeon VM (Open MPI
//! 4.1 over shared memory) two ranks' exchange of 4 KiB rows after their
//! sweeps of 2.1 MB each took 11 µs beyond the slower sweep, where two
//! one-way times of the ping-pong in cache give 4.9 µs.

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
    /// Whether the regime is one measured after an evicting sweep.
    pub evicted: bool,
}

/// The regime that holds `bytes`: the profile's one selector
/// ([`models::profile::regime_index`]: the one whose range contains it, in
/// a gap between two regimes the nearer one (by the midpoint of the gap),
/// below the first or above the last the first or last).
pub fn regime_for(regimes: &[NetworkRegime], bytes: f64) -> Option<&NetworkRegime> {
    models::profile::regime_index(regimes, bytes).map(|i| &regimes[i])
}

/// The cost of `sequential` messages of `bytes` with `startups_each`
/// start-ups, from the profile's network: from its regimes measured after
/// an evicting sweep when `after_evicting_sweep` and the profile has one
/// for `bytes`, else from its regimes in cache.
pub(super) fn message_cost(
    profile: &Profile,
    bytes: f64,
    sequential: f64,
    startups_each: f64,
    after_evicting_sweep: bool,
) -> Result<MessageCost, Missing> {
    let missing = || Missing {
        what: "the MPI network (T0 and B)".into(),
        fix: "mpirun -np 2 calibrate --only pingpong".into(),
    };
    let network = profile.network.as_ref().filter(|n| !n.regimes.is_empty());
    let evicted = network
        .filter(|_| after_evicting_sweep)
        .and_then(|n| n.evicted_regime_for(bytes));
    let chosen = match (evicted, network) {
        (Some(r), _) => Some((r, ", after an evicting sweep")),
        (None, Some(net)) => Some((regime_for(&net.regimes, bytes).ok_or_else(missing)?, "")),
        (None, None) => None,
    };
    let (t0, bw, regime) = match chosen {
        Some((r, how)) => (
            r.t0_s.point,
            r.bandwidth_Bps.point,
            format!("{}..{} B{how}", r.from_bytes, r.to_bytes),
        ),
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
        evicted: evicted.is_some(),
    })
}
