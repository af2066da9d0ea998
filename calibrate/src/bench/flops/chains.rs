//! The loop-carried chains' figures of the `flops` section (lecture §4.2:
//! the span of a chain of dependent steps).
//!
//! * `chain`: the latency of one f64 operation in a loop-carried chain
//!   ([`crate::kernels::chain`]), seconds per operation on one pinned
//!   thread: the cost of a reduction compiled without reassociation
//!   (`s += x[i]`) or of Horner's scheme, which no throughput figure gives.
//! * `chain_overlap`: a dependent sum over one thread's array against its
//!   add chain alone and its loads alone, in L2 and at DRAM: how much of
//!   the shorter of the two the core hides
//!   (`models::profile::flops::ChainOverlap`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use anyhow::Result;
use models::profile::flops::ChainOverlap;
use models::profile::Sample;
use models::stats::Better;
use models::units::{binary_bytes, Si};

use super::super::{noisy_warning, sample, Context, Outcome};
use crate::kernels::chain::{self, ChainOp};
use crate::kernels::stream::{self, Kernel};
use crate::kernels::Isa;
use crate::mem::{Pages, Region};
use crate::pin::Team;
use crate::timer::{measure, Plan};

/// The chain latencies by operation and, from the add chain's, the
/// overlaps, each overlap with a note.
pub(super) fn figures(
    ctx: &Context,
    out: &mut Outcome,
) -> Result<(BTreeMap<String, Sample>, Vec<ChainOverlap>)> {
    let chain = latencies(ctx, out)?;
    let overlap = match chain.get(ChainOp::Add.name()) {
        Some(add) => overlaps(ctx, add.time().point)?,
        None => Vec::new(),
    };
    out.notes.extend(overlap.iter().map(|c| {
        format!(
            "a dependent sum over {} per thread took {} per element against {} for its add chain and {} for its loads alone: overlap {:.2}",
            binary_bytes(c.per_thread_bytes as f64),
            Si(c.sum_s, "s"),
            Si(c.chain_s, "s"),
            Si(c.load_s, "s"),
            c.overlap
        )
    }));
    Ok((chain, overlap))
}

/// Seconds per dependent f64 operation of `op` on `team`, a one-thread
/// team.
fn measure_chain(team: &Team, op: ChainOp, plan: &Plan) -> Result<models::stats::Summary> {
    let sinks = [Mutex::new(0.0)];
    let m = measure(plan, |inner, count| {
        team.time_batch(&sinks, inner, count, |s: &mut f64, steps| {
            *s += chain::run(op, steps)
        })
    })?;
    let per_op = chain::OPS_PER_STEP as f64;
    Ok(m.per_unit.map(|s| s / per_op)?.summary())
}

/// Kept timings per figure of [`overlaps`] (each a whole sweep).
const OVERLAP_REPS: usize = 7;

/// A dependent sum over one thread's array against its add chain alone
/// (`chain_s` per add) and its loads alone (STREAM's load kernel over the
/// same array), at half the second cache level when the levels are known
/// and at the DRAM working set ([`ChainOverlap`]).
fn overlaps(ctx: &Context, chain_s: f64) -> Result<Vec<ChainOverlap>> {
    let caches = ctx.known_caches();
    let largest = caches.iter().map(|c| c.1).fold(0.0, f64::max);
    let sizes = caches
        .get(1)
        .map(|c| (c.1 / 2.0) as u64)
        .into_iter()
        .chain([ctx.dram_bytes(largest)]);
    let plan = ctx.config.plan.capped(OVERLAP_REPS);
    let isa = Isa::detect();
    let mut out = Vec::new();
    for bytes in sizes {
        let n = (bytes / 8) as usize;
        let mut region = Region::new(n * 8, Pages::Huge)?;
        region.f64s_mut().fill(1.0);
        let region = [Mutex::new(region)];
        let per_element = |work: &(dyn Fn(&mut Region, u64) + Sync)| -> Result<f64> {
            let m = measure(&plan, |inner, count| {
                ctx.one.time_batch(&region, inner, count, work)
            })?;
            Ok(m.per_unit.summary().capability(Better::Lower).point / n as f64)
        };
        let sum_s = per_element(&|r, sweeps| {
            std::hint::black_box(chain::dependent_sum(r.f64s_mut(), sweeps));
        })?;
        let load_s = per_element(&|r, sweeps| {
            std::hint::black_box(stream::run(isa, Kernel::Load, r.f64s_mut(), n, sweeps));
        })?;
        out.push(ChainOverlap::new(bytes, sum_s, chain_s, load_s));
    }
    Ok(out)
}

/// The latency of each loop-carried f64 chain, by operation, with a
/// warning for each noisy one.
fn latencies(ctx: &Context, out: &mut Outcome) -> Result<BTreeMap<String, Sample>> {
    let mut chain = BTreeMap::new();
    for op in ChainOp::ALL {
        let s = measure_chain(&ctx.one, op, &ctx.config.plan)?;
        out.warnings.extend(noisy_warning(
            &format!("the f64 {} chain latency", op.name()),
            &s,
        ));
        chain.insert(op.name().into(), sample(&s));
    }
    Ok(chain)
}
