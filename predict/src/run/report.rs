//! From measurements to records and the readable report: predictions through
//! the profile, speed-ups between variants measured against the model's, and
//! the bottleneck the high-watermark variants point at (lecture §5 point 5).

use std::fmt::Write as _;

use models::profile::lock::two_states;
use models::profile::Profile;
use models::stats::Better;

use crate::eval::derivation::{plain, show};
use crate::kernels::paired::Paired;
use crate::kernels::work::{predict, Prediction, Work, MEMORY_BANDWIDTH};
use crate::kernels::{Measurement, KERNELS};
use crate::machine::Machine;
use crate::record::{rel_error, Provenance, Record};

/// A record and the prediction behind it (kept for `--explain`).
pub struct Assessed {
    pub record: Record,
    pub prediction: Option<Prediction>,
}

/// Predicts each measurement through the profile and makes its record.
pub fn assess(
    ms: &[Measurement],
    profile: Option<&Profile>,
    provenance: &Provenance,
) -> Vec<Assessed> {
    let machine = profile.map(Machine::new);
    ms.iter()
        .map(|m| {
            let s = m.seconds.summary();
            let predicted = match (&machine, &m.work) {
                (None, _) => Err("no profile; run `calibrate` to create one".to_string()),
                (Some(_), Err(e)) => Err(e.to_string()),
                (Some(mach), Ok(w)) => predict(w, mach, m.threads).map_err(|e| e.to_string()),
            };
            // The bytes moved, with what reuses no cache holds load from
            // memory again, as the memory term moves them.
            let (flops, bytes) = m.work.as_ref().map_or((0.0, 0.0), |w| {
                let reloaded = machine
                    .as_ref()
                    .map_or(0.0, |mach| w.reloads(mach, m.threads).0);
                (w.flops(), w.bytes() + reloaded)
            });
            let (prediction, no_prediction) = match predicted {
                Ok(p) => (Some(p), None),
                Err(e) => (None, Some(e)),
            };
            let mut record = Record::measured(
                m.kernel,
                &m.variant,
                m.threads,
                m.size as u64,
                &s,
                flops,
                bytes,
                provenance.clone(),
            );
            record.verified = Some(m.verified);
            // Repetitions in two states (a lock's hand-off): the low and
            // high quantiles of the times, when they differ that much.
            let (fast, slow) = (
                s.capability(Better::Lower).point,
                s.capability(Better::Higher).point,
            );
            if two_states(fast, slow) {
                record = record.with("measured_states_s", [fast, slow]);
            }
            let record = match (&prediction, no_prediction) {
                (Some(p), _) => {
                    let mut record = record.predicted(p.seconds, p.binding);
                    if let Some(states) = p.states_s {
                        record = record.with("predicted_states_s", states);
                    }
                    // The traffic time alone, for the bandwidth ratios.
                    match p.terms.iter().find(|t| t.resource == MEMORY_BANDWIDTH) {
                        Some(t) => record.with("memory_s", t.seconds),
                        None => record,
                    }
                }
                (None, why) => record.unpredicted(why.unwrap_or_default()),
            };
            let record = match (profile, &m.work, &m.paired) {
                (Some(p), Ok(w), Some(paired)) => with_paired(record, w, p, paired, m.threads),
                _ => record,
            };
            Assessed { record, prediction }
        })
        .collect()
}

/// `record` with the paired prediction: the same model on the profile's
/// roofs scaled by the figures re-measured next to the kernel
/// ([`crate::kernels::paired`]), the drifts themselves, and whether the
/// machine changed since the profile was measured.
fn with_paired(
    record: Record,
    work: &Work,
    profile: &Profile,
    paired: &Paired,
    threads: usize,
) -> Record {
    let predicted = paired.predict(work, profile, threads).ok();
    let placement = profile
        .sections
        .stream
        .as_ref()
        .zip(paired.placement_line_s)
        .and_then(|(s, line)| s.placement_of(threads, line));
    let record = with_pair(record, paired, predicted.map(|p| p.seconds));
    match placement {
        Some(p) => record.with("placement", p),
        None => record,
    }
}

/// `record` with the figures re-measured next to it, whether the machine
/// changed since the profile was measured, and the paired prediction
/// `predicted_s` (seconds) with its error, when there is one.
pub fn with_pair(record: Record, paired: &Paired, predicted_s: Option<f64>) -> Record {
    let measured = record.measured_s;
    let record = record
        .with("paired", paired)
        .with("machine_changed", !paired.changed().is_empty());
    match predicted_s {
        Some(p) => record
            .with("paired_predicted_s", p)
            .with("paired_rel_error", rel_error(p, measured)),
        None => record,
    }
}

/// A speed-up between two variants, measured and predicted.
#[derive(Debug, Clone, PartialEq)]
pub struct Speedup {
    pub kernel: String,
    pub label: String,
    pub measured: f64,
    pub predicted: Option<f64>,
}

/// The speed-ups of every kernel's [`crate::kernels::Kernel::pairs`] found among the records: same kernel and
/// size, the same thread count (or, for one variant against itself, one
/// thread against the most).
pub fn speedups(records: &[Record]) -> Vec<Speedup> {
    let mut out = Vec::new();
    let suffix = |v: &str| v.split_once('@').map(|(_, s)| s.to_string());
    let base = |v: &str| v.split('@').next().unwrap_or(v).to_string();
    let pairs = KERNELS.iter().flat_map(|k| {
        k.pairs()
            .iter()
            .map(move |&(slow, fast)| (k.name(), slow, fast))
    });
    for (kernel, slow, fast) in pairs {
        for a in records
            .iter()
            .filter(|r| r.kernel == kernel && base(&r.variant) == slow)
        {
            let b = records.iter().find(|b| {
                b.kernel == kernel
                    && base(&b.variant) == fast
                    && suffix(&b.variant) == suffix(&a.variant)
                    && b.size == a.size
                    && if slow == fast {
                        b.threads > a.threads
                    } else {
                        b.threads == a.threads
                    }
            });
            let Some(b) = b else { continue };
            if slow == fast && a.threads != 1 {
                continue;
            }
            let label = if slow == fast {
                format!("{} threads / 1", b.threads)
            } else {
                format!(
                    "{} / {}{}, {} thr",
                    base(&a.variant),
                    base(&b.variant),
                    suffix(&a.variant)
                        .map(|s| format!(" @{s}"))
                        .unwrap_or_default(),
                    a.threads
                )
            };
            out.push(Speedup {
                kernel: kernel.into(),
                label,
                measured: a.measured_s / b.measured_s,
                predicted: a.predicted_s.zip(b.predicted_s).map(|(x, y)| x / y),
            });
        }
    }
    out
}

/// The bottlenecks the kernels' watermark variants point at
/// ([`crate::kernels::Kernel::bottleneck`]).
pub fn bottlenecks(records: &[Record]) -> Vec<String> {
    KERNELS
        .iter()
        .filter_map(|k| k.bottleneck(records))
        .collect()
}

/// The readable report: per kernel, measured and predicted times, the
/// error, then the speed-ups and the watermark verdicts.
pub fn table(assessed: &[Assessed], explain: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<14} {:<26} {:>3} {:>10} {:>23} {:>10} {:>7} {:>7}  binding",
        "kernel", "variant", "thr", "size", "measured (95% CI)", "predicted", "error", "paired"
    );
    for a in assessed {
        let r = &a.record;
        let mut flag = match (r.noisy, r.verified) {
            (_, Some(false)) => " WRONG RESULT",
            (true, _) => " (noisy)",
            _ => "",
        }
        .to_string();
        if r.extra.get("machine_changed") == Some(&serde_json::Value::Bool(true)) {
            flag.push_str(" (machine changed)");
        }
        if let Some(p @ ("near" | "apart" | "moved")) =
            r.extra.get("placement").and_then(serde_json::Value::as_str)
        {
            flag.push_str(&format!(" (threads {p})"));
        }
        let paired = r
            .extra
            .get("paired_rel_error")
            .and_then(serde_json::Value::as_f64)
            .map_or("-".into(), |e| format!("{:+.0}%", 100.0 * e));
        let measured = format!(
            "{} [{}, {}]",
            short(r.measured_s),
            short(r.measured_ci_s[0]),
            short(r.measured_ci_s[1])
        );
        let states = states_flags(r);
        let (pred, err, bind) = match (&r.predicted_s, &r.no_prediction) {
            (Some(p), _) => (
                short(*p),
                format!("{:+.0}%", 100.0 * r.rel_error.unwrap_or(0.0)),
                format!("{}{states}", r.binding.clone().unwrap_or_default()),
            ),
            (None, why) => (
                "-".into(),
                "-".into(),
                format!("no prediction: {}", why.as_deref().unwrap_or("?")),
            ),
        };
        let _ = writeln!(
            s,
            "{:<14} {:<26} {:>3} {:>10} {:>23} {:>10} {:>7} {:>7}  {bind}{flag}",
            r.kernel, r.variant, r.threads, r.size, measured, pred, err, paired
        );
        if explain {
            if let Some(p) = &a.prediction {
                for t in &p.terms {
                    let _ = writeln!(
                        s,
                        "{:>18}{}: {} = {}",
                        "",
                        t.resource,
                        t.explain,
                        show(t.seconds, "s")
                    );
                }
            }
        }
    }
    let records: Vec<Record> = assessed.iter().map(|a| a.record.clone()).collect();
    let sp = speedups(&records);
    if !sp.is_empty() {
        let _ = writeln!(s, "\nspeed-ups");
        for x in sp {
            let model = x.predicted.map_or("-".into(), |p| format!("{}×", plain(p)));
            let _ = writeln!(
                s,
                "  {:<14} {:<40} measured {:>7}×  model {:>7}",
                x.kernel,
                x.label,
                plain(x.measured),
                model
            );
        }
    }
    let b = bottlenecks(&records);
    if !b.is_empty() {
        let _ = writeln!(s, "\nhigh-watermark experiments (§5)");
        for line in b {
            let _ = writeln!(s, "  {line}");
        }
    }
    s
}

/// The flags of a record's two states, predicted and measured:
/// " (predicted in two states: 3.5 ms and 6.8 ms)", or nothing.
pub(crate) fn states_flags(r: &Record) -> String {
    let states = |key: &str, what: &str| {
        r.extra
            .get(key)
            .and_then(|v| serde_json::from_value::<[f64; 2]>(v.clone()).ok())
            .map_or(String::new(), |[f, s]| {
                format!(" ({what} in two states: {} and {})", short(f), short(s))
            })
    };
    states("predicted_states_s", "predicted") + &states("measured_states_s", "ran")
}

/// A time with an SI prefix, compact.
fn short(v: f64) -> String {
    show(v, "s")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(kernel: &str, variant: &str, threads: usize, measured: f64, predicted: f64) -> Record {
        let time = models::stats::Sample::new(vec![measured; 3])
            .unwrap()
            .summary();
        let prov = Provenance::now(vec!["h".into()], None);
        Record::measured(kernel, variant, threads, 1024, &time, 1.0, 1.0, prov)
            .predicted(predicted, "compute")
    }

    #[test]
    fn speedups_pair_matching_variants() {
        let rs = vec![
            rec("fusion", "three-pass", 2, 1.8, 1.8),
            rec("fusion", "fused", 2, 1.0, 1.0),
            rec("fusion", "three-pass", 1, 3.6, 3.0),
            rec("fusion", "fused", 1, 2.0, 2.0),
            rec("stencil", "row-major@4096", 2, 1.0, 1.0),
            rec("stencil", "tiled@4096", 2, 1.0, 1.0),
            rec("matmul", "blocked", 1, 2.0, 2.0),
            rec("matmul", "blocked", 2, 1.0, 1.0),
        ];
        let sp = speedups(&rs);
        let fusion: Vec<_> = sp.iter().filter(|s| s.kernel == "fusion").collect();
        assert_eq!(fusion.len(), 2);
        assert!((fusion[0].measured - 1.8).abs() < 1e-12);
        assert!((fusion[1].predicted.unwrap() - 1.5).abs() < 1e-12);
        let st = sp.iter().find(|s| s.kernel == "stencil").unwrap();
        assert!(st.label.contains("@4096"));
        let mm = sp.iter().find(|s| s.kernel == "matmul").unwrap();
        assert_eq!(mm.measured, 2.0);
    }

    #[test]
    fn the_table_says_where_the_threads_ran() {
        let row = |placement: &str| {
            let a = Assessed {
                record: rec("fusion", "fused", 2, 1.0, 1.0).with("placement", placement),
                prediction: None,
            };
            table(&[a], false)
        };
        assert!(row("apart").contains("(threads apart)"));
        assert!(row("moved").contains("(threads moved)"));
        assert!(!row("as profiled").contains("(threads"));
    }

    #[test]
    fn watermarks_name_a_bandwidth_bottleneck() {
        let rs = vec![
            rec("fusion", "fused", 2, 1.0, 1.0),
            rec("fusion", "fused+extra-math", 2, 1.05, 1.0),
            rec("fusion", "fused+one-element", 2, 0.1, 0.1),
            rec("fusion", "fused+no-compute", 2, 0.98, 1.0),
        ];
        let b = bottlenecks(&rs);
        assert!(
            b[0].contains("measured bottleneck: memory bandwidth"),
            "{}",
            b[0]
        );
    }
}
