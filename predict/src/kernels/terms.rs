//! The time of each resource a loop uses, from the profile: compute
//! (§4.4), streamed traffic against the level's read, write and bus roofs
//! (§2.5, §4.4), random accesses through Little's law (§4.3) and
//! loop-carried chains (§4.2). Each term says its formula and the figures
//! it used.

use models::kernel::{RandomAccesses, Traffic};
use models::profile::CeilingKernel;
use models::traffic::Form;
use models::units::Si;

use super::work::{Term, CHAIN, MEMORY_BANDWIDTH};
use crate::loop_figures::Bound;
use crate::machine::{Machine, Missing};

/// T_compute = flops / ceiling, the ceiling of `precision` on `threads`
/// threads for `kernel` code (and `isa`, when given).
pub fn compute(
    m: &Machine,
    flops: f64,
    precision: &str,
    threads: usize,
    kernel: CeilingKernel,
    isa: Option<&str>,
    bound: Bound,
) -> Result<Term, Missing> {
    let (rate, name) = m.flops_ceiling(precision, threads, kernel, isa, bound)?;
    Ok(Term {
        resource: "compute",
        seconds: flops / rate,
        explain: format!(
            "flops / ceiling = {flops:.4e} / {rate:.4e} FLOP/s ({name}, {threads} thread(s), §4.4)"
        ),
    })
}

/// T_memory from the level `per_thread_bytes` lives in on `threads`
/// threads (`models::traffic::LevelModel`): the roofs' max,
/// max(L / B_r, S / B_w, (L + A + S) / B_bus), where the level's streams
/// overlap, or the stream costs' sum, c_L·L' + c_S·A + c_U·U, where they
/// add; the level's own STREAM kernels decide which.
pub fn memory(
    m: &Machine,
    traffic: &Traffic,
    threads: usize,
    per_thread_bytes: f64,
    bound: Bound,
) -> Result<Term, Missing> {
    let (seconds, level) = m.traffic_time(traffic, threads, per_thread_bytes, bound)?;
    let bw = |b: f64| {
        if b.is_finite() {
            Si(b, "B/s").to_string()
        } else {
            "unmeasured".into()
        }
    };
    let per_byte = |c: f64| Si(1.0 / c, "B/s").to_string();
    let r = level.roofs;
    let formula = match (level.form, level.costs) {
        (Form::Adding, Some(c)) => format!(
            "streams add (RMS {} against {} overlapping): L'/r_L + A/r_S + U/r_U = {} / {} + {} / {} + {} / {}",
            percent(level.rms_adding),
            percent(level.rms_overlapping),
            Si(traffic.load_bytes - (traffic.store_bytes - traffic.allocate_bytes), "B"),
            per_byte(c.load_s_per_byte),
            Si(traffic.allocate_bytes, "B"),
            per_byte(c.store_s_per_byte),
            Si(traffic.store_bytes - traffic.allocate_bytes, "B"),
            per_byte(c.update_s_per_byte),
        ),
        _ => {
            let (_, roof) = r.time_s(traffic);
            format!(
                "streams overlap (RMS {} against {} adding): max(L/B_r, S/B_w, (L+A+S)/B_bus) = max({} / {}, {} / {}, {} / {}), the {} roof binds",
                percent(level.rms_overlapping),
                percent(level.rms_adding),
                Si(traffic.load_bytes, "B"),
                bw(r.read_Bps),
                Si(traffic.store_bytes, "B"),
                bw(r.write_Bps),
                Si(traffic.bus_bytes(), "B"),
                bw(r.bus_Bps),
                roof.name(),
            )
        }
    };
    Ok(Term {
        resource: MEMORY_BANDWIDTH,
        seconds,
        explain: format!(
            "{formula} (STREAM kernels at {} per thread, {threads} thread(s), {}; §2.5, §4.4)",
            Si(per_thread_bytes, "B"),
            m.level_of(per_thread_bytes),
        ),
    })
}

/// A relative error as a whole percentage; "—" when the form could not be
/// fitted.
fn percent(x: f64) -> String {
    if x.is_finite() {
        format!("{:.0}%", 100.0 * x)
    } else {
        "—".into()
    }
}

/// T_random = max(lines·λ(region) / (k·p), lines·line / B_r(region)): every
/// thread keeps k misses in flight (the MLP curve), each waiting the
/// latency λ of a random access into the region (Little's law, §4.3), and
/// the lines cannot come faster than the region's level reads them.
pub fn random(
    m: &Machine,
    a: &RandomAccesses,
    threads: usize,
    huge_pages: bool,
    bound: Bound,
) -> Result<Term, Missing> {
    let latency = m.random_latency_s(a.region_bytes, huge_pages, bound)?;
    let k = m.miss_concurrency(huge_pages)?;
    let line = m.line_bytes();
    let p = threads as f64;
    let latency_s = a.lines * latency / (k * p);
    // The region is shared: its level is where the whole region fits.
    let moved = Traffic {
        load_bytes: a.lines * line,
        store_bytes: if a.written { a.lines * line } else { 0.0 },
        allocate_bytes: 0.0,
    };
    let (traffic_s, _) = m.traffic_time(&moved, threads, a.region_bytes, bound)?;
    Ok(Term {
        resource: "random access",
        seconds: latency_s.max(traffic_s),
        explain: format!(
            "max(lines·λ/(k·p), traffic) = max({:.4e}·{} / ({k:.1}·{threads}), {}) \
             (λ: latency into {} with {} pages; k: misses in flight per core from the MLP curve; §4.3)",
            a.lines,
            Si(latency, "s"),
            Si(traffic_s, "s"),
            Si(a.region_bytes, "B"),
            if huge_pages { "2 MiB" } else { "4 KiB" },
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
