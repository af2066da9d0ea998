//! The time of each resource a loop uses, from the profile: compute
//! (§4.4), streamed traffic against the level's read, write and bus roofs
//! (§2.5, §4.4, in [`memory`]), random accesses through Little's law (§4.3),
//! loop-carried chains (§4.2), streams that restart (in [`restarts`]),
//! shared counters' line transfers (§3.4) and locks (§4.5, in [`lock`]). Each term says its formula and the figures
//! it used.

use models::kernel::{RandomAccesses, Traffic};
use models::profile::lock::{two_states, HandOff};
use models::profile::CeilingKernel;
use models::units::Si;

use super::work::{SortLoop, Term, CHAIN, CHAINS_WITH_LOADS, SPAN};
use crate::loop_figures::Bound;
use crate::machine::{Machine, Missing};

mod lock;
mod memory;
mod restarts;
mod reuse;
pub use lock::{lock, LockDemand};
pub use memory::memory;
pub use restarts::restarts;
pub use reuse::{reuse, reused_from_memory};

/// A term and, when what it measures has two states ([`two_states`]: a
/// lock's rounds, a falsely shared line's bursts, a compute ceiling's
/// bursts), the term's time in the fast and in the slow one.
pub struct StatedTerm {
    pub term: Term,
    pub states_s: Option<[f64; 2]>,
}

/// The explanation's clause for a term in two states: what `measured`
/// them, which figure of it each state is (`which`), and the term's time
/// in each.
fn two_states_note(measured: &str, which: &str, [fast, slow]: [f64; 2]) -> String {
    format!("; {measured} have two states ({which}), giving {fast:.3e} s and {slow:.3e} s")
}

/// T_compute = flops / ceiling, the ceiling of `precision` on `threads`
/// threads for `kernel` code (and `isa`, when given); when the ceiling's
/// bursts over the calibrate run saw the host in two states, the time at
/// each one's rate as well.
pub fn compute(
    m: &Machine,
    flops: f64,
    precision: &str,
    threads: usize,
    kernel: CeilingKernel,
    isa: Option<&str>,
    bound: Bound,
) -> Result<StatedTerm, Missing> {
    let (rate, name, states) = m.flops_ceiling(precision, threads, kernel, isa, bound)?;
    let states_s = states.map(|r| r.map(|rate| flops / rate));
    let states = states_s.map_or(String::new(), |st| {
        two_states_note(
            "its bursts over the calibrate run",
            "the fastest and the slowest burst",
            st,
        )
    });
    Ok(StatedTerm {
        term: Term {
            resource: "compute",
            seconds: flops / rate,
            explain: format!(
                "flops / ceiling = {flops:.4e} / {rate:.4e} FLOP/s ({name}, {threads} thread(s), §4.4){states}"
            ),
        },
        states_s,
    })
}

/// Bytes of a base page, the 4 KiB the profile's `4KiB` curves were
/// measured on.
const BASE_PAGE_BYTES: f64 = 4096.0;

/// T_random = max(lines·(λ/k)(region) / p, T_level(region)): every thread
/// keeps k misses in flight (the MLP curve), each waiting the latency λ of
/// a random access into the region (Little's law, §4.3), and the lines
/// (read, and written back when stored) cannot move faster than the level
/// model of the level holding the region moves them
/// ([`Machine::traffic_time`], the region counted once in a shared level).
///
/// A scattered array visits its pages in order: on 4 KiB pages only the
/// share w = min(1, S/4096) of its accesses opens a new page and pays what
/// 4 KiB pages cost there (their page walk), the rest what huge pages do:
/// λ/k = w·(λ/k)₄ₖ + (1 − w)·(λ/k)₂ₘ. On the Zen 4 VM a sum over every
/// 512th byte of 8 MiB took 1.1 ns per access on 4 KiB pages and 1.0 ns
/// on huge pages, where the 4 KiB-page figures alone gave 3.6 ns.
pub fn random(
    m: &Machine,
    a: &RandomAccesses,
    threads: usize,
    huge_pages: bool,
    bound: Bound,
) -> Result<Term, Missing> {
    let p = threads as f64;
    // A shared region's lines are in each private cache that holds it
    // whole, else once in the shared levels; a scattered array's are each
    // thread's own, in its private cache if its slice fits, else in the
    // shared levels with the other slices.
    let (latency_region, per_thread) = match a.stride_bytes {
        Some(_) => {
            let slice = a.region_bytes / p;
            if m.private_level_holds(slice, threads) {
                (slice, slice)
            } else {
                (a.region_bytes, slice)
            }
        }
        None => (
            a.region_bytes,
            m.shared_region_per_thread(a.region_bytes, threads),
        ),
    };
    let per_line = |huge: bool| -> Result<(f64, f64), Missing> {
        Ok((
            m.random_latency_s(latency_region, huge, bound)?,
            m.miss_concurrency(huge)?,
        ))
    };
    // The share of a scattered array's accesses on 4 KiB pages that open a
    // page, with the huge-page figures the rest pay; a profile without
    // those charges every access the 4 KiB pages' (as before the share
    // was counted).
    let mixed = match a.stride_bytes {
        Some(s) if !huge_pages && s < BASE_PAGE_BYTES => {
            per_line(true).ok().map(|huge| (s / BASE_PAGE_BYTES, huge))
        }
        _ => None,
    };
    let (figures, line_s) = if let Some((new_pages, (l2, k2))) = mixed {
        let (l4, k4) = per_line(false)?;
        (
            format!(
                "λ/k = {new_pages:.3}·{}/{k4:.1} (4 KiB pages: the accesses that open a page) + {:.3}·{}/{k2:.1} (2 MiB pages: the rest)",
                Si(l4, "s"),
                1.0 - new_pages,
                Si(l2, "s"),
            ),
            new_pages * l4 / k4 + (1.0 - new_pages) * l2 / k2,
        )
    } else {
        let (l, k) = per_line(huge_pages)?;
        (
            format!(
                "λ/k = {}/{k:.1} ({} pages)",
                Si(l, "s"),
                if huge_pages { "2 MiB" } else { "4 KiB" }
            ),
            l / k,
        )
    };
    let line = m.line_bytes();
    let latency_s = a.lines * line_s / p;
    let moved = Traffic {
        load_bytes: a.lines * line,
        store_bytes: if a.written { a.lines * line } else { 0.0 },
        allocate_bytes: 0.0,
    };
    let (traffic_s, _) = m.traffic_time(&moved, threads, per_thread, None, bound)?;
    Ok(Term {
        resource: "random access",
        seconds: latency_s.max(traffic_s),
        explain: format!(
            "max(lines·(λ/k)/p, traffic) = max({:.4e}·{} / {threads}, {}) \
             (λ: latency into {}; k: misses in flight per core from the MLP curve of the same pages; {figures}; §4.3)",
            a.lines,
            Si(line_s, "s"),
            Si(traffic_s, "s"),
            Si(latency_region, "B"),
        ),
    })
}

/// T_chain = steps per thread · λ_add, each chained operation waiting for
/// the one before it (§4.2: the span of a dependent chain).
pub fn chain(m: &Machine, steps_per_thread: f64, bound: Bound) -> Result<Term, Missing> {
    let t = m.chain_latency_s("add", bound)?;
    let cycles = m
        .clock_hz()
        .map_or(String::new(), |f| format!(", {:.1} cycles", t * f));
    Ok(Term {
        resource: CHAIN,
        seconds: steps_per_thread * t,
        explain: format!(
            "steps per thread · λ_add = {steps_per_thread:.4e} · {} (calibrated dependent f64 adds{cycles}; §4.2)",
            Si(t, "s")
        ),
    })
}

/// T_span = elements per thread · t_e(depth), t_e the profile's time per
/// element of Horner's scheme `depth` steps deep in L1 on one thread
/// (interpolated in log–log between the measured depths), halved for f32
/// on a vector set, whose vectors hold twice the elements in the same
/// instructions. The elements' chains are independent, but the core runs
/// only as many at once as its out-of-order window holds iterations
/// (§4.2, §4.3).
pub fn span(
    m: &Machine,
    depth: f64,
    elements_per_thread: f64,
    precision: &str,
    isa: Option<&str>,
    threads: usize,
    bound: Bound,
) -> Result<Term, Missing> {
    let (t, at) = m.span_element_s(isa, depth, threads, bound)?;
    let lanes = if precision == "f32" && at.isa != "scalar" {
        2.0
    } else {
        1.0
    };
    Ok(Term {
        resource: SPAN,
        seconds: elements_per_thread * t / lanes,
        explain: format!(
            "elements per thread · t_e(depth){} = {elements_per_thread:.4e} · {} (the calibrated Horner loop {depth} steps deep, {}, in L1{}; §4.2, §4.3)",
            if lanes > 1.0 { " / 2 (f32)" } else { "" },
            Si(t, "s"),
            at.isa,
            measured_on(at.threads, threads),
        ),
    })
}

/// The core's own work beside its chains: the chains within iterations
/// (`span`, [`span`]'s term) and the `reused_bytes` per thread its loads
/// read again, at t_c, what calibrate's Horner loop paid per byte of
/// loads at shifted offsets beside the same chain in L1 on as many threads
/// ([`Machine::span_load_s`], in the set `isa` the span read). ECM lets
/// in-core arithmetic and loads overlap, T_core = max(T_OL, T_nOL); t_c
/// measures how much of the loads' time the core pays on top (up to all
/// of it, 8 bytes at the L1 read rate, and beyond where the shifted loads
/// split lines). None without reused loads or the figure.
pub fn chains_with_loads(
    m: &Machine,
    span: &Term,
    reused_bytes: f64,
    isa: Option<&str>,
    threads: usize,
    bound: Bound,
) -> Option<Term> {
    if reused_bytes <= 0.0 {
        return None;
    }
    let (t_c, at) = m.span_load_s(isa, threads, bound)?;
    let loads_s = reused_bytes * t_c;
    Some(Term {
        resource: CHAINS_WITH_LOADS,
        seconds: span.seconds + loads_s,
        explain: format!(
            "chains within iterations {} + reused bytes · t_c = {} · {} (t_c: what the Horner \
             loop paid per byte of loads at shifted offsets beside its chain in L1, {}{}; \
             the core's own work, whichever level the lines come from; §4.2)",
            Si(span.seconds, "s"),
            Si(reused_bytes, "B"),
            Si(t_c, "s/B"),
            at.isa,
            measured_on(at.threads, threads),
        ),
    })
}

/// Where a span figure was measured for a loop on `threads` threads:
/// " on N thread(s) at once", or one thread's figure standing in where
/// the profile has no curve on that many.
fn measured_on(measured: usize, threads: usize) -> String {
    if measured == threads {
        format!(" on {threads} thread(s) at once")
    } else {
        format!(" on {measured} thread(s): the profile has none on {threads}")
    }
}

/// Threads whose counters share one line: `sharers` of the work, at most
/// the threads that run.
pub fn line_sharers(sharers: f64, threads: usize) -> usize {
    sharers.min(threads as f64).max(1.0) as usize
}

/// Increments of counters that `sharers` threads share on one line (1:
/// each alone on its line), at the measured time per increment (§3.4);
/// for a shared line, its typical time and, when its bursts have two
/// states, the time in each.
pub fn increments(
    m: &Machine,
    per_thread: f64,
    sharers: f64,
    threads: usize,
) -> Result<StatedTerm, Missing> {
    let s = line_sharers(sharers, threads);
    let (t_inc, measured_at) = m.increment_s(s, HandOff::Typical)?;
    let lecture = match (s, m.line_transfer_s()) {
        (1, _) | (_, Err(_)) => String::new(),
        (_, Ok(tt)) => format!(
            "; one line transfer per write, the lecture's bound, would give {:.3e} s",
            per_thread * tt
        ),
    };
    let states_s = if s > 1 {
        let at = |state| m.increment_s(s, state).map(|(t, _)| per_thread * t);
        Some([at(HandOff::Fast)?, at(HandOff::Slow)?]).filter(|&[f, s]| two_states(f, s))
    } else {
        None
    };
    let states = states_s.map_or(String::new(), |st| {
        two_states_note(
            "the line's bursts over the calibrate run",
            "their fast and slow quantile",
            st,
        )
    });
    Ok(StatedTerm {
        term: Term {
            resource: if s > 1 { "line transfers" } else { "store forwarding" },
            seconds: per_thread * t_inc,
            explain: format!(
                "increments · t_increment = {per_thread:.3e} · {t_inc:.3e} s (measured: {}, §3.4){lecture}{states}",
                if s > 1 {
                    format!("counters of {measured_at} threads on one line")
                } else {
                    "a counter alone on its line".to_string()
                }
            ),
        },
        states_s,
    })
}

/// T_regions = regions × t_region: the parallel regions a run starts and
/// joins on the pinned team, each at the time of an empty region on as
/// many threads (the c2c section's `regions`, the nearest measured thread
/// count; §2.2's overhead). A profile from before that figure leaves the
/// term at zero and says so, rather than refusing every prediction.
pub fn regions(m: &Machine, count: f64, threads: usize) -> Term {
    let (seconds, explain) = match m.region_s(threads) {
        Some((t, at)) => (
            count * t,
            format!(
                "regions × t_region = {count} × {} (an empty parallel region of the pinned team \
                 on {at} thread(s), timed back to back: the calls handed out and the last one \
                 waited for; added to the binding resource's time; §2.2)",
                Si(t, "s")
            ),
        ),
        None => (
            0.0,
            "left out: the profile has no empty-region time (`calibrate --only c2c` measures it)"
                .into(),
        ),
    };
    Term {
        resource: super::work::REGIONS,
        seconds,
        explain,
    }
}

/// A thread's sum into a local: one calibrated step per element.
pub fn local_sum(m: &Machine, steps_per_thread: f64) -> Result<Term, Missing> {
    let t = m.local_step_s()?;
    let cycles = m
        .clock_hz()
        .map_or(String::new(), |f| format!(", {:.2} cycles", t * f));
    Ok(Term {
        resource: "local sum",
        seconds: steps_per_thread * t,
        explain: format!(
            "steps × t_step = {steps_per_thread:.3e} × {t:.3e} s (calibrated L1 load + dependent add{cycles})"
        ),
    })
}

/// A counting sort's histogram or scatter loop at its calibrated time per
/// item in L1 (§2.9); a scatter adds, per item, what its 256 output
/// streams cost over one stream in the level that holds its working set
/// ([`Machine::scatter_streams_s`]).
pub fn bin_loop(
    m: &Machine,
    kind: SortLoop,
    items_per_thread: f64,
    working_set_per_thread: f64,
    threads: usize,
    bound: Bound,
) -> Result<Term, Missing> {
    let key = kind.key();
    let t = m.bin_item_s(key)?;
    let level = m.holding_level_name(working_set_per_thread, threads);
    let streams = match kind {
        SortLoop::Scatter => m.scatter_streams_s(working_set_per_thread, threads, bound)?,
        SortLoop::Histogram => None,
    };
    let (extra, how) = streams.map_or((0.0, String::new()), |(excess, how)| {
        (excess, format!(" + Δ, {how}"))
    });
    Ok(Term {
        resource: "load/store",
        seconds: items_per_thread * (t + extra),
        explain: format!(
            "items × {} = {items_per_thread:.3e} × {:.3e} s (calibrated {key} loop in L1{how}; working set in {level}; §2.9)",
            if how.is_empty() { "t_item" } else { "(t_item + Δ)" },
            t + extra
        ),
    })
}
