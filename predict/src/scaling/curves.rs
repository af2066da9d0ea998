//! The scaling models, each a function of P and of a parameter vector θ
//! (so the Monte Carlo of [`super::uncertainty`] can redraw θ).
//!
//! * [`Stencil`]: the ghost-row Jacobi solver (lecture §3.1, §4.1, §4.2)
//!   through [`models::stencil::GhostStencil`]; θ = [t_update, T0₁, B₁,
//!   T0₂, B₂, …], one (T0, B) per protocol regime of the network, the
//!   regime chosen by the ghost row's size N·elem.
//! * [`Binning`]: binning n items with p threads (§2.9, §3.5, §4.5) through
//!   [`models::contention`] and [`models::binning`]; θ = [t_crit, t_work,
//!   B_1thread, B_all].
//! * [`Fitted`]: T(P) = T1·(f + (1 − f)/P) + c·g(P), Amdahl's law (§4.6)
//!   plus the communication term g chosen by [`super::fit`] from a user's
//!   runs ([`super::terms`]); θ = [T1, f, c].
//! * [`super::comm::OwnCode`]: the same computation with the
//!   communication the user describes (`--comm`), costed on a network.
//!
//! Every point splits its time into a parallel part (`compute_s`, falls
//! with P) and a part that does not fall (`comm_s`: messages, a lock's
//! serialisation, saturated bandwidth); the crossover P is where the second
//! catches up with the first.

use models::alpha_beta::AlphaBeta;
use models::binning::{costs, BinningInputs, Strategy};
use models::contention::{per_bucket_time_s, SerializedLock};
use models::profile::SizeRange;
use models::stencil::GhostStencil;
use serde::Serialize;

use super::terms::{self, Domain as TermDomain, Term};

/// One point of a scaling curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub p: f64,
    pub time_s: f64,
    /// The part of the time that parallelises.
    pub compute_s: f64,
    /// The part that does not: communication, serialisation, saturation.
    pub comm_s: f64,
    /// T(1)/T(P) (strong) or P·T(1)/T(P) (weak, scaled speed-up).
    pub speedup: f64,
    /// speed-up / P.
    pub efficiency: f64,
}

impl Point {
    /// A strong-scaling point: speed-up T(1)/T(P) and efficiency from the
    /// one-process time `t1`.
    pub fn strong(p: f64, t1: f64, time_s: f64, compute_s: f64, comm_s: f64) -> Self {
        Self {
            p,
            time_s,
            compute_s,
            comm_s,
            speedup: t1 / time_s,
            efficiency: t1 / time_s / p,
        }
    }

    fn nan(p: f64) -> Self {
        Self {
            p,
            time_s: f64::NAN,
            compute_s: f64::NAN,
            comm_s: f64::NAN,
            speedup: f64::NAN,
            efficiency: f64::NAN,
        }
    }
}

/// Whether P may be fractional on the curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    /// Ranks of a continuous model (reported rounded).
    Continuous,
    /// Threads: whole numbers only.
    Integer,
}

/// A scaling model.
pub trait Curve {
    /// The point at P with parameters θ.
    fn point(&self, theta: &[f64], p: f64) -> Point;
    /// Continuous unless the model counts whole threads.
    fn domain(&self) -> Domain {
        Domain::Continuous
    }
    /// What the crossover P means: by default where the communication
    /// equals the parallel work.
    fn crossover_label(&self) -> &'static str {
        "communication = parallel work"
    }
}

/// A network protocol regime's size range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Range {
    pub from_bytes: f64,
    pub to_bytes: f64,
}

impl SizeRange for Range {
    fn first_bytes(&self) -> f64 {
        self.from_bytes
    }
    fn last_bytes(&self) -> f64 {
        self.to_bytes
    }
}

/// The regime serving a message of `bytes`: the profile's one selector
/// ([`models::profile::regime_index`]: the range that holds it, in a gap
/// the nearer neighbour, outside the first or last); 0 without regimes.
pub fn regime_index(ranges: &[Range], bytes: f64) -> usize {
    models::profile::regime_index(ranges, bytes).unwrap_or(0)
}

/// The ghost-row stencil on one network.
#[derive(Debug, Clone, PartialEq)]
pub struct Stencil {
    /// Grid side N (at P = 1 for weak scaling).
    pub n: f64,
    pub elem_bytes: f64,
    /// Start-ups per iteration (1 in the lecture's §4.1).
    pub messages: f64,
    /// Exchange overlapped with the interior update: max instead of sum.
    pub overlap: bool,
    /// Weak scaling: N(P) = N·√P.
    pub weak: bool,
    /// The network's regimes, in θ order after t_update.
    pub regimes: Vec<Range>,
}

impl Stencil {
    /// Bytes of one ghost row at P.
    pub fn message_bytes(&self, p: f64) -> f64 {
        let n = if self.weak { self.n * p.sqrt() } else { self.n };
        n * self.elem_bytes
    }

    fn model(&self, theta: &[f64], p: f64) -> Option<GhostStencil> {
        let bytes = self.message_bytes(p);
        let r = regime_index(&self.regimes, bytes);
        let (t0, b) = (*theta.get(1 + 2 * r)?, *theta.get(2 + 2 * r)?);
        // A regime's line holds from its first size on; a message below it
        // (no regime serves that size) must still get a positive time.
        let from = self
            .regimes
            .get(r)
            .map_or(bytes, |g| g.from_bytes.min(bytes));
        let net = AlphaBeta::regime(t0, b, from).ok()?;
        GhostStencil::new(
            self.n,
            theta[0],
            self.elem_bytes,
            self.messages,
            net,
            self.overlap,
        )
        .ok()
    }
}

impl Curve for Stencil {
    fn point(&self, theta: &[f64], p: f64) -> Point {
        let Some(s) = self.model(theta, p) else {
            return Point::nan(p);
        };
        let r = if self.weak { s.weak(p) } else { s.strong(p) };
        match r {
            Ok(sp) => Point {
                p,
                time_s: sp.time_s,
                compute_s: sp.compute_s,
                comm_s: sp.comm_s,
                speedup: sp.speedup,
                efficiency: sp.efficiency,
            },
            Err(_) => Point::nan(p),
        }
    }

    fn crossover_label(&self) -> &'static str {
        "communication = computation"
    }
}

/// Binning `items` into `buckets` with p threads; θ = [t_crit, t_work,
/// B_1thread, B_all].
#[derive(Debug, Clone, PartialEq)]
pub struct Binning {
    pub strategy: Strategy,
    pub items: f64,
    pub buckets: f64,
    /// Extra bytes per item the data-parallel sort moves (20 in §3.5).
    pub sort_bytes: f64,
}

impl Binning {
    /// (time, parallel part, part that does not parallelise) at p threads.
    fn parts(&self, theta: &[f64], p: f64) -> Option<(f64, f64, f64)> {
        let (tc, tw, b1, ball) = (theta[0], theta[1], theta[2], theta[3]);
        let n = self.items;
        let lock = SerializedLock::new(tc, tw).ok()?;
        match self.strategy {
            Strategy::GlobalLock => Some((lock.time_s(n, p).ok()?, n * (tc + tw) / p, n * tc)),
            Strategy::BucketLocks => Some((
                per_bucket_time_s(&lock, n, p, self.buckets).ok()?,
                n * (tc + tw) / p,
                n * tc / p.min(self.buckets),
            )),
            Strategy::DataParallel => {
                let c = costs(&BinningInputs {
                    items: n,
                    global_lock_op_s: tc,
                    bucket_lock_op_s: tc,
                    sort_bytes_per_item: self.sort_bytes,
                    bandwidth_Bps: (p * b1).min(ball),
                    sort_op_s: 0.0,
                })
                .ok()?;
                Some((
                    c.data_parallel_s,
                    n * self.sort_bytes / (p * b1),
                    n * self.sort_bytes / ball,
                ))
            }
        }
    }
}

impl Curve for Binning {
    fn point(&self, theta: &[f64], p: f64) -> Point {
        match (self.parts(theta, 1.0), self.parts(theta, p)) {
            (Some((t1, _, _)), Some((t, c, m))) => Point::strong(p, t1, t, c, m),
            _ => Point::nan(p),
        }
    }

    fn domain(&self) -> Domain {
        Domain::Integer
    }

    fn crossover_label(&self) -> &'static str {
        "the shared resource saturates"
    }
}

/// T(P) = T1·(f + (1 − f)/P) + c·g(P); θ = [T1, f, c].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fitted {
    pub term: Term,
    pub domain: Option<TermDomain>,
}

impl Curve for Fitted {
    fn point(&self, theta: &[f64], p: f64) -> Point {
        let t = terms::time_s(self.term, self.domain, theta, p);
        let compute = theta[0] * (1.0 - theta[1]) / p;
        let comm = theta[2] * self.term.g(p, self.domain);
        Point::strong(p, theta[0], t, compute, comm)
    }
}

/// The lecture's §4.1 grid: N = 4096, 4-byte elements, one start-up per
/// iteration, one network regime.
#[cfg(test)]
pub(crate) fn lecture_stencil() -> Stencil {
    Stencil {
        n: 4096.0,
        elem_bytes: 4.0,
        messages: 1.0,
        overlap: false,
        weak: false,
        regimes: vec![Range {
            from_bytes: 0.0,
            to_bytes: f64::INFINITY,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lecture() -> (Stencil, Vec<f64>) {
        (lecture_stencil(), vec![2.0 / 3e9, 2e-6, 6.4e9])
    }

    #[test]
    fn stencil_matches_the_lecture_example() {
        let (s, theta) = lecture();
        // §4.1: P = 64 -> compute 174.8 us, comm 7.12 us.
        let pt = s.point(&theta, 64.0);
        assert!(
            (pt.compute_s - 174.76e-6).abs() < 0.01e-6,
            "{}",
            pt.compute_s
        );
        assert!((pt.comm_s - 7.12e-6).abs() < 1e-12);
        assert_eq!(s.point(&theta, 1.0).speedup, 1.0);
    }

    #[test]
    fn a_large_message_regime_may_have_a_negative_intercept() {
        // A slow link's large-message line: T(n) = -132 µs + n / 25 MB/s
        // from 64 KiB. The 16 KiB rows of N = 4096 are in it: comm =
        // -132 µs + 32 KiB / 25 MB/s = 1.179 ms.
        let s = Stencil {
            regimes: vec![
                Range {
                    from_bytes: 0.0,
                    to_bytes: 4096.0,
                },
                Range {
                    from_bytes: 8192.0,
                    to_bytes: 1e9,
                },
            ],
            ..lecture_stencil()
        };
        let theta = [2.0 / 3e9, 20e-6, 100e6, -132e-6, 25e6];
        let pt = s.point(&theta, 4.0);
        let comm = -132e-6 + 32768.0 / 25e6;
        assert!((pt.comm_s - comm).abs() < 1e-12, "{}", pt.comm_s);
        // An intercept so negative that the line is below zero at the
        // regime's first size is no network.
        let bad = [2.0 / 3e9, 20e-6, 100e6, -1e-3, 25e6];
        assert!(s.point(&bad, 4.0).comm_s.is_nan());
    }

    #[test]
    fn regimes_by_message_size() {
        let r = [
            Range {
                from_bytes: 1.0,
                to_bytes: 4096.0,
            },
            Range {
                from_bytes: 4096.0,
                to_bytes: 1e6,
            },
        ];
        assert_eq!(regime_index(&r, 100.0), 0);
        assert_eq!(regime_index(&r, 16384.0), 1);
        assert_eq!(regime_index(&r, 0.5), 0);
        assert_eq!(regime_index(&r, 1e9), 1);
        // A size in the gap between the first two of three regimes goes
        // to the nearer one, as in the stencil model, not to the last.
        let gap = [
            Range {
                from_bytes: 1.0,
                to_bytes: 2048.0,
            },
            Range {
                from_bytes: 4096.0,
                to_bytes: 1e6,
            },
            Range {
                from_bytes: 2e6,
                to_bytes: 16e6,
            },
        ];
        assert_eq!(regime_index(&gap, 3000.0), 0);
        assert_eq!(regime_index(&gap, 3500.0), 1);
        assert_eq!(regime_index(&gap, 1.6e6), 2);
        assert_eq!(regime_index(&[], 1.0), 0);
    }

    #[test]
    fn binning_locks_saturate() {
        let theta = [40e-9, 120e-9, 10e9, 20e9];
        let g = Binning {
            strategy: Strategy::GlobalLock,
            items: 1e6,
            buckets: 256.0,
            sort_bytes: 20.0,
        };
        // Saturation at (t_crit + t_work)/t_crit = 4 threads.
        assert!((g.point(&theta, 4.0).speedup - 4.0).abs() < 1e-9);
        assert!((g.point(&theta, 16.0).speedup - 4.0).abs() < 1e-9);
        let d = Binning {
            strategy: Strategy::DataParallel,
            ..g
        };
        assert!((d.point(&theta, 2.0).speedup - 2.0).abs() < 1e-9);
        assert!((d.point(&theta, 8.0).speedup - 2.0).abs() < 1e-9);
    }

    #[test]
    fn fitted_without_communication_is_amdahl() {
        let f = Fitted {
            term: Term::Log2P,
            domain: None,
        };
        let pt = f.point(&[8.0, 0.05, 0.0], 16.0);
        let amdahl = models::speedup::amdahl_speedup(0.05, 16.0).unwrap();
        assert!((pt.speedup - amdahl).abs() < 1e-12);
    }
}
