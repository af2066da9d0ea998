//! A compute-bound kernel right of the ridge point (lecture §4.4 example D):
//! C = A·B for n×n f64 matrices, blocked for the caches with packed panels
//! and a 6×8 register-blocked micro-kernel (AVX2+FMA where the CPU has it,
//! plain Rust otherwise). Threads take disjoint column slices of C.
//!
//! Blocking: a KC×NR micro-panel of B (16 KiB) stays in L1, an MC×KC panel
//! of A (144 KiB) in L2; each micro-kernel call does 2·6·8·KC flops on
//! 12 accumulators.

use calibrate::kernels::Isa;

use super::work::{Demand, Work};

/// Rows of the micro-kernel.
pub const MR: usize = 6;
/// Columns of the micro-kernel.
pub const NR: usize = 8;
/// Depth of a packed panel.
pub const KC: usize = 256;
/// Rows of a packed panel of A.
pub const MC: usize = 72;

/// Square matrices, row-major.
pub struct Matrices {
    pub n: usize,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
}

impl Matrices {
    /// Entries with few significant bits, so sums of products are exact in
    /// f64 and every summation order gives the same C.
    pub fn new(n: usize) -> Self {
        let a = (0..n * n)
            .map(|k| ((k * 7 + 3) % 17) as f64 - 8.0)
            .collect();
        let b = (0..n * n)
            .map(|k| ((k * 5 + 1) % 13) as f64 - 6.0)
            .collect();
        Self { n, a, b }
    }
}

/// Declared work of one product on `threads` threads: 2n³ flops; memory
/// traffic counts A read once per thread (each packs all of it), B read once
/// and C read and written (8 bytes each).
pub fn work(n: usize, threads: usize) -> Work {
    let n2 = (n * n) as f64;
    Work {
        demands: vec![
            Demand::Flops {
                flops: 2.0 * n2 * n as f64,
                precision: "f64",
            },
            Demand::Memory {
                bytes: 8.0 * n2 * (threads as f64 + 3.0),
                bytes_wa: 8.0 * n2 * (threads as f64 + 3.0),
                mix: "load",
                per_thread_bytes: 8.0 * n2 * 3.0 / threads as f64,
            },
        ],
    }
}

/// Computes columns `cols` of C = A·B into `c` (n × cols.len(), row-major).
pub fn multiply_cols(m: &Matrices, cols: std::ops::Range<usize>, c: &mut [f64]) {
    let (n, w) = (m.n, cols.len());
    assert_eq!(c.len(), n * w);
    c.fill(0.0);
    let mut ap = vec![0.0; MC.div_ceil(MR) * MR * KC];
    let mut bp = vec![0.0; w.div_ceil(NR) * NR * KC];
    for pc in (0..n).step_by(KC) {
        let kc = KC.min(n - pc);
        pack_b(&m.b, n, pc, kc, cols.clone(), &mut bp);
        for ic in (0..n).step_by(MC) {
            let mc = MC.min(n - ic);
            pack_a(&m.a, n, ic, mc, pc, kc, &mut ap);
            for jr in (0..w).step_by(NR) {
                for ir in (0..mc).step_by(MR) {
                    let a = &ap[ir * kc..(ir + MR) * kc];
                    let b = &bp[jr * kc..(jr + NR) * kc];
                    let mut acc = [[0.0; NR]; MR];
                    micro(kc, a, b, &mut acc);
                    for (r, row) in acc.iter().enumerate().take((mc - ir).min(MR)) {
                        let ci = (ic + ir + r) * w + jr;
                        let nr = (w - jr).min(NR);
                        c[ci..ci + nr]
                            .iter_mut()
                            .zip(row)
                            .for_each(|(c, v)| *c += v);
                    }
                }
            }
        }
    }
}

/// Packs rows ic..ic+mc, columns pc..pc+kc of A into micro-panels of MR
/// rows, each stored k-major (MR values per k), zero-padded.
fn pack_a(a: &[f64], n: usize, ic: usize, mc: usize, pc: usize, kc: usize, ap: &mut [f64]) {
    for ir in (0..mc).step_by(MR) {
        let panel = &mut ap[ir * kc..(ir + MR) * kc];
        for k in 0..kc {
            for r in 0..MR {
                panel[k * MR + r] = if ir + r < mc {
                    a[(ic + ir + r) * n + pc + k]
                } else {
                    0.0
                };
            }
        }
    }
}

/// Packs rows pc..pc+kc, columns `cols` of B into micro-panels of NR
/// columns, each stored k-major (NR values per k), zero-padded.
fn pack_b(b: &[f64], n: usize, pc: usize, kc: usize, cols: std::ops::Range<usize>, bp: &mut [f64]) {
    let w = cols.len();
    for jr in (0..w).step_by(NR) {
        let panel = &mut bp[jr * kc..(jr + NR) * kc];
        for k in 0..kc {
            let row = &b[(pc + k) * n + cols.start..(pc + k) * n + cols.end];
            for j in 0..NR {
                panel[k * NR + j] = if jr + j < w { row[jr + j] } else { 0.0 };
            }
        }
    }
}

/// acc += A_panel · B_panel over depth kc.
fn micro(kc: usize, a: &[f64], b: &[f64], acc: &mut [[f64; NR]; MR]) {
    match Isa::detect() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: avx2 and fma are present (Isa::detect); the panels hold
        // kc·MR and kc·NR values, checked below.
        Isa::Avx2 | Isa::Avx512 => {
            assert!(a.len() >= kc * MR && b.len() >= kc * NR);
            unsafe { micro_avx2(kc, a.as_ptr(), b.as_ptr(), acc) }
        }
        _ => micro_generic(kc, a, b, acc),
    }
}

fn micro_generic(kc: usize, a: &[f64], b: &[f64], acc: &mut [[f64; NR]; MR]) {
    for k in 0..kc {
        let (ak, bk) = (&a[k * MR..(k + 1) * MR], &b[k * NR..(k + 1) * NR]);
        for r in 0..MR {
            for j in 0..NR {
                acc[r][j] += ak[r] * bk[j];
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn micro_avx2(kc: usize, mut a: *const f64, mut b: *const f64, acc: &mut [[f64; NR]; MR]) {
    use std::arch::x86_64::*;
    let mut c = [[_mm256_setzero_pd(); 2]; MR];
    for _ in 0..kc {
        // SAFETY: the caller guarantees kc·MR values at `a` and kc·NR at `b`.
        let b0 = _mm256_loadu_pd(b);
        let b1 = _mm256_loadu_pd(b.add(4));
        for (r, cr) in c.iter_mut().enumerate() {
            let ar = _mm256_broadcast_sd(&*a.add(r));
            cr[0] = _mm256_fmadd_pd(ar, b0, cr[0]);
            cr[1] = _mm256_fmadd_pd(ar, b1, cr[1]);
        }
        a = a.add(MR);
        b = b.add(NR);
    }
    for (row, cr) in acc.iter_mut().zip(&c) {
        let mut out = [0.0; NR];
        _mm256_storeu_pd(out.as_mut_ptr(), cr[0]);
        _mm256_storeu_pd(out.as_mut_ptr().add(4), cr[1]);
        row.iter_mut().zip(out).for_each(|(x, v)| *x += v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(m: &Matrices) -> Vec<f64> {
        let n = m.n;
        let mut c = vec![0.0; n * n];
        for i in 0..n {
            for k in 0..n {
                for j in 0..n {
                    c[i * n + j] += m.a[i * n + k] * m.b[k * n + j];
                }
            }
        }
        c
    }

    #[test]
    fn blocked_matches_naive_exactly_at_awkward_sizes() {
        for n in [1, 7, 13, 300] {
            let m = Matrices::new(n);
            let want = naive(&m);
            let mut c = vec![0.0; n * n];
            multiply_cols(&m, 0..n, &mut c);
            assert_eq!(c, want, "n = {n}");
            // Two column slices, as two threads compute them.
            let h = n / 2;
            let (mut left, mut right) = (vec![0.0; n * h], vec![0.0; n * (n - h)]);
            multiply_cols(&m, 0..h, &mut left);
            multiply_cols(&m, h..n, &mut right);
            for i in 0..n {
                assert_eq!(&left[i * h..(i + 1) * h], &want[i * n..i * n + h]);
                assert_eq!(
                    &right[i * (n - h)..(i + 1) * (n - h)],
                    &want[i * n + h..(i + 1) * n]
                );
            }
        }
    }
}
