//! Dense matrix multiply through `matrixmultiply`'s packed, register-blocked
//! dgemm (AVX2 or AVX-512 micro-kernels picked at run time): the kernel of
//! `predict`'s blocked matmul, and of the dgemm ceiling, which runs it on
//! operands that fit in cache.

use crate::mem::Array;

/// C = A·B for row-major slices: A is m×k with row stride `lda`, B is k×n
/// with row stride `ldb`, C is m×n with row stride `ldc`.
///
/// # Panics
/// When a slice is shorter than its strided extent.
#[allow(clippy::too_many_arguments)]
pub fn dgemm(
    (m, k, n): (usize, usize, usize),
    a: &[f64],
    lda: usize,
    b: &[f64],
    ldb: usize,
    c: &mut [f64],
    ldc: usize,
) {
    let extent = |rows: usize, cols: usize, stride: usize| {
        if rows == 0 || cols == 0 {
            0
        } else {
            (rows - 1) * stride + cols
        }
    };
    assert!(a.len() >= extent(m, k, lda), "A is shorter than {m}×{k}");
    assert!(b.len() >= extent(k, n, ldb), "B is shorter than {k}×{n}");
    assert!(c.len() >= extent(m, n, ldc), "C is shorter than {m}×{n}");
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: the asserts above keep every element the strides reach
    // inside its slice, and C is borrowed mutably, apart from A and B.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            lda as isize,
            1,
            b.as_ptr(),
            ldb as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            ldc as isize,
            1,
        );
    }
}

/// Side of the dgemm ceiling's square matrices: three of them take
/// 3·128²·8 B = 384 KiB, which the private caches of current server cores
/// hold, so the ceiling is the in-core rate of dense linear algebra.
pub const CEILING_N: usize = 128;

/// One thread's operands for the dgemm ceiling, laid out as the matmul
/// kernel's are ([`Array`]).
pub struct CeilingOperands {
    a: Array<f64>,
    b: Array<f64>,
    c: Array<f64>,
}

impl Default for CeilingOperands {
    fn default() -> Self {
        let n2 = CEILING_N * CEILING_N;
        Self {
            a: Array::new(n2, 0, |i| (i % 7) as f64 - 3.0),
            b: Array::new(n2, 1, |i| (i % 5) as f64 - 2.0),
            c: Array::new(n2, 2, |_| 0.0),
        }
    }
}

impl CeilingOperands {
    /// FLOP of one product: 2n³.
    pub const FLOPS: f64 = 2.0 * (CEILING_N * CEILING_N * CEILING_N) as f64;

    /// `reps` products; returns an element of C so the work is used.
    pub fn run(&mut self, reps: u64) -> f64 {
        let n = CEILING_N;
        for _ in 0..reps {
            dgemm((n, n, n), &self.a, n, &self.b, n, &mut self.c, n);
        }
        self.c[n + 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_product_matches_the_definition() {
        // A 2×3 block of a 2×4 array times a 3×2 block of a 3×3 array.
        let a = [1.0, 2.0, 3.0, 99.0, 4.0, 5.0, 6.0];
        let b = [1.0, 0.0, 99.0, 0.0, 1.0, 99.0, 2.0, 3.0];
        let mut c = [0.0; 2 * 5];
        dgemm((2, 3, 2), &a, 4, &b, 3, &mut c, 5);
        assert_eq!(c, [7.0, 11.0, 0.0, 0.0, 0.0, 16.0, 23.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    #[should_panic(expected = "B is shorter")]
    fn short_slices_are_refused() {
        let mut c = [0.0; 4];
        dgemm((2, 2, 2), &[1.0; 4], 2, &[1.0; 3], 2, &mut c, 2);
    }

    #[test]
    fn ceiling_operands_multiply() {
        let mut o = CeilingOperands::default();
        let n = CEILING_N;
        let want: f64 = (0..n).map(|k| o.a[n + k] * o.b[k * n + 1]).sum();
        assert_eq!(o.run(2), want);
    }
}
