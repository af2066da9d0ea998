//! Pointer chasing: a pseudo-random cyclic permutation of cache lines, one
//! pointer per line, followed by dependent loads.
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

/// A keyed pseudo-random permutation of `0..n` that needs no memory: a
/// four-round Feistel network on the smallest even number of bits that
/// holds n, walked again from any value ≥ n until it lands below n
/// (cycle-walking, as format-preserving encryption does; each walk is the
/// same bijection, so the result is a bijection of `0..n`, and it lands
/// within four walks on average). The chase visits `order(0) → order(1) →
/// … → order(n−1) → order(0)`: one cycle through every line, in an order
/// no prefetcher can guess, with each line's place on the cycle known
/// without walking it and without a table of n entries.
#[derive(Debug, Clone)]
pub struct CyclicOrder {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl CyclicOrder {
    /// The order of `n` lines (at least 1) for `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        assert!(n >= 1, "an order of no lines");
        let bits = 64 - (n - 1).max(1).leading_zeros();
        let mut rng = SplitMix64::new(seed);
        Self {
            n,
            half_bits: bits.div_ceil(2),
            keys: std::array::from_fn(|_| rng.next_u64()),
        }
    }

    /// The line at place `s` of the cycle (taken modulo n).
    pub fn at(&self, s: u64) -> u64 {
        let mut x = s % self.n;
        loop {
            x = self.feistel(x);
            if x < self.n {
                return x;
            }
        }
    }

    /// One pass of the network over 2·half_bits bits. The round function
    /// is a multiplicative hash of the right half and the round's key (the
    /// product's top half_bits bits), one multiply per round.
    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for &k in &self.keys {
            let f = (r ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.half_bits);
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }
}

/// A chase buffer: `n` lines of `line` bytes in one [`Region`], the start of
/// each line holding the address of the next line along a random cycle
/// ([`CyclicOrder`]).
pub struct ChaseBuffer {
    region: Region,
    line: usize,
    order: CyclicOrder,
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
        let order = CyclicOrder::new(n as u64, seed);
        let words = region.words_mut();
        let first = order.at(0);
        let mut from = first;
        for s in 1..=n as u64 {
            let to = if s == n as u64 { first } else { order.at(s) };
            words[from as usize * stride] = base + to * line as u64;
            from = to;
        }
        Ok(Self {
            region,
            line,
            order,
        })
    }

    /// Number of lines in the cycle.
    pub fn lines(&self) -> usize {
        self.order.n as usize
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
    /// cycle's first line, for each `s` of `steps`.
    pub fn positions(&self, steps: &[usize]) -> Vec<Cursor> {
        steps
            .iter()
            .map(|&s| self.line(self.order.at(s as u64) as usize))
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
    fn cyclic_orders_are_permutations_that_vary_with_the_seed() {
        for n in [1u64, 2, 3, 10, 1000, 4097, 65536] {
            let o = CyclicOrder::new(n, 7);
            let mut seen: Vec<u64> = (0..n).map(|s| o.at(s)).collect();
            seen.sort();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n = {n}");
            assert_eq!(o.at(n + 5), o.at(5), "places wrap around");
        }
        // The two cycles of 3 lines (0→1→2 and 0→2→1) both come up.
        let forward = (0..400u64)
            .filter(|&seed| {
                let o = CyclicOrder::new(3, seed);
                let at = |v| (0..3).find(|&s| o.at(s) == v).unwrap();
                (at(1) + 3 - at(0)) % 3 == 1
            })
            .count();
        assert!((100..=300).contains(&forward), "{forward} of 400");
        // Neighbours on the cycle are not neighbours in memory.
        let o = CyclicOrder::new(1 << 20, 1);
        let near = (0..10_000u64)
            .filter(|&s| o.at(s).abs_diff(o.at(s + 1)) <= 64)
            .count();
        assert!(near < 20, "{near} of 10000 steps within 64 lines");
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
