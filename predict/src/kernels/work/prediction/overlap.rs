//! The terms that add on one core instead of overlapping (ECM), and the
//! saturation between one core's time and the shared memory's (§4.4).

use models::saturation::saturated_s;

use super::Term;
use crate::kernels::work::{CHAIN, MEMORY_BANDWIDTH};

/// The sums of terms that do not overlap on one core (ECM: a core's time
/// is its in-core work plus its data transfers, `memory_s` at one
/// thread's rates, [`crate::machine::Machine::one_core_traffic_time`]): the loops'
/// load/store work with their memory traffic, and a loop-carried chain
/// with its memory traffic less the share ω of the shorter of the two
/// that the core overlaps (`chain_overlap`, measured at the loop's working
/// set; none measured: they add). The shared memory system's time on all
/// threads is the memory term, and the larger binds (ECM's saturation,
/// T = max(T_core, T_bus)); with a calibrated knee `knee` the load/store
/// sum is the loop's time near it too,
/// T^k = T_core^k + T_bus^k − T_stream^k (`models::saturation`).
///
/// A core's transfers take no longer than the memory term, whose traffic
/// on all threads holds them: where the profile's all-thread rate is more
/// than `threads` times one thread's (two chiplets, each with its own
/// path), one thread's rates would charge a thread's share more than the
/// whole, and a chain of a thousandth of a flop would add a fifth to the
/// loop's time. `memory_s` is taken as at most the memory term, so the
/// sums fall back to it as the work beside the transfers goes to zero.
pub(super) fn non_overlapping(
    memory_s: f64,
    terms: &[Term],
    load_store_s: f64,
    chain_overlap: Option<f64>,
    knee: Option<f64>,
) -> Vec<Term> {
    let mut out = Vec::new();
    let bus_s: f64 = terms
        .iter()
        .filter(|t| t.resource == MEMORY_BANDWIDTH)
        .map(|t| t.seconds)
        .sum();
    let capped = bus_s > 0.0 && memory_s > bus_s;
    let memory_s = if capped { bus_s } else { memory_s };
    let one_core = if capped {
        "memory on one core (at most the memory term, which holds it)"
    } else {
        "memory on one core"
    };
    if load_store_s > 0.0 {
        let core_s = memory_s + load_store_s;
        let ecm = format!(
            "one core's load/store work does not overlap its line transfers (ECM): \
             {one_core} {memory_s:.3e} s + load/store {load_store_s:.3e} s"
        );
        let (seconds, explain) = match knee {
            Some(k) if bus_s > memory_s => (
                saturated_s(core_s, bus_s, memory_s, k),
                format!(
                    "{ecm} = T_core {core_s:.3e} s; near the shared memory system's time the two \
                     queue: T^k = T_core^k + T_bus^k − T_stream^k with T_bus {bus_s:.3e} s, \
                     T_stream (memory on one core) {memory_s:.3e} s and k = {k:.2} (the stream \
                     section's lagged copies on all threads; §4.4)"
                ),
            ),
            _ => (core_s, ecm),
        };
        out.push(Term {
            resource: "memory + load/store",
            seconds,
            explain,
        });
    }
    let chain_s: f64 = terms
        .iter()
        .filter(|t| t.resource == CHAIN)
        .map(|t| t.seconds)
        .sum();
    if chain_s > 0.0 && memory_s > 0.0 {
        let explain = match chain_overlap {
            Some(w) => format!(
                "the calibrated dependent sum over an array hides ω = {w:.2} of the shorter of its \
                 chain and its loads: {one_core} {memory_s:.3e} s + chain {chain_s:.3e} s \
                 − ω · min(the two)"
            ),
            None => format!(
                "a loop-carried chain that fills the out-of-order window keeps the loop's line \
                 transfers from running ahead of it, and the two add (the profile has no \
                 measured overlap): {one_core} {memory_s:.3e} s + chain {chain_s:.3e} s"
            ),
        };
        out.push(Term {
            resource: "memory + chain",
            seconds: memory_s + chain_s - chain_overlap.unwrap_or(0.0) * memory_s.min(chain_s),
            explain,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(resource: &'static str, seconds: f64) -> Term {
        Term {
            resource,
            seconds,
            explain: String::new(),
        }
    }

    /// One core's transfers at one thread's rates longer than the memory
    /// term on all threads (8.72 against 7.28 ms): the sums start from the
    /// memory term, so work beside the transfers that tends to zero adds
    /// nothing in the limit, with a knee or without.
    #[test]
    fn the_sums_fall_back_to_the_memory_term() {
        let bus = term(MEMORY_BANDWIDTH, 7.28e-3);
        for knee in [None, Some(2.0)] {
            let sums = non_overlapping(8.72e-3, std::slice::from_ref(&bus), 1e-12, None, knee);
            assert!(
                (sums[0].seconds - 7.28e-3).abs() < 1e-11,
                "{knee:?}: {}",
                sums[0].seconds
            );
            assert!(sums[0].explain.contains("at most the memory term"));
        }
        let chain = term(CHAIN, 1e-12);
        let sums = non_overlapping(8.72e-3, &[bus.clone(), chain], 0.0, Some(0.5), None);
        assert!(
            (sums[0].seconds - 7.28e-3).abs() < 1e-11,
            "{}",
            sums[0].seconds
        );
        // Below the memory term, one core's time is kept as it is.
        let sums = non_overlapping(5e-3, &[bus], 1e-3, None, None);
        assert!((sums[0].seconds - 6e-3).abs() < 1e-15);
        assert!(!sums[0].explain.contains("at most"));
    }
}
