//! The serial reference: the whole grid in one process, a plain double loop
//! written independently of the distributed kernel, against which every
//! variant is checked bit for bit.

use super::grid::{checksum_term, initial_value, update};

/// The grid after some sweeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub n: usize,
    /// Sweeps made.
    pub iterations: usize,
    /// (N+2) × (N+2) values with the frame, row-major.
    pub grid: Vec<f64>,
    /// (sweep, max |u' − u|) after every `check_every`-th sweep and the last.
    pub residuals: Vec<(usize, f64)>,
}

/// The framed N×N grid before the first sweep.
pub fn initial_grid(n: usize) -> Vec<f64> {
    let side = n + 2;
    (0..side * side)
        .map(|k| initial_value(n, k / side, k % side))
        .collect()
}

/// One Jacobi sweep of the inner points of `old` into `new`; returns
/// max |u' − u|.
pub fn step(n: usize, old: &[f64], new: &mut [f64]) -> f64 {
    let side = n + 2;
    let mut diff = 0.0f64;
    for i in 1..=n {
        for j in 1..=n {
            let c = old[i * side + j];
            let v = update(
                c,
                old[(i - 1) * side + j],
                old[(i + 1) * side + j],
                old[i * side + j - 1],
                old[i * side + j + 1],
            );
            diff = diff.max((v - c).abs());
            new[i * side + j] = v;
        }
    }
    diff
}

/// `iterations` sweeps from the initial grid, the residual recorded every
/// `check_every` sweeps and after the last.
pub fn reference(n: usize, iterations: usize, check_every: usize) -> Reference {
    let mut old = initial_grid(n);
    let mut new = old.clone();
    let mut residuals = Vec::new();
    for it in 1..=iterations {
        let d = step(n, &old, &mut new);
        std::mem::swap(&mut old, &mut new);
        if it % check_every.max(1) == 0 || it == iterations {
            residuals.push((it, d));
        }
    }
    Reference {
        n,
        iterations,
        grid: old,
        residuals,
    }
}

impl Reference {
    /// The N × N inner values, row by row.
    pub fn interior(&self) -> Vec<f64> {
        let side = self.n + 2;
        (1..=self.n)
            .flat_map(|i| {
                self.grid[i * side + 1..i * side + 1 + self.n]
                    .iter()
                    .copied()
            })
            .collect()
    }

    /// The grid checksum (see [`checksum_term`]).
    pub fn checksum(&self) -> u64 {
        let side = self.n + 2;
        let mut sum = 0u64;
        for i in 1..=self.n {
            for j in 1..=self.n {
                let g = (i * side + j) as u64;
                sum = sum.wrapping_add(checksum_term(g, self.grid[i * side + j]));
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi_stencil::grid::{sweep, Block};

    /// A 4×4 grid with inner values 1..16 row by row, top edge 1, other
    /// edges 0, after one sweep, worked by hand.
    #[test]
    fn one_step_of_a_4x4_grid_by_hand() {
        let n = 4;
        let side = n + 2;
        let mut old = vec![0.0; side * side];
        old[..side].fill(1.0);
        for i in 1..=n {
            for j in 1..=n {
                old[i * side + j] = ((i - 1) * n + j) as f64;
            }
        }
        let mut new = old.clone();
        let d = step(n, &old, &mut new);
        let at = |i: usize, j: usize| new[i * side + j];
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // (1,1): c 1, n 1 (edge), s 5, w 0 (edge), e 2 -> 9/5.
        assert!(close(at(1, 1), 1.8));
        // (1,4): c 4, n 1, s 8, w 3, e 0 -> 16/5.
        assert!(close(at(1, 4), 3.2));
        // (2,2): c 6, n 2, s 10, w 5, e 7 -> 30/5.
        assert!(close(at(2, 2), 6.0));
        // (3,3): c 11, n 7, s 15, w 10, e 12 -> 55/5.
        assert!(close(at(3, 3), 11.0));
        // (4,4): c 16, n 12, s 0 (edge), w 15, e 0 -> 43/5.
        assert!(close(at(4, 4), 8.6));
        // (4,1): c 13, n 9, s 0, w 0, e 14 -> 36/5.
        assert!(close(at(4, 1), 7.2));
        // The largest change: (4,4) from 16 to 8.6.
        assert!(close(d, 7.4));
        // The frame is untouched.
        assert_eq!(new[2], 1.0);
        assert_eq!(at(5, 2), 0.0);
    }

    #[test]
    fn heat_flows_in_from_the_top_edge() {
        // Start from zero inside: after one sweep row 1 holds 0.2, after
        // two its corners 0.28 and middle 0.32, row 2 holds 0.04.
        let n = 4;
        let side = n + 2;
        let mut a = vec![0.0; side * side];
        a[..side].fill(1.0);
        let mut b = a.clone();
        step(n, &a, &mut b);
        assert!((1..=n).all(|j| (b[side + j] - 0.2).abs() < 1e-15));
        step(n, &b, &mut a);
        assert!((a[side + 1] - 0.28).abs() < 1e-15);
        assert!((a[side + 2] - 0.32).abs() < 1e-15);
        assert!((a[2 * side + 2] - 0.04).abs() < 1e-15);
    }

    #[test]
    fn the_block_kernel_matches_the_reference_bit_for_bit() {
        let (n, iters) = (13, 7);
        let r = reference(n, iters, 3);
        assert_eq!(
            r.residuals.iter().map(|x| x.0).collect::<Vec<_>>(),
            [3, 6, 7]
        );
        let mut b = Block::new(n, n, n, 0, 0);
        let ld = b.ld();
        for _ in 0..iters {
            sweep(&b.cur, 0, &mut b.next, ld, 1..n + 1, 1..n + 1, false);
            b.swap();
        }
        let (x, y) = (b.interior(), r.interior());
        assert!(x.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(b.checksum(), r.checksum());
    }
}
