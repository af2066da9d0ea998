//! Counter increments as the lecture's false-sharing example does them
//! (§3.4: `counter[tid]++`): a dependent load, add and store of one 8-byte
//! word, `Relaxed` so that it compiles to plain moves with no locked
//! instruction. Each thread only ever touches its own word, so there is no
//! data race; whether the words share a cache line is the experiment.
//!
//! The fix the lecture recommends, a local accumulator stored once at the
//! end, is [`LocalTable::sum`]: one L1 load and one dependent register add
//! per step.

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
///
/// Never inlined, so that every caller (the c2c benchmark, `predict`'s
/// false-sharing kernel) runs this one piece of machine code. Inlined, the
/// compiler picks the addressing mode per call site, and the two forms are
/// not alike: on a Golden Cove Xeon a dependent `inc qword [reg]` takes
/// 0.25 ns, since the core renames the memory operand, and
/// `inc qword [base + index·8]` 1.8 ns, the store-to-load forwarding
/// latency, on a counter alone on its line. The kernel's indexed loop once
/// ran 7× slower than the benchmark that predicts it for that reason alone.
pub fn bump(x: &AtomicU64, incs: u64) {
    for _ in 0..incs {
        x.store(x.load(Relaxed) + 1, Relaxed);
    }
}

/// Entries of the read-only table a local sum reads (8 KiB, in L1).
pub const TABLE: usize = 1024;

/// The read-only table of the local sum (the lecture's `ro[]`), entries
/// alternating 0 and 1.
pub struct LocalTable(Vec<AtomicU64>);

impl Default for LocalTable {
    fn default() -> Self {
        Self((0..TABLE as u64).map(|i| AtomicU64::new(i & 1)).collect())
    }
}

impl LocalTable {
    /// The sum of `steps` entries from `from` on (wrapping), kept in a
    /// register: one L1 load and one dependent add per step. Slices of the
    /// table keep bounds checks out of the inner loop.
    pub fn sum(&self, from: usize, steps: u64) -> u64 {
        let mut local = 0;
        let (mut left, mut from) = (steps, from % TABLE);
        while left > 0 {
            let run = ((TABLE - from) as u64).min(left) as usize;
            for x in &self.0[from..from + run] {
                local = chained_add(local, x.load(Relaxed));
            }
            left -= run as u64;
            from = 0;
        }
        local
    }
}

/// `a + b` as one add the compiler cannot reassociate: the sum stays one
/// chain of dependent adds, as in the lecture's C loop (one accumulator),
/// instead of being split over several accumulators.
#[inline(always)]
fn chained_add(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut sum = a;
        // SAFETY: one register add; no memory, no stack.
        unsafe {
            std::arch::asm!("add {s}, {b}", s = inout(reg) sum, b = in(reg) b, options(pure, nomem, nostack));
        }
        sum
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        a.wrapping_add(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_sums_wrap_around_the_table() {
        let t = LocalTable::default();
        assert_eq!(t.sum(0, 4), 2);
        assert_eq!(t.sum(TABLE - 1, 2), 1);
        assert_eq!(t.sum(1, 3 * TABLE as u64), 3 * TABLE as u64 / 2);
        assert_eq!(t.sum(5, 0), 0);
    }

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
