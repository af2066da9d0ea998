//! STREAM kernels over `f64` arrays, and the bytes each one is counted for.
//!
//! | kernel | operation        | arrays | B/elem (STREAM) | B/elem (+ write-allocate) | flop/elem |
//! |--------|------------------|--------|-----------------|---------------------------|-----------|
//! | copy   | a = b            | 2      | 16              | 24                        | 0         |
//! | scale  | a = s·b          | 2      | 16              | 24                        | 1         |
//! | add    | a = b + c        | 3      | 24              | 32                        | 1         |
//! | triad  | a = b + s·c      | 3      | 24              | 32                        | 2         |
//! | load   | Σ b              | 1      | 8               | 8                         | 1         |
//! | update | a = s·a          | 1      | 16              | 16                        | 1         |
//! | store  | a = s            | 1      | 8               | 16                        | 0         |
//!
//! `update` (read and written back in place: no write-allocate) and `store`
//! (written only) complete the load/store mixes, so that the read, write
//! and bus roofs of a level (`models::traffic`) are each exercised by some
//! kernel; likwid-bench has the same two.
//!
//! STREAM counts each array element read or written once. A normal store
//! first reads the line it writes (write-allocate), so the memory system
//! really moves 8 more bytes per stored element; both counts are reported.
//! No non-temporal stores are used. Bandwidth = bytes_per_elem · n · sweeps / t.
//!
//! The loops are plain Rust that LLVM vectorises; [`run`] calls the copy
//! compiled for the widest [`Isa`] the CPU has (`#[target_feature]`).
//! The copy kernel is written `a[i] = b[i] + 0.0` so that LLVM does not
//! replace it by a call to `memcpy` (whose large-size path uses non-temporal
//! stores and would change what is counted); the add is free beside the
//! load and the store. Each sweep passes the arrays through
//! [`black_box`] so sweeps cannot be merged or hoisted.

use std::hint::black_box;

use super::Isa;

/// Arrays carved from one region start [`STAGGER_BYTES`] apart modulo
/// [`STAGGER_PERIOD_BYTES`] (array j at j times that, modulo the period), so
/// that `a[i]`, `b[i]` and `c[i]` differ in their low address bits:
/// 64 B and 8 KiB set them in different L1 sets (no 4 KiB aliasing) and, on
/// memory controllers that pick the bank from the bits below 64 KiB, in
/// different DRAM banks. Arrays whose starts lie a large power of two
/// apart put every `a[i]` and `b[i]` in one bank, whose open row then
/// changes at each access: on the Zen 4 VM the one-thread copy read
/// 18.0-19.6 GB/s with 512 MiB of arrays laid end to end (starts
/// 256 MiB + 2 KiB apart) against 24.9-27.4 GB/s at 496 and 528 MiB, and a
/// plain C copy of two 256 MiB arrays 17.8-21.7 GB/s with their starts
/// 256 MiB apart, 25.5-25.9 GB/s 4 KiB + 64 B further, 27-30 GB/s 8 KiB +
/// 64 B further.
pub const STAGGER_BYTES: usize = 8192 + 64;
/// The period of [`STAGGER_BYTES`].
pub const STAGGER_PERIOD_BYTES: usize = 65536;
/// Most arrays a kernel touches.
const MAX_ARRAYS: usize = 3;
/// f64 words of the gaps between the arrays, at most.
const GAP_WORDS: usize = (MAX_ARRAYS - 1) * STAGGER_PERIOD_BYTES / 8;
/// Working sets of at least this many f64 words (8 MiB) make room for the
/// gaps themselves, which then take at most 1/64 of them; smaller ones get
/// the gaps on top, inside the huge page their region is rounded up to
/// anyway, so that neither the small working sets shrink nor the large
/// regions grow by a huge page each.
const GAPS_INSIDE_WORDS: usize = 64 * GAP_WORDS;

/// f64 words of a working set of `bytes` left for the arrays.
fn array_words(bytes: usize) -> usize {
    let words = bytes / 8;
    if words >= GAPS_INSIDE_WORDS {
        words - GAP_WORDS
    } else {
        words
    }
}

/// f64 words from the start of one array to the next for `n` elements per
/// array: the fewest at least `n` that are [`STAGGER_BYTES`] modulo
/// [`STAGGER_PERIOD_BYTES`].
pub fn stride(n: usize) -> usize {
    let (period, want) = (STAGGER_PERIOD_BYTES / 8, STAGGER_BYTES / 8);
    n + (want + period - n % period) % period
}

/// One STREAM kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    /// a = b.
    Copy,
    /// a = s·b.
    Scale,
    /// a = b + c.
    Add,
    /// a = b + s·c.
    Triad,
    /// Σ b (read only).
    Load,
    /// a = s·a (in place).
    Update,
    /// a = s (written only).
    Store,
}

impl Kernel {
    /// All kernels in STREAM's order, then load, update and store.
    pub const ALL: [Kernel; 7] = [
        Kernel::Copy,
        Kernel::Scale,
        Kernel::Add,
        Kernel::Triad,
        Kernel::Load,
        Kernel::Update,
        Kernel::Store,
    ];

    /// One kernel per distinct mix of loaded, stored and allocated bytes:
    /// scale moves copy's bytes and add moves triad's, so a sweep of these
    /// five has every mix the load/store fit reads (`--quick`'s set).
    pub const DISTINCT_MIXES: [Kernel; 5] = [
        Kernel::Copy,
        Kernel::Triad,
        Kernel::Load,
        Kernel::Update,
        Kernel::Store,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Copy => "copy",
            Kernel::Scale => "scale",
            Kernel::Add => "add",
            Kernel::Triad => "triad",
            Kernel::Load => "load",
            Kernel::Update => "update",
            Kernel::Store => "store",
        }
    }

    /// What one element does, e.g. `a = b + s·c`.
    pub fn formula(self) -> &'static str {
        match self {
            Kernel::Copy => "a = b",
            Kernel::Scale => "a = s·b",
            Kernel::Add => "a = b + c",
            Kernel::Triad => "a = b + s·c",
            Kernel::Load => "Σ b (read only)",
            Kernel::Update => "a = s·a (in place)",
            Kernel::Store => "a = s (written only)",
        }
    }

    /// Arrays the kernel touches.
    pub fn arrays(self) -> usize {
        match self {
            Kernel::Copy | Kernel::Scale => 2,
            Kernel::Add | Kernel::Triad => 3,
            Kernel::Load | Kernel::Update | Kernel::Store => 1,
        }
    }

    /// Arrays the kernel loads from.
    pub fn loaded_arrays(self) -> usize {
        match self {
            Kernel::Store => 0,
            Kernel::Update | Kernel::Load => 1,
            k => k.arrays() - 1,
        }
    }

    /// Arrays the kernel stores to.
    pub fn stored_arrays(self) -> usize {
        match self {
            Kernel::Load => 0,
            _ => 1,
        }
    }

    /// Bytes per element as STREAM counts them: 8 per array loaded and 8
    /// per array stored (an update counts both).
    pub fn bytes_per_elem(self) -> f64 {
        8.0 * (self.loaded_arrays() + self.stored_arrays()) as f64
    }

    /// Write-allocate bytes per element: 8 per array stored without being
    /// loaded (an update reads its line anyway).
    pub fn allocate_bytes_per_elem(self) -> f64 {
        match self {
            Kernel::Update | Kernel::Load => 0.0,
            _ => 8.0,
        }
    }

    /// Bytes per element including the write-allocate read of every stored
    /// line: [`bytes_per_elem`](Self::bytes_per_elem) + 8 per array stored
    /// without being loaded.
    pub fn bytes_per_elem_write_allocate(self) -> f64 {
        self.bytes_per_elem() + self.allocate_bytes_per_elem()
    }

    /// Floating-point operations per element.
    pub fn flops_per_elem(self) -> f64 {
        match self {
            Kernel::Copy | Kernel::Store => 0.0,
            Kernel::Scale | Kernel::Add | Kernel::Load | Kernel::Update => 1.0,
            Kernel::Triad => 2.0,
        }
    }

    /// Elements per array for a working set of `bytes`, all arrays
    /// together (the gaps between them are never touched).
    pub fn elems_for(self, bytes: usize) -> usize {
        array_words(bytes) / self.arrays()
    }

    /// f64 words of memory [`run`] needs for `n` elements per array.
    pub fn words_needed(self, n: usize) -> usize {
        (self.arrays() - 1) * stride(n) + n
    }
}

/// f64 words a region needs so that every kernel fits with a working set of
/// `bytes`: the arrays' words and, for each gap between them, at most one
/// [`STAGGER_PERIOD_BYTES`].
pub fn words_for_all(bytes: usize) -> usize {
    array_words(bytes) + GAP_WORDS
}

/// Runs `sweeps` sweeps of `kernel` over `n` elements per array carved from
/// `mem` (array j starts at word j·[`stride`]`(n)`), with the code compiled for
/// `isa`. Returns a value that depends on the results (a checksum), so the
/// work cannot be discarded.
///
/// # Panics
/// If `mem` is shorter than [`Kernel::words_needed`]`(n)` or `isa` is not
/// supported by the running CPU.
pub fn run(isa: Isa, kernel: Kernel, mem: &mut [f64], n: usize, sweeps: u64) -> f64 {
    assert!(mem.len() >= kernel.words_needed(n), "region too small");
    assert!(isa.supported(), "{isa} is not available on this CPU");
    match (isa, kernel) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY (the four x86 arms): support for the features each function
        // is compiled for was checked just above.
        (Isa::Avx512, Kernel::Load) => unsafe { load_avx512(&mem[..n], sweeps) },
        #[cfg(target_arch = "x86_64")]
        (Isa::Avx512, _) => unsafe { run_avx512(kernel, mem, n, sweeps) },
        #[cfg(target_arch = "x86_64")]
        (Isa::Avx2, Kernel::Load) => unsafe { load_avx2(&mem[..n], sweeps) },
        #[cfg(target_arch = "x86_64")]
        (Isa::Avx2, _) => unsafe { run_avx2(kernel, mem, n, sweeps) },
        (_, Kernel::Load) => load_generic::<8>(&mem[..n], sweeps),
        _ => run_generic(kernel, mem, n, sweeps),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn run_avx512(kernel: Kernel, mem: &mut [f64], n: usize, sweeps: u64) -> f64 {
    run_generic(kernel, mem, n, sweeps)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2(kernel: Kernel, mem: &mut [f64], n: usize, sweeps: u64) -> f64 {
    run_generic(kernel, mem, n, sweeps)
}

/// 16 accumulators of 8 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn load_avx512(x: &[f64], sweeps: u64) -> f64 {
    load_generic::<128>(x, sweeps)
}

/// 8 accumulators of 4 lanes (16 registers in all).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn load_avx2(x: &[f64], sweeps: u64) -> f64 {
    load_generic::<32>(x, sweeps)
}

/// The kernels that store (copy, scale, add, triad).
#[inline(always)]
fn run_generic(kernel: Kernel, mem: &mut [f64], n: usize, sweeps: u64) -> f64 {
    // Arrays the kernel does not use may be cut short or empty.
    let (a, rest) = mem.split_at_mut(stride(n).min(mem.len()));
    let a = &mut a[..n];
    let (b, c) = rest.split_at_mut(stride(n).min(rest.len()));
    let b = &b[..n.min(b.len())];
    let c = &c[..n.min(c.len())];
    let s = black_box(0.5f64);
    for _ in 0..sweeps {
        let a = black_box(&mut *a);
        let (b, c) = (black_box(b), black_box(c));
        match kernel {
            Kernel::Copy => a.iter_mut().zip(b).for_each(|(x, y)| *x = y + 0.0),
            Kernel::Scale => a.iter_mut().zip(b).for_each(|(x, y)| *x = s * y),
            Kernel::Add => a
                .iter_mut()
                .zip(b.iter().zip(c))
                .for_each(|(x, (y, z))| *x = y + z),
            Kernel::Triad => a
                .iter_mut()
                .zip(b.iter().zip(c))
                .for_each(|(x, (y, z))| *x = y + s * z),
            Kernel::Update => a.iter_mut().for_each(|x| *x *= s),
            Kernel::Store => a.iter_mut().for_each(|x| *x = s),
            Kernel::Load => unreachable!("the load kernel has its own loop"),
        }
    }
    a.first().copied().unwrap_or(0.0)
}

/// The load kernel: `sweeps` sums of `x` into `L` independent partial
/// sums, reduced once after the last sweep.
///
/// `L` holds enough vector accumulators that the adds' latency never
/// paces the loads: latency × adds per cycle chains at least. With 8
/// AVX-512 accumulators (4 cycles × 2 adds per cycle, no slack) one thread
/// of the Xeon VM summed 16–32 KiB at 266–275 GB/s, with 16 at 431–437 GB/s
/// (aligned arrays, best of 15). Reducing the sums after every sweep costs
/// L dependent adds, about 4·L cycles, as long as a sweep in L1 itself:
/// that way the 16 KiB point had read 159 GB/s where likwid-bench's
/// `load_avx512` reads 351 GB/s.
#[inline(always)]
fn load_generic<const L: usize>(x: &[f64], sweeps: u64) -> f64 {
    let mut acc = [0.0f64; L];
    let mut tail = 0.0;
    for _ in 0..sweeps {
        let chunks = black_box(x).chunks_exact(L);
        tail += chunks.remainder().iter().sum::<f64>();
        for ch in chunks {
            // Written as a whole-array update so LLVM keeps the partial sums
            // in registers (an indexed loop kept them on the stack).
            let ch: &[f64; L] = ch.try_into().expect("chunks_exact gives L values");
            acc = std::array::from_fn(|j| acc[j] + ch[j]);
        }
    }
    acc.iter().sum::<f64>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_per_kernel() {
        let stream: Vec<f64> = Kernel::ALL.iter().map(|k| k.bytes_per_elem()).collect();
        assert_eq!(stream, [16.0, 16.0, 24.0, 24.0, 8.0, 16.0, 8.0]);
        let wa: Vec<f64> = Kernel::ALL
            .iter()
            .map(|k| k.bytes_per_elem_write_allocate())
            .collect();
        assert_eq!(wa, [24.0, 24.0, 32.0, 32.0, 8.0, 16.0, 16.0]);
        let flops: Vec<f64> = Kernel::ALL.iter().map(|k| k.flops_per_elem()).collect();
        assert_eq!(flops, [0.0, 1.0, 1.0, 2.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn working_set_sizes() {
        assert_eq!(Kernel::Triad.elems_for(24_000), 1000);
        assert_eq!(Kernel::Copy.elems_for(16_000), 1000);
        assert_eq!(Kernel::Load.elems_for(8_000), 1000);
        // 1000 words = 8000 B; the next start 8256 B on: 1032 words.
        assert_eq!(Kernel::Triad.words_needed(1000), 2 * 1032 + 1000);
        // Starts 8256 B apart modulo 64 KiB whatever the arrays' size, so
        // never a power of two apart.
        for n in [1, 1032, 1033, 8192, 1 << 20, (1 << 25) - 1] {
            assert!(stride(n) >= n);
            assert_eq!(stride(n) * 8 % STAGGER_PERIOD_BYTES, STAGGER_BYTES);
            assert!(stride(n) - n < STAGGER_PERIOD_BYTES / 8);
        }
        for bytes in [16_384, 1 << 20, 3 << 20, 8 << 20, 128 << 20, 1 << 30] {
            for k in Kernel::ALL {
                assert!(k.words_needed(k.elems_for(bytes)) <= words_for_all(bytes));
            }
        }
        // Large working sets hold their gaps, 128 KiB in 128 MiB; small
        // ones get them on top.
        assert_eq!(words_for_all(128 << 20), (128 << 20) / 8);
        assert_eq!(
            Kernel::Copy.elems_for(128 << 20),
            ((128 << 20) / 8 - GAP_WORDS) / 2
        );
        assert_eq!(words_for_all(1 << 20), (1 << 20) / 8 + GAP_WORDS);
    }

    #[test]
    fn kernels_compute_the_right_values_on_every_isa() {
        let n = 1001;
        for isa in Isa::available() {
            for k in Kernel::ALL {
                let mut mem = vec![0.0f64; k.words_needed(n)];
                for (i, v) in mem.iter_mut().enumerate() {
                    *v = (i % 7) as f64;
                }
                let check = run(isa, k, &mut mem, n, 2);
                let b = &mem[stride(n).min(mem.len())..];
                let c = &mem[(2 * stride(n)).min(mem.len())..];
                for i in 0..n {
                    let want = match k {
                        Kernel::Copy => b[i],
                        Kernel::Scale => 0.5 * b[i],
                        Kernel::Add => b[i] + c[i],
                        Kernel::Triad => b[i] + 0.5 * c[i],
                        Kernel::Load => (i % 7) as f64,
                        // Two sweeps of a = 0.5·a.
                        Kernel::Update => 0.25 * (i % 7) as f64,
                        Kernel::Store => 0.5,
                    };
                    assert_eq!(mem[i], want, "{isa} {} at {i}", k.name());
                }
                if k == Kernel::Load {
                    let s: f64 = (0..n).map(|i| (i % 7) as f64).sum();
                    assert_eq!(check, 2.0 * s);
                } else {
                    assert_eq!(check, mem[0]);
                }
            }
        }
    }
}
