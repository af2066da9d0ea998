//! Pointer chasing: a random cyclic permutation of cache lines (distributed
//! as Sattolo's algorithm gives them), one pointer per line, followed by
//! dependent loads.
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

/// A uniformly random cyclic order of the lines `0..n`: a Fisher–Yates
/// shuffle of the identity. Following `order[0] → order[1] → … →
/// order[n−1] → order[0]` is one cycle through every line, and each cycle
/// comes from exactly `n` shuffles (its rotations), so every cycle is
/// equally likely: the distribution of Sattolo's algorithm, with the
/// position of each line along the cycle known without walking it.
pub fn cyclic_order(n: usize, rng: &mut SplitMix64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// A chase buffer: `n` lines of `line` bytes in one [`Region`], the start of
/// each line holding the address of the next line along a random cycle
/// ([`cyclic_order`], kept: 4 bytes per line).
pub struct ChaseBuffer {
    region: Region,
    line: usize,
    order: Vec<u32>,
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
        if u32::try_from(n).is_err() {
            bail!("a chase over {bytes} bytes has more lines than a 32-bit order holds");
        }
        let mut region = Region::new(n * line, pages)?;
        let base = region.as_ptr() as u64;
        let stride = line / 8;
        let order = cyclic_order(n, &mut SplitMix64::new(seed));
        let words = region.words_mut();
        for (&from, &to) in order.iter().zip(order.iter().cycle().skip(1)) {
            words[from as usize * stride] = base + u64::from(to) * line as u64;
        }
        Ok(Self {
            region,
            line,
            order,
        })
    }

    /// Number of lines in the cycle.
    pub fn lines(&self) -> usize {
        self.order.len()
    }

    /// Bytes the cycle spans.
    pub fn bytes(&self) -> usize {
        self.lines() * self.line
    }

    /// The underlying region (for its page policy and huge-page count).
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// A cursor on line `i` (a start of the chase).
    pub fn line(&self, i: usize) -> Cursor {
        assert!(i < self.lines(), "line {i} of {}", self.lines());
        // SAFETY: i < n lines, all inside the region.
        Cursor(unsafe { self.region.as_ptr().add(i * self.line) } as *const usize)
    }

    /// Whether `c` points at a slot of this buffer (checked before every
    /// chase, so a cursor of another buffer is refused, not followed).
    fn owns(&self, c: Cursor) -> bool {
        let base = self.region.as_ptr() as usize;
        let a = c.0 as usize;
        a >= base && a < base + self.bytes() && (a - base).is_multiple_of(self.line)
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

    /// The positions along the cycle: the line `s` steps after the
    /// cycle's first line, for each `s` of `steps` (each < lines).
    pub fn positions(&self, steps: &[usize]) -> Vec<Cursor> {
        steps
            .iter()
            .map(|&s| self.line(self.order[s % self.lines()] as usize))
            .collect()
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

    #[test]
    fn cyclic_orders_are_permutations_and_uniform_over_cycles() {
        let mut rng = SplitMix64::new(7);
        for n in [1usize, 2, 3, 10, 1000, 4097] {
            let mut seen = cyclic_order(n, &mut rng);
            seen.sort();
            assert_eq!(seen, (0..n as u32).collect::<Vec<_>>(), "n = {n}");
        }
        // The 3! = 6 orders of 3 lines make 2 cycles (0→1→2 and 0→2→1),
        // each from 3 rotations: both equally likely.
        let trials = 6000;
        let forward = (0..trials)
            .filter(|_| {
                let o = cyclic_order(3, &mut rng);
                let at = |v| o.iter().position(|&x| x == v).unwrap();
                (at(1) + 3 - at(0)) % 3 == 1
            })
            .count();
        assert!((2700..=3300).contains(&forward), "{forward} of {trials}");
    }

    #[test]
    fn buffer_chase_returns_home_after_n_steps() {
        for pages in Pages::BOTH {
            let b = ChaseBuffer::new(64 * 1000, 64, pages, 3).unwrap();
            assert_eq!(b.lines(), 1000);
            let start = b.line(0);
            assert_eq!(b.chase(start, 1000), start);
            assert!((1..1000).all(|s| b.chase(start, s) != start), "one cycle");
            let pos = b.positions(&[0, 250, 500]);
            assert_eq!(b.chase(pos[0], 250), pos[1]);
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
