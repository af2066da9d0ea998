//! The measured inner loops, kept apart from the sweeps that drive them.
//!
//! Wide-SIMD versions are compiled with `#[target_feature]` and picked at run
//! time ([`Isa::detect`]), so one binary built for baseline x86-64 uses
//! AVX-512 or AVX2 where the CPU has them; nothing depends on
//! `-C target-cpu=native`. The environment variable `PERFMODEL_MAX_ISA`
//! (`scalar`, `avx2` or `avx512`; empty: no cap) caps the level, so that a
//! profile and the built-in kernels can be made as a CPU without the wider
//! units would make them ([`Isa::cap`]); `matrixmultiply`, behind the dgemm
//! ceiling and the built-in matmul, picks its own ([`Isa::widest_of_cpu`]).

pub mod bins;
pub mod chain;
pub mod chase;
pub mod dgemm;
pub mod fma;
pub mod increment;
pub mod lagged;
pub mod segments;
pub mod span;
pub mod stream;

use std::fmt;
use std::sync::OnceLock;

/// The variable that caps the SIMD level every kernel may use.
pub const MAX_ISA_VAR: &str = "PERFMODEL_MAX_ISA";

/// An instruction-set level the kernels are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Isa {
    /// Baseline x86-64 (SSE2) or whatever the target has: one lane per
    /// floating-point instruction in the FLOP kernels.
    Scalar,
    /// 256-bit AVX2 with FMA3.
    Avx2,
    /// 512-bit AVX-512F.
    Avx512,
}

impl Isa {
    /// Every level, widest first.
    pub const ALL: [Isa; 3] = [Isa::Avx512, Isa::Avx2, Isa::Scalar];

    /// Every level the running CPU supports and the cap allows, widest
    /// first.
    pub fn available() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.supported()).collect()
    }

    /// The vector levels the running CPU supports and the cap allows below
    /// the widest, widest first (AVX2 on a CPU with AVX-512; none on one
    /// whose widest is AVX2).
    pub fn narrower_vectors() -> Vec<Isa> {
        let widest = Isa::detect();
        Isa::available()
            .into_iter()
            .filter(|&i| i != Isa::Scalar && i < widest)
            .collect()
    }

    /// The widest level the running CPU supports and the cap allows.
    pub fn detect() -> Isa {
        // Without allocating: the kernels call this on every sweep.
        Isa::ALL
            .into_iter()
            .find(|i| i.supported())
            .unwrap_or(Isa::Scalar)
    }

    /// The cap `PERFMODEL_MAX_ISA` sets, if any, or the one line saying
    /// what is wrong with its value. Read once; the binaries check it at
    /// start, so a bad value never reaches a kernel.
    pub fn cap() -> Result<Option<Isa>, &'static str> {
        static CAP: OnceLock<Result<Option<Isa>, String>> = OnceLock::new();
        CAP.get_or_init(|| match std::env::var(MAX_ISA_VAR) {
            Err(std::env::VarError::NotPresent) => Ok(None),
            Ok(v) if v.is_empty() => Ok(None),
            v => {
                let v = v.unwrap_or_else(|e| format!("{e}"));
                Isa::from_name(&v).map(Some).ok_or_else(|| {
                    format!("{MAX_ISA_VAR}={v:?} is not one of scalar, avx2, avx512")
                })
            }
        })
        .as_ref()
        .copied()
        .map_err(String::as_str)
    }

    /// The widest level the running CPU supports, whatever the cap: the
    /// one `matrixmultiply` (the dgemm ceiling, the built-in matmul)
    /// dispatches to by itself, which the cap cannot narrow.
    pub fn widest_of_cpu() -> Isa {
        Isa::ALL
            .into_iter()
            .find(|i| i.supported_by_cpu())
            .unwrap_or(Isa::Scalar)
    }

    /// Whether the running CPU supports this level and the cap allows it.
    pub fn supported(self) -> bool {
        let capped = matches!(Isa::cap(), Ok(Some(max)) if self > max);
        !capped && self.supported_by_cpu()
    }

    /// Whether the running CPU supports this level.
    fn supported_by_cpu(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Whether scalar code may use fused multiply-add instructions (not
    /// under a `scalar` cap: FMA3 counts as part of the AVX2 level).
    pub fn scalar_fma() -> bool {
        if matches!(Isa::cap(), Ok(Some(Isa::Scalar))) {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("fma")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Vector width in bytes (8 for scalar f64).
    pub fn vector_bytes(self) -> usize {
        match self {
            Isa::Scalar => 8,
            Isa::Avx2 => 32,
            Isa::Avx512 => 64,
        }
    }

    /// Lanes of one vector register in `precision` (1 for scalar code).
    pub fn lanes(self, precision: models::kernel::Precision) -> usize {
        match self {
            Isa::Scalar => 1,
            _ => self.vector_bytes() / precision.bytes(),
        }
    }

    /// The level named `name` ("scalar", "avx2", "avx512"), as a profile
    /// records it.
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name() == name)
    }

    /// Lower-case name used in tables and JSON ("avx512").
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
