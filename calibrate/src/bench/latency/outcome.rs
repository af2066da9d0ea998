//! What the latency sweep reports: the levels and headline figures, the
//! warnings and notes, the typed section and the human table.

use models::profile::latency::{LatencyPoint, LatencySection};
use models::profile::{FigureTrust, Section};
use models::stats::{Better, Summary as Stats};
use models::units::{binary_bytes, Si};
use models::Estimate;

use super::{best, Sweep, DISTURBED_RATIO, FIRST_BYTES};
use crate::bench::{level, noisy_points_note, noisy_warning, sample, Context, Outcome};
use crate::config::RESIDENT_FACTOR;
use crate::levels::Detection;
use crate::mem::Pages;
use crate::trust::headline;

/// The samples of the reported page policy on the L1 plateau.
fn l1_points(sw: &Sweep, from: f64, to: f64) -> Vec<&Stats> {
    sw.points
        .iter()
        .filter(|p| p.pages == sw.detect_pages)
        .filter(|p| (p.size_bytes as f64) >= from && (p.size_bytes as f64) <= to)
        .map(|p| &p.latency)
        .collect()
}

/// The batch counts of a figure pooled from several samples.
fn pooled_trust(on: &[&Stats]) -> FigureTrust {
    FigureTrust {
        clean_batches: on.iter().map(|s| s.n).sum(),
        disturbed_batches: on.iter().map(|s| s.disturbed).sum(),
        unreliable: None,
    }
}

/// The outcome of a finished sweep.
pub fn outcome(ctx: &Context, sw: &Sweep) -> Outcome {
    let mut out = Outcome::default();
    levels_and_headlines(&mut out, sw);
    warnings(ctx, &mut out, sw);
    let tlb = match (
        sw.point(sw.dram_bytes, Pages::Small),
        sw.point(sw.dram_bytes, Pages::Huge),
    ) {
        (Some(s), Some(h)) => Some(Estimate::new(
            s.latency.median - h.latency.median,
            s.latency.ci_lo - h.latency.ci_hi,
            s.latency.ci_hi - h.latency.ci_lo,
        )),
        _ => None,
    };
    let huge_granted = sw
        .points
        .iter()
        .filter(|p| p.pages == Pages::Huge)
        .map(|p| (p.huge_page_bytes.unwrap_or(0), p.size_bytes))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if huge_granted.1 > 0 {
        out.notes.push(format!(
            "huge pages: the kernel backed {:.0}% of the huge-page chase buffers with 2 MiB pages (THP mode {})",
            100.0 * huge_granted.0 as f64 / huge_granted.1 as f64,
            ctx.sys.thp_mode.as_deref().unwrap_or("unknown")
        ));
    }
    out.notes.extend(compare_with_os(ctx, &sw.detection));
    if !sw.detection.unreported_steps_bytes.is_empty() {
        out.notes.push(format!(
            "the latency curve also steps at {}, where the OS reports no cache ({}): each is taken as part of the next level",
            list_bytes(&sw.detection.unreported_steps_bytes),
            list_bytes(&ctx.sys.data_cache_sizes()),
        ));
    }
    out.section = Some(Section::Latency(section(ctx, sw, tlb)));
    out.table = table(sw, tlb);
    out
}

/// The memory levels' latencies and the summary's L1 and DRAM figures.
fn levels_and_headlines(out: &mut Outcome, sw: &Sweep) {
    let d = &sw.detection;
    for c in &d.caches {
        let mut l = level(&c.name);
        l.size_bytes = c.size_bytes;
        l.latency_s = Some(c.latency_s);
        out.levels.push(l);
    }
    if let Some(p) = sw.point(sw.dram_bytes, sw.detect_pages) {
        let mut l = level("DRAM");
        if p.latency.unreliable.is_none() {
            l.latency_s = Some(p.latency.capability(Better::Lower));
        }
        out.levels.push(l);
        headline(out, "dram_latency_s", &p.latency, best(&p.latency));
        out.warnings
            .extend(noisy_warning("DRAM latency", &p.latency));
    }
    if let Some(l1) = d.caches.first() {
        let on = l1_points(sw, l1.from_bytes, l1.to_bytes);
        match on.iter().find(|s| s.unreliable.is_some()) {
            Some(bad) => headline(out, "l1_latency_s", bad, l1.latency_s.point),
            None => {
                out.summary.l1_latency_s = Some(l1.latency_s.point);
                out.trust.insert("l1_latency_s".into(), pooled_trust(&on));
            }
        }
    }
}

/// Disturbed levels, noisy points, a curve that still rises and a DRAM
/// working set that may be cache-resident.
fn warnings(ctx: &Context, out: &mut Outcome, sw: &Sweep) {
    let d = &sw.detection;
    for p in d.all().filter(|p| p.noisy) {
        out.warnings.push(format!(
            "the {} latency ({}) is more than {DISTURBED_RATIO}× its fastest timings: other work disturbed it; re-run on a quiet machine to trust it",
            p.name,
            Si(p.latency_s.point, "s")
        ));
    }
    out.notes.extend(noisy_points_note(
        "latency curve points",
        sw.points.iter().map(|p| &p.latency),
    ));
    let largest = d.largest_cache().unwrap_or(0.0);
    if d.dram.is_none() {
        out.warnings.push(format!(
            "the latency curve still rises at {}, {}: the DRAM latency may be underestimated",
            binary_bytes(sw.dram_bytes as f64),
            if sw.budget_stop && ctx.config.quick {
                "the largest working set --quick measures (run without it)"
            } else if sw.budget_stop {
                "the largest working set the memory budget allows (raise --max-memory)"
            } else {
                "2 octaves past the DRAM working set"
            }
        ));
    }
    if (sw.dram_bytes as f64) < RESIDENT_FACTOR * largest {
        out.warnings.push(format!(
            "the DRAM latency was measured at {}, less than {RESIDENT_FACTOR}× the largest detected cache ({}): it may be cache-resident",
            binary_bytes(sw.dram_bytes as f64),
            binary_bytes(largest)
        ));
    }
}

/// The section of the sweep.
fn section(ctx: &Context, sw: &Sweep, tlb: Option<Estimate>) -> LatencySection {
    let d = &sw.detection;
    LatencySection {
        line_bytes: Some(ctx.sys.line_bytes as u64),
        detection_pages: Some(sw.detect_pages.label().into()),
        dram_bytes: Some(sw.dram_bytes),
        reached_dram_plateau: Some(d.dram.is_some()),
        clock_hz: ctx.clock.as_ref().map(|c| c.hz),
        points: sw
            .points
            .iter()
            .map(|p| LatencyPoint {
                size_bytes: p.size_bytes,
                pages: p.pages.label().into(),
                huge_page_bytes: p.huge_page_bytes,
                latency_s: sample(&p.latency),
                latency_cycles: ctx.cycles(p.latency.median),
            })
            .collect(),
        levels: d.all().cloned().collect(),
        breakpoints_bytes: d.fit.breakpoints.iter().map(|b| 2f64.powf(*b)).collect(),
        spikes_bytes: d.spikes_bytes.clone(),
        tlb_s: tlb,
    }
}

/// The human table.
fn table(sw: &Sweep, tlb: Option<Estimate>) -> String {
    let n_sizes = sw
        .points
        .iter()
        .filter(|p| p.pages == sw.detect_pages)
        .count();
    let mut t = format!(
        "Latency: pointer chase, {} sizes from {} to {} ({} pages used for level detection)\n",
        n_sizes,
        binary_bytes(FIRST_BYTES as f64),
        binary_bytes(sw.points.iter().map(|p| p.size_bytes).max().unwrap_or(0) as f64),
        sw.detect_pages.label()
    );
    if let (Some(tlb), Some(s), Some(h)) = (
        tlb,
        sw.point(sw.dram_bytes, Pages::Small),
        sw.point(sw.dram_bytes, Pages::Huge),
    ) {
        t += &format!(
            "  TLB part at {}: {:.1} ns ({:.1} ns with 4 KiB pages vs {:.1} ns with 2 MiB pages)\n",
            binary_bytes(sw.dram_bytes as f64),
            tlb.point * 1e9,
            s.latency.median * 1e9,
            h.latency.median * 1e9
        );
    }
    t
}

/// Sizes as "32 KiB, 1 MiB".
fn list_bytes(sizes: &[f64]) -> String {
    let sizes: Vec<String> = sizes.iter().map(|&b| binary_bytes(b).to_string()).collect();
    sizes.join(", ")
}

/// Notes on OS-reported data caches that the curve does not show at a
/// similar size (within a factor 2).
fn compare_with_os(ctx: &Context, d: &Detection) -> Vec<String> {
    let detected: Vec<f64> = d.caches.iter().filter_map(|c| c.size_bytes).collect();
    ctx.sys
        .data_caches()
        .into_iter()
        .filter(|c| {
            let s = c.reported.size_bytes as f64;
            !detected.iter().any(|&x| x / s < 2.0 && s / x < 2.0)
        })
        .map(|c| {
            format!(
                "the OS reports a {} L{} cache that the latency curve does not show at that size; working sets are sized from the detected levels",
                binary_bytes(c.reported.size_bytes as f64),
                c.reported.level
            )
        })
        .collect()
}
