//! Loop-carried chains: each floating-point operation waits for the one
//! before it, so the time per operation is the unit's latency, not its
//! throughput (lecture §4.2: the span of a chain of dependent steps).
//!
//! `s += x` (an add chain) is what a reduction compiled without
//! reassociation runs; `s = s·a + b` (an FMA chain) is Horner's scheme. The
//! operands pass through [`black_box`] so the compiler cannot fold the
//! chain, and eight operations per loop step keep the loop's own counter
//! off the critical path.

use std::hint::black_box;

/// Which dependent operation a chain repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainOp {
    /// s ← s + c.
    Add,
    /// s ← s·a + b, fused where the CPU has FMA.
    Fma,
}

impl ChainOp {
    pub const ALL: [ChainOp; 2] = [ChainOp::Add, ChainOp::Fma];

    /// Key in the profile.
    pub fn name(self) -> &'static str {
        match self {
            ChainOp::Add => "add",
            ChainOp::Fma => "fma",
        }
    }
}

/// Dependent operations per loop step.
pub const OPS_PER_STEP: u64 = 8;

/// Runs `steps` loop steps of [`OPS_PER_STEP`] dependent `op`s on f64 and
/// returns the chain's end value.
pub fn run(op: ChainOp, steps: u64) -> f64 {
    match op {
        ChainOp::Add => add_chain(steps),
        ChainOp::Fma => fma_chain(steps),
    }
}

fn add_chain(steps: u64) -> f64 {
    let c = black_box(1e-9f64);
    let mut s = black_box(1.0f64);
    for _ in 0..steps {
        s += c;
        s += c;
        s += c;
        s += c;
        s += c;
        s += c;
        s += c;
        s += c;
    }
    s
}

fn fma_chain(steps: u64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if crate::kernels::Isa::scalar_fma() {
        // SAFETY: FMA support was checked just above.
        return unsafe { fma_chain_fused(steps) };
    }
    mul_add_chain(steps)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_chain_fused(steps: u64) -> f64 {
    mul_add_chain(steps)
}

#[inline(always)]
fn mul_add_chain(steps: u64) -> f64 {
    let (a, b) = (black_box(0.999_999f64), black_box(1e-9f64));
    let mut s = black_box(1.0f64);
    for _ in 0..steps {
        for _ in 0..OPS_PER_STEP {
            s = s.mul_add(a, b);
        }
    }
    s
}

/// Σ x over `sweeps` sweeps as one dependent chain of adds, as a
/// reduction compiled without reassociation runs it: one load and one add
/// per element, each add waiting for the one before. Returns the sum.
pub fn dependent_sum(x: &[f64], sweeps: u64) -> f64 {
    let mut s = 0.0;
    for _ in 0..sweeps {
        for &v in black_box(x) {
            s += v;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_compute_their_recurrences() {
        assert!((run(ChainOp::Add, 1000) - (1.0 + 8000.0 * 1e-9)).abs() < 1e-12);
        let mut s = 1.0f64;
        for _ in 0..800 {
            s = s * 0.999_999 + 1e-9;
        }
        assert!((run(ChainOp::Fma, 100) - s).abs() < 1e-12);
    }

    #[test]
    fn the_dependent_sum_adds_every_element_of_every_sweep() {
        let x: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(dependent_sum(&x, 3), 3.0 * 5050.0);
        assert_eq!(dependent_sum(&[], 5), 0.0);
    }
}
