//! The `flops` section: FLOP/s of each compute kernel (the ceilings of
//! §4.4's Roofline) and the latency of loop-carried chains.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sample::Sample;
use crate::Estimate;

/// Results of the FLOP/s benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct FlopsSection {
    /// One row per kernel and thread count.
    pub kernels: Vec<FlopsKernel>,
    /// Seconds per operation of a dependent f64 chain, by operation
    /// ("add", "fma"); older profiles have none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub chain: BTreeMap<String, Sample>,
}

/// One compute kernel on one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlopsKernel {
    /// A label such as "f64 avx512 fma".
    pub name: String,
    /// "f64" or "f32".
    pub precision: String,
    /// "scalar", "avx2", "avx512", ...
    pub isa: String,
    /// "fma", "mul_add", "dgemm", ...
    pub op: String,
    pub threads: usize,
    /// Independent accumulators of a register kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulators: Option<usize>,
    /// FLOPs of one iteration of a register kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops_per_iteration: Option<f64>,
    /// Side of the dgemm's square matrices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix_side: Option<usize>,
    /// FLOP/s of all threads together.
    pub flops: Sample,
    /// The capability FLOP/s per cycle and thread, when the clock is known.
    #[serde(default)]
    pub flops_per_cycle_per_thread: Option<f64>,
}

impl FlopsSection {
    /// Seconds per operation of a loop-carried f64 chain of `op` ("add" or
    /// "fma"): the capability estimate (low quantile) with its interval.
    pub fn chain_latency(&self, op: &str) -> Option<Estimate> {
        self.chain.get(op).map(Sample::time)
    }
}
