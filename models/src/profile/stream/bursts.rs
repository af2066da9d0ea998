//! The DRAM points' bursts as a prediction reads them: the typical burst,
//! the placements of the threads the line probes beside the bursts tell
//! apart, and where a later run's threads ran against them.

use super::StreamSection;
use crate::Estimate;

/// The typical rate of a figure measured in bursts spread over a run: the
/// median of the bursts' capability estimates, with their range; `None`
/// below two bursts.
///
/// Within a burst, interference only slows timings, so its capability
/// estimate (a high quantile of its rates) stands for it. Across bursts
/// the host's own state moves: the two-thread DRAM triad of the Zen 4 VM,
/// sampled every 0.2 s for 150 s, read 45–53 GB/s (with write-allocate)
/// most of the time and 78–90 GB/s in episodes of 0.4 to 25 s, 23% of
/// the time. Pooled, a quantile of all the timings takes the fast state
/// as soon as one burst in five catches it; the median burst takes the
/// state most bursts saw, which is the one a kernel run later most
/// likely meets.
///
/// Those states are where the host runs the threads. On that VM the line
/// between its two vCPUs took 30–33 ns one way (one chiplet, sharing its
/// L3 and its one link to memory) or 146–173 ns (two chiplets, a link
/// each), and in sixteen alternations the two-thread likwid-bench
/// `stream_avx_fma` read 30–36 GB/s with the first and 44–49 GB/s with
/// the second, every time. When the line probes beside the bursts
/// (`lines`, before and after each, in their order) fall into two
/// placements ([`by_placement`]), the interval is the two placements'
/// median bursts, and the point is the median burst of the placement more
/// bursts saw (of all the bursts on a tie).
pub fn typical_burst(bursts: &[f64], lines: &[[f64; 2]]) -> Option<Estimate> {
    if bursts.len() < 2 {
        return None;
    }
    let median = |v: &[f64]| crate::stats::median(v.to_vec());
    if let Some((near, far)) = by_placement(bursts, lines) {
        let (n, f) = (median(&near), median(&far));
        let (lo, hi) = (n.min(f), n.max(f));
        let point = match near.len().cmp(&far.len()) {
            std::cmp::Ordering::Greater => n,
            std::cmp::Ordering::Less => f,
            std::cmp::Ordering::Equal => median(bursts).clamp(lo, hi),
        };
        return Some(Estimate::new(point, lo, hi));
    }
    let lo = bursts.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = bursts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(Estimate::new(median(bursts), lo, hi))
}

/// The bursts of each of two placements of the threads, (near, far): the
/// line probes beside the bursts, sorted, split at their widest gap when
/// its ends are [`two_states`] apart, and each burst whose two probes lie
/// on one side of it counted there (a burst whose placement changed
/// between its probes counts in neither); `None` without a probe for
/// every burst, without such a gap, or when a side keeps no burst.
///
/// [`two_states`]: crate::profile::lock::two_states
pub fn by_placement(bursts: &[f64], lines: &[[f64; 2]]) -> Option<(Vec<f64>, Vec<f64>)> {
    if lines.len() != bursts.len() {
        return None;
    }
    let split = placement_split(lines.iter().flatten().copied())?;
    let side = |near: bool| -> Vec<f64> {
        bursts
            .iter()
            .zip(lines)
            .filter(|(_, l)| l.iter().all(|&x| (x < split) == near))
            .map(|(&b, _)| b)
            .collect()
    };
    let (near, far) = (side(true), side(false));
    (!near.is_empty() && !far.is_empty()).then_some((near, far))
}

/// Two placements of a team's threads that a profile's DRAM bursts ran
/// in, as the line probes beside them tell them apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placements {
    /// The median probe of the nearer placement, s.
    pub near_line_s: f64,
    /// The median probe of the farther one, s.
    pub far_line_s: f64,
    /// Whether the farther placement's bursts moved more bytes (as the
    /// Zen 4 VM's two chiplets, a link to memory each, do).
    pub faster_apart: bool,
}

/// The line latency that parts two placements of the threads: the
/// geometric mean of the ends of the widest gap between the sorted
/// `probes`, when those ends are [`two_states`] apart.
///
/// [`two_states`]: crate::profile::lock::two_states
fn placement_split(probes: impl Iterator<Item = f64>) -> Option<f64> {
    let mut probes: Vec<f64> = probes.collect();
    probes.sort_by(f64::total_cmp);
    let (lo, hi) = probes
        .windows(2)
        .map(|w| (w[0], w[1]))
        .max_by(|a, b| (a.1 / a.0).total_cmp(&(b.1 / b.0)))?;
    crate::profile::lock::two_states(lo, hi).then(|| (lo * hi).sqrt())
}

impl StreamSection {
    /// Whether the DRAM points on `threads` threads saw two states: the
    /// interval of one of them ([`typical_burst`]: its placements' median
    /// bursts, else its bursts' range) [`two_states`] wide (the host's
    /// placement of the threads, which the Zen 4 VM's two threads found on
    /// one chiplet at 45–53 GB/s most of the time and on two at 78–90 GB/s
    /// in episodes of 0.4–25 s).
    ///
    /// [`two_states`]: crate::profile::lock::two_states
    pub fn dram_two_states(&self, threads: usize) -> bool {
        self.dram_points(threads)
            .filter_map(|p| typical_burst(&p.bursts_Bps, &p.bursts_line_s))
            .any(|e| crate::profile::lock::two_states(e.lo, e.hi))
    }

    /// The two placements the DRAM bursts on `threads` threads ran in, as
    /// the line probes beside them saw them ([`by_placement`]); `None`
    /// when they saw one.
    pub fn dram_placements(&self, threads: usize) -> Option<Placements> {
        let probes = || self.dram_probes(threads);
        let split = placement_split(probes())?;
        let median =
            |near: bool| crate::stats::median(probes().filter(|&t| (t < split) == near).collect());
        // Faster apart when most points' far bursts are.
        let (faster, slower) = self
            .dram_points(threads)
            .filter_map(|p| by_placement(&p.bursts_Bps, &p.bursts_line_s))
            .fold((0, 0), |(f, s), (near, far)| {
                if crate::stats::median(far) > crate::stats::median(near) {
                    (f + 1, s)
                } else {
                    (f, s + 1)
                }
            });
        Some(Placements {
            near_line_s: median(true),
            far_line_s: median(false),
            faster_apart: faster > slower,
        })
    }

    /// Where a run on `threads` threads whose line probe read `line_s`
    /// ran, against the profile's DRAM bursts: "near" or "apart" when the
    /// bursts saw two placements ([`Self::dram_placements`]: on which side
    /// of the geometric mean of their probes it falls), else "as profiled"
    /// or "moved" ([`two_states`] from the bursts' median probe); `None`
    /// without probes.
    ///
    /// [`two_states`]: crate::profile::lock::two_states
    pub fn placement_of(&self, threads: usize, line_s: f64) -> Option<&'static str> {
        if let Some(p) = self.dram_placements(threads) {
            let split = (p.near_line_s * p.far_line_s).sqrt();
            return Some(if line_s < split { "near" } else { "apart" });
        }
        let probes: Vec<f64> = self.dram_probes(threads).collect();
        if probes.is_empty() {
            return None;
        }
        let profiled = crate::stats::median(probes);
        let (lo, hi) = (profiled.min(line_s), profiled.max(line_s));
        Some(if crate::profile::lock::two_states(lo, hi) {
            "moved"
        } else {
            "as profiled"
        })
    }

    /// Every line probe beside the DRAM bursts on `threads` threads, s.
    fn dram_probes(&self, threads: usize) -> impl Iterator<Item = f64> + '_ {
        self.dram_points(threads)
            .flat_map(|p| p.bursts_line_s.iter().flatten().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::super::StreamPoint;
    use super::*;

    #[test]
    fn bursts_beside_two_placements_read_each_placements_median() {
        let near = [31e-9, 32e-9];
        let far = [150e-9, 160e-9];
        let bursts = [40e9, 42e9, 80e9, 44e9, 41e9];
        // The fourth burst's placement changed between its probes.
        let lines = [near, near, far, [32e-9, 155e-9], near];
        let (n, f) = by_placement(&bursts, &lines).unwrap();
        assert_eq!((n, f), (vec![40e9, 42e9, 41e9], vec![80e9]));
        // Three bursts on one chiplet, one on two: the first's median is
        // the point, the interval the two medians.
        let e = typical_burst(&bursts, &lines).unwrap();
        assert_eq!((e.point, e.lo, e.hi), (41e9, 41e9, 80e9));
        // As many on each: the median of all the bursts.
        let lines = [near, near, far, far];
        let e = typical_burst(&[40e9, 42e9, 80e9, 84e9], &lines).unwrap();
        assert_eq!((e.point, e.lo, e.hi), (61e9, 41e9, 82e9));
        // Probes within 1.5× of each other, a probe missing, or a side
        // with no burst: no placements, the bursts' range.
        let close = [[31e-9, 40e-9], [33e-9, 44e-9]];
        assert_eq!(by_placement(&[40e9, 80e9], &close), None);
        assert_eq!(by_placement(&[40e9, 80e9], &[near]), None);
        assert_eq!(by_placement(&[40e9, 80e9], &[near, [32e-9, 150e-9]]), None);
        let e = typical_burst(&[40e9, 80e9, 41e9], &[]).unwrap();
        assert_eq!((e.point, e.lo, e.hi), (41e9, 40e9, 80e9));
        // The section names the placements by their median probes.
        let mut p = StreamPoint::with_bandwidth_wa("triad", 1 << 28, Some(2), 68e9);
        p.bursts_Bps = bursts.to_vec();
        p.bursts_line_s = [near, near, far, [32e-9, 155e-9], near].to_vec();
        let section = StreamSection {
            dram: vec![p],
            ..Default::default()
        };
        let pl = section.dram_placements(2).unwrap();
        assert_eq!((pl.near_line_s, pl.far_line_s), (32e-9, 155e-9));
        assert!(
            pl.faster_apart,
            "the far burst read 80 GB/s, the near ones 41"
        );
        assert_eq!(section.dram_placements(1), None);
        // A kernel's probe against the placements, or against one.
        assert_eq!(section.placement_of(2, 30e-9), Some("near"));
        assert_eq!(section.placement_of(2, 170e-9), Some("apart"));
        let mut one = section.clone();
        one.dram[0].bursts_line_s = vec![near; 5];
        assert_eq!(one.placement_of(2, 40e-9), Some("as profiled"));
        assert_eq!(one.placement_of(2, 160e-9), Some("moved"));
        assert_eq!(one.placement_of(1, 160e-9), None);
    }
}
