//! STREAM's copy that reads its source again two lags behind:
//! `a[j] = b[j] + (b[j − d] + b[j − 2d])`, the streams of a row-major
//! stencil sweep (the row below is new, the row itself and the row above
//! come back from a nearer level), with no stencil arithmetic. Between a
//! line's first read and its last, `2d` elements of `b` are read and `2d`
//! of `a` written: a reuse window of 4·d·8 bytes, the layer condition's
//! four rows. Against the plain copy of the same arrays it gives what a
//! read of lines a loop brought in before costs while its streams come
//! from beyond the caches.

use super::stream::stride;
use super::Isa;

/// Runs `sweeps` lagged copies over `n` elements per array carved from
/// `mem` (b at word [`stride`]`(n)`), lag `d` elements (0: STREAM's copy
/// `a = b + 0.0`). The first `2d` elements are copied plainly. Returns a
/// checksum.
///
/// # Panics
/// If `mem` is shorter than the two arrays, `2d > n` or `isa` is not
/// supported by the running CPU.
pub fn copy_lagged(isa: Isa, mem: &mut [f64], n: usize, d: usize, sweeps: u64) -> f64 {
    assert!(mem.len() >= stride(n) + n, "region too small");
    assert!(2 * d <= n, "the lag exceeds the arrays");
    assert!(isa.supported(), "{isa} is not available on this CPU");
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: support for the features each function is compiled for
        // was checked just above.
        Isa::Avx512 => unsafe { lagged_avx512(mem, n, d, sweeps) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { lagged_avx2(mem, n, d, sweeps) },
        _ => lagged_generic(mem, n, d, sweeps),
    }
}

/// Bytes read again per sweep of [`copy_lagged`]: two lagged reads of
/// each element past the first `2d`.
pub fn reread_bytes(n: usize, d: usize) -> f64 {
    if d == 0 {
        return 0.0;
    }
    16.0 * (n - 2 * d) as f64
}

/// The reuse window of lag `d`, bytes: 4·d·8.
pub fn window_bytes(d: usize) -> f64 {
    32.0 * d as f64
}

/// The lag whose window is `window_bytes`.
pub fn lag_for(window_bytes: f64) -> usize {
    (window_bytes / 32.0).round().max(1.0) as usize
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn lagged_avx512(mem: &mut [f64], n: usize, d: usize, sweeps: u64) -> f64 {
    lagged_generic(mem, n, d, sweeps)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn lagged_avx2(mem: &mut [f64], n: usize, d: usize, sweeps: u64) -> f64 {
    lagged_generic(mem, n, d, sweeps)
}

#[inline(always)]
fn lagged_generic(mem: &mut [f64], n: usize, d: usize, sweeps: u64) -> f64 {
    let (a, b) = mem.split_at_mut(stride(n));
    let (a, b) = (&mut a[..n], &b[..n]);
    for _ in 0..sweeps {
        let a = std::hint::black_box(&mut *a);
        let b = std::hint::black_box(b);
        let plain = if d == 0 { n } else { 2 * d };
        let (head, tail) = a.split_at_mut(plain);
        head.iter_mut()
            .zip(&b[..plain])
            .for_each(|(x, y)| *x = y + 0.0);
        if d > 0 {
            let m = n - 2 * d;
            let (now, once, twice) = (&b[2 * d..], &b[d..d + m], &b[..m]);
            tail.iter_mut()
                .zip(now)
                .zip(once.iter().zip(twice))
                .for_each(|((x, y), (u, v))| *x = y + (u + v));
        }
    }
    a.first().copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_its_source_plus_the_two_lagged_ones() {
        let n = 1000;
        for d in [0, 1, 7, 64, 500] {
            let mut mem = vec![0.0; stride(n) + n];
            for (i, x) in mem[stride(n)..].iter_mut().enumerate() {
                *x = i as f64;
            }
            copy_lagged(Isa::detect(), &mut mem, n, d, 2);
            for (j, x) in mem[..n].iter().enumerate() {
                let want = if d == 0 || j < 2 * d {
                    j as f64
                } else {
                    (3 * j - 3 * d) as f64
                };
                assert_eq!(*x, want, "lag {d}, element {j}");
            }
        }
        assert_eq!(reread_bytes(n, 0), 0.0);
        assert_eq!(reread_bytes(n, 100), 16.0 * 800.0);
        assert_eq!(lag_for(window_bytes(4096)), 4096);
    }
}
