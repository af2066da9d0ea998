//! The `span` figures of the `flops` section: iterations with a chain
//! inside, at each measured depth and on each instruction set
//! ([`crate::kernels::span`], `models::profile::flops::SpanPoint`).

use std::sync::Mutex;

use anyhow::Result;
use models::profile::flops::SpanPoint;
use models::stats::{Better, Summary};
use models::units::Si;

use super::super::{noisy_warning, sample, Context, Outcome};
use crate::kernels::span::{self, DEPTHS, ELEMENTS};
use crate::kernels::Isa;
use crate::pin::Team;
use crate::timer::{measure, Plan};

/// Seconds per element of `y = p(x)` at every depth of [`DEPTHS`] on every
/// instruction set the CPU runs, on one pinned thread in L1, with a note
/// per set.
pub(super) fn figures(ctx: &Context, out: &mut Outcome) -> Result<Vec<SpanPoint>> {
    let mut points = Vec::new();
    for isa in Isa::available() {
        let mut curve = Vec::new();
        for depth in DEPTHS {
            let s = measure_span(&ctx.one, isa, depth, &ctx.config.plan)?;
            out.warnings.extend(noisy_warning(
                &format!("the {isa} span at depth {depth}"),
                &s,
            ));
            curve.push((depth, s.capability(Better::Lower).point));
            points.push(SpanPoint {
                isa: isa.name().into(),
                depth: depth as u64,
                element: sample(&s),
            });
        }
        out.notes.push(note(isa, &curve));
    }
    Ok(points)
}

/// Seconds per element of `y = p(x)` `depth` steps deep on `isa`, on the
/// one thread of `one`, over [`ELEMENTS`] elements in L1.
pub fn measure_span(one: &Team, isa: Isa, depth: usize, plan: &Plan) -> Result<Summary> {
    let state = [Mutex::new((
        (0..ELEMENTS)
            .map(|i| 0.25 + i as f64 / (2 * ELEMENTS) as f64)
            .collect::<Vec<f64>>(),
        vec![0.0; ELEMENTS],
    ))];
    let m = measure(plan, |inner, count| {
        one.time_batch(&state, inner, count, |(x, y), sweeps| {
            span::run(isa, depth, x, y, sweeps);
        })
    })?;
    Ok(m.per_unit.map(|t| t / ELEMENTS as f64)?.summary())
}

/// "avx2 iterations with a chain inside, …: 198 ps at 4, 369 ps at 8, …".
fn note(isa: Isa, curve: &[(usize, f64)]) -> String {
    let per_depth: Vec<String> = curve
        .iter()
        .map(|&(d, t)| format!("{} at {d}", Si(t, "s")))
        .collect();
    format!(
        "{isa} iterations with a chain inside, seconds per element by the chain's depth: {}",
        per_depth.join(", ")
    )
}
