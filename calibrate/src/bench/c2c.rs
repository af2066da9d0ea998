//! Core-to-core communication through shared memory (lecture §2.2, §2.4).
//!
//! Two threads pinned to the first two CPUs of the run:
//!
//! * **Ping-pong**: they take turns writing one flag in its own cache line;
//!   each write must fetch the line from the other core. One-way latency =
//!   round trip / 2: the time one cache line takes between two cores, which
//!   is also the cost of one write to a falsely shared line. A burst of it
//!   runs before every benchmark ahead of this one too ([`probe`]), and the
//!   bursts are pooled ([`super::bursts`]): a VM's host moves the vCPUs
//!   between cores within seconds, and one burst sees one placement.
//! * **Hand-off** ([`handoff()`]): the writer fills n bytes and raises a
//!   flag; the reader waits for it, reads them and answers. T(n) = T0 + n/B
//!   is fitted to the times of 64 B to 4 MiB, and its protocol regimes
//!   apart.
//! * **Increments and bins**: counters on shared and own lines, a local
//!   sum and the counting sort's loops, all threads at once
//!   ([`super::increments`]); the shared line on the most sharers is
//!   pooled with bursts of it spread over the run, as the ping-pong is.
//! * **Regions**: an empty parallel region of the pinned team on one
//!   thread and on all ([`super::regions`]).
//!
//! # Section `c2c`
//!
//! ```json
//! { "cpus": [0, 1],
//!   "round_trip_s": {"median": .., "ci_lo": .., ...}, "one_way_s": {"median": .., ...},
//!   "handoff": { "points": [ {"bytes": 64, "time_s": {"median": .., ...}} ],
//!                "fit": {"t0_s": {"point": .., "lo": .., "hi": ..}, "bandwidth_Bps": {..}, "r_squared": .. },
//!                "regimes": [ {"from_bytes": .., "to_bytes": .., "t0_s": {..}, "bandwidth_Bps": {..}, "r_squared": ..} ] },
//!   "increments": { "own_line": {"threads": 2, "per_increment_s": {..}},
//!                   "shared_line": [ {"threads": 2, "per_increment_s": {..}} ],
//!                   "local": {"threads": 2, "per_step_s": {..}},
//!                   "histogram": {"threads": 2, "bins": 256, "per_item_s": {..}},
//!                   "scatter": {"threads": 2, "bins": 256, "per_item_s": {..}} },
//!   "regions": [ {"threads": 1, "per_region_s": {..}}, {"threads": 2, "per_region_s": {..}} ] }
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, Result};
use models::profile::c2c::{C2cSection, Handoff, HandoffPoint};
use models::profile::NetworkRegime;
use models::profile::Section;
use models::stats::{Better, Sample, Summary as Stats};
use models::units::{binary_bytes, Si};

use super::bursts::pool;
use super::{increments, noisy_warning, regions, sample, size_grid, Bench, Context, Outcome};
use crate::counters::gettid;
use crate::pin::pin_current;
use crate::timer::{measure, serial_with, Plan};
use crate::trust::{c2c_bound, headline, shared_core, withdraw, SHARED_HIT_SHARE};

mod handoff;
use handoff::regime_record;
pub use handoff::{fit_handoff, handoff, HANDOFF_MAX, HANDOFF_MIN};

/// Flag value that tells the partner thread to stop.
const STOP: u64 = u64::MAX;

/// The core-to-core benchmark.
pub struct C2c;

/// A value alone in its 128-byte block (two lines: adjacent-line prefetch
/// cannot drag a neighbour along).
#[repr(align(128))]
struct Padded<T>(T);

/// The thread id the partner thread stores in `slot` once it runs.
fn partner_tid(slot: &AtomicU64) -> u64 {
    loop {
        match slot.load(Ordering::Acquire) {
            0 => std::hint::spin_loop(),
            tid => return tid,
        }
    }
}

/// One-way latency samples (seconds) of a ping-pong between `a` and `b`.
pub fn pingpong(a: core_affinity::CoreId, b: core_affinity::CoreId, plan: &Plan) -> Result<Sample> {
    let flag = Padded(AtomicU64::new(0));
    let partner = AtomicU64::new(0);
    std::thread::scope(|s| {
        let pong = s.spawn(|| {
            pin_current(b);
            partner.store(gettid(), Ordering::Release);
            loop {
                let v = flag.0.load(Ordering::Acquire);
                if v == STOP {
                    break;
                }
                if v % 2 == 1 {
                    flag.0.store(v + 1, Ordering::Release);
                } else {
                    std::hint::spin_loop();
                }
            }
        });
        let ping = s.spawn(|| -> Result<Sample> {
            pin_current(a);
            let mut seq = 0u64;
            let r = measure(
                plan,
                serial_with(&[partner_tid(&partner)], |rounds| {
                    for _ in 0..rounds {
                        flag.0.store(seq + 1, Ordering::Release);
                        while flag.0.load(Ordering::Acquire) != seq + 2 {
                            std::hint::spin_loop();
                        }
                        seq += 2;
                    }
                }),
            );
            flag.0.store(STOP, Ordering::Release);
            Ok(r?.per_unit.map(|rt| rt / 2.0)?)
        });
        let r = ping
            .join()
            .map_err(|_| anyhow!("the ping thread panicked"))?;
        pong.join()
            .map_err(|_| anyhow!("the pong thread panicked"))?;
        r
    })
}

/// A burst of the ping-pong between the run's first two CPUs, taken
/// before each benchmark that runs ahead of this one
/// ([`super::bursts`]); `None` with fewer than two CPUs.
pub fn probe(ctx: &Context) -> Result<Option<Sample>> {
    match ctx.config.cpus[..] {
        [a, b, ..] => pingpong(a, b, &ctx.config.plan).map(Some),
        _ => Ok(None),
    }
}

/// Where the host runs the first two of `cpus` now: the median one-way
/// latency of a short ping-pong between them, s (about 10 ms); `None`
/// with fewer than two CPUs. It tells one chiplet from two, or one core's
/// siblings from two cores, beside a measurement that depends on it
/// (`super::stream`'s DRAM bursts, `predict run`'s kernels).
pub fn placement(cpus: &[core_affinity::CoreId]) -> Result<Option<f64>> {
    let plan = Plan::quick().with_reps(PLACEMENT_REPS).without_retry();
    match cpus {
        [a, b, ..] => Ok(Some(pingpong(*a, *b, &plan)?.summary().median)),
        _ => Ok(None),
    }
}

/// Kept timings of a [`placement`] probe.
const PLACEMENT_REPS: usize = 5;

/// The bursts of one-way latency timings that describe two separate
/// cores, pooled ([`super::bursts::pool`]), and how many were left out:
/// those unreliable, above [`crate::trust::MAX_C2C_S`] (descheduled), or
/// below `floor` (half a hit in the cache the two CPUs share: one core's
/// siblings then).
fn pool_bursts(bursts: &[Sample], floor: Option<f64>) -> Result<(Sample, usize)> {
    pool(bursts, |b| {
        let v = best(&b.summary());
        c2c_bound(v).is_none() && floor.is_none_or(|f| v >= f)
    })
}

/// The capability estimate of a time sample (its low quantile).
fn best(s: &Stats) -> f64 {
    s.capability(Better::Lower).point
}

/// The latency of a hit in the cache CPUs `a` and `b` share, and where it
/// was read ([`shared_hit_of`]). None when the OS reports them sharing a
/// private level (siblings it admits to), reports no shared level, or no
/// latency curve is known.
fn shared_hit(ctx: &Context, a: usize, b: usize) -> Option<(f64, String)> {
    let data = ctx.sys.data_caches();
    let first_shared = data
        .iter()
        .map(|c| c.reported.level)
        .filter(|&l| ctx.sys.sharing(l, &[a, b]) > 1)
        .min()?;
    let private = data
        .iter()
        .filter(|c| c.reported.level < first_shared)
        .map(|c| c.reported.size_bytes as f64)
        .reduce(f64::max)?;
    let latency = ctx.known.sections.latency.as_ref()?;
    let pages = latency.detection_pages.as_deref().unwrap_or("2MiB");
    let curve = latency.latency_at(2.0 * private, pages, |e| e.point)?;
    let level = ctx
        .known
        .levels
        .iter()
        .filter(|l| l.name != "DRAM")
        .nth(first_shared as usize - 1)
        .and_then(|l| Some((l.size_bytes?, l.latency_s?.point, l.name.as_str())));
    Some(shared_hit_of(level, private, curve))
}

/// A shared hit from the latency curve at twice the largest private size
/// `private` (`curve`: half of a random chase there may still hit the
/// private caches, so it errs low) and the plateau of `level` (capacity,
/// latency, name), the detected level as many places out as the OS reports
/// private levels: the lower of the two, the plateau only when its capacity
/// is beyond twice the private size as well. A detected capacity is the
/// half-way point of its step, so a private level's own step (or a part
/// of it a disturbance split off) can read up to about twice the OS's
/// size, and its hit is then no shared hit.
fn shared_hit_of(level: Option<(f64, f64, &str)>, private: f64, curve: f64) -> (f64, String) {
    match level {
        Some((size, hit, name)) if size > 2.0 * private && hit < curve => {
            (hit, format!("the {name} plateau"))
        }
        _ => (curve, binary_bytes(2.0 * private)),
    }
}

impl Bench for C2c {
    fn name(&self) -> &'static str {
        "c2c"
    }

    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let mut out = Outcome::default();
        let cpus = &ctx.config.cpus;
        if cpus.len() < 2 {
            out.notes.push(format!(
                "c2c skipped: it needs 2 logical CPUs, this run has {}",
                cpus.len()
            ));
            return Ok(out);
        }
        let (a, b) = (cpus[0], cpus[1]);
        let plan = &ctx.config.plan;
        let sizes: Vec<u64> = size_grid(HANDOFF_MIN, HANDOFF_MAX, 1, 64)
            .into_iter()
            .step_by(ctx.octave_step())
            .collect();
        let sharers = increments::sharer_counts(cpus.len());
        let region_counts = regions::region_counts(cpus.len()).len();
        let bar = ctx.progress.bar(
            "c2c",
            (sizes.len() + sharers.len() + region_counts) as u64 + 2,
        );
        let mut own = pingpong(a, b, plan)?;
        if own.unreliable().is_some() || c2c_bound(best(&own.summary())).is_some() {
            // Once more: a descheduled partner usually comes back soon.
            own = pingpong(a, b, plan)?;
        }
        let own_noise = noisy_warning("core-to-core latency", &own.summary());
        let hit = shared_hit(ctx, a.id, b.id);
        let bursts: Vec<Sample> = ctx.bursts.line.iter().cloned().chain([own]).collect();
        let (one_way, left_out) =
            pool_bursts(&bursts, hit.as_ref().map(|h| SHARED_HIT_SHARE * h.0))?;
        let one_way = one_way.summary();
        let siblings = match &hit {
            Some((h, at)) => format!(
                "one core's siblings: below {} = {SHARED_HIT_SHARE} × a shared hit at {at}",
                Si(SHARED_HIT_SHARE * h, "s")
            ),
            None => "one core's siblings: no shared hit known".into(),
        };
        out.notes.push(format!(
            "core-to-core latency: {} burst(s) of the ping-pong spread over the run, {} pooled, {left_out} left out (unreliable, descheduled, or on {siblings})",
            bursts.len(),
            bursts.len() - left_out
        ));
        bar.inc(1);
        let times = handoff(a, b, &sizes, plan, || bar.inc(1))?;
        let inc = increments::measure_all(ctx, &sharers, || bar.inc(1))?;
        let region_times = regions::measure_regions(cpus, plan, || bar.inc(1))?;
        bar.finish_and_clear();
        out.warnings
            .extend(noisy_warning("own-line increment time", &inc.own));
        if let Some((n, left_out)) = inc.pooled {
            out.notes.push(format!(
                "shared-line increments: {n} burst(s) spread over the run, {} pooled, {left_out} left out (unreliable)",
                n - left_out
            ));
        }
        headline(&mut out, "core_to_core_latency_s", &one_way, best(&one_way));
        let placement = hit.and_then(|(hit, at)| shared_core(best(&one_way), hit, &at));
        if let Some(why) = c2c_bound(best(&one_way))
            .or(placement)
            .filter(|_| one_way.unreliable.is_none())
        {
            withdraw(&mut out, "core_to_core_latency_s", why);
        }
        out.warnings.extend(own_noise);
        let x: Vec<f64> = sizes.iter().map(|&s| s as f64).collect();
        let y: Vec<f64> = times.iter().map(|s| s.median).collect();
        let (all, regimes) = fit_handoff(&x, &y)?;
        if all.t0_s.point < 0.0 {
            out.warnings.push(format!(
                "the hand-off fit gives a negative T0 ({}): the small sizes do not pin it down",
                Si(all.t0_s.point, "s")
            ));
        }
        let one = sample(&one_way);
        out.section = Some(Section::C2c(C2cSection {
            cpus: vec![a.id, b.id],
            round_trip_s: Some(one.scaled(2.0)),
            one_way_s: Some(one),
            handoff: Some(Handoff {
                points: sizes
                    .iter()
                    .zip(&times)
                    .map(|(n, s)| HandoffPoint {
                        bytes: *n,
                        time_s: sample(s),
                    })
                    .collect(),
                fit: regime_record(&all),
                regimes: regimes.iter().map(regime_record).collect(),
            }),
            increments: Some(inc.record(ctx.all.threads())),
            regions: regions::record(&region_times),
        }));
        out.table = table(a.id, b.id, &one_way, &all, &regimes)
            + &inc.table(ctx.all.threads())
            + &regions::table(&region_times);
        Ok(out)
    }
}

/// The human table's lines of the ping-pong and the hand-off.
fn table(
    a: usize,
    b: usize,
    one_way: &Stats,
    all: &NetworkRegime,
    regimes: &[NetworkRegime],
) -> String {
    let mut t = format!(
        "Core-to-core (CPU {a} <-> {b}): one-way {} (round trip {})\n",
        Si(one_way.median, "s"),
        Si(2.0 * one_way.median, "s")
    );
    t += &format!(
        "  hand-off {}..{}: T(n) = T0 + n/B, T0 = {}, B = {} (R² {:.3})\n",
        binary_bytes(HANDOFF_MIN as f64),
        binary_bytes(HANDOFF_MAX as f64),
        Si(all.t0_s.point, "s"),
        Si(all.bandwidth_Bps.point, "B/s"),
        all.r_squared
    );
    if regimes.len() > 1 {
        for r in regimes {
            t += &format!(
                "    regime {}..{}: T0 = {}, B = {}\n",
                binary_bytes(r.from_bytes),
                binary_bytes(r.to_bytes),
                Si(r.t0_s.point, "s"),
                Si(r.bandwidth_Bps.point, "B/s")
            );
        }
    }
    t
}

#[cfg(test)]
mod tests;
