//! Pointer chasing: a random cyclic permutation of cache lines (Sattolo's
//! algorithm), one pointer per line, followed by dependent loads.
//!
//! Every load's address is the value of the previous load, so the loads
//! cannot overlap and time per load = load-to-use latency (lecture §2.1,
//! §2.4). The order is random so that hardware prefetchers cannot guess the
//! next line; the stride between slots is the line size so that each load
//! touches a new line. Following `k` such chains in one loop gives `k` misses
//! in flight (memory-level parallelism, lecture §4.3).

use std::hint::black_box;

use crate::mem::{Pages, Region};
use anyhow::{bail, Result};
use models::random::SplitMix64;

/// Sattolo's algorithm on `n` slots spaced `stride` words apart in `words`:
/// afterwards slot `i` holds σ(i), where σ is a uniformly random cyclic
/// permutation, so `i → σ(i)` visits all `n` slots in one cycle.
///
/// Starting from the identity, for i = n−1 down to 1 swap slot i with a slot
/// j drawn from 0..i (j < i strictly; allowing j = i would give Fisher–Yates
/// and permutations with several cycles).
pub fn sattolo(words: &mut [u64], stride: usize, n: usize, rng: &mut SplitMix64) {
    assert!(stride >= 1 && n >= 1 && (n - 1) * stride < words.len());
    for i in 0..n {
        words[i * stride] = i as u64;
    }
    for i in (1..n).rev() {
        let j = rng.below(i as u64) as usize;
        words.swap(i * stride, j * stride);
    }
}

/// A chase buffer: `n` lines of `line` bytes in one [`Region`], slot `i` at
/// the start of line `i` holding the address of line σ(i).
pub struct ChaseBuffer {
    region: Region,
    line: usize,
    n: usize,
}

impl ChaseBuffer {
    /// Builds a random single cycle over `bytes / line` lines (at least 2).
    pub fn new(bytes: usize, line: usize, pages: Pages, seed: u64) -> Result<Self> {
        if line < 8 || !line.is_multiple_of(8) {
            bail!("a cache line of {line} bytes cannot hold an aligned pointer");
        }
        let n = bytes / line;
        if n < 2 {
            bail!("a chase over {bytes} bytes needs at least 2 lines of {line} bytes");
        }
        let mut region = Region::new(n * line, pages)?;
        let base = region.as_ptr() as u64;
        let stride = line / 8;
        let words = region.words_mut();
        sattolo(words, stride, n, &mut SplitMix64::new(seed));
        for i in 0..n {
            words[i * stride] = base + words[i * stride] * line as u64;
        }
        Ok(Self { region, line, n })
    }

    /// Number of lines in the cycle.
    pub fn lines(&self) -> usize {
        self.n
    }

    /// Bytes the cycle spans.
    pub fn bytes(&self) -> usize {
        self.n * self.line
    }

    /// The underlying region (for its page policy and huge-page count).
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// A cursor on line `i` (a start of the chase).
    pub fn line(&self, i: usize) -> Cursor {
        assert!(i < self.n, "line {i} of {}", self.n);
        // SAFETY: i < n lines, all inside the region.
        Cursor(unsafe { self.region.as_ptr().add(i * self.line) } as *const usize)
    }

    /// Whether `c` points at a slot of this buffer (checked before every
    /// chase, so a cursor of another buffer is refused, not followed).
    fn owns(&self, c: Cursor) -> bool {
        let base = self.region.as_ptr() as usize;
        let a = c.0 as usize;
        a >= base && a < base + self.n * self.line && (a - base).is_multiple_of(self.line)
    }

    /// Follows the chain for `steps` dependent loads from `start`, returning
    /// where it stopped (continue from there to stay on the cycle).
    ///
    /// # Panics
    /// If `start` is not a cursor of this buffer.
    pub fn chase(&self, start: Cursor, steps: u64) -> Cursor {
        assert!(self.owns(start), "a cursor of another chase buffer");
        // SAFETY: `start` is a slot of this buffer and every slot holds the
        // address of another slot (built in `new`), so every load stays in
        // the region, which lives as long as &self.
        Cursor(unsafe { chase_raw(start.0, steps) })
    }

    /// The positions along the cycle: for each requested step index (sorted
    /// ascending, each < lines), the line reached after that many steps from
    /// line 0. One walk of the whole cycle.
    pub fn positions(&self, steps: &[usize]) -> Vec<Cursor> {
        let mut out = Vec::with_capacity(steps.len());
        let mut p = self.line(0);
        let mut at = 0usize;
        for &s in steps {
            assert!(
                s >= at && s < self.n,
                "step indices must be sorted and < lines"
            );
            p = self.chase(p, (s - at) as u64);
            at = s;
            out.push(p);
        }
        out
    }

    /// Follows `K` chains at once for `steps` steps each, `starts` updated
    /// in place: one load of every chain per step, so up to `K` misses are
    /// in flight.
    ///
    /// # Panics
    /// If a start is not a cursor of this buffer.
    pub fn chase_many<const K: usize>(&self, starts: &mut [Cursor; K], steps: u64) {
        assert!(
            starts.iter().all(|&c| self.owns(c)),
            "a cursor of another chase buffer"
        );
        let mut p: [*const usize; K] = std::array::from_fn(|i| starts[i].0);
        // SAFETY: as in `chase`, for every start.
        unsafe { chase_many_raw(&mut p, steps) };
        *starts = std::array::from_fn(|i| Cursor(p[i]));
    }
}

/// A position on a [`ChaseBuffer`]'s cycle: the address of one slot. Only
/// a buffer makes cursors, and it checks them before following them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor(*const usize);

/// `steps` dependent loads from `p`, 8 per loop iteration.
///
/// # Safety
/// `p` and every value reachable by following it must be valid, aligned
/// pointers to such values.
#[inline(never)]
unsafe fn chase_raw(mut p: *const usize, steps: u64) -> *const usize {
    for _ in 0..steps / 8 {
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
    }
    for _ in 0..steps % 8 {
        p = *p as *const usize;
    }
    black_box(p)
}

/// `K` interleaved dependent chains, one load of each per step.
///
/// # Safety
/// As [`chase_raw`], for every start.
#[inline(never)]
unsafe fn chase_many_raw<const K: usize>(starts: &mut [*const usize; K], steps: u64) {
    let mut p = *starts;
    for _ in 0..steps {
        for q in p.iter_mut() {
            *q = **q as *const usize;
        }
    }
    *starts = black_box(p);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle_length(next: &[u64]) -> usize {
        let mut i = 0usize;
        let mut len = 0;
        loop {
            i = next[i] as usize;
            len += 1;
            if i == 0 || len > next.len() {
                return len;
            }
        }
    }

    #[test]
    fn sattolo_is_one_cycle_through_all() {
        let mut rng = SplitMix64::new(7);
        for n in [1usize, 2, 3, 10, 1000, 4097] {
            let mut v = vec![0u64; n];
            sattolo(&mut v, 1, n, &mut rng);
            assert_eq!(cycle_length(&v), n, "n = {n}");
            let mut seen = v.clone();
            seen.sort();
            assert_eq!(seen, (0..n as u64).collect::<Vec<_>>(), "a permutation");
            if n > 1 {
                assert!(
                    v.iter().enumerate().all(|(i, &s)| s as usize != i),
                    "no fixed point"
                );
            }
        }
    }

    #[test]
    fn sattolo_strided_leaves_gaps_alone() {
        let mut rng = SplitMix64::new(1);
        let mut v = vec![u64::MAX; 8 * 100];
        sattolo(&mut v, 8, 100, &mut rng);
        let slots: Vec<u64> = v.iter().step_by(8).copied().collect();
        assert_eq!(cycle_length(&slots), 100);
        assert!(v
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 8 != 0)
            .all(|(_, &x)| x == u64::MAX));
    }

    #[test]
    fn buffer_chase_returns_home_after_n_steps() {
        for pages in Pages::BOTH {
            let b = ChaseBuffer::new(64 * 1000, 64, pages, 3).unwrap();
            assert_eq!(b.lines(), 1000);
            let start = b.line(0);
            assert_eq!(b.chase(start, 1000), start);
            assert_ne!(b.chase(start, 999), start);
            let pos = b.positions(&[0, 250, 500]);
            assert_eq!(pos[0], start);
            assert_eq!(b.chase(pos[1], 250), pos[2]);
            let mut many = [pos[0], pos[1]];
            b.chase_many(&mut many, 250);
            assert_eq!(many, [pos[1], pos[2]]);
        }
    }

    #[test]
    #[should_panic(expected = "another chase buffer")]
    fn refuses_foreign_cursors() {
        let a = ChaseBuffer::new(64 * 16, 64, Pages::Small, 1).unwrap();
        let b = ChaseBuffer::new(64 * 16, 64, Pages::Small, 1).unwrap();
        b.chase(a.line(0), 1);
    }

    #[test]
    fn rejects_degenerate_buffers() {
        assert!(ChaseBuffer::new(64, 64, Pages::Small, 1).is_err());
        assert!(ChaseBuffer::new(4096, 4, Pages::Small, 1).is_err());
    }
}
