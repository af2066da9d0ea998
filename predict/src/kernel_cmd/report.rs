//! What `predict kernel` prints: the description, each term's formula with
//! the profile figures it used, the prediction with its range, and the
//! error against a measured time; as text, JSON or a record.

use std::fmt::Write as _;

use anyhow::Result;
use models::kernel::{Lines, LoopKernel, Traffic};
use models::stats::Sample;
use models::units::{exact, Si};
use serde_json::{json, Value};

use super::Ranged;
use crate::kernels::paired::Paired;
use crate::machine::Machine;
use crate::record::{rel_error, Provenance, Record};

/// Everything one prediction of a described loop says.
pub struct Report {
    name: String,
    kernel: LoopKernel,
    traffic: Traffic,
    per_thread_bytes: f64,
    level: String,
    ranged: Ranged,
    measured_s: Option<f64>,
    profile: String,
    line_bytes: f64,
    /// Bytes the loop's reuses load from memory again (windows no cache
    /// holds), part of `traffic`'s loads.
    reloaded_bytes: f64,
    /// The re-measured figures and the prediction on them (`--paired`).
    paired: Option<(Paired, f64)>,
}

impl Report {
    pub fn new(
        name: &str,
        k: &LoopKernel,
        m: &Machine,
        ranged: Ranged,
        measured_s: Option<f64>,
        profile: &str,
    ) -> Self {
        let lines = Lines {
            line_bytes: m.line_bytes(),
        };
        let per_thread_bytes = k.per_thread_bytes(lines);
        Self {
            name: name.into(),
            kernel: k.clone(),
            traffic: k.traffic(lines),
            per_thread_bytes,
            level: m
                .holding_level_name(per_thread_bytes, k.threads)
                .to_string(),
            ranged,
            measured_s,
            profile: profile.into(),
            line_bytes: lines.line_bytes,
            reloaded_bytes: 0.0,
            paired: None,
        }
    }

    /// The report with the bytes the loop's reuses load from memory again
    /// (`Work::reloads`): loads of its traffic, and bytes its AI counts.
    pub fn with_reloaded(self, bytes: f64) -> Self {
        let reloaded = Traffic {
            load_bytes: bytes,
            ..Traffic::default()
        };
        Self {
            traffic: self.traffic.plus(reloaded),
            reloaded_bytes: bytes,
            ..self
        }
    }

    /// The report with the paired prediction.
    pub fn with_paired(self, paired: Option<(Paired, f64)>) -> Self {
        Self { paired, ..self }
    }

    /// Bytes the loop moves as it counts them (whole lines for strided and
    /// random access, no write-allocate), with what its reuses load from
    /// memory again: the Roofline's denominator.
    fn bytes(&self) -> f64 {
        self.kernel.moved_bytes(Lines {
            line_bytes: self.line_bytes,
        }) + self.reloaded_bytes
    }

    /// What the AI's bytes hold beyond the streams' loads and stores: the
    /// whole lines of strided and random access, which the traffic line's
    /// streams leave out.
    fn moved_phrase(&self) -> String {
        let streamed = self.traffic.load_bytes + self.traffic.store_bytes;
        let moved = self.bytes();
        if moved > streamed * (1.0 + 1e-9) {
            format!(
                " over {} moved (whole lines of strided and random access included)",
                Si(moved, "B")
            )
        } else {
            String::new()
        }
    }

    fn ai(&self) -> f64 {
        let b = self.bytes();
        if b > 0.0 {
            self.kernel.total_flops() / b
        } else {
            f64::INFINITY
        }
    }

    /// The worked text.
    pub fn text(&self) -> String {
        let k = &self.kernel;
        let p = &self.ranged.point;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {} iterations on {} thread(s), {} flop(s) per iteration ({} chained), {}{} (profile {})",
            self.name,
            exact(k.n),
            k.threads,
            exact(k.flops),
            exact(k.chain),
            k.precision.name(),
            extras_phrase(k),
            self.profile
        );
        let _ = writeln!(
            s,
            "  working set: {} per thread → {}; traffic: loads {}{}, stores {}, write-allocate {}; AI = {}{}",
            Si(self.per_thread_bytes, "B"),
            self.level,
            Si(self.traffic.load_bytes, "B"),
            if self.reloaded_bytes > 0.0 {
                format!(
                    " ({} of them again, from a window no cache holds)",
                    Si(self.reloaded_bytes, "B")
                )
            } else {
                String::new()
            },
            Si(self.traffic.store_bytes, "B"),
            Si(self.traffic.allocate_bytes, "B"),
            fmt_ai(self.ai()),
            self.moved_phrase()
        );
        for t in &p.terms {
            let _ = writeln!(s, "  {}: {}", t.resource, t.explain);
            let _ = writeln!(s, "      = {}", Si(t.seconds, "s"));
        }
        // Memory's two states are the range itself; a lock's are its own.
        let range = [self.ranged.lo_s, self.ranged.hi_s];
        let label = if p.states_s == Some(range) {
            "the profile's two states"
        } else {
            "95%"
        };
        let _ = writeln!(
            s,
            "  predicted: T = max over the terms = {} ({label}: {} – {}), bound by {}",
            Si(p.seconds, "s"),
            Si(range[0], "s"),
            Si(range[1], "s"),
            p.binding
        );
        if let Some([fast, slow]) = p.states_s.filter(|st| *st != range) {
            let _ = writeln!(
                s,
                "  two states: {} and {}, as the binding term says",
                Si(fast, "s"),
                Si(slow, "s")
            );
        }
        if let Some(m) = self.measured_s {
            let _ = writeln!(
                s,
                "  measured: {}; error (predicted − measured)/measured = {:+.1}%",
                Si(m, "s"),
                100.0 * rel_error(p.seconds, m)
            );
        }
        if let Some((drifts, seconds)) = &self.paired {
            for d in drifts.measured() {
                let _ = writeln!(
                    s,
                    "  re-measured now: {}: {} against the profile's {} (×{:.2})",
                    d.what,
                    Si(d.now, d.unit),
                    Si(d.profile, d.unit),
                    d.ratio()
                );
            }
            let error = self.measured_s.map_or(String::new(), |m| {
                format!("; error {:+.1}%", 100.0 * rel_error(*seconds, m))
            });
            let changed = if drifts.changed().is_empty() {
                ""
            } else {
                " (the machine changed since the profile)"
            };
            let _ = writeln!(s, "  paired: {}{error}{changed}", Si(*seconds, "s"));
        }
        s
    }

    /// The JSON object (SI units, unit in the key).
    pub fn json(&self) -> Value {
        let p = &self.ranged.point;
        json!({
            "kernel": self.name,
            "description": self.kernel,
            "profile": self.profile,
            "predicted_s": p.seconds,
            "predicted_lo_s": self.ranged.lo_s,
            "predicted_hi_s": self.ranged.hi_s,
            "predicted_states_s": p.states_s,
            "binding": p.binding,
            "level": self.level,
            "per_thread_bytes": self.per_thread_bytes,
            "flops": self.kernel.total_flops(),
            "bytes": self.bytes(),
            "ai_flop_per_byte": finite_or_null(self.ai()),
            "traffic": self.traffic,
            "terms": p.terms,
            "measured_s": self.measured_s,
            "rel_error": self.measured_s.map(|m| rel_error(p.seconds, m)),
            "paired": self.paired.as_ref().map(|(drifts, seconds)| json!({
                "predicted_s": seconds,
                "rel_error": self.measured_s.map(|m| rel_error(*seconds, m)),
                "memory": drifts.memory,
                "compute": drifts.compute,
                "bin_loops": drifts.bin_loops,
                "scatters": drifts.scatters,
                "loads": drifts.loads,
                "span": drifts.span,
                "machine_changed": !drifts.changed().is_empty(),
            })),
        })
    }

    /// The record `predict roofline` reads: the measured time as a sample
    /// of one (its interval is the time itself).
    pub fn record(&self) -> Result<Record> {
        let m = self
            .measured_s
            .ok_or_else(|| anyhow::anyhow!("a record needs --time"))?;
        let time = Sample::new(vec![m, m])?.summary();
        let p = &self.ranged.point;
        Ok(Record::measured(
            &self.name,
            "described",
            self.kernel.threads,
            self.kernel.n as u64,
            &time,
            self.kernel.total_flops(),
            self.bytes(),
            Provenance::now(
                vec![calibrate::harness::sysinfo::SysInfo::read(1).hostname],
                Some(self.profile.clone()),
            ),
        )
        .predicted(p.seconds, p.binding)
        .with("predicted_range_s", [self.ranged.lo_s, self.ranged.hi_s])
        .with("description", &self.kernel))
    }
}

fn fmt_ai(ai: f64) -> String {
    if ai.is_finite() {
        crate::roofline::table::ai_text(ai)
    } else {
        "∞ (no memory traffic)".into()
    }
}

fn finite_or_null(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// ", 16 B per iteration loaded again from L1, 16 B … from a 131056 B
/// window, contiguous runs of 2048 iterations" (empty without reuse or
/// runs).
fn extras_phrase(k: &models::kernel::LoopKernel) -> String {
    let mut s = String::new();
    if k.span > 0.0 {
        s += &format!(", {} dependent steps within an iteration", exact(k.span));
    }
    if k.reused_bytes > 0.0 {
        s += &format!(
            ", {} per iteration loaded again from L1",
            Si(k.reused_bytes, "B")
        );
    }
    for r in &k.windowed_reuse {
        s += &format!(
            ", {} per iteration loaded again from a {} window",
            Si(r.bytes, "B"),
            Si(r.window_bytes, "B")
        );
    }
    if let Some(seg) = k.segment_iterations {
        s += &format!(", contiguous runs of {} iterations", exact(seg));
        if let Some(stride) = k.segment_stride_iterations {
            s += &format!(" starting every {} iterations", exact(stride));
        }
    }
    for l in &k.sort_loops {
        s += &format!(", one {} item", l.key());
    }
    s
}
