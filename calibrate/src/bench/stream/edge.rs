//! The last cache as streaming sees it (lecture §2.4: the working-set
//! curve has a plateau per level and a knee where the working set stops
//! fitting).
//!
//! The pointer chase and the STREAM sweep need not see the same last
//! cache. On both VMs of this project the chase left the L3 early or not
//! at all, while one thread's loads kept an L3 plateau well beyond it:
//! - Zen 4 (the OS reports a 32 MiB L3): the chase's "L2" reached 2.8 MB
//!   (L2 and a little of the L3) or its L3 4.6–6.4 MB, while the loads
//!   kept 98 GB/s up to 8 MiB and fell halfway (in log) to DRAM's 27 GB/s
//!   at about 32 MB;
//! - Xeon (the OS reports the host's 260 MB L3): the chase's levels ended
//!   with a 2.8 MB "L2", while the loads kept 30 GB/s up to 134 MB against
//!   DRAM's 16 GB/s.
//!
//! A level's capacity for streaming kernels is where the sweep leaves it,
//! so the stream benchmark reads it off the one-thread load curve
//! ([`streaming_edge`]) and gives it to the last cache, or to the next
//! level the OS reports when the chase did not find it
//! ([`with_streaming_edge`]). No level the OS does not report is made up.

use models::units::binary_bytes;

use super::KernelPoint;
use crate::bench::{Context, NamedSize, Outcome};
use crate::kernels::stream::Kernel;

/// A plateau is a cache level only when its bandwidth is at least this
/// many times DRAM's: the steps between levels are larger (L3 to DRAM is
/// 2× on the Xeon VM, 3.6× on the Zen 4 VM), the noise of one point
/// smaller.
pub const OVER_DRAM: f64 = 1.5;

/// Where one thread's loads leave the cache beyond the chase's last one,
/// `last_cache` bytes: the plateau is the best bandwidth between 2× and 4×
/// that size (the chase's edge is only as sharp as its steps), and the
/// edge is where the curve, interpolated in log-size and log-bandwidth,
/// first falls through the geometric mean of the plateau's bandwidth and
/// `dram_bw` (the half-way point of the step, as the latency curve's
/// capacities are found). `loads` are (bytes per thread, bandwidth) in size
/// order. None when there is no such plateau (below [`OVER_DRAM`]× DRAM),
/// when the curve does not reach the half-way point, or when it does so
/// within 2× the chase's last cache (nothing beyond the chase's level).
///
/// The half-way point may lie inside the plateau's own window: a chase
/// that left the L3 early (9.8 MB of the Zen 4 VM's 32 MiB) sees the
/// window catch the start of the fall, and the loads cross half-way at
/// 39 MB, just inside 4× the chase's size. Only a crossing before the
/// window's first point says the chase's level is the streaming one.
pub fn streaming_edge(loads: &[(f64, f64)], last_cache: f64, dram_bw: f64) -> Option<f64> {
    let (from, to) = (2.0 * last_cache, 4.0 * last_cache);
    let plateau = loads
        .iter()
        .filter(|(x, _)| (from..=to).contains(x))
        .map(|&(_, b)| b)
        .reduce(f64::max)?;
    if !(dram_bw > 0.0 && plateau >= OVER_DRAM * dram_bw) {
        return None;
    }
    let half = (plateau * dram_bw).sqrt();
    // From the last point before the window on, so that a fall that
    // began inside the chase's level is found there.
    let first = loads.iter().rposition(|&(x, _)| x < from).unwrap_or(0);
    let edge = loads[first..].windows(2).find_map(|w| {
        let ((x0, b0), (x1, b1)) = (w[0], w[1]);
        (b0 >= half && b1 < half).then(|| {
            let t = (b0 / half).ln() / (b0 / b1).ln();
            x0 * (x1 / x0).powf(t)
        })
    })?;
    (edge >= from).then_some(edge)
}

/// The chase's caches (nearest first, named "L1", "L2", ...) with a
/// streaming `edge` beyond the last of them: a level of that size appended
/// when the OS reports the next level (`os_levels`, the numbers of its data
/// and unified caches), else the last cache's size raised to it.
pub fn with_streaming_edge(caches: &[NamedSize], os_levels: &[u32], edge: f64) -> Vec<NamedSize> {
    let mut out = caches.to_vec();
    let last = caches
        .last()
        .and_then(|(name, _)| name.strip_prefix('L')?.parse::<u32>().ok());
    match (last, out.last_mut()) {
        (Some(k), Some(_)) if os_levels.contains(&(k + 1)) => {
            out.push((format!("L{}", k + 1), edge));
        }
        (_, Some(last)) => last.1 = last.1.max(edge),
        (_, None) => {}
    }
    out
}

/// `caches` with the edge one thread's loads show beyond the last of them
/// ([`streaming_edge`], [`with_streaming_edge`]), said in a note when it
/// moves or adds a level. `one_thread` is the one-thread sweep, `dram`
/// the DRAM points.
pub(super) fn caches_with_edge(
    ctx: &Context,
    out: &mut Outcome,
    caches: Vec<NamedSize>,
    one_thread: &[KernelPoint],
    dram: &[&KernelPoint],
) -> Vec<NamedSize> {
    let loads: Vec<(f64, f64)> = one_thread
        .iter()
        .filter(|p| p.kernel == Kernel::Load)
        .map(|p| (p.per_thread_bytes as f64, p.best()))
        .collect();
    let dram_bw = dram
        .iter()
        .find(|p| p.threads == 1 && p.kernel == Kernel::Load)
        .map(|p| p.best());
    let (Some((last, size)), Some(dram_bw)) = (caches.last(), dram_bw) else {
        return caches;
    };
    let Some(edge) = streaming_edge(&loads, *size, dram_bw) else {
        return caches;
    };
    let os_levels: Vec<u32> = ctx
        .sys
        .data_caches()
        .iter()
        .map(|c| c.reported.level)
        .collect();
    let sized = with_streaming_edge(&caches, &os_levels, edge);
    out.notes.push(format!(
        "one thread's loads leave the last cache at {} per thread, where the pointer chase left its {last} at {}: {}",
        binary_bytes(edge),
        binary_bytes(*size),
        if sized.len() > caches.len() {
            format!("{} of that size added", sized[sized.len() - 1].0)
        } else {
            format!("{last} sized so")
        }
    ));
    sized
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One thread's loads on the Zen 4 VM (GB/s at bytes per thread):
    /// L2, then the L3 plateau, then the fall to DRAM's 26 GB/s.
    fn zen4() -> Vec<(f64, f64)> {
        [
            (1.05e6, 99.0),
            (2.1e6, 97.5),
            (4.19e6, 98.6),
            (5.93e6, 99.2),
            (8.39e6, 98.0),
            (1.19e7, 91.2),
            (1.68e7, 74.7),
            (2.37e7, 66.1),
            (3.36e7, 50.0),
            (4.75e7, 35.2),
            (6.71e7, 26.2),
            (1.34e8, 26.1),
        ]
        .iter()
        .map(|&(x, b)| (x, b * 1e9))
        .collect()
    }

    #[test]
    fn the_edge_is_half_way_down_the_step_to_dram() {
        // Beyond a chase "L2" of 2.78 MB: plateau 99.2 GB/s (at 5.93 MB),
        // half way to 26.1 GB/s is 50.9 GB/s, crossed between 23.7 MB
        // (66.1) and 33.6 MB (50.0).
        let edge = streaming_edge(&zen4(), 2.78e6, 26.1e9).unwrap();
        let half: f64 = (99.2f64 * 26.1).sqrt();
        let t = (66.1 / half).ln() / (66.1f64 / 50.0).ln();
        assert!((edge - 2.37e7 * (3.36e7f64 / 2.37e7).powf(t)).abs() < 1.0);
        assert!(edge > 3.0e7 && edge < 3.36e7, "{edge}");
        // Beyond a chase L3 of 6.4 MB the same step gives a similar edge.
        let later = streaming_edge(&zen4(), 6.4e6, 26.1e9).unwrap();
        assert!(later > 3.36e7 && later < 4.75e7, "{later}");
    }

    #[test]
    fn a_chase_that_left_the_l3_early_still_gets_the_streaming_edge() {
        // A Zen 4 profile whose chase found its L3 at 9.77 MB: plateau
        // 61 GB/s at 23.7 MB (the fall has begun), half way to 31.5 GB/s
        // is 43.8 GB/s, crossed between 33.6 MB (55) and 47.5 MB (32), at
        // 38.8 MB: beyond 2× the chase's size, inside 4×.
        let loads: Vec<(f64, f64)> = [
            (5.93e6, 99.0),
            (8.39e6, 99.0),
            (1.186e7, 90.0),
            (1.678e7, 73.0),
            (2.372e7, 61.0),
            (3.355e7, 55.0),
            (4.745e7, 32.0),
            (6.711e7, 31.0),
            (1.342e8, 32.0),
        ]
        .iter()
        .map(|&(x, b)| (x, b * 1e9))
        .collect();
        let edge = streaming_edge(&loads, 9.77e6, 31.5e9).unwrap();
        assert!(edge > 3.8e7 && edge < 3.9e7, "{edge}");
        // A fall half-way before 2× the chase's size, with a bump in the
        // window after it: the chase's level is where streaming ends.
        let dipped: Vec<(f64, f64)> = [(3.5e6, 90.0), (7e6, 22.0), (1e7, 60.0), (2e7, 20.0)]
            .iter()
            .map(|&(x, b)| (x, b * 1e9))
            .collect();
        assert_eq!(streaming_edge(&dipped, 3e6, 20e9), None);
    }

    #[test]
    fn no_edge_without_a_plateau_above_dram_or_a_fall_to_it() {
        // The chase's last cache already ends where streaming does.
        assert_eq!(streaming_edge(&zen4(), 2.0e7, 26.1e9), None);
        // A plateau less than 1.5× DRAM is no level.
        assert_eq!(streaming_edge(&zen4(), 2.78e6, 70e9), None);
        // A sweep that never falls half way has not reached DRAM.
        let flat: Vec<(f64, f64)> = zen4().into_iter().take(7).collect();
        assert_eq!(streaming_edge(&flat, 2.78e6, 26.1e9), None);
        assert_eq!(streaming_edge(&[], 2.78e6, 26.1e9), None);
    }

    #[test]
    fn the_edge_names_the_next_level_only_where_the_os_reports_it() {
        let chase = vec![("L1".to_string(), 35e3), ("L2".to_string(), 2.78e6)];
        assert_eq!(
            with_streaming_edge(&chase, &[1, 2, 3], 3.2e7),
            vec![
                ("L1".to_string(), 35e3),
                ("L2".to_string(), 2.78e6),
                ("L3".to_string(), 3.2e7)
            ]
        );
        // No L3 reported: the last cache is the one streaming leaves.
        assert_eq!(
            with_streaming_edge(&chase, &[1, 2], 3.2e7)[1],
            ("L2".to_string(), 3.2e7)
        );
        // A chase L3 with no L4 reported: its capacity is raised, no L4.
        let three = vec![
            ("L1".to_string(), 35e3),
            ("L2".to_string(), 9.2e5),
            ("L3".to_string(), 6.4e6),
        ];
        let out = with_streaming_edge(&three, &[1, 2, 3], 3.7e7);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2], ("L3".to_string(), 3.7e7));
        assert!(with_streaming_edge(&[], &[1], 1e6).is_empty());
    }
}
