//! Why a loop description is refused: each fault named as the flags name
//! it.

use thiserror::Error;

/// A description that does not describe a loop.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum DescriptionError {
    #[error("{what} must be a finite number > 0, not {}", crate::units::exact(*value))]
    NotPositive { what: String, value: f64 },
    #[error("{what} must be a whole number, not {}", crate::units::exact(*value))]
    NotWhole { what: String, value: f64 },
    #[error(
        "{what} = {} is beyond 2^53, where whole numbers are no longer exact",
        crate::units::exact(*value)
    )]
    TooLarge { what: String, value: f64 },
    #[error(
        "array {name}: the stride ({} B) is smaller than the {} B each iteration uses",
        crate::units::exact(*stride),
        crate::units::exact(*bytes)
    )]
    StrideTooSmall {
        name: String,
        stride: f64,
        bytes: f64,
    },
    #[error(
        "array {name}: the random region ({} B) is smaller than one {} B element",
        crate::units::exact(*region),
        crate::units::exact(*bytes)
    )]
    RegionTooSmall {
        name: String,
        region: f64,
        bytes: f64,
    },
    #[error(
        "--chain ({}) cannot exceed --flops ({}): each chained step is a flop or two",
        crate::units::exact(*chain),
        crate::units::exact(*flops)
    )]
    ChainAboveFlops { chain: f64, flops: f64 },
    #[error(
        "--span ({}) cannot exceed --flops ({}): each dependent step is a flop or two",
        crate::units::exact(*span),
        crate::units::exact(*flops)
    )]
    SpanAboveFlops { span: f64, flops: f64 },
    #[error(
        "--span ({}) counts the dependent steps of an iteration's longest path: 0 (none) or 1 at least",
        crate::units::exact(*.0)
    )]
    SpanBelowOne(f64),
    #[error(
        "--segment ({}) is the iterations of one contiguous run: 1 at least",
        crate::units::exact(*.0)
    )]
    SegmentBelowOne(f64),
    #[error("--segment restarts the contiguous arrays' streams, and the loop has none: drop it, or give an array whose stride is its bytes")]
    SegmentWithoutStream,
    #[error(
        "--segment-stride ({}) is the iterations from one run's start to the next's: at least the run's --segment ({})",
        crate::units::exact(*stride),
        crate::units::exact(*segment)
    )]
    SegmentStrideBelowSegment { stride: f64, segment: f64 },
    #[error("--segment-stride says how far apart the runs of --segment start: give --segment too")]
    SegmentStrideWithoutSegment,
    #[error(
        "--windowed-reuse: a window of {} B is more than the {} B a thread touches over the whole loop, so nothing is loaded again across it",
        crate::units::exact(*window),
        crate::units::exact(*touched)
    )]
    WindowBeyondLoop { window: f64, touched: f64 },
    #[error("--flops, --chain and --span must be finite numbers >= 0")]
    NegativeFlops,
    #[error(
        "--reused must be a finite number of bytes >= 0, not {}",
        crate::units::exact(*.0)
    )]
    NegativeReuse(f64),
    #[error(
        "--windowed-reuse needs finite bytes >= 0 and a window >= 0, not {} B over {} B",
        crate::units::exact(*bytes),
        crate::units::exact(*window)
    )]
    BadWindow { bytes: f64, window: f64 },
    #[error(
        "--n {} is fewer iterations than --threads {threads}: every thread needs one at least",
        crate::units::exact(*n)
    )]
    FewerIterationsThanThreads { n: f64, threads: usize },
    #[error("two arrays are named {0}")]
    DuplicateName(String),
    #[error("the loop touches no array and does no flops: describe at least one")]
    Empty,
}

pub(super) fn positive(what: impl Into<String>, value: f64) -> Result<f64, DescriptionError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(DescriptionError::NotPositive {
            what: what.into(),
            value,
        })
    }
}
