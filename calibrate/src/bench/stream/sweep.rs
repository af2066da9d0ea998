//! The STREAM sweep of each team: every kernel at every working set, on
//! regions made once at the DRAM size, with the DRAM point measured in
//! bursts spread over the sweep, each between two probes of where the host
//! runs the threads, its figure the median burst (of the placement most
//! bursts saw). One thread's DRAM point is also measured in each narrower
//! vector instruction set the CPU has, its bursts beside the widest's:
//! one core's rate from DRAM depends on the width of its code
//! (`models::profile::stream::StreamSection::dram_points_in`).

use std::sync::Mutex;

use anyhow::Result;
use models::stats::{Better, Sample};
use models::units::binary_bytes;

use super::{points_in, rates_in, regions, KernelPoint, SWEEP_REPS};
use crate::bench::{bursts, c2c, Context};
use crate::kernels::stream::Kernel;
use crate::kernels::Isa;
use crate::mem::{Pages, Region};
use crate::pin::Team;
use crate::timer::Plan;

/// Each of `kernels` at every size of `grids`, on each team, in size
/// order, every point on the start of the team's DRAM-sized regions
/// (allocated once, from the pool of resident memory, [`crate::mem::pool`],
/// so no point waits for the host's faults). The DRAM point is also
/// measured in [`DRAM_BURSTS`] short bursts spread over the team's sweep,
/// and its timings are pooled with theirs (see [`dram_point`]).
/// On one thread the DRAM point of each narrower vector instruction set
/// ([`Isa::narrower_vectors`]) is measured in bursts of its own right
/// after the widest's, at every burst and at the end; those points come
/// back apart, as the second value.
pub(super) fn sweep(
    ctx: &Context,
    teams: &[&Team],
    grids: &[Vec<u64>],
    kernels: &[Kernel],
) -> Result<(Vec<Vec<KernelPoint>>, Vec<KernelPoint>)> {
    let plan = &ctx.config.plan;
    let bar = ctx
        .progress
        .bar("stream", grids.iter().map(|g| g.len() as u64).sum());
    let mut sweeps = Vec::new();
    let mut narrower = Vec::new();
    for (team, grid) in teams.iter().zip(grids) {
        let Some((&top, below)) = grid.split_last() else {
            continue;
        };
        let regions = regions(team, top, Pages::Huge)?;
        let burst_after = burst_points(below.len());
        let isas = if team.threads() == 1 {
            [vec![Isa::detect()], Isa::narrower_vectors()].concat()
        } else {
            vec![Isa::detect()]
        };
        // The bursts of each kernel in each of `isas`, in that order.
        let mut bursts: Vec<Vec<Burst>> = vec![Vec::new(); kernels.len() * isas.len()];
        let burst_plan = plan.with_reps(BURST_REPS).without_retry();
        let mut points = Vec::new();
        for (i, &size) in below.iter().enumerate() {
            bar.set_message(format!(
                "{} × {}",
                team.threads(),
                binary_bytes(size as f64)
            ));
            // The plateau points are pooled per level: at most SWEEP_REPS
            // timings and no re-measuring.
            let p = plan.capped(SWEEP_REPS);
            points.extend(points_in(team, &regions, size, kernels, &p)?);
            if burst_after.contains(&i) {
                let mut rates = Vec::new();
                for &isa in &isas {
                    rates.extend(placed_rates(
                        ctx,
                        team,
                        &regions,
                        top,
                        kernels,
                        isa,
                        &burst_plan,
                    )?);
                }
                for (b, r) in bursts.iter_mut().zip(rates) {
                    b.push(r);
                }
            }
            bar.inc(1);
        }
        bar.set_message(format!("{} × {}", team.threads(), binary_bytes(top as f64)));
        for (n, (&isa, bursts)) in isas
            .iter()
            .zip(bursts.chunks_mut(kernels.len()))
            .enumerate()
        {
            // The widest's last burst is the point's own, at the full plan.
            let p = if n == 0 { plan } else { &burst_plan };
            let own = placed_rates(ctx, team, &regions, top, kernels, isa, p)?;
            for ((&kernel, b), own) in kernels.iter().zip(bursts.iter_mut()).zip(own) {
                b.push(own);
                let point = dram_point(kernel, top, team, isa, b)?;
                if n == 0 {
                    points.push(point);
                } else {
                    narrower.push(point);
                }
            }
        }
        bar.inc(1);
        sweeps.push(points);
    }
    bar.finish_and_clear();
    Ok((sweeps, narrower))
}

/// Short measurements of the DRAM point spread over a team's sweep.
///
/// A shared host's memory bandwidth moves within a second: 40 one-thread
/// triads of 128 MiB back to back (0.2 s each) on the Zen 4 VM read 19.6 to
/// 27.8 GB/s, where the best of each five in a row read 24.2 to 27.8. A
/// DRAM figure whose timings all come from one fraction of a second
/// carries the host's state of that moment; the median of bursts spread
/// over the sweep describes the run.
pub const DRAM_BURSTS: usize = 3;

/// Kept timings of one DRAM burst.
const BURST_REPS: usize = 5;

/// The indexes of the `points` sizes below the DRAM one after which a
/// DRAM burst runs: [`DRAM_BURSTS`] of them, evenly spread (fewer when the
/// sweep has fewer points).
fn burst_points(points: usize) -> Vec<usize> {
    let mut at: Vec<usize> = (1..=DRAM_BURSTS)
        .map(|k| k * points / (DRAM_BURSTS + 1))
        .filter(|&i| i < points)
        .collect();
    at.dedup();
    at
}

/// One burst of a DRAM point: its rates and, on two threads or more, the
/// line probes just before and just after it.
#[derive(Debug, Clone)]
struct Burst {
    rates: Sample,
    lines: Option<[f64; 2]>,
}

/// The rates of each of `kernels` built for `isa` at `per_thread_bytes` on
/// `team`, one after the other, each between two line probes ([`c2c::placement`]) on
/// two threads or more: where the host runs the threads decides what
/// their memory moves (`models::profile::stream::typical_burst`), and it
/// changes within a second.
fn placed_rates(
    ctx: &Context,
    team: &Team,
    regions: &[Mutex<Region>],
    per_thread_bytes: u64,
    kernels: &[Kernel],
    isa: Isa,
    plan: &Plan,
) -> Result<Vec<Burst>> {
    let probe = || -> Result<Option<f64>> {
        if team.threads() < 2 {
            return Ok(None);
        }
        c2c::placement(&ctx.config.cpus)
    };
    let mut before = probe()?;
    let mut out = Vec::new();
    for &kernel in kernels {
        let rates = rates_in(team, regions, per_thread_bytes, &[kernel], isa, plan)?.remove(0);
        let after = probe()?;
        let lines = before.zip(after).map(|(b, a)| [b, a]);
        out.push(Burst { rates, lines });
        before = after;
    }
    Ok(out)
}

/// The DRAM point of `kernel` built for `isa`: its bursts' timings and its own (the last
/// of `bursts`) pooled, the disturbed ones counted
/// ([`bursts::pool`]; a burst too disturbed to be trusted is left
/// out), and its bandwidth the typical burst's
/// ([`super::typical_burst`]), with the kept bursts' line probes when
/// every one has them.
fn dram_point(
    kernel: Kernel,
    top: u64,
    team: &Team,
    isa: Isa,
    bursts: &[Burst],
) -> Result<KernelPoint> {
    let timings: Vec<Sample> = bursts.iter().map(|b| b.rates.clone()).collect();
    let (pooled, _) = bursts::pool(&timings, |_| true)?;
    let mut point = KernelPoint::new(kernel, top, team, &pooled, isa);
    let kept: Vec<&Burst> = bursts
        .iter()
        .filter(|b| b.rates.unreliable().is_none())
        .collect();
    point.bursts = kept
        .iter()
        .map(|b| b.rates.summary().capability(Better::Higher).point)
        .collect();
    point.burst_lines = kept
        .iter()
        .map(|b| b.lines)
        .collect::<Option<_>>()
        .unwrap_or_default();
    Ok(point)
}

/// What one thread's DRAM points read in the narrower instruction sets,
/// each kernel against the widest's; `None` without them.
pub(super) fn narrower_note(dram: &[&KernelPoint], narrower: &[KernelPoint]) -> Option<String> {
    let first = narrower.first()?;
    let rates: Vec<String> = narrower
        .iter()
        .filter_map(|n| {
            let widest = dram
                .iter()
                .find(|d| d.threads == n.threads && d.kernel == n.kernel)?;
            Some(format!(
                "{} {} ({:.2}×)",
                n.kernel.name(),
                models::units::Si(n.best(), "B/s"),
                n.best() / widest.best()
            ))
        })
        .collect();
    Some(format!(
        "one thread from DRAM in {} (against {}): {}",
        first.isa,
        Isa::detect(),
        rates.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_spread_evenly_over_the_sweep() {
        assert_eq!(burst_points(13), vec![3, 6, 9]);
        assert_eq!(burst_points(4), vec![1, 2, 3]);
        assert_eq!(burst_points(2), vec![0, 1]);
        assert!(burst_points(0).is_empty());
    }
}
