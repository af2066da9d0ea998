//! The ghost-stencil run as rank 0 prints it.

use std::fmt::Write as _;

use models::units::Si;

use super::report::{Context, Speedup};
use crate::mpi_stencil::driver::VariantRun;
use crate::record::Record;
use crate::run::report::states_flags;

/// The header, a row per variant, the speed-ups, the checksums and the
/// notes.
pub(super) fn table(
    ctx: &Context,
    runs: &[VariantRun],
    records: &[Record],
    speedups: &[Speedup],
) -> String {
    let mut s = header(ctx, runs);
    let _ = writeln!(
        s,
        "  {:<12} {:<6} {:<34} {:<12} {:>8} {:>8}  binding",
        "variant", "grid", "measured/sweep [95% CI]", "predicted", "error", "paired"
    );
    for (run, r) in runs.iter().zip(records) {
        s += &row(run, r);
    }
    for (v, m, ci, model) in speedups {
        let model = model.map_or("no model".to_string(), |x| format!("model {x:.2}x"));
        let _ = writeln!(
            s,
            "  speed-up {} over blocking: measured {m:.2}x [{:.2}, {:.2}], {model}",
            v.name(),
            ci[0],
            ci[1]
        );
    }
    s += &checksums(runs);
    s += &notes(records, ctx.absent_note.as_deref());
    s
}

/// What ran where, and the profile (or why there is none).
fn header(ctx: &Context, runs: &[VariantRun]) -> String {
    let cfg = &ctx.checked.cfg;
    let mut s = String::new();
    let iters = runs.first().map_or(cfg.iters, |r| r.iterations);
    let _ = writeln!(
        s,
        "ghost-row Jacobi stencil (lecture §3.1): N = {}, f64, {} rank(s) on {} host(s) (up to {} per host), {iters} sweeps (first {} not timed), residual every {}",
        cfg.n,
        ctx.p,
        ctx.hosts.len(),
        ctx.ranks_per_host,
        runs.first().map_or(0, |r| r.warmup),
        cfg.check_every
    );
    let w = &ctx.warm;
    let _ = writeln!(
        s,
        "warm-up: {} sweeps of the {} variant in {:.2} s, {} each at the end",
        w.sweeps,
        ctx.checked.variants[0].name(),
        w.elapsed.as_secs_f64(),
        Si(w.sweep_s, "s")
    );
    match (&ctx.profile_path, &ctx.absent_note) {
        (Some(path), _) => {
            let _ = writeln!(s, "profile: {path}");
        }
        (None, Some(note)) => {
            let _ = writeln!(s, "{note}");
        }
        _ => {}
    }
    s
}

/// One variant's line: measured, predicted, the error of the prediction
/// and of the paired one, binding, and whether the machine changed.
fn row(run: &VariantRun, r: &Record) -> String {
    let measured = format!(
        "{} [{}, {}]{}",
        Si(r.measured_s, "s"),
        Si(r.measured_ci_s[0], "s"),
        Si(r.measured_ci_s[1], "s"),
        if r.noisy { " ~" } else { "" }
    );
    let predicted = r
        .predicted_s
        .map_or("-".to_string(), |t| Si(t, "s").to_string());
    let error = |e: Option<f64>| e.map_or("-".to_string(), |e| format!("{:+.1}%", 100.0 * e));
    let paired = r
        .extra
        .get("paired_rel_error")
        .and_then(serde_json::Value::as_f64);
    let changed = if r.extra.get("machine_changed") == Some(&serde_json::Value::Bool(true)) {
        " (machine changed)"
    } else {
        ""
    };
    format!(
        "  {:<12} {:<6} {:<34} {:<12} {:>8} {:>8}  {}{}{changed}\n",
        run.variant.name(),
        run.grid.to_string(),
        measured,
        predicted,
        error(r.rel_error),
        error(paired),
        r.binding.as_deref().unwrap_or("-"),
        states_flags(r),
    )
}

/// Whether the variants' checksums agree and match the serial reference.
fn checksums(runs: &[VariantRun]) -> String {
    let sums: Vec<u64> = runs.iter().map(|r| r.checksum).collect();
    let agree = sums.windows(2).all(|w| w[0] == w[1]);
    let verified: Vec<Option<bool>> = runs.iter().map(|r| r.verified).collect();
    format!(
        "  checksum {:#018x}{}; {}\n",
        sums.first().copied().unwrap_or(0),
        if runs.len() > 1 {
            if agree {
                " (all variants agree)"
            } else {
                " (VARIANTS DISAGREE)"
            }
        } else {
            ""
        },
        if verified.iter().all(Option::is_none) {
            "not compared with the serial reference (add --verify)"
        } else if verified.iter().all(|v| *v == Some(true)) {
            "equal to the serial reference bit for bit"
        } else {
            "DIFFERENT FROM THE SERIAL REFERENCE"
        }
    )
}

/// Why predictions are missing, the model's notes and the runs' caveats,
/// each once (a caveat of one variant only names it).
fn notes(records: &[Record], absent_note: Option<&str>) -> String {
    let mut s = String::new();
    let mut said = Vec::new();
    for r in records {
        if let Some(v) = &r.no_prediction {
            if !said.contains(v) && absent_note.is_none() {
                let _ = writeln!(s, "  {v}");
                said.push(v.clone());
            }
        }
        if let Some(notes) = r.extra.get("model").and_then(|m| m["notes"].as_array()) {
            for note in notes.iter().filter_map(|n| n.as_str()) {
                if !said.contains(&note.to_string()) {
                    let _ = writeln!(s, "  note: {note}");
                    said.push(note.to_string());
                }
            }
        }
        for note in &r.provenance.notes {
            if !said.contains(note) && absent_note != Some(note.as_str()) {
                let everywhere = records.iter().all(|o| o.provenance.notes.contains(note));
                if everywhere {
                    let _ = writeln!(s, "  note: {note}");
                } else {
                    let _ = writeln!(s, "  note ({}): {note}", r.variant);
                }
                said.push(note.clone());
            }
        }
    }
    s
}
