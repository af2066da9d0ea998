//! What the STREAM sweep reports: the headline and level bandwidths, the
//! warnings, the typed section and the human table.

use models::profile::lock::two_states;
use models::profile::stream::{
    by_placement, BytesPerElem, StreamLevel, StreamRestart, StreamSection, StreamSweep,
};
use models::stats::median;
use models::units::{binary_bytes, Si};

use super::plateaus::Plateau;
use super::windows::Windows;
use super::{KernelPoint, MAX_VECTORS_PER_CYCLE};
use crate::bench::{level, noisy_warning, Context, Outcome};
use crate::kernels::stream::Kernel;
use crate::kernels::Isa;
use crate::mem::Pages;
use crate::pin::Team;
use crate::trust::headline;

/// The summary's triad figures from the DRAM points, and their noise
/// warnings.
pub(super) fn dram_headlines(ctx: &Context, out: &mut Outcome, dram: &[&KernelPoint]) {
    for (key, threads) in [
        ("stream_triad_1t_Bps", 1),
        ("stream_triad_Bps", ctx.all.threads()),
    ] {
        if let Some(p) = dram_of(dram, threads, Kernel::Triad) {
            headline(out, key, &p.bandwidth, p.best());
        }
    }
    for p in dram.iter().filter(|p| p.kernel == Kernel::Triad) {
        let name = format!("STREAM triad (DRAM, {} thread(s))", p.threads);
        out.warnings.extend(noisy_warning(&name, &p.bandwidth));
        let e = p.estimate();
        if p.bursts.len() > 1 && two_states(e.lo, e.hi) {
            let n = p.bursts.len();
            out.notes.push(match by_placement(&p.bursts, &p.burst_lines) {
                Some((near, far)) => format!(
                    "{name}: of its {n} bursts, {} ran with the threads near each other (by the line probes beside them), at {} (median), and {} with them apart, at {}: the host moved the threads during the sweep; the figure is the median burst of the placement more bursts saw, {}",
                    near.len(),
                    Si(median(near.clone()), "B/s"),
                    far.len(),
                    Si(median(far.clone()), "B/s"),
                    Si(e.point, "B/s")
                ),
                None => format!(
                    "{name}: its {n} bursts read {} to {}: the host's memory changed state during the sweep; the figure is the median burst, {}",
                    Si(e.lo, "B/s"),
                    Si(e.hi, "B/s"),
                    Si(e.point, "B/s")
                ),
            });
        }
    }
}

/// The DRAM point of kernel `k` on `threads` threads.
fn dram_of<'a>(dram: &[&'a KernelPoint], threads: usize, k: Kernel) -> Option<&'a KernelPoint> {
    dram.iter()
        .find(|p| p.threads == threads && p.kernel == k)
        .copied()
}

/// The memory levels' read bandwidths: each cache from its plateaus, DRAM
/// from its load points; a level faster than the nearer one is warned of.
pub(super) fn memory_levels(
    ctx: &Context,
    out: &mut Outcome,
    caches: &[(String, f64)],
    levels: &[Plateau],
    dram: &[&KernelPoint],
) {
    for (name, size) in caches {
        let mut l = level(name);
        l.size_bytes = Some(*size);
        for p in levels.iter().filter(|p| &p.name == name && p.isa.is_none()) {
            if p.threads == 1 {
                l.bandwidth_1t_Bps = Some(p.bandwidth);
            }
            if p.threads == ctx.all.threads() {
                l.bandwidth_Bps = Some(p.bandwidth);
            }
        }
        out.levels.push(l);
    }
    let mut d = level("DRAM");
    let cap = |p: &KernelPoint| (p.bandwidth.unreliable.is_none()).then(|| p.estimate());
    d.bandwidth_1t_Bps = dram_of(dram, 1, Kernel::Load).and_then(cap);
    d.bandwidth_Bps = dram_of(dram, ctx.all.threads(), Kernel::Load).and_then(cap);
    out.levels.push(d);
    let mut prev_bw: Option<(String, f64)> = None;
    for l in &out.levels {
        if let (Some((pn, pb)), Some(b)) = (&prev_bw, l.bandwidth_1t_Bps) {
            if b.point > 1.1 * pb {
                out.warnings.push(format!(
                    "the {} read bandwidth ({}) is above the nearer {}'s ({}): a plateau may be mis-sized",
                    l.name,
                    Si(b.point, "B/s"),
                    pn,
                    Si(*pb, "B/s")
                ));
            }
        }
        if let Some(b) = l.bandwidth_1t_Bps {
            prev_bw = Some((l.name.clone(), b.point));
        }
    }
}

/// Each team's sweep as the section stores it (a team without points
/// is left out).
pub(super) fn sweep_records(sweeps: &[Vec<KernelPoint>], teams: &[&Team]) -> Vec<StreamSweep> {
    sweeps
        .iter()
        .zip(teams)
        .filter(|(s, _)| !s.is_empty())
        .map(|(s, t)| StreamSweep {
            threads: t.threads(),
            points: s.iter().map(|p| p.record(None)).collect(),
        })
        .collect()
}

/// The section of the run.
pub(super) fn section(
    dram_total: u64,
    sweeps: &[Vec<KernelPoint>],
    teams: &[&Team],
    levels: &[Plateau],
    dram: &[&KernelPoint],
    restarts: Vec<StreamRestart>,
    windows: Windows,
) -> StreamSection {
    StreamSection {
        isa: Isa::detect().name().into(),
        pages: Some(Pages::Huge.label().into()),
        non_temporal_stores: Some(false),
        bytes_per_elem: Kernel::ALL
            .iter()
            .map(|k| {
                let b = BytesPerElem {
                    stream: k.bytes_per_elem(),
                    write_allocate: k.bytes_per_elem_write_allocate(),
                    load: Some(8.0 * k.loaded_arrays() as f64),
                    store: Some(8.0 * k.stored_arrays() as f64),
                    allocate: Some(k.allocate_bytes_per_elem()),
                };
                (k.name().to_string(), b)
            })
            .collect(),
        dram_bytes: Some(dram_total),
        sweeps: sweep_records(sweeps, teams),
        levels: levels
            .iter()
            .map(|p| StreamLevel {
                name: p.name.clone(),
                threads: p.threads,
                from_bytes: p.from,
                to_bytes: p.to,
                points: p.points.clone(),
                read_bandwidth_Bps: p.bandwidth,
                isa: p.isa.map(|i| i.name().into()),
            })
            .collect(),
        dram: dram.iter().map(|p| p.record(Some(p.threads))).collect(),
        restarts,
        windows: windows.curve,
        knee: windows.knee,
        l1_rereads: windows.l1_rereads,
        // The 4 KiB-page sweeps are the caller's to add.
        base_pages: Vec::new(),
    }
}

/// Points whose bandwidth is above what the machine can do: the FLOP rate
/// it implies above the measured peak (of the profile an `--only stream`
/// run updates: a whole run measures the peaks after the bandwidths), or
/// more than [`MAX_VECTORS_PER_CYCLE`] vectors per cycle per thread.
pub(super) fn bound_warnings(ctx: &Context, sweeps: &[Vec<KernelPoint>]) -> Vec<String> {
    let mut w = Vec::new();
    let vector = Isa::detect().vector_bytes() as f64;
    for p in sweeps.iter().flatten() {
        let bw = p.best();
        let peak = ctx
            .known
            .ceilings
            .iter()
            .filter(|c| c.precision == "f64" && c.threads == p.threads)
            .map(|c| c.flops.point)
            .reduce(f64::max);
        let implied = bw / p.kernel.bytes_per_elem() * p.kernel.flops_per_elem();
        let what = format!(
            "{} on {} thread(s) at {} per thread ({})",
            p.kernel.name(),
            p.threads,
            binary_bytes(p.per_thread_bytes as f64),
            Si(bw, "B/s")
        );
        if let Some(peak) = peak.filter(|&pk| implied > pk) {
            w.push(format!(
                "{what} implies {} above the measured peak {}: above a physical bound",
                Si(implied, "FLOP/s"),
                Si(peak, "FLOP/s")
            ));
        }
        if let Some(hz) = ctx.clock.as_ref().map(|c| c.hz) {
            let per_cycle = bw / p.threads as f64 / hz;
            if per_cycle > MAX_VECTORS_PER_CYCLE * vector {
                w.push(format!(
                    "{what} is {per_cycle:.0} B per cycle per thread, above the physical bound of {} B ({MAX_VECTORS_PER_CYCLE} vectors of {vector} B)",
                    MAX_VECTORS_PER_CYCLE * vector
                ));
            }
        }
    }
    w
}

/// `kernel`'s point on `threads` threads among `points`.
fn point_of<'a>(
    points: &[&'a KernelPoint],
    kernel: Kernel,
    threads: usize,
) -> Option<&'a KernelPoint> {
    points
        .iter()
        .find(|p| p.threads == threads && p.kernel == kernel)
        .copied()
}

/// The DRAM points' table: each kernel on one and on all threads (the
/// latter with write-allocate too), then on 4 KiB pages.
pub(super) fn dram_table(
    ctx: &Context,
    dram: &[&KernelPoint],
    base_dram: &[&KernelPoint],
    total: u64,
) -> String {
    let all = ctx.all.threads();
    let mut t = format!(
        "STREAM at DRAM size ({} in total; B/elem counted as STREAM / with write-allocate; huge pages, the last two columns 4 KiB pages; no non-temporal stores)\n",
        binary_bytes(total as f64)
    );
    t += &format!(
        "  {:<6} {:>7} {:>11} {:>11} {:>12} {:>10} {:>10}\n",
        "kernel",
        "B/elem",
        "1 thread",
        format!("{all} threads"),
        format!("{all}t with WA"),
        "1t, 4 KiB",
        format!("{all}t, 4 KiB"),
    );
    let rate = |p: Option<&KernelPoint>| p.map_or("-".into(), |p| Si(p.best(), "B/s").to_string());
    for k in Kernel::ALL {
        let (one, every) = (point_of(dram, k, 1), point_of(dram, k, all));
        if one.is_none() && every.is_none() {
            continue;
        }
        t += &format!(
            "  {:<6} {:>7} {:>11} {:>11} {:>12} {:>10} {:>10}\n",
            k.name(),
            format!(
                "{}/{}",
                k.bytes_per_elem(),
                k.bytes_per_elem_write_allocate()
            ),
            rate(one),
            rate(every),
            every.map_or("-".into(), |p| Si(p.write_allocate_best(), "B/s")
                .to_string()),
            rate(point_of(base_dram, k, 1)),
            rate(point_of(base_dram, k, all)),
        );
    }
    t
}
