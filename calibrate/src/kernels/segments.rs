//! STREAM's copy run in segments: each array is cut into runs of `seg`
//! elements and a sweep copies every other run, then the runs between
//! (the traversal of a sweep tiled two columns wide). Every run starts a
//! new stream at a new address, where the prefetchers must find it again;
//! its time against the contiguous copy of the same arrays is what a
//! stream's restart costs.

use std::hint::black_box;

use super::stream::stride;
use super::Isa;

/// Runs `sweeps` copies `a = b + 0.0` (as [`super::stream`]'s copy) over `n`
/// elements per array carved from `mem` (b at word [`stride`]`(n)`), in runs
/// of `seg` elements: the even runs, then the odd ones. `seg ≥ n` is the
/// contiguous copy. Returns a checksum.
///
/// # Panics
/// If `seg` is 0, `mem` is shorter than the two arrays or `isa` is not
/// supported by the running CPU.
pub fn copy_segments(isa: Isa, mem: &mut [f64], n: usize, seg: usize, sweeps: u64) -> f64 {
    assert!(seg > 0, "a segment holds at least one element");
    assert!(mem.len() >= stride(n) + n, "region too small");
    assert!(isa.supported(), "{isa} is not available on this CPU");
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: support for the features each function is compiled for
        // was checked just above.
        Isa::Avx512 => unsafe { copy_avx512(mem, n, seg, sweeps) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { copy_avx2(mem, n, seg, sweeps) },
        _ => copy_generic(mem, n, seg, sweeps),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn copy_avx512(mem: &mut [f64], n: usize, seg: usize, sweeps: u64) -> f64 {
    copy_generic(mem, n, seg, sweeps)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn copy_avx2(mem: &mut [f64], n: usize, seg: usize, sweeps: u64) -> f64 {
    copy_generic(mem, n, seg, sweeps)
}

#[inline(always)]
fn copy_generic(mem: &mut [f64], n: usize, seg: usize, sweeps: u64) -> f64 {
    let (a, b) = mem.split_at_mut(stride(n));
    let (a, b) = (&mut a[..n], &b[..n]);
    for _ in 0..sweeps {
        let a = black_box(&mut *a);
        let b = black_box(b);
        for first in [0, seg] {
            let mut start = first;
            while start < n {
                let end = (start + seg).min(n);
                a[start..end]
                    .iter_mut()
                    .zip(&b[start..end])
                    .for_each(|(x, y)| *x = y + 0.0);
                start += 2 * seg;
            }
        }
    }
    a.first().copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_copied_once_per_sweep_whatever_the_segment() {
        let n = 1000;
        for seg in [1, 7, 64, 999, 1000, 5000] {
            let mut mem = vec![0.0; stride(n) + n];
            for (i, x) in mem[stride(n)..].iter_mut().enumerate() {
                *x = i as f64;
            }
            copy_segments(Isa::detect(), &mut mem, n, seg, 2);
            assert!(
                mem[..n].iter().enumerate().all(|(i, x)| *x == i as f64),
                "segment {seg}"
            );
        }
    }
}
