//! Traversal order of a 5-point Jacobi sweep (lecture §2.7.1, §3.3):
//! row-major against column tiles, on f32, each pinned thread sweeping its
//! own band of rows (with a halo row above and below).
//!
//! An input row is used by three output rows. Row-major, the three-row
//! window spans 3·W·4 bytes; if that exceeds the cache each input element is
//! read three times from below (16 B per update without write-allocate),
//! otherwise once (8 B). Tiles of width TW shrink the window to 3·TW·4 B.
//! The model decides from the detected cache size whether tiling should pay;
//! when three full rows already fit, it predicts no gain.

use calibrate::harness::kernels::Isa;
use calibrate::harness::mem::Array;
use models::kernel::{ArrayUse, LoopKernel, Mode, Precision, Reuse};
use models::locality::{stencil_reuse_window, stencil_traffic, STENCIL_FLOPS, STENCIL_LOADS};

use anyhow::{ensure, Result};

use super::described::{loops_work, Build};
use super::team::{per_thread, team, time_states};
use super::work::Work;
use super::NoWork;
use super::{measurement, Kernel, Measurement, Options};
use crate::error::BadInput;

/// One thread's band: `rows` interior rows of width `w` plus two halo rows,
/// in two buffers (Jacobi reads `src`, writes `dst`).
pub struct Band {
    pub rows: usize,
    pub w: usize,
    pub src: Array<f32>,
    pub dst: Array<f32>,
}

impl Band {
    /// A band whose values depend on the global row and column.
    pub fn new(rows: usize, w: usize, first_row: usize) -> Self {
        let src = Array::new((rows + 2) * w, 0, |k| {
            let (i, j) = (first_row + k / w, k % w);
            ((i * 31 + j * 17) % 97) as f32 * 0.01
        });
        Self {
            rows,
            w,
            dst: Array::new((rows + 2) * w, 1, |_| 0.0),
            src,
        }
    }
}

/// A band's shape for its loop description: `rows` output rows per
/// thread of `w` numbers of `precision`, the two edge columns fixed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub rows: usize,
    pub w: usize,
    pub precision: Precision,
}

impl Shape {
    pub fn new(rows: usize, w: usize, precision: Precision) -> Self {
        Self { rows, w, precision }
    }
}

/// Row-major or tiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    RowMajor,
    /// Column tiles of this many elements.
    Tiled(usize),
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::RowMajor => "row-major",
            Variant::Tiled(_) => "tiled",
        }
    }

    /// The sweep as a loop description, the language of `predict
    /// kernel`: `rows` × (`w` − 2) updates per thread of numbers of
    /// `precision`, each 5 flops, reading the old grid and storing one
    /// number of the new. What it reads per update depends on the reuse of
    /// the three-row window in the largest cache (`cache_bytes`, shared, so
    /// each thread's window gets 1/threads of it): one new element when the
    /// window fits, plus its band's two halo rows spread over its `rows`
    /// output rows (2/rows more reads per update than an endless grid);
    /// otherwise all three inputs from below. Of the five loads of an
    /// update, those the old grid's traffic leaves out are loaded again: the
    /// left and right neighbours from lines in L1 (`reused_bytes`), the row
    /// above and the update's own row, when the window fits, from lines a
    /// row's traffic back (`windowed_reuse`, Kerncraft's layer condition on
    /// the traversed width). Tiles narrower than the row restart the
    /// thread's streams at every row of every tile (`segment_iterations`),
    /// each run a row after the last (`segment_stride_iterations`).
    /// The MPI ghost stencil's sweep of a rank's block is the row-major
    /// sweep of f64 (`crate::mpi_stencil::model`).
    pub fn described(self, shape: Shape, threads: usize, cache_bytes: f64) -> LoopKernel {
        let Shape { rows, w, precision } = shape;
        let width = match self {
            Variant::RowMajor => w,
            Variant::Tiled(tw) => tw.min(w),
        };
        let e = precision.bytes() as f64;
        let share = cache_bytes / threads.max(1) as f64;
        let t = stencil_traffic(width as f64, e, share, false).expect("positive sizes");
        let (halo, windowed_reuse) = if t.reuse_fits {
            let window = stencil_reuse_window(width as f64, e).expect("positive sizes");
            (
                2.0 * e / rows as f64,
                vec![Reuse {
                    bytes: 2.0 * e,
                    window_bytes: window,
                }],
            )
        } else {
            (0.0, Vec::new())
        };
        let old = t.bytes_per_elem - e + halo;
        let windowed: f64 = windowed_reuse.iter().map(|r| r.bytes).sum();
        let arrays = vec![
            ArrayUse::contiguous("old", Mode::Load, old),
            ArrayUse::contiguous("new", Mode::Store, e),
        ];
        LoopKernel {
            flops: STENCIL_FLOPS,
            // As written, 0.2·((((up + dn) + left) + right) + centre): each
            // flop waits for the one before.
            span: STENCIL_FLOPS,
            precision,
            reused_bytes: (STENCIL_LOADS * e - old - windowed).max(0.0),
            windowed_reuse,
            segment_iterations: (width + 2 < w).then_some(width as f64),
            // A tile's next run is the next row's, a row of w further on.
            segment_stride_iterations: (width + 2 < w).then_some(w as f64),
            ..LoopKernel::streaming(
                (rows * w.saturating_sub(2) * threads) as f64,
                threads,
                arrays,
            )
        }
    }

    /// Declared work of one sweep: [`Self::described`] through the loop
    /// model, with the band's two grids (and halo rows) as the working set
    /// per thread.
    pub fn work(self, shape: Shape, threads: usize, cache_bytes: f64) -> Work {
        let Shape { rows, w, precision } = shape;
        let per_thread_bytes = (2 * (rows + 2) * w * precision.bytes()) as f64;
        loops_work(
            &[self.described(shape, threads, cache_bytes)],
            Build::builtin(),
            per_thread_bytes,
        )
    }
}

/// One sweep over the band; then `src` and `dst` swap roles.
pub fn sweep(v: Variant, band: &mut Band) {
    match Isa::detect() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: Isa::detect only returns levels the CPU supports.
        Isa::Avx2 | Isa::Avx512 => unsafe { sweep_avx2(v, band) },
        _ => sweep_generic(v, band),
    }
    std::mem::swap(&mut band.src, &mut band.dst);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sweep_avx2(v: Variant, band: &mut Band) {
    sweep_generic(v, band)
}

#[inline(always)]
fn sweep_generic(v: Variant, band: &mut Band) {
    let (w, rows) = (band.w, band.rows);
    let tile = match v {
        Variant::RowMajor => w,
        Variant::Tiled(tw) => tw.clamp(1, w),
    };
    let mut jb = 1;
    while jb < w - 1 {
        let je = (jb + tile).min(w - 1);
        for i in 1..=rows {
            update_row(&band.src, &mut band.dst, w, i, jb, je);
        }
        jb = je;
    }
}

/// dst[i][j] = 0.2·(up + down + left + right + centre) for j in jb..je.
#[inline(always)]
fn update_row(src: &[f32], dst: &mut [f32], w: usize, i: usize, jb: usize, je: usize) {
    let up = &src[(i - 1) * w..i * w];
    let md = &src[i * w..(i + 1) * w];
    let dn = &src[(i + 1) * w..(i + 2) * w];
    let out = &mut dst[i * w + jb..i * w + je];
    let (up, dn) = (&up[jb..je], &dn[jb..je]);
    let (left, centre, right) = (&md[jb - 1..je - 1], &md[jb..je], &md[jb + 1..je + 1]);
    for k in 0..out.len() {
        out[k] = 0.2 * (up[k] + dn[k] + left[k] + right[k] + centre[k]);
    }
}

/// Stencil: `size` is the row width (default 2 Mi f32, rows of 8 MiB that
/// overflow any cache); the lecture's 4096×4096 grid is run too, its rows
/// split among the threads.
pub struct Stencil;

impl Kernel for Stencil {
    fn name(&self) -> &'static str {
        "stencil"
    }

    fn run(&self, o: &Options) -> Result<Vec<Measurement>> {
        let threads = o.threads;
        let team = team(threads)?;
        let wide = o.size.unwrap_or(2 << 20);
        ensure!(
            wide >= 8,
            BadInput(format!(
                "--size {wide} is too small for the stencil: rows need at least 8 elements"
            ))
        );
        let mut out = Vec::new();
        // (width, rows per thread, tile width)
        let cases = [
            (wide, (8 << 20) / wide.max(1) + 4, 16384.min(wide)),
            (4096.min(wide), (4096 / threads).max(1), 2048.min(wide)),
        ];
        for (w, rows, tile) in cases {
            let states = per_thread(&team, |i| Band::new(rows, w, i * rows));
            for v in [Variant::RowMajor, Variant::Tiled(tile)] {
                let work = o
                    .cache_bytes
                    .clone()
                    .map(|c| v.work(Shape::new(rows, w, Precision::F32), threads, c))
                    .map_err(NoWork::from);
                let mut beside = o.beside(&work, threads);
                let s = time_states(&team, &o.plan, &mut beside, &states, |_, b| sweep(v, b))?;
                let paired = beside.finish();
                let variant = format!("{}@{w}", v.name());
                out.push(
                    measurement("stencil", &variant, threads, w, s, work, true).with_paired(paired),
                );
            }
        }
        Ok(out)
    }

    fn pairs(&self) -> &'static [(&'static str, &'static str)] {
        &[("row-major", "tiled")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::kernel::Precision::F32;

    fn reference(band: &Band) -> Vec<f32> {
        let w = band.w;
        let mut out = band.dst.to_vec();
        for i in 1..=band.rows {
            for j in 1..w - 1 {
                let s = &band.src;
                out[i * w + j] = 0.2
                    * (s[(i - 1) * w + j]
                        + s[(i + 1) * w + j]
                        + s[i * w + j - 1]
                        + s[i * w + j + 1]
                        + s[i * w + j]);
            }
        }
        out
    }

    #[test]
    fn both_orders_match_the_reference_bit_for_bit() {
        for v in [Variant::RowMajor, Variant::Tiled(7), Variant::Tiled(64)] {
            let mut band = Band::new(9, 50, 3);
            let want = reference(&band);
            sweep(v, &mut band);
            assert_eq!(
                *band.src, *want,
                "{v:?} (after the swap, src holds the result)"
            );
        }
    }

    #[test]
    fn model_predicts_no_gain_when_rows_fit() {
        let cache = 2.0 * 1048576.0;
        let rows_fit = Variant::RowMajor
            .work(Shape::new(64, 4096, F32), 1, cache)
            .bytes();
        let tiled = Variant::Tiled(512)
            .work(Shape::new(64, 4096, F32), 1, cache)
            .bytes();
        assert_eq!(rows_fit, tiled);
        // Wide rows: 3 reads + 1 write against 1 read + 1 write, plus the
        // tiled band's two halo rows: 16 B against 8 + 2·4/4 = 10 B per
        // update in a 4-row band, 8.5 B in a 16-row one.
        let wide = |rows| {
            Variant::RowMajor
                .work(Shape::new(rows, 1 << 21, F32), 1, cache)
                .bytes()
        };
        let wide_tiled = |rows| {
            Variant::Tiled(16384)
                .work(Shape::new(rows, 1 << 21, F32), 1, cache)
                .bytes()
        };
        assert_eq!(wide(4) / wide_tiled(4), 1.6);
        assert_eq!(wide(16) / wide_tiled(16), 16.0 / 8.5);
        // Rows of 64 Ki f32 need a 768 KiB window: one thread's fits in a
        // 1 MiB shared cache, but not four threads' windows at once.
        let cache = 1048576.0;
        let one = Variant::RowMajor
            .work(Shape::new(4, 1 << 16, F32), 1, cache)
            .bytes();
        let four = Variant::RowMajor
            .work(Shape::new(4, 1 << 16, F32), 4, cache)
            .bytes();
        assert_eq!(four / (4.0 * one), 1.6);
    }

    #[test]
    fn the_described_loop_moves_the_window_model_bytes() {
        use crate::kernels::work::Demand;
        // Rows that overflow a 1 MiB cache: three reads from below, one
        // store and its write-allocate read per update.
        let w = Variant::RowMajor.work(Shape::new(8, 1 << 20, F32), 2, 1048576.0);
        let updates = (8 * ((1 << 20) - 2) * 2) as f64;
        let traffic = *w.memory().next().unwrap().0;
        let t = stencil_traffic((1 << 20) as f64, 4.0, 1048576.0 / 2.0, false).unwrap();
        let t_wa = stencil_traffic((1 << 20) as f64, 4.0, 1048576.0 / 2.0, true).unwrap();
        assert!(!t.reuse_fits);
        assert_eq!(traffic.load_bytes, updates * (t.bytes_per_elem - 4.0));
        assert_eq!(traffic.store_bytes, updates * 4.0);
        assert_eq!(
            traffic.allocate_bytes,
            updates * (t_wa.bytes_per_elem - t.bytes_per_elem)
        );
        assert_eq!(w.flops(), updates * STENCIL_FLOPS);
        // The five loads name 20 B per update; the 12 B from below move,
        // the left and right neighbours (8 B) hit L1 again.
        let reused = w.demands.iter().find_map(|d| match d {
            Demand::Reuse {
                bytes_per_thread,
                window_bytes,
            } => Some((*bytes_per_thread, *window_bytes)),
            _ => None,
        });
        assert_eq!(reused, Some((updates / 2.0 * 8.0, 0.0)));
    }

    #[test]
    fn rows_that_fit_reload_the_row_above_and_their_own_from_a_row_back() {
        use crate::kernels::work::Demand;
        // 4096-wide f32 rows fit a 32 MiB cache: the row above and the
        // update's own row (8 B) are loaded again from a window of
        // (4·4096 − 2)·4 B; left and right (8 B less the halo's share)
        // from L1. A 512-wide tile shrinks the window to the tile.
        let windows = |v: Variant| {
            v.work(Shape::new(16, 4096, F32), 2, 32.0 * 1048576.0)
                .demands
                .iter()
                .filter_map(|d| match d {
                    Demand::Reuse {
                        bytes_per_thread,
                        window_bytes,
                    } => Some((*bytes_per_thread / (16.0 * 4094.0), *window_bytes)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        let halo = 2.0 * 4.0 / 16.0;
        assert_eq!(
            windows(Variant::RowMajor),
            vec![(8.0 - halo, 0.0), (8.0, 65528.0)]
        );
        assert_eq!(windows(Variant::Tiled(512))[1], (8.0, 8184.0));
    }

    #[test]
    fn tiles_narrower_than_a_row_restart_their_streams_each_row() {
        let cache = 32.0 * 1048576.0;
        assert_eq!(
            Variant::RowMajor
                .described(Shape::new(16, 4096, F32), 2, cache)
                .segments_per_thread(),
            None
        );
        // 16 rows of 4094 updates in tiles of 512: 128 runs of 2 KiB
        // (512 f32 of the new grid, the narrowest stream).
        let tiled = Variant::Tiled(512).described(Shape::new(16, 4096, F32), 2, cache);
        assert_eq!(tiled.segments_per_thread(), Some((128.0, 2048.0)));
        // A tile as wide as the row is the row-major sweep.
        let whole = Variant::Tiled(4096).described(Shape::new(16, 4096, F32), 2, cache);
        assert_eq!(whole.segments_per_thread(), None);
    }
}
