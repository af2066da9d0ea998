//! The `pingpong` section: MPI ping-pong between ranks 0 and 1, blocking
//! and non-blocking, with the regimes fitted to each (§4.1), the overlap
//! of a large message with computation and the drift over the run.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::{NetworkRegime, SizePoint};
use crate::stats::Summary;
use crate::Estimate;

/// Results of the ping-pong.
#[allow(non_snake_case)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct PingpongSection {
    /// How the figures were measured and fitted.
    pub method: String,
    pub transport: Transport,
    pub hosts: Vec<String>,
    /// The headline T0 and B (blocking, first and last regime).
    pub headline: Headline,
    pub blocking: ModeFit,
    pub nonblocking: ModeFit,
    /// A large message posted non-blocking around computation.
    pub overlap: Option<Overlap>,
    /// Blocking round trips, each after both ranks swept more than their
    /// private caches hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evicted: Option<Evicted>,
    /// Sizes measured again at the end.
    pub drift: Vec<Drift>,
    pub options: PingpongOptions,
    pub warnings: Vec<String>,
}

/// The transport as configured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Transport {
    /// Short name: `tcp`, `shared memory (library default)`, `ucx`, ...
    pub name: String,
    /// One line: library, selection and hosts.
    pub detail: String,
    /// The selection variables that were set, by name.
    pub selection: BTreeMap<String, String>,
    /// The MPI library's version line.
    pub library: String,
    /// Whether ranks 0 and 1 ran on the same host.
    pub same_host: bool,
}

/// The headline figures.
#[allow(non_snake_case)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Headline {
    pub t0_s: Estimate,
    pub bandwidth_Bps: Estimate,
}

/// The regimes of one mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ModeFit {
    /// The regimes in increasing size.
    pub regimes: Vec<NetworkRegime>,
    /// Points in each regime.
    pub points_per_regime: Vec<usize>,
    /// Breakpoints between regimes, bytes.
    pub breakpoints_bytes: Vec<f64>,
    /// The penalised BIC of 1, 2, … regimes (null where not finite).
    pub criterion: Vec<Option<f64>>,
    /// Caveats on individual regimes.
    pub notes: Vec<String>,
}

/// Overlap of communication with computation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Overlap {
    /// Bytes sent each way.
    pub bytes: u64,
    /// Iterations of the compute chain.
    pub spin_iters: u64,
    /// Share of the communication hidden, per triple.
    pub fraction: Summary,
    /// Communication alone, seconds.
    pub comm_s: Summary,
    /// Computation alone, seconds.
    pub comp_s: Summary,
    /// Both together, seconds.
    pub total_s: Summary,
}

/// The ping-pong after an evicting sweep: each sample one blocking round
/// trip, after both ranks have written `sweep_bytes` of their own (more
/// than their private caches hold) and rank 1 waits in its receive. A
/// message then finds neither its buffers nor the transport's shared
/// state in the private caches, as after a rank's sweep of a stencil. The
/// Intel MPI Benchmarks' `-off_cache` is the milder form, which rotates
/// the user buffers only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Evicted {
    /// Bytes each rank writes before a round trip.
    pub sweep_bytes: u64,
    /// The regimes of T(n) = T0 + n/B fitted to the one-way times.
    pub fit: ModeFit,
    /// Every measured size.
    pub points: Vec<SizePoint>,
}

/// A size measured first and again at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Drift {
    pub bytes: u64,
    /// Median one-way time in the first pass, seconds.
    pub first_s: f64,
    /// Median one-way time at the end, seconds.
    pub again_s: f64,
    /// again / first − 1.
    pub change: f64,
}

/// Default time without progress after which an MPI job is aborted,
/// seconds: far above any honest step (a 16 MiB round trip over a slow
/// link takes well under a second).
pub const DEFAULT_WATCHDOG_S: f64 = 120.0;

/// The options of the run; calibrate runs with them and records them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct PingpongOptions {
    /// Quick mode (fewer, shorter samples; one extra size per breakpoint gap).
    pub quick: bool,
    /// Largest message, bytes (sizes are the powers of two up to it).
    pub max_bytes: u64,
    /// Shortest duration of one sample, seconds.
    pub min_sample_s: f64,
    /// Samples per size (≥ 2).
    pub samples: usize,
    /// Message of the overlap measurement, bytes; 0 skips it.
    pub overlap_bytes: u64,
    /// Triples of the overlap measurement (≥ 2).
    pub overlap_triples: usize,
    /// Most protocol regimes the fit may find.
    pub max_regimes: usize,
    /// Time without progress after which the job is aborted, seconds; zero
    /// disables the watchdog.
    pub watchdog_timeout_s: f64,
}

impl Default for PingpongOptions {
    /// The full sweep: 1 B..16 MiB, samples of ≥ 1 ms, 30 per size, overlap
    /// at 4 MiB, up to 4 regimes, the default watchdog.
    fn default() -> Self {
        Self {
            quick: false,
            max_bytes: 16 << 20,
            min_sample_s: 1e-3,
            samples: 30,
            overlap_bytes: 4 << 20,
            overlap_triples: 30,
            max_regimes: 4,
            watchdog_timeout_s: DEFAULT_WATCHDOG_S,
        }
    }
}

impl PingpongOptions {
    /// The quick sweep: samples of ≥ 0.2 ms, 10 per size, 10 overlap triples.
    pub fn quick() -> Self {
        Self {
            quick: true,
            min_sample_s: 2e-4,
            samples: 10,
            overlap_triples: 10,
            ..Self::default()
        }
    }
}
