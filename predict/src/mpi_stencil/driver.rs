//! Runs one variant across the ranks: the iterations with their timing,
//! the residual reduction every k sweeps, the grid checksum and, on
//! request, the check against the serial reference.
//!
//! # Timing
//!
//! Each rank reads `MPI_Wtime` around every iteration (exchange and sweep;
//! the residual reduction is timed apart). At the end the per-iteration
//! times are reduced with `MPI_MAX` element by element, so iteration i's
//! time is that of the slowest rank, which is what the next iteration waits
//! for. The first iterations warm the caches, pages and the library's
//! connections: one in ten (at most 10, none for fewer than 10 iterations)
//! is left out of the sample.
//!
//! The paired re-measure's probes ([`super::probe`]) are timed between
//! sweeps, spread over the run. The sweeps after each probe run on caches
//! the probe has used, and are left out of the sample until the sweeps
//! have won them back ([`kept`]), as the thread kernels' untimed calls
//! restore theirs after a re-measure (`crate::kernels::team::Pace`).

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::grid::Block;
use super::halo::{step_blocking, step_nonblocking, Columns};
use super::layout::{Layout, ProcessGrid};
use super::probe::Probe;
use super::serial;
use super::Variant;
use crate::kernels::team::Pace;
use calibrate::harness::watchdog::Watchdog;

/// Tag of the gathered blocks of `--verify`.
const TAG_GATHER: mpi::Tag = 20;
/// Bytes of a host name in the all-gather (MPI_MAX_PROCESSOR_NAME is 256).
const NAME_BYTES: usize = 256;

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// Grid side N.
    pub n: usize,
    /// Sweeps to make (fewer if the tolerance is reached).
    pub iters: usize,
    /// The residual is reduced every `check_every` sweeps (and after the last).
    pub check_every: usize,
    /// Stop once the residual max |u' − u| is at most this.
    pub tol: Option<f64>,
    /// Gather the grid on rank 0 and compare it with the serial reference.
    pub verify: bool,
}

/// One variant's run. The timing fields are filled on every rank (they
/// are the same everywhere); `verified` only on rank 0.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantRun {
    pub variant: Variant,
    pub grid: ProcessGrid,
    /// Sweeps made.
    pub iterations: usize,
    /// Leading sweeps left out of the timing sample.
    pub warmup: usize,
    /// Time of each sweep after the warm-up but those that win the caches
    /// back after a probe ([`kept`]), the slowest rank's, seconds.
    pub times_s: Vec<f64>,
    /// Time of each residual reduction, seconds (rank 0's).
    pub reduction_s: Vec<f64>,
    /// (sweep, global max |u' − u|) at each check.
    pub residuals: Vec<(usize, f64)>,
    /// Whether the tolerance stopped the run.
    pub converged: bool,
    /// The grid checksum (order-independent, bit-exact).
    pub checksum: u64,
    /// The gathered grid equals the serial reference bit for bit (rank 0,
    /// with `verify`, after [`verify_runs`]).
    pub verified: Option<bool>,
    /// The N × N grid gathered on rank 0 for [`verify_runs`] (with `verify`).
    pub gathered: Option<Vec<f64>>,
    /// The largest block, (rows, columns).
    pub max_block: (usize, usize),
}

/// Leading sweeps left out of the timing: one in ten, at most 10.
pub fn warmup_of(iterations: usize) -> usize {
    if iterations >= 10 {
        (iterations / 10).min(10)
    } else {
        0
    }
}

/// The sweep times `times` (the slowest rank's, in order) that the sample
/// keeps: those after the first `warmup` but the ones that win the caches
/// back after a probe (`after_probe[i]`: sweep `i` follows one). Read in
/// order with a [`Pace`] of the fastest sweep so far, the sweeps after a
/// probe are its restore's passes ([`Pace::restore`]): as many as the most
/// a restore has taken before, then more until one runs within 10% of the
/// fastest, [`crate::kernels::team::RESTORE_MAX`] at most, none past the
/// next probe. On the Xeon VM the sweeps at N = 2048 (33.6 MB per rank)
/// took three after a probe to come back to their pace (2.2, 2.1 and
/// 1.9 ms, against 1.7–1.8 ms), where one had been left out.
pub fn kept(times: &[f64], after_probe: &[bool], warmup: usize) -> Vec<f64> {
    let mut pace = Pace::default();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < times.len() {
        if after_probe[i] {
            let start = i;
            // The passes end at the run's end or at the next probe.
            let _ = pace.restore(|| match times.get(i) {
                Some(&t) if i == start || !after_probe[i] => {
                    i += 1;
                    Ok(t)
                }
                _ => Err(()),
            });
            continue;
        }
        pace.steady(times[i]);
        if i >= warmup {
            kept.push(times[i]);
        }
        i += 1;
    }
    kept
}

/// The slowest rank's value of each of `times` (a collective).
pub fn slowest(world: &SimpleCommunicator, times: &[f64]) -> Vec<f64> {
    let mut slowest = vec![0.0f64; times.len()];
    world.all_reduce_into(times, &mut slowest[..], SystemOperation::max());
    slowest
}

/// One rank's share of a variant: its place in the process grid, its
/// block and the buffers of its packed ghost columns.
pub struct RankShare {
    variant: Variant,
    lay: Layout,
    block: Block,
    cols: Columns,
}

impl RankShare {
    /// This rank's share of an N = `n` grid under `variant`, at the
    /// grid's initial values.
    pub fn new(world: &SimpleCommunicator, variant: Variant, n: usize) -> Self {
        let lay = Layout::new(
            n,
            variant.grid(world.size() as usize),
            world.rank() as usize,
        );
        Self {
            variant,
            block: Block::new(n, lay.ry, lay.rx, lay.y0, lay.x0),
            cols: Columns::new(lay.ry),
            lay,
        }
    }

    /// One iteration on every rank (a collective): the exchange and the
    /// sweep, which becomes the current grid. Returns the block's
    /// max |u' − u| when `residual` is set.
    pub fn step(&mut self, world: &SimpleCommunicator, residual: bool) -> f64 {
        let (lay, block) = (&self.lay, &mut self.block);
        let d = match self.variant {
            Variant::Blocking => step_blocking(world, lay, block, residual),
            Variant::Nonblocking | Variant::TwoD => {
                step_nonblocking(world, lay, block, &mut self.cols, residual)
            }
        };
        block.swap();
        d
    }
}

/// Runs `variant` on every rank of `world`, timing the `probes` there are
/// (the same on every rank) between its sweeps ([`Probe::every`]).
pub fn run_variant(
    world: &SimpleCommunicator,
    variant: Variant,
    cfg: &RunConfig,
    probes: &mut [Option<Probe>],
    wd: &Watchdog,
) -> VariantRun {
    let mut share = RankShare::new(world, variant, cfg.n);
    let grid = share.lay.grid;
    let mut times = Vec::with_capacity(cfg.iters);
    let mut reduction_s = Vec::new();
    let mut residuals = Vec::new();
    let mut iterations = cfg.iters;
    let mut converged = false;
    let every = cfg.check_every.max(1);
    let probe_after = Probe::every(cfg.iters, warmup_of(cfg.iters));
    // Sweeps that follow a probe.
    let mut after_probe = Vec::with_capacity(cfg.iters);

    wd.step(format!("running the {} variant", variant.name()));
    world.barrier();
    for it in 1..=cfg.iters {
        let check = it % every == 0 || it == cfg.iters;
        let t0 = mpi::time();
        let d = share.step(world, check);
        times.push(mpi::time() - t0);
        after_probe.push(it > 1 && probes.iter().any(Option::is_some) && probe_after(it - 1));
        if check {
            let t1 = mpi::time();
            let mut global = 0.0f64;
            world.all_reduce_into(&d, &mut global, SystemOperation::max());
            reduction_s.push(mpi::time() - t1);
            residuals.push((it, global));
            if cfg.tol.is_some_and(|tol| global <= tol) {
                iterations = it;
                converged = true;
                break;
            }
        }
        if probe_after(it) {
            probes.iter_mut().flatten().for_each(|p| p.time(world));
        }
        wd.pet();
    }

    let warmup = warmup_of(iterations);
    let times_s = kept(&slowest(world, &times), &after_probe, warmup);
    let mut checksum = 0u64;
    world.all_reduce_into(
        &share.block.checksum(),
        &mut checksum,
        SystemOperation::sum(),
    );
    let gathered = if cfg.verify {
        wd.step("gathering the grid for --verify");
        gather(world, &share.lay, &share.block)
    } else {
        None
    };
    VariantRun {
        variant,
        grid,
        iterations,
        warmup,
        times_s,
        reduction_s,
        residuals,
        converged,
        checksum,
        verified: None,
        gathered,
        max_block: (
            super::layout::split(cfg.n, grid.py, 0).1,
            super::layout::split(cfg.n, grid.px, 0).1,
        ),
    }
}

/// Gathers every block on rank 0: the N × N grid there, `None` elsewhere.
fn gather(world: &SimpleCommunicator, lay: &Layout, block: &Block) -> Option<Vec<f64>> {
    if lay.rank != 0 {
        world
            .process_at_rank(0)
            .send_with_tag(&block.interior()[..], TAG_GATHER);
        return None;
    }
    let n = lay.n;
    let mut grid = vec![0.0f64; n * n];
    let mut place = |l: &Layout, values: &[f64]| {
        for i in 0..l.ry {
            let dst = (l.y0 + i) * n + l.x0;
            grid[dst..dst + l.rx].copy_from_slice(&values[i * l.rx..(i + 1) * l.rx]);
        }
    };
    place(lay, &block.interior());
    for r in 1..world.size() as usize {
        let l = Layout::new(n, lay.grid, r);
        let mut values = vec![0.0f64; l.ry * l.rx];
        world
            .process_at_rank(r as i32)
            .receive_into_with_tag(&mut values[..], TAG_GATHER);
        place(&l, &values);
    }
    Some(grid)
}

/// Rank 0, after every variant has run (so that no rank waits inside a
/// watchdog while the serial reference is computed): compares each
/// gathered grid and residual history with the serial reference bit for
/// bit and sets `verified`. One reference per distinct sweep count.
pub fn verify_runs(runs: &mut [VariantRun], n: usize, check_every: usize) {
    let mut references: Vec<serial::Reference> = Vec::new();
    for run in runs.iter_mut() {
        let Some(grid) = run.gathered.take() else {
            continue;
        };
        let k = match references
            .iter()
            .position(|r| r.iterations == run.iterations)
        {
            Some(k) => k,
            None => {
                references.push(serial::reference(n, run.iterations, check_every));
                references.len() - 1
            }
        };
        let reference = &references[k];
        let same_grid = grid
            .iter()
            .zip(reference.interior())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        let same_residuals = run.residuals.len() == reference.residuals.len()
            && run
                .residuals
                .iter()
                .zip(&reference.residuals)
                .all(|(a, b)| a.0 == b.0 && a.1.to_bits() == b.1.to_bits());
        run.verified = Some(same_grid && same_residuals);
    }
}

/// Every rank's host name (`MPI_Get_processor_name`), in rank order.
pub fn host_names(world: &SimpleCommunicator) -> Vec<String> {
    let own = mpi::environment::processor_name().unwrap_or_else(|_| "unknown".into());
    let mut buf = [0u8; NAME_BYTES];
    let bytes = own.as_bytes();
    let len = bytes.len().min(NAME_BYTES);
    buf[..len].copy_from_slice(&bytes[..len]);
    let mut all = vec![0u8; NAME_BYTES * world.size() as usize];
    world.all_gather_into(&buf[..], &mut all[..]);
    all.chunks(NAME_BYTES)
        .map(|c| {
            let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
            String::from_utf8_lossy(&c[..end]).into_owned()
        })
        .collect()
}

/// The most ranks that share one host.
pub fn max_ranks_per_host(hosts: &[String]) -> usize {
    let mut counts = std::collections::BTreeMap::new();
    for h in hosts {
        *counts.entry(h.as_str()).or_insert(0usize) += 1;
    }
    counts.values().copied().max().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_is_a_tenth_capped() {
        assert_eq!(warmup_of(2), 0);
        assert_eq!(warmup_of(9), 0);
        assert_eq!(warmup_of(10), 1);
        assert_eq!(warmup_of(200), 10);
    }

    #[test]
    fn the_sweeps_after_a_probe_are_left_out_until_they_run_at_pace() {
        let p = [
            false, false, false, true, false, false, false, true, false, false,
        ];
        // Sweep 3 follows a probe: 3 and 4 run slow, 5 at the pace again
        // (within 10% of 1.0) and is the restore's last pass; after the
        // probe before 7, as many passes as before at least (7, 8, 9),
        // though 8 already runs at the pace.
        let t = [1.2, 1.0, 1.0, 2.0, 1.5, 1.05, 1.0, 1.6, 1.0, 1.0];
        assert_eq!(kept(&t, &p, 1), [1.0, 1.0, 1.0]);
        // The warm-up is left out, and a restore stops at the next probe.
        let p = [false, true, false, true, false];
        let t = [1.0, 3.0, 3.0, 3.0, 1.0];
        assert_eq!(kept(&t, &p, 0), [1.0]);
        // No probe: every sweep after the warm-up.
        assert_eq!(kept(&[3.0, 1.0, 2.0], &[false; 3], 1), [1.0, 2.0]);
    }

    #[test]
    fn ranks_per_host() {
        let h: Vec<String> = ["a", "b", "a", "a"].iter().map(|s| s.to_string()).collect();
        assert_eq!(max_ranks_per_host(&h), 3);
        assert_eq!(max_ranks_per_host(&[]), 1);
    }
}
