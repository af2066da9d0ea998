//! The levels' read bandwidths: the STREAM load kernel's points on each
//! cache's plateau (see the parent module's docs), and one thread's L1
//! plateau again in each narrower vector instruction set.

use anyhow::Result;
use models::stats::{Better, Sample};
use models::units::Si;
use models::Estimate;

use super::{rates_in, regions, KernelPoint, FIRST_BYTES, SWEEP_REPS};
use crate::bench::{Context, Outcome};
use crate::kernels::stream::Kernel;
use crate::kernels::Isa;
use crate::mem::Pages;

/// A level's plateau in per-thread bytes, and the points on it.
#[derive(Clone)]
pub(super) struct Plateau {
    pub name: String,
    pub from: f64,
    pub to: f64,
    pub threads: usize,
    pub points: Vec<f64>,
    pub bandwidth: Estimate,
    /// The instruction set of its load kernel when not the widest.
    pub isa: Option<Isa>,
}

/// The bandwidth of a plateau from its load points: the median of their
/// capability estimates, or the one point's own.
fn plateau_bandwidth(on: &[&KernelPoint]) -> Option<Estimate> {
    let bests: Vec<f64> = on.iter().map(|p| p.best()).collect();
    match Sample::new(bests) {
        Ok(s) => Some(s.summary().estimate()),
        Err(_) => on.first().map(|p| p.bandwidth.capability(Better::Higher)),
    }
}

/// One thread's L1 plateau `l1` measured again in each narrower vector
/// instruction set, at the same working sets, each with a note beside the
/// widest set's figure in `out`. A core
/// loads a fixed number of vectors per cycle from L1 whatever their width,
/// so a loop's loads move bytes at its own set's rate: on the Xeon VM the
/// AVX2 load kernel read 227 GB/s where the AVX-512 one read 399 GB/s. A
/// loop's loads that hit L1 again are charged at the figure of its set
/// (`StreamSection::level_read_in`).
pub(super) fn narrower_l1(ctx: &Context, out: &mut Outcome, l1: &Plateau) -> Result<Vec<Plateau>> {
    let largest = l1.points.iter().copied().fold(0.0, f64::max) as u64;
    let regions = regions(&ctx.one, largest, Pages::Huge)?;
    let plan = ctx.config.plan.capped(SWEEP_REPS);
    let mut narrower = Vec::new();
    for isa in Isa::narrower_vectors() {
        let mut points = Vec::new();
        for &bytes in &l1.points {
            let rates = rates_in(
                &ctx.one,
                &regions,
                bytes as u64,
                &[Kernel::Load],
                isa,
                &plan,
            )?;
            points.push(KernelPoint::new(
                Kernel::Load,
                bytes as u64,
                &ctx.one,
                &rates[0],
                isa,
            ));
        }
        let on: Vec<&KernelPoint> = points.iter().collect();
        if let Some(bandwidth) = plateau_bandwidth(&on) {
            out.notes.push(format!(
                "stream L1 in {}: one thread's load kernel reads {} ({} in {})",
                isa.name(),
                Si(bandwidth.point, "B/s"),
                Si(l1.bandwidth.point, "B/s"),
                Isa::detect().name()
            ));
            narrower.push(Plateau {
                isa: Some(isa),
                bandwidth,
                ..l1.clone()
            });
        }
    }
    Ok(narrower)
}

/// The load kernel's bandwidth on each cache plateau (see the module docs).
pub(super) fn plateaus(
    ctx: &Context,
    caches: &[(String, f64)],
    sweep: &[KernelPoint],
    threads: usize,
) -> Vec<Plateau> {
    let cpus = ctx.cpu_ids(threads);
    let loads: Vec<&KernelPoint> = sweep.iter().filter(|p| p.kernel == Kernel::Load).collect();
    let mut out = Vec::new();
    let mut prev = 0.0;
    for (i, (name, size)) in caches.iter().enumerate() {
        let share = if threads > 1 {
            ctx.sys.sharing(i as u32 + 1, &cpus) as f64
        } else {
            1.0
        };
        let (mut from, mut to) = (2.0 * prev, size / (2.0 * share));
        prev = *size;
        let mut on: Vec<&KernelPoint> = loads
            .iter()
            .copied()
            .filter(|p| (p.per_thread_bytes as f64) >= from && (p.per_thread_bytes as f64) <= to)
            .collect();
        if on.is_empty() {
            // No point on a narrow (or, for a small shared level, empty)
            // plateau: the one nearest its middle, which then is the
            // plateau.
            let mid = (from.max(FIRST_BYTES as f64) * to.max(FIRST_BYTES as f64))
                .sqrt()
                .log2();
            on.extend(loads.iter().copied().min_by(|a, b| {
                let da = ((a.per_thread_bytes as f64).log2() - mid).abs();
                let db = ((b.per_thread_bytes as f64).log2() - mid).abs();
                da.total_cmp(&db)
            }));
            if let Some(p) = on.first() {
                (from, to) = (p.per_thread_bytes as f64, p.per_thread_bytes as f64);
            }
        }
        let Some(bandwidth) = plateau_bandwidth(&on) else {
            continue;
        };
        out.push(Plateau {
            name: name.clone(),
            from,
            to,
            threads,
            points: on.iter().map(|p| p.per_thread_bytes as f64).collect(),
            bandwidth,
            isa: None,
        });
    }
    out
}
