//! The DRAM bandwidth of the STREAM kernels built for each narrower SIMD
//! instruction set than the section's (AVX2 on a CPU with AVX-512), against
//! the section's build of the same kernel on the same arrays.
//!
//! One core's DRAM bandwidth is the misses it keeps in flight over their
//! latency (Little's law, §4.3), and the code that asks sets how many: on
//! one Zen 4 core the 256-bit add and triad moved 38–40 GB/s where their
//! 512-bit builds moved 30–31 GB/s, and the 256-bit read-only sum 27–28
//! against 33 GB/s. A loop built for AVX2 is then predicted from the AVX2
//! figures (`StreamSection::isa_dram_ratio`).
//!
//! The host's memory system drifts by tens of per cent within seconds, so,
//! as for the restarts, each kernel is timed in [`PAIRS`] pairs, the
//! section's build right before the narrower one: the figure is the median
//! of the pairs' ratios of capability estimates, the interval their range.
//! The section's own DRAM points, pooled over the run, keep their value;
//! the ratio carries them to the narrower build.

use std::hint::black_box;

use anyhow::Result;
use models::profile::stream::IsaDram;
use models::stats::Better;
use models::Estimate;

use super::regions;
use crate::bench::Context;
use crate::kernels::stream::{run, Kernel};
use crate::kernels::Isa;
use crate::mem::Pages;
use crate::pin::Team;
use crate::timer::measure;

/// Kept timings per measurement (each a whole DRAM-sized sweep).
pub const REPS: usize = 5;
/// Section-build-then-narrower pairs per kernel.
pub const PAIRS: usize = 3;

/// The SIMD instruction sets narrower than the widest this CPU has, each
/// with FMA (the scalar build is left out: loops without SIMD read the
/// section's figures).
pub fn narrower() -> Vec<Isa> {
    let widest = Isa::detect();
    Isa::available()
        .into_iter()
        .filter(|&i| i != widest && i != Isa::Scalar)
        .collect()
}

/// The ratio of every one of `kernels` on each team, each thread sweeping
/// its share of the DRAM working set `dram_total`, for every instruction
/// set of [`narrower`]; empty when there is none.
pub fn measure_isa_dram(
    ctx: &Context,
    teams: &[&Team],
    dram_total: u64,
    kernels: &[Kernel],
) -> Result<Vec<IsaDram>> {
    let isas = narrower();
    if isas.is_empty() {
        return Ok(Vec::new());
    }
    let plan = ctx
        .config
        .plan
        .with_reps(ctx.config.plan.reps.min(REPS))
        .without_retry();
    let widest = Isa::detect();
    let bar = ctx.progress.bar(
        "stream per instruction set",
        (isas.len() * teams.len() * kernels.len() * PAIRS) as u64,
    );
    let mut out = Vec::new();
    for team in teams {
        let per_thread = dram_total / team.threads() as u64;
        let regions = regions(team, per_thread, Pages::Huge)?;
        for &isa in &isas {
            for &kernel in kernels {
                bar.set_message(format!(
                    "{} × {} {widest} / {isa}",
                    team.threads(),
                    kernel.name()
                ));
                let n = kernel.elems_for(per_thread as usize);
                let time = |isa: Isa| -> Result<f64> {
                    let m = measure(&plan, |inner, count| {
                        team.time_batch(&regions, inner, count, |r, sweeps| {
                            black_box(run(isa, kernel, r.f64s_mut(), n, sweeps));
                        })
                    })?;
                    Ok(m.per_unit.summary().capability(Better::Lower).point)
                };
                let mut ratios = Vec::with_capacity(PAIRS);
                for _ in 0..PAIRS {
                    let wide = time(widest)?;
                    ratios.push(wide / time(isa)?);
                    bar.inc(1);
                }
                ratios.sort_by(f64::total_cmp);
                out.push(IsaDram {
                    isa: isa.name().into(),
                    kernel: kernel.name().into(),
                    threads: team.threads(),
                    ratio: Estimate::new(ratios[PAIRS / 2], ratios[0], ratios[PAIRS - 1]),
                });
            }
        }
    }
    bar.finish_and_clear();
    Ok(out)
}
