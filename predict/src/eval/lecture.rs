//! `predict eval lecture`: every worked example of the lecture computed
//! with the toolkit's formulas, the lecture's printed figure beside the
//! computed one, and each slip marked with its reason.
//!
//! A figure agrees when the computed value, rounded as the lecture rounds
//! it (`step`, the unit of its last printed digit), gives the printed
//! figure; otherwise it is a slip, whatever the table says about it.

use models::alpha_beta::AlphaBeta;
use models::contention::office_hours;
use models::little::{lines_per_s, outstanding_lines};
use models::locality::{three_pass, FUSED};
use models::speedup::{amdahl_limit, amdahl_speedup};
use models::stencil::GhostStencil;
use models::work_span::bounds;
use serde_json::{json, Value};

use super::format::{q, show};

/// One worked example.
struct Example {
    section: &'static str,
    what: &'static str,
    /// The figure as the lecture prints it, in SI base units.
    lecture: f64,
    /// The unit of the lecture's last printed digit, in SI base units.
    step: f64,
    unit: &'static str,
    computed: f64,
    /// The work behind the computed figure.
    work: String,
    /// Why the lecture's figure differs, when it does.
    why: &'static str,
}

/// The §4.1 example network: T0 = 2 µs, B = 6.4 GB/s, 2 cycles per update at 3 GHz.
const T0: f64 = 2e-6;
const B: f64 = 6.4e9;
const UPDATE: f64 = 2.0 / 3e9;

/// An [`Example`] from its fields in order.
macro_rules! ex {
    ($s:expr, $w:expr, $l:expr, $st:expr, $u:expr, $c:expr, $work:expr, $why:expr) => {
        Example {
            section: $s,
            what: $w,
            lecture: $l,
            step: $st,
            unit: $u,
            computed: $c,
            work: String::from($work),
            why: $why,
        }
    };
}

fn examples() -> models::Result<Vec<Example>> {
    let mut all = locality_and_queues()?;
    all.extend(messages()?);
    all.extend(memory_and_laws()?);
    Ok(all)
}

/// §2.7.2 and §2.8.
fn locality_and_queues() -> models::Result<Vec<Example>> {
    let visits = office_hours(&[0.0; 5], 300.0, 300.0)?;
    let three = three_pass();
    Ok(vec![
        ex!("§2.8", "office hours by appointment: each student's time", 600.0, 60.0, "s",
            600.0, "5 min + 0 + 5 min", ""),
        ex!("§2.8", "office hours, 5 students at once: the last one's time", 23.0 * 60.0, 60.0, "s",
            visits[4].total, "5 min + 4·5 min + 5 min",
            "the last student waits for the four answers before theirs, 4·5 min = 20 min, so 5 + 20 + 5 = 30 min, not 23"),
        ex!("§2.7.2", "three-pass E = D + (A+B)·C: loads per element", 3.0, 1.0, "",
            three.loads, "3 loops × 2 loads (A,B | tmp1,C | tmp2,D)",
            "each of the three loops loads two arrays: 6 loads + 3 stores = 9 transfers; the lecture's total 9 is right, its \"3 load + 3 store\" is not"),
        ex!("§2.7.2", "three-pass transfers per element", 9.0, 1.0, "",
            three.transfers(), format!("{} + {}", three.loads, three.stores), ""),
        ex!("§2.7.2", "three-pass math per transfer", 1.0 / 3.0, 0.001, "",
            three.ops_per_transfer(), "3 / 9", ""),
        ex!("§2.7.2", "fused traffic as a share of three-pass", 0.56, 0.01, "",
            FUSED.transfers() / three.transfers(), "5 / 9", ""),
        ex!("§2.7.2", "fusion speed-up bound", 1.8, 0.1, "",
            three.bytes(4.0, false) / FUSED.bytes(4.0, false), "36 B / 20 B", ""),
    ])
}

/// §4.1: the ghost-row stencil's messages and compute.
fn messages() -> models::Result<Vec<Example>> {
    let net = AlphaBeta::new(T0, B)?;
    let msg = net.time_s(32768.0);
    let tiny = net.time_s(4.0);
    let stencil = GhostStencil::new(4096.0, UPDATE, 4.0, 1.0, net, false)?;
    let p64 = stencil.strong(64.0)?;
    let p512 = stencil.strong(512.0)?;
    let rows = stencil.crossover_rows();
    Ok(vec![
        ex!("§4.1", "T(32 KiB)", 7.12e-6, 0.01e-6, "s",
            msg, "2 µs + 32768 B / 6.4 GB/s", ""),
        ex!("§4.1", "effective bandwidth of 32 KiB", 4.60e9, 0.01e9, "B/s",
            net.effective_bandwidth_Bps(32768.0), "32768 B / 7.12 µs", ""),
        ex!("§4.1", "fraction of B", 0.72, 0.01, "",
            net.fraction_of_peak(32768.0), "4.602 GB/s / 6.4 GB/s", ""),
        ex!("§4.1", "half-peak message size", 12.8e3, 0.1e3, "B",
            net.half_peak_bytes(), "2 µs · 6.4 GB/s", ""),
        ex!("§4.1", "one 4-byte message", 2.0006e-6, 0.0001e-6, "s",
            tiny, "2 µs + 4 B / 6.4 GB/s", ""),
        ex!("§4.1", "split into one-element messages: slowdown against one 32 KiB message", 36.0, 1.0, "",
            2.0 * 4096.0 * tiny / msg,
            format!("2·4096·{} / {}", q(tiny, "s"), q(msg, "s")),
            "the lecture sends 64×2 one-element messages, only 512 B of the 32 KiB; sending both 4096-element rows element by element takes 8192 messages, 16.39 ms, 2302× the single message"),
        ex!("§4.1", "compute per sweep at P = 64", 174.8e-6, 0.1e-6, "s",
            p64.compute_s, "64·4096·2 cycles / 3 GHz", ""),
        ex!("§4.1", "communication / computation at P = 64", 0.041, 0.001, "",
            p64.comm_s / p64.compute_s, format!("{} / {}", q(p64.comm_s, "s"), q(p64.compute_s, "s")), ""),
        ex!("§4.1", "compute per sweep at P = 512", 21.8e-6, 0.1e-6, "s",
            p512.compute_s, "8·4096·2 / 3 GHz", ""),
        ex!("§4.1", "communication / computation at P = 512", 0.33, 0.01, "",
            p512.comm_s / p512.compute_s, format!("{} / {}", q(p512.comm_s, "s"), q(p512.compute_s, "s")), ""),
        ex!("§4.1", "rows per process where communication = computation", 2.6, 0.1, "",
            rows, format!("{} / (4096·{})", q(msg, "s"), q(UPDATE, "s")), ""),
        ex!("§4.1", "P where communication = computation", 1575.0, 1.0, "",
            stencil.crossover_p(), format!("4096 / {}", super::format::plain(rows)),
            "4096/2.6 = 1575 divides by the rounded rows; with rows* = 2.607, P* = 4096/2.607 = 1571"),
    ])
}

/// §4.2 to §4.6.
fn memory_and_laws() -> models::Result<Vec<Example>> {
    let msg = AlphaBeta::new(T0, B)?.time_s(32768.0);
    let l_updates = msg / UPDATE;
    let eff = |p: f64| -> models::Result<f64> {
        Ok(bounds(2048.0 * 2048.0, 2048.0 / p + l_updates, p)?.efficiency_lower_bound)
    };
    let lines = lines_per_s(20e9, 64.0)?;
    let mlp = outstanding_lines(20e9, 200.0 / 3e9, 64.0)?;
    let three = three_pass();
    Ok(vec![
        ex!("§4.2", "message latency in updates", 10680.0, 10.0, "",
            l_updates, format!("{} / {}", q(msg, "s"), q(UPDATE, "s")), ""),
        ex!("§4.2", "efficiency bound, N = 2048, P = 64", 0.86, 0.01, "",
            eff(64.0)?, "1 / (1 + (2048 + 64·10680)/2048²)", ""),
        ex!("§4.2", "efficiency bound, N = 2048, P = 1024", 0.28, 0.01, "",
            eff(1024.0)?, "1 / (1 + (2048 + 1024·10680)/2048²)", ""),
        ex!("§4.2", "three-pass sweep of 2^27 elements at 20 GB/s", 241e-3, 1e-3, "s",
            36.0 * 134217728.0 / 20e9, "36 B · 2^27 / 20 GB/s",
            "36 B × 2^27 = 4.832 GB, and 4.832 GB / 20 GB/s = 241.6 ms, which rounds to 242 ms; the lecture truncates"),
        ex!("§4.2", "fused sweep of 2^27 elements at 20 GB/s", 134e-3, 1e-3, "s",
            20.0 * 134217728.0 / 20e9, "20 B · 2^27 / 20 GB/s", ""),
        ex!("§4.3", "line transfers per second for 20 GB/s", 312.5e6, 0.1e6, "/s",
            lines, "20 GB/s / 64 B", ""),
        ex!("§4.3", "misses in flight at 200 cycles", 20.8, 0.1, "",
            mlp, "312.5 M/s · 66.67 ns", ""),
        ex!("§4.3", "misses in flight at 400 cycles (remote NUMA)", 41.7, 0.1, "",
            2.0 * mlp, "312.5 M/s · 133.3 ns", ""),
        ex!("§4.3", "misses per core, 16 cores, 200 cycles", 1.3, 0.1, "",
            mlp / 16.0, "20.83 / 16", ""),
        ex!("§4.3", "bandwidth with one miss in flight", 0.96e9, 0.01e9, "B/s",
            64.0 / (200.0 / 3e9), "64 B / 66.67 ns", ""),
        ex!("§4.3", "one pass over 256 MB at 20 GB/s", 12.8e-3, 0.1e-3, "s",
            256e6 / 20e9, "256 MB / 20 GB/s", ""),
        ex!("§4.4", "ridge point", 38.4, 0.1, "flop/B",
            768e9 / 20e9, "768 GFLOP/s / 20 GB/s", ""),
        ex!("§4.4", "fused intensity", 0.15, 0.001, "flop/B",
            FUSED.flops_per_byte(4.0, false), "3 / 20 B", ""),
        ex!("§4.4", "three-pass intensity", 0.083, 0.001, "flop/B",
            three.flops_per_byte(4.0, false), "3 / 36 B", ""),
        ex!("§4.4", "block side reaching the ridge", 154.0, 1.0, "",
            models::roofline::ridge_block_side(768e9, 20e9, 4.0)?.ceil(), "⌈4 · 38.4⌉", ""),
        ex!("§4.4", "attainable at b = 64 (AI 16)", 320e9, 1e9, "FLOP/s",
            (64.0 / 4.0 * 20e9_f64).min(768e9), "min(768 GFLOP/s, 16 · 20 GB/s)", ""),
        ex!("§4.6", "Amdahl f = 5 %, P = 16", 9.1, 0.1, "",
            amdahl_speedup(0.05, 16.0)?, "1 / (0.05 + 0.95/16)", ""),
        ex!("§4.6", "Amdahl limit f = 5 %", 20.0, 1.0, "",
            amdahl_limit(0.05)?, "1 / 0.05", ""),
        ex!("§4.6", "Amdahl f = 1 %, P = 64", 39.4, 0.1, "",
            amdahl_speedup(0.01, 64.0)?, "1 / (0.01 + 0.99/64)",
            "1/(0.01 + 0.99/64) = 1/0.025469 = 39.26; the lecture's 39.4 is off in the third digit"),
        ex!("§4.6", "1D blocked comm/compute, N = 258, P = 32", 0.248, 0.001, "",
            models::decomposition::blocked_1d_comm_to_compute(258.0, 32.0)?, "2·32 / 258", ""),
    ])
}

impl Example {
    fn agrees(&self) -> bool {
        (self.computed - self.lecture).abs() <= self.step / 2.0 * (1.0 + 1e-9)
    }

    fn verdict(&self) -> String {
        match (self.agrees(), self.why) {
            (true, _) => "agrees".into(),
            (false, "") => "slip: differs beyond the lecture's rounding".into(),
            (false, why) => format!("slip: {why}"),
        }
    }
}

/// The table as text.
pub fn text() -> anyhow::Result<String> {
    let mut out = String::from(
        "the lecture's worked examples against the formulas (lecture figure | computed | verdict)\n",
    );
    for e in examples()? {
        out.push_str(&format!(
            "  {} {}\n      lecture {} | computed {} = {} | {}\n",
            e.section,
            e.what,
            show(e.lecture, e.unit),
            e.work,
            show(e.computed, e.unit),
            e.verdict()
        ));
    }
    let slips = examples()?.iter().filter(|e| !e.agrees()).count();
    out.push_str(&format!("  {slips} slip(s) in the lecture's figures\n"));
    Ok(out)
}

/// The table as JSON: `{"model": "lecture", "examples": [...], "slips": n}`.
pub fn json() -> anyhow::Result<Value> {
    let ex = examples()?;
    let rows: Vec<Value> = ex
        .iter()
        .map(|e| {
            json!({
                "section": e.section,
                "example": e.what,
                "unit": e.unit,
                "lecture": e.lecture,
                "computed": e.computed,
                "work": e.work,
                "agrees": e.agrees(),
                "why": if e.agrees() { Value::Null } else { Value::String(e.verdict()) },
            })
        })
        .collect();
    let slips = ex.iter().filter(|e| !e.agrees()).count();
    Ok(json!({"model": "lecture", "examples": rows, "slips": slips}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_the_known_slips_are_marked() {
        let ex = examples().unwrap();
        let slips: Vec<&str> = ex.iter().filter(|e| !e.agrees()).map(|e| e.what).collect();
        assert_eq!(slips.len(), 6, "{slips:?}");
        for e in &ex {
            // A reason is written only for a figure that really differs.
            assert_eq!(
                e.agrees(),
                e.why.is_empty(),
                "{}: {} vs {}",
                e.what,
                e.lecture,
                e.computed
            );
        }
        let split = ex.iter().find(|e| e.what.starts_with("split")).unwrap();
        assert!((split.computed - 2302.0).abs() < 1.0, "{}", split.computed);
    }
}
