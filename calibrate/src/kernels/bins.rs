//! The two inner loops of a data-parallel counting sort (lecture §2.9
//! step 2, §3.5), shared by the calibration and by `predict`'s binning
//! kernel, so that the per-item times the profile records are those of the
//! very instructions the kernel runs:
//!
//! * [`histogram`]: one increment of `hist[bin]` per item, a load, an add
//!   and a store at an index known only from the data;
//! * [`scatter`]: one store per item into the next free slot of its bin's
//!   run of the output, and one increment of that bin's cursor.
//!
//! Both are load/store-port work: a few instructions per item that the
//! core cannot overlap with the cache-line transfers of the same loop
//! (the ECM model's non-overlapping part).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Bins (and output streams) of the calibrated loops: the lecture's
/// 16 × 16 grid of cells.
pub const BINS: usize = 256;

/// Items of the calibration's bin sequence: 16 KiB of `u32`, which with the
/// 1 KiB histogram (or 16 KiB of output) stays in L1.
pub const SEQUENCE: usize = 4096;

/// Counts each item's bin: `hist[b] += 1` for every `b` of `bins`.
///
/// # Panics
/// If a bin is outside `hist`.
#[inline]
pub fn histogram(bins: &[u32], hist: &mut [u32]) {
    for &b in bins {
        hist[b as usize] += 1;
    }
}

/// Stores `first + k` for the k-th item of `bins` into `out[cursor[b]]`,
/// `b` its bin, and advances that cursor. The cursors start at each bin's
/// run in `out`, so the items land grouped by bin, in their order within
/// each run. `out` is shared: threads scatter into disjoint runs of one
/// output, and a relaxed store compiles to a plain store.
///
/// # Panics
/// If a bin is outside `cursor` or a cursor runs past `out`.
#[inline]
pub fn scatter(bins: &[u32], first: u32, cursor: &mut [u32], out: &[AtomicU32]) {
    for (k, &b) in bins.iter().enumerate() {
        let slot = &mut cursor[b as usize];
        out[*slot as usize].store(first + k as u32, Relaxed);
        *slot += 1;
    }
}

/// Exclusive prefix sum: the first slot of each bin's run for the counts
/// `hist`.
pub fn run_starts(hist: &[u32]) -> Vec<u32> {
    hist.iter()
        .scan(0, |acc, &h| {
            let start = *acc;
            *acc += h;
            Some(start)
        })
        .collect()
}

/// `u32` items per 64-byte line.
const LINE_ITEMS: usize = 16;

/// Where [`BinBench::scatter_through`] writes: the first slot of each
/// bin's run, and how many times a pass scatters the sequence.
pub struct Layout {
    starts: Vec<u32>,
    pub rounds: usize,
}

impl Layout {
    /// Items one pass writes.
    pub fn items(&self) -> usize {
        self.rounds * SEQUENCE
    }
}

/// A thread's state for timing the two loops in L1: a fixed pseudo-random
/// bin sequence, its histogram, cursors and output.
pub struct BinBench {
    bins: Vec<u32>,
    starts: Vec<u32>,
    hist: Vec<u32>,
    cursor: Vec<u32>,
    out: Vec<AtomicU32>,
}

impl Default for BinBench {
    fn default() -> Self {
        // A 32-bit LCG's top byte: uniform over the 256 bins.
        let mut s = 0x2545_f491u32;
        let bins: Vec<u32> = (0..SEQUENCE)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                s >> 24
            })
            .collect();
        let mut hist = vec![0; BINS];
        histogram(&bins, &mut hist);
        Self {
            starts: run_starts(&hist),
            cursor: vec![0; BINS],
            out: (0..SEQUENCE).map(|_| AtomicU32::new(0)).collect(),
            bins,
            hist,
        }
    }
}

impl BinBench {
    /// Counts the sequence's items `passes` times.
    pub fn histogram(&mut self, passes: u64) {
        for _ in 0..passes {
            histogram(&self.bins, &mut self.hist);
        }
    }

    /// Scatters the sequence's items `passes` times, each pass resetting
    /// the cursors (256 copies per 4096 items).
    pub fn scatter(&mut self, passes: u64) {
        for _ in 0..passes {
            self.cursor.copy_from_slice(&self.starts);
            scatter(&self.bins, 0, &mut self.cursor, &self.out);
        }
    }

    /// How [`BinBench::scatter_through`] lays out an output of `len`
    /// items: one run per bin, each an odd number of lines long, so that
    /// the 256 cursors' current lines spread over every set of a 4 KiB-way
    /// L1. Runs a multiple of 4 KiB long put them all into one set, where
    /// a C version of this loop took 4× the time per item; the kernel's
    /// runs, as long as its cells' counts, fall anywhere. The sequence is
    /// scattered as many times as its fullest bin fits in a run.
    pub fn layout(&self, len: usize) -> Layout {
        let lines = len / BINS / LINE_ITEMS;
        let run = lines.saturating_sub(usize::from(lines.is_multiple_of(2))) * LINE_ITEMS;
        let mut counts = vec![0usize; BINS];
        self.bins.iter().for_each(|&b| counts[b as usize] += 1);
        let fullest = counts.into_iter().max().unwrap_or(1).max(1);
        Layout {
            starts: (0..BINS).map(|k| (k * run) as u32).collect(),
            rounds: run / fullest,
        }
    }

    /// Scatters the sequence `layout.rounds` times into `out`, the cursors
    /// running on through each bin's run, `passes` times over: every item
    /// of `out`'s runs written once per pass, through 256 output streams.
    pub fn scatter_through(&mut self, out: &[AtomicU32], layout: &Layout, passes: u64) {
        for _ in 0..passes {
            self.cursor.copy_from_slice(&layout.starts);
            for _ in 0..layout.rounds {
                scatter(&self.bins, 0, &mut self.cursor, out);
            }
        }
    }

    /// The output of the last scatter.
    pub fn output(&self) -> Vec<u32> {
        self.out.iter().map(|x| x.load(Relaxed)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_through_a_large_output_fills_each_run_within_bounds() {
        let mut b = BinBench::default();
        let len = 1 << 16;
        let layout = b.layout(len);
        // 16 lines per bin would fit; runs of 15 (odd) are taken.
        assert_eq!(layout.starts[1], 240);
        assert!(layout.rounds >= 1);
        let out: Vec<AtomicU32> = (0..len).map(|_| AtomicU32::new(u32::MAX)).collect();
        b.scatter_through(&out, &layout, 1);
        let written = out.iter().filter(|x| x.load(Relaxed) != u32::MAX).count();
        assert_eq!(written, layout.items());
        // Each bin's items stay inside its own run.
        for (k, &c) in b.cursor.iter().enumerate() {
            assert!(c as usize <= (k + 1) * 240);
        }
        // Too small an output for one line per bin: nothing to scatter.
        assert_eq!(b.layout(1000).rounds, 0);
    }

    #[test]
    fn scatter_groups_by_bin_in_order() {
        let bins = [2, 0, 2, 1, 0];
        let mut hist = vec![0; 3];
        histogram(&bins, &mut hist);
        assert_eq!(hist, [2, 1, 2]);
        let mut cursor = run_starts(&hist);
        assert_eq!(cursor, [0, 2, 3]);
        let out: Vec<AtomicU32> = (0..5).map(|_| AtomicU32::new(99)).collect();
        scatter(&bins, 10, &mut cursor, &out);
        let got: Vec<u32> = out.iter().map(|x| x.load(Relaxed)).collect();
        assert_eq!(got, [11, 14, 13, 10, 12]);
        assert_eq!(cursor, [2, 3, 5]);
    }

    #[test]
    fn bench_passes_cover_the_sequence() {
        let mut b = BinBench::default();
        b.scatter(1);
        let mut out = b.output();
        out.sort_unstable();
        assert_eq!(out, (0..SEQUENCE as u32).collect::<Vec<_>>());
        b.histogram(2);
        // The default built one histogram; two more passes triple it.
        assert_eq!(b.hist.iter().sum::<u32>(), 3 * SEQUENCE as u32);
    }
}
