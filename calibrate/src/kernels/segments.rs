//! STREAM's copy run in segments: each array is taken as rows of
//! `runs_per_row` runs of `seg` elements, and a sweep copies the first run
//! of every row, then the second of every row, and so on (the traversal
//! of a sweep tiled `runs_per_row` columns wide). Every run starts a new
//! stream at a new address, where the prefetchers must find it again; its
//! time against the contiguous copy of the same arrays is what a stream's
//! restart costs. With two runs per row the next run starts one run past
//! the end of the last (the even runs, then the odd ones).

use std::hint::black_box;

use super::stream::stride;
use super::Isa;

/// Runs `sweeps` copies `a = b + 0.0` (as [`super::stream`]'s copy) over `n`
/// elements per array carved from `mem` (b at word [`stride`]`(n)`), in runs
/// of `seg` elements, `runs_per_row` of them to a row, tile column by tile
/// column. `seg ≥ n` is the contiguous copy. Returns a checksum.
///
/// # Panics
/// If `seg` or `runs_per_row` is 0, `mem` is shorter than the two arrays or
/// `isa` is not supported by the running CPU.
pub fn copy_segments(
    isa: Isa,
    mem: &mut [f64],
    n: usize,
    seg: usize,
    runs_per_row: usize,
    sweeps: u64,
) -> f64 {
    let tiles = Tiles::new(seg, runs_per_row);
    assert!(mem.len() >= stride(n) + n, "region too small");
    assert!(isa.supported(), "{isa} is not available on this CPU");
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: support for the features each function is compiled for
        // was checked just above.
        Isa::Avx512 => unsafe { copy_avx512(mem, n, tiles, sweeps) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { copy_avx2(mem, n, tiles, sweeps) },
        _ => copy_generic(mem, n, tiles, sweeps),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn copy_avx512(mem: &mut [f64], n: usize, tiles: Tiles, sweeps: u64) -> f64 {
    copy_generic(mem, n, tiles, sweeps)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn copy_avx2(mem: &mut [f64], n: usize, tiles: Tiles, sweeps: u64) -> f64 {
    copy_generic(mem, n, tiles, sweeps)
}

/// Runs of `seg` elements, `runs_per_row` of them to a row.
#[derive(Debug, Clone, Copy)]
struct Tiles {
    seg: usize,
    runs_per_row: usize,
}

impl Tiles {
    fn new(seg: usize, runs_per_row: usize) -> Self {
        assert!(seg > 0, "a segment holds at least one element");
        assert!(runs_per_row > 0, "a row holds at least one run");
        Self { seg, runs_per_row }
    }

    /// The runs over `n` elements in the order a sweep takes them: each
    /// tile column (the `t`-th run of every row) top to bottom.
    fn runs(self, n: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
        let row = self.seg.saturating_mul(self.runs_per_row);
        (0..self.runs_per_row).flat_map(move |t| {
            (t * self.seg..n)
                .step_by(row)
                .map(move |start| start..(start + self.seg).min(n))
        })
    }
}

#[inline(always)]
fn copy_generic(mem: &mut [f64], n: usize, tiles: Tiles, sweeps: u64) -> f64 {
    let (a, b) = mem.split_at_mut(stride(n));
    let (a, b) = (&mut a[..n], &b[..n]);
    for _ in 0..sweeps {
        let a = black_box(&mut *a);
        let b = black_box(b);
        for run in tiles.runs(n) {
            a[run.clone()]
                .iter_mut()
                .zip(&b[run])
                .for_each(|(x, y)| *x = y + 0.0);
        }
    }
    a.first().copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_copied_once_per_sweep_whatever_the_segment() {
        let n = 1000;
        for seg in [1, 7, 64, 999, 1000, 5000] {
            for runs_per_row in [1, 2, 3, 64] {
                let mut mem = vec![0.0; stride(n) + n];
                for (i, x) in mem[stride(n)..].iter_mut().enumerate() {
                    *x = i as f64;
                }
                copy_segments(Isa::detect(), &mut mem, n, seg, runs_per_row, 2);
                assert!(
                    mem[..n].iter().enumerate().all(|(i, x)| *x == i as f64),
                    "segment {seg}, {runs_per_row} runs a row"
                );
            }
        }
    }

    #[test]
    fn a_sweep_takes_each_tile_column_top_to_bottom() {
        let runs: Vec<_> = Tiles::new(2, 3).runs(14).collect();
        // rows of 6: columns start at 0, 2, 4; the last row is cut at 14.
        assert_eq!(runs, vec![0..2, 6..8, 12..14, 2..4, 8..10, 4..6, 10..12]);
        // Two runs a row: the even runs, then the odd ones.
        let runs: Vec<_> = Tiles::new(3, 2).runs(12).collect();
        assert_eq!(runs, vec![0..3, 6..9, 3..6, 9..12]);
    }
}
