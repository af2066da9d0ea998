//! The loads a loop issues again to lines its own traffic brought in
//! (§2.7.1): at the ports' rate, beside streams from further out, or from
//! the level that holds their window.

use models::units::Si;

use crate::kernels::work::Term;
use crate::loop_figures::Bound;
use crate::machine::{Machine, Missing};

/// T_reuse: the loads a loop issues again to lines its own traffic brought
/// in (a stencil's neighbours, §2.7.1). They are load-port work at one
/// thread's L1 read bandwidth (the STREAM load kernel on the L1 plateau),
/// like [`bin_loop`](super::bin_loop)'s: reused bytes / B_L1. That is the loads' whole
/// cost while L1 holds the loop's streams too; while these come from
/// beyond L1 the core may run the loads beside its line transfers, as
/// AMD's cores do and Intel's older ones do not (ECM), so a reused byte
/// costs t_r, what calibrate's lagged copy paid per byte it read again
/// from an L1 window beside a copy of the loop's streamed working set
/// ([`Machine::l1_reread_s`]); a profile without that curve charges the
/// ports' time. When L1 cannot hold the
/// window between the two uses (`window_bytes` per thread, Kerncraft's
/// layer condition; 0 for lines of the same or the previous few
/// iterations), the lines come back from the cache that holds it, and the
/// loads run at that level's one-thread read bandwidth: reused bytes /
/// B_level. STREAM's load kernel there issues the same loads and waits for
/// the same lines, so its rate already holds both ECM's in-core time and
/// T_L1L2, added (Intel) or overlapped (AMD Zen) as the core does; adding
/// 1/B_L1 to it would count the loads twice.
///
/// While the loop's streams come from DRAM (its streamed working set,
/// `streamed_per_thread_bytes`, exceeds the caches:
/// [`Machine::dram_share`]), the core fetches those lines beside its
/// misses to memory, and on some cores that costs far more than the
/// level's load kernel alone says (on the Zen 4 VM an L2 window 2–3
/// times): a reused byte then costs t_w, what calibrate's lagged copy
/// paid per byte it read again from a window that size beside a copy from
/// DRAM ([`Machine::window_read_s`]). A profile without the window curve
/// charges the level's rate.
///
/// A window no cache holds fails the layer condition at the last cache:
/// its lines come from memory again, as loads the memory term moves with
/// the streams ([`reused_from_memory`]), and only their L1 time is left
/// here.
pub fn reuse(
    m: &Machine,
    bytes_per_thread: f64,
    window_bytes: f64,
    threads: usize,
    streamed_per_thread_bytes: f64,
    isa: Option<&str>,
    bound: Bound,
) -> Result<Term, Missing> {
    let (b1, set) = m.l1_read_bandwidth(bound, isa)?;
    let ports = bytes_per_thread / b1;
    let in_l1 = |why: String| Term {
        resource: "load/store",
        seconds: ports,
        explain: format!(
            "reused bytes / B_L1 = {} / {} ({why}, one thread's L1 read bandwidth in {set}; \
             ECM's in-core time)",
            Si(bytes_per_thread, "B"),
            Si(b1, "B/s")
        ),
    };
    if reused_from_memory(m, window_bytes, threads) {
        return Ok(in_l1(format!(
            "a {} window per thread exceeds every cache: its lines come from memory again, as \
             loads of the memory term (the layer condition fails at the last cache); here \
             their loads",
            Si(window_bytes, "B")
        )));
    }
    let level = if window_bytes > 0.0 {
        Some(m.reuse_level(window_bytes, threads, bound)?).filter(|l| l.name != "L1")
    } else {
        None
    };
    let Some(l) = level else {
        return Ok(
            match m.l1_reread_s(streamed_per_thread_bytes, threads, bound) {
                Some((t_r, from)) => Term {
                    resource: "load/store",
                    seconds: bytes_per_thread * t_r,
                    explain: format!(
                        "reused bytes · t_r = {} · {} (loads that hit L1 while the loop's streams \
                         come from {from}: t_r is what one thread's lagged copy paid per byte it \
                         read again from an L1 window beside a copy that size, the part of the \
                         loads the core does not overlap with its line transfers; at one thread's \
                         L1 read bandwidth in {set} the loads alone take {})",
                        Si(bytes_per_thread, "B"),
                        Si(t_r, "s/B"),
                        Si(ports, "s"),
                    ),
                },
                None => in_l1("loads that hit L1".into()),
            },
        );
    };
    let beside_dram = match m.window_read_s(window_bytes, bound) {
        Some(t_w) if streamed_per_thread_bytes > 0.0 => {
            let (s, how) = m.dram_share(streamed_per_thread_bytes, threads);
            (s > 0.0).then_some((t_w, how))
        }
        _ => None,
    };
    let (seconds, explain) = match beside_dram {
        Some((t_w, how)) => (
            bytes_per_thread * t_w,
            format!(
                "reused bytes · t_w = {} · {} (a {} window per thread exceeds L1, {} holds it, and the \
                 loop's streams come from DRAM, {how}: t_w is what one thread's lagged copy from DRAM \
                 paid per byte it read again from a window that size)",
                Si(bytes_per_thread, "B"),
                Si(t_w, "s/B"),
                Si(window_bytes, "B"),
                l.name,
            ),
        ),
        None => (
            ports.max(bytes_per_thread / l.read_Bps),
            format!(
                "reused bytes / B_{name} = {} / {} (a {} window per thread exceeds L1, {name} holds it: \
                 the loads at one thread's {name} read bandwidth, whose STREAM load kernel pays the same \
                 loads and lines; ECM's in-core time with T_L1{name})",
                Si(bytes_per_thread, "B"),
                Si(l.read_Bps, "B/s"),
                Si(window_bytes, "B"),
                name = l.name,
            ),
        ),
    };
    Ok(Term {
        resource: "load/store",
        seconds,
        explain,
    })
}

/// Whether no cache holds a reuse window of `window_bytes` per thread on
/// `threads` threads (Kerncraft's layer condition failing at the last
/// cache): the reused lines then come from memory again, so they are
/// loads of the memory term, and [`reuse`] charges only their L1 time.
pub fn reused_from_memory(m: &Machine, window_bytes: f64, threads: usize) -> bool {
    window_bytes > 0.0 && m.beyond_caches(window_bytes, threads)
}
