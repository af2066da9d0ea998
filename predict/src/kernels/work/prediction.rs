//! The time the machine profile says a declared [`Work`] takes: each
//! resource's term, the slowest binding, and the two states a term or the
//! memory system was measured in.

use models::kernel::Traffic;
use models::profile::lock::two_states;
use models::units::Si;
use serde::Serialize;

use super::{Demand, Work, REGIONS, SPAN};
use crate::kernels::terms;
use crate::loop_figures::levels::LastCache;
use crate::loop_figures::Bound;
use crate::machine::{Machine, Missing};

mod overlap;
use overlap::non_overlapping;

/// The time one resource takes, with the formula used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Term {
    pub resource: &'static str,
    pub seconds: f64,
    pub explain: String,
}

/// A kernel's predicted time: the slowest resource binds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub seconds: f64,
    pub binding: &'static str,
    pub terms: Vec<Term>,
    /// When a lock binds that has two states: the time in the fast and in
    /// the slow one, from the profile's rounds
    /// (`models::profile::lock::HandOff`) or, for one lock for all
    /// threads, the operations one at a time with no hand-off
    /// ([`terms::lock`]). When a falsely shared line binds whose bursts
    /// have two states: the time in each ([`terms::increments`]). When
    /// compute binds at a ceiling whose bursts saw the host in two
    /// states: the time at each ([`terms::compute`]). When
    /// memory at DRAM binds and the profile's DRAM bursts saw two states
    /// ([`Machine::dram_two_states`]): the prediction with every figure at
    /// the fast and at the slow end of its interval, the DRAM points' being
    /// their fastest and slowest burst or, when line probes beside the
    /// bursts saw two placements of the threads, each placement's median
    /// burst, the far placement's read with the last cache unshared where
    /// its line says the threads share no cache ([`Machine::apart`]).
    /// Before those, when the working set lies on the last cache's step
    /// ([`Machine::on_last_cache_step`]): the prediction with all of that
    /// cache and with none of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states_s: Option<[f64; 2]>,
}

impl Prediction {
    /// Whether memory traffic binds: the memory term alone or added to
    /// one core's load/store work (ECM).
    pub fn memory_binds(&self) -> bool {
        is_memory(self.binding)
    }
}

/// Whether a term's resource is memory traffic: the memory term alone or
/// added to one core's load/store work (ECM, [`non_overlapping`]).
fn is_memory(resource: &str) -> bool {
    resource.starts_with("memory")
}

/// Predicts `work` on `threads` threads of the profiled machine:
/// T = regions × t_region + max over resources of each resource's time
/// (the team's start and join, [`Demand::Regions`], before and after
/// whatever binds), where the load/store
/// work of [`Demand::BinLoop`]s, [`Demand::Reuse`] and [`Demand::Restarts`]
/// counts as one resource with the core's own share of the memory traffic
/// at one thread's rates (their sum, ECM's T_core), which the memory term
/// on all threads bounds apart (T_bus), both at once near the calibrated
/// knee (`models::saturation`).
pub fn predict(work: &Work, m: &Machine, threads: usize) -> Result<Prediction, Missing> {
    predict_at(work, m, threads, Bound::Point)
}

/// `work` as the memory system serves it: the lines of every reuse whose
/// window no cache holds ([`terms::reused_from_memory`]) are loaded from
/// memory again, so their bytes join the streamed traffic as loads (of
/// the first memory demand, or of one of their own over the window). On
/// the Zen 4 VM a copy on two threads that read its source again two
/// lags behind (C, AVX2) took 1.30–1.38 ns per element and thread with
/// windows of 16–64 MiB per thread against 0.84 ns for the plain copy:
/// the 40 bytes per element of a copy with every reread from DRAM at the
/// copy's bandwidth take 1.40 ns.
fn with_reloads(work: &Work, m: &Machine, threads: usize) -> Work {
    let (reloads, window) = work.reloads(m, threads);
    let mut out = work.clone();
    if reloads > 0.0 {
        let extra = Traffic {
            load_bytes: reloads,
            ..Traffic::default()
        };
        let memory = out.demands.iter_mut().find_map(|d| match d {
            Demand::Memory { traffic, .. } => Some(traffic),
            _ => None,
        });
        match memory {
            Some(t) => *t = t.plus(extra),
            None => out.demands.push(Demand::Memory {
                traffic: extra,
                per_thread_bytes: window,
                huge_pages: work.huge_pages(),
                isa: work.memory().next().and_then(|(.., isa)| isa),
            }),
        }
    }
    out
}

/// [`predict`] with the profile's figures read at `bound`: the point
/// estimates, or the ends of their intervals for the prediction's range.
pub fn predict_at(
    work: &Work,
    m: &Machine,
    threads: usize,
    bound: Bound,
) -> Result<Prediction, Missing> {
    // Its streams read the figures of the pages its arrays are on.
    let m = &m.on_pages(work.huge_pages());
    // The work as the memory system serves it; the two states below
    // start again from the caller's `work`.
    let served = &with_reloads(work, m, threads);
    let mut terms = Vec::new();
    let mut load_store_s = 0.0;
    // The two states of each lock, shared line or ceiling a term reads.
    let mut term_states = Vec::new();
    let working_set = served.memory().map(|(_, bytes, _)| bytes).reduce(f64::max);
    // The instruction set its loops are built for, as its streams name it.
    let loop_isa = served.memory().find_map(|(.., isa)| isa);
    for d in &served.demands {
        let term = match d {
            Demand::Flops {
                flops,
                precision,
                ceiling,
                isa,
            } => stated(
                terms::compute(m, *flops, precision, threads, *ceiling, *isa, bound)?,
                &mut term_states,
            ),
            Demand::Memory {
                traffic,
                per_thread_bytes,
                isa,
                ..
            } => terms::memory(m, traffic, threads, *per_thread_bytes, *isa, bound)?,
            Demand::Random {
                accesses,
                huge_pages,
            } => terms::random(m, accesses, threads, *huge_pages, bound)?,
            Demand::Chain { steps_per_thread } => terms::chain(m, *steps_per_thread, bound)?,
            Demand::Span {
                depth,
                elements_per_thread,
                precision,
                isa,
            } => terms::span(
                m,
                *depth,
                *elements_per_thread,
                precision,
                *isa,
                threads,
                bound,
            )?,
            Demand::Lock {
                ops,
                kind,
                lanes,
                critical_s,
                data_lines,
            } => {
                let lock = terms::LockDemand {
                    ops: *ops,
                    kind: *kind,
                    lanes: *lanes,
                    critical_s: *critical_s,
                    data_lines: *data_lines,
                };
                stated(terms::lock(m, &lock, threads)?, &mut term_states)
            }
            Demand::Increments {
                per_thread,
                sharers,
            } => stated(
                terms::increments(m, *per_thread, *sharers, threads)?,
                &mut term_states,
            ),
            Demand::LocalSum { steps_per_thread } => terms::local_sum(m, *steps_per_thread)?,
            Demand::BinLoop {
                kind,
                items_per_thread,
                working_set_per_thread,
            } => terms::bin_loop(
                m,
                *kind,
                *items_per_thread,
                *working_set_per_thread,
                threads,
                bound,
            )?,
            Demand::Reuse {
                bytes_per_thread,
                window_bytes,
            } => terms::reuse(
                m,
                *bytes_per_thread,
                *window_bytes,
                threads,
                working_set.unwrap_or(0.0),
                loop_isa,
                bound,
            )?,
            Demand::Restarts {
                runs_per_thread,
                segment_bytes,
                column_bytes,
                per_thread_bytes,
            } => terms::restarts(
                m,
                *runs_per_thread,
                *segment_bytes,
                *column_bytes,
                threads,
                *per_thread_bytes,
                bound,
            )?,
            Demand::Regions { count } => terms::regions(m, *count, threads),
        };
        if d.is_load_store() {
            load_store_s += term.seconds;
        }
        terms.push(term);
    }
    terms.extend(chains_with_loads(served, &terms, m, threads, bound));
    let chain_overlap = working_set.and_then(|b| m.chain_overlap(b));
    // One core's transfers, read (and leaned on) only for a sum that uses
    // them.
    let has_chain = served
        .demands
        .iter()
        .any(|d| matches!(d, Demand::Chain { .. }));
    let one_core_memory_s = if load_store_s > 0.0 || has_chain {
        served
            .memory()
            .map(|(traffic, bytes, isa)| {
                m.one_core_traffic_time(traffic, threads, bytes, isa, bound)
            })
            .sum::<Result<f64, Missing>>()?
    } else {
        0.0
    };
    terms.extend(non_overlapping(
        one_core_memory_s,
        &terms,
        load_store_s,
        chain_overlap,
        m.knee_exponent(threads, bound),
    ));
    let regions_s: f64 = terms
        .iter()
        .filter(|t| t.resource == REGIONS)
        .map(|t| t.seconds)
        .sum();
    let top = terms
        .iter()
        .filter(|t| t.resource != REGIONS)
        .max_by(|a, b| a.seconds.total_cmp(&b.seconds))
        .cloned()
        .ok_or_else(|| Missing {
            what: "any declared work".into(),
            fix: "all",
        })?;
    // The other resources bound a lock's or a line's states from below.
    let others = terms
        .iter()
        .filter(|t| t.resource != top.resource && t.resource != REGIONS)
        .map(|t| t.seconds)
        .fold(0.0, f64::max);
    let step_states = working_set
        .filter(|&b| bound == Bound::Point && m.on_last_cache_step(b, threads))
        .and_then(|b| last_cache_states(work, m, threads, b));
    let memory_states = step_states.or_else(|| {
        (bound == Bound::Point
            && is_memory(top.resource)
            && working_set.is_some_and(|b| m.beyond_caches(b, threads))
            && m.dram_two_states(threads))
        .then(|| memory_states(work, m, threads))
        .flatten()
    });
    if let Some((_, note)) = &memory_states {
        if let Some(t) = terms.iter_mut().find(|t| t.resource == top.resource) {
            t.explain += note;
        }
    }
    // The memory states are whole predictions, regions included.
    let states_s = term_states
        .into_iter()
        .find(|&(resource, _)| resource == top.resource)
        .map(|(_, s)| s.map(|x| x.max(others) + regions_s))
        .or(memory_states.map(|(states, _)| states));
    Ok(Prediction {
        seconds: top.seconds + regions_s,
        binding: if regions_s > top.seconds {
            REGIONS
        } else {
            top.resource
        },
        terms,
        states_s,
    })
}

/// The term of `t`, its states (if any) kept in `states` by resource.
fn stated(t: terms::StatedTerm, states: &mut Vec<(&'static str, [f64; 2])>) -> Term {
    states.extend(t.states_s.map(|s| (t.term.resource, s)));
    t.term
}

/// The chains within iterations of `work` (their term among `terms`)
/// with every load it reads again beside them, in the core
/// ([`terms::chains_with_loads`]); none without both.
fn chains_with_loads(
    work: &Work,
    terms: &[Term],
    m: &Machine,
    threads: usize,
    bound: Bound,
) -> Option<Term> {
    let span = terms.iter().find(|t| t.resource == SPAN)?;
    let isa = work.demands.iter().find_map(|d| match d {
        Demand::Span { isa, .. } => Some(*isa),
        _ => None,
    })?;
    let reused_bytes: f64 = work
        .demands
        .iter()
        .map(|d| match d {
            Demand::Reuse {
                bytes_per_thread, ..
            } => *bytes_per_thread,
            _ => 0.0,
        })
        .sum();
    terms::chains_with_loads(m, span, reused_bytes, isa, threads, bound)
}

/// A working set on the last cache's step in two states
/// ([`Machine::on_last_cache_step`]): `work` predicted with the whole
/// cache and with none of it ([`LastCache`]), when the second is
/// [`two_states`] from the first, and the note the binding term adds.
fn last_cache_states(
    work: &Work,
    m: &Machine,
    threads: usize,
    per_thread_bytes: f64,
) -> Option<([f64; 2], String)> {
    let at = |share| {
        predict(work, &m.with_last_cache(share), threads)
            .ok()
            .map(|p| p.seconds)
    };
    let [whole, lost] = [at(LastCache::Whole)?, at(LastCache::Lost)?];
    two_states(whole, lost).then(|| {
        let name = m.last_cache_name().unwrap_or("last cache");
        let note = format!(
            "; the working set, {} per thread, lies on the {name}'s step (beyond its plateau on \
             the sweep, within the share of the size the OS reports), where the host's other \
             guests may leave the loop any part of it: with all of it {whole:.3e} s, with none \
             {lost:.3e} s",
            Si(per_thread_bytes, "B"),
        );
        ([whole, lost], note)
    })
}

/// Memory at DRAM in two states: `work` predicted at either end of the
/// figures' intervals, when those are [`two_states`] apart, and the note
/// the binding term adds; `None` when either cannot be made. When the
/// profile's bursts saw two placements of the threads, the far one's end
/// is read with the threads apart ([`Machine::apart`]) where a line
/// between them says they share no cache.
fn memory_states(work: &Work, m: &Machine, threads: usize) -> Option<([f64; 2], String)> {
    let placements = m.dram_placements(threads);
    let apart = placements.as_ref().and_then(|p| m.apart_in(p));
    let far_end = placements.map(|p| {
        if p.faster_apart {
            Bound::Fast
        } else {
            Bound::Slow
        }
    });
    let at = |bound| {
        let on = apart.filter(|_| far_end == Some(bound)).unwrap_or(*m);
        predict_at(work, &on, threads, bound)
            .ok()
            .map(|p| p.seconds)
    };
    let [fast, slow] = [at(Bound::Fast)?, at(Bound::Slow)?];
    if !two_states(fast, slow) {
        return None;
    }
    let note = placements.map_or(String::new(), |p| {
        let own_cache = if apart.is_some() {
            ", each with the last cache to itself when apart (a line between them takes at \
             least half a DRAM access)"
        } else {
            ""
        };
        format!(
            "; the profile's DRAM bursts ran with the threads in two placements (a line \
             between the first two CPUs in {} and in {} one way{own_cache}), giving \
             {fast:.3e} s and {slow:.3e} s",
            Si(p.near_line_s, "s"),
            Si(p.far_line_s, "s")
        )
    });
    Some(([fast, slow], note))
}
