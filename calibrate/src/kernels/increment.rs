//! Counter increments as the lecture's false-sharing example does them
//! (§3.4: `counter[tid]++`): a dependent load, add and store of one 8-byte
//! word, `Relaxed` so that it compiles to plain moves with no locked
//! instruction. Each thread only ever touches its own word, so there is no
//! data race; whether the words share a cache line is the experiment.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters of up to eight threads on one 64-byte line.
#[repr(align(64))]
#[derive(Default)]
pub struct SharedLine(pub [AtomicU64; 8]);

/// A counter alone on its 64-byte line.
#[repr(align(64))]
#[derive(Default)]
pub struct OwnLine(pub AtomicU64);

/// `incs` dependent increments of `x`.
#[inline(always)]
pub fn bump(x: &AtomicU64, incs: u64) {
    for _ in 0..incs {
        x.store(x.load(Relaxed) + 1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_and_counts() {
        assert_eq!(std::mem::size_of::<SharedLine>(), 64);
        assert_eq!(std::mem::size_of::<OwnLine>(), 64);
        let line = SharedLine::default();
        std::thread::scope(|s| {
            for w in &line.0[..4] {
                s.spawn(move || bump(w, 1000));
            }
        });
        assert!(line.0[..4].iter().all(|w| w.load(Relaxed) == 1000));
    }
}
