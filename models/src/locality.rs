//! Memory traffic of the lecture's locality examples: stream kernels and
//! loop fusion (§2.7.2, §3.2), stencil traversal order and tiling (§2.7.1,
//! §3.3), and false sharing (§2.7.4, §3.4).

use serde::Serialize;

use crate::error::{count, positive, Result};

/// Loads, stores and arithmetic per element of a streaming kernel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StreamTraffic {
    /// Element loads from memory per iteration.
    pub loads: f64,
    /// Element stores to memory per iteration.
    pub stores: f64,
    /// Arithmetic operations per iteration.
    pub flops: f64,
}

impl StreamTraffic {
    /// Bytes per iteration: (loads + stores)·elem, plus one extra load per
    /// store when the cache writes-allocate (the line is read before it is
    /// overwritten, §2.5 source 2).
    pub fn bytes(&self, elem_bytes: f64, write_allocate: bool) -> f64 {
        let wa = if write_allocate { self.stores } else { 0.0 };
        (self.loads + self.stores + wa) * elem_bytes
    }

    /// Element transfers per iteration (loads + stores), the lecture's unit.
    pub fn transfers(&self) -> f64 {
        self.loads + self.stores
    }

    /// Arithmetic per element transfer (the lecture's "math per transfer").
    pub fn ops_per_transfer(&self) -> f64 {
        self.flops / self.transfers()
    }

    /// Arithmetic intensity in flop per byte.
    pub fn flops_per_byte(&self, elem_bytes: f64, write_allocate: bool) -> f64 {
        self.flops / self.bytes(elem_bytes, write_allocate)
    }

    /// The sum of several passes run one after another.
    pub fn sum(passes: &[StreamTraffic]) -> StreamTraffic {
        passes.iter().fold(
            StreamTraffic {
                loads: 0.0,
                stores: 0.0,
                flops: 0.0,
            },
            |a, p| StreamTraffic {
                loads: a.loads + p.loads,
                stores: a.stores + p.stores,
                flops: a.flops + p.flops,
            },
        )
    }
}

/// One pass of E = D + (A+B)·C split into three loops with two temporaries
/// (§2.7.2): each loop loads 2, stores 1, computes 1.
pub const THREE_PASS_EACH: StreamTraffic = StreamTraffic {
    loads: 2.0,
    stores: 1.0,
    flops: 1.0,
};

/// The three-pass version as a whole: 6 loads + 3 stores = 9 transfers for 3 ops.
pub fn three_pass() -> StreamTraffic {
    StreamTraffic::sum(&[THREE_PASS_EACH; 3])
}

/// The fused loop `E[i] = D[i] + (A[i]+B[i])·C[i]`: 4 loads + 1 store = 5
/// transfers for 3 ops (§2.7.2).
pub const FUSED: StreamTraffic = StreamTraffic {
    loads: 4.0,
    stores: 1.0,
    flops: 3.0,
};

/// Upper bound on the speed-up of fusion for a bandwidth-bound loop: the
/// ratio of bytes moved, 9/5 = 1.8 without write-allocate (§2.7.2).
pub fn fusion_speedup_bound(elem_bytes: f64, write_allocate: bool) -> f64 {
    three_pass().bytes(elem_bytes, write_allocate) / FUSED.bytes(elem_bytes, write_allocate)
}

/// Memory traffic of a 5-point Jacobi sweep (§2.7.1, §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StencilTraffic {
    /// Bytes per updated element from the level below the cache.
    pub bytes_per_elem: f64,
    /// Bytes of the three-row window that must stay cached for reuse.
    pub window_bytes: f64,
    /// True when the window fits, so each input row is read once.
    pub reuse_fits: bool,
    /// Flop per byte: 5 flops per update / bytes per element.
    pub flops_per_byte: f64,
}

/// Floating-point operations of one 5-point update: four adds and one multiply.
pub const STENCIL_FLOPS: f64 = 5.0;

/// Loads of one 5-point update: up, down, left, right and centre.
pub const STENCIL_LOADS: f64 = 5.0;

/// Traffic of a 5-point sweep over rows (or tiles) `width_elems` wide.
///
/// An input element is used by three output rows; between its first and last
/// use the sweep touches three rows of input (the reuse distance). If
/// 3·width·elem ≤ cache capacity the window stays cached and each element is
/// read once: 1 read + 1 write (8 B/element for f32). Otherwise the three
/// reads all come from below: 3 reads + 1 write (16 B/element for f32).
/// Tiling shrinks `width_elems` to the tile width (§2.7.1). Write-allocate
/// adds one read per written element.
pub fn stencil_traffic(
    width_elems: f64,
    elem_bytes: f64,
    cache_bytes: f64,
    write_allocate: bool,
) -> Result<StencilTraffic> {
    let width = positive("width", width_elems)?;
    let elem = positive("elem-bytes", elem_bytes)?;
    let cache = positive("cache", cache_bytes)?;
    let window = 3.0 * width * elem;
    let reuse_fits = window <= cache;
    let reads = if reuse_fits { 1.0 } else { 3.0 };
    let writes = if write_allocate { 2.0 } else { 1.0 };
    let bytes = (reads + writes) * elem;
    Ok(StencilTraffic {
        bytes_per_elem: bytes,
        window_bytes: window,
        reuse_fits,
        flops_per_byte: STENCIL_FLOPS / bytes,
    })
}

/// The cache a 5-point sweep over rows `width_elems` wide needs for an
/// update to find the row above and its own row again (Kerncraft's layer
/// condition): (4·width − 2)·elem bytes. Sorted by address, the update's
/// loads sit width − 1, 1, 1 and width − 1 elements apart; the two row-sized
/// gaps must stay cached, plus a row-sized tail of each stream that is not
/// reused (the row below, first touched here, and the output row). The
/// lecture's three-row window (§2.7.1) counts the input rows alone; the
/// requirement also counts the output row the stores bring in, which
/// matters in an L1 of a few rows.
pub fn stencil_reuse_window(width_elems: f64, elem_bytes: f64) -> Result<f64> {
    let width = positive("width", width_elems)?;
    let elem = positive("elem-bytes", elem_bytes)?;
    Ok((4.0 * width - 2.0) * elem)
}

/// Predicted gain of tiling a sweep whose rows are `row_elems` wide with
/// tiles `tile_elems` wide: bytes(row-major) / bytes(tiled). It is 1 ("no
/// gain") when three full rows already fit in the cache, 2 for f32 without
/// write-allocate when they do not and three tile rows do (§3.3).
pub fn tiling_gain(
    row_elems: f64,
    tile_elems: f64,
    elem_bytes: f64,
    cache_bytes: f64,
    write_allocate: bool,
) -> Result<f64> {
    let rows = stencil_traffic(row_elems, elem_bytes, cache_bytes, write_allocate)?;
    let tiles = stencil_traffic(tile_elems, elem_bytes, cache_bytes, write_allocate)?;
    Ok(rows.bytes_per_elem / tiles.bytes_per_elem)
}

/// How per-thread data of `elem_bytes` each lies on cache lines (§2.7.4, §3.4,
/// thought question 2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FalseSharing {
    /// Most threads writing into one line (at least 1).
    pub sharers_per_line: f64,
    /// A line holding that many writers (0-based), the worst line.
    pub worst_line: f64,
    /// Lines the array of `threads` elements spans.
    pub lines: f64,
    /// Expected line transfers per write when writes of the sharers
    /// interleave at random: (s − 1)/s (0 when a thread owns its line).
    pub transfers_per_write: f64,
    /// Bytes after padding every element to its own lines.
    pub padded_bytes: f64,
    /// Bytes before padding.
    pub unpadded_bytes: f64,
}

/// Threads writing into line `k` when `threads` elements of `elem` bytes
/// lie end to end from a line boundary: the elements starting before the
/// line's end, ⌈(k+1)·line/elem⌉ (at most `threads`), less those ending at
/// or before its start, ⌊k·line/elem⌋.
pub fn writers_of_line(k: f64, threads: f64, elem: f64, line: f64) -> f64 {
    ((k + 1.0) * line / elem).ceil().min(threads) - (k * line / elem).floor()
}

/// False-sharing layout of `threads` per-thread elements of `elem_bytes`
/// (whole bytes), packed end to end from a line boundary. An element larger
/// than a line, or one that straddles a line boundary, still shares the
/// lines at its ends with its neighbours: 100-byte elements on 64-byte
/// lines put two writers on a line, 24-byte ones three.
pub fn false_sharing(threads: f64, elem_bytes: f64, line_bytes: f64) -> Result<FalseSharing> {
    let t = count("threads", threads)?;
    let elem = count("elem-bytes", elem_bytes)?;
    let line = count("line-bytes", line_bytes)?;
    let unpadded = t * elem;
    let lines = (unpadded / line).ceil();
    // The pattern of writers repeats every elem/gcd(elem, line) lines; an
    // element at least a line long has its first boundary in line ⌊elem/line⌋.
    let candidates: Vec<f64> = if elem >= line {
        vec![0.0, (elem / line).floor()]
    } else {
        let period = elem / gcd(elem as u64, line as u64) as f64;
        (0..period.min(lines) as u64).map(|k| k as f64).collect()
    };
    let (worst, sharers) = candidates
        .into_iter()
        .filter(|k| *k < lines)
        .map(|k| (k, writers_of_line(k, t, elem, line)))
        .fold((0.0, 1.0), |best, c| if c.1 > best.1 { c } else { best });
    Ok(FalseSharing {
        sharers_per_line: sharers,
        worst_line: worst,
        lines,
        transfers_per_write: (sharers - 1.0) / sharers,
        padded_bytes: t * (elem / line).ceil() * line,
        unpadded_bytes: unpadded,
    })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// Time for each of `threads` threads to write its own element `writes`
/// times (§3.4): a line shared by s writers is a serial resource, so its
/// s·writes writes take s·writes·((s−1)/s·t_transfer + t_local); with one
/// writer per line it is writes·t_local.
pub fn false_sharing_time_s(
    layout: &FalseSharing,
    writes: f64,
    t_transfer_s: f64,
    t_local_s: f64,
) -> Result<f64> {
    let w = positive("writes", writes)?;
    let tt = positive("line-transfer", t_transfer_s)?;
    let tl = positive("local-write", t_local_s)?;
    let s = layout.sharers_per_line;
    Ok(s * w * (layout.transfers_per_write * tt + tl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reuse_window_counts_two_row_gaps_and_two_row_tails() {
        // Rows of 1026 f64 (a 1024-wide block with its halo): 2 gaps of
        // 1025 + 2 of 1 element, 2 tails of 1025: 4102 elements, 32,816 B,
        // one line beyond a 32 KiB L1.
        assert_eq!(stencil_reuse_window(1026.0, 8.0).unwrap(), 32816.0);
        assert!(stencil_reuse_window(0.0, 8.0).is_err());
    }

    #[test]
    fn write_allocate_adds_a_read_per_store() {
        assert_eq!(FUSED.bytes(4.0, false), 20.0);
        assert_eq!(FUSED.bytes(4.0, true), 24.0);
        assert_eq!(three_pass().bytes(4.0, true), 48.0);
        assert_eq!(fusion_speedup_bound(4.0, true), 2.0);
    }

    #[test]
    fn stencil_rows_that_fit_gain_nothing_from_tiling() {
        // 4096 f32 per row: three rows = 48 KiB fit a 2 MiB cache.
        assert_eq!(
            tiling_gain(4096.0, 512.0, 4.0, 2.0 * 1048576.0, false).unwrap(),
            1.0
        );
    }

    #[test]
    fn padded_counters_own_their_lines() {
        let fs = false_sharing(8.0, 64.0, 64.0).unwrap();
        assert_eq!(fs.sharers_per_line, 1.0);
        assert_eq!(fs.transfers_per_write, 0.0);
        let t = false_sharing_time_s(&fs, 1e6, 50e-9, 0.5e-9).unwrap();
        assert!((t - 1e6 * 0.5e-9).abs() < 1e-12);
    }

    #[test]
    fn straddling_elements_share_lines() {
        let fs = false_sharing(16.0, 100.0, 64.0).unwrap();
        assert_eq!(fs.sharers_per_line, 2.0);
        assert_eq!(fs.transfers_per_write, 0.5);
        // 24-byte elements: line 0 holds elements 0, 1 and the start of 2;
        // line 1 (bytes 64..128) the end of 2, then 3, 4 and the start of 5.
        assert_eq!(writers_of_line(0.0, 16.0, 24.0, 64.0), 3.0);
        assert_eq!(
            false_sharing(16.0, 24.0, 64.0).unwrap().sharers_per_line,
            4.0
        );
        assert_eq!(
            false_sharing(16.0, 128.0, 64.0).unwrap().sharers_per_line,
            1.0
        );
        assert_eq!(
            false_sharing(1.0, 100.0, 64.0).unwrap().sharers_per_line,
            1.0
        );
        assert_eq!(
            false_sharing(2.0, 24.0, 64.0).unwrap().sharers_per_line,
            2.0
        );
        assert!(false_sharing(2.0, 2.5, 64.0).is_err());
        // Brute force over bytes agrees.
        for (t, e) in [
            (16u64, 100u64),
            (7, 24),
            (9, 40),
            (5, 200),
            (16, 16),
            (3, 96),
        ] {
            let mut per_line = std::collections::HashMap::new();
            for i in 0..t {
                for line in (i * e) / 64..=((i + 1) * e - 1) / 64 {
                    *per_line.entry(line).or_insert(0u64) += 1;
                }
            }
            let max = *per_line.values().max().unwrap() as f64;
            let fs = false_sharing(t as f64, e as f64, 64.0).unwrap();
            assert_eq!(fs.sharers_per_line, max, "{t} threads of {e} B");
        }
    }

    #[test]
    fn adjacent_longs_share() {
        let fs = false_sharing(8.0, 8.0, 64.0).unwrap();
        assert_eq!(fs.sharers_per_line, 8.0);
        assert_eq!(fs.lines, 1.0);
        assert_eq!(fs.transfers_per_write, 7.0 / 8.0);
        assert_eq!(fs.padded_bytes, 512.0);
    }
}
