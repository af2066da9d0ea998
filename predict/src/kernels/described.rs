//! A loop description (`models::kernel::LoopKernel`) as the demands the
//! one model predicts: compute, streamed traffic, random accesses,
//! loop-carried chains, chains within an iteration, the loads that hit L1
//! again, stream restarts and the counting sort's loops. `predict kernel`
//! predicts users' loops through this, with the same terms as the built-in
//! kernels.

use calibrate::harness::kernels::Isa;
use models::kernel::{Lines, LoopKernel, Traffic};
use models::profile::CeilingKernel;

use super::work::{Demand, Work};

/// How the loop's code was built and its memory given, beyond the
/// description.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Build {
    /// Bytes of a cache line on the profiled machine.
    pub line_bytes: f64,
    /// The arrays are backed by 2 MiB pages (else 4 KiB).
    pub huge_pages: bool,
    /// The instruction set the loop's code was built for: its compute
    /// ceiling and one thread's rates from DRAM apply (`None`: the highest
    /// ceiling the profile has, and its STREAM set).
    pub isa: Option<&'static str>,
}

impl Build {
    /// How `predict run`'s own kernels are built: 64-byte lines, arrays on
    /// huge pages, and the instruction set their loops dispatch to, AVX2
    /// with FMA on a CPU that has it, AVX-512 or not (the profile's highest
    /// otherwise). The compute term then takes that code's ceiling: on a
    /// core with two 512-bit FMA units the AVX-512 ceiling is twice the
    /// AVX2 one.
    pub fn builtin() -> Self {
        Self {
            line_bytes: 64.0,
            huge_pages: true,
            isa: matches!(Isa::detect(), Isa::Avx2 | Isa::Avx512).then_some("avx2"),
        }
    }
}

/// The demands of one pass of `k`'s `n` iterations.
pub fn loop_work(k: &LoopKernel, build: Build) -> Work {
    let lines = Lines {
        line_bytes: build.line_bytes,
    };
    let mut demands = Vec::new();
    if k.flops > 0.0 {
        demands.push(Demand::Flops {
            flops: k.total_flops(),
            precision: k.precision.name(),
            ceiling: CeilingKernel::Registers,
            isa: build.isa,
        });
    }
    let traffic = k.traffic(lines);
    if traffic.bus_bytes() > 0.0 {
        demands.push(Demand::Memory {
            traffic,
            per_thread_bytes: k.per_thread_bytes(lines),
            huge_pages: build.huge_pages,
            isa: build.isa,
        });
    }
    for accesses in k.random_accesses(lines) {
        demands.push(Demand::Random {
            accesses,
            huge_pages: build.huge_pages,
        });
    }
    if k.chain > 0.0 {
        demands.push(Demand::Chain {
            steps_per_thread: k.n / k.threads as f64 * k.chain,
        });
    }
    if k.span > 0.0 {
        demands.push(Demand::Span {
            depth: k.span,
            elements_per_thread: k.iterations_per_thread(),
            precision: k.precision.name(),
            isa: build.isa,
        });
    }
    if k.reused_bytes > 0.0 {
        demands.push(Demand::Reuse {
            bytes_per_thread: k.reused_bytes_per_thread(),
            window_bytes: 0.0,
        });
    }
    // Runs that start one right after another (a stride of one run) are
    // one stream.
    let restarts = k
        .segments_per_thread()
        .filter(|_| k.runs_per_row() != Some(1.0));
    if let Some((runs_per_thread, segment_bytes)) = restarts {
        demands.push(Demand::Restarts {
            runs_per_thread,
            segment_bytes,
            column_bytes: k.column_bytes(),
            per_thread_bytes: k.per_thread_bytes(lines),
        });
    }
    for &kind in &k.sort_loops {
        demands.push(Demand::BinLoop {
            kind,
            items_per_thread: k.iterations_per_thread(),
            working_set_per_thread: k.per_thread_bytes(lines),
        });
    }
    for r in k.windowed_reuse.iter().filter(|r| r.bytes > 0.0) {
        demands.push(Demand::Reuse {
            bytes_per_thread: k.iterations_per_thread() * r.bytes,
            window_bytes: r.window_bytes,
        });
    }
    Work { demands }
}

/// The demands of loops run one after the other over one working set of
/// `per_thread_bytes` per thread (a kernel of several passes, caches warm
/// from the previous run): their flops, their traffic and the elements of
/// their chains of one depth add up.
pub fn loops_work(loops: &[LoopKernel], build: Build, per_thread_bytes: f64) -> Work {
    let mut flops: Option<Demand> = None;
    let mut traffic = Traffic::default();
    let mut rest = Vec::new();
    for d in loops.iter().flat_map(|k| loop_work(k, build).demands) {
        match (d, &mut flops) {
            (Demand::Flops { flops: f, .. }, Some(Demand::Flops { flops: total, .. })) => {
                *total += f
            }
            (d @ Demand::Flops { .. }, None) => flops = Some(d),
            (Demand::Memory { traffic: t, .. }, _) => traffic = traffic.plus(t),
            // The passes' chains of one depth and code run one pass after
            // the other: their elements add up in one term.
            (
                Demand::Span {
                    depth,
                    elements_per_thread,
                    precision,
                    isa,
                },
                _,
            ) => {
                let same = rest.iter_mut().find_map(|d| match d {
                    Demand::Span {
                        depth: d,
                        elements_per_thread: e,
                        precision: p,
                        isa: i,
                    } if (*d, *p, *i) == (depth, precision, isa) => Some(e),
                    _ => None,
                });
                match same {
                    Some(e) => *e += elements_per_thread,
                    None => rest.push(Demand::Span {
                        depth,
                        elements_per_thread,
                        precision,
                        isa,
                    }),
                }
            }
            // The passes share one working set: where it lives decides
            // what restarts cost. A scatter keeps its own pass's working
            // set: the level its output's lines come from
            // (`Machine::scatter_streams_s`).
            (
                Demand::Restarts {
                    runs_per_thread,
                    segment_bytes,
                    column_bytes,
                    ..
                },
                _,
            ) => rest.push(Demand::Restarts {
                runs_per_thread,
                segment_bytes,
                column_bytes,
                per_thread_bytes,
            }),
            (other, _) => rest.push(other),
        }
    }
    let memory = (traffic.bus_bytes() > 0.0).then_some(Demand::Memory {
        traffic,
        per_thread_bytes,
        huge_pages: build.huge_pages,
        isa: build.isa,
    });
    Work {
        demands: flops.into_iter().chain(memory).chain(rest).collect(),
    }
}
