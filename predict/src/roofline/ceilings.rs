//! The roofs a chart draws, taken from the profile (lecture §4.4): one
//! bandwidth roof per measured memory level (P = AI · Bᵢ, Bᵢ the level's
//! read bandwidth) and one compute roof per measured ceiling (P = Cⱼ), at
//! the wanted thread count, filtered by precision and by the user's
//! `--ceilings` list.

use models::profile::{CeilingKernel, ComputeCeiling, MemoryLevel, Profile};
use models::Estimate;

use super::data::Selection;
use crate::error::BadInput;

/// One roof before the chart is built: its name, (value, lo, hi) and how
/// it was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    pub name: String,
    pub value: (f64, f64, f64),
    pub method: String,
}

/// The roofs of the profile at the selection's thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct Roofs {
    /// Bandwidth roofs, nearest level first.
    pub memory: Vec<Roof>,
    /// Compute roofs, highest first.
    pub compute: Vec<Roof>,
    /// Threads of the bandwidths.
    pub memory_threads: usize,
    /// Threads of the compute ceilings (the nearest measured count).
    pub compute_threads: usize,
}

/// Estimate from a profile figure.
fn bounds(e: &Estimate) -> (f64, f64, f64) {
    (e.point, e.lo.min(e.point), e.hi.max(e.point))
}

/// "avx512" -> "AVX-512", "avx2" -> "AVX2", "scalar" -> "scalar".
fn isa_label(isa: &str) -> String {
    match isa.to_ascii_lowercase().as_str() {
        "avx512" | "avx512f" | "avx-512" => "AVX-512".into(),
        "scalar" => "scalar".into(),
        other => other.to_ascii_uppercase(),
    }
}

fn compute_name(c: &ComputeCeiling) -> String {
    match c.kernel {
        CeilingKernel::Dgemm => format!("{} dgemm", c.precision),
        CeilingKernel::Registers => format!(
            "{} {} {}",
            c.precision,
            isa_label(&c.isa),
            if c.fma { "FMA" } else { "mul+add" }
        ),
    }
}

/// How a compute ceiling was measured, for the caption.
fn compute_method(c: &ComputeCeiling) -> String {
    match c.kernel {
        CeilingKernel::Dgemm => "a cache-resident, register-blocked dgemm".into(),
        CeilingKernel::Registers => format!(
            "independent {} {} chains in registers",
            isa_label(&c.isa),
            if c.fma { "FMA" } else { "multiply and add" }
        ),
    }
}

fn bandwidth_of(l: &MemoryLevel, one_thread: bool) -> Option<&Estimate> {
    if one_thread {
        l.bandwidth_1t_Bps.as_ref()
    } else {
        l.bandwidth_Bps.as_ref()
    }
}

/// The bandwidth roofs: each level's read bandwidth, or the STREAM triad
/// as the DRAM roof when the profile has no per-level figures.
fn memory_roofs(
    profile: &Profile,
    one_thread: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Roof>, BadInput> {
    let mut memory = Vec::new();
    for l in &profile.levels {
        match bandwidth_of(l, one_thread).map(bounds) {
            Some(b) if b.0 > 0.0 && b.0.is_finite() => memory.push(Roof {
                name: l.name.clone(),
                value: b,
                method: "measured on a working set sized to its level".into(),
            }),
            Some(_) => {}
            None => notes.push(format!(
                "level {} has no measured bandwidth; no ceiling drawn for it",
                l.name
            )),
        }
    }
    if !memory.is_empty() {
        return Ok(memory);
    }
    let stream = if one_thread {
        profile.summary.stream_triad_1t_Bps
    } else {
        profile.summary.stream_triad_Bps
    };
    match stream {
        Some(b) if b > 0.0 => {
            notes.push(
                "no per-level bandwidths in the profile: the DRAM ceiling is the STREAM triad"
                    .into(),
            );
            Ok(vec![Roof {
                name: "DRAM".into(),
                value: (b, b, b),
                method: "measured with the STREAM triad".into(),
            }])
        }
        _ => Err(BadInput(
            "the profile has no memory bandwidth; run `calibrate --only stream` to measure it"
                .into(),
        )),
    }
}

/// The compute roofs at the wanted thread count (or the nearest measured),
/// highest first; returns them and their thread count.
fn compute_roofs(
    profile: &Profile,
    sel: &Selection,
    want_threads: usize,
    notes: &mut Vec<String>,
) -> Result<(Vec<Roof>, usize), BadInput> {
    let candidates: Vec<&ComputeCeiling> = profile
        .ceilings
        .iter()
        .filter(|c| {
            sel.precision
                .as_deref()
                .map_or(true, |p| c.precision.eq_ignore_ascii_case(p))
        })
        .collect();
    let threads = candidates
        .iter()
        .map(|c| c.threads)
        .min_by_key(|t| t.abs_diff(want_threads))
        .unwrap_or(want_threads);
    let mut compute: Vec<Roof> = candidates
        .iter()
        .filter(|c| c.threads == threads && c.flops.point > 0.0)
        .map(|c| Roof {
            name: compute_name(c),
            value: bounds(&c.flops),
            method: compute_method(c),
        })
        .collect();
    if !candidates.is_empty() && threads != want_threads {
        notes.push(format!(
            "the profile has no compute ceilings on {want_threads} thread(s); those on {threads} are drawn"
        ));
    }
    if compute.is_empty() {
        compute.push(summary_peak(profile, sel)?);
    }
    compute.sort_by(|a, b| b.value.0.total_cmp(&a.value.0).then(a.name.cmp(&b.name)));
    dedupe_names(&mut compute);
    Ok((compute, threads))
}

/// The summary's f64 peak, for a profile without ceilings.
fn summary_peak(profile: &Profile, sel: &Selection) -> Result<Roof, BadInput> {
    let peak = if sel.one_thread {
        profile.summary.peak_flops_f64_1t
    } else {
        profile.summary.peak_flops_f64
    };
    match peak {
        Some(p) if p > 0.0 => Ok(Roof {
            name: "f64 peak".into(),
            value: (p, p, p),
            method: "the profile's f64 peak".into(),
        }),
        _ => {
            let what = sel
                .precision
                .as_deref()
                .map_or(String::new(), |p| format!(" for {p}"));
            Err(BadInput(format!(
                "the profile has no compute ceiling{what}; run `calibrate --only flops` to measure them"
            )))
        }
    }
}

/// Two ceilings with one name get " (2)", " (3)" appended.
fn dedupe_names(list: &mut [Roof]) {
    let names: Vec<String> = list.iter().map(|r| r.name.clone()).collect();
    for (i, item) in list.iter_mut().enumerate() {
        let before = names[..i].iter().filter(|n| **n == names[i]).count();
        if before > 0 {
            item.name = format!("{} ({})", names[i], before + 1);
        }
    }
}

/// The profile's roofs for `sel`, with what was noticed on the way.
pub fn roofs(
    profile: &Profile,
    sel: &Selection,
    notes: &mut Vec<String>,
) -> Result<Roofs, BadInput> {
    let all_threads = profile.provenance.threads.max(1);
    let want_threads = if sel.one_thread { 1 } else { all_threads };
    let memory = memory_roofs(profile, sel.one_thread, notes)?;
    let (compute, compute_threads) = compute_roofs(profile, sel, want_threads, notes)?;
    let mut r = Roofs {
        memory,
        compute,
        memory_threads: want_threads,
        compute_threads,
    };
    if let Some(names) = &sel.ceilings {
        choose(&mut r, names, notes)?;
    }
    if !profile.provenance.measured() {
        let nominal = format!("nominal, not measured ({})", profile.provenance.command);
        for roof in r.memory.iter_mut().chain(&mut r.compute) {
            roof.method.clone_from(&nominal);
        }
    }
    Ok(r)
}

/// Keeps the roofs `names` lists (`--ceilings DRAM,L2,fma`). A name is a
/// roof's name as the CSV lists it (case-insensitive), or a word of
/// several names (`fma`), which picks the highest roof that has it.
fn choose(r: &mut Roofs, names: &[String], notes: &mut Vec<String>) -> Result<(), BadInput> {
    let all: Vec<&Roof> = r.memory.iter().chain(&r.compute).collect();
    let mut keep: Vec<String> = Vec::new();
    for want in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let exact = all.iter().find(|c| c.name.eq_ignore_ascii_case(want));
        let word = || {
            all.iter()
                .filter(|c| {
                    c.name
                        .split_whitespace()
                        .any(|w| w.eq_ignore_ascii_case(want))
                })
                .max_by(|a, b| a.value.0.total_cmp(&b.value.0))
        };
        match exact.or_else(word) {
            Some(c) => {
                if !c.name.eq_ignore_ascii_case(want) {
                    notes.push(format!("--ceilings: '{want}' is {}", c.name));
                }
                keep.push(c.name.clone());
            }
            None => {
                let valid: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
                return Err(BadInput(format!(
                    "--ceilings: no ceiling '{want}'; this profile has: {}",
                    valid.join(", ")
                )));
            }
        }
    }
    r.memory.retain(|c| keep.contains(&c.name));
    r.compute.retain(|c| keep.contains(&c.name));
    if r.memory.is_empty() || r.compute.is_empty() {
        return Err(BadInput(
            "--ceilings must keep at least one bandwidth roof (a memory level) and one compute roof"
                .into(),
        ));
    }
    Ok(())
}
