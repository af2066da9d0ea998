//! The STREAM sweep again on 4 KiB pages, from the largest private cache
//! to the DRAM working set: the figures of a loop whose arrays the
//! allocator did not put on huge pages, which is most loops (transparent
//! huge pages are often offered only on request).
//!
//! Beyond the private caches a stream on 4 KiB pages takes a TLB miss
//! every 4 KiB and its prefetch stops at each page's end, so one core
//! streams slower: on the Zen 4 VM (AMD EPYC, family 25 model 17), one
//! thread at 512 MiB read 0.57–0.79× the huge-page bandwidth (the load
//! kernel the least, update the most) and 0.81–0.86× at 16 MiB, in the
//! last cache; at 1 MiB, in L2, the two page sizes read alike. Below the
//! largest private cache the huge-page sweep stands for both
//! (`models::profile::stream::StreamSection::points_on`).

use anyhow::Result;
use models::units::binary_bytes;

use super::{points_in, regions, KernelPoint, SWEEP_REPS};
use crate::bench::{Context, NamedSize};
use crate::kernels::stream::Kernel;
use crate::mem::Pages;
use crate::pin::Team;

/// Each of `kernels` on 4 KiB pages at the sizes of `grids` from `from`
/// bytes per thread on, on each team, on regions of the team's DRAM
/// size: the sweep's sizes with at most [`SWEEP_REPS`] timings, the DRAM
/// size with the plan's own.
pub(super) fn base_page_sweeps(
    ctx: &Context,
    teams: &[&Team],
    grids: &[Vec<u64>],
    kernels: &[Kernel],
    from: u64,
) -> Result<Vec<Vec<KernelPoint>>> {
    let plan = &ctx.config.plan;
    let sizes: Vec<Vec<u64>> = grids
        .iter()
        .map(|g| g.iter().copied().filter(|&s| s >= from).collect())
        .collect();
    let bar = ctx.progress.bar(
        "stream, 4 KiB pages",
        sizes.iter().map(|s| s.len() as u64).sum(),
    );
    let mut sweeps = Vec::new();
    for (team, sizes) in teams.iter().zip(&sizes) {
        let Some(&top) = sizes.last() else {
            sweeps.push(Vec::new());
            continue;
        };
        let regions = regions(team, top, Pages::Small)?;
        let mut points = Vec::new();
        for &size in sizes {
            bar.set_message(format!(
                "{} × {}",
                team.threads(),
                binary_bytes(size as f64)
            ));
            let p = if size == top {
                *plan
            } else {
                plan.capped(SWEEP_REPS)
            };
            points.extend(points_in(team, &regions, size, kernels, &p)?);
            bar.inc(1);
        }
        sweeps.push(points);
    }
    bar.finish_and_clear();
    Ok(sweeps)
}

/// Where the 4 KiB-page sweep starts: the largest cache that no two of the
/// run's first `threads` CPUs share (the smallest cache when the OS says
/// none is private).
pub(super) fn largest_private_cache(ctx: &Context, caches: &[NamedSize], threads: usize) -> f64 {
    let cpus = ctx.cpu_ids(threads);
    let private = caches
        .iter()
        .enumerate()
        .filter(|(i, _)| ctx.sys.sharing(*i as u32 + 1, &cpus) <= 1)
        .map(|(_, c)| c.1)
        .reduce(f64::max);
    private
        .or_else(|| caches.iter().map(|c| c.1).reduce(f64::min))
        .unwrap_or(0.0)
}

/// The 4 KiB-page sweeps' points at their DRAM size.
pub(super) fn base_page_dram(base: &[Vec<KernelPoint>]) -> Vec<&KernelPoint> {
    base.iter()
        .flat_map(|sweep| {
            let top = sweep.iter().map(|p| p.per_thread_bytes).max();
            sweep
                .iter()
                .filter(move |p| Some(p.per_thread_bytes) == top)
        })
        .collect()
}

/// One line per thread count: each kernel's bandwidth at the DRAM size on
/// 4 KiB pages (`base_dram`) against its huge-page DRAM point.
pub(super) fn base_page_note(base_dram: &[&KernelPoint], dram: &[&KernelPoint]) -> Option<String> {
    let mut counts: Vec<usize> = base_dram.iter().map(|p| p.threads).collect();
    counts.dedup();
    let lines: Vec<String> = counts
        .into_iter()
        .map(|threads| {
            let ratios: Vec<String> = base_dram
                .iter()
                .filter(|p| p.threads == threads)
                .filter_map(|p| {
                    let huge = dram
                        .iter()
                        .find(|d| d.kernel == p.kernel && d.threads == threads)?;
                    Some(format!(
                        "{} {:.2}×",
                        p.kernel.name(),
                        p.best() / huge.best()
                    ))
                })
                .collect();
            format!("{} on {threads} thread(s)", ratios.join(", "))
        })
        .collect();
    (!lines.is_empty()).then(|| {
        format!(
            "stream on 4 KiB pages at the DRAM size, against huge pages: {}",
            lines.join("; ")
        )
    })
}
