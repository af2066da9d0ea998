//! Loop fusion (lecture §2.7.2, §3.2): E = D + (A+B)·C in three passes with
//! two temporaries against one fused pass, on f32 arrays split into one
//! contiguous chunk per pinned thread.
//!
//! Traffic per element (4 B each): three passes load 6 and store 3 (9
//! transfers, 12 with write-allocate); the fused pass loads 4 and stores 1
//! (5, or 6). Both are bandwidth-bound far left of the ridge point.

use calibrate::kernels::Isa;
use calibrate::mem::huge_page_vec;
use models::locality::{three_pass, FUSED};
use models::profile::CeilingKernel;

use super::work::{Demand, Work};

/// One thread's arrays.
pub struct Arrays {
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    pub c: Vec<f32>,
    pub d: Vec<f32>,
    pub e: Vec<f32>,
    pub t1: Vec<f32>,
    pub t2: Vec<f32>,
}

impl Arrays {
    /// `n` elements each, with values that depend on the global index so a
    /// misplaced element shows in the checks.
    pub fn new(n: usize, offset: usize) -> Self {
        let f = |k: f32| huge_page_vec(n, |i| ((offset + i) % 1024) as f32 * 1e-3 + k);
        let zeros = || huge_page_vec(n, |_| 0.0);
        Self {
            a: f(0.0),
            b: f(1.0),
            c: f(0.5),
            d: f(2.0),
            e: zeros(),
            t1: zeros(),
            t2: zeros(),
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

    /// Declared work for `n` elements per thread on `threads` threads.
    pub fn work(self, n_per_thread: usize, threads: usize) -> Work {
        let n = (n_per_thread * threads) as f64;
        let per_thread_bytes = (7 * n_per_thread * 4) as f64;
        let (t, extra_flops) = match self {
            Variant::ThreePass => (three_pass(), 0.0),
            Variant::Fused | Variant::FusedNoCompute | Variant::FusedOneElement => (FUSED, 0.0),
            Variant::FusedExtraMath => (FUSED, 8.0),
        };
        let mut demands = Vec::new();
        if self != Variant::FusedNoCompute {
            demands.push(Demand::Flops {
                flops: n * (t.flops + extra_flops),
                precision: "f32",
                ceiling: CeilingKernel::Registers,
            });
        }
        if self != Variant::FusedOneElement {
            demands.push(Demand::Memory {
                bytes: n * t.bytes(4.0, false),
                bytes_wa: n * t.bytes(4.0, true),
                // Two loads per store in every pass: the triad's mix.
                mix: "triad",
                per_thread_bytes,
            });
        }
        Work { demands }
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
}
