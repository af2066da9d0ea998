//! A compute-bound kernel right of the ridge point (lecture §4.4 example D):
//! C = A·B for n×n f64 matrices, blocked for the caches (the lecture's
//! AI = b/4 argument: each block is reused from cache b times). Threads take
//! disjoint column slices of C; each slice is one call of `matrixmultiply`'s
//! dgemm, whose packed panels and register-blocked micro-kernel are what a
//! careful C implementation does. Its compute term uses the profile's dgemm
//! ceiling, the rate that micro-kernel reaches on cache-resident operands.

use calibrate::harness::kernels::dgemm::dgemm;
use calibrate::harness::mem::Array;
use models::kernel::Traffic;
use models::profile::CeilingKernel;

use anyhow::{ensure, Result};

use super::team::{per_thread, split, team, time_states};
use super::work::{Demand, Work};
use super::{measurement, thread_counts, Kernel, Measurement, Options};
use crate::error::BadInput;

/// Square matrices, row-major, laid out as the dgemm ceiling's operands
/// are ([`Array`]).
pub struct Matrices {
    pub n: usize,
    pub a: Array<f64>,
    pub b: Array<f64>,
}

impl Matrices {
    /// Entries with few significant bits, so sums of products are exact in
    /// f64 and every summation order gives the same C.
    pub fn new(n: usize) -> Self {
        let a = Array::new(n * n, 0, |k| ((k * 7 + 3) % 17) as f64 - 8.0);
        let b = Array::new(n * n, 1, |k| ((k * 5 + 1) % 13) as f64 - 6.0);
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
                ceiling: CeilingKernel::Dgemm,
                isa: None,
            },
            Demand::Memory {
                traffic: Traffic::streaming(8.0 * n2 * (threads as f64 + 3.0), 0.0),
                per_thread_bytes: 8.0 * n2 * 3.0 / threads as f64,
                huge_pages: true,
                // The packed micro-kernels use the widest vectors the CPU has.
                isa: None,
            },
        ],
    }
}

/// Computes columns `cols` of C = A·B into `c` (n × cols.len(), row-major)
/// with the packed, register-blocked dgemm.
pub fn multiply_cols(m: &Matrices, cols: std::ops::Range<usize>, c: &mut [f64]) {
    let (n, w) = (m.n, cols.len());
    assert_eq!(c.len(), n * w);
    dgemm((n, n, w), &m.a, n, &m.b[cols.start..], n, c, w);
}

/// Matrix multiply: `size` = n (default 1024).
pub struct Matmul;

impl Kernel for Matmul {
    fn name(&self) -> &'static str {
        "matmul"
    }

    fn run(&self, o: &Options) -> Result<Vec<Measurement>> {
        let n = o.size.unwrap_or(1024);
        let mut out = Vec::new();
        for threads in thread_counts(o) {
            ensure!(
                n >= threads,
                BadInput(format!(
                    "--size {n} is too small for matmul on {threads} threads"
                ))
            );
            let m = Matrices::new(n);
            let team = team(threads)?;
            let cols = split(n, threads);
            let states = per_thread(&team, |t| Array::new(n * cols[t].len(), 2, |_| 0.0));
            let declared = Ok(work(n, threads));
            let mut beside = o.beside(&declared, threads);
            let s = time_states(&team, &o.plan, &mut beside, &states, |t, c| {
                multiply_cols(&m, cols[t].clone(), c)
            })?;
            // Check a few entries against a direct dot product (exact: small integers).
            let verified = (0..n).step_by(n / 7 + 1).all(|i| {
                (0..n).step_by(n / 5 + 1).all(|j| {
                    let t = cols
                        .iter()
                        .position(|r| r.contains(&j))
                        .expect("columns are covered");
                    let w = cols[t].len();
                    let got = states[t].lock().unwrap_or_else(|e| e.into_inner())
                        [i * w + j - cols[t].start];
                    let want: f64 = (0..n).map(|k| m.a[i * n + k] * m.b[k * n + j]).sum();
                    got == want
                })
            });
            let paired = beside.finish();
            out.push(
                measurement("matmul", "blocked", threads, n, s, declared, verified)
                    .with_paired(paired),
            );
        }
        Ok(out)
    }

    fn pairs(&self) -> &'static [(&'static str, &'static str)] {
        &[("blocked", "blocked")]
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
