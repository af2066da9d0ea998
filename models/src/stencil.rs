//! Strong and weak scaling of the ghost-row Jacobi solver (lecture §2.3,
//! §3.1, §4.1, §4.2): an N×N grid in 1D blocked rows, one ghost row
//! exchanged with each neighbour per iteration.

use serde::Serialize;

use crate::alpha_beta::AlphaBeta;
use crate::error::{at_least_one, count, positive, Result};

/// The solver on a machine: per-element update time and the network.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GhostStencil {
    /// N, the grid side, elements.
    pub n: f64,
    /// Time of one element update on one processor, seconds (e.g. 2 cycles at
    /// 3 GHz in §4.1, or bytes per update / per-process bandwidth).
    pub update_s: f64,
    /// Bytes per grid element (4 for f32).
    pub elem_bytes: f64,
    /// Start-ups charged per iteration. The lecture's §4.1 example charges
    /// one for both rows (1); sending the two rows as separate messages one
    /// after another costs 2.
    pub messages: f64,
    /// T0 and B of the network.
    #[serde(skip)]
    pub network: AlphaBeta,
    /// True when the exchange is overlapped with the interior update, so an
    /// iteration takes max(compute, comm) instead of compute + comm.
    pub overlap: bool,
}

/// One point of a scaling curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScalingPoint {
    pub p: f64,
    /// Grid side at this P (constant for strong scaling).
    pub n: f64,
    pub compute_s: f64,
    pub comm_s: f64,
    /// Time per iteration.
    pub time_s: f64,
    /// T(1)/T(P) for strong scaling; P·T(1)/T(P) (scaled) for weak scaling.
    pub speedup: f64,
    /// speedup / P.
    pub efficiency: f64,
}

impl GhostStencil {
    pub fn new(
        n: f64,
        update_s: f64,
        elem_bytes: f64,
        messages: f64,
        network: AlphaBeta,
        overlap: bool,
    ) -> Result<Self> {
        Ok(Self {
            n: positive("n", n)?,
            update_s: positive("update-time", update_s)?,
            elem_bytes: positive("elem-bytes", elem_bytes)?,
            messages: count("messages", messages)?,
            network,
            overlap,
        })
    }

    /// Compute per iteration on P processors: (N/P)·N·t_update.
    pub fn compute_s(&self, n: f64, p: f64) -> f64 {
        n / p * n * self.update_s
    }

    /// Communication per iteration: k·T0 + 2·N·elem/B (two ghost rows), and
    /// none on a single processor.
    pub fn comm_s(&self, n: f64, p: f64) -> f64 {
        if p <= 1.0 {
            0.0
        } else {
            self.messages * self.network.t0_s
                + 2.0 * n * self.elem_bytes / self.network.bandwidth_Bps
        }
    }

    fn iteration(&self, n: f64, p: f64) -> (f64, f64, f64) {
        let c = self.compute_s(n, p);
        let m = self.comm_s(n, p);
        let t = if self.overlap { c.max(m) } else { c + m };
        (c, m, t)
    }

    /// Strong scaling (fixed N) at P processors (P may be fractional on a
    /// continuous curve).
    pub fn strong(&self, p: f64) -> Result<ScalingPoint> {
        let p = at_least_one("p", p)?;
        let (c, m, t) = self.iteration(self.n, p);
        let t1 = self.iteration(self.n, 1.0).2;
        Ok(ScalingPoint {
            p,
            n: self.n,
            compute_s: c,
            comm_s: m,
            time_s: t,
            speedup: t1 / t,
            efficiency: t1 / t / p,
        })
    }

    /// Weak scaling (work per processor fixed, §4.2): N(P) = N·√P so that
    /// N(P)²/P = N². Compute stays constant while the ghost rows grow with √P.
    pub fn weak(&self, p: f64) -> Result<ScalingPoint> {
        let p = at_least_one("p", p)?;
        let n = self.n * p.sqrt();
        let (c, m, t) = self.iteration(n, p);
        let t1 = self.iteration(self.n, 1.0).2;
        Ok(ScalingPoint {
            p,
            n,
            compute_s: c,
            comm_s: m,
            time_s: t,
            speedup: p * t1 / t,
            efficiency: t1 / t,
        })
    }

    /// Rows per processor at which communication equals computation under
    /// strong scaling: rows* = comm / (N·t_update) (§4.1).
    pub fn crossover_rows(&self) -> f64 {
        self.comm_s(self.n, 2.0) / (self.n * self.update_s)
    }

    /// The P at which communication equals computation: P* = N / rows*.
    pub fn crossover_p(&self) -> f64 {
        self.n / self.crossover_rows()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lecture(overlap: bool) -> GhostStencil {
        let net = AlphaBeta::new(2e-6, 6.4e9).unwrap();
        GhostStencil::new(4096.0, 2.0 / 3e9, 4.0, 1.0, net, overlap).unwrap()
    }

    #[test]
    fn crossover_has_equal_parts() {
        let s = lecture(false);
        let pt = s.strong(s.crossover_p()).unwrap();
        assert!((pt.compute_s - pt.comm_s).abs() / pt.comm_s < 1e-9);
    }

    #[test]
    fn overlap_never_slower() {
        for p in [1.0, 4.0, 64.0, 1024.0, 4096.0] {
            let a = lecture(false).strong(p).unwrap();
            let b = lecture(true).strong(p).unwrap();
            assert!(b.time_s <= a.time_s);
            assert!(a.efficiency <= 1.0 + 1e-12);
        }
    }

    #[test]
    fn weak_scaling_keeps_compute_constant() {
        let s = lecture(false);
        let a = s.weak(4.0).unwrap();
        let b = s.weak(64.0).unwrap();
        assert!((a.compute_s - b.compute_s).abs() < 1e-15);
        assert!(b.comm_s > a.comm_s);
        assert!(b.efficiency < a.efficiency);
    }
}
