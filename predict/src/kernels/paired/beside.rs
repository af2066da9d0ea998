//! The paired re-measure interleaved with a variant's timings: a short
//! round of the figures [`between`] re-measures after each timing, the
//! memory figure after every other one, each drift read from its rounds
//! as the kernel's time is read from its timings.

use std::time::Duration;

use anyhow::Result;
use calibrate::harness::pin::Team;
use calibrate::harness::timer::Plan;
use calibrate::harness::StreamRegions;
use models::profile::Profile;
use models::stats::{capability, median, Better};

use super::{between, Drift, Paired, StreamTarget};
use crate::kernels::team::{team, Pace};
use crate::kernels::work::{predict, Work};
use crate::machine::Machine;

/// One round of [`between`] between two of a kernel's timings: two
/// timings (two 3 ms rounds of a lock) and no re-measure, about 2 to 12 ms
/// in all.
fn round_plan() -> Plan {
    Plan {
        warmup: 0,
        reps: 2,
        min_time: Duration::from_millis(1),
        retry_cap: Duration::ZERO,
    }
}

/// The paired re-measure of one variant, interleaved with its timings.
///
/// On the 2-vCPU Zen 4 VM the host's placement of the vCPUs changes within
/// a second: in ten back-to-back `predict run --kernel binning` runs, the
/// cell locks took 16.7 ms in one while the spread mutexes measured right
/// after them read as profiled, and in another the spread mutexes read
/// 0.34× the profile's throughput right after the cell locks had run at
/// their usual 6.1 ms. So the figures of the parent module's `between`
/// are measured between the kernel's timings, one short round after each,
/// and each drift is read from its rounds as the kernel's time is read from
/// its timings (the 0.8-quantile of the rounds' rates, where the time is
/// the 0.2-quantile of the timings). The memory figure is measured the
/// same way on regions allocated once, after every other timing and at
/// most [`MEMORY_ROUNDS`] times (a round at a DRAM working set takes tens
/// of milliseconds).
pub struct Beside<'a> {
    state: State<'a>,
}

/// The most memory rounds per variant.
pub const MEMORY_ROUNDS: usize = 9;

enum State<'a> {
    /// No profile or no work: nothing to re-measure.
    Off,
    On {
        work: &'a Work,
        profile: &'a Profile,
        team: Team,
        rounds: Vec<Paired>,
        /// Whether the kernel's passes restore its cache after a round
        /// ([`Beside::streams_from_a_cache`]).
        restores: bool,
        memory: Option<Box<Memory>>,
        timings: usize,
    },
    /// A round failed; the variant goes without its pair.
    Failed(anyhow::Error),
}

/// The memory figure's target, its regions, the bandwidths its rounds
/// measured (B/s, write-allocate counted), and, for a point a cache holds,
/// its kernel's pace (seconds per byte) against the profile's.
struct Memory {
    target: StreamTarget,
    regions: StreamRegions,
    now: Vec<f64>,
    pace: Option<Pace>,
}

impl Memory {
    /// The target of `work`'s memory time on `team`, its regions
    /// allocated by the team's threads; none without a target.
    fn new(work: &Work, team: &Team, profile: &Profile) -> Result<Option<Self>> {
        let Some(target) = StreamTarget::memory(work, team.threads(), profile) else {
            return Ok(None);
        };
        let regions = StreamRegions::new(team, target.per_thread_bytes, target.pages())?;
        Ok(Some(Self {
            pace: target
                .cached
                .then(|| Pace::from(1.0 / target.profile_bandwidth)),
            target,
            regions,
            now: Vec::new(),
        }))
    }

    /// One round's figure with `plan`. Where a cache holds the point, the
    /// kernel's timings have just won it back, so untimed measures come
    /// first, until the target's kernel runs within 10% of the profile's
    /// pace or of its fastest since ([`Pace::restore`]), as `calibrate`'s
    /// points run on their settled caches: on the Xeon VM the copy at
    /// 64 MiB per thread re-measured beside the settled 4096×4096 stencil
    /// read 0.52–0.60 of its profile figure without them, and the paired
    /// prediction +45% to +53%.
    fn round(&mut self, team: &Team, plan: &Plan) -> Result<f64> {
        let (target, regions) = (&self.target, &self.regions);
        let pass = || target.now(regions, team, plan);
        if let Some(pace) = &mut self.pace {
            pace.restore(|| pass().map(|b| 1.0 / b))?;
        }
        let now = pass()?;
        if let Some(pace) = &mut self.pace {
            pace.steady(1.0 / now);
        }
        Ok(now)
    }

    /// The drift: its rounds read as the kernel's timings are
    /// ([`as_timed`]), or one measure with `plan` when no round ran.
    fn drift(&self, team: &Team, plan: &Plan) -> Result<Drift> {
        let on = format!("{} thr", team.threads());
        Ok(if self.now.is_empty() {
            let now = self.target.now(&self.regions, team, plan)?;
            self.target.drift(now, &on)
        } else {
            let what = of_rounds(&on, self.now.len());
            self.target.drift(as_timed(self.now.clone()), &what)
        })
    }
}

impl<'a> Beside<'a> {
    /// The re-measure of `work` on `threads` threads against `profile`;
    /// none without either.
    pub fn new(profile: Option<&'a Profile>, work: Option<&'a Work>, threads: usize) -> Self {
        let (Some(profile), Some(work)) = (profile, work) else {
            return Self { state: State::Off };
        };
        let on = team(threads).and_then(|team| {
            let memory = Memory::new(work, &team, profile)?.map(Box::new);
            let memory_binds =
                predict(work, &Machine::new(profile), threads).is_ok_and(|p| p.memory_binds());
            Ok(State::On {
                work,
                profile,
                team,
                rounds: Vec::new(),
                restores: memory_binds && memory.as_ref().is_some_and(|m| m.pace.is_some()),
                memory,
                timings: 0,
            })
        });
        Self {
            state: on.unwrap_or_else(State::Failed),
        }
    }

    /// Whether the kernel streams a working set that a cache holds, as
    /// the model's levels count it, and its memory traffic binds: a round
    /// then displaces that working set from a cache the host's other guests
    /// share, and winning it back takes the kernel passes
    /// (`crate::kernels::team::time`). A kernel the model binds elsewhere
    /// (compute, a lock, a line) does not wait on that cache: on the Xeon
    /// VM the blocked matmul, whose dgemm pace has two states, ran every
    /// restoring pass after every round, 15 s of a default `predict run`'s
    /// 66 s.
    pub fn streams_from_a_cache(&self) -> bool {
        matches!(&self.state, State::On { restores: true, .. })
    }

    /// One round, between two of the kernel's timings; whether it ran (and
    /// so filled the caches with its own working sets).
    pub fn round(&mut self) -> bool {
        let State::On {
            work,
            profile,
            team,
            rounds,
            memory,
            timings,
            ..
        } = &mut self.state
        else {
            return false;
        };
        *timings += 1;
        let plan = round_plan();
        let round = between(work, team, profile, &plan).and_then(|p| {
            rounds.push(p);
            match memory {
                Some(m) if *timings % 2 == 1 && m.now.len() < MEMORY_ROUNDS => {
                    let now = m.round(team, &plan)?;
                    m.now.push(now);
                    Ok(())
                }
                _ => Ok(()),
            }
        });
        if let Err(e) = round {
            self.state = State::Failed(e);
        }
        true
    }

    /// The drifts: each of `between`'s and the memory figure read from its
    /// rounds as the kernel's time is from its timings (if no round ran,
    /// one quick re-measure). None when there was nothing to re-measure.
    pub fn finish(self) -> Result<Option<Paired>> {
        let (work, profile, team, rounds, memory) = match self.state {
            State::Off => return Ok(None),
            State::Failed(e) => return Err(e),
            State::On {
                work,
                profile,
                team,
                rounds,
                memory,
                ..
            } => (work, profile, team, rounds, memory),
        };
        let plan = Plan::quick();
        let between = if rounds.is_empty() {
            between(work, &team, profile, &plan)?
        } else {
            of_the_rounds(&rounds)
        };
        Ok(Some(Paired {
            memory: memory.map(|m| m.drift(&team, &plan)).transpose()?,
            ..between
        }))
    }
}

/// A figure's rounds (rates) read as the kernel's time is read from its
/// timings, one round after each: the capability estimate, the
/// 0.8-quantile of the rates where the time is the 0.2-quantile
/// (`models::stats::CAPABILITY_QUANTILE`), so that the pair takes the
/// same moments of the run. Until 2026-12-06 it was the median of the
/// rounds, which paired a time from the fastest fifth of the timings with
/// a figure from the middle of the rounds. On the Zen 4 VM, in a run
/// whose two vCPUs sat on one chiplet, the adjacent counters' rounds read
/// 0.40 to 0.95 of the profile's increments, and the median round put the
/// paired prediction +40% off; in six runs of the false-sharing kernel each
/// way the adjacent counters read +1% to +43% paired with the median and
/// −12% to 0% with this quantile, and the padded and local counters, whose
/// figures did not move, −1% to −2% and −2% to −8%.
fn as_timed(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    capability(&rates, Better::Higher).point
}

/// Each figure of `rounds` read from its rounds ([`as_timed`]); where the
/// threads ran, the median of the rounds' line probes.
fn of_the_rounds(rounds: &[Paired]) -> Paired {
    let of = |field: fn(&Paired) -> &Option<Drift>| -> Option<Drift> {
        let drifts: Vec<&Drift> = rounds.iter().filter_map(|r| field(r).as_ref()).collect();
        let first = drifts.first()?;
        Some(Drift {
            what: of_rounds(&first.what, drifts.len()),
            now: as_timed(drifts.iter().map(|d| d.now).collect()),
            ..(*first).clone()
        })
    };
    Paired {
        compute: of(|p| &p.compute),
        increments: of(|p| &p.increments),
        local_sums: of(|p| &p.local_sums),
        bin_loops: of(|p| &p.bin_loops),
        scatters: of(|p| &p.scatters),
        handoffs: of(|p| &p.handoffs),
        migrations: of(|p| &p.migrations),
        loads: of(|p| &p.loads),
        span: of(|p| &p.span),
        placement_line_s: Some(rounds.iter().filter_map(|r| r.placement_line_s).collect())
            .filter(|v: &Vec<f64>| !v.is_empty())
            .map(median),
        ..Paired::default()
    }
}

/// `what` read from `n` rounds ([`as_timed`]).
fn of_rounds(what: &str, n: usize) -> String {
    format!("{what}, 0.8-quantile of {n} rounds between the kernel's timings")
}

#[cfg(test)]
mod tests;
