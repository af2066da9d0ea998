//! What a stream's restart costs: STREAM's copy at the DRAM working set,
//! run in segments ([`crate::kernels::segments`]) against the contiguous
//! copy of the same arrays, on one thread and on all.
//!
//! A loop that leaves a stream and starts another (a tile's row ends, the
//! next row's tile starts elsewhere) waits while the prefetchers find the
//! new stream; a contiguous stream pays that once. Per thread,
//!
//! t_restart(S) = (t_segments(S) − t_contiguous) / runs, runs = ⌈n / S⌉,
//!
//! S the run length of each array in bytes, both times the capability
//! estimates (low quantile) of their clean timings. Each run length is
//! timed in [`PAIRS`] pairs, the contiguous copy right before the
//! segmented one ([`super::pairs`]). Measured at
//! [`SEGMENT_BYTES`] (every other one with `--quick`), a predicted loop
//! reads the curve between them (`StreamSection::restart_s`).

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
        (teams.len() * lengths.len() * PAIRS) as u64,
    );
    let mut out = Vec::new();
    for team in teams {
        let per_thread = dram_total / team.threads() as u64;
        let n = Kernel::Copy.elems_for(per_thread as usize);
        let regions = regions(team, per_thread, Pages::Huge)?;
        let time = |seg: usize| -> Result<f64> {
            bar.set_message(format!(
                "{} × runs of {}",
                team.threads(),
                binary_bytes(8.0 * seg as f64)
            ));
            let m = measure(&plan, |inner, count| {
                team.time_batch(&regions, inner, count, |r, sweeps| {
                    black_box(copy_segments(isa, r.f64s_mut(), n, seg, sweeps));
                })
            })?;
            Ok(m.per_unit.summary().capability(Better::Lower).point)
        };
        for &bytes in &lengths {
            let runs = n.div_ceil(bytes / 8) as f64;
            let per_segment_s = over_pairs(|| {
                let contiguous = time(n)?;
                let lost = ((time(bytes / 8)? - contiguous) / runs).max(0.0);
                bar.inc(1);
                Ok(lost)
            })?;
            out.push(StreamRestart {
                threads: team.threads(),
                segment_bytes: bytes as f64,
                per_thread_bytes: per_thread as f64,
                per_segment_s,
            });
        }
    }
    bar.finish_and_clear();
    Ok(out)
}
