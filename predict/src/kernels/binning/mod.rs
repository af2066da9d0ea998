//! Binning particles into a grid of cells under contention (lecture §2.9,
//! §3.5, thought question 3): a global lock, one lock per cell, and the
//! data-parallel counting sort with `cell_starts`/`cell_ends`.
//!
//! The lock variants build a linked list per cell (`head[c]`, `next[i]`) as
//! the lecture does; the sort builds the particle indices ordered by cell.
//! Every variant is checked against a serial reference: the same set of
//! particles in every cell.

mod run;

pub use run::Binning;

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Mutex;

use models::kernel::{ArrayUse, LoopKernel, Mode};

use calibrate::harness::kernels::{bins, Isa};
use calibrate::harness::mem::Array;
use calibrate::harness::pin::{SpinBarrier, Team};

use super::described::{loops_work, Build};
use super::team::split;
use super::work::{Demand, LockKindName, SortLoop, Work};
use super::NoWork;

/// No particle: the end of a cell's list.
pub const NIL: u32 = u32::MAX;

/// Particles in the unit square and the cell grid.
pub struct Particles {
    pub x: Array<f32>,
    pub y: Array<f32>,
    /// Cells per side; `side²` cells in all.
    pub side: usize,
}

/// The largest grid side: `side²` cell numbers fit in a `u32`, and every
/// cell coordinate is exact in an `f32`.
pub const MAX_SIDE: usize = 1 << 15;

impl Particles {
    /// `n` pseudo-random particles (a fixed LCG, so runs are repeatable),
    /// on huge pages like the other kernels' arrays.
    pub fn new(n: usize, side: usize) -> Self {
        assert!(
            (1..=MAX_SIDE).contains(&side),
            "a grid side of {side} is outside 1..={MAX_SIDE}"
        );
        let mut s = 12345u32;
        let mut next = || {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            (s >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
        };
        let (mut x, mut y) = (Array::new(n, 0, |_| 0.0), Array::new(n, 1, |_| 0.0));
        for (x, y) in x.iter_mut().zip(y.iter_mut()) {
            *x = next();
            *y = next();
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
        cell_of(self.x[i], self.y[i], self.side) as usize
    }
}

/// Cell `cy·side + cx` of the point (x, y) of the unit square, with
/// cx = ⌊x·side⌋ and cy = ⌊y·side⌋; points outside fall into the border
/// cells. It compiles to a few vector instructions per point: the clamped
/// conversion needs no saturation checks.
#[inline]
pub fn cell_of(x: f32, y: f32, side: usize) -> u32 {
    let (s, last) = (side as f32, (side - 1) as f32);
    let axis = |v: f32| -> u32 {
        // `max` turns NaN into 0.0 and `min` caps at the last cell, so the
        // value is finite and in [0, side − 1] ⊂ i32 (side ≤ MAX_SIDE).
        // SAFETY: to_int_unchecked needs a finite value that fits, which
        // the clamp guarantees.
        unsafe { (v * s).max(0.0).min(last).to_int_unchecked::<i32>() as u32 }
    };
    axis(y) * side as u32 + axis(x)
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

/// A cell's lock around its list head, alone on its cache line: threads
/// working on different cells never write the same line (§2.7.4).
#[repr(align(64))]
pub struct CellLock(pub Mutex<u32>);

impl Default for CellLock {
    fn default() -> Self {
        Self(Mutex::new(NIL))
    }
}

/// One lock per cell.
pub fn insert_per_cell(p: &Particles, range: Range<usize>, heads: &[CellLock], lists: &Lists) {
    for i in range {
        let c = p.cell(i);
        let mut h = heads[c].0.lock().unwrap_or_else(|e| e.into_inner());
        lists.next[i].store(*h, Relaxed);
        *h = i as u32;
    }
}

/// Particles per block of phase 1: the block's cells stay in L1 between
/// computing them and counting them.
const BLOCK: usize = 1024;

/// Phase 1 of the sort, per thread: the cell of each particle of `range`
/// into `cells` (lecture §2.9 step 1), and the thread's histogram into
/// `hist`.
pub fn histogram(p: &Particles, range: Range<usize>, cells: &mut [u32], hist: &mut [u32]) {
    match Isa::detect() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: Isa::detect only returns levels the CPU supports.
        Isa::Avx2 | Isa::Avx512 => unsafe { histogram_avx2(p, range, cells, hist) },
        _ => histogram_generic(p, range, cells, hist),
    }
}

/// [`histogram`] compiled for AVX2, so that the cells of a block are
/// computed eight at a time, as the reference C built for the host does.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn histogram_avx2(p: &Particles, range: Range<usize>, cells: &mut [u32], hist: &mut [u32]) {
    histogram_generic(p, range, cells, hist)
}

#[inline(always)]
fn histogram_generic(p: &Particles, range: Range<usize>, cells: &mut [u32], hist: &mut [u32]) {
    hist.fill(0);
    let (x, y) = (&p.x[range.clone()], &p.y[range]);
    for ((cells, x), y) in cells
        .chunks_mut(BLOCK)
        .zip(x.chunks(BLOCK))
        .zip(y.chunks(BLOCK))
    {
        // Indexing over one length lets the loop vectorise.
        let (x, y) = (&x[..cells.len()], &y[..cells.len()]);
        for i in 0..cells.len() {
            cells[i] = cell_of(x[i], y[i], p.side);
        }
        bins::histogram(cells, hist);
    }
}

/// Phase 2, serial and tiny: each cell's `[start, end)` in the output, by
/// an exclusive prefix sum of the threads' histograms over cells, and each
/// thread's cursors: its particles of cell c go after those of the threads
/// before it. A counting sort knows the bounds from its counts, so the
/// neighbour comparison of §2.9 step 3, which a general sort needs, is not
/// run.
pub fn bounds(hists: &[Vec<u32>]) -> Bounds {
    let cells = hists.first().map_or(0, Vec::len);
    let totals: Vec<u32> = (0..cells)
        .map(|c| hists.iter().map(|h| h[c]).sum())
        .collect();
    let starts = bins::run_starts(&totals);
    let ends = starts.iter().zip(&totals).map(|(s, n)| s + n).collect();
    let mut next = starts.clone();
    let cursors = hists
        .iter()
        .map(|h| {
            let mine = next.clone();
            next.iter_mut().zip(h).for_each(|(n, h)| *n += h);
            mine
        })
        .collect();
    Bounds {
        starts,
        ends,
        cursors,
    }
}

/// The output of phase 2.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    pub starts: Vec<u32>,
    pub ends: Vec<u32>,
    /// Per thread, the first slot of each cell's part of that thread.
    pub cursors: Vec<Vec<u32>>,
}

/// The data-parallel counting sort on a pinned team, with its buffers
/// allocated once (each thread's first-touched on that thread) and reused
/// by every run. After [`CountingSort::run`], `order` holds the particle
/// indices ordered by cell (phase 3, §2.9 step 2: each thread scatters its
/// particles into its own slots, with no lock and no atomic
/// read-modify-write) and `starts`/`ends` each cell's `[start, end)`.
pub struct CountingSort {
    ranges: Vec<Range<usize>>,
    /// Each thread's cells and histogram.
    parts: Vec<Mutex<(Array<u32>, Vec<u32>)>>,
    pub order: Array<AtomicU32>,
    pub starts: Vec<u32>,
    pub ends: Vec<u32>,
}

impl CountingSort {
    pub fn new(p: &Particles, team: &Team) -> Self {
        let ranges = split(p.len(), team.threads());
        let parts =
            team.each(|t| Mutex::new((Array::new(ranges[t].len(), 2, |_| 0), vec![0; p.cells()])));
        Self {
            ranges,
            parts,
            order: Array::new(p.len(), 3, |_| AtomicU32::new(0)),
            starts: vec![0; p.cells()],
            ends: vec![0; p.cells()],
        }
    }

    /// Sorts `p` (the particles this sort was built for) in one parallel
    /// region, as the C version's OpenMP does: each thread's histogram, a
    /// barrier, the bounds on thread 0, a barrier, each thread's scatter.
    /// With a broadcast to the team per phase instead, from a calling
    /// thread that sleeps in between, a sort of 1 Mi particles on the
    /// 2-vCPU Zen 4 VM took 899–928 µs against 747–840 µs (alternated six
    /// times); an empty broadcast alone took 14–16 µs.
    pub fn run(&mut self, p: &Particles, team: &Team) {
        let barrier = SpinBarrier::new(team.threads());
        let shared: Mutex<Option<Bounds>> = Mutex::new(None);
        let (ranges, parts, order) = (&self.ranges, &self.parts, &self.order);
        let lock = |t: usize| parts[t].lock().unwrap_or_else(|e| e.into_inner());
        team.each(|t| {
            {
                let (cells, hist) = &mut *lock(t);
                histogram(p, ranges[t].clone(), cells, hist);
            }
            barrier.wait();
            if t == 0 {
                let hists: Vec<Vec<u32>> = (0..parts.len()).map(|k| lock(k).1.clone()).collect();
                *shared.lock().unwrap_or_else(|e| e.into_inner()) = Some(bounds(&hists));
            }
            barrier.wait();
            let mut cursor = shared
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map(|b| b.cursors[t].clone())
                .expect("thread 0 set the bounds before the barrier");
            bins::scatter(&lock(t).0, ranges[t].start as u32, &mut cursor, order);
        });
        let b = shared
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .expect("thread 0 set the bounds");
        (self.starts, self.ends) = (b.starts, b.ends);
    }

    /// The cells of the last run's result, each sorted ascending (empty
    /// cells have start = end).
    pub fn cells(&self) -> Vec<Vec<u32>> {
        self.starts
            .iter()
            .zip(&self.ends)
            .map(|(&a, &b)| {
                let mut v: Vec<u32> = self.order[a as usize..b as usize]
                    .iter()
                    .map(|x| x.load(Relaxed))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect()
    }
}

/// The data-parallel sort's passes over `n` particles on `threads` threads,
/// as loop descriptions: the cells from x and y (8 B loaded, 4 B stored per
/// particle) with one histogram item each, then one scatter item per
/// particle (its cell loaded, its index stored): 20 B per particle, 8 B of
/// them stores.
pub fn sort_passes(n: usize, threads: usize) -> [LoopKernel; 2] {
    let u32s = |name: &str, mode| ArrayUse::contiguous(name, mode, 4.0);
    let pass = |arrays, sort_loop| LoopKernel {
        sort_loops: vec![sort_loop],
        ..LoopKernel::streaming(n as f64, threads, arrays)
    };
    [
        pass(
            vec![
                u32s("x", Mode::Load),
                u32s("y", Mode::Load),
                u32s("cells", Mode::Store),
            ],
            SortLoop::Histogram,
        ),
        pass(
            vec![u32s("cells", Mode::Load), u32s("order", Mode::Store)],
            SortLoop::Scatter,
        ),
    ]
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

    /// The work to predict from, or why this variant has none: the
    /// lock-free insertion's loop, particle by particle (its cell in
    /// scalar code, then a load and a store of the head and a store of the
    /// link), is no profile figure. The calibrated bin loops are the
    /// counting sort's, whose cells come a block at a time from vector
    /// code: on one thread of the Zen 4 VM the insertion took 3.2–3.3 ns
    /// per particle, the histogram loop 0.42 ns per item.
    pub fn declared(self, n: usize, cells: usize, threads: usize) -> Result<Work, NoWork> {
        let n_f = n as f64;
        let demands = match self {
            // The critical sections only load and store list links, as the
            // calibrated empty section does. The heads live apart from the
            // global lock: the head line of the particle's cell is written
            // under the lock, and another thread wrote it last with
            // probability (p−1)/p.
            Variant::GlobalLock => vec![Demand::Lock {
                ops: n_f,
                kind: LockKindName::Mutex,
                lanes: 1.0,
                critical_s: 0.0,
                data_lines: (threads as f64 - 1.0) / threads as f64,
            }],
            // Each head lives inside its cell's mutex, on the lock's line.
            Variant::CellLocks => vec![Demand::Lock {
                ops: n_f,
                kind: LockKindName::Mutex,
                lanes: cells as f64,
                critical_s: 0.0,
                data_lines: 0.0,
            }],
            // The two passes as loop descriptions, the one model users'
            // loops go through.
            Variant::DataParallel => {
                let per_thread = 20.0 * n_f / threads as f64;
                return Ok(loops_work(&sort_passes(n, threads), Build::builtin(), per_thread));
            }
            Variant::NoSync => return Err(NoWork::Unmodelled(
                "the particle-by-particle list insertion (a scalar cell, then the head's load and store and the link's store) is no profile figure: the calibrated bin loops are the counting sort's, whose cells come a block at a time from vector code",
            )),
        };
        Ok(Work { demands })
    }
}

#[cfg(test)]
mod tests;
