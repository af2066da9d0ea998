//! The binning kernel as `predict run` runs it: each variant timed on the
//! same particles, checked against the serial reference.

use std::ops::Range;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

use anyhow::{ensure, Result};
use calibrate::harness::pin::Team;
use calibrate::harness::timer::Plan;
use crossbeam_utils::CachePadded;
use models::stats::Sample;

use super::{
    from_lists, insert_global, insert_per_cell, reference, CellLock, CountingSort, Lists,
    Particles, Variant, NIL,
};
use crate::error::BadInput;
use crate::eval::derivation::plain;
use crate::kernels::paired::Beside;
use crate::kernels::team::{split, team, time};
use crate::kernels::{measurement, widest, Kernel, Measurement, Options};
use crate::record::Record;

/// Binning: `size` particles (default 1 Mi) into 16×16 cells.
pub struct Binning;

/// What every variant's run shares.
struct Setup<'a> {
    p: &'a Particles,
    team: &'a Team,
    ranges: &'a [Range<usize>],
    lists: &'a Lists,
    plan: &'a Plan,
}

impl Kernel for Binning {
    fn name(&self) -> &'static str {
        "binning"
    }

    fn run(&self, o: &Options) -> Result<Vec<Measurement>> {
        let n = o.size.unwrap_or(1 << 20);
        let threads = o.threads;
        ensure!(
            n >= threads,
            BadInput(format!(
                "--size {n} is too small for binning: at least one particle per thread ({threads})"
            ))
        );
        let p = Particles::new(n, 16);
        let want = reference(&p);
        let team = team(threads)?;
        let ranges = split(n, threads);
        let lists = Lists::new(n);
        let s = Setup {
            p: &p,
            team: &team,
            ranges: &ranges,
            lists: &lists,
            plan: &o.plan,
        };
        let variants = [
            Variant::GlobalLock,
            Variant::CellLocks,
            Variant::NoSync,
            Variant::DataParallel,
        ];
        variants
            .into_iter()
            .map(|v| {
                let work = v.declared(n, p.cells(), threads);
                let mut beside = o.beside(&work, threads);
                let (time, ok) = match v {
                    Variant::GlobalLock => global_lock(&s, &mut beside, &want)?,
                    Variant::CellLocks => cell_locks(&s, &mut beside, &want)?,
                    Variant::NoSync => (no_sync(&s, &mut beside, threads)?, true),
                    Variant::DataParallel => data_parallel(&s, &mut beside, &want)?,
                };
                let paired = beside.finish();
                Ok(
                    measurement("binning", v.name(), threads, n, time, work, ok)
                        .with_paired(paired),
                )
            })
            .collect()
    }

    fn pairs(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("global-lock", "cell-locks"),
            ("global-lock", "data-parallel"),
        ]
    }

    /// A lock that costs more than twice the loop without it is the
    /// bottleneck.
    fn bottleneck(&self, records: &[Record]) -> Option<String> {
        let lock = widest(records, "binning", "global-lock")?;
        let free = widest(records, "binning", "global-lock+no-sync")?;
        let headroom = lock.measured_s / free.measured_s;
        let measured = if headroom > 2.0 {
            "synchronization (the lock)"
        } else {
            "not the lock"
        };
        Some(format!(
            "binning (global lock, {} thr): without the lock ×{} faster → measured bottleneck: {measured}; model: {}",
            lock.threads,
            plain(headroom),
            lock.binding.as_deref().unwrap_or("no prediction")
        ))
    }
}

/// One global lock, alone on its lines: nothing else the threads touch
/// moves with it.
fn global_lock(s: &Setup, beside: &mut Beside, want: &[Vec<u32>]) -> Result<(Sample, bool)> {
    let heads = CachePadded::new(Mutex::new(vec![NIL; s.p.cells()]));
    let time = time(s.plan, beside, || {
        heads.lock().unwrap_or_else(|e| e.into_inner()).fill(NIL);
        s.team
            .each(|t| insert_global(s.p, s.ranges[t].clone(), &heads, s.lists));
    })?;
    let got = from_lists(&heads.lock().unwrap_or_else(|e| e.into_inner()), s.lists);
    Ok((time, got == want))
}

/// One lock per cell.
fn cell_locks(s: &Setup, beside: &mut Beside, want: &[Vec<u32>]) -> Result<(Sample, bool)> {
    let cell_heads: Vec<CellLock> = (0..s.p.cells()).map(|_| Default::default()).collect();
    let time = time(s.plan, beside, || {
        cell_heads
            .iter()
            .for_each(|h| *h.0.lock().unwrap_or_else(|e| e.into_inner()) = NIL);
        s.team
            .each(|t| insert_per_cell(s.p, s.ranges[t].clone(), &cell_heads, s.lists));
    })?;
    let h: Vec<u32> = cell_heads
        .iter()
        .map(|m| *m.0.lock().unwrap_or_else(|e| e.into_inner()))
        .collect();
    Ok((time, from_lists(&h, s.lists) == want))
}

/// The same loop without the lock: each thread on its own heads (a
/// watermark, not a correct binning).
fn no_sync(s: &Setup, beside: &mut Beside, threads: usize) -> Result<Sample> {
    let private: Vec<Mutex<Vec<u32>>> = (0..threads)
        .map(|_| Mutex::new(vec![NIL; s.p.cells()]))
        .collect();
    time(s.plan, beside, || {
        s.team.each(|t| {
            let mut h = private[t].lock().unwrap_or_else(|e| e.into_inner());
            h.fill(NIL);
            for i in s.ranges[t].clone() {
                let c = s.p.cell(i);
                s.lists.next[i].store(h[c], Relaxed);
                h[c] = i as u32;
            }
        });
    })
}

/// The data-parallel counting sort.
fn data_parallel(s: &Setup, beside: &mut Beside, want: &[Vec<u32>]) -> Result<(Sample, bool)> {
    let mut sort = CountingSort::new(s.p, s.team);
    let time = time(s.plan, beside, || sort.run(s.p, s.team))?;
    Ok((time, sort.cells() == want))
}
