//! The grid values, the 5-point update and a rank's local block.
//!
//! # The update
//!
//! Jacobi on an N×N grid of `f64` with a fixed boundary frame (lecture
//! §3.1): every inner point becomes u' = 0.2·(c + n + s + w + e), the mean
//! of itself and its four neighbours, computed from the *previous* sweep
//! into a second array. The lecture's listing updates in place (each row
//! then sees its left neighbour already updated and the rows above it too,
//! Gauss–Seidel style), which makes the result depend on how the grid is
//! cut; with two arrays every point's inputs are the same whatever the
//! decomposition. The sum is always formed as ((((c + n) + s) + w) + e)
//! (Rust neither reorders nor fuses floating-point operations), so every
//! variant reproduces the serial grid bit for bit.
//!
//! `f64` rather than the lecture's `float`: the profile's bandwidths are
//! measured with `f64` streams, and the residual and checksum stay
//! meaningful for long runs; the element size is a parameter of the model
//! ([`ELEM_BYTES`]).
//!
//! # Initial and boundary values
//!
//! The top edge of the frame holds 1, the other edges 0; the inside starts
//! as the lecture's Gaussian bump exp(−((x−½)² + (y−½)²)/0.02), x and y the
//! framed coordinates scaled by N+1. Every rank computes the values of its
//! own block from global coordinates, so nothing is scattered.

use std::ops::Range;

use calibrate::harness::kernels::Isa;
use calibrate::harness::mem::Array;

/// Bytes of one grid element.
pub const ELEM_BYTES: usize = std::mem::size_of::<f64>();
/// Floating-point operations of one update (4 additions, 1 multiplication).
pub const FLOPS_PER_UPDATE: f64 = 5.0;
/// Value of the top edge of the frame.
pub const TOP_EDGE: f64 = 1.0;

/// The value at global framed coordinates (gi, gj) before the first sweep.
pub fn initial_value(n: usize, gi: usize, gj: usize) -> f64 {
    if gi == 0 {
        TOP_EDGE
    } else if gi == n + 1 || gj == 0 || gj == n + 1 {
        0.0
    } else {
        let s = (n + 1) as f64;
        let (x, y) = (gi as f64 / s, gj as f64 / s);
        (-((x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5)) / 0.02).exp()
    }
}

/// One point's update, in the one order every variant uses.
#[inline(always)]
pub fn update(c: f64, n: f64, s: f64, w: f64, e: f64) -> f64 {
    0.2 * ((((c + n) + s) + w) + e)
}

/// Updates rows `rows` × columns `cols` (local framed indices) of `new`
/// from `old`; `old` may start at local row `old_row0` (a sub-slice of the
/// local array) and must hold the rows above and below those updated.
/// Returns max |u' − u| over the updated points when `residual` is set
/// (0 otherwise: the plain loop vectorises, the residual one does not).
pub fn sweep(
    old: &[f64],
    old_row0: usize,
    new: &mut [f64],
    ld: usize,
    rows: Range<usize>,
    cols: Range<usize>,
    residual: bool,
) -> f64 {
    let mut diff = 0.0f64;
    if cols.is_empty() {
        return diff;
    }
    let (j0, j1) = (cols.start, cols.end);
    for i in rows {
        let r = (i - old_row0) * ld;
        let out = &mut new[i * ld + j0..i * ld + j1];
        let row = Row {
            up: &old[r - ld + j0..r - ld + j1],
            dn: &old[r + ld + j0..r + ld + j1],
            w: &old[r + j0 - 1..r + j1 - 1],
            c: &old[r + j0..r + j1],
            e: &old[r + j0 + 1..r + j1 + 1],
        };
        if residual {
            diff = diff.max(row.update_with_residual(out));
        } else {
            row.update(out);
        }
    }
    diff
}

/// The five input rows of one output row segment, all of its length.
struct Row<'a> {
    up: &'a [f64],
    dn: &'a [f64],
    w: &'a [f64],
    c: &'a [f64],
    e: &'a [f64],
}

impl Row<'_> {
    /// `out[k] = update(c[k], up[k], dn[k], w[k], e[k])`, with the AVX2
    /// build of the loop when the CPU has it (the same operations in the
    /// same order, so the same bits; Rust never fuses a multiply and an add).
    fn update(&self, out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if Isa::Avx2.supported() {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { self.update_avx2(out) };
            return;
        }
        self.update_plain(out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn update_avx2(&self, out: &mut [f64]) {
        self.update_plain(out);
    }

    /// Every input re-sliced to `n`, which lets the compiler drop the
    /// bounds checks of the loops over `0..n` and vectorise them.
    #[inline(always)]
    fn cut(&self, n: usize) -> Row<'_> {
        Row {
            up: &self.up[..n],
            dn: &self.dn[..n],
            w: &self.w[..n],
            c: &self.c[..n],
            e: &self.e[..n],
        }
    }

    /// The loop over the re-sliced inputs.
    #[inline(always)]
    fn update_plain(&self, out: &mut [f64]) {
        let Row { up, dn, w, c, e } = self.cut(out.len());
        for k in 0..out.len() {
            out[k] = update(c[k], up[k], dn[k], w[k], e[k]);
        }
    }

    /// The update and max |u' − u| (every `check_every` sweeps only).
    fn update_with_residual(&self, out: &mut [f64]) -> f64 {
        let Row { up, dn, w, c, e } = self.cut(out.len());
        let mut diff = 0.0f64;
        for k in 0..out.len() {
            let v = update(c[k], up[k], dn[k], w[k], e[k]);
            diff = diff.max((v - c[k]).abs());
            out[k] = v;
        }
        diff
    }
}

/// SplitMix64's finaliser: the first output of the generator seeded with
/// `z`.
fn mix64(z: u64) -> u64 {
    models::random::SplitMix64::new(z).next_u64()
}

/// The checksum term of the value `v` at global framed index `g`. The
/// checksum of a grid is the wrapping sum of the terms of its inner points:
/// it depends on every bit of every value and on where it is, but not on
/// the order of summation, so ranks can add their parts with `MPI_SUM` and
/// get exactly the serial grid's checksum.
pub fn checksum_term(g: u64, v: f64) -> u64 {
    mix64(v.to_bits() ^ mix64(g))
}

/// A rank's block with its frame, in two arrays (current and next).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub n: usize,
    pub ry: usize,
    pub rx: usize,
    pub y0: usize,
    pub x0: usize,
    /// The current values, (ry+2) × (rx+2), row-major.
    pub cur: Array<f64>,
    /// The next sweep's values (same shape; its frame mirrors `cur`'s
    /// boundary so that swapping keeps the boundary in place).
    pub next: Array<f64>,
}

impl Block {
    /// The block at global framed offset (y0, x0) with its initial values
    /// (the frame included: boundary values, or the neighbours' initial
    /// values in ghost cells).
    pub fn new(n: usize, ry: usize, rx: usize, y0: usize, x0: usize) -> Self {
        let ld = rx + 2;
        let len = (ry + 2) * ld;
        let cur = Array::new(len, 0, |k| initial_value(n, y0 + k / ld, x0 + k % ld));
        let next = Array::new(len, 1, |k| cur[k]);
        Self {
            n,
            ry,
            rx,
            y0,
            x0,
            cur,
            next,
        }
    }

    /// Row length of the arrays.
    pub fn ld(&self) -> usize {
        self.rx + 2
    }

    /// Makes the sweep just computed the current one.
    pub fn swap(&mut self) {
        std::mem::swap(&mut self.cur, &mut self.next);
    }

    /// The ry × rx inner values, row by row.
    pub fn interior(&self) -> Vec<f64> {
        let ld = self.ld();
        (1..=self.ry)
            .flat_map(|i| self.cur[i * ld + 1..i * ld + 1 + self.rx].iter().copied())
            .collect()
    }

    /// This block's part of the grid checksum ([`checksum_term`]).
    pub fn checksum(&self) -> u64 {
        let (ld, side) = (self.ld(), (self.n + 2) as u64);
        let mut sum = 0u64;
        for i in 1..=self.ry {
            let gi = (self.y0 + i) as u64;
            for j in 1..=self.rx {
                let g = gi * side + (self.x0 + j) as u64;
                sum = sum.wrapping_add(checksum_term(g, self.cur[i * ld + j]));
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_frame() {
        let n = 4;
        assert_eq!(initial_value(n, 0, 3), 1.0);
        assert_eq!(initial_value(n, 5, 3), 0.0);
        assert_eq!(initial_value(n, 2, 0), 0.0);
        assert_eq!(initial_value(n, 2, 5), 0.0);
        // The bump peaks in the middle.
        let mid = initial_value(9, 5, 5);
        assert_eq!(mid, 1.0);
        assert!(initial_value(9, 1, 1) < mid);
    }

    #[test]
    fn sweep_on_a_sub_slice_matches_the_whole_array() {
        let mut a = Block::new(6, 6, 6, 0, 0);
        let mut b = a.clone();
        let ld = a.ld();
        let d1 = sweep(&a.cur, 0, &mut a.next, ld, 1..7, 1..7, true);
        // Rows 1..=6 of `cur` start at row 1; rows 0 and 7 come along.
        let d2 = {
            let (top, rest) = b.cur.split_at(ld);
            let _ = top;
            let mut d = sweep(rest, 1, &mut b.next, ld, 2..6, 1..7, true);
            d = d.max(sweep(&b.cur, 0, &mut b.next, ld, 1..2, 1..7, true));
            d.max(sweep(&b.cur, 0, &mut b.next, ld, 6..7, 1..7, true))
        };
        assert_eq!(a.next, b.next);
        assert_eq!(d1, d2);
        assert!(d1 > 0.0);
        // Without the residual the values are the same.
        let mut c = Block::new(6, 6, 6, 0, 0);
        assert_eq!(sweep(&c.cur, 0, &mut c.next, ld, 1..7, 1..7, false), 0.0);
        assert_eq!(c.next, a.next);
    }

    #[test]
    fn checksum_depends_on_position_not_order() {
        assert_ne!(checksum_term(1, 0.5), checksum_term(2, 0.5));
        assert_ne!(
            checksum_term(1, 0.5),
            checksum_term(1, f64::from_bits(0.5f64.to_bits() + 1))
        );
        // A block's checksum is the sum of its quarters'.
        let whole = Block::new(4, 4, 4, 0, 0);
        let parts: u64 = [(0, 0), (0, 2), (2, 0), (2, 2)]
            .iter()
            .map(|&(y, x)| Block::new(4, 2, 2, y, x).checksum())
            .fold(0u64, u64::wrapping_add);
        assert_eq!(whole.checksum(), parts);
    }
}
