//! The model's terms on hand-computed cases of a synthetic machine, one
//! file per group of terms.

mod compute;
mod locks;
mod memory;

use super::*;
use crate::kernels::terms;
use crate::loop_figures::levels::LastCache;
use crate::loop_figures::Bound;
use crate::machine::{Machine, Now};
use models::profile::stream::{StreamLevel, StreamPoint, StreamSweep};
use models::profile::{
    CeilingStates, ComputeCeiling, MemoryLevel, Profile, Provenance, ReportedCache,
};
use models::Estimate;
use serde_json::json;

/// A synthetic machine: 100 GFLOP/s f32 peak and a 40 GFLOP/s f64
/// dgemm ceiling on 2 threads, DRAM triad 40 GB/s and loads 50 GB/s
/// with write-allocate, an L2-sized copy point at 80 GB/s, a 1 MiB
/// cache, 50 ns line transfers, increments of 0.5 ns alone on a line
/// and 12 ns (2 threads) or 30 ns (4) sharing one, local sums of
/// 0.75 ns per step, counting-sort loops of 0.25 ns (histogram) and
/// 0.5 ns (scatter) per item in L1 and 2 ns scattering 64 MiB per
/// thread, an empty parallel region of 15 µs on 1 thread and 10 µs on 2,
/// 2 GHz, a mutex around a 5 ns critical
/// section at 10 ns per op alone and 20 ns contended, around an empty
/// one at 8 and 14 ns, and spread mutexes 12 ns per op alone and 20 ns
/// per thread on 2 threads (a 16 ns line migration), and iterations with
/// a chain inside at 0.2, 0.4 and 1.6 ns per element 4, 8 and 16 steps
/// deep in AVX2 (0.1 and 0.4 ns at 4 and 16 in AVX-512).
fn machine() -> Profile {
    let mut p = Profile::new(Provenance {
        clock_hz: Some(2e9),
        logical_cpus: 2,
        ..Default::default()
    });
    p.ceilings.push(ComputeCeiling {
        name: "f32 fma".into(),
        precision: "f32".into(),
        isa: "avx2".into(),
        fma: true,
        threads: 2,
        flops: Estimate::exact(100e9),
        kernel: CeilingKernel::Registers,
        states: None,
    });
    p.ceilings.push(ComputeCeiling {
        name: "f64 dgemm".into(),
        precision: "f64".into(),
        isa: "avx2".into(),
        fma: true,
        threads: 2,
        flops: Estimate::exact(40e9),
        kernel: CeilingKernel::Dgemm,
        states: None,
    });
    p.levels.push(MemoryLevel {
        name: "L2".into(),
        size_bytes: Some(1048576.0),
        latency_s: None,
        bandwidth_1t_Bps: None,
        bandwidth_Bps: None,
    });
    p.summary.core_to_core_latency_s = Some(50e-9);
    p.sections
        .insert_json(
            "c2c",
            json!({"increments": {
                "own_line": {"threads": 2, "per_increment_s": {"median": 0.5e-9}},
                "shared_line": [
                    {"threads": 2, "per_increment_s": {"median": 12e-9}},
                    {"threads": 4, "per_increment_s": {"median": 30e-9}}
                ],
                "local": {"threads": 2, "per_step_s": {"median": 0.75e-9}},
                "histogram": {"threads": 2, "bins": 256, "per_item_s": {"median": 0.25e-9}},
                "scatter": {"threads": 2, "bins": 256, "per_item_s": {"median": 0.5e-9}},
                "scatter_dram": {"threads": 2, "bins": 256, "per_item_s": {"median": 2.0e-9},
                                 "output_bytes": 67108864}
            },
            "regions": [
                {"threads": 1, "per_region_s": {"median": 15e-6}},
                {"threads": 2, "per_region_s": {"median": 10e-6}}
            ]}),
        )
        .unwrap();
    p.sections.insert_json(
        "stream",
        json!({
            "dram_bytes": 67108864.0,
            "dram": [
                {"kernel": "triad", "threads": 2, "per_thread_bytes": 33554432.0, "bandwidth_write_allocate_Bps": 40e9},
                {"kernel": "load", "threads": 2, "per_thread_bytes": 33554432.0, "bandwidth_write_allocate_Bps": 50e9}
            ],
            "sweeps": [{"threads": 2, "points": [
                {"kernel": "copy", "per_thread_bytes": 262144.0, "bandwidth_write_allocate_Bps": 80e9},
                {"kernel": "copy", "per_thread_bytes": 16384.0, "bandwidth_write_allocate_Bps": 200e9}
            ]}]
        }),
    ).unwrap();
    p.sections.insert_json(
        "latency",
        json!({"line_bytes": 64, "points": [
            {"size_bytes": 16384, "pages": "4KiB", "latency_s": {"median": 1e-9}},
            {"size_bytes": 1048576, "pages": "4KiB", "latency_s": {"median": 5e-9}},
            {"size_bytes": 67108864, "pages": "4KiB", "latency_s": {"median": 100e-9, "ci_lo": 90e-9, "ci_hi": 120e-9}}
        ]}),
    ).unwrap();
    p.sections.insert_json(
        "mlp",
        json!({"points": [{"k": 1, "bandwidth_Bps": 0.64e9}, {"k": 16, "bandwidth_Bps": 6.4e9}]}),
    ).unwrap();
    p.sections
        .insert_json(
            "flops",
            json!({"chain": {"add": {"median": 1e-9, "ci_lo": 0.9e-9, "ci_hi": 1.1e-9}},
            "span": [
                {"isa": "avx2", "depth": 4, "element": {"median": 0.2e-9}},
                {"isa": "avx2", "depth": 8, "element": {"median": 0.4e-9}},
                {"isa": "avx2", "depth": 16, "element": {"median": 1.6e-9}},
                {"isa": "avx512", "depth": 4, "element": {"median": 0.1e-9}},
                {"isa": "avx512", "depth": 16, "element": {"median": 0.4e-9}}
            ]}),
        )
        .unwrap();
    p.sections
        .insert_json(
            "lock",
            json!({"critical_steps": 4, "step_s": 1.25e-9, "kinds": [{"kind": "mutex", "points": [
                {"threads": 1, "oversubscribed": false, "throughput_ops": {"median": 1e8}},
                {"threads": 2, "oversubscribed": false, "throughput_ops": {"median": 5e7}}
            ]}, {"kind": "mutex_empty", "points": [
                {"threads": 1, "oversubscribed": false, "throughput_ops": {"median": 1.25e8}},
                {"threads": 2, "oversubscribed": false, "throughput_ops": {"median": 1.0 / 14e-9}}
            ]}, {"kind": "mutex_spread", "points": [
                {"threads": 1, "oversubscribed": false, "throughput_ops": {"median": 1.0 / 12e-9}},
                {"threads": 2, "oversubscribed": false, "throughput_ops": {"median": 1e8}}
            ]}]}),
        )
        .unwrap();
    p
}

fn mutex(ops: f64, lanes: f64, data_lines: f64, critical_s: f64) -> Work {
    Work {
        demands: vec![Demand::Lock {
            ops,
            kind: LockKindName::Mutex,
            lanes,
            critical_s,
            data_lines,
        }],
    }
}
