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
pub mod stencil;
pub mod team;
pub mod terms;
pub mod work;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

use anyhow::{ensure, Result};
use calibrate::timer::Plan;
use crossbeam_utils::CachePadded;
use models::stats::Sample;

use crate::machine::Missing;
use crate::BadInput;
use team::{per_thread, split, time, time_states};
use work::Work;

/// Kernel names `predict run --kernel` accepts.
pub const NAMES: [&str; 5] = ["fusion", "stencil", "false-sharing", "binning", "matmul"];

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
    /// What the run does, for the prediction.
    pub work: Result<Work, Missing>,
    /// The result matched the serial reference.
    pub verified: bool,
}

/// Runs every variant of kernel `name`.
pub fn run(name: &str, o: &Options) -> Result<Vec<Measurement>> {
    match name {
        "fusion" => run_fusion(o),
        "stencil" => run_stencil(o),
        "false-sharing" => run_false_sharing(o),
        "binning" => run_binning(o),
        "matmul" => run_matmul(o),
        _ => Err(BadInput(format!(
            "unknown kernel '{name}': expected one of {}, ghost-stencil (under mpirun)",
            NAMES.join(", ")
        ))
        .into()),
    }
}

fn thread_counts(o: &Options) -> Vec<usize> {
    if o.threads > 1 {
        vec![1, o.threads]
    } else {
        vec![1]
    }
}

fn measurement(
    kernel: &'static str,
    variant: &str,
    threads: usize,
    size: usize,
    seconds: Sample,
    work: Work,
    verified: bool,
) -> Measurement {
    Measurement {
        kernel,
        variant: variant.to_string(),
        threads,
        size,
        seconds,
        work: Ok(work),
        verified,
    }
}

/// Fusion: `size` elements per array (default 16 Mi f32 = 64 MiB each).
fn run_fusion(o: &Options) -> Result<Vec<Measurement>> {
    let n = o.size.unwrap_or(16 << 20);
    let mut out = Vec::new();
    for threads in thread_counts(o) {
        ensure!(
            n >= 16 * threads,
            BadInput(format!(
                "--size {n} is too small for fusion on {threads} threads: at least {} elements",
                16 * threads
            ))
        );
        let team = team::team(threads)?;
        let per = n / threads;
        let states = per_thread(&team, |i| fusion::Arrays::new(per, i * per));
        let variants: Vec<fusion::Variant> = if threads == o.threads {
            fusion::Variant::MAIN
                .into_iter()
                .chain(fusion::Variant::WATERMARKS)
                .collect()
        } else {
            fusion::Variant::MAIN.to_vec()
        };
        for v in variants {
            let s = time_states(&team, &o.plan, &states, |_, x| fusion::run(v, x))?;
            let verified = v != fusion::Variant::ThreePass && v != fusion::Variant::Fused
                || states.iter().all(|m| {
                    let x = m.lock().unwrap_or_else(|e| e.into_inner());
                    (0..x.e.len())
                        .step_by(97)
                        .all(|i| x.e[i] == x.d[i] + (x.a[i] + x.b[i]) * x.c[i])
                });
            out.push(measurement(
                "fusion",
                v.name(),
                threads,
                n,
                s,
                v.work(per, threads),
                verified,
            ));
        }
    }
    Ok(out)
}

/// Stencil: `size` is the row width (default 2 Mi f32, rows of 8 MiB that
/// overflow any cache); the lecture's 4096×4096 grid is run too, its rows
/// split among the threads.
fn run_stencil(o: &Options) -> Result<Vec<Measurement>> {
    let threads = o.threads;
    let team = team::team(threads)?;
    let wide = o.size.unwrap_or(2 << 20);
    ensure!(
        wide >= 8,
        BadInput(format!(
            "--size {wide} is too small for the stencil: rows need at least 8 elements"
        ))
    );
    let mut out = Vec::new();
    // (width, rows per thread, tile width)
    let cases = [
        (wide, (8 << 20) / wide.max(1) + 4, 16384.min(wide)),
        (4096.min(wide), (4096 / threads).max(1), 2048.min(wide)),
    ];
    for (w, rows, tile) in cases {
        let states = per_thread(&team, |i| stencil::Band::new(rows, w, i * rows));
        for v in [stencil::Variant::RowMajor, stencil::Variant::Tiled(tile)] {
            let s = time_states(&team, &o.plan, &states, |_, b| stencil::sweep(v, b))?;
            let work = o.cache_bytes.clone().map(|c| v.work(rows, w, threads, c));
            out.push(Measurement {
                kernel: "stencil",
                variant: format!("{}@{w}", v.name()),
                threads,
                size: w,
                seconds: s,
                work,
                verified: true,
            });
        }
    }
    Ok(out)
}

/// False sharing: `size` increments per thread (default 2 Mi).
fn run_false_sharing(o: &Options) -> Result<Vec<Measurement>> {
    let incs = o.size.unwrap_or(2 << 20);
    ensure!(
        incs >= 1,
        BadInput("--size must be at least 1 increment".into())
    );
    let team = team::team(o.threads)?;
    let counters = false_sharing::Counters::new(o.threads);
    let mut out = Vec::new();
    for v in false_sharing::Variant::ALL {
        let s = time(&o.plan, || {
            team.each(|tid| false_sharing::run(v, &counters, tid, incs));
        })?;
        out.push(measurement(
            "false-sharing",
            v.name(),
            o.threads,
            incs,
            s,
            v.work(incs, o.threads),
            true,
        ));
    }
    Ok(out)
}

/// Binning: `size` particles (default 1 Mi) into 16×16 cells.
fn run_binning(o: &Options) -> Result<Vec<Measurement>> {
    let n = o.size.unwrap_or(1 << 20);
    let threads = o.threads;
    ensure!(
        n >= threads,
        BadInput(format!(
            "--size {n} is too small for binning: at least one particle per thread ({threads})"
        ))
    );
    let p = binning::Particles::new(n, 16);
    let reference = binning::reference(&p);
    let team = team::team(threads)?;
    let ranges = split(n, threads);
    let lists = binning::Lists::new(n);
    let mut out = Vec::new();

    // The lock alone on its lines: nothing else the threads touch moves
    // with it.
    let heads = CachePadded::new(Mutex::new(vec![binning::NIL; p.cells()]));
    let s = time(&o.plan, || {
        heads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fill(binning::NIL);
        team.each(|t| binning::insert_global(&p, ranges[t].clone(), &heads, &lists));
    })?;
    let ok =
        binning::from_lists(&heads.lock().unwrap_or_else(|e| e.into_inner()), &lists) == reference;
    let v = binning::Variant::GlobalLock;
    out.push(measurement(
        "binning",
        v.name(),
        threads,
        n,
        s,
        v.work(n, p.cells(), threads),
        ok,
    ));

    let cell_heads: Vec<binning::CellLock> = (0..p.cells()).map(|_| Default::default()).collect();
    let s = time(&o.plan, || {
        cell_heads
            .iter()
            .for_each(|h| *h.0.lock().unwrap_or_else(|e| e.into_inner()) = binning::NIL);
        team.each(|t| binning::insert_per_cell(&p, ranges[t].clone(), &cell_heads, &lists));
    })?;
    let h: Vec<u32> = cell_heads
        .iter()
        .map(|m| *m.0.lock().unwrap_or_else(|e| e.into_inner()))
        .collect();
    let v = binning::Variant::CellLocks;
    out.push(measurement(
        "binning",
        v.name(),
        threads,
        n,
        s,
        v.work(n, p.cells(), threads),
        binning::from_lists(&h, &lists) == reference,
    ));

    // The same loop without the lock: each thread on its own heads.
    let private: Vec<Mutex<Vec<u32>>> = (0..threads)
        .map(|_| Mutex::new(vec![binning::NIL; p.cells()]))
        .collect();
    let s = time(&o.plan, || {
        team.each(|t| {
            let mut h = private[t].lock().unwrap_or_else(|e| e.into_inner());
            h.fill(binning::NIL);
            for i in ranges[t].clone() {
                let c = p.cell(i);
                lists.next[i].store(h[c], Relaxed);
                h[c] = i as u32;
            }
        });
    })?;
    let v = binning::Variant::NoSync;
    out.push(measurement(
        "binning",
        v.name(),
        threads,
        n,
        s,
        v.work(n, p.cells(), threads),
        true,
    ));

    let mut sort = binning::CountingSort::new(&p, &team);
    let s = time(&o.plan, || sort.run(&p, &team))?;
    let v = binning::Variant::DataParallel;
    out.push(measurement(
        "binning",
        v.name(),
        threads,
        n,
        s,
        v.work(n, p.cells(), threads),
        sort.cells() == reference,
    ));
    Ok(out)
}

/// Matrix multiply: `size` = n (default 1024).
fn run_matmul(o: &Options) -> Result<Vec<Measurement>> {
    let n = o.size.unwrap_or(1024);
    let mut out = Vec::new();
    for threads in thread_counts(o) {
        ensure!(
            n >= threads,
            BadInput(format!(
                "--size {n} is too small for matmul on {threads} threads"
            ))
        );
        let m = matmul::Matrices::new(n);
        let team = team::team(threads)?;
        let cols = split(n, threads);
        let states = per_thread(&team, |t| vec![0.0; n * cols[t].len()]);
        let s = time_states(&team, &o.plan, &states, |t, c| {
            matmul::multiply_cols(&m, cols[t].clone(), c)
        })?;
        // Check a few entries against a direct dot product (exact: small integers).
        let verified = (0..n).step_by(n / 7 + 1).all(|i| {
            (0..n).step_by(n / 5 + 1).all(|j| {
                let t = cols
                    .iter()
                    .position(|r| r.contains(&j))
                    .expect("columns are covered");
                let w = cols[t].len();
                let got =
                    states[t].lock().unwrap_or_else(|e| e.into_inner())[i * w + j - cols[t].start];
                let want: f64 = (0..n).map(|k| m.a[i * n + k] * m.b[k * n + j]).sum();
                got == want
            })
        });
        out.push(measurement(
            "matmul",
            "blocked",
            threads,
            n,
            s,
            matmul::work(n, threads),
            verified,
        ));
    }
    Ok(out)
}
