//! An empty parallel region of the pinned team, measured within the `c2c`
//! benchmark and stored under its section's `regions`.
//!
//! The calling thread hands every thread of the team its call and waits
//! for the last one to finish ([`Team::each`]), back to back, as `predict
//! run` times its kernels: one such region per timed call. What an empty
//! region takes is what every region pays, whatever it runs: the start and
//! join of the threads (the fork–join overhead; §2.2's overhead, the time
//! a processor spends starting a step rather than doing it). On a VM it
//! is mostly the wake-ups between the cores, which pass through the host.

use anyhow::Result;
use core_affinity::CoreId;
use models::profile::c2c::TeamRegion;
use models::stats::Summary as Stats;
use models::units::Si;

use super::increments::sharer_counts;
use super::sample;
use crate::pin::Team;
use crate::timer::{measure, serial, Plan};

/// The thread counts a region is measured on: one, and those the
/// shared-line increments run on ([`sharer_counts`]).
pub fn region_counts(cpus: usize) -> Vec<usize> {
    std::iter::once(1)
        .chain(sharer_counts(cpus))
        .filter(|&p| p <= cpus)
        .collect()
}

/// Seconds per empty region on the first `p` of `cpus`, for each count of
/// [`region_counts`]; `progress` is called after each.
pub fn measure_regions(
    cpus: &[CoreId],
    plan: &Plan,
    mut progress: impl FnMut(),
) -> Result<Vec<(usize, Stats)>> {
    region_counts(cpus.len())
        .into_iter()
        .map(|p| {
            let team = Team::new(&cpus[..p])?;
            let m = measure(
                plan,
                serial(|inner| {
                    for _ in 0..inner {
                        team.each(std::hint::black_box);
                    }
                }),
            )?;
            progress();
            Ok((p, m.per_unit.summary()))
        })
        .collect()
}

/// The section's `regions`.
pub fn record(regions: &[(usize, Stats)]) -> Vec<TeamRegion> {
    regions
        .iter()
        .map(|(threads, s)| TeamRegion {
            threads: *threads,
            per_region_s: sample(s),
        })
        .collect()
}

/// The human table's line.
pub fn table(regions: &[(usize, Stats)]) -> String {
    let each: Vec<String> = regions
        .iter()
        .map(|(p, s)| format!("{} on {p}", Si(s.median, "s")))
        .collect();
    format!(
        "  an empty parallel region of the pinned team (start and join): {}\n",
        each.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_run_on_one_thread_and_on_the_sharer_counts() {
        assert_eq!(region_counts(1), vec![1]);
        assert_eq!(region_counts(2), vec![1, 2]);
        assert_eq!(region_counts(6), vec![1, 2, 4, 6]);
    }

    #[test]
    fn an_empty_region_takes_time_on_every_count() {
        let cpus = crate::pin::allowed_cpus();
        let plan = Plan::quick();
        let regions = measure_regions(&cpus, &plan, || {}).unwrap();
        assert_eq!(regions.len(), region_counts(cpus.len()).len());
        let recorded = record(&regions);
        assert!(recorded
            .iter()
            .all(|r| r.per_region_s.median > 0.0 && r.per_region_s.median.is_finite()));
        assert!(table(&regions).contains("on 1"));
    }
}
