//! Iterations with a chain inside: `y[i] = p(x[i])` by Horner's scheme,
//! `depth` dependent steps per element, every element independent of the
//! others (lecture §4.2: an iteration's span).
//!
//! One step is one FMA where the level has FMA, else a multiply or an add
//! (a Horner degree is then two steps). The elements' chains are
//! independent, so a core with λ-cycle steps and π pipes runs at its peak
//! only while λ·π chains are in flight (Little's law, §4.3), and the
//! iterations in flight are those its out-of-order window holds: about W /
//! (depth + the iteration's other instructions). Beyond a depth where that
//! falls below λ·π the time per element grows with the square of the depth,
//! which no throughput ceiling and no loop-carried chain describes.
//!
//! The chain is unrolled in full (`DEPTH` is a constant), so an iteration
//! is one vector load, `DEPTH` steps and one vector store: the compiled
//! form of such a loop under `-O3`. A loop whose chain runs as a loop of
//! its own carries a counter and a branch per step, fills the window sooner
//! and runs slower than this.

use std::hint::black_box;

use super::Isa;

/// The depths `calibrate` measures, doubling, so that a loop's depth is
/// read between two of them.
pub const DEPTHS: [usize; 5] = [4, 8, 16, 32, 64];

/// Elements of the input and the output: 16 KiB together, in every L1.
pub const ELEMENTS: usize = 1024;

/// The coefficient each step adds; with inputs in (0, 1) the values stay
/// normal.
const C: f64 = 0.5;

/// Steps of [`run_loaded`] whose coefficient is loaded: a 5-point
/// stencil's four loads beside the one of its own point.
pub const LOADED: usize = 4;

/// The depth [`run_loaded`] runs at: its loaded steps and no more.
pub const LOADED_DEPTH: usize = LOADED;

/// Elements of [`run_loaded`]'s coefficient array: one more vector than
/// the inputs, for the shifted loads.
pub const COEFFICIENTS: usize = ELEMENTS + 8;

/// Runs `sweeps` sweeps of [`run`]'s `y = p(x)` at depth [`LOADED_DEPTH`]
/// with the coefficient of step `s` loaded from `c[i + s]`: the same
/// chain and the same FMAs, and [`LOADED`] more loads per element, which
/// hit L1 at every offset from its lines (a stencil's neighbours). Against
/// [`run`] at the same depth it gives what a load costs beside a chain of
/// arithmetic in the core. Returns a value of `y`.
///
/// # Panics
/// As [`run`], or if `c` is shorter than `x` by less than a vector.
pub fn run_loaded(isa: Isa, x: &[f64], c: &[f64], y: &mut [f64], sweeps: u64) -> f64 {
    assert!(isa.supported(), "{isa} is not available on this CPU");
    assert_eq!(x.len(), y.len());
    assert_eq!(x.len() % 8, 0, "a whole number of 512-bit vectors");
    assert!(c.len() >= x.len() + 8, "the coefficients' shifted loads");
    for _ in 0..sweeps {
        match isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY (both x86 arms): checked just above that the CPU
            // supports `isa`, the features each function is compiled for.
            Isa::Avx512 => unsafe { x86::loaded_pd512(x, c, y) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { x86::loaded_pd256(x, c, y) },
            _ => loaded_scalar(x, c, y),
        }
        black_box(&mut *y);
    }
    black_box(y[y.len() / 2])
}

/// Scalar loaded steps, one fused multiply-add each (`calibrate` runs
/// the loaded form on the vector sets only).
fn loaded_scalar(x: &[f64], c: &[f64], y: &mut [f64]) {
    for (i, (y, &v)) in y.iter_mut().zip(x).enumerate() {
        *y = (0..LOADED).fold(1.0, |p, s| p.mul_add(v, c[i + s]));
    }
}

/// [`ELEMENTS`] inputs x of `y = p(x)`, in [0.25, 0.75): the values stay
/// normal at every depth.
pub fn inputs() -> Vec<f64> {
    (0..ELEMENTS)
        .map(|i| 0.25 + i as f64 / (2 * ELEMENTS) as f64)
        .collect()
}

/// Runs `sweeps` sweeps of `y = p(x)` with `depth` dependent steps per
/// element on `isa` and returns a value of `y` (through [`black_box`]).
///
/// # Panics
/// If `depth` is not one of [`DEPTHS`], if the slices differ in length or
/// are not a whole number of vectors, or if the CPU cannot run `isa`.
pub fn run(isa: Isa, depth: usize, x: &[f64], y: &mut [f64], sweeps: u64) -> f64 {
    assert!(isa.supported(), "{isa} is not available on this CPU");
    assert_eq!(x.len(), y.len());
    assert_eq!(x.len() % 8, 0, "a whole number of 512-bit vectors");
    for _ in 0..sweeps {
        match depth {
            4 => sweep::<4>(isa, x, y),
            8 => sweep::<8>(isa, x, y),
            16 => sweep::<16>(isa, x, y),
            32 => sweep::<32>(isa, x, y),
            64 => sweep::<64>(isa, x, y),
            _ => panic!("depth {depth} is not one of {DEPTHS:?}"),
        }
        black_box(&mut *y);
    }
    black_box(y[y.len() / 2])
}

fn sweep<const DEPTH: usize>(isa: Isa, x: &[f64], y: &mut [f64]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY (both x86 arms): `run` checked that the CPU supports `isa`,
        // the features each target_feature function is compiled for.
        Isa::Avx512 => unsafe { x86::horner_pd512::<DEPTH>(x, y) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { x86::horner_pd256::<DEPTH>(x, y) },
        _ if Isa::scalar_fma() => scalar_fma::<DEPTH>(x, y),
        _ => scalar::<DEPTH>(x, y),
    }
}

/// Scalar steps without FMA: a multiply and an add per degree.
fn scalar<const DEPTH: usize>(x: &[f64], y: &mut [f64]) {
    for (y, &v) in y.iter_mut().zip(x) {
        let mut p = 1.0;
        for _ in 0..DEPTH / 2 {
            p = one_lane::mul_add(p, v);
        }
        *y = p;
    }
}

/// Scalar FMA steps.
fn scalar_fma<const DEPTH: usize>(x: &[f64], y: &mut [f64]) {
    for (y, &v) in y.iter_mut().zip(x) {
        let mut p = 1.0;
        for _ in 0..DEPTH {
            p = one_lane::fma(p, v);
        }
        *y = p;
    }
}

/// One lane's steps as single instructions the compiler cannot vectorise
/// (plain f64 code is vectorised across the elements).
mod one_lane {
    use super::C;

    /// p·v + C in a multiply and an add.
    #[inline(always)]
    pub fn mul_add(p: f64, v: f64) -> f64 {
        #[cfg(target_arch = "x86_64")]
        {
            let mut p = p;
            // SAFETY: SSE2 is part of x86-64; registers only.
            unsafe {
                std::arch::asm!(
                    "mulsd {p}, {v}",
                    "addsd {p}, {c}",
                    p = inout(xmm_reg) p,
                    v = in(xmm_reg) v,
                    c = in(xmm_reg) C,
                    options(pure, nomem, nostack)
                );
            }
            p
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            std::hint::black_box(p * v) + C
        }
    }

    /// p·v + C in one FMA; only where `Isa::scalar_fma` holds.
    #[inline(always)]
    pub fn fma(p: f64, v: f64) -> f64 {
        #[cfg(target_arch = "x86_64")]
        {
            let mut p = p;
            // SAFETY: the caller checked `Isa::scalar_fma`; registers only.
            unsafe {
                std::arch::asm!(
                    "vfmadd213sd {p}, {v}, {c}",
                    p = inout(xmm_reg) p,
                    v = in(xmm_reg) v,
                    c = in(xmm_reg) C,
                    options(pure, nomem, nostack)
                );
            }
            p
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            p.mul_add(v, C)
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{C, LOADED};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn horner_pd512<const DEPTH: usize>(x: &[f64], y: &mut [f64]) {
        let c = _mm512_set1_pd(C);
        for (y, x) in y.chunks_exact_mut(8).zip(x.chunks_exact(8)) {
            let v = _mm512_loadu_pd(x.as_ptr());
            let mut p = _mm512_set1_pd(1.0);
            for _ in 0..DEPTH {
                p = _mm512_fmadd_pd(p, v, c);
            }
            _mm512_storeu_pd(y.as_mut_ptr(), p);
        }
    }

    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn loaded_pd512(x: &[f64], c: &[f64], y: &mut [f64]) {
        for (i, (y, x)) in y.chunks_exact_mut(8).zip(x.chunks_exact(8)).enumerate() {
            let v = _mm512_loadu_pd(x.as_ptr());
            let at = c[8 * i..8 * i + 8 + LOADED].as_ptr();
            let mut p = _mm512_set1_pd(1.0);
            for s in 0..LOADED {
                p = _mm512_fmadd_pd(p, v, _mm512_loadu_pd(at.add(s)));
            }
            _mm512_storeu_pd(y.as_mut_ptr(), p);
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn loaded_pd256(x: &[f64], c: &[f64], y: &mut [f64]) {
        for (i, (y, x)) in y.chunks_exact_mut(4).zip(x.chunks_exact(4)).enumerate() {
            let v = _mm256_loadu_pd(x.as_ptr());
            let at = c[4 * i..4 * i + 4 + LOADED].as_ptr();
            let mut p = _mm256_set1_pd(1.0);
            for s in 0..LOADED {
                p = _mm256_fmadd_pd(p, v, _mm256_loadu_pd(at.add(s)));
            }
            _mm256_storeu_pd(y.as_mut_ptr(), p);
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn horner_pd256<const DEPTH: usize>(x: &[f64], y: &mut [f64]) {
        let c = _mm256_set1_pd(C);
        for (y, x) in y.chunks_exact_mut(4).zip(x.chunks_exact(4)) {
            let v = _mm256_loadu_pd(x.as_ptr());
            let mut p = _mm256_set1_pd(1.0);
            for _ in 0..DEPTH {
                p = _mm256_fmadd_pd(p, v, c);
            }
            _mm256_storeu_pd(y.as_mut_ptr(), p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> Vec<f64> {
        (0..64).map(|i| 0.25 + i as f64 / 128.0).collect()
    }

    /// `y` against Horner's scheme of `degree` in plain f64.
    fn check(what: &str, x: &[f64], y: &[f64], degree: usize) {
        for (&v, &got) in x.iter().zip(y) {
            let want = (0..degree).fold(1.0, |p, _| p * v + C);
            assert!(
                (got - want).abs() <= 1e-12 * want.abs(),
                "{what}: {got} against {want}"
            );
        }
    }

    #[test]
    fn every_level_computes_the_same_polynomial() {
        let x = input();
        for depth in DEPTHS {
            for isa in Isa::available() {
                let mut y = vec![0.0; x.len()];
                run(isa, depth, &x, &mut y, 1);
                // A step is an FMA, or a multiply or an add without one.
                let fma = isa != Isa::Scalar || Isa::scalar_fma();
                let degree = if fma { depth } else { depth / 2 };
                check(&format!("{isa} depth {depth}"), &x, &y, degree);
            }
        }
    }

    #[test]
    fn the_loaded_steps_add_the_shifted_coefficients() {
        let x = input();
        let c: Vec<f64> = (0..x.len() + 8).map(|i| 0.5 + i as f64 / 256.0).collect();
        for isa in Isa::available() {
            let mut y = vec![0.0; x.len()];
            run_loaded(isa, &x, &c, &mut y, 1);
            for (i, (&v, &got)) in x.iter().zip(&y).enumerate() {
                let want = (0..LOADED).fold(1.0, |p, s| p * v + c[i + s]);
                assert!(
                    (got - want).abs() <= 1e-12 * want,
                    "{isa} at {i}: {got} against {want}"
                );
            }
        }
    }

    /// Both one-lane forms, whatever the cap: the tests may run capped.
    #[test]
    fn the_one_lane_steps_compute_it_too() {
        let x = input();
        let mut y = vec![0.0; x.len()];
        scalar::<16>(&x, &mut y);
        check("multiply and add", &x, &y, 8);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") {
            scalar_fma::<16>(&x, &mut y);
            check("fma", &x, &y, 16);
        }
    }
}
