//! The dgemm ceiling of the `flops` section: `matrixmultiply`'s packed
//! product on each thread's own cache-resident matrices
//! ([`crate::kernels::dgemm`]), timed in bursts spread over the run
//! ([`crate::bench::bursts`]) and pooled.

use std::sync::Mutex;

use anyhow::Result;
use models::profile::flops::FlopsKernel;
use models::profile::lock::two_states;
use models::profile::{CeilingKernel, CeilingStates};
use models::stats::{Sample, Summary as Stats};
use models::units::Si;

use super::{flop_rate, peak, push_ceiling};
use crate::bench::bursts::pool;
use crate::bench::{sample, Context, Outcome};
use crate::kernels::dgemm::{CeilingOperands, CEILING_N};
use crate::kernels::fma::{FlopKernel, Op, Precision};
use crate::kernels::Isa;
use crate::pin::Team;
use crate::timer::Plan;

/// FLOP/s of the dgemm ceiling on every thread of `team`, each thread
/// multiplying its own cache-resident matrices.
pub fn measure_dgemm(team: &Team, plan: &Plan) -> Result<models::stats::Summary> {
    Ok(dgemm_rates(team, plan)?.summary())
}

/// The per-timing FLOP/s of [`measure_dgemm`].
pub(super) fn dgemm_rates(team: &Team, plan: &Plan) -> Result<Sample> {
    let operands = team.each(|_| Mutex::new(CeilingOperands::default()));
    flop_rate(team, plan, &operands, CeilingOperands::FLOPS, |o, reps| {
        std::hint::black_box(o.run(reps));
    })
}

/// A burst of the dgemm ceiling on `team`: the per-timing FLOP/s of the
/// run's plan without its re-measuring, to be pooled
/// ([`crate::bench::bursts`]).
pub fn dgemm_burst(ctx: &Context, team: &Team) -> Result<Sample> {
    dgemm_rates(team, &ctx.config.plan.without_retry())
}

/// The dgemm ceiling on `team` from its `bursts` (per-timing FLOP/s,
/// oldest first: those taken before the benchmarks ahead of this one,
/// those between its kernels, and its own at the full plan last): adds
/// the ceiling, the capability estimate of all their timings pooled (the
/// high quantile, as the kernel's own time is the low quantile of its
/// timings), its section row, and, when the reliable bursts' own
/// capability estimates are [`two_states`] apart, both states and a note
/// of them.
pub(super) fn dgemm_ceiling(
    ctx: &Context,
    team: &Team,
    out: &mut Outcome,
    rows: &mut Vec<FlopsKernel>,
    bursts: &[Sample],
) -> Result<Stats> {
    let threads = team.threads();
    let (pooled, left_out) = pool(bursts, |_| true)?;
    let s = pooled.summary();
    let states = burst_states(bursts);
    if let Some(st) = states {
        out.notes.push(format!(
            "the f64 dgemm ceiling on {threads} thread(s) read {} to {} in its {} bursts spread over the run ({left_out} left out): two states of the host, both kept; the ceiling is the high quantile of all their timings, {}",
            Si(st.slow_flops, "FLOP/s"),
            Si(st.fast_flops, "FLOP/s"),
            bursts.len(),
            Si(peak(&s), "FLOP/s"),
        ));
    }
    // The set matrixmultiply dispatches to, which no cap narrows.
    let isa = Isa::widest_of_cpu();
    let k = FlopKernel {
        precision: Precision::F64,
        isa,
        op: Op::Fma,
    };
    if let Some(c) = push_ceiling(
        out,
        "f64 dgemm".into(),
        k,
        threads,
        &s,
        CeilingKernel::Dgemm,
    ) {
        c.states = states;
    }
    rows.push(FlopsKernel {
        name: "f64 dgemm".into(),
        precision: "f64".into(),
        isa: isa.name().into(),
        op: "dgemm".into(),
        threads,
        accumulators: None,
        flops_per_iteration: None,
        matrix_side: Some(CEILING_N),
        flops: sample(&s),
        flops_per_cycle_per_thread: ctx.cycles(1.0).map(|hz| peak(&s) / hz / threads as f64),
    });
    Ok(s)
}

/// The lowest and the highest capability estimate of a rate's reliable
/// `bursts`, when they are [`two_states`] apart.
fn burst_states(bursts: &[Sample]) -> Option<CeilingStates> {
    let each = bursts
        .iter()
        .filter(|b| b.unreliable().is_none())
        .map(|b| peak(&b.summary()));
    let (lo, hi) = each.fold((f64::INFINITY, 0.0_f64), |(lo, hi), c| {
        (lo.min(c), hi.max(c))
    });
    two_states(lo, hi).then_some(CeilingStates {
        slow_flops: lo,
        fast_flops: hi,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_two_states_apart_are_named_and_unreliable_ones_ignored() {
        let burst = |v: f64| Sample::new(vec![v; 5]).unwrap();
        let states = |bursts: &[Sample]| {
            burst_states(bursts).map(|s| (s.slow_flops / 1e9, s.fast_flops / 1e9))
        };
        assert_eq!(
            states(&[burst(62e9), burst(38e9), burst(61e9)]),
            Some((38.0, 62.0))
        );
        assert_eq!(states(&[burst(62e9), burst(50e9), burst(61e9)]), None);
        let unreliable = burst(20e9).with_interference(5, Some("too few clean".into()));
        assert_eq!(states(&[burst(62e9), unreliable, burst(61e9)]), None);
        assert_eq!(states(&[]), None);
    }
}
