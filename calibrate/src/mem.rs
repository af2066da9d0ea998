//! Working-set memory straight from the kernel: anonymous `mmap` regions,
//! 2 MiB-aligned, with an explicit page policy, kept resident for the next
//! region when dropped ([`pool`]) without ever raising the peak memory
//! beyond what the regions in use needed at once.
//!
//! [`Pages::Huge`] offers transparent huge pages with
//! `madvise(MADV_HUGEPAGE)`; whether the kernel granted them is read back
//! from `/proc/self/smaps` ([`Region::huge_page_bytes`]). [`Pages::Small`]
//! asks for `MADV_NOHUGEPAGE`, so the 4 KiB figure stays a 4 KiB figure even
//! where THP is set to `always`. The difference of a pointer chase between the
//! two policies is the TLB's part of the latency.
//!
//! # First touch on a virtual machine
//!
//! The first touch of memory the host has not backed yet costs the host's
//! page faults on top of the guest's zeroing. Measured with a C program on
//! the 2-vCPU Xeon VM: touching 512 MiB of fresh huge pages took 4.7–6.1 s
//! in a new process, 0.07–0.09 s when the same amount was freed (`munmap`)
//! up to 1 s before, 1.7 s after 2 s and 6 s after 8 s (the guest hands
//! freed memory back to its host within seconds), and 6.1 s for huge pages
//! right after 512 MiB of base pages were freed. A `calibrate` run
//! therefore keeps the regions it drops resident for the next ones
//! ([`pool`]).
//!
//! The host serves its faults per vCPU, so [`Region::new`] faults a large
//! region in with every CPU the process may use on the calling thread's
//! NUMA node, each touching its own slice: 512 MiB of fresh huge pages
//! then took 1.8–1.9 s on 2 vCPUs, against 3.3–3.6 s with one (alternated
//! runs of a C program). The pages still come from the node the caller
//! runs on, as they would with its own first touch.

use std::fmt;

use anyhow::{bail, Result};
use core_affinity::CoreId;

use crate::pin::{current_cpu, pin_current, process_cpus};
use crate::sysinfo::node_cpus;

pub mod array;
pub mod pool;
pub use array::Array;
use pool::{Range, POOL};

/// Size and alignment of an x86-64 huge page, 2 MiB.
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The page policy of a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pages {
    /// Base pages (4 KiB on x86-64): `madvise(MADV_NOHUGEPAGE)`.
    Small,
    /// Transparent huge pages offered with `madvise(MADV_HUGEPAGE)`.
    Huge,
}

impl Pages {
    /// Both policies, huge first: the pool hands out huge pages as they
    /// are, base pages after dropping and touching them again.
    pub const BOTH: [Pages; 2] = [Pages::Huge, Pages::Small];

    /// "4KiB" or "2MiB", as tables and JSON show it.
    pub fn label(self) -> &'static str {
        match self {
            Pages::Small => "4KiB",
            Pages::Huge => "2MiB",
        }
    }

    /// The `madvise` advice that asks for this policy.
    fn advice(self) -> libc::c_int {
        match self {
            Pages::Small => libc::MADV_NOHUGEPAGE,
            Pages::Huge => libc::MADV_HUGEPAGE,
        }
    }
}

impl fmt::Display for Pages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pages::Small => "small",
            Pages::Huge => "huge",
        })
    }
}

/// Base page size, the step of the first touch.
const BASE_PAGE_BYTES: usize = 4096;

/// Regions from this size on are faulted in by several threads: below it
/// the touch takes a few milliseconds, about what starting threads costs.
const PARALLEL_TOUCH_BYTES: usize = 32 << 20;

/// Anonymous private memory of at least `len` bytes whose start is
/// 2 MiB-aligned. Its pages are resident from the start, placed on the NUMA
/// node of the thread that made it (see [`Region::new`]).
pub struct Region {
    range: Range,
    len: usize,
    pages: Pages,
}

// SAFETY: a Region exclusively owns its range of memory; moving it to another thread
// moves that ownership, and shared references only hand out shared slices.
unsafe impl Send for Region {}
// SAFETY: `&Region` only gives read access (`as_slice`); writes need `&mut`.
unsafe impl Sync for Region {}

impl Region {
    /// `len` bytes (rounded up to whole huge pages) with `pages` policy,
    /// resident, so that no benchmark times a first touch: from the
    /// [`pool`] when it holds enough on this thread's NUMA node (made of
    /// base pages first, for [`Pages::Small`]), else a fresh mapping
    /// faulted in (`fault_in`). A fresh region reads as zeros; one from
    /// the pool holds what its last user wrote.
    pub fn new(len: usize, pages: Pages) -> Result<Self> {
        if len == 0 {
            bail!("a working set of 0 bytes cannot be mapped");
        }
        let rounded = len.div_ceil(HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES;
        let node = current_cpu()
            .and_then(node_cpus)
            .and_then(|n| n.into_iter().min());
        let pooled = lock_pool().take(rounded, node);
        let range = match pooled {
            Some(range) => {
                if pages == Pages::Small {
                    advise(range, libc::MADV_NOHUGEPAGE);
                    advise(range, libc::MADV_DONTNEED);
                    fault_in(range.start, rounded);
                }
                range
            }
            None => {
                let evicted = lock_pool().fresh(rounded);
                unmap(&evicted);
                let range = map_fresh(rounded, node).inspect_err(|_| {
                    lock_pool().release(rounded);
                })?;
                advise(range, pages.advice());
                fault_in(range.start, rounded);
                range
            }
        };
        Ok(Self { range, len, pages })
    }

    /// Bytes asked for.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: a region holds at least one byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Start address (2 MiB-aligned).
    pub fn as_ptr(&self) -> *const u8 {
        self.range.start as *const u8
    }

    /// The region as `u64` words (len / 8 of them).
    pub fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: the start is 2 MiB-aligned (so 8-aligned), the mapping is
        // readable, writable and initialised (zero-filled by the kernel, or
        // written before) for len bytes, every bit pattern is a u64, and
        // `&mut self` makes the slice unique.
        unsafe { std::slice::from_raw_parts_mut(self.range.start as *mut u64, self.len / 8) }
    }

    /// The region as `AtomicU32` items (len / 4 of them), the output type
    /// of [`crate::kernels::bins::scatter`].
    pub fn atomic_u32s(&mut self) -> &[std::sync::atomic::AtomicU32] {
        // SAFETY: as in `words_mut`; an AtomicU32 has the size, alignment
        // and bit validity of a u32.
        unsafe { std::slice::from_raw_parts(self.range.start as *const _, self.len / 4) }
    }

    /// The region as `f64` values (len / 8 of them).
    pub fn f64s_mut(&mut self) -> &mut [f64] {
        // SAFETY: as in `words_mut`; every bit pattern is an f64.
        unsafe { std::slice::from_raw_parts_mut(self.range.start as *mut f64, self.len / 8) }
    }

    /// Bytes of this region the kernel backs with huge pages now, read from
    /// the `AnonHugePages` line of its mapping in `/proc/self/smaps` (capped
    /// at the region's length; a merged neighbouring mapping can add to the
    /// count). `None` when smaps cannot be read.
    pub fn huge_page_bytes(&self) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        anon_huge_bytes(&smaps, self.range.start).map(|b| b.min(self.len as u64))
    }
}

/// Writes a zero byte to every base page of `[start, start + len)`, which
/// the kernel has just mapped and no one references yet. A region of
/// [`PARALLEL_TOUCH_BYTES`] or more is split between the process's CPUs on
/// the calling thread's NUMA node, one pinned thread each; elsewhere (or
/// where the node is unknown) the caller touches it alone.
fn fault_in(start: usize, len: usize) {
    let touch = |from: usize, to: usize| {
        for addr in (from..to).step_by(BASE_PAGE_BYTES) {
            // SAFETY: addr lies in the fresh, writable mapping, and no slice
            // of it exists yet; the kernel zero-fills it, so a zero keeps it.
            unsafe { std::ptr::write_volatile(addr as *mut u8, 0) };
        }
    };
    let helpers: Vec<_> = match current_cpu().and_then(node_cpus) {
        Some(node) if len >= PARALLEL_TOUCH_BYTES => process_cpus()
            .into_iter()
            .filter(|c| node.contains(c))
            .map(|id| CoreId { id })
            .collect(),
        _ => Vec::new(),
    };
    if helpers.len() < 2 {
        return touch(start, start + len);
    }
    let chunk = len
        .div_ceil(helpers.len())
        .next_multiple_of(HUGE_PAGE_BYTES);
    std::thread::scope(|s| {
        for (i, &cpu) in helpers.iter().enumerate() {
            let from = start + i * chunk;
            let to = (from + chunk).min(start + len);
            if from < to {
                s.spawn(move || {
                    pin_current(cpu);
                    touch(from, to);
                });
            }
        }
    });
}

impl Drop for Region {
    /// Back to the [`pool`], base pages collapsed into huge pages first,
    /// or to the OS when the pool is off or the pages cannot be collapsed.
    fn drop(&mut self) {
        let keep = lock_pool().enabled()
            && match self.pages {
                Pages::Huge => true,
                Pages::Small => {
                    advise(self.range, libc::MADV_HUGEPAGE);
                    advise(self.range, libc::MADV_COLLAPSE)
                }
            };
        let unmapped = {
            let mut pool = lock_pool();
            pool.release(self.range.len);
            if keep {
                pool.keep(self.range)
            } else {
                vec![self.range]
            }
        };
        unmap(&unmapped);
    }
}

/// The process's pool, even if a thread panicked while holding it (its
/// lists change in single steps).
fn lock_pool() -> std::sync::MutexGuard<'static, pool::Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `madvise(advice)` over `r`; whether the kernel took it. A refused
/// paging hint (THP compiled out) is harmless: it shows in
/// [`Region::huge_page_bytes`].
fn advise(r: Range, advice: libc::c_int) -> bool {
    // SAFETY: r lies in a mapping this module made and owns; the advice
    // changes only the paging of its pages, and MADV_DONTNEED is given
    // only for a range no region or slice refers to.
    unsafe { libc::madvise(r.start as *mut libc::c_void, r.len, advice) == 0 }
}

/// A fresh mapping of `len` bytes (whole huge pages) starting on a huge
/// page, nothing touched yet.
fn map_fresh(len: usize, node: Option<usize>) -> Result<Range> {
    let map_len = len + HUGE_PAGE_BYTES;
    // SAFETY: an anonymous private mapping with no address hint has no
    // preconditions; the result is checked against MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        bail!(
            "could not map {} bytes: {}",
            map_len,
            std::io::Error::last_os_error()
        );
    }
    let base = p as usize;
    let start = base.next_multiple_of(HUGE_PAGE_BYTES);
    // The slack before and after the aligned range goes back at once, so
    // that every range can later be unmapped on its own.
    let end = start + len;
    unmap(&[
        Range {
            start: base,
            len: start - base,
            node,
        },
        Range {
            start: end,
            len: base + map_len - end,
            node,
        },
    ]);
    Ok(Range { start, len, node })
}

/// Unmaps each of `ranges`, which no region uses any more.
fn unmap(ranges: &[Range]) {
    for r in ranges.iter().filter(|r| r.len > 0) {
        // SAFETY: each range lies in a mapping this module made, and no
        // region or pooled range refers to it any more.
        unsafe {
            libc::munmap(r.start as *mut libc::c_void, r.len);
        }
    }
}

/// `AnonHugePages` (bytes) of the smaps entry whose range contains `addr`.
fn anon_huge_bytes(smaps: &str, addr: usize) -> Option<u64> {
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ') {
            if let Some((lo, hi)) = range.split_once('-') {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = lo <= addr && addr < hi;
                    continue;
                }
            }
        }
        if inside {
            if let Some(rest) = line.strip_prefix("AnonHugePages:") {
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                return Some(kb * 1024);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_aligned_zeroed_and_writable() {
        for pages in Pages::BOTH {
            let mut r = Region::new(3 * 4096 + 8, pages).unwrap();
            assert_eq!(r.as_ptr() as usize % HUGE_PAGE_BYTES, 0);
            let w = r.words_mut();
            assert_eq!(w.len(), (3 * 4096 + 8) / 8);
            assert!(w.iter().all(|&x| x == 0));
            w.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64);
            assert_eq!(r.words_mut()[100], 100);
        }
        assert!(Region::new(0, Pages::Small).is_err());
    }

    #[test]
    fn smaps_parsing() {
        let smaps = "7f0000000000-7f0000400000 rw-p 00000000 00:00 0\nSize: 4096 kB\nAnonHugePages:      2048 kB\n7f0000400000-7f0000800000 rw-p 00000000 00:00 0\nAnonHugePages:         0 kB\n";
        assert_eq!(anon_huge_bytes(smaps, 0x7f0000100000), Some(2048 * 1024));
        assert_eq!(anon_huge_bytes(smaps, 0x7f0000400000), Some(0));
        assert_eq!(anon_huge_bytes(smaps, 0x100), None);
    }
}
