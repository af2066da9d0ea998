//! The stall of streams that restart: a tiled loop's runs, each found
//! again by the prefetchers.

use models::units::Si;

use crate::kernels::work::Term;
use crate::loop_figures::Bound;
use crate::machine::{Machine, Missing};

/// T_restart = s × runs × t_restart(S, C): each time a thread's streams
/// jump to a new place (a tile's next row) the prefetchers must find them
/// again, and the thread loses what STREAM's copy run in segments of S
/// bytes, in tile columns of C bytes per thread, lost per run against the
/// contiguous copy, on as many threads (`StreamSection::restart_s`). The
/// prefetchers also fetch, past each run's end, lines of the next column,
/// which a column larger than the caches has evicted by the time the
/// sweep comes back for them; a loop that does not give C is read at the
/// smallest column measured, as a tile over long rows. Measured at the
/// DRAM working set, it is charged in the share s of the working set's
/// lines that come from DRAM ([`Machine::dram_share`]).
pub fn restarts(
    m: &Machine,
    runs_per_thread: f64,
    segment_bytes: f64,
    column_bytes: Option<f64>,
    threads: usize,
    per_thread_bytes: f64,
    bound: Bound,
) -> Result<Term, Missing> {
    let (share, how) = m.dram_share(per_thread_bytes, threads);
    let (seconds, explain) = if share > 0.0 {
        let t = m.restart_s(threads, segment_bytes, column_bytes, bound)?;
        let measured: Vec<String> = m
            .stream()?
            .restart_columns(threads)
            .into_iter()
            .map(|c| Si(c, "B").to_string())
            .collect();
        let apart = format!(
            "{} (copies measured in columns of {})",
            match column_bytes {
                Some(c) => format!("tile columns of {} per thread", Si(c, "B")),
                None => "far apart, the smallest column".to_string(),
            },
            measured.join(" and ")
        );
        (
            share * runs_per_thread * t,
            format!(
                "s × runs × t_restart = {share:.2} × {runs_per_thread:.4e} × {} (runs of {}, {apart}: segmented copy against contiguous at DRAM, {threads} thread(s); {how})",
                Si(t, "s"),
                Si(segment_bytes, "B"),
            ),
        )
    } else {
        (
            0.0,
            format!(
                "{runs_per_thread:.4e} runs of {}: not charged (restarts are measured at DRAM, where the prefetchers matter; {how})",
                Si(segment_bytes, "B"),
            ),
        )
    };
    Ok(Term {
        resource: "stream restarts",
        seconds,
        explain,
    })
}
