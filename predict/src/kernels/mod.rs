//! The lecture's kernels (§3), each a library module with a serial
//! reference, its declared work, and its high-watermark variants; this
//! module runs them on pinned threads and times them.
//!
//! | kernel | lecture | variants |
//! |---|---|---|
//! | `fusion` | §3.2 | three-pass, fused (+ extra-math, one-element, no-compute) on 1 and all threads |
//! | `stencil` | §3.3 | row-major, tiled, at a width whose rows overflow the cache and at the lecture's 4096 |
//! | `false-sharing` | §3.4 | adjacent, padded, local |
//! | `binning` | §3.5 | global lock, cell locks, data-parallel sort (+ no-sync) |
//! | `matmul` | §4.4 | blocked f64 product, 1 and all threads |
//!
//! The ghost-row MPI stencil (§3.1) runs under `mpirun` through its own path.

pub mod binning;
pub mod described;
pub mod false_sharing;
pub mod fusion;
pub mod matmul;
pub mod paired;
pub mod stencil;
pub mod team;
pub mod terms;
pub mod work;

use std::sync::Arc;

use anyhow::Result;
use calibrate::harness::timer::Plan;
use models::profile::Profile;
use models::stats::Sample;

use crate::machine::Missing;
use crate::record::Record;
use paired::{Beside, Paired};
use work::Work;

/// A built-in kernel of `predict run`, as calibrate's benchmarks are each a
/// `Bench`: it owns its variants (each with the description of its work
/// the prediction is made from), the variant pairs whose speed-up the
/// report sets against the model's, and the verdict of its high-watermark
/// variants (lecture §5 point 5).
pub trait Kernel: Sync {
    /// The name `--kernel` takes.
    fn name(&self) -> &'static str;

    /// Runs and times every variant on pinned threads, checks each result
    /// against the serial reference, and declares its work; each variant
    /// is timed with its paired re-measure beside it ([`Options::beside`],
    /// [`Measurement::with_paired`]).
    fn run(&self, o: &Options) -> Result<Vec<Measurement>>;

    /// Pairs of variants (slower, faster) whose speed-up the report shows:
    /// the same size and threads; a variant paired with itself compares
    /// one thread with the most.
    fn pairs(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// The bottleneck the watermark variants point at, from this kernel's
    /// records, with the evidence and the model's binding resource.
    fn bottleneck(&self, _records: &[Record]) -> Option<String> {
        None
    }
}

/// The built-in kernels, in the order they run and are reported.
pub const KERNELS: [&dyn Kernel; 5] = [
    &fusion::Fusion,
    &stencil::Stencil,
    &false_sharing::FalseSharing,
    &binning::Binning,
    &matmul::Matmul,
];

/// The kernel `--kernel NAME` names.
pub fn find(name: &str) -> Option<&'static dyn Kernel> {
    KERNELS.iter().copied().find(|k| k.name() == name)
}

/// The names `--kernel` accepts.
pub fn names() -> Vec<&'static str> {
    KERNELS.iter().map(|k| k.name()).collect()
}

/// The record of `kernel`'s `variant` with the most threads.
pub fn widest<'a>(records: &'a [Record], kernel: &str, variant: &str) -> Option<&'a Record> {
    records
        .iter()
        .filter(|r| r.kernel == kernel && r.variant == variant)
        .max_by_key(|r| r.threads)
}

/// How to run the kernels.
#[derive(Debug, Clone)]
pub struct Options {
    /// Threads of the "all cores" runs.
    pub threads: usize,
    /// Overrides the kernel's default size (its meaning is per kernel).
    pub size: Option<usize>,
    pub plan: Plan,
    /// Capacity of the largest detected cache (for the stencil's model).
    pub cache_bytes: Result<f64, Missing>,
    /// The profile whose figures the paired re-measure takes again
    /// ([`Measurement::with_paired`]); none
    /// skips the paired re-measure.
    pub profile: Option<Arc<Profile>>,
}

impl Options {
    /// The paired re-measure of `work` on `threads` threads, to interleave
    /// with its timings; none without a profile or a work.
    pub fn beside<'a>(&'a self, work: &'a Result<Work, NoWork>, threads: usize) -> Beside<'a> {
        Beside::new(self.profile.as_deref(), work.as_ref().ok(), threads)
    }
}

/// Why a measured variant has no work to predict from.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoWork {
    /// The work depends on a figure the profile lacks.
    #[error(transparent)]
    Missing(#[from] Missing),
    /// A high-watermark experiment whose remaining cost is nothing the
    /// model has a calibrated term for: it is run for its verdict on the
    /// bottleneck (lecture §5 point 5), not predicted.
    #[error("not predicted: {0}")]
    Unmodelled(&'static str),
}

/// One timed kernel variant.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub kernel: &'static str,
    pub variant: String,
    pub threads: usize,
    /// The kernel's size parameter (elements, row width, n, ...).
    pub size: usize,
    /// Seconds per run of the variant.
    pub seconds: Sample,
    /// What the run does, for the prediction, or why there is nothing to
    /// predict from.
    pub work: Result<Work, NoWork>,
    /// The result matched the serial reference.
    pub verified: bool,
    /// The profile figures its prediction leans on, measured again right
    /// after it.
    pub paired: Option<Paired>,
}

impl Measurement {
    /// The measurement with the figures its work leans on re-measured
    /// beside it ([`paired::Beside`]). A re-measure that could not run
    /// (its buffers cannot be allocated) says so in one line and leaves
    /// the measurement without its pair: the kernel's own figures stand.
    pub fn with_paired(self, paired: Result<Option<Paired>>) -> Self {
        match paired {
            Ok(paired) => Self { paired, ..self },
            Err(e) => {
                eprintln!(
                    "note: no paired re-measure for {} {}: {e:#}",
                    self.kernel, self.variant
                );
                self
            }
        }
    }
}

/// 1 and, when there are more, all threads.
fn thread_counts(o: &Options) -> Vec<usize> {
    if o.threads > 1 {
        vec![1, o.threads]
    } else {
        vec![1]
    }
}

/// A measurement whose work is known. Every timed call of a thread kernel
/// is one parallel region of its pinned team ([`team::time`]), and its
/// work says so ([`Work::in_regions`]).
fn measurement(
    kernel: &'static str,
    variant: &str,
    threads: usize,
    size: usize,
    seconds: Sample,
    work: Result<Work, NoWork>,
    verified: bool,
) -> Measurement {
    Measurement {
        kernel,
        variant: variant.to_string(),
        threads,
        size,
        seconds,
        work: work.map(|w| w.in_regions(1.0)),
        verified,
        paired: None,
    }
}
