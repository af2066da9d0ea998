//! The memory a kernel of `predict run` allocates for a `--size`, checked
//! against a budget before anything is allocated, as `calibrate
//! --max-memory` checks its working sets: a size that does not fit is
//! refused with one line saying how much it needs and how much there is.

use models::units::binary_bytes;

use crate::error::BadInput;

/// Bytes `kernel` allocates at `size` on `threads` threads (the default
/// size when `size` is `None`), counting its arrays:
///
/// - fusion: seven f32 arrays of `size` elements (A, B, C, D, E and the
///   three-pass temporaries);
/// - stencil: per thread a source and a destination band of
///   (8 Mi/size + 6) rows of `size` f32;
/// - false-sharing: a few cache lines;
/// - binning: per particle two f32 coordinates, a list link, the counting
///   sort's cell, order and output entries and the reference binning
///   (40 bytes);
/// - matmul: three n×n f64 matrices.
pub fn bytes_needed(kernel: &str, size: Option<usize>, threads: usize) -> f64 {
    let s = |default: usize| size.unwrap_or(default) as f64;
    let t = threads.max(1) as f64;
    match kernel {
        "fusion" => 7.0 * 4.0 * s(16 << 20),
        "stencil" => {
            let w = s(2 << 20).max(1.0);
            t * 2.0 * 4.0 * ((8.0 * 1048576.0 / w).floor() + 6.0) * w
        }
        "binning" => 40.0 * s(1 << 20),
        "matmul" => 3.0 * 8.0 * s(1024).powi(2),
        _ => 64.0 * 64.0 * t,
    }
}

/// The budget: `max_memory`, else a quarter of the RAM (as `calibrate`),
/// and how it was chosen.
///
/// # Errors
/// [`BadInput`] for a `--max-memory` of zero or above the RAM.
pub fn budget(max_memory: Option<f64>, ram_bytes: u64) -> Result<(f64, String), BadInput> {
    let ram = ram_bytes as f64;
    match max_memory {
        Some(b) if b.is_nan() || b <= 0.0 => Err(BadInput(format!(
            "--max-memory {b} is not accepted: it must be a size > 0, e.g. 4GiB"
        ))),
        Some(b) if ram > 0.0 && b > ram => Err(BadInput(format!(
            "--max-memory {} is more than this machine's {} of RAM",
            binary_bytes(b),
            binary_bytes(ram)
        ))),
        Some(b) => Ok((b, format!("--max-memory {}", binary_bytes(b)))),
        None => Ok((
            ram / 4.0,
            format!("a quarter of the {} of RAM", binary_bytes(ram)),
        )),
    }
}

/// Refuses a kernel whose arrays exceed the budget.
///
/// # Errors
/// [`BadInput`]: "--size N: the K kernel needs X, more than the Y of
/// the budget's source".
pub fn check(
    kernel: &str,
    size: Option<usize>,
    threads: usize,
    budget: (f64, &str),
) -> Result<(), BadInput> {
    let need = bytes_needed(kernel, size, threads);
    let (have, source) = budget;
    if have <= 0.0 || need <= have {
        return Ok(());
    }
    let given = size.map_or_else(|| "the default size".to_string(), |s| format!("--size {s}"));
    Err(BadInput(format!(
        "{given}: the {kernel} kernel needs {} of memory, more than the {} allowed ({source}); pass a smaller --size or raise --max-memory",
        binary_bytes(need),
        binary_bytes(have)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_fusion_is_refused_with_both_figures() {
        let e = check(
            "fusion",
            Some(99_999_999_999),
            2,
            (4.0 * 1073741824.0, "test"),
        )
        .unwrap_err();
        assert!(
            e.0.contains("fusion kernel needs") && e.0.contains("4 GiB"),
            "{e}"
        );
        assert!(!e.0.contains('\n'));
        check("fusion", Some(1 << 20), 2, (4.0 * 1073741824.0, "test")).unwrap();
    }

    #[test]
    fn each_kernel_counts_its_arrays() {
        assert_eq!(bytes_needed("fusion", Some(1000), 1), 28000.0);
        assert_eq!(bytes_needed("matmul", Some(100), 4), 240000.0);
        assert_eq!(bytes_needed("binning", Some(10), 1), 400.0);
        // Default stencil: rows of 2 Mi f32, 4 + 6 rows, two bands, 2 threads.
        assert_eq!(
            bytes_needed("stencil", None, 2),
            2.0 * 2.0 * 4.0 * 10.0 * 2097152.0
        );
        assert!(bytes_needed("false-sharing", Some(1 << 30), 2) < 1e6);
    }

    #[test]
    fn the_default_budget_is_a_quarter_of_ram() {
        let (b, why) = budget(None, 8 << 30).unwrap();
        assert_eq!(b, 2.0 * 1073741824.0);
        assert!(why.contains("quarter"), "{why}");
        assert_eq!(budget(Some(1e9), 8 << 30).unwrap().0, 1e9);
        assert!(budget(Some(0.0), 8 << 30).is_err());
        assert!(budget(Some(1e12), 8 << 30).unwrap_err().0.contains("RAM"));
    }
}
