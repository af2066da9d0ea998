//! The core clock, for converting latencies to cycles.
//!
//! Measured on x86-64 with a chain of dependent integer adds: each
//! `add x, y` waits for the previous one and takes exactly one cycle on
//! every current x86 core, so clock = adds / t (the loop counter runs in
//! parallel and costs nothing). The addend is a register, not an
//! immediate: recent Intel cores (Golden Cove and later) fold chains of
//! `add r, imm` at register renaming, and such a chain runs several adds
//! per cycle. The fastest timing is the estimate:
//! interference (another tenant, an interrupt) only ever slows the chain
//! down, so the minimum time per add is the closest to the clock, while a
//! median can land on a disturbed timing. This gives the clock the core really runs
//! at (turbo, or a VM's host clock), unlike `/proc/cpuinfo`, which on many
//! VMs shows a nominal value. Elsewhere, or if the measurement fails, the
//! `cpu MHz` of `/proc/cpuinfo` is used and the profile says so.

use anyhow::Result;

use crate::timer::{measure, serial, Plan};

/// Dependent adds per loop iteration of the measurement.
pub const ADDS_PER_ITERATION: u64 = 100;

/// A clock rate and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Clock {
    /// Hz.
    pub hz: f64,
    /// How it was obtained, for the profile's provenance.
    pub source: String,
}

/// Measures the clock on the calling thread (pin it first), falling back to
/// `cpuinfo_hz`. `None` when neither is available.
pub fn clock(plan: &Plan, cpuinfo_hz: Option<f64>) -> Result<Option<Clock>> {
    #[cfg(target_arch = "x86_64")]
    {
        let m = measure(plan, serial(add_chain))?;
        let s = m.per_unit.summary();
        let hz = ADDS_PER_ITERATION as f64 / s.min;
        if hz.is_finite() && hz > 0.0 {
            return Ok(Some(Clock {
                hz,
                source: format!(
                    "measured: chain of dependent integer adds, {} per loop iteration, fastest of {} timings (CV {:.1}%)",
                    ADDS_PER_ITERATION,
                    s.n,
                    100.0 * s.cv
                ),
            }));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = plan;
    Ok(cpuinfo_hz.map(|hz| Clock {
        hz,
        source: "/proc/cpuinfo cpu MHz (nominal; not measured)".into(),
    }))
}

/// Runs `iters` iterations of [`ADDS_PER_ITERATION`] dependent adds.
#[cfg(target_arch = "x86_64")]
pub fn add_chain(iters: u64) {
    if iters == 0 {
        return;
    }
    // SAFETY: pure register arithmetic on two scratch registers; no memory,
    // no stack, flags clobbered (asm! assumes that by default).
    unsafe {
        std::arch::asm!(
            "2:",
            ".rept {k}",
            "add {x}, {y}",
            ".endr",
            "sub {n}, 1",
            "jnz 2b",
            x = inout(reg) 0u64 => _,
            y = in(reg) 1u64,
            n = inout(reg) iters => _,
            k = const ADDS_PER_ITERATION,
            options(nomem, nostack),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn measured_clock_is_plausible() {
        let c = clock(&Plan::quick(), None).unwrap().unwrap();
        // Any real core runs between 0.2 and 10 GHz.
        assert!(c.hz > 2e8 && c.hz < 1e10, "{}", c.hz);
        assert!(c.source.starts_with("measured"));
    }
}
