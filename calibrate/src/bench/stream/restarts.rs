//! What a stream's restart costs: STREAM's copy at the DRAM working set,
//! run in segments ([`crate::kernels::segments`]) against the contiguous
//! copy of the same arrays, on one thread and on all.
//!
//! A loop that leaves a stream and starts another (a tile's row ends, the
//! next row's tile starts elsewhere) waits while the prefetchers find the
//! new stream; a contiguous stream pays that once. Per thread,
//!
//! t_restart(S, k) = (t_segments(S, k) − t_contiguous) / runs, runs = ⌈n / S⌉,
//!
//! S the run length of each array in bytes, k the runs to a row (a tile
//! column's runs start k·S bytes apart), both times the capability
//! estimates (low quantile) of their clean timings. Each run length is
//! timed at [`RUNS_PER_ROW`], each in [`PAIRS`] pairs, the contiguous copy
//! right before the segmented one ([`super::pairs`]). Measured at
//! [`SEGMENT_BYTES`] (every other one with `--quick`), a predicted loop
//! reads the curves between them (`StreamSection::restart_s`).
//!
//! Why two row lengths: the prefetchers run past a run's end, into the
//! next tile column's lines, which the sweep takes once it has finished
//! this column. A column holds 1/k of the thread's arrays: at k = 2 more
//! than the caches, so those lines are evicted and fetched again; at
//! k = 64 (a few MB) they are still cached. A loop reads the curves at its
//! own column's bytes (`StreamSection::restart_s`). On the Zen 4 VM (2
//! vCPUs, huge pages, one thread, a plain C copy of 128 MiB per array, two
//! passes over the row lengths) runs of 1 KiB lost 142–149 ns each at two
//! runs to a row and 49–76 ns at 64 and 128, falling steadily between (in
//! log k); runs of 2 KiB lost 175–210 ns against 106–132 ns; runs of 4 KiB
//! 250–268 ns either way; runs of 16 KiB 579 ns at two runs to a row
//! against 436–460 ns at 8 and 16; runs of 64 KiB the same either way.
//! With 2 GiB per array, 64 runs of 1 KiB to a row (columns of 32 MiB per
//! array) took as long as two to a row: 216–227 ns per run, copy and
//! restart together, against 213–218 ns, where with 128 MiB per array
//! (columns of 2 MiB) 64 to a row took 131–145 ns and two 214 ns.

use std::hint::black_box;

use anyhow::Result;
use models::profile::stream::StreamRestart;
use models::stats::Better;
use models::units::binary_bytes;

use super::pairs::{over_pairs, PAIRS};
use super::regions;
use crate::bench::Context;
use crate::kernels::segments::copy_segments;
use crate::kernels::stream::Kernel;
use crate::kernels::Isa;
use crate::mem::Pages;
use crate::pin::Team;
use crate::timer::measure;

/// Run lengths measured, bytes of one array, an octave apart: from 16
/// lines to 1024.
pub const SEGMENT_BYTES: [usize; 7] = [
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
];
/// Kept timings per measurement (each a whole DRAM-sized copy).
pub const REPS: usize = 5;
/// Runs to a row measured: tile columns of half the thread's arrays, more
/// than the caches hold, and of a 64th (each where a thread's arrays hold
/// two rows at least, so that a tile column has two runs).
pub const RUNS_PER_ROW: [usize; 2] = [2, 64];

/// The restart curve on each team, each thread copying its share of the
/// DRAM working set `dram_total`, at every `octaves`-th of
/// [`SEGMENT_BYTES`].
pub fn measure_restarts(
    ctx: &Context,
    teams: &[&Team],
    dram_total: u64,
    octaves: usize,
) -> Result<Vec<StreamRestart>> {
    let plan = ctx.config.plan.capped(REPS);
    let isa = Isa::detect();
    let lengths: Vec<usize> = SEGMENT_BYTES.into_iter().step_by(octaves).collect();
    let bar = ctx.progress.bar(
        "stream restarts",
        (teams.len() * lengths.len() * RUNS_PER_ROW.len() * PAIRS) as u64,
    );
    let mut out = Vec::new();
    for team in teams {
        let per_thread = dram_total / team.threads() as u64;
        let n = Kernel::Copy.elems_for(per_thread as usize);
        let regions = regions(team, per_thread, Pages::Huge)?;
        let time = |seg: usize, runs_per_row: usize| -> Result<f64> {
            bar.set_message(format!(
                "{} × runs of {}, {runs_per_row} a row",
                team.threads(),
                binary_bytes(8.0 * seg as f64)
            ));
            let m = measure(&plan, |inner, count| {
                team.time_batch(&regions, inner, count, |r, sweeps| {
                    black_box(copy_segments(
                        isa,
                        r.f64s_mut(),
                        n,
                        seg,
                        runs_per_row,
                        sweeps,
                    ));
                })
            })?;
            Ok(m.per_unit.summary().capability(Better::Lower).point)
        };
        for &bytes in &lengths {
            let seg = bytes / 8;
            let runs = n.div_ceil(seg);
            for k in RUNS_PER_ROW {
                if 2 * k > runs {
                    bar.inc(PAIRS as u64);
                    continue;
                }
                let per_segment_s = over_pairs(|| {
                    let contiguous = time(n, 1)?;
                    let lost = ((time(seg, k)? - contiguous) / runs as f64).max(0.0);
                    bar.inc(1);
                    Ok(lost)
                })?;
                out.push(StreamRestart {
                    threads: team.threads(),
                    segment_bytes: bytes as f64,
                    runs_per_row: k as f64,
                    per_thread_bytes: per_thread as f64,
                    per_segment_s,
                });
            }
        }
    }
    bar.finish_and_clear();
    Ok(out)
}
