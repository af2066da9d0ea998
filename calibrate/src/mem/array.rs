//! A kernel's array laid out as `calibrate` lays out its STREAM arrays, so
//! that a kernel runs on the layout its bandwidths were measured on.
//!
//! The STREAM arrays start on a huge page plus array j's stagger,
//! j·[`STAGGER_BYTES`] modulo [`STAGGER_PERIOD_BYTES`], on memory offered
//! transparent huge pages whole. A `Vec` from the allocator starts 16 bytes
//! into a page instead, so:
//! - the huge-page advice covered only the whole huge pages inside the
//!   buffer: none of a 2 MiB array, one of a 4 MiB one;
//! - every array of a kernel had the same address bits below 4 KiB, where
//!   loads of one and stores to another at the same index alias;
//! - rows with a line-multiple stride started 16 bytes into a line.
//!
//! Measured on the 2-vCPU Zen 4 VM, each pair alternated:
//! - a 1024³ dgemm ran at 45–47 GFLOP/s on matrices 16 or 32 bytes off a
//!   line and at 52–54 GFLOP/s on line-aligned ones (one thread);
//! - `predict`'s data-parallel sort of 1 Mi particles took 0.86–0.94 ms
//!   on `Vec`s and 0.70–0.75 ms on these arrays (two threads, six times);
//! - its fused fusion loop took 11.3–11.6 ms on `Vec`s and 10.7–11.4 ms on
//!   these (one thread, four times).

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use super::HUGE_PAGE_BYTES;
use crate::kernels::stream::{STAGGER_BYTES, STAGGER_PERIOD_BYTES};

/// `len` values of `T` starting [`Array::offset`] bytes after a huge page
/// boundary; derefs to `[T]`.
pub struct Array<T> {
    ptr: NonNull<T>,
    len: usize,
    slot: usize,
    base: NonNull<u8>,
    layout: Layout,
}

// SAFETY: an Array owns its values as a Vec does.
unsafe impl<T: Send> Send for Array<T> {}
// SAFETY: `&Array` only hands out `&[T]`.
unsafe impl<T: Sync> Sync for Array<T> {}

impl<T> Array<T> {
    /// `n` values `f(0), f(1), ...` as the kernel's array number `slot`
    /// (0 for its first array, 1 for its second, ...): on a huge page
    /// boundary plus [`Array::offset`]`(slot)`, the whole allocation
    /// offered transparent huge pages before its first touch.
    pub fn new(n: usize, slot: usize, mut f: impl FnMut(usize) -> T) -> Self {
        let offset = Self::offset(slot);
        let mut bytes = (offset + n * std::mem::size_of::<T>()).max(1);
        if bytes >= HUGE_PAGE_BYTES {
            bytes = bytes.next_multiple_of(HUGE_PAGE_BYTES);
        }
        let layout = Layout::from_size_align(bytes, HUGE_PAGE_BYTES)
            .expect("an array's size overflows the address space");
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc(layout) };
        let base = NonNull::new(base).unwrap_or_else(|| handle_alloc_error(layout));
        if bytes >= HUGE_PAGE_BYTES {
            // SAFETY: the allocation is whole huge pages from a huge page
            // boundary; madvise only changes the paging policy of pages
            // nothing has touched yet.
            unsafe {
                libc::madvise(base.as_ptr().cast(), bytes, libc::MADV_HUGEPAGE);
            }
        }
        // SAFETY: offset + n·size_of::<T>() ≤ layout.size(), and the offset
        // is a multiple of 64, so of T's alignment for every T used here.
        let ptr = unsafe { NonNull::new_unchecked(base.as_ptr().add(offset).cast::<T>()) };
        debug_assert!(ptr.as_ptr().is_aligned());
        let mut array = Self {
            ptr,
            len: 0,
            slot,
            base,
            layout,
        };
        for i in 0..n {
            // SAFETY: element i lies in the allocation and is not
            // initialised yet; `len` counts the initialised ones, so a
            // panic in `f` drops only those.
            unsafe { array.ptr.as_ptr().add(i).write(f(i)) };
            array.len = i + 1;
        }
        array
    }

    /// Bytes from a huge page boundary to the start of array number
    /// `slot`: slot·[`STAGGER_BYTES`] modulo [`STAGGER_PERIOD_BYTES`], as
    /// the STREAM arrays are placed.
    pub fn offset(slot: usize) -> usize {
        slot * STAGGER_BYTES % STAGGER_PERIOD_BYTES
    }
}

impl<T> std::ops::Deref for Array<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` values are initialised and owned.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> std::ops::DerefMut for Array<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the slice unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Clone> Clone for Array<T> {
    /// A copy in the same slot, on memory of its own.
    fn clone(&self) -> Self {
        Self::new(self.len, self.slot, |i| self[i].clone())
    }
}

impl<T: PartialEq> PartialEq for Array<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> Drop for Array<T> {
    fn drop(&mut self) {
        // SAFETY: the first `len` values are initialised and dropped once;
        // `base` came from `alloc` with `layout`.
        unsafe {
            std::ptr::drop_in_place(&mut **self as *mut [T]);
            dealloc(self.base.as_ptr(), self.layout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_hold_their_values_at_their_slots_offset() {
        for slot in 0..9 {
            let a = Array::new(3 << 18, slot, |i| i as u32);
            assert_eq!(a.len(), 3 << 18);
            assert!(a.iter().enumerate().all(|(i, &x)| x == i as u32));
            assert_eq!(
                a.as_ptr() as usize % HUGE_PAGE_BYTES,
                Array::<u32>::offset(slot)
            );
        }
        assert!(Array::new(0, 1, |_| 0u8).is_empty());
        let a = Array::new(5, 3, |i| i as f64);
        let b = a.clone();
        assert_eq!(a, b);
        assert_ne!(a.as_ptr(), b.as_ptr());
        assert_eq!(format!("{b:?}"), "[0.0, 1.0, 2.0, 3.0, 4.0]");
    }

    #[test]
    fn a_kernels_arrays_differ_below_4_kib() {
        let low: Vec<usize> = (0..8).map(|j| Array::<f64>::offset(j) % 4096).collect();
        let mut distinct = low.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), low.len(), "{low:?}");
        assert!(low.iter().all(|o| o % 64 == 0));
    }

    #[test]
    fn values_are_dropped_once() {
        let counter = std::rc::Rc::new(());
        let a = Array::new(100, 2, |_| counter.clone());
        assert_eq!(std::rc::Rc::strong_count(&counter), 101);
        drop(a);
        assert_eq!(std::rc::Rc::strong_count(&counter), 1);
    }
}
