//! A drift check: two sizes of the first pass measured again at the end.
//!
//! The sweep takes seconds and its sizes are measured one after the other,
//! the refined sizes last; a machine whose load changes meanwhile (another
//! program, frequency scaling) bends the curve in ways no protocol
//! explains. Measuring a small and a large size again after everything else
//! and comparing the medians shows whether that happened.

use super::measure::{Mode, Pair, SizePoint};
use super::watchdog::Watchdog;
use super::PingpongOptions;

/// Relative change above which the sweep is reported as drifted.
pub const DRIFT_LIMIT: f64 = 0.10;

/// One size measured at the start and at the end, as the profile records it.
pub use models::profile::pingpong::Drift;

/// Whether `d`'s change exceeds [`DRIFT_LIMIT`].
pub fn drifted(d: &Drift) -> bool {
    d.change.abs() > DRIFT_LIMIT
}

/// The anchor sizes: 8 B and the largest power of two up to 1 MiB that the
/// sweep measured.
pub fn anchors(max_bytes: u64) -> Vec<u64> {
    let large = (0..=20)
        .map(|k| 1u64 << k)
        .rfind(|&b| b <= max_bytes)
        .unwrap_or(1);
    let mut v = vec![8.min(max_bytes), large];
    v.sort_unstable();
    v.dedup();
    v
}

/// Rank 0: measures the anchors again (blocking) and compares them with
/// their first-pass points.
pub(super) fn check(
    pair: &mut Pair<'_>,
    first: &[SizePoint],
    opts: &PingpongOptions,
    wd: &Watchdog,
) -> Vec<Drift> {
    anchors(opts.max_bytes)
        .into_iter()
        .filter_map(|b| {
            let before = first.iter().find(|p| p.bytes == b)?.one_way_s.median;
            let again = pair
                .measure_size(Mode::Blocking, b, opts, wd)
                .one_way_s
                .median;
            Some(Drift {
                bytes: b,
                first_s: before,
                again_s: again,
                change: again / before - 1.0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_small_and_large() {
        assert_eq!(anchors(16 << 20), vec![8, 1 << 20]);
        assert_eq!(anchors(4096), vec![8, 4096]);
        assert_eq!(anchors(6), vec![4, 6]);
        let d = Drift {
            bytes: 8,
            first_s: 1.0,
            again_s: 1.2,
            change: 0.2,
        };
        assert!(drifted(&d));
    }
}
