//! The `span` figures of the `flops` section: iterations with a chain
//! inside, at each measured depth and on each instruction set
//! ([`crate::kernels::span`], `models::profile::flops::SpanPoint`).

use std::sync::Mutex;

use anyhow::Result;
use models::profile::flops::{SpanLoads, SpanPoint};
use models::stats::{Better, Summary};
use models::units::Si;

use super::super::stream::pairs::over_pairs;
use super::super::{noisy_warning, sample, Context, Outcome};
use crate::kernels::span::{self, COEFFICIENTS, DEPTHS, ELEMENTS, LOADED, LOADED_DEPTH};
use crate::kernels::Isa;
use crate::pin::Team;
use crate::timer::{measure, Plan};

/// Seconds per element of `y = p(x)` at every depth of [`DEPTHS`] on every
/// instruction set the CPU runs, in L1 on one pinned thread and on all of
/// them at once, with a note per set and team; and on each vector set what
/// a load costs beside the chains ([`span_loads`]).
pub(super) fn figures(
    ctx: &Context,
    out: &mut Outcome,
) -> Result<(Vec<SpanPoint>, Vec<SpanLoads>)> {
    let teams = ctx.teams();
    let mut points = Vec::new();
    let mut loads = Vec::new();
    for team in teams {
        let threads = team.threads();
        for isa in Isa::available() {
            if isa != Isa::Scalar {
                let l = span_loads(team, isa, &ctx.config.plan)?;
                out.notes.push(format!(
                    "{isa} loads beside a chain of FMAs in L1, {threads} thread(s): {} per byte ({}–{}; {} bytes at the L1 load kernel's rate would be all of them)",
                    Si(l.per_byte_s.point, "s"),
                    Si(l.per_byte_s.lo, "s"),
                    Si(l.per_byte_s.hi, "s"),
                    8 * l.loads_per_element
                ));
                loads.push(l);
            }
            let mut curve = Vec::new();
            for depth in DEPTHS {
                let s = measure_span(team, isa, depth, &ctx.config.plan)?;
                out.warnings.extend(noisy_warning(
                    &format!("the {isa} span at depth {depth} on {threads} thread(s)"),
                    &s,
                ));
                curve.push((depth, s.capability(Better::Lower).point));
                points.push(SpanPoint {
                    isa: isa.name().into(),
                    threads,
                    depth: depth as u64,
                    element: sample(&s),
                });
            }
            out.notes.push(note(isa, threads, &curve));
        }
    }
    Ok((points, loads))
}

/// The Horner loop at [`LOADED_DEPTH`] with its coefficients loaded
/// ([`span::run_loaded`]) against the plain loop at that depth, in
/// pairs right after each other ([`over_pairs`]) on each thread of `team`
/// at once: seconds per loaded byte (`SpanLoads`).
fn span_loads(team: &Team, isa: Isa, plan: &Plan) -> Result<SpanLoads> {
    let state: Vec<_> = (0..team.threads())
        .map(|_| {
            Mutex::new((
                span::inputs(),
                (0..COEFFICIENTS)
                    .map(|i| 0.5 + i as f64 / (4 * COEFFICIENTS) as f64)
                    .collect::<Vec<f64>>(),
                vec![0.0; ELEMENTS],
            ))
        })
        .collect();
    let loaded = || -> Result<f64> {
        let m = measure(plan, |inner, count| {
            team.time_batch(&state, inner, count, |(x, c, y), sweeps| {
                span::run_loaded(isa, x, c, y, sweeps);
            })
        })?;
        Ok(m.per_unit.summary().capability(Better::Lower).point / ELEMENTS as f64)
    };
    let bytes = (8 * LOADED) as f64;
    let per_byte_s = over_pairs(|| {
        let plain = measure_span(team, isa, LOADED_DEPTH, plan)?.capability(Better::Lower);
        Ok(((loaded()? - plain.point) / bytes).max(0.0))
    })?;
    Ok(SpanLoads {
        isa: isa.name().into(),
        threads: team.threads(),
        depth: LOADED_DEPTH as u64,
        loads_per_element: LOADED as u64,
        per_byte_s,
    })
}

/// Seconds per element of one thread of `y = p(x)` `depth` steps deep on
/// `isa`, on each thread of `team` at once, over [`ELEMENTS`] elements in
/// L1 each.
pub fn measure_span(team: &Team, isa: Isa, depth: usize, plan: &Plan) -> Result<Summary> {
    let state: Vec<_> = (0..team.threads())
        .map(|_| Mutex::new((span::inputs(), vec![0.0; ELEMENTS])))
        .collect();
    let m = measure(plan, |inner, count| {
        team.time_batch(&state, inner, count, |(x, y), sweeps| {
            span::run(isa, depth, x, y, sweeps);
        })
    })?;
    Ok(m.per_unit.map(|t| t / ELEMENTS as f64)?.summary())
}

/// "avx2 iterations with a chain inside, 1 thread(s), …: 198 ps at 4, …".
fn note(isa: Isa, threads: usize, curve: &[(usize, f64)]) -> String {
    let per_depth: Vec<String> = curve
        .iter()
        .map(|&(d, t)| format!("{} at {d}", Si(t, "s")))
        .collect();
    format!(
        "{isa} iterations with a chain inside, {threads} thread(s), seconds per element by the chain's depth: {}",
        per_depth.join(", ")
    )
}
