//! A loop described by its work: the description that `predict kernel`
//! takes from a user and that every built-in kernel declares (lecture §2.5,
//! §2.7, §4.3, §4.4).
//!
//! One loop of `n` iterations, split evenly and contiguously over `threads`
//! threads. Per iteration each array is loaded, stored or updated (read and
//! written back) for `bytes` bytes, contiguously, with a stride, or at one
//! random element of a region; the iteration does `flops` floating-point
//! operations, `chain` of which depend on the previous iteration's result
//! and `span` of which wait for one another within the iteration (its
//! longest dependent path: Horner's scheme of degree 16 has 16 FMAs).
//!
//! From the description alone (no machine), this module derives what the
//! memory system must move, in whole cache lines:
//!
//! | access | lines per iteration | bytes moved per iteration |
//! |---|---|---|
//! | contiguous (stride = bytes) | bytes / line | bytes |
//! | strided, stride S < line | S / line | S (whole lines pass, BYTES/S of each used) |
//! | strided, line ≤ S < 2 · ⌈bytes / line⌉ · line | min(⌈bytes / line⌉, S / line) | min(⌈bytes / line⌉ · line, S) |
//! | strided, S ≥ 2 · ⌈bytes / line⌉ · line (scattered) | ⌈bytes / line⌉, each a separate miss | ⌈bytes / line⌉ · line |
//! | random over a region | ⌈bytes / line⌉, each a separate miss | ⌈bytes / line⌉ · line |
//!
//! A stride that skips as many lines as it uses (a matrix's column, every
//! eighth double of a row) is no stream: the hardware prefetchers follow
//! runs of adjacent lines, so each of its lines is a demand miss, served
//! as random accesses are, at the latency of the level holding its lines
//! over the misses a core keeps in flight (§4.3); its lines take a cache
//! as its span does where the stride is a power of two of lines (they
//! fall in one set of every 2^k), as lines where it is odd. On the
//! Zen 4 VM a sum over every 128th to 65536th byte of 1 GiB on huge pages
//! took 6.3–15 ns per access, where a stream of lines took 3.1 ns per line
//! and the random-access figures give 7.8 ns.
//!
//! A store to a line not read first costs a write-allocate read of it
//! (§2.7); an update reads the line anyway, so it costs none.
//!
//! Loads of lines the loop itself brought into L1 a few iterations before
//! (a stencil's neighbours: §2.7.1's reuse) move nothing, so the arrays'
//! bytes leave them out; the core still issues them. The description
//! names them apart, as `reused_bytes` per iteration: load/store-port work
//! that the core does not overlap with the loop's line transfers (the ECM
//! model's non-overlapping in-core time).
//!
//! Loads of lines brought in further back (a stencil's row above, a few
//! kilobytes of traffic earlier) hit L1 only while L1 holds everything the
//! loop touched in between: Kerncraft's layer condition. The description
//! names them as [`Reuse`]s, each with that window; whether L1, or which
//! level beyond it, holds the window is for the machine to say.
//!
//! A thread's streams run contiguously through its share of the
//! iterations, unless the loop jumps every `segment_iterations` (a tile's
//! row): then each run starts its streams anew, at a cost the machine's
//! profile holds, which depends on how much a tile column holds
//! (`segment_stride_iterations`, a row of the array the tile runs over,
//! gives the runs to a row).

use serde::{Deserialize, Serialize};

mod error;
mod traffic;
mod validate;

pub use error::DescriptionError;
pub use traffic::Traffic;

/// How an iteration uses an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Read only.
    Load,
    /// Written without being read: each line is first read for ownership
    /// (write-allocate) unless the stores are non-temporal.
    Store,
    /// Read and written back (`a[i] = f(a[i])`): no extra allocate read.
    Update,
}

impl Mode {
    /// Whether the iteration reads the array.
    pub fn reads(self) -> bool {
        self != Mode::Store
    }

    /// Whether the iteration writes the array.
    pub fn writes(self) -> bool {
        self != Mode::Load
    }
}

/// Where consecutive iterations find an array's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Access {
    /// Iteration i uses the bytes at i·stride (stride = bytes: contiguous).
    Strided { stride_bytes: f64 },
    /// Each iteration uses one element at a random place of a region.
    Random { region_bytes: f64 },
}

/// One array of the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrayUse {
    pub name: String,
    pub mode: Mode,
    /// Bytes of the array one iteration uses.
    pub bytes: f64,
    pub access: Access,
}

impl ArrayUse {
    /// Whether the array's stride skips as many lines as each element uses
    /// (S ≥ 2·⌈bytes/line⌉·line): no stream, but separate misses.
    pub fn scattered(&self, lines: Lines) -> bool {
        let line = lines.line_bytes;
        matches!(self.access, Access::Strided { stride_bytes }
            if stride_bytes >= 2.0 * (self.bytes / line).ceil() * line)
    }

    /// The cache a scattered array's iteration takes: its lines
    /// (⌈bytes/line⌉) times the largest power of two dividing its stride in
    /// lines, at most the stride. Caches pick a line's set from the
    /// address's low bits, so a stride of 2^k lines uses one set in 2^k and
    /// fills a cache as its span would (a row-major matrix's column of a
    /// power-of-two row length evicts itself long before the cache is
    /// full); an odd stride spreads over every set, and its lines fill it
    /// as lines.
    pub fn cached_bytes_per_use(&self, stride_bytes: f64, lines: Lines) -> f64 {
        let line = lines.line_bytes;
        let used = (self.bytes / line).ceil() * line;
        let in_lines = stride_bytes / line;
        let aliasing = if in_lines.fract() == 0.0 && in_lines < 2f64.powi(63) {
            2f64.powi((in_lines as u64).trailing_zeros() as i32)
        } else {
            1.0
        };
        (used * aliasing).min(stride_bytes)
    }

    /// `bytes` of array `name` per iteration, consecutive iterations
    /// side by side.
    pub fn contiguous(name: &str, mode: Mode, bytes: f64) -> Self {
        Self {
            name: name.into(),
            mode,
            bytes,
            access: Access::Strided {
                stride_bytes: bytes,
            },
        }
    }
}

/// Floating-point precision of the loop's arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    #[default]
    F64,
    F32,
}

impl Precision {
    /// `"f64"` or `"f32"`, as the profile names its ceilings.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
        }
    }

    /// Bytes of one number: 8 or 4.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F64 => 8,
            Precision::F32 => 4,
        }
    }
}

/// One of the counting sort's two inner loops (lecture §2.9 step 2,
/// §3.5), which `calibrate` times per item over 256 bins: the histogram
/// (`count[bin] += 1`) and the scatter (`out[cursor[bin]++] = i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SortLoop {
    Histogram,
    Scatter,
}

impl SortLoop {
    /// `"histogram"` or `"scatter"`, as the profile names the loops.
    pub fn key(self) -> &'static str {
        match self {
            SortLoop::Histogram => "histogram",
            SortLoop::Scatter => "scatter",
        }
    }
}

/// A loop described by its work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopKernel {
    /// Iterations of all threads together.
    pub n: f64,
    /// Threads, each running a contiguous n/threads of the iterations.
    pub threads: usize,
    pub arrays: Vec<ArrayUse>,
    /// Floating-point operations per iteration.
    pub flops: f64,
    pub precision: Precision,
    /// Dependent steps per iteration that wait for the previous
    /// iteration's result (an FMA is one step), each at least one flop.
    pub chain: f64,
    /// Dependent steps within one iteration, each waiting for the one
    /// before (an FMA is one step, a multiply then an add two); 0 when
    /// absent. The core overlaps the iterations' chains only as far as its
    /// out-of-order window holds them.
    #[serde(default)]
    pub span: f64,
    /// Bytes per iteration loaded again from lines already in L1 (the
    /// reuse the arrays' bytes leave out); 0 when absent.
    #[serde(default)]
    pub reused_bytes: f64,
    /// Loads of lines brought in further back, found again only in a cache
    /// that holds their window (the layer condition); none when absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windowed_reuse: Vec<Reuse>,
    /// Iterations a thread runs over contiguous elements before its
    /// streams jump elsewhere (a tile's width); `None`: its streams run
    /// contiguously through its whole share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_iterations: Option<f64>,
    /// Iterations from one run's start to the next run's, in memory (the
    /// row of the array a tile runs over); `None`: far apart, many runs to
    /// a row, so small tile columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_stride_iterations: Option<f64>,
    /// Items of the counting sort's loops each iteration runs, at their
    /// calibrated time per item (load/store work that adds to the memory
    /// time); none when absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sort_loops: Vec<SortLoop>,
}

/// Loads per iteration of lines the loop used `window_bytes` of its own
/// traffic before (all its streams counted, Kerncraft's cache requirement):
/// a thread's cache must hold the window for them to hit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Reuse {
    /// Bytes loaded again per iteration.
    pub bytes: f64,
    /// Bytes a thread's cache must hold between the two uses.
    pub window_bytes: f64,
}

/// Bytes a cache level holds and moves per line, for the traffic figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lines {
    pub line_bytes: f64,
}

/// Random accesses of the loop: separate misses served at the latency of
/// the level that holds the region (§4.3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RandomAccesses {
    /// Lines fetched, all iterations together.
    pub lines: f64,
    /// The region the accesses fall in.
    pub region_bytes: f64,
    /// Whether the lines are written back too (store or update).
    pub written: bool,
    /// The stride of a scattered array, whose iterations are split
    /// between the threads (each touches its own slice of the region, 1/p
    /// of it) and visit its pages in order; `None` for accesses at random
    /// over a region every thread touches whole.
    pub stride_bytes: Option<f64>,
}

impl LoopKernel {
    /// `n` iterations on `threads` threads over `arrays` and nothing else:
    /// no flops (f64), no chain, no reuse, contiguous runs, no sort loops.
    pub fn streaming(n: f64, threads: usize, arrays: Vec<ArrayUse>) -> Self {
        Self {
            n,
            threads,
            arrays,
            flops: 0.0,
            precision: Precision::F64,
            chain: 0.0,
            span: 0.0,
            reused_bytes: 0.0,
            windowed_reuse: Vec::new(),
            segment_iterations: None,
            segment_stride_iterations: None,
            sort_loops: Vec::new(),
        }
    }

    /// The bytes `iterations` span in every strided array (iterations ·
    /// stride), with every random region whole, whatever the line size.
    pub(super) fn spanned_bytes(&self, iterations: f64) -> f64 {
        self.arrays
            .iter()
            .map(|a| match a.access {
                Access::Strided { stride_bytes } => iterations * stride_bytes,
                Access::Random { region_bytes } => region_bytes,
            })
            .sum()
    }

    /// The bytes the loop's arrays take in memory: what all n iterations
    /// span in every strided array (n·stride), with every random region.
    pub fn footprint_bytes(&self) -> f64 {
        self.spanned_bytes(self.n)
    }

    /// Streamed traffic (contiguous and strided arrays, the scattered ones
    /// apart) of all iterations.
    pub fn traffic(&self, lines: Lines) -> Traffic {
        let line = lines.line_bytes;
        self.arrays
            .iter()
            .filter(|a| !a.scattered(lines))
            .filter_map(|a| match a.access {
                Access::Strided { stride_bytes } => {
                    let moved = strided_bytes(a.bytes, stride_bytes, line);
                    Some(Traffic {
                        load_bytes: if a.mode.reads() { moved } else { 0.0 },
                        store_bytes: if a.mode.writes() { moved } else { 0.0 },
                        allocate_bytes: if a.mode == Mode::Store { moved } else { 0.0 },
                    })
                }
                Access::Random { .. } => None,
            })
            .fold(Traffic::default(), Traffic::plus)
            .times(self.n)
    }

    /// Random accesses, one entry per randomly accessed or scattered array
    /// (whose region is what its lines take of a cache, sliced between
    /// the threads).
    pub fn random_accesses(&self, lines: Lines) -> Vec<RandomAccesses> {
        self.arrays
            .iter()
            .filter_map(|a| {
                let (region_bytes, stride_bytes) = match a.access {
                    Access::Random { region_bytes } => (region_bytes, None),
                    Access::Strided { stride_bytes } if a.scattered(lines) => (
                        self.n * a.cached_bytes_per_use(stride_bytes, lines),
                        Some(stride_bytes),
                    ),
                    Access::Strided { .. } => return None,
                };
                Some(RandomAccesses {
                    lines: self.n * (a.bytes / lines.line_bytes).ceil(),
                    region_bytes,
                    written: a.mode.writes(),
                    stride_bytes,
                })
            })
            .collect()
    }

    /// The data one thread keeps in its caches from one pass to the next:
    /// its share of the streamed arrays (the lines they span), of a
    /// scattered array's lines as the caches' sets take them
    /// ([`ArrayUse::cached_bytes_per_use`]), plus every random region whole,
    /// since any thread may touch any of it.
    pub fn per_thread_bytes(&self, lines: Lines) -> f64 {
        let per_thread_iters = self.n / self.threads as f64;
        self.arrays
            .iter()
            .map(|a| match a.access {
                Access::Strided { stride_bytes } if a.scattered(lines) => {
                    per_thread_iters * a.cached_bytes_per_use(stride_bytes, lines)
                }
                Access::Strided { stride_bytes } => {
                    per_thread_iters * strided_bytes(a.bytes, stride_bytes, lines.line_bytes)
                }
                Access::Random { region_bytes } => region_bytes,
            })
            .sum()
    }

    /// Bytes the memory system moves for the loop as it counts them: the
    /// streamed loads and stores in whole lines and every random line,
    /// read and, when written, written back (no write-allocate reads).
    pub fn moved_bytes(&self, lines: Lines) -> f64 {
        let random: f64 = self
            .random_accesses(lines)
            .iter()
            .map(|r| r.lines * lines.line_bytes * if r.written { 2.0 } else { 1.0 })
            .sum();
        self.traffic(lines).counted_bytes() + random
    }

    /// Flops of all iterations.
    pub fn total_flops(&self) -> f64 {
        self.n * self.flops
    }

    /// Bytes one thread loads again from L1 over its iterations.
    pub fn reused_bytes_per_thread(&self) -> f64 {
        self.iterations_per_thread() * self.reused_bytes
    }

    /// Iterations of one thread.
    pub fn iterations_per_thread(&self) -> f64 {
        self.n / self.threads as f64
    }

    /// Bytes per iteration of each array whose elements lie end to end
    /// (stride equal to its bytes): the streams a run restarts.
    fn contiguous_bytes(&self) -> impl Iterator<Item = f64> + '_ {
        self.arrays
            .iter()
            .filter(
                |a| matches!(a.access, Access::Strided { stride_bytes } if stride_bytes == a.bytes),
            )
            .map(|a| a.bytes)
    }

    /// Runs of contiguous iterations of one thread, and the bytes of one
    /// run of its narrowest contiguous array (`None` without
    /// `segment_iterations`, or without a contiguous array).
    pub fn segments_per_thread(&self) -> Option<(f64, f64)> {
        let s = self.segment_iterations?;
        let narrowest = self.contiguous_bytes().reduce(f64::min)?;
        Some(((self.iterations_per_thread() / s).ceil(), s * narrowest))
    }

    /// How many runs apart in memory consecutive runs start
    /// (`segment_stride_iterations` / `segment_iterations`), when the loop
    /// says: a tile's runs to a row.
    pub fn runs_per_row(&self) -> Option<f64> {
        Some(self.segment_stride_iterations? / self.segment_iterations?)
    }

    /// Bytes of one tile column of a thread's contiguous arrays, what it
    /// sweeps before it comes back for the next column's runs: their bytes
    /// over the runs to a row (`None` when the loop does not say how far
    /// apart its runs start).
    pub fn column_bytes(&self) -> Option<f64> {
        let contiguous: f64 = self.contiguous_bytes().sum();
        Some(self.iterations_per_thread() * contiguous / self.runs_per_row()?)
    }
}

/// Bytes of memory one iteration of a strided array moves and spans:
/// the stride when it is shorter than a line (whole lines pass by), else
/// the lines its bytes touch, but never more than the stride, since
/// lines an element shares with the next one pass once (a contiguous
/// array of 72-byte elements moves 72 bytes per iteration, not two
/// lines).
fn strided_bytes(bytes: f64, stride_bytes: f64, line_bytes: f64) -> f64 {
    if stride_bytes < line_bytes {
        stride_bytes
    } else {
        ((bytes / line_bytes).ceil() * line_bytes).min(stride_bytes)
    }
}

#[cfg(test)]
mod tests;
