//! Peak floating-point throughput: independent multiply-add chains that never
//! touch memory.
//!
//! Each kernel keeps `ACC` accumulators in registers and updates every one
//! per iteration, acc ← acc·a + b. An FMA unit with latency λ cycles and π
//! pipes needs at least λ·π independent chains to stay busy (e.g. 4·2 = 8);
//! the kernels use 12 (16 registers: AVX2, scalar) or 16 (32 registers:
//! AVX-512), at least 1.5× that bound. `a` is just below 1 and `b` tiny, so
//! values stay normal (no denormal slow path) for the iteration counts used.
//!
//! FLOP per iteration = ACC · lanes · 2 for FMA (one multiply and one add per
//! lane) and ACC · lanes · 1 for the separate multiply/add kernel, where half
//! the accumulators are multiplied and half added. The results are summed and
//! passed through [`black_box`], so the loop cannot be folded away.

use std::hint::black_box;

use super::Isa;

/// Floating-point precision (f64 or f32), the one the loop descriptions use.
pub use models::kernel::Precision;

/// How the multiply and the add are issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Fused multiply-add: 2 FLOP per lane per instruction.
    Fma,
    /// Separate multiplies and adds, half of each: 1 FLOP per lane per instruction.
    MulAdd,
}

/// One FLOP kernel: precision, instruction set and operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FlopKernel {
    /// Element type.
    pub precision: Precision,
    /// Instruction set the kernel is compiled for.
    pub isa: Isa,
    /// Fused or separate multiply and add.
    pub op: Op,
}

/// Accumulators of the AVX-512 kernels: twice the 8 chains two FMA units of
/// 4-cycle latency need. With 24 of the 32 registers the compiler spilled
/// one f64 accumulator to the stack and the kernel ran at 0.45× the peak.
const ACC_WIDE: usize = 16;
/// Accumulators of the AVX2 and scalar kernels (16 vector registers).
const ACC_NARROW: usize = 12;

impl FlopKernel {
    /// The peak kernel of `precision` on this CPU: the widest SIMD it
    /// runs, with FMA when it has it, else separate multiplies and adds.
    pub fn widest(precision: Precision) -> Self {
        let fma = Self {
            precision,
            isa: Isa::detect(),
            op: Op::Fma,
        };
        if fma.available() {
            fma
        } else {
            Self {
                op: Op::MulAdd,
                ..fma
            }
        }
    }

    /// Independent accumulator chains the kernel keeps.
    pub fn accumulators(&self) -> usize {
        match self.isa {
            Isa::Avx512 => ACC_WIDE,
            _ => ACC_NARROW,
        }
    }

    /// Floating-point operations per loop iteration.
    pub fn flops_per_iteration(&self) -> f64 {
        let per_lane = match self.op {
            Op::Fma => 2.0,
            Op::MulAdd => 1.0,
        };
        (self.accumulators() * self.isa.lanes(self.precision)) as f64 * per_lane
    }

    /// A label such as "f64 avx512 fma".
    pub fn label(&self) -> String {
        let op = match self.op {
            Op::Fma => "fma",
            Op::MulAdd => "mul+add",
        };
        format!("{} {} {}", self.precision.name(), self.isa, op)
    }

    /// Whether the running CPU can run it.
    pub fn available(&self) -> bool {
        self.isa.supported()
            && (self.op == Op::MulAdd || self.isa != Isa::Scalar || Isa::scalar_fma())
    }

    /// Runs `iters` iterations and returns the folded accumulators.
    ///
    /// # Panics
    /// If the CPU cannot run the kernel (see [`available`](Self::available)).
    pub fn run(&self, iters: u64) -> f64 {
        assert!(
            self.available(),
            "{} is not available on this CPU",
            self.label()
        );
        let (a, b) = (black_box(0.999_999_9), black_box(1e-7));
        let r = match (self.isa, self.precision, self.op) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY (all x86 arms): `available` checked the CPU features
            // each target_feature function is compiled for.
            (Isa::Avx512, Precision::F64, Op::Fma) => unsafe { x86::fma_pd512(iters, a, b) },
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx512, Precision::F64, Op::MulAdd) => unsafe { x86::muladd_pd512(iters, a, b) },
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx512, Precision::F32, Op::Fma) => unsafe {
                x86::fma_ps512(iters, a as f32, b as f32)
            },
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx512, Precision::F32, Op::MulAdd) => unsafe {
                x86::muladd_ps512(iters, a as f32, b as f32)
            },
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, Precision::F64, Op::Fma) => unsafe { x86::fma_pd256(iters, a, b) },
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, Precision::F64, Op::MulAdd) => unsafe { x86::muladd_pd256(iters, a, b) },
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, Precision::F32, Op::Fma) => unsafe {
                x86::fma_ps256(iters, a as f32, b as f32)
            },
            #[cfg(target_arch = "x86_64")]
            (Isa::Avx2, Precision::F32, Op::MulAdd) => unsafe {
                x86::muladd_ps256(iters, a as f32, b as f32)
            },
            #[cfg(target_arch = "x86_64")]
            (Isa::Scalar, Precision::F64, Op::Fma) => unsafe { x86::fma_sd(iters, a, b) },
            #[cfg(target_arch = "x86_64")]
            (Isa::Scalar, Precision::F32, Op::Fma) => unsafe {
                x86::fma_ss(iters, a as f32, b as f32)
            },
            (_, Precision::F64, _) => scalar_muladd::<f64>(iters, a, b),
            (_, Precision::F32, _) => scalar_muladd::<f32>(iters, a as f32, b as f32) as f64,
        };
        black_box(r)
    }
}

/// Scalar separate multiply/add chains (also the fallback off x86-64).
fn scalar_muladd<T>(iters: u64, a: T, b: T) -> T
where
    T: Copy + std::ops::Mul<Output = T> + std::ops::Add<Output = T> + From<f32> + std::iter::Sum,
{
    let mut acc = [T::from(1.0f32); ACC_NARROW];
    for _ in 0..iters {
        for (j, x) in acc.iter_mut().enumerate() {
            *x = if j % 2 == 0 { *x * a } else { *x + b };
        }
    }
    acc.into_iter().sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{ACC_NARROW, ACC_WIDE};
    use std::arch::x86_64::*;

    /// Defines a kernel: `$acc` accumulators of `$vt`, `$body` updating
    /// accumulator `j` (even/odd split for mul+add), `$sum` folding one
    /// accumulator to a scalar.
    macro_rules! flop_kernel {
        ($name:ident, $feat:literal, $t:ty, $vt:ty, $acc:expr, $set1:ident,
         |$x:ident, $a:ident, $b:ident, $j:ident| $body:expr, |$v:ident| $sum:expr) => {
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $name(iters: u64, a: $t, b: $t) -> f64 {
                let ($a, $b) = ($set1(a), $set1(b));
                let mut acc: [$vt; $acc] = [$set1(1.0); $acc];
                for _ in 0..iters {
                    for $j in 0..$acc {
                        let $x = acc[$j];
                        acc[$j] = $body;
                    }
                }
                let mut total = 0.0f64;
                for $v in acc {
                    total += $sum as f64;
                }
                total
            }
        };
    }

    flop_kernel!(
        fma_pd512,
        "avx512f",
        f64,
        __m512d,
        ACC_WIDE,
        _mm512_set1_pd,
        |x, a, b, _j| _mm512_fmadd_pd(x, a, b),
        |v| _mm512_reduce_add_pd(v)
    );
    flop_kernel!(
        muladd_pd512,
        "avx512f",
        f64,
        __m512d,
        ACC_WIDE,
        _mm512_set1_pd,
        |x, a, b, j| if j % 2 == 0 {
            _mm512_mul_pd(x, a)
        } else {
            _mm512_add_pd(x, b)
        },
        |v| _mm512_reduce_add_pd(v)
    );
    flop_kernel!(
        fma_ps512,
        "avx512f",
        f32,
        __m512,
        ACC_WIDE,
        _mm512_set1_ps,
        |x, a, b, _j| _mm512_fmadd_ps(x, a, b),
        |v| _mm512_reduce_add_ps(v)
    );
    flop_kernel!(
        muladd_ps512,
        "avx512f",
        f32,
        __m512,
        ACC_WIDE,
        _mm512_set1_ps,
        |x, a, b, j| if j % 2 == 0 {
            _mm512_mul_ps(x, a)
        } else {
            _mm512_add_ps(x, b)
        },
        |v| _mm512_reduce_add_ps(v)
    );
    flop_kernel!(
        fma_pd256,
        "avx2,fma",
        f64,
        __m256d,
        ACC_NARROW,
        _mm256_set1_pd,
        |x, a, b, _j| _mm256_fmadd_pd(x, a, b),
        |v| hsum_pd256(v)
    );
    flop_kernel!(
        muladd_pd256,
        "avx2,fma",
        f64,
        __m256d,
        ACC_NARROW,
        _mm256_set1_pd,
        |x, a, b, j| if j % 2 == 0 {
            _mm256_mul_pd(x, a)
        } else {
            _mm256_add_pd(x, b)
        },
        |v| hsum_pd256(v)
    );
    flop_kernel!(
        fma_ps256,
        "avx2,fma",
        f32,
        __m256,
        ACC_NARROW,
        _mm256_set1_ps,
        |x, a, b, _j| _mm256_fmadd_ps(x, a, b),
        |v| hsum_ps256(v)
    );
    flop_kernel!(
        muladd_ps256,
        "avx2,fma",
        f32,
        __m256,
        ACC_NARROW,
        _mm256_set1_ps,
        |x, a, b, j| if j % 2 == 0 {
            _mm256_mul_ps(x, a)
        } else {
            _mm256_add_ps(x, b)
        },
        |v| hsum_ps256(v)
    );
    flop_kernel!(
        fma_sd,
        "fma",
        f64,
        __m128d,
        ACC_NARROW,
        _mm_set_sd,
        |x, a, b, _j| _mm_fmadd_sd(x, a, b),
        |v| _mm_cvtsd_f64(v)
    );
    flop_kernel!(
        fma_ss,
        "fma",
        f32,
        __m128,
        ACC_NARROW,
        _mm_set_ss,
        |x, a, b, _j| _mm_fmadd_ss(x, a, b),
        |v| _mm_cvtss_f32(v)
    );

    #[target_feature(enable = "avx2")]
    unsafe fn hsum_pd256(v: __m256d) -> f64 {
        let mut out = [0.0f64; 4];
        _mm256_storeu_pd(out.as_mut_ptr(), v);
        out.iter().sum()
    }

    #[target_feature(enable = "avx2")]
    unsafe fn hsum_ps256(v: __m256) -> f32 {
        let mut out = [0.0f32; 8];
        _mm256_storeu_ps(out.as_mut_ptr(), v);
        out.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<FlopKernel> {
        let mut v = Vec::new();
        for isa in [Isa::Avx512, Isa::Avx2, Isa::Scalar] {
            for precision in [Precision::F64, Precision::F32] {
                for op in [Op::Fma, Op::MulAdd] {
                    v.push(FlopKernel { precision, isa, op });
                }
            }
        }
        v
    }

    #[test]
    fn flops_per_iteration() {
        let k = FlopKernel {
            precision: Precision::F64,
            isa: Isa::Avx512,
            op: Op::Fma,
        };
        assert_eq!(k.flops_per_iteration(), (16 * 8 * 2) as f64);
        let k = FlopKernel {
            precision: Precision::F32,
            isa: Isa::Avx2,
            op: Op::MulAdd,
        };
        assert_eq!(k.flops_per_iteration(), (12 * 8) as f64);
        let k = FlopKernel {
            precision: Precision::F64,
            isa: Isa::Scalar,
            op: Op::Fma,
        };
        assert_eq!(k.flops_per_iteration(), 24.0);
        assert_eq!(k.label(), "f64 scalar fma");
    }

    #[test]
    fn kernels_compute_the_recurrence() {
        // After n iterations an FMA accumulator holds x_n = a·x_{n−1} + b.
        let (a, b) = (0.999_999_9f64, 1e-7f64);
        let mut x = 1.0f64;
        for _ in 0..100 {
            x = x.mul_add(a, b);
        }
        for k in all().into_iter().filter(|k| k.available()) {
            let r = k.run(100);
            assert!(r.is_finite() && r > 0.0, "{}", k.label());
            if k.op == Op::Fma && k.precision == Precision::F64 {
                let want = x * (k.accumulators() * k.isa.lanes(k.precision)) as f64;
                assert!(
                    (r - want).abs() < 1e-9 * want,
                    "{}: {r} vs {want}",
                    k.label()
                );
            }
        }
    }
}
