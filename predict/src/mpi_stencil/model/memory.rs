//! The bandwidth a rank gets for its working set (see the parent module's
//! docs: the STREAM copy sweep, else a level's read bandwidth, else the
//! triad or DRAM figures).

use models::profile::{level_rank, MemoryLevel, Profile};
use serde::Serialize;

use super::{Missing, TRIAD_WRITE_ALLOCATE};
use crate::machine::Machine;

/// Where the sweep's bandwidth comes from.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memory {
    /// "L2", "DRAM", ...
    pub level: String,
    /// Bandwidth one rank gets, bytes really moved per second.
    pub bandwidth_Bps: f64,
    /// How it was derived.
    pub source: String,
    /// The rank's working set, bytes.
    pub working_set_bytes: f64,
}

/// Per-rank share of a bandwidth: min(B_1·s, B_all/R), s = min(1, cpus/R);
/// the one-thread figure for a single rank.
fn per_rank(one: Option<f64>, all: Option<f64>, ranks: usize, cpus: usize) -> Option<f64> {
    let r = ranks.max(1) as f64;
    let share = if cpus > 0 {
        (cpus as f64 / r).min(1.0)
    } else {
        1.0
    };
    match (one, all) {
        (Some(a), _) if ranks <= 1 => Some(a),
        (Some(a), Some(b)) => Some((a * share).min(b / r)),
        (Some(a), None) => Some(a * share),
        (None, Some(b)) => Some(b / r),
        (None, None) => None,
    }
}

/// The bandwidth a rank gets for its working set (see the module docs).
pub fn memory(profile: &Profile, working_set: f64, ranks: usize) -> Result<Memory, Missing> {
    let mut caches: Vec<_> = profile
        .levels
        .iter()
        .filter(|l| l.size_bytes.is_some())
        .collect();
    caches.sort_by_key(|l| level_rank(&l.name));
    let last = caches.len().saturating_sub(1);
    // The levels that can hold the working set, nearest first.
    let holding = caches.iter().enumerate().filter_map(|(k, l)| {
        let size = l.size_bytes.unwrap_or(0.0);
        let (capacity, shared) = if k == last {
            (size / ranks.max(1) as f64, "shared")
        } else {
            (size, "private")
        };
        (working_set <= capacity).then_some((*l, shared))
    });
    if let Ok(bw) = Machine::new(profile).stream_bw_wa("copy", ranks.max(1), working_set) {
        return Ok(Memory {
            level: holding
                .clone()
                .next()
                .map_or("DRAM".into(), |(l, _)| l.name.clone()),
            bandwidth_Bps: bw / ranks.max(1) as f64,
            source: format!(
                "STREAM copy sweep with write-allocate, {ranks} thread(s) at {working_set:.3e} B each, / {ranks} ranks"
            ),
            working_set_bytes: working_set,
        });
    }
    from_levels(profile, holding, working_set, ranks)
}

/// Without a STREAM sweep: the read bandwidth of the nearest level that
/// holds the working set, else the triad, else DRAM's read bandwidth.
fn from_levels<'a>(
    profile: &Profile,
    holding: impl Iterator<Item = (&'a MemoryLevel, &'static str)>,
    working_set: f64,
    ranks: usize,
) -> Result<Memory, Missing> {
    let cpus = profile.provenance.logical_cpus;
    for (l, shared) in holding {
        let bw = per_rank(
            l.bandwidth_1t_Bps.map(|e| e.point),
            l.bandwidth_Bps.map(|e| e.point),
            ranks,
            cpus,
        );
        if let Some(bw) = bw {
            return Ok(Memory {
                level: l.name.clone(),
                bandwidth_Bps: bw,
                source: format!(
                    "{} read bandwidth ({shared}), min(1 thread, all threads / {ranks} ranks)",
                    l.name
                ),
                working_set_bytes: working_set,
            });
        }
    }
    let s = &profile.summary;
    if let Some(bw) = per_rank(s.stream_triad_1t_Bps, s.stream_triad_Bps, ranks, cpus) {
        return Ok(Memory {
            level: "DRAM".into(),
            bandwidth_Bps: bw * TRIAD_WRITE_ALLOCATE,
            source: format!(
                "STREAM triad, min(1 thread, all threads / {ranks} ranks) x 32/24 for write-allocate"
            ),
            working_set_bytes: working_set,
        });
    }
    let dram = profile.levels.iter().find(|l| l.size_bytes.is_none());
    if let Some(bw) = dram.and_then(|l| {
        per_rank(
            l.bandwidth_1t_Bps.map(|e| e.point),
            l.bandwidth_Bps.map(|e| e.point),
            ranks,
            cpus,
        )
    }) {
        return Ok(Memory {
            level: "DRAM".into(),
            bandwidth_Bps: bw,
            source: format!("DRAM read bandwidth, min(1 thread, all threads / {ranks} ranks)"),
            working_set_bytes: working_set,
        });
    }
    Err(Missing {
        what: "the memory bandwidth (STREAM triad or a level's bandwidth)".into(),
        fix: "calibrate --only stream".into(),
    })
}
