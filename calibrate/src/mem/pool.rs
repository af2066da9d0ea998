//! Huge-page memory kept resident between working sets.
//!
//! On a VM, touching huge pages the guest has not backed recently costs the
//! host's page faults: 0.3–1.6 s for each 128–512 MiB working set on the
//! 2-vCPU Xeon VM, so that one `--quick` run spent about 6 s of its 18 s
//! faulting (see [`super`]). So a dropped region is not unmapped but kept
//! here, resident and backed by huge pages, and the next region on the same
//! NUMA node is carved out of it: a run faults its largest working set in
//! once. A region of base pages is made from pooled memory by dropping and
//! touching its pages again (0.2 s for 512 MiB), and made huge again when
//! it is dropped by collapsing them (`MADV_COLLAPSE`, 0.13–0.15 s for
//! 512 MiB, where fresh huge pages took 2.5–3.8 s in the same C program);
//! where the kernel cannot collapse (before Linux 6.1) it is unmapped.
//!
//! The pool is a free list of 2 MiB-aligned address ranges: a request takes
//! the front of the smallest range that holds it, a range given back merges
//! with its free neighbours. It never raises the process's peak memory:
//! regions in use and pooled together stay within the most the run has had
//! in use at once, pooled ranges being unmapped, smallest first, to keep
//! them there. Until [`enable`] is called (as in tests) nothing is kept.

use std::sync::Mutex;

/// A 2 MiB-aligned range of mapped, resident memory on one NUMA node
/// (`None`: unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Start address.
    pub start: usize,
    /// Length, bytes (a whole number of huge pages).
    pub len: usize,
    /// Smallest CPU of the NUMA node its pages were placed on.
    pub node: Option<usize>,
}

impl Range {
    fn end(&self) -> usize {
        self.start + self.len
    }
}

/// The free list and the byte counts that limit it.
#[derive(Debug, Default)]
pub struct Pool {
    /// Whether dropped regions are kept.
    enabled: bool,
    /// Bytes of regions in use (either page size).
    in_use: usize,
    /// The most bytes of regions ever in use at once.
    peak: usize,
    /// Pooled ranges, by start address.
    free: Vec<Range>,
}

impl Pool {
    /// Bytes pooled.
    fn pooled(&self) -> usize {
        self.free.iter().map(|r| r.len).sum()
    }

    /// A pooled range of `len` bytes on `node`: the front of the smallest
    /// range that holds it, the rest staying pooled.
    pub fn take(&mut self, len: usize, node: Option<usize>) -> Option<Range> {
        let (i, _) = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, r)| r.node == node && r.len >= len)
            .min_by_key(|(_, r)| r.len)?;
        let r = &mut self.free[i];
        let taken = Range {
            start: r.start,
            len,
            node,
        };
        r.start += len;
        r.len -= len;
        if r.len == 0 {
            self.free.remove(i);
        }
        self.in_use += len;
        Some(taken)
    }

    /// Whether dropped regions are kept.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Counts `len` fresh bytes as in use, and returns the pooled ranges
    /// to unmap before mapping them.
    pub fn fresh(&mut self, len: usize) -> Vec<Range> {
        self.in_use += len;
        self.peak = self.peak.max(self.in_use);
        self.evict()
    }

    /// Counts `len` bytes as no longer in use.
    pub fn release(&mut self, len: usize) {
        self.in_use -= len;
    }

    /// Pools `r` (released before, backed by huge pages) and returns the
    /// ranges to unmap: `r` itself when nothing is kept.
    pub fn keep(&mut self, r: Range) -> Vec<Range> {
        if !self.enabled {
            return vec![r];
        }
        let at = self.free.partition_point(|f| f.start < r.start);
        self.free.insert(at, r);
        // Merge with the free neighbours on the same node.
        if at + 1 < self.free.len() && joins(&self.free[at], &self.free[at + 1]) {
            self.free[at].len += self.free.remove(at + 1).len;
        }
        if at > 0 && joins(&self.free[at - 1], &self.free[at]) {
            self.free[at - 1].len += self.free.remove(at).len;
        }
        self.evict()
    }

    /// Unmaps pooled memory, the smallest ranges first (the last one
    /// only in part, from its end), while regions in use and pooled
    /// together exceed the peak in use.
    fn evict(&mut self) -> Vec<Range> {
        let mut excess = (self.in_use + self.pooled()).saturating_sub(self.peak);
        let mut out = Vec::new();
        while excess > 0 {
            let Some((i, _)) = self.free.iter().enumerate().min_by_key(|(_, r)| r.len) else {
                break;
            };
            let r = &mut self.free[i];
            if r.len <= excess {
                excess -= r.len;
                out.push(self.free.remove(i));
            } else {
                r.len -= excess;
                out.push(Range {
                    start: r.end(),
                    len: excess,
                    node: r.node,
                });
                excess = 0;
            }
        }
        out
    }
}

/// Whether `b` starts where `a` ends, on the same node.
fn joins(a: &Range, b: &Range) -> bool {
    a.end() == b.start && a.node == b.node
}

/// The process's pool.
pub static POOL: Mutex<Pool> = Mutex::new(Pool {
    enabled: false,
    in_use: 0,
    peak: 0,
    free: Vec::new(),
});

/// From now on, dropped regions are kept for the next ones.
pub fn enable() {
    super::lock_pool().enabled = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    fn range(start_mib: usize, len_mib: usize) -> Range {
        Range {
            start: start_mib * MIB,
            len: len_mib * MIB,
            node: Some(0),
        }
    }

    /// Drops a region of `r`'s range: released, then kept.
    fn give_back(p: &mut Pool, r: Range) -> Vec<Range> {
        p.release(r.len);
        p.keep(r)
    }

    fn pool() -> Pool {
        Pool {
            enabled: true,
            ..Pool::default()
        }
    }

    #[test]
    fn a_request_takes_the_front_of_the_smallest_range_that_holds_it() {
        let mut p = pool();
        assert!(p.fresh(512 * MIB).is_empty());
        assert!(p.fresh(256 * MIB).is_empty());
        assert!(give_back(&mut p, range(0, 512)).is_empty());
        assert!(give_back(&mut p, range(1024, 256)).is_empty());
        assert_eq!(p.take(128 * MIB, Some(0)), Some(range(1024, 128)));
        assert_eq!(p.take(256 * MIB, Some(0)), Some(range(0, 256)));
        assert_eq!(p.take(256 * MIB, Some(1)), None, "another node's memory");
        assert_eq!(p.take(512 * MIB, Some(0)), None, "no range holds it");
        assert_eq!(p.free, vec![range(256, 256), range(1152, 128)]);
    }

    #[test]
    fn ranges_given_back_merge_with_free_neighbours() {
        let mut p = pool();
        p.fresh(512 * MIB);
        give_back(&mut p, range(0, 512));
        let a = p.take(256 * MIB, Some(0)).unwrap();
        let b = p.take(256 * MIB, Some(0)).unwrap();
        assert!(p.free.is_empty());
        give_back(&mut p, b);
        give_back(&mut p, a);
        assert_eq!(p.free, vec![range(0, 512)]);
        assert_eq!(p.take(512 * MIB, Some(0)), Some(range(0, 512)));
    }

    #[test]
    fn the_pool_never_raises_the_peak_in_use() {
        let mut p = pool();
        p.fresh(512 * MIB);
        p.fresh(64 * MIB);
        assert!(give_back(&mut p, range(4096, 64)).is_empty());
        assert!(give_back(&mut p, range(0, 512)).is_empty());
        // 576 MiB pooled, the peak: 64 MiB fresh unmaps the smallest range.
        assert_eq!(p.fresh(64 * MIB), vec![range(4096, 64)]);
        // 512 MiB pooled and 64 in use: 32 MiB more come off the end of
        // the 512 MiB range.
        assert_eq!(p.fresh(32 * MIB), vec![range(480, 32)]);
        assert_eq!(p.free, vec![range(0, 480)]);
    }

    #[test]
    fn until_enabled_nothing_is_kept() {
        let mut p = Pool::default();
        p.fresh(512 * MIB);
        assert_eq!(give_back(&mut p, range(0, 512)), vec![range(0, 512)]);
        assert!(p.free.is_empty());
    }
}
