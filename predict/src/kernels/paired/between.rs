//! The figures that follow where the host runs the vCPUs: each drift
//! measured in registers, in L1 or L2 or on a few lines, short enough to
//! sit between two of a kernel's timings ([`super::Beside`]).

use std::time::Duration;

use anyhow::Result;
use calibrate::harness::kernels::fma::{FlopKernel, Precision};
use calibrate::harness::mem::Pages;
use calibrate::harness::pin::{allowed_cpus, Team};
use calibrate::harness::timer::Plan;
use calibrate::harness::{
    bin_items, local_sum_steps, lock_throughput, measure_dgemm, measure_flops, measure_span,
    own_line_increments, placement, scatter_items_beyond_caches, shared_line_increments, LockKind,
};
use models::profile::lock::HandOff;
use models::profile::{CeilingKernel, Profile};
use models::stats::Better;
use models::units::binary_bytes;

use super::target::scatter_target;
use super::{loads_drift, Drift, Paired, SpanTarget};
use crate::kernels::terms::line_sharers;
use crate::kernels::work::{Demand, LockKindName, SortLoop, Work};

/// The figures that follow where the host runs the vCPUs (on one core's
/// siblings or on two cores, near or far for a line's migration), which
/// can change within a second: the compute ceiling, increments, local
/// sums, bin loops, hand-offs, migrations, loads and the chains within
/// iterations, each in registers, in L1 or L2, or on a few lines, and the
/// placement itself.
pub(super) fn between(work: &Work, team: &Team, profile: &Profile, plan: &Plan) -> Result<Paired> {
    let threads = team.threads();
    Ok(Paired {
        compute: compute_drift(work, team, profile, plan)?,
        increments: increments_drift(work, team, profile, plan)?,
        local_sums: local_sums_drift(work, team, profile, plan)?,
        bin_loops: bin_loops_drift(work, team, profile, plan)?,
        scatters: scatters_drift(work, team, profile, plan)?,
        handoffs: handoffs_drift(work, threads, profile, plan)?,
        migrations: migrations_drift(work, threads, profile, plan)?,
        loads: loads_drift(work, team, profile, plan)?,
        span: span_drift(work, team, profile, plan)?,
        placement_line_s: placement(&allowed_cpus()[..threads])?,
        ..Paired::default()
    })
}

/// The ceiling the work's compute term reads, now against the profile's:
/// the register FMA peak of its precision, or the dgemm ceiling for work
/// that names it; none without flops or a profile ceiling for them.
///
/// The two move apart: on the Xeon VM the dgemm ceiling of the five
/// profiles of one accuracy run read 78 GFLOP/s on one thread in two and
/// 48–55 in three, and the blocked matmul beside them ran in 28–30 ms or
/// in 44–48 ms, while the register peak held at 112–115 GFLOP/s in every
/// profile and every re-measure.
fn compute_drift(
    work: &Work,
    team: &Team,
    profile: &Profile,
    plan: &Plan,
) -> Result<Option<Drift>> {
    let Some((name, ceiling)) = work.demands.iter().find_map(|d| match d {
        Demand::Flops {
            precision, ceiling, ..
        } => Some((*precision, *ceiling)),
        _ => None,
    }) else {
        return Ok(None);
    };
    let threads = team.threads();
    let Some(c) = profile.ceiling(name, threads, ceiling, None) else {
        return Ok(None);
    };
    let (what, now) = match ceiling {
        CeilingKernel::Dgemm => ("f64 dgemm".to_string(), measure_dgemm(team, plan)?),
        CeilingKernel::Registers => {
            let precision = if name == "f32" {
                Precision::F32
            } else {
                Precision::F64
            };
            let fk = FlopKernel::widest(precision);
            (fk.label(), measure_flops(team, fk, plan)?)
        }
    };
    Ok(Some(Drift {
        what: format!("{what}, {threads} thr"),
        profile: c.flops.point,
        now: now.capability(Better::Higher).point,
        unit: "FLOP/s",
    }))
}

/// The time per increment of the work's counters, on `sharers` threads'
/// shared line or each on its own, now against the profile's (as rates);
/// none without increments or a profile figure for them.
fn increments_drift(
    work: &Work,
    team: &Team,
    profile: &Profile,
    plan: &Plan,
) -> Result<Option<Drift>> {
    let Some(sharers) = work.demands.iter().find_map(|d| match d {
        Demand::Increments { sharers, .. } => Some(*sharers),
        _ => None,
    }) else {
        return Ok(None);
    };
    let threads = team.threads();
    let wanted = line_sharers(sharers, threads);
    let Some((t, at)) = profile
        .sections
        .c2c
        .as_ref()
        .and_then(|c| c.increment_s(wanted, HandOff::Typical))
    else {
        return Ok(None);
    };
    let now = if at > 1 {
        let on = if at == threads {
            None
        } else {
            Some(crate::kernels::team::team(at)?)
        };
        // Read as the profile reads it: the median, as its bursts' pool.
        shared_line_increments(on.as_ref().unwrap_or(team), plan)?.median
    } else {
        own_line_increments(team, plan)?.low_quantile.point
    };
    let what = if at > 1 {
        format!("increments of {at} threads' counters on one line")
    } else {
        format!("increments of counters each on its line, {threads} thr")
    };
    Ok(Some(Drift {
        what,
        profile: 1.0 / t,
        now: 1.0 / now,
        unit: "increments/s",
    }))
}

/// The time per step of a local sum on the team's threads, now against
/// the profile's (as rates); none without a local sum or a profile figure.
fn local_sums_drift(
    work: &Work,
    team: &Team,
    profile: &Profile,
    plan: &Plan,
) -> Result<Option<Drift>> {
    let sums = work
        .demands
        .iter()
        .any(|d| matches!(d, Demand::LocalSum { .. }));
    let profiled = profile.sections.c2c.as_ref().and_then(|c| c.local_step_s());
    let (Some(t), true) = (profiled, sums) else {
        return Ok(None);
    };
    let now = local_sum_steps(team, plan)?.low_quantile.point;
    Ok(Some(Drift {
        what: format!("local sum, {} thr", team.threads()),
        profile: 1.0 / t,
        now: 1.0 / now,
        unit: "steps/s",
    }))
}

/// The time per element of the profile's Horner loop at the measured depth
/// nearest (in log) to the work's chains within iterations, on the set its
/// term reads, on as many threads at once as the profile's point (the
/// team's, or one), now against the profile's (as rates); none without
/// such chains or a curve ([`SpanTarget`]).
fn span_drift(work: &Work, team: &Team, profile: &Profile, plan: &Plan) -> Result<Option<Drift>> {
    let Some(target) = SpanTarget::of(work, profile, team.threads()) else {
        return Ok(None);
    };
    let on = crate::kernels::team::team(target.threads)?;
    let now = measure_span(&on, target.isa, target.depth, plan)?
        .low_quantile
        .point;
    Ok(Some(target.drift(now, &format!("{} thr", target.threads))))
}

/// The time per item of the counting sort's loops the work runs (the
/// histogram, the scatter or both, summed), on the team's threads, now
/// against the profile's (as rates); none without such a loop or a profile
/// figure for each of them.
fn bin_loops_drift(
    work: &Work,
    team: &Team,
    profile: &Profile,
    plan: &Plan,
) -> Result<Option<Drift>> {
    let mut loops: Vec<SortLoop> = Vec::new();
    for d in &work.demands {
        if let Demand::BinLoop { kind, .. } = d {
            if !loops.contains(kind) {
                loops.push(*kind);
            }
        }
    }
    let c2c = profile.sections.c2c.as_ref();
    let profiled: Option<f64> = loops.iter().map(|k| c2c?.bin_item_s(k.key())).sum();
    let (Some(t), false) = (profiled, loops.is_empty()) else {
        return Ok(None);
    };
    let mut now = 0.0;
    for k in &loops {
        now += bin_items(team, plan, *k == SortLoop::Scatter)?
            .low_quantile
            .point;
    }
    let names: Vec<&str> = loops.iter().map(|k| k.key()).collect();
    Ok(Some(Drift {
        what: format!("{} loop(s), {} thr", names.join(" + "), team.threads()),
        profile: 1.0 / t,
        now: 1.0 / now,
        unit: "items/s",
    }))
}

/// The scatter's time per item at its profile point ([`scatter_target`]),
/// on the team's threads, now against the profile's (as rates); none
/// without a target.
fn scatters_drift(
    work: &Work,
    team: &Team,
    profile: &Profile,
    plan: &Plan,
) -> Result<Option<Drift>> {
    let threads = team.threads();
    let Some(point) = scatter_target(work, threads, profile) else {
        return Ok(None);
    };
    let Some(now) = scatter_items_beyond_caches(team, plan, point.output_bytes, Pages::Huge)?
    else {
        return Ok(None);
    };
    Ok(Some(Drift {
        what: format!(
            "scatter with {} of output per thread, {threads} thr",
            binary_bytes(point.output_bytes as f64)
        ),
        profile: 1.0 / point.item_s,
        now: 1.0 / now.low_quantile.point,
        unit: "items/s",
    }))
}

/// The contended lock's throughput on `threads` threads, now against the
/// profile's: the kind of the work's first lock (a std mutex or the spin
/// lock), the figure a single lock's hand-offs come from; none for a
/// variant without locks, on one thread or without the figure.
fn handoffs_drift(
    work: &Work,
    threads: usize,
    profile: &Profile,
    plan: &Plan,
) -> Result<Option<Drift>> {
    let kind = work.demands.iter().find_map(|d| match d {
        Demand::Lock { kind, .. } => Some(match kind {
            LockKindName::Mutex => LockKind::Mutex,
            LockKindName::Spin => LockKind::Spin,
        }),
        _ => None,
    });
    match kind {
        Some(kind) => lock_drift(kind, threads, profile, plan),
        None => Ok(None),
    }
}

/// The spread mutexes' throughput on `threads` threads, now against the
/// profile's, the figure the lock model's line migration comes from: the
/// measured section nearer the work's first lock's (`mutex_spread_empty`
/// for a section shorter than half the profile's, when it has that point);
/// none for a variant without locks, on one thread or without the figure.
fn migrations_drift(
    work: &Work,
    threads: usize,
    profile: &Profile,
    plan: &Plan,
) -> Result<Option<Drift>> {
    let section = work.demands.iter().find_map(|d| match d {
        Demand::Lock { critical_s, .. } => Some(*critical_s),
        _ => None,
    });
    let Some(critical_s) = section else {
        return Ok(None);
    };
    let short = profile.sections.lock.as_ref().is_some_and(|l| {
        l.point("mutex_spread_empty", threads).is_some()
            && critical_s < l.measured_critical_s() / 2.0
    });
    let kind = if short {
        LockKind::MutexSpreadEmpty
    } else {
        LockKind::MutexSpread
    };
    lock_drift(kind, threads, profile, plan)
}

/// Lock `kind`'s throughput on `threads` threads now against the
/// profile's (each the median of the benchmark's own rounds, as the lock
/// terms read the profile's), with the
/// profile's critical section and the quick benchmark's 3 ms rounds; none
/// on one thread or without the profile's figure.
fn lock_drift(
    kind: LockKind,
    threads: usize,
    profile: &Profile,
    plan: &Plan,
) -> Result<Option<Drift>> {
    let name = kind.name();
    let profiled = profile
        .sections
        .lock
        .as_ref()
        .and_then(|l| Some((l.op_s(name, threads, HandOff::Typical)?, l)));
    let (Some((op_s, lock)), true) = (profiled, threads > 1) else {
        return Ok(None);
    };
    let steps = lock.critical_steps.unwrap_or(0);
    let cpus = &allowed_cpus()[..threads];
    let now = lock_throughput(kind, threads, cpus, steps, Duration::from_millis(3), plan)?
        .summary()
        .median;
    Ok(Some(Drift {
        what: format!("{name}, {threads} thr"),
        profile: 1.0 / op_s,
        now,
        unit: "op/s",
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::profile::{ComputeCeiling, Provenance};
    use models::Estimate;

    /// A profile with one-thread f64 ceilings in registers and in dgemm.
    fn ceilings() -> Profile {
        let mut p = Profile::new(Provenance::default());
        for (name, kernel, flops) in [
            ("f64 fma", CeilingKernel::Registers, 50e9),
            ("f64 dgemm", CeilingKernel::Dgemm, 30e9),
        ] {
            p.ceilings.push(ComputeCeiling {
                name: name.into(),
                precision: "f64".into(),
                isa: "avx2".into(),
                fma: true,
                threads: 1,
                flops: Estimate::exact(flops),
                kernel,
                states: None,
            });
        }
        p
    }

    #[test]
    fn the_compute_drift_re_measures_the_ceiling_the_work_reads() {
        let team = crate::kernels::team::team(1).unwrap();
        let (p, plan) = (ceilings(), Plan::quick().with_reps(2));
        let flops = |ceiling| Work {
            demands: vec![Demand::Flops {
                flops: 1e9,
                precision: "f64",
                ceiling,
                isa: None,
            }],
        };
        let dgemm = compute_drift(&flops(CeilingKernel::Dgemm), &team, &p, &plan)
            .unwrap()
            .unwrap();
        assert!(dgemm.what.starts_with("f64 dgemm"), "{}", dgemm.what);
        assert_eq!(dgemm.profile, 30e9);
        let peak = compute_drift(&flops(CeilingKernel::Registers), &team, &p, &plan)
            .unwrap()
            .unwrap();
        assert!(!peak.what.contains("dgemm"), "{}", peak.what);
        assert_eq!(peak.profile, 50e9);
        assert!(dgemm.now > 0.0 && peak.now > 0.0);
        // No flops, or no ceiling of that kind: nothing.
        let none = Work { demands: vec![] };
        assert!(compute_drift(&none, &team, &p, &plan).unwrap().is_none());
        let mut registers_only = p.clone();
        registers_only.ceilings.pop();
        let dgemm = compute_drift(&flops(CeilingKernel::Dgemm), &team, &registers_only, &plan);
        assert!(dgemm.unwrap().is_none());
    }
}
