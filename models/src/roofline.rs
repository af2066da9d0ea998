//! The Roofline model (lecture §4.4): attainable performance is the lowest
//! of the compute ceilings and of arithmetic intensity times each memory
//! level's bandwidth.

use serde::Serialize;

use crate::error::{positive, ModelError, Result};

/// A named roof: a compute ceiling in flop/s or a bandwidth in bytes/s.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ceiling {
    pub name: String,
    pub value: f64,
}

/// A machine's roofs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Roofline {
    /// Compute ceilings, flop/s (e.g. "FMA AVX-512", "scalar").
    pub compute: Vec<Ceiling>,
    /// Bandwidth ceilings, bytes/s, one per memory level (e.g. "L1", "DRAM").
    pub memory: Vec<Ceiling>,
}

/// Which roof binds at a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Memory,
    Compute,
}

/// Attainable performance and the roof that binds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attainable {
    pub flops: f64,
    pub bound: Bound,
    /// Name of the binding ceiling.
    pub ceiling: String,
}

/// Peak flop/s of a processor: cores × clock × SIMD lanes × flops per lane
/// per cycle (2 for one FMA unit, 4 for two), §4.4 example D.
pub fn peak_flops(
    cores: f64,
    clock_hz: f64,
    simd_lanes: f64,
    flops_per_lane_cycle: f64,
) -> Result<f64> {
    Ok(positive("cores", cores)?
        * positive("clock", clock_hz)?
        * positive("simd-lanes", simd_lanes)?
        * positive("flops-per-cycle", flops_per_lane_cycle)?)
}

impl Roofline {
    /// The classic two-line Roofline: one peak and one bandwidth.
    #[allow(non_snake_case)]
    pub fn simple(peak_flops: f64, bandwidth_Bps: f64) -> Result<Self> {
        Ok(Self {
            compute: vec![Ceiling {
                name: "peak".into(),
                value: positive("peak-flops", peak_flops)?,
            }],
            memory: vec![Ceiling {
                name: "memory".into(),
                value: positive("bandwidth", bandwidth_Bps)?,
            }],
        })
    }

    /// A Roofline with several ceilings; each value must be > 0 and both
    /// lists non-empty.
    pub fn new(compute: Vec<Ceiling>, memory: Vec<Ceiling>) -> Result<Self> {
        if compute.is_empty() || memory.is_empty() {
            return Err(ModelError::Inconsistent(
                "a Roofline needs at least one compute ceiling and one bandwidth".into(),
            ));
        }
        for c in compute.iter().chain(&memory) {
            positive("ceiling", c.value)?;
        }
        Ok(Self { compute, memory })
    }

    /// The highest compute ceiling.
    pub fn peak(&self) -> &Ceiling {
        max_by_value(&self.compute)
    }

    /// The ridge point I_ridge = peak / B of a bandwidth ceiling, flop/byte:
    /// the intensity at which the kernel turns compute-bound (§4.4).
    pub fn ridge_ai(&self, memory: &Ceiling) -> f64 {
        self.peak().value / memory.value
    }

    /// Attainable flop/s at intensity `ai` (flop per byte) against the
    /// highest compute ceiling and the named memory level:
    /// min(peak, AI·B) (§4.4).
    pub fn attainable(&self, ai: f64, memory: &Ceiling) -> Result<Attainable> {
        self.attainable_levels(&[(memory, ai)])
    }

    /// Attainable flop/s of a kernel whose intensity differs per level:
    /// min(peak, min over levels of AI_level · B_level). Each pair is a
    /// bandwidth ceiling and the kernel's flop per byte moved at that level.
    pub fn attainable_levels(&self, per_level: &[(&Ceiling, f64)]) -> Result<Attainable> {
        let peak = self.peak();
        let mut best = Attainable {
            flops: peak.value,
            bound: Bound::Compute,
            ceiling: peak.name.clone(),
        };
        for (level, ai) in per_level {
            let roof = positive("ai", *ai)? * level.value;
            if roof < best.flops {
                best = Attainable {
                    flops: roof,
                    bound: Bound::Memory,
                    ceiling: level.name.clone(),
                };
            }
        }
        Ok(best)
    }
}

fn max_by_value(c: &[Ceiling]) -> &Ceiling {
    c.iter()
        .max_by(|a, b| a.value.total_cmp(&b.value))
        .expect("Roofline::new checks the lists are non-empty")
}

/// Smallest block side b that takes a blocked matrix multiply to the
/// ridge point (§4.4): with 2n³ flops and about 2·elem·n³/b bytes of DRAM
/// traffic its intensity is AI = b/elem, so AI ≥ peak/B needs
/// b ≥ elem·peak/B (4 B × 38.4 flop/B = 153.6 → 154 in the lecture).
#[allow(non_snake_case)]
pub fn ridge_block_side(
    peak_flops: f64,
    bandwidth_Bps: f64,
    elem_bytes: f64,
) -> crate::Result<f64> {
    use crate::error::positive;
    Ok(
        positive("elem-bytes", elem_bytes)? * positive("peak-flops", peak_flops)?
            / positive("bandwidth", bandwidth_Bps)?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_ceiling_is_named() {
        let r = Roofline::new(
            vec![
                Ceiling {
                    name: "scalar".into(),
                    value: 10e9,
                },
                Ceiling {
                    name: "fma".into(),
                    value: 100e9,
                },
            ],
            vec![
                Ceiling {
                    name: "L1".into(),
                    value: 200e9,
                },
                Ceiling {
                    name: "DRAM".into(),
                    value: 10e9,
                },
            ],
        )
        .unwrap();
        assert_eq!(r.peak().name, "fma");
        let dram = &r.memory[1];
        assert_eq!(r.ridge_ai(dram), 10.0);
        let a = r.attainable(1.0, dram).unwrap();
        assert_eq!(
            (a.flops, a.bound, a.ceiling.as_str()),
            (10e9, Bound::Memory, "DRAM")
        );
        let a = r.attainable(100.0, dram).unwrap();
        assert_eq!((a.flops, a.bound), (100e9, Bound::Compute));
        let l1 = &r.memory[0];
        let a = r.attainable_levels(&[(l1, 0.1), (dram, 5.0)]).unwrap();
        assert_eq!((a.flops, a.ceiling.as_str()), (20e9, "L1"));
    }

    #[test]
    fn refuses_empty_or_bad() {
        assert!(Roofline::new(vec![], vec![]).is_err());
        assert!(Roofline::simple(0.0, 1.0).is_err());
        let r = Roofline::simple(1.0, 1.0).unwrap();
        assert!(r.attainable(-1.0, &r.memory[0]).is_err());
    }
}
