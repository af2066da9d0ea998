//! Counters, local sums and the counting sort's loops on all threads at
//! once (lecture §3.4, §2.9, §3.5), measured within the `c2c` benchmark
//! and stored under its section's `increments`.
//!
//! * **Increments** (§3.4): every thread does dependent load-add-store
//!   increments of its own 8-byte counter, the counters either on one
//!   shared line (false sharing) or one line each. Time per increment per
//!   thread, all threads at once. A write to a falsely shared line costs
//!   less than a one-way line transfer: while the line is away the core
//!   keeps forwarding its own queued stores, and each time the line comes
//!   back it commits a burst of them. The own-line figure is the
//!   store-to-load forwarding latency of a dependent increment (§2.7.4: the
//!   "L1 hit" of the padded counter), which can be shorter than an L1 load.
//!   The lecture's fix, a local accumulator, is timed too: per step one L1
//!   load and one dependent register add ([`LocalTable::sum`]), all threads
//!   at once.
//! * **Bins** (§2.9, §3.5): the two inner loops of the data-parallel
//!   counting sort ([`crate::kernels::bins`]), a histogram increment and a
//!   scatter store per item over 256 bins, timed per item on an L1-resident
//!   sequence, all threads at once; and the scatter again over a curve of
//!   each thread's output sizes from twice L1 to beyond the last cache
//!   ([`scatter_curve_sizes`]) and at the DRAM working set, where its 256
//!   output streams are more than the prefetchers follow and their
//!   write-allocates wait on the level the output's lines come from.

use std::sync::atomic::AtomicU64;

use anyhow::Result;
use models::profile::c2c::{Increment, Increments};
use models::stats::{Sample, Summary as Stats};
use models::units::{binary_bytes, Si};

use super::bursts::pool;
use super::{sample, Context, NamedSize};
use crate::kernels::bins::{BinBench, Layout, BINS, SEQUENCE};
use crate::kernels::increment::{bump, LocalTable, OwnLine, SharedLine};
use crate::mem::{Pages, Region};
use crate::pin::Team;
use crate::timer::{measure, Plan};

/// The figures of one run.
pub struct Measured {
    /// Per increment, own line, all threads.
    pub own: Stats,
    /// Per step of a local sum, all threads.
    pub local: Stats,
    /// Per item of the histogram loop, all threads.
    pub hist: Stats,
    /// Per item of the scatter loop, all threads.
    pub scatter: Stats,
    /// Per item of the scatter loop with its output at the DRAM working
    /// set, all threads, and the output bytes per thread.
    pub scatter_dram: Option<(u64, Stats)>,
    /// The same over output sizes beyond L1, smallest first: the output
    /// bytes per thread and the figure.
    pub scatter_curve: Vec<(u64, Stats)>,
    /// Per increment with counters sharing a line, by thread count; the
    /// most sharers' figure pooled with the run's bursts of it.
    pub shared: Vec<(usize, Stats)>,
    /// The bursts of the most sharers' figure, this benchmark's own
    /// among them, and how many were left out as unreliable; `None`
    /// without bursts.
    pub pooled: Option<(usize, usize)>,
}

/// Measures every figure with the run's threads, the shared-line ones on
/// each of `sharers` threads; `progress` is called after the all-thread
/// figures and after each sharer count.
pub fn measure_all(
    ctx: &Context,
    sharers: &[usize],
    mut progress: impl FnMut(),
) -> Result<Measured> {
    let plan = &ctx.config.plan;
    let own = own_line_increments(&ctx.all, plan)?;
    let local = local_sum_steps(&ctx.all, plan)?;
    let hist = bin_items(&ctx.all, plan, false)?;
    let scatter = bin_items(&ctx.all, plan, true)?;
    let caches = ctx.known_caches();
    let largest = caches.iter().map(|c| c.1).fold(0.0, f64::max);
    let per_thread = ctx.dram_bytes(largest) / ctx.all.threads() as u64;
    let mut scatter_curve = Vec::new();
    for bytes in scatter_curve_sizes(&caches, ctx.all.threads(), per_thread) {
        if let Some(s) = scatter_items_beyond_caches(&ctx.all, plan, bytes, Pages::Huge)? {
            scatter_curve.push((bytes, s));
        }
    }
    let scatter_dram = scatter_items_beyond_caches(&ctx.all, plan, per_thread, Pages::Huge)?
        .map(|s| (per_thread, s));
    progress();
    let mut shared = Vec::new();
    let mut pooled = None;
    for &p in sharers {
        let team = Team::new(&ctx.config.cpus[..p])?;
        let own = shared_line_values(&team, plan)?;
        let s = if Some(&p) == sharers.last() && !ctx.bursts.shared.is_empty() {
            let bursts: Vec<Sample> = ctx.bursts.shared.iter().cloned().chain([own]).collect();
            let (s, left_out) = pool(&bursts, |_| true)?;
            pooled = Some((bursts.len(), left_out));
            s
        } else {
            own
        };
        shared.push((p, s.summary()));
        progress();
    }
    Ok(Measured {
        own,
        local,
        hist,
        scatter,
        scatter_dram,
        scatter_curve,
        shared,
        pooled,
    })
}

/// The output sizes per thread of the scatter's curve: the powers of two
/// from twice the first cache of `caches` (nearest first, the last one
/// shared by the `threads` threads) to twice the last one's capacity per
/// thread, and at most half of `dram_per_thread`, the DRAM point's output.
/// A kernel's pass reads the curve at its own bytes, so the curve steps
/// through every level and past the last whatever their sizes; on a VM
/// that shares the host's last cache the step down to DRAM speed can lie
/// well inside the reported capacity, and it moves with the host's load.
pub fn scatter_curve_sizes(caches: &[NamedSize], threads: usize, dram_per_thread: u64) -> Vec<u64> {
    let Some((first, last)) = caches.first().zip(caches.last()) else {
        return Vec::new();
    };
    let top = (2.0 * last.1 / threads.max(1) as f64).min(dram_per_thread as f64 / 2.0);
    let start = (2.0 * first.1).max(1.0).log2().ceil() as u32;
    (start..63)
        .map(|k| 1u64 << k)
        .take_while(|&b| b as f64 <= top)
        .collect()
}

/// A burst of the shared-line increments on the run's most sharers
/// ([`sharer_counts`]), taken before each benchmark that runs ahead of
/// `c2c` ([`super::bursts`]); `None` with fewer than two CPUs.
pub fn probe(ctx: &Context) -> Result<Option<Sample>> {
    match sharer_counts(ctx.config.cpus.len()).last() {
        Some(&p) => {
            let team = Team::new(&ctx.config.cpus[..p])?;
            shared_line_values(&team, &ctx.config.plan).map(Some)
        }
        None => Ok(None),
    }
}

impl Measured {
    /// The section's `increments`, measured on `threads` threads.
    pub fn record(&self, threads: usize) -> Increments {
        let one = |per: &str, s: &Stats, bins: Option<usize>| {
            let mut i = Increment {
                threads,
                bins,
                per_increment_s: None,
                per_step_s: None,
                per_item_s: None,
                output_bytes: None,
            };
            let slot = match per {
                "increment" => &mut i.per_increment_s,
                "step" => &mut i.per_step_s,
                _ => &mut i.per_item_s,
            };
            *slot = Some(sample(s));
            i
        };
        Increments {
            own_line: Some(one("increment", &self.own, None)),
            shared_line: self
                .shared
                .iter()
                .map(|(p, s)| Increment {
                    threads: *p,
                    ..one("increment", s, None)
                })
                .collect(),
            local: Some(one("step", &self.local, None)),
            histogram: Some(one("item", &self.hist, Some(BINS))),
            scatter: Some(one("item", &self.scatter, Some(BINS))),
            scatter_dram: self.scatter_dram.as_ref().map(|(bytes, s)| Increment {
                output_bytes: Some(*bytes),
                ..one("item", s, Some(BINS))
            }),
            scatter_curve: self
                .scatter_curve
                .iter()
                .map(|(bytes, s)| Increment {
                    output_bytes: Some(*bytes),
                    ..one("item", s, Some(BINS))
                })
                .collect(),
        }
    }

    /// The human table's lines, measured on `threads` threads.
    pub fn table(&self, threads: usize) -> String {
        let mut t = format!(
            "  increments of a counter on its own line: {} each ({threads} threads at once)\n",
            Si(self.own.median, "s"),
        );
        for (p, s) in &self.shared {
            t += &format!(
                "  increments of counters sharing one line, {p} threads: {} each per thread\n",
                Si(s.median, "s")
            );
        }
        t += &format!(
            "  local sum (L1 load + dependent add): {} per step ({threads} threads at once)\n",
            Si(self.local.median, "s"),
        );
        t += &format!(
            "  counting sort over {BINS} bins, in L1: histogram {} and scatter {} per item ({threads} threads at once)\n",
            Si(self.hist.median, "s"),
            Si(self.scatter.median, "s"),
        );
        if !self.scatter_curve.is_empty() {
            let points: Vec<String> = self
                .scatter_curve
                .iter()
                .map(|(bytes, s)| format!("{} {}", binary_bytes(*bytes as f64), Si(s.median, "s")))
                .collect();
            t += &format!(
                "  scatter per item by output per thread: {}\n",
                points.join(", ")
            );
        }
        if let Some((bytes, s)) = &self.scatter_dram {
            t += &format!(
                "  scatter with {} of output per thread (DRAM): {} per item\n",
                binary_bytes(*bytes as f64),
                Si(s.median, "s"),
            );
        }
        t
    }
}

/// Most threads that share one line in [`shared_line_increments`].
pub const MAX_SHARERS: usize = 8;

/// Seconds per increment per thread, every thread of `team` incrementing
/// its own counter on one shared line at once.
pub fn shared_line_increments(team: &Team, plan: &Plan) -> Result<Stats> {
    Ok(shared_line_values(team, plan)?.summary())
}

/// The timings behind [`shared_line_increments`], for pooling.
fn shared_line_values(team: &Team, plan: &Plan) -> Result<Sample> {
    anyhow::ensure!(
        team.threads() <= MAX_SHARERS,
        "at most {MAX_SHARERS} threads share a line"
    );
    let line = SharedLine::default();
    increments(team, plan, |i| &line.0[i])
}

/// Seconds per increment per thread, every thread of `team` incrementing
/// its own counter alone on its line.
pub fn own_line_increments(team: &Team, plan: &Plan) -> Result<Stats> {
    let lines: Vec<OwnLine> = (0..team.threads()).map(|_| OwnLine::default()).collect();
    Ok(increments(team, plan, |i| &lines[i].0)?.summary())
}

/// Seconds per step of a local sum per thread, every thread of `team`
/// summing the one read-only table at once.
pub fn local_sum_steps(team: &Team, plan: &Plan) -> Result<Stats> {
    let table = LocalTable::default();
    let starts = team.each(std::sync::Mutex::new);
    let m = measure(plan, |inner, count| {
        team.time_batch(&starts, inner, count, |&mut from, n| {
            std::hint::black_box(table.sum(from, n));
        })
    })?;
    Ok(m.per_unit.summary())
}

/// Seconds per item of the counting sort's histogram or scatter loop
/// (`scatter` false or true), every thread of `team` on its own
/// L1-resident [`BinBench`] at once.
pub fn bin_items(team: &Team, plan: &Plan, scatter: bool) -> Result<Stats> {
    let states = team.each(|_| std::sync::Mutex::new(BinBench::default()));
    let m = measure(plan, |inner, count| {
        team.time_batch(&states, inner, count, |b, passes| {
            if scatter {
                b.scatter(passes)
            } else {
                b.histogram(passes)
            }
        })
    })?;
    Ok(m.per_unit.map(|pass| pass / SEQUENCE as f64)?.summary())
}

/// Seconds per item of the scatter loop on every thread of `team` at once,
/// each writing its own `per_thread_bytes` of output on `pages` in one
/// pass ([`BinBench::scatter_through`]); none when that output is too small
/// to hold a line per bin.
pub fn scatter_items_beyond_caches(
    team: &Team,
    plan: &Plan,
    per_thread_bytes: u64,
    pages: Pages,
) -> Result<Option<Stats>> {
    let states = team.each(
        |_| -> Result<std::sync::Mutex<(BinBench, Region, Layout)>> {
            let mut region = Region::new(per_thread_bytes as usize, pages)?;
            let bench = BinBench::default();
            let layout = bench.layout(region.atomic_u32s().len());
            Ok(std::sync::Mutex::new((bench, region, layout)))
        },
    );
    let states = states.into_iter().collect::<Result<Vec<_>>>()?;
    let items = states[0]
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .2
        .items();
    if items == 0 {
        return Ok(None);
    }
    let m = measure(plan, |inner, count| {
        team.time_batch(&states, inner, count, |s, passes| {
            let (bench, region, layout) = &mut *s;
            bench.scatter_through(region.atomic_u32s(), layout, passes)
        })
    })?;
    Ok(Some(m.per_unit.map(|pass| pass / items as f64)?.summary()))
}

fn increments<'a>(
    team: &Team,
    plan: &Plan,
    counter: impl Fn(usize) -> &'a AtomicU64,
) -> Result<Sample> {
    let states: Vec<std::sync::Mutex<&AtomicU64>> = (0..team.threads())
        .map(|i| std::sync::Mutex::new(counter(i)))
        .collect();
    let m = measure(plan, |inner, count| {
        team.time_batch(&states, inner, count, |c, n| bump(c, n))
    })?;
    Ok(m.per_unit)
}

/// Thread counts for the shared-line increments: 2, 4, 8 and the run's
/// count, as far as the run and [`MAX_SHARERS`] allow.
pub fn sharer_counts(cpus: usize) -> Vec<usize> {
    let top = cpus.min(MAX_SHARERS);
    let mut v: Vec<usize> = [2, 4, 8].into_iter().filter(|&p| p <= top).collect();
    if top >= 2 && !v.contains(&top) {
        v.push(top);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_run_on_two_threads() {
        let cpus = crate::pin::allowed_cpus();
        if cpus.len() < 2 {
            return;
        }
        let plan = Plan::quick().with_reps(3);
        let team = Team::new(&cpus[..2]).unwrap();
        assert!(shared_line_increments(&team, &plan).unwrap().median > 0.0);
        assert!(own_line_increments(&team, &plan).unwrap().median > 0.0);
        assert!(local_sum_steps(&team, &plan).unwrap().median > 0.0);
        assert!(bin_items(&team, &plan, false).unwrap().median > 0.0);
        assert!(bin_items(&team, &plan, true).unwrap().median > 0.0);
    }

    #[test]
    fn the_scatter_curve_doubles_from_twice_l1_past_the_last_cache() {
        let caches = |sizes: &[(&str, f64)]| -> Vec<NamedSize> {
            sizes.iter().map(|(n, b)| (n.to_string(), *b)).collect()
        };
        let kib = 1024.0;
        let three = caches(&[
            ("L1", 32.0 * kib),
            ("L2", 512.0 * kib),
            ("L3", 32768.0 * kib),
        ]);
        // From twice L1 to twice the L3's 16 MiB per thread on 2 threads.
        let curve = scatter_curve_sizes(&three, 2, 1 << 30);
        assert_eq!(curve.first(), Some(&(64 << 10)));
        assert_eq!(curve.last(), Some(&(32 << 20)));
        assert_eq!(curve.len(), 10);
        assert!(curve.windows(2).all(|w| w[1] == 2 * w[0]));
        // Below half of the DRAM point's output.
        assert_eq!(
            scatter_curve_sizes(&three, 2, 16 << 20).last(),
            Some(&(8 << 20))
        );
        // A 48 KiB L1 starts at the next power of two above 96 KiB.
        let odd = caches(&[("L1", 48.0 * kib), ("L2", 2048.0 * kib)]);
        assert_eq!(
            scatter_curve_sizes(&odd, 2, 1 << 30).first(),
            Some(&(128 << 10))
        );
        assert!(scatter_curve_sizes(&[], 2, 1 << 30).is_empty());
    }

    #[test]
    fn sharer_counts_double_up_to_eight() {
        assert_eq!(sharer_counts(2), vec![2]);
        assert_eq!(sharer_counts(6), vec![2, 4, 6]);
        assert_eq!(sharer_counts(64), vec![2, 4, 8]);
        assert!(sharer_counts(1).is_empty());
    }
}
