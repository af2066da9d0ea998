//! Binning particles into a grid of cells under contention (lecture §2.9,
//! §3.5, thought question 3): a global lock, one lock per cell, and the
//! data-parallel counting sort with `cell_starts`/`cell_ends`.
//!
//! The lock variants build a linked list per cell (`head[c]`, `next[i]`) as
//! the lecture does; the sort builds the particle indices ordered by cell.
//! Every variant is checked against a serial reference: the same set of
//! particles in every cell.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Mutex;

use super::work::{Demand, LockKindName, Work};

/// No particle: the end of a cell's list.
pub const NIL: u32 = u32::MAX;

/// Particles in the unit square and the cell grid.
pub struct Particles {
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    /// Cells per side; `side²` cells in all.
    pub side: usize,
}

impl Particles {
    /// `n` pseudo-random particles (a fixed LCG, so runs are repeatable).
    pub fn new(n: usize, side: usize) -> Self {
        let mut s = 12345u32;
        let mut next = || {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            (s >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
        };
        let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            x.push(next());
            y.push(next());
        }
        Self { x, y, side }
    }

    pub fn len(&self) -> usize {
        self.x.len()
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    pub fn cells(&self) -> usize {
        self.side * self.side
    }

    /// Cell of particle `i`.
    #[inline]
    pub fn cell(&self, i: usize) -> usize {
        let s = self.side as f32;
        let cx = ((self.x[i] * s) as usize).min(self.side - 1);
        let cy = ((self.y[i] * s) as usize).min(self.side - 1);
        cy * self.side + cx
    }
}

/// Linked lists per cell, shared by the lock variants.
pub struct Lists {
    pub next: Vec<AtomicU32>,
}

impl Lists {
    pub fn new(n: usize) -> Self {
        Self {
            next: (0..n).map(|_| AtomicU32::new(NIL)).collect(),
        }
    }
}

/// Global lock: every insertion takes the one lock around all heads.
pub fn insert_global(p: &Particles, range: Range<usize>, heads: &Mutex<Vec<u32>>, lists: &Lists) {
    for i in range {
        let c = p.cell(i);
        let mut h = heads.lock().unwrap_or_else(|e| e.into_inner());
        lists.next[i].store(h[c], Relaxed);
        h[c] = i as u32;
    }
}

/// One lock per cell.
pub fn insert_per_cell(p: &Particles, range: Range<usize>, heads: &[Mutex<u32>], lists: &Lists) {
    for i in range {
        let c = p.cell(i);
        let mut h = heads[c].lock().unwrap_or_else(|e| e.into_inner());
        lists.next[i].store(*h, Relaxed);
        *h = i as u32;
    }
}

/// Result of the counting sort: particle indices ordered by cell, and each
/// cell's `[start, end)` in that order.
#[derive(Debug, Clone, PartialEq)]
pub struct Sorted {
    pub order: Vec<u32>,
    pub cell_of: Vec<u32>,
    pub starts: Vec<u32>,
    pub ends: Vec<u32>,
}

/// Phase 1 of the sort, per thread: the cell of each particle of `range`
/// into `cells`, and the thread's histogram into `hist`.
pub fn histogram(p: &Particles, range: Range<usize>, cells: &mut [u32], hist: &mut [u32]) {
    hist.fill(0);
    for (i, slot) in range.zip(cells.iter_mut()) {
        let c = p.cell(i);
        hist[c] += 1;
        *slot = c as u32;
    }
}

/// Phase 2, serial and tiny: the offset of every (thread, cell) in the
/// output, by an exclusive prefix sum over cells then threads.
pub fn offsets(hists: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let cells = hists.first().map_or(0, Vec::len);
    let mut out = vec![vec![0u32; cells]; hists.len()];
    let mut acc = 0u32;
    for c in 0..cells {
        for (t, h) in hists.iter().enumerate() {
            out[t][c] = acc;
            acc += h[c];
        }
    }
    out
}

/// Phase 3, per thread: scatter the thread's particles to their slots.
/// `slots` is the whole output; each thread writes only its own disjoint
/// positions, which the offsets guarantee.
pub fn scatter(
    range: Range<usize>,
    cells: &[u32],
    mut offsets: Vec<u32>,
    order: &[AtomicU32],
    cell_of: &[AtomicU32],
) {
    for (i, &c) in range.zip(cells) {
        let pos = offsets[c as usize] as usize;
        offsets[c as usize] += 1;
        order[pos].store(i as u32, Relaxed);
        cell_of[pos].store(c, Relaxed);
    }
}

/// Phase 4, per thread over a range of positions: a cell starts where the
/// cell number changes (§2.9 step 3).
pub fn bounds(
    range: Range<usize>,
    cell_of: &[AtomicU32],
    starts: &[AtomicU32],
    ends: &[AtomicU32],
) {
    let n = cell_of.len();
    let cell = |k: usize| cell_of[k].load(Relaxed) as usize;
    for idx in range {
        let c = cell(idx);
        if idx == 0 || cell(idx - 1) != c {
            starts[c].store(idx as u32, Relaxed);
            if idx > 0 {
                ends[cell(idx - 1)].store(idx as u32, Relaxed);
            }
        }
        if idx == n - 1 {
            ends[c].store(n as u32, Relaxed);
        }
    }
}

/// The serial reference: particle indices per cell, ascending.
pub fn reference(p: &Particles) -> Vec<Vec<u32>> {
    let mut cells = vec![Vec::new(); p.cells()];
    for i in 0..p.len() {
        cells[p.cell(i)].push(i as u32);
    }
    cells
}

/// The cells of linked lists, each sorted ascending for comparison.
pub fn from_lists(heads: &[u32], lists: &Lists) -> Vec<Vec<u32>> {
    heads
        .iter()
        .map(|&h| {
            let mut v = Vec::new();
            let mut i = h;
            while i != NIL {
                v.push(i);
                i = lists.next[i as usize].load(Relaxed);
            }
            v.sort_unstable();
            v
        })
        .collect()
}

/// The cells of a sort result, each sorted ascending (empty cells have
/// start = end).
pub fn from_sorted(s: &Sorted) -> Vec<Vec<u32>> {
    s.starts
        .iter()
        .zip(&s.ends)
        .map(|(&a, &b)| {
            let mut v = s.order[a as usize..b as usize].to_vec();
            v.sort_unstable();
            v
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    GlobalLock,
    CellLocks,
    DataParallel,
    /// The global-lock loop with the lock removed, each thread on private
    /// heads (sync headroom, §5 point 5).
    NoSync,
}

impl Variant {
    pub const MAIN: [Variant; 3] = [
        Variant::GlobalLock,
        Variant::CellLocks,
        Variant::DataParallel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::GlobalLock => "global-lock",
            Variant::CellLocks => "cell-locks",
            Variant::DataParallel => "data-parallel",
            Variant::NoSync => "global-lock+no-sync",
        }
    }

    /// Declared work for `n` particles into `cells` cells.
    pub fn work(self, n: usize, cells: usize, threads: usize) -> Work {
        let n_f = n as f64;
        let per_thread = |bytes_per_item: f64| n_f * bytes_per_item / threads as f64;
        let demands = match self {
            // The heads live apart from the global lock: the head line of
            // the particle's cell is written under the lock.
            Variant::GlobalLock => vec![Demand::Lock {
                ops: n_f,
                kind: LockKindName::Mutex,
                lanes: 1.0,
                data_lines: 1.0,
            }],
            // Each head lives inside its cell's mutex, on the lock's line.
            Variant::CellLocks => vec![Demand::Lock {
                ops: n_f,
                kind: LockKindName::Mutex,
                lanes: cells as f64,
                data_lines: 0.0,
            }],
            // Histogram: read x, y (8 B) and write the cell (4 B); scatter:
            // read the cell (4 B), write index and cell (8 B); bounds: read
            // cells (4 B) — 28 B per particle, of which 12 B are stores.
            // The histogram's counter increments are dependent L1
            // read-modify-writes, one per particle per thread.
            Variant::DataParallel => vec![
                Demand::Memory {
                    bytes: 28.0 * n_f,
                    bytes_wa: 40.0 * n_f,
                    mix: "triad",
                    per_thread_bytes: per_thread(28.0),
                },
                Demand::Increments {
                    per_thread: n_f / threads as f64,
                    sharers: 1.0,
                },
            ],
            // Reads x, y and writes next[i]; the head update is a dependent
            // L1 read-modify-write per particle.
            Variant::NoSync => vec![
                Demand::Memory {
                    bytes: 12.0 * n_f,
                    bytes_wa: 16.0 * n_f,
                    mix: "triad",
                    per_thread_bytes: per_thread(12.0),
                },
                Demand::Increments {
                    per_thread: n_f / threads as f64,
                    sharers: 1.0,
                },
            ],
        };
        Work { demands }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sort_serially(p: &Particles, threads: usize) -> Sorted {
        let ranges = super::super::team::split(p.len(), threads);
        let parts: Vec<_> = ranges
            .iter()
            .map(|r| {
                let (mut cells, mut hist) = (vec![0; r.len()], vec![0; p.cells()]);
                histogram(p, r.clone(), &mut cells, &mut hist);
                (cells, hist)
            })
            .collect();
        let offs = offsets(&parts.iter().map(|(_, h)| h.clone()).collect::<Vec<_>>());
        let n = p.len();
        let order: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        let cell_of: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        for ((r, (cells, _)), o) in ranges.iter().zip(&parts).zip(offs) {
            scatter(r.clone(), cells, o, &order, &cell_of);
        }
        let starts: Vec<AtomicU32> = (0..p.cells()).map(|_| AtomicU32::new(0)).collect();
        let ends: Vec<AtomicU32> = (0..p.cells()).map(|_| AtomicU32::new(0)).collect();
        bounds(0..n, &cell_of, &starts, &ends);
        Sorted {
            order: order.into_iter().map(AtomicU32::into_inner).collect(),
            cell_of: cell_of.into_iter().map(AtomicU32::into_inner).collect(),
            starts: starts.into_iter().map(AtomicU32::into_inner).collect(),
            ends: ends.into_iter().map(AtomicU32::into_inner).collect(),
        }
    }

    #[test]
    fn sort_matches_reference() {
        let p = Particles::new(5000, 16);
        let s = sort_serially(&p, 3);
        assert_eq!(from_sorted(&s), reference(&p));
        assert!(s.cell_of.windows(2).all(|w| w[0] <= w[1]), "sorted by cell");
    }

    #[test]
    fn locks_match_reference() {
        let p = Particles::new(3000, 4);
        let lists = Lists::new(p.len());
        let heads = Mutex::new(vec![NIL; p.cells()]);
        std::thread::scope(|s| {
            for r in super::super::team::split(p.len(), 3) {
                let (p, heads, lists) = (&p, &heads, &lists);
                s.spawn(move || insert_global(p, r, heads, lists));
            }
        });
        assert_eq!(
            from_lists(&heads.into_inner().unwrap(), &lists),
            reference(&p)
        );
        let lists = Lists::new(p.len());
        let heads: Vec<Mutex<u32>> = (0..p.cells()).map(|_| Mutex::new(NIL)).collect();
        std::thread::scope(|s| {
            for r in super::super::team::split(p.len(), 3) {
                let (p, heads, lists) = (&p, &heads, &lists);
                s.spawn(move || insert_per_cell(p, r, heads, lists));
            }
        });
        let h: Vec<u32> = heads.into_iter().map(|m| m.into_inner().unwrap()).collect();
        assert_eq!(from_lists(&h, &lists), reference(&p));
    }
}
