//! Loop fusion (lecture §2.7.2, §3.2): E = D + (A+B)·C in three passes with
//! two temporaries against one fused pass, on f32 arrays split into one
//! contiguous chunk per pinned thread.
//!
//! Traffic per element (4 B each): three passes load 6 and store 3 (9
//! transfers, 12 with write-allocate); the fused pass loads 4 and stores 1
//! (5, or 6). Both are bandwidth-bound far left of the ridge point.

use calibrate::harness::kernels::Isa;
use calibrate::harness::mem::Array;
use models::kernel::{ArrayUse, LoopKernel, Mode, Precision};
use models::locality::{FUSED, THREE_PASS_EACH};

use anyhow::{ensure, Result};

use super::described::{loops_work, Build};
use super::team::{per_thread, team, time_states};
use super::work::{Demand, Work};
use super::NoWork;
use super::{measurement, thread_counts, widest, Kernel, Measurement, Options};
use crate::error::BadInput;
use crate::eval::derivation::plain;
use crate::record::Record;

/// One thread's arrays.
pub struct Arrays {
    pub a: Array<f32>,
    pub b: Array<f32>,
    pub c: Array<f32>,
    pub d: Array<f32>,
    pub e: Array<f32>,
    pub t1: Array<f32>,
    pub t2: Array<f32>,
}

impl Arrays {
    /// `n` elements each, with values that depend on the global index so a
    /// misplaced element shows in the checks.
    pub fn new(n: usize, offset: usize) -> Self {
        let f = |slot, k: f32| Array::new(n, slot, |i| ((offset + i) % 1024) as f32 * 1e-3 + k);
        let zeros = |slot| Array::new(n, slot, |_| 0.0);
        Self {
            a: f(0, 0.0),
            b: f(1, 1.0),
            c: f(2, 0.5),
            d: f(3, 2.0),
            e: zeros(4),
            t1: zeros(5),
            t2: zeros(6),
        }
    }

    /// Bytes of the seven arrays.
    pub fn bytes(&self) -> usize {
        7 * self.a.len() * 4
    }
}

/// The variants: the two codes, and the high-watermark experiments of the
/// fused one (§5 point 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    ThreePass,
    Fused,
    /// Fused with 8 more dependent flops per element (instruction-bound?).
    FusedExtraMath,
    /// Fused with every access to element 0 (locality headroom).
    FusedOneElement,
    /// The fused loop's accesses with the arithmetic replaced by bit
    /// operations (bandwidth-bound?).
    FusedNoCompute,
}

impl Variant {
    pub const MAIN: [Variant; 2] = [Variant::ThreePass, Variant::Fused];
    pub const WATERMARKS: [Variant; 3] = [
        Variant::FusedExtraMath,
        Variant::FusedOneElement,
        Variant::FusedNoCompute,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::ThreePass => "three-pass",
            Variant::Fused => "fused",
            Variant::FusedExtraMath => "fused+extra-math",
            Variant::FusedOneElement => "fused+one-element",
            Variant::FusedNoCompute => "fused+no-compute",
        }
    }

    /// The loops the variant runs, described by their work: three passes
    /// of two loads and a store each, or the fused loop's four loads and a
    /// store (§2.7.2), over `n_per_thread` f32 elements per thread.
    pub fn loops(self, n_per_thread: usize, threads: usize) -> Vec<LoopKernel> {
        let f32 = |name: &str, mode| ArrayUse::contiguous(name, mode, 4.0);
        // Each element's flops are one chain, each waiting for the one
        // before: a + b, then ·c, then + d, and the extra math's multiplies
        // and adds after them.
        let kernel = |arrays, flops| LoopKernel {
            flops,
            span: flops,
            precision: Precision::F32,
            ..LoopKernel::streaming((n_per_thread * threads) as f64, threads, arrays)
        };
        let pass = |x, y, out| {
            kernel(
                vec![
                    f32(x, Mode::Load),
                    f32(y, Mode::Load),
                    f32(out, Mode::Store),
                ],
                THREE_PASS_EACH.flops,
            )
        };
        let extra = if self == Variant::FusedExtraMath {
            8.0
        } else {
            0.0
        };
        match self {
            Variant::ThreePass => vec![
                pass("a", "b", "t1"),
                pass("t1", "c", "t2"),
                pass("t2", "d", "e"),
            ],
            _ => vec![kernel(
                vec![
                    f32("a", Mode::Load),
                    f32("b", Mode::Load),
                    f32("c", Mode::Load),
                    f32("d", Mode::Load),
                    f32("e", Mode::Store),
                ],
                FUSED.flops + extra,
            )],
        }
    }

    /// The work to predict from, or why this variant has none: with one
    /// element in registers the loop is left with its scalar stores and
    /// `black_box` round trips per element, loop overhead for which the
    /// profile has no figure.
    pub fn declared(self, n_per_thread: usize, threads: usize) -> Result<Work, NoWork> {
        match self {
            Variant::FusedOneElement => Err(NoWork::Unmodelled(
                "one element per thread leaves scalar per-element loop overhead, which no profile figure describes",
            )),
            _ => Ok(self.work(n_per_thread, threads)),
        }
    }

    /// Declared work for `n` elements per thread on `threads` threads: the
    /// loops' demands over the seven arrays the kernel allocates; the
    /// watermark variants drop the term their experiment removes.
    pub fn work(self, n_per_thread: usize, threads: usize) -> Work {
        let per_thread_bytes = (7 * n_per_thread * 4) as f64;
        let mut w = loops_work(
            &self.loops(n_per_thread, threads),
            Build::builtin(),
            per_thread_bytes,
        );
        w.demands.retain(|d| match d {
            Demand::Flops { .. } | Demand::Span { .. } => self != Variant::FusedNoCompute,
            Demand::Memory { .. } => self != Variant::FusedOneElement,
            _ => true,
        });
        w
    }
}

/// Runs `v` once over a thread's arrays.
pub fn run(v: Variant, x: &mut Arrays) {
    let isa = Isa::detect();
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: Isa::detect only returns levels the CPU supports.
        Isa::Avx2 | Isa::Avx512 => unsafe { run_avx2(v, x) },
        _ => run_generic(v, x),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2(v: Variant, x: &mut Arrays) {
    run_generic(v, x)
}

#[inline(always)]
fn run_generic(v: Variant, x: &mut Arrays) {
    let Arrays {
        a,
        b,
        c,
        d,
        e,
        t1,
        t2,
    } = x;
    match v {
        Variant::ThreePass => {
            t1.iter_mut()
                .zip(a.iter().zip(b.iter()))
                .for_each(|(t, (a, b))| *t = a + b);
            t2.iter_mut()
                .zip(t1.iter().zip(c.iter()))
                .for_each(|(t, (x, c))| *t = x * c);
            e.iter_mut()
                .zip(t2.iter().zip(d.iter()))
                .for_each(|(e, (x, d))| *e = x + d);
        }
        Variant::Fused => fused(a, b, c, d, e),
        Variant::FusedExtraMath => e
            .iter_mut()
            .zip(a.iter().zip(b.iter()))
            .zip(c.iter().zip(d.iter()))
            .for_each(|((e, (a, b)), (c, d))| {
                let mut v = d + (a + b) * c;
                for _ in 0..4 {
                    v = v * 0.999 + 0.001;
                }
                *e = v;
            }),
        Variant::FusedOneElement => {
            let (a0, b0, c0, d0) = (a[0], b[0], c[0], d[0]);
            let (a0, b0, c0, d0) = std::hint::black_box((a0, b0, c0, d0));
            let n = e.len();
            let e0 = &mut e[..n.min(16)];
            for _ in 0..n / e0.len().max(1) {
                e0.iter_mut()
                    .for_each(|e| *e = std::hint::black_box(d0 + (a0 + b0) * c0));
            }
        }
        Variant::FusedNoCompute => e
            .iter_mut()
            .zip(a.iter().zip(b.iter()))
            .zip(c.iter().zip(d.iter()))
            .for_each(|((e, (a, b)), (c, d))| {
                *e = f32::from_bits(a.to_bits() ^ b.to_bits() ^ c.to_bits() ^ d.to_bits());
            }),
    }
}

#[inline(always)]
fn fused(a: &[f32], b: &[f32], c: &[f32], d: &[f32], e: &mut [f32]) {
    e.iter_mut()
        .zip(a.iter().zip(b.iter()))
        .zip(c.iter().zip(d.iter()))
        .for_each(|((e, (a, b)), (c, d))| *e = d + (a + b) * c);
}

/// Fusion: `size` elements per array (default 16 Mi f32 = 64 MiB each).
pub struct Fusion;

impl Kernel for Fusion {
    fn name(&self) -> &'static str {
        "fusion"
    }

    fn run(&self, o: &Options) -> Result<Vec<Measurement>> {
        let n = o.size.unwrap_or(16 << 20);
        let mut out = Vec::new();
        for threads in thread_counts(o) {
            ensure!(
                n >= 16 * threads,
                BadInput(format!(
                    "--size {n} is too small for fusion on {threads} threads: at least {} elements",
                    16 * threads
                ))
            );
            let team = team(threads)?;
            let per = n / threads;
            let states = per_thread(&team, |i| Arrays::new(per, i * per));
            let variants: Vec<Variant> = if threads == o.threads {
                Variant::MAIN
                    .into_iter()
                    .chain(Variant::WATERMARKS)
                    .collect()
            } else {
                Variant::MAIN.to_vec()
            };
            for v in variants {
                let work = v.declared(per, threads);
                let mut beside = o.beside(&work, threads);
                let s = time_states(&team, &o.plan, &mut beside, &states, |_, x| run(v, x))?;
                let paired = beside.finish();
                let verified = v != Variant::ThreePass && v != Variant::Fused
                    || states.iter().all(|m| {
                        let x = m.lock().unwrap_or_else(|e| e.into_inner());
                        (0..x.e.len())
                            .step_by(97)
                            .all(|i| x.e[i] == x.d[i] + (x.a[i] + x.b[i]) * x.c[i])
                    });
                out.push(
                    measurement("fusion", v.name(), threads, n, s, work, verified)
                        .with_paired(paired),
                );
            }
        }
        Ok(out)
    }

    fn pairs(&self) -> &'static [(&'static str, &'static str)] {
        &[("three-pass", "fused")]
    }

    /// Extra math leaves a bandwidth-bound loop's time alone, one element
    /// makes it fast, dropping the compute changes little.
    fn bottleneck(&self, records: &[Record]) -> Option<String> {
        let find = |v| widest(records, "fusion", v);
        let base = find("fused")?;
        let r = |v| find(v).map(|x| x.measured_s / base.measured_s);
        let (re, ro, rn) = (
            r("fused+extra-math")?,
            r("fused+one-element")?,
            r("fused+no-compute")?,
        );
        let measured = if rn > 0.8 && ro < 0.5 && re < 1.3 {
            "memory bandwidth"
        } else if re > 1.5 {
            "compute"
        } else {
            "mixed"
        };
        Some(format!(
            "fusion (fused, {} thr): extra math ×{}, one element ×{}, no compute ×{} → measured bottleneck: {measured}; model: {}",
            base.threads,
            plain(re),
            plain(ro),
            plain(rn),
            base.binding.as_deref().unwrap_or("no prediction")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_codes_give_the_same_e() {
        let mut x = Arrays::new(1000, 7);
        run(Variant::ThreePass, &mut x);
        let three = x.e.clone();
        x.e.fill(0.0);
        run(Variant::Fused, &mut x);
        // (a+b)·c then + d, in the same order in both: bit-identical.
        assert_eq!(three, x.e);
        let i = 123;
        assert_eq!(x.e[i], x.d[i] + (x.a[i] + x.b[i]) * x.c[i]);
    }

    #[test]
    fn declared_traffic_matches_the_lecture() {
        let w3 = Variant::ThreePass.work(1000, 2);
        let w1 = Variant::Fused.work(1000, 2);
        assert_eq!(w3.bytes(), 2000.0 * 36.0);
        assert_eq!(w1.bytes(), 2000.0 * 20.0);
        assert_eq!(w3.flops(), w1.flops());
        assert_eq!(Variant::FusedNoCompute.work(10, 1).flops(), 0.0);
        assert_eq!(Variant::FusedOneElement.work(10, 1).bytes(), 0.0);
    }

    /// Each element's flops are one chain: the three passes' one-flop
    /// chains add up to one term over 3 × 1000 elements per thread, the
    /// fused loop's is 3 deep, the extra math's 11, and the loop without
    /// compute has none.
    #[test]
    fn declared_spans_follow_each_elements_chain() {
        let spans = |v: Variant| -> Vec<(f64, f64)> {
            v.work(1000, 2)
                .demands
                .into_iter()
                .filter_map(|d| match d {
                    Demand::Span {
                        depth,
                        elements_per_thread,
                        ..
                    } => Some((depth, elements_per_thread)),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(spans(Variant::ThreePass), [(1.0, 3000.0)]);
        assert_eq!(spans(Variant::Fused), [(3.0, 1000.0)]);
        assert_eq!(spans(Variant::FusedExtraMath), [(11.0, 1000.0)]);
        assert!(spans(Variant::FusedNoCompute).is_empty());
    }
}
