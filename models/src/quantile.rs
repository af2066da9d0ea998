//! The capability estimate of a sample: a low quantile of times (a high
//! one of rates) with a distribution-free interval from order statistics,
//! for figures that interference can only make worse.
//!
//! ```
//! use models::quantile::{capability, Better};
//! let times = [1.0, 1.01, 1.02, 1.03, 1.04, 1.6, 2.5]; // sorted
//! assert_eq!(capability(&times, Better::Lower).point, 1.01);
//! ```

use statrs::distribution::{Binomial, Discrete};

use crate::Estimate;

/// Share of the ordered sample, counted from its better end, whose upper
/// boundary is the capability estimate: the 0.2-quantile of times, the
/// 0.8-quantile of rates (see [`capability`]).
pub const CAPABILITY_QUANTILE: f64 = 0.2;

/// Which end of a sample is the machine's capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Times and latencies: interference only makes them longer.
    Lower,
    /// Rates (FLOP/s, bytes/s, operations/s): interference only lowers them.
    Higher,
}

/// The capability estimate of values sorted ascending: the
/// [`CAPABILITY_QUANTILE`]-quantile counted from the better end, with a
/// distribution-free interval from order statistics.
///
/// Ranked from the best value (1) to the worst (n), the point is the value of
/// rank r = ⌈q·n⌉ (q = [`CAPABILITY_QUANTILE`]; the inverse of the empirical
/// distribution). The number B of values better than the true quantile is
/// Binomial(n, q), so the ranks [j, k] cover it with probability
/// P(j ≤ B ≤ k − 1); the interval grows from [r, r + 1] one rank at a time,
/// on the side that adds more probability, until that reaches 95% or the
/// interval is the whole sample (below about 14 values it is, and its
/// coverage is less than 95%: a range of what was seen).
///
/// Unlike the best value (STREAM's and lmbench's choice), it does not move
/// with the number of repetitions nor with one timing that came out too fast
/// (from six values on: with five or fewer, r = 1 and it is the best value);
/// unlike the median, it ignores up to 1 − q of the timings being slowed.
pub fn capability(sorted: &[f64], better: Better) -> Estimate {
    let n = sorted.len();
    if n == 0 {
        return Estimate::exact(f64::NAN);
    }
    // Rank 1-based from the better end -> value.
    let at = |rank: usize| match better {
        Better::Lower => sorted[rank - 1],
        Better::Higher => sorted[n - rank],
    };
    let r = ((CAPABILITY_QUANTILE * n as f64).ceil() as usize).clamp(1, n);
    let (mut j, mut k) = (r, (r + 1).min(n));
    if let Ok(bin) = Binomial::new(CAPABILITY_QUANTILE, n as u64) {
        // P(B = b) for the rank that a widening step would add.
        let pmf = |b: usize| bin.pmf(b as u64);
        let mut coverage: f64 = (j..k).map(pmf).sum();
        while coverage < 0.95 && (j > 1 || k < n) {
            let down = if j > 1 { pmf(j - 1) } else { -1.0 };
            let up = if k < n { pmf(k) } else { -1.0 };
            if down >= up {
                j -= 1;
                coverage += down;
            } else {
                coverage += up;
                k += 1;
            }
        }
    }
    let (a, b) = (at(j), at(k));
    Estimate::new(at(r), a.min(b), a.max(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Sample;

    #[test]
    fn capability_takes_the_low_quantile_of_times() {
        // n = 7: rank ⌈0.2·7⌉ = 2, the second best; too few values for 95%,
        // so the interval is the whole sample.
        let v = [3.0, 1.0, 7.0, 2.0, 5.0, 4.0, 6.0];
        let s = Sample::new(v.to_vec()).unwrap().summary();
        assert_eq!(s.capability(Better::Lower), Estimate::new(2.0, 1.0, 7.0));
        assert_eq!(s.capability(Better::Higher), Estimate::new(6.0, 1.0, 7.0));
        // n = 100: rank 20, interval ranks [13, 28] from Binomial(100, 0.2).
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let e = Sample::new(v).unwrap().summary().capability(Better::Lower);
        assert_eq!(e.point, 20.0);
        assert!(
            e.lo >= 11.0 && e.lo <= 14.0 && e.hi >= 27.0 && e.hi <= 30.0,
            "{e:?}"
        );
    }

    #[test]
    fn capability_ignores_one_sided_slow_downs() {
        // 21 quiet timings near 1.0, then a growing share slowed 1.5-3×:
        // the capability stays put up to 70% slowed, the median does not.
        let quiet: Vec<f64> = (0..21).map(|i| 1.0 + 0.001 * i as f64).collect();
        let base = Sample::new(quiet.clone()).unwrap().summary();
        for slowed in [1, 5, 10, 14] {
            let mut v = quiet.clone();
            for (i, x) in v.iter_mut().rev().take(slowed).enumerate() {
                *x *= 1.5 + 0.1 * i as f64;
            }
            let s = Sample::new(v).unwrap().summary();
            let c = s.capability(Better::Lower).point;
            assert_eq!(c, base.capability(Better::Lower).point, "{slowed} slowed");
            if slowed >= 11 {
                assert!(s.median > 1.4, "the median follows the slow-downs");
            }
        }
    }

    #[test]
    fn capability_is_not_one_lucky_timing() {
        // Best of N (STREAM, lmbench) takes a single too-fast timing (a
        // coarse clock, a frequency burst) at face value; the quantile of
        // 21 values does not.
        let mut v: Vec<f64> = (0..21).map(|i| 1.0 + 0.001 * i as f64).collect();
        v[7] = 0.5;
        let s = Sample::new(v).unwrap().summary();
        assert_eq!(s.min, 0.5);
        assert!(s.capability(Better::Lower).point > 0.99);
    }

    #[test]
    fn capability_interval_covers_the_true_quantile() {
        // Coverage over many samples of 40 uniforms: the 0.2-quantile is 0.2.
        let mut rng = crate::random::SplitMix64::new(987654321);
        let mut uniform = || rng.uniform();
        let trials = 2000;
        let mut covered = 0;
        for _ in 0..trials {
            let mut v: Vec<f64> = (0..40).map(|_| uniform()).collect();
            v.sort_by(f64::total_cmp);
            let e = capability(&v, Better::Lower);
            covered += usize::from(e.lo <= 0.2 && 0.2 <= e.hi);
        }
        let rate = covered as f64 / trials as f64;
        assert!(rate > 0.93 && rate < 0.995, "coverage {rate}");
    }
}
