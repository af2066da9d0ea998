//! The memory term: a loop's streamed traffic at the roofs (or stream
//! costs) of the level its working set lives in, bounded below by the
//! measured kernel of its nearest mix, with the pages and the DRAM points
//! it read.

use models::kernel::Traffic;
use models::traffic::Form;
use models::units::Si;

use crate::kernels::work::{Term, MEMORY_BANDWIDTH};
use crate::loop_figures::Bound;
use crate::machine::{Machine, Missing};

/// T_memory from the level `per_thread_bytes` lives in on `threads`
/// threads (`models::traffic::LevelModel`): the roofs' max,
/// max(L / B_r, (L + A) / B_f, S / B_w, (L + A + S) / B_bus), where the level's streams
/// overlap, or the stream costs' sum, c_L·L' + c_S·A + c_U·U, where they
/// add; the level's own STREAM kernels decide which. Either is bounded
/// below by the measured kernel of the nearest mix
/// (`models::traffic::LevelModel::nearest_mix`).
pub fn memory(
    m: &Machine,
    traffic: &Traffic,
    threads: usize,
    per_thread_bytes: f64,
    isa: Option<&str>,
    bound: Bound,
) -> Result<Term, Missing> {
    let (seconds, level) = m.traffic_time(traffic, threads, per_thread_bytes, isa, bound)?;
    let bw = |b: f64| {
        if b.is_finite() {
            Si(b, "B/s").to_string()
        } else {
            "unmeasured".into()
        }
    };
    let per_byte = |c: f64| Si(1.0 / c, "B/s").to_string();
    let r = level.roofs;
    let nearest_binds = level
        .nearest_mix(traffic)
        .filter(|n| n.seconds > level.form_time_s(traffic));
    let nearest = nearest_binds.map_or(String::new(), |n| {
            let k = n.kernel;
            format!(
                "; the measured kernel of the nearest mix (loads, allocates, stores {:.0}, {:.0}, {:.0} B per element) binds: {} at its {}",
                k.load_bytes,
                k.allocate_bytes,
                k.store_bytes,
                Si(traffic.bus_bytes(), "B"),
                Si(k.traffic().bus_bytes() / k.seconds, "B/s"),
            )
        });
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
                "streams overlap (RMS {} against {} adding): max(L/B_r, (L+A)/B_f, S/B_w, (L+A+S)/B_bus) = max({} / {}, {} / {}, {} / {}, {} / {}), the {} roof {}",
                percent(level.rms_overlapping),
                percent(level.rms_adding),
                Si(traffic.load_bytes, "B"),
                bw(r.read_Bps),
                Si(traffic.load_bytes + traffic.allocate_bytes, "B"),
                bw(r.fill_Bps),
                Si(traffic.store_bytes, "B"),
                bw(r.write_Bps),
                Si(traffic.bus_bytes(), "B"),
                bw(r.bus_Bps),
                roof.name(),
                if nearest_binds.is_some() { "the highest" } else { "binds" },
            )
        }
    };
    let pages = pages(m, traffic, threads, per_thread_bytes, isa, bound, seconds)?;
    // The set whose DRAM points the term read, where it reads them: the
    // 4 KiB-page sweep ran in the profile's STREAM set alone, so a
    // loop's own instruction set moves only its huge-page figures.
    let stream = m.stream()?;
    let dram_set = match (
        m.beyond_caches(per_thread_bytes, threads),
        m.on_base_pages(threads),
    ) {
        (false, _) => String::new(),
        (true, false) => format!(", DRAM points in {}", stream.dram_isa(threads, isa)),
        (true, true) => format!(
            ", the 4 KiB-page sweep in {}, the one set it was measured in{}",
            stream.isa,
            match isa {
                Some(isa) if isa != stream.isa =>
                    format!(" ({isa} moves the huge-page figures only)"),
                _ => String::new(),
            }
        ),
    };
    Ok(Term {
        resource: MEMORY_BANDWIDTH,
        seconds,
        explain: format!(
            "{formula}{nearest} (STREAM kernels at {} per thread, {threads} thread(s), {}, {pages}{}; §2.5, §4.4)",
            Si(per_thread_bytes, "B"),
            m.holding_level_name(per_thread_bytes, threads),
            dram_set,
        ),
    })
}

/// The pages whose STREAM figures a loop's streams read and, on 4 KiB
/// pages, the time of its `traffic` at the huge-page figures when shorter
/// than its own `seconds`: the huge-page figures bound the time from
/// below, as an allocation may stream at up to that rate.
fn pages(
    m: &Machine,
    traffic: &Traffic,
    threads: usize,
    per_thread_bytes: f64,
    isa: Option<&str>,
    bound: Bound,
    seconds: f64,
) -> Result<String, Missing> {
    Ok(if m.huge_pages() {
        "huge pages".into()
    } else if m.on_base_pages(threads) {
        let (huge_s, _) =
            m.on_pages(true)
                .traffic_time(traffic, threads, per_thread_bytes, isa, bound)?;
        let huge = if huge_s < seconds {
            format!(
                "; {} at the huge-page figures, which some allocations on 4 KiB pages reach",
                Si(huge_s, "s")
            )
        } else {
            String::new()
        };
        format!("4 KiB pages beyond the private caches{huge}")
    } else {
        "huge-page figures for arrays on 4 KiB pages: the profile has no 4 KiB-page sweep, \
         and beyond the private caches such a loop may stream slower (calibrate again)"
            .into()
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
