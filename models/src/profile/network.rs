//! The network between two ranks (from MPI ping-pong, or a what-if) and
//! the one rule that picks the protocol regime of a message size (§4.1:
//! T(n) = T0 + n/B, fitted per regime).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stats::Summary;
use crate::Estimate;

/// Blocking or non-blocking point-to-point calls.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `MPI_Send` / `MPI_Recv`.
    Blocking,
    /// `MPI_Isend` / `MPI_Irecv` with the receive posted first.
    Nonblocking,
}

impl Mode {
    /// Both modes in the order they are measured.
    pub const ALL: [Mode; 2] = [Mode::Blocking, Mode::Nonblocking];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Blocking => "blocking",
            Mode::Nonblocking => "nonblocking",
        }
    }
}

/// One message size of one mode, measured.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SizePoint {
    pub mode: Mode,
    pub bytes: u64,
    /// Round trips per sample.
    pub reps_per_sample: u64,
    /// One-way time: median, 95% interval, spread, outliers.
    pub one_way_s: Summary,
    /// Effective bandwidth n / t(n) at the median, bytes/s (§4.1).
    pub bandwidth_Bps: f64,
}

/// One protocol regime of a message-passing network: T(n) = T0 + n/B for
/// sizes in `[from_bytes, to_bytes]`.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NetworkRegime {
    pub from_bytes: f64,
    pub to_bytes: f64,
    pub t0_s: Estimate,
    pub bandwidth_Bps: Estimate,
    pub r_squared: f64,
}

/// The network between two ranks (from MPI ping-pong, or a what-if).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Network {
    /// Transport as configured, e.g. "vader (shared memory)", "tcp".
    pub transport: String,
    pub hosts: Vec<String>,
    pub regimes: Vec<NetworkRegime>,
    /// Share of a large message's time that non-blocking posting hid behind computation, 0..1.
    pub overlap_fraction: Option<Estimate>,
    /// Every measured size of both modes, kept for charts and refits.
    #[serde(default)]
    pub points: Vec<SizePoint>,
    /// Blocking regimes measured with both ranks' private caches swept
    /// between round trips (`sections.pingpong.evicted`): what a message
    /// costs after its rank has swept more than those caches hold, which
    /// leaves neither the buffers nor the transport's own state there.
    /// Empty when not measured (a what-if network, an older profile).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evicted_regimes: Vec<NetworkRegime>,
}

/// A size range of a regime.
pub trait SizeRange {
    /// Smallest size of the range, bytes.
    fn first_bytes(&self) -> f64;
    /// Largest size of the range, bytes.
    fn last_bytes(&self) -> f64;
}

impl SizeRange for NetworkRegime {
    fn first_bytes(&self) -> f64 {
        self.from_bytes
    }
    fn last_bytes(&self) -> f64 {
        self.to_bytes
    }
}

/// Index of the regime serving a message of `bytes`: the one whose range
/// holds it; in a gap between two regimes the nearer one, split at the
/// midpoint of the gap; below the first regime the first, above the last
/// the last. The regimes are taken in increasing `from_bytes` whatever
/// their order in `ranges`; `None` when there is none.
pub fn regime_index<R: SizeRange>(ranges: &[R], bytes: f64) -> Option<usize> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by(|&a, &b| ranges[a].first_bytes().total_cmp(&ranges[b].first_bytes()));
    if let Some(&i) = order
        .iter()
        .find(|&&i| bytes >= ranges[i].first_bytes() && bytes <= ranges[i].last_bytes())
    {
        return Some(i);
    }
    let mut chosen = *order.first()?;
    for w in order.windows(2) {
        let (a, b) = (&ranges[w[0]], &ranges[w[1]]);
        if bytes > (a.last_bytes() + b.first_bytes()) / 2.0 {
            chosen = w[1];
        }
    }
    Some(chosen)
}

impl Network {
    /// The regime serving a message of `bytes` ([`regime_index`]).
    pub fn regime_for(&self, bytes: f64) -> Option<&NetworkRegime> {
        regime_index(&self.regimes, bytes).map(|i| &self.regimes[i])
    }

    /// The evicted regime serving a message of `bytes` sent after a sweep
    /// over more than the private caches; none beyond the largest size
    /// measured so (where a message's transfer outweighs what the caches
    /// change) or without such regimes.
    pub fn evicted_regime_for(&self, bytes: f64) -> Option<&NetworkRegime> {
        let largest = self
            .evicted_regimes
            .iter()
            .map(|r| r.to_bytes)
            .reduce(f64::max)?;
        if bytes > largest {
            return None;
        }
        regime_index(&self.evicted_regimes, bytes).map(|i| &self.evicted_regimes[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regime(from: f64, to: f64) -> NetworkRegime {
        NetworkRegime {
            from_bytes: from,
            to_bytes: to,
            t0_s: Estimate::exact(1e-6),
            bandwidth_Bps: Estimate::exact(1e9),
            r_squared: 1.0,
        }
    }

    #[test]
    fn one_selector_for_inside_gap_and_outside() {
        let r = [
            regime(1.0, 1000.0),
            regime(2000.0, 60000.0),
            regime(100000.0, 1e7),
        ];
        assert_eq!(regime_index(&r, 500.0), Some(0));
        assert_eq!(regime_index(&r, 2000.0), Some(1));
        // In the gap 1000..2000 the midpoint 1500 splits it.
        assert_eq!(regime_index(&r, 1400.0), Some(0));
        assert_eq!(regime_index(&r, 1600.0), Some(1), "not the last regime");
        // Gap 60000..100000, midpoint 80000.
        assert_eq!(regime_index(&r, 70000.0), Some(1));
        assert_eq!(regime_index(&r, 90000.0), Some(2));
        assert_eq!(regime_index(&r, 0.5), Some(0));
        assert_eq!(regime_index(&r, 1e9), Some(2));
        let shuffled = [r[2].clone(), r[0].clone(), r[1].clone()];
        assert_eq!(regime_index(&shuffled, 1600.0), Some(2));
        assert_eq!(regime_index::<NetworkRegime>(&[], 1.0), None);
    }

    #[test]
    fn an_evicted_regime_serves_only_the_sizes_measured_so() {
        let mut net = Network {
            transport: "shared memory".into(),
            hosts: vec![],
            regimes: vec![regime(1.0, 1e7)],
            overlap_fraction: None,
            points: vec![],
            evicted_regimes: vec![],
        };
        assert!(net.evicted_regime_for(4096.0).is_none(), "none measured");
        net.evicted_regimes = vec![regime(1.0, 3000.0), regime(4096.0, 1048576.0)];
        assert_eq!(net.evicted_regime_for(4096.0).unwrap().from_bytes, 4096.0);
        assert_eq!(net.evicted_regime_for(100.0).unwrap().from_bytes, 1.0);
        assert!(
            net.evicted_regime_for(2e6).is_none(),
            "beyond the largest size measured"
        );
    }
}
