//! The check of a loop description: every fault named as the flags name
//! it ([`DescriptionError`]).

use super::error::positive;
use super::{Access, DescriptionError, LoopKernel};

impl LoopKernel {
    /// Checks the description; every fault is named as the flags name it.
    pub fn validate(&self) -> Result<(), DescriptionError> {
        positive("--n", self.n)?;
        if self.n.fract() != 0.0 {
            return Err(DescriptionError::NotWhole {
                what: "--n".into(),
                value: self.n,
            });
        }
        if self.n > crate::error::MAX_EXACT_COUNT {
            return Err(DescriptionError::TooLarge {
                what: "--n".into(),
                value: self.n,
            });
        }
        positive("--threads", self.threads as f64)?;
        if self.n < self.threads as f64 {
            return Err(DescriptionError::FewerIterationsThanThreads {
                n: self.n,
                threads: self.threads,
            });
        }
        let count = |x: f64| x.is_finite() && x >= 0.0;
        if !(count(self.flops) && count(self.chain) && count(self.span)) {
            return Err(DescriptionError::NegativeFlops);
        }
        if !(self.reused_bytes.is_finite() && self.reused_bytes >= 0.0) {
            return Err(DescriptionError::NegativeReuse(self.reused_bytes));
        }
        if self.span > 0.0 && self.span < 1.0 {
            return Err(DescriptionError::SpanBelowOne(self.span));
        }
        for r in &self.windowed_reuse {
            let ok = |x: f64| x.is_finite() && x >= 0.0;
            if !(ok(r.bytes) && ok(r.window_bytes)) {
                return Err(DescriptionError::BadWindow {
                    bytes: r.bytes,
                    window: r.window_bytes,
                });
            }
        }
        if self.chain > self.flops {
            return Err(DescriptionError::ChainAboveFlops {
                chain: self.chain,
                flops: self.flops,
            });
        }
        if self.span > self.flops {
            return Err(DescriptionError::SpanAboveFlops {
                span: self.span,
                flops: self.flops,
            });
        }
        if self.arrays.is_empty() && self.flops == 0.0 {
            return Err(DescriptionError::Empty);
        }
        for (i, a) in self.arrays.iter().enumerate() {
            if self.arrays[..i].iter().any(|b| b.name == a.name) {
                return Err(DescriptionError::DuplicateName(a.name.clone()));
            }
            positive(format!("array {}: BYTES", a.name), a.bytes)?;
            match a.access {
                Access::Strided { stride_bytes } => {
                    positive(format!("array {}: stride", a.name), stride_bytes)?;
                    if stride_bytes < a.bytes {
                        return Err(DescriptionError::StrideTooSmall {
                            name: a.name.clone(),
                            stride: stride_bytes,
                            bytes: a.bytes,
                        });
                    }
                }
                Access::Random { region_bytes } => {
                    positive(format!("array {}: random region", a.name), region_bytes)?;
                    if region_bytes < a.bytes {
                        return Err(DescriptionError::RegionTooSmall {
                            name: a.name.clone(),
                            region: region_bytes,
                            bytes: a.bytes,
                        });
                    }
                }
            }
        }
        if let Some(s) = self.segment_iterations {
            positive("--segment", s)?;
            if s < 1.0 {
                return Err(DescriptionError::SegmentBelowOne(s));
            }
            if self.segments_per_thread().is_none() {
                return Err(DescriptionError::SegmentWithoutStream);
            }
        }
        if let Some(stride) = self.segment_stride_iterations {
            positive("--segment-stride", stride)?;
            let segment = self
                .segment_iterations
                .ok_or(DescriptionError::SegmentStrideWithoutSegment)?;
            if stride < segment {
                return Err(DescriptionError::SegmentStrideBelowSegment { stride, segment });
            }
        }
        // A thread touches no more than its iterations span: a reuse
        // window cannot exceed it.
        let touched = self.spanned_bytes(self.iterations_per_thread());
        if let Some(r) = self
            .windowed_reuse
            .iter()
            .find(|r| r.window_bytes > touched)
        {
            return Err(DescriptionError::WindowBeyondLoop {
                window: r.window_bytes,
                touched,
            });
        }
        Ok(())
    }
}
