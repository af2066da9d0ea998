//! Peak FLOP/s: the Roofline's compute ceilings (lecture §4.4).
//!
//! Every kernel of [`crate::kernels::fma`] the CPU can run — FMA for each
//! instruction-set level (scalar, AVX2, AVX-512) in f64 and f32, and the
//! separate multiply/add kernel for the widest SIMD — on one pinned thread
//! and on all threads at once:
//!
//! FLOP/s = FLOP_per_iteration × iterations × threads / t,
//!
//! t being the time until the last thread finishes. Below these peaks, the
//! dgemm ceiling is the rate of a packed, register-blocked matrix multiply
//! ([`crate::kernels::dgemm`]) on each thread's own cache-resident
//! 128×128 matrices: what dense linear algebra attains with its loads,
//! broadcasts and packing, which `predict` uses for its matmul. It is timed
//! in bursts spread over the run ([`super::bursts`]: one before every
//! benchmark ahead of this one, which runs last, one after each register
//! kernel, and its own at the end), pooled, and read as the other
//! ceilings are, at the high quantile of its timings; when the bursts'
//! own figures are two states apart, the ceiling keeps both and a note
//! names them (module `dgemm`). A figure above 8 FLOP per lane per cycle
//! per thread (four pipes doing FMAs, more than any x86 core has) is
//! flagged as above the physical bound: it would mean a wrong clock or a
//! broken timer.
//!
//! # Section `flops`
//!
//! ```json
//! { "kernels": [ { "name": "f64 avx2 fma", "precision": "f64", "isa": "avx2", "op": "fma",
//!                  "threads": 2, "accumulators": 12, "flops_per_iteration": 96,
//!                  "flops": {"median": .., "ci_lo": .., "ci_hi": .., "cv": .., ...},
//!                  "flops_per_cycle_per_thread": 16.0 }, ...,
//!                { "name": "f64 dgemm", "op": "dgemm", "matrix_side": 128, ... } ],
//!   "chain": { "add": {"median": .., ...}, "fma": {"median": .., ...} },
//!   "chain_overlap": [ { "per_thread_bytes": .., "sum_s": .., "chain_s": .., "load_s": ..,
//!                        "overlap": .. }, ... ] }
//! ```
//!
//! `chain` and `chain_overlap` are the loop-carried chains' figures
//! (module `chains`), `span` the chains within iterations' (module `span`).

use std::sync::Mutex;

use anyhow::Result;
use models::profile::flops::{FlopsKernel, FlopsSection};
use models::profile::{CeilingKernel, ComputeCeiling, Section};
use models::units::Si;

use models::stats::{Better, Sample, Summary as Stats};

use super::{noisy_points_note, noisy_warning, sample, Bench, Context, Outcome};
use crate::kernels::fma::{FlopKernel, Op, Precision};
use crate::kernels::Isa;
use crate::pin::Team;
use crate::timer::{measure, Plan};
use crate::trust::{headline, peak_order, withdraw};

mod chains;
mod dgemm;
pub mod span;

pub use dgemm::{dgemm_burst, measure_dgemm};
use dgemm::{dgemm_ceiling, dgemm_rates};

/// FLOP per lane per cycle per thread above which a figure is impossible.
pub const MAX_FLOP_PER_LANE_CYCLE: f64 = 8.0;

/// The peak FLOP/s benchmark.
pub struct Flops;

/// The kernels measured on this CPU: FMA per level and precision, and
/// multiply/add on the widest level.
pub fn kernels() -> Vec<FlopKernel> {
    let isas = Isa::available();
    let mut v = Vec::new();
    for &isa in &isas {
        for precision in [Precision::F64, Precision::F32] {
            v.push(FlopKernel {
                precision,
                isa,
                op: Op::Fma,
            });
        }
    }
    for precision in [Precision::F64, Precision::F32] {
        v.push(FlopKernel {
            precision,
            isa: isas[0],
            op: Op::MulAdd,
        });
    }
    v.retain(|k| k.available());
    v
}

/// FLOP/s of `k` on every thread of `team`: a summary of the per-timing rates.
pub fn measure_flops(team: &Team, k: FlopKernel, plan: &Plan) -> Result<models::stats::Summary> {
    let sinks = team.each(|_| Mutex::new(0.0));
    let rates = flop_rate(
        team,
        plan,
        &sinks,
        k.flops_per_iteration(),
        |sink, iters| *sink += k.run(iters),
    )?;
    Ok(rates.summary())
}

/// The per-timing FLOP/s of `work(state, units)` on all threads at once,
/// each unit doing `flops_per_unit` on each thread.
fn flop_rate<S: Send>(
    team: &Team,
    plan: &Plan,
    states: &[Mutex<S>],
    flops_per_unit: f64,
    work: impl Fn(&mut S, u64) + Sync,
) -> Result<Sample> {
    let m = measure(plan, |inner, count| {
        team.time_batch(states, inner, count, &work)
    })?;
    let per_unit = flops_per_unit * team.threads() as f64;
    // Seconds per unit -> FLOP/s (a rate: its capability is the high quantile).
    Ok(m.per_unit.map(|s| per_unit / s)?)
}

impl Bench for Flops {
    fn name(&self) -> &'static str {
        "flops"
    }

    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let ks = kernels();
        let teams = ctx.teams();
        let bar = ctx
            .progress
            .bar("flops", ((ks.len() + 1) * teams.len()) as u64);
        let mut out = Outcome::default();
        let mut rows = Vec::new();
        let headline = ks
            .iter()
            .copied()
            .find(|k| k.precision == Precision::F64)
            .expect("an f64 kernel");
        let mut others = Vec::new();
        let mut f64s: Vec<(FlopKernel, usize, Stats)> = Vec::new();
        for team in &teams {
            let threads = team.threads();
            let mut dgemm_bursts = ctx.bursts.dgemm(threads);
            for &k in &ks {
                bar.set_message(k.label());
                let s = measure_flops(team, k, &ctx.config.plan)?;
                dgemm_bursts.push(dgemm_burst(ctx, team)?);
                bar.inc(1);
                out.warnings.extend(bound_warning(ctx, k, threads, &s));
                if k == headline {
                    out.warnings.extend(noisy_warning(
                        &format!("peak {} FLOP/s on {threads} thread(s)", k.label()),
                        &s,
                    ));
                } else {
                    others.push(s.clone());
                }
                push_ceiling(
                    &mut out,
                    k.label(),
                    k,
                    threads,
                    &s,
                    CeilingKernel::Registers,
                );
                rows.push(kernel_row(ctx, k, threads, &s));
                if k.precision == Precision::F64 {
                    f64s.push((k, threads, s));
                }
            }
            bar.set_message("f64 dgemm");
            dgemm_bursts.push(dgemm_rates(team, &ctx.config.plan)?);
            others.push(dgemm_ceiling(
                ctx,
                team,
                &mut out,
                &mut rows,
                &dgemm_bursts,
            )?);
            bar.inc(1);
        }
        bar.finish_and_clear();
        out.notes
            .extend(noisy_points_note("other FLOP/s figures", &others));
        out.ceilings
            .sort_by(|a, b| b.flops.point.total_cmp(&a.flops.point));
        out.warnings.extend(precision_warnings(&out.ceilings));
        set_peaks(ctx, &mut out, &mut f64s)?;
        let (chain, chain_overlap) = chains::figures(ctx, &mut out)?;
        let (span, span_loads) = span::figures(ctx, &mut out)?;
        out.section = Some(Section::Flops(FlopsSection {
            kernels: rows,
            chain,
            chain_overlap,
            span,
            span_loads,
        }));
        let best = best_f64(&f64s, ctx.all.threads()).map(|(k, _, _)| *k);
        out.table = match (out.summary.peak_flops_f64, ctx.cycles(1.0), best) {
            (Some(p), Some(hz), Some(k)) => format!(
                "Peak FLOP/s: independent chains of {} ({} accumulators per core); f64 peak {} = {:.1} FLOP/cycle/thread",
                k.label(),
                k.accumulators(),
                Si(p, "FLOP/s"),
                p / hz / ctx.all.threads() as f64
            ),
            _ => String::new(),
        };
        Ok(out)
    }
}

/// The capability estimate of a FLOP/s sample (its high quantile).
fn peak(s: &Stats) -> f64 {
    s.capability(Better::Higher).point
}

/// The warning for a figure above the physical bound, if it is.
fn bound_warning(ctx: &Context, k: FlopKernel, threads: usize, s: &Stats) -> Option<String> {
    let pc = ctx.cycles(1.0).map(|hz| peak(s) / hz / threads as f64)?;
    let lanes = k.isa.lanes(k.precision) as f64;
    (pc > MAX_FLOP_PER_LANE_CYCLE * lanes).then(|| format!(
        "{} on {threads} thread(s) gives {pc:.1} FLOP per cycle per thread, above the physical bound of {} ({MAX_FLOP_PER_LANE_CYCLE} per lane): check the clock",
        k.label(),
        MAX_FLOP_PER_LANE_CYCLE * lanes
    ))
}

/// Adds the ceiling of `s` unless its sample is unreliable (then it stays
/// in the section only), and returns it.
fn push_ceiling<'a>(
    out: &'a mut Outcome,
    name: String,
    k: FlopKernel,
    threads: usize,
    s: &Stats,
    kernel: CeilingKernel,
) -> Option<&'a mut ComputeCeiling> {
    if s.unreliable.is_some() {
        out.notes.push(format!(
            "the {name} ceiling on {threads} thread(s) is left out: too few clean batches"
        ));
        return None;
    }
    out.ceilings.push(ComputeCeiling {
        name,
        precision: k.precision.name().into(),
        isa: k.isa.name().into(),
        fma: k.op == Op::Fma,
        threads,
        flops: s.capability(Better::Higher),
        kernel,
        states: None,
    });
    out.ceilings.last_mut()
}

/// A kernel's row in the section.
fn kernel_row(ctx: &Context, k: FlopKernel, threads: usize, s: &Stats) -> FlopsKernel {
    FlopsKernel {
        name: k.label(),
        precision: k.precision.name().into(),
        isa: k.isa.name().into(),
        op: match k.op {
            Op::Fma => "fma",
            Op::MulAdd => "muladd",
        }
        .into(),
        threads,
        accumulators: Some(k.accumulators()),
        flops_per_iteration: Some(k.flops_per_iteration()),
        matrix_side: None,
        flops: sample(s),
        flops_per_cycle_per_thread: ctx.cycles(1.0).map(|hz| peak(s) / hz / threads as f64),
    }
}

/// The f64 peaks of the summary: on each thread count, the best reliable
/// register kernel (or, when none is, the unreliable one's reason). An
/// all-thread peak below the one-thread one, or below what its separate
/// cores must add, is measured once more, then withdrawn if it still is
/// ([`crate::trust::peak_order`]).
fn set_peaks(
    ctx: &Context,
    out: &mut Outcome,
    f64s: &mut [(FlopKernel, usize, Stats)],
) -> Result<()> {
    let all = ctx.all.threads();
    for (key, threads) in [("peak_flops_f64_1t", 1), ("peak_flops_f64", all)] {
        if let Some((_, _, s)) = best_f64(f64s, threads) {
            headline(out, key, s, peak(s));
        }
    }
    if all == 1 {
        return Ok(());
    }
    let (Some(one), Some(mut top)) = (out.summary.peak_flops_f64_1t, out.summary.peak_flops_f64)
    else {
        return Ok(());
    };
    let cpus: Vec<usize> = ctx.config.cpus.iter().map(|c| c.id).collect();
    let cores = all / ctx.sys.sharing(1, &cpus);
    if peak_order(one, top, all, cores).is_some() {
        if let Some(i) = f64s
            .iter()
            .position(|(_, t, s)| *t == all && peak(s) == top)
        {
            let s = measure_flops(&ctx.all, f64s[i].0, &ctx.config.plan)?;
            if s.unreliable.is_none() && peak(&s) > top {
                top = peak(&s);
                headline(out, "peak_flops_f64", &s, top);
                f64s[i].2 = s;
            }
        }
    }
    if let Some(why) = peak_order(one, top, all, cores) {
        withdraw(out, "peak_flops_f64", why);
    }
    Ok(())
}

/// The f64 register kernel with the highest reliable peak on `threads`
/// threads, else any (unreliable) one.
fn best_f64(
    f64s: &[(FlopKernel, usize, Stats)],
    threads: usize,
) -> Option<&(FlopKernel, usize, Stats)> {
    let on = || f64s.iter().filter(move |(_, t, _)| *t == threads);
    on().filter(|(_, _, s)| s.unreliable.is_none())
        .max_by(|a, b| peak(&a.2).total_cmp(&peak(&b.2)))
        .or_else(|| on().next())
}

/// Below this ratio of f64 to f32 FMA throughput (0.5 on every SIMD unit,
/// which has half as many f64 lanes) a kernel is taken to be miscompiled.
const MIN_F64_TO_F32: f64 = 0.4;

/// A warning for each SIMD FMA kernel whose f64 rate is well below half its
/// f32 rate at the same width and thread count: the sign of a compiler that
/// spilled an accumulator, which makes the "peak" a latency figure.
fn precision_warnings(ceilings: &[ComputeCeiling]) -> Vec<String> {
    let fma =
        |c: &&ComputeCeiling| c.fma && c.kernel == CeilingKernel::Registers && c.isa != "scalar";
    ceilings
        .iter()
        .filter(fma)
        .filter(|c| c.precision == "f64")
        .filter_map(|d| {
            let s = ceilings.iter().filter(fma).find(|s| {
                s.precision == "f32" && s.isa == d.isa && s.threads == d.threads
            })?;
            let ratio = d.flops.point / s.flops.point;
            (ratio < MIN_F64_TO_F32).then(|| {
                format!(
                    "{} on {} thread(s) runs at {ratio:.2}× its f32 rate (0.5× expected): the kernel may be miscompiled, and the f64 peak too low",
                    d.name, d.threads
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_list_covers_the_widest_isa() {
        let ks = kernels();
        let widest = Isa::detect();
        assert!(
            ks.iter()
                .any(|k| k.isa == widest && k.op == Op::Fma && k.precision == Precision::F64)
                || !Isa::scalar_fma()
        );
        assert!(ks.iter().any(|k| k.op == Op::MulAdd));
        assert!(ks.iter().all(|k| k.available()));
    }

    #[test]
    fn a_slow_f64_kernel_is_flagged() {
        let c = |precision: &str, isa: &str, flops: f64| ComputeCeiling {
            name: format!("{precision} {isa} fma"),
            precision: precision.into(),
            isa: isa.into(),
            fma: true,
            threads: 1,
            flops: models::Estimate::exact(flops),
            kernel: CeilingKernel::Registers,
            states: None,
        };
        // AVX-512 f64 at 0.23× its f32 rate; AVX2 at the expected 0.5×.
        let w = precision_warnings(&[
            c("f64", "avx512", 50e9),
            c("f32", "avx512", 220e9),
            c("f64", "avx2", 57e9),
            c("f32", "avx2", 114e9),
        ]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("f64 avx512 fma on 1 thread(s) runs at 0.23×"));
    }
}
