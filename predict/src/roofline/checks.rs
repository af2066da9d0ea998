//! What the chart's reader should be told about its points: a point above
//! the peak or above its DRAM roof, points measured with another thread
//! count than the roofs, and records made on another machine than the
//! profile's or predicted against another profile.

use std::collections::BTreeMap;

use models::units::Si;

use super::data::RooflineData;
use crate::record::read::Record;

/// Appends the notes about `d`'s points (and the `records` they came from).
pub fn check(d: &mut RooflineData, records: &[Record]) {
    let mut notes = above_roofs(d);
    notes.extend(thread_mismatch(d));
    notes.extend(machine_mismatch(&d.machine, records));
    notes.extend(profile_mismatch(&d.profile, records));
    notes.extend(before_calibration(&d.calibration_date, records));
    d.notes.extend(notes);
}

/// Points above the peak, or above their DRAM roof.
fn above_roofs(d: &RooflineData) -> Vec<String> {
    let peak = d.ridge.flops;
    let mut notes = Vec::new();
    for p in &d.points {
        if p.measured_flops > 1.05 * peak {
            notes.push(format!(
                "{} runs at {}, above the peak {} of the profile: check its flop count, or whether the profile's ceilings are for fewer threads",
                p.name,
                Si(p.measured_flops, "FLOP/s"),
                Si(peak, "FLOP/s")
            ));
        } else if p.measured_flops > 1.05 * p.attainable_flops {
            notes.push(format!(
                "{} runs at {} above its {} roof ({}): part of its data comes from a cache, or its mix of loads and stores streams faster than the roof's read bandwidth",
                p.name,
                Si(p.measured_flops, "FLOP/s"),
                d.ridge.memory,
                Si(p.attainable_flops, "FLOP/s")
            ));
        }
    }
    notes
}

/// One note per thread count of points that differs from the roofs'.
fn thread_mismatch(d: &RooflineData) -> Vec<String> {
    let mut by_threads: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for p in &d.points {
        if let Some(t) = p.threads.filter(|t| *t != d.threads as u64) {
            by_threads.entry(t).or_default().push(&p.name);
        }
    }
    by_threads
        .into_iter()
        .map(|(t, names)| {
            format!(
                "{} measured with {t} thread{} but the roofs are for {} thread{}: {} compared with ceilings it could not reach (or exceed)",
                names.join(", "),
                if t == 1 { "" } else { "s" },
                d.threads,
                if d.threads == 1 { "" } else { "s" },
                if names.len() == 1 { "it is" } else { "they are" }
            )
        })
        .collect()
}

/// How many records give each value of `key` (those it gives one for).
fn tally<'r>(
    records: &'r [Record],
    key: impl Fn(&'r Record) -> Option<&'r str>,
) -> BTreeMap<&'r str, usize> {
    let mut counts = BTreeMap::new();
    for value in records.iter().filter_map(key) {
        *counts.entry(value).or_default() += 1;
    }
    counts
}

/// One note per CPU model of records other than the profile's.
fn machine_mismatch(machine: &str, records: &[Record]) -> Vec<String> {
    if machine.is_empty() {
        return Vec::new();
    }
    tally(records, |r| r.cpu_model.as_deref().filter(|c| *c != machine))
        .into_iter()
        .map(|(cpu, n)| {
            format!(
                "{n} record(s) were measured on '{cpu}', but the profile is of '{machine}': the points are compared with another machine's roofs"
            )
        })
        .collect()
}

/// One note per profile file, other than the chart's, that records'
/// predictions read: their predicted points and errors come from other
/// figures than the roofs drawn (a sample log beside a new calibration,
/// or runs against another machine's profile). Paths are compared as the
/// files they name where both exist.
fn profile_mismatch(profile: &str, records: &[Record]) -> Vec<String> {
    let file = std::fs::canonicalize(profile).ok();
    let same = |other: &str| {
        other == profile
            || file
                .as_ref()
                .is_some_and(|f| std::fs::canonicalize(other).is_ok_and(|o| o == *f))
    };
    tally(records, |r| r.profile.as_deref().filter(|p| !same(p)))
        .into_iter()
        .map(|(other, n)| {
            format!(
                "{n} record(s) were predicted against {other}, not {profile}: their predicted points and errors read other figures than the roofs drawn"
            )
        })
        .collect()
}

/// One note for the records made before the profile was calibrated: a
/// prediction cannot have read figures measured after it, so theirs read
/// an earlier calibration (of this file, or of another). RFC 3339 times
/// in UTC, as both tools write them, order as text to the second (a
/// record of the same second is not counted).
fn before_calibration(calibrated: &str, records: &[Record]) -> Option<String> {
    let second = |d: &str| {
        d.get(..19)
            .filter(|_| d.len() >= 20 && d.ends_with('Z'))
            .map(str::to_string)
    };
    let calibrated_at = second(calibrated)?;
    let n = records
        .iter()
        .filter_map(|r| r.date.as_deref().and_then(second))
        .filter(|d| *d < calibrated_at)
        .count();
    (n > 0).then(|| {
        format!(
            "{n} record(s) were made before the profile was calibrated ({calibrated}): their predicted points and errors read an earlier calibration than the roofs drawn"
        )
    })
}
