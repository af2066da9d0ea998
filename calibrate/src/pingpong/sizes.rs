//! The message sizes of the sweep: powers of two, then a denser grid in the
//! gaps where the first fit put a protocol breakpoint.

/// 1, 2, 4, … bytes up to and including `max_bytes` (and `max_bytes`
/// itself when it is not a power of two).
pub fn powers_of_two(max_bytes: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..64)
        .map(|k| 1u64 << k)
        .take_while(|&b| b <= max_bytes)
        .collect();
    if max_bytes > 0 && v.last() != Some(&max_bytes) {
        v.push(max_bytes);
    }
    v
}

/// New sizes near each breakpoint.
///
/// A breakpoint lies between two consecutive measured sizes lo < b < hi.
/// That gap gets `per_gap` sizes evenly spaced in log2 (lo·(hi/lo)^(k/(per_gap+1)),
/// k = 1..=per_gap); each of the two neighbouring gaps gets its log2
/// midpoint when `per_gap` ≥ 2. Sizes are rounded to whole bytes; sizes
/// already measured and duplicates are dropped. The result is sorted.
pub fn refine(breakpoints: &[f64], measured: &[u64], per_gap: usize) -> Vec<u64> {
    let mut sorted = measured.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = Vec::new();
    for &b in breakpoints {
        // The gap holding b: index i with sorted[i] < b < sorted[i + 1].
        let Some(i) = sorted
            .windows(2)
            .position(|w| (w[0] as f64) < b && b < w[1] as f64)
        else {
            continue;
        };
        fill_gap(&sorted, i, per_gap, &mut out);
        if per_gap >= 2 {
            if i > 0 {
                fill_gap(&sorted, i - 1, 1, &mut out);
            }
            if i + 2 < sorted.len() {
                fill_gap(&sorted, i + 1, 1, &mut out);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|s| sorted.binary_search(s).is_err());
    out
}

/// Pushes `k` log-spaced sizes strictly inside the gap sorted[i]..sorted[i+1].
fn fill_gap(sorted: &[u64], i: usize, k: usize, out: &mut Vec<u64>) {
    let (lo, hi) = (sorted[i] as f64, sorted[i + 1] as f64);
    for m in 1..=k {
        let s = (lo * (hi / lo).powf(m as f64 / (k + 1) as f64)).round() as u64;
        if (s as f64) > lo && (s as f64) < hi {
            out.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_up_to_max() {
        assert_eq!(powers_of_two(16), vec![1, 2, 4, 8, 16]);
        assert_eq!(powers_of_two(20), vec![1, 2, 4, 8, 16, 20]);
        assert_eq!(powers_of_two(16 << 20).len(), 25);
        assert!(powers_of_two(0).is_empty());
    }

    #[test]
    fn refines_the_gap_and_its_neighbours() {
        let measured = powers_of_two(1 << 20);
        // A break between 2 KiB and 4 KiB.
        let new = refine(&[3072.0], &measured, 3);
        // Quarter octaves of 2048..4096: 2435, 2896, 3444.
        assert!(new.contains(&2435) && new.contains(&2896) && new.contains(&3444));
        // Log midpoints of the neighbouring gaps.
        assert!(new.contains(&1448) && new.contains(&5793));
        assert_eq!(new.len(), 5);
        assert!(new.windows(2).all(|w| w[0] < w[1]));
        // One point per gap in quick mode, no neighbours.
        assert_eq!(refine(&[3072.0], &measured, 1), vec![2896]);
    }

    #[test]
    fn no_new_sizes_where_no_integer_fits_or_no_gap() {
        let measured = powers_of_two(64);
        assert!(refine(&[1.5], &measured, 1).is_empty());
        // ... but its neighbouring gap 2..4 does get its midpoint.
        assert_eq!(refine(&[1.5], &measured, 3), vec![3]);
        // A breakpoint outside the measured range is ignored.
        assert!(refine(&[1e9], &measured, 3).is_empty());
        // Sizes already measured are not repeated.
        let mut m = measured.clone();
        m.push(45);
        assert!(!refine(&[48.0], &m, 3).contains(&45));
    }
}
