//! The `lock` section: throughput of each lock kind against the thread
//! count, and the serialized-lock model fitted to it (§4.5).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sample::{whole_opt, Sample};
use crate::Estimate;

/// Which of a contended line's states a figure describes: a lock's time
/// per operation, or an increment of a falsely shared counter
/// (`super::c2c::C2cSection::increment_s`).
///
/// A contended lock's rounds (a few ms each) need not all run alike: a
/// std mutex's releasing thread may take it again before the waiter gets
/// its line, or hand it over nearly every time, in a share the scheduler
/// decides. The quantiles of the rounds' throughput stand for the two
/// states. (An older harness made most of the spread it once showed, 33 to
/// 130 ns per operation on the Xeon VM's 2 threads, by preempting a worker
/// with its timer thread; since the workers time their own rounds, one
/// run's rounds agree within 1–11%, and a two-state result is the
/// exception.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOff {
    /// The median round.
    Typical,
    /// The fast state: the high quantile of a throughput, the low one of
    /// a time.
    Fast,
    /// The slow state: the low quantile of a throughput, the high one of
    /// a time.
    Slow,
}

/// Fast and slow states further apart than this factor make a lock's (or
/// a shared line's) result two-state: a prediction from it gives both.
pub const TWO_STATES: f64 = 1.5;

/// Whether two figures of one measure, the lower `low` and the higher
/// `high` (two times, or two rates), are [`TWO_STATES`] apart or more.
pub fn two_states(low: f64, high: f64) -> bool {
    high >= TWO_STATES * low
}

/// Results of the lock benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LockSection {
    /// Free-form note of a hand-written section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Asked length of the critical section, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_ns: Option<f64>,
    /// Dependent steps run inside the critical section.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_opt"
    )]
    pub critical_steps: Option<u64>,
    /// Seconds of one dependent step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_s: Option<f64>,
    /// Seconds each thread count ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// One entry per lock kind measured.
    pub kinds: Vec<LockKindResult>,
    /// A hand-written section's t_crit (textbook profiles); the measured
    /// ones are per kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_crit_s: Option<Estimate>,
}

/// One lock kind's curve and model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LockKindResult {
    /// "mutex", "mutex_empty", "spinlock", ...
    pub kind: String,
    /// Throughput per thread count, fewest threads first.
    pub points: Vec<LockPoint>,
    /// Time the lock is held per operation, 1 / saturated throughput, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_crit_s: Option<Estimate>,
    /// Time outside the lock per operation, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_work_s: Option<f64>,
    /// (t_crit + t_work) / t_crit: threads at which the lock saturates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saturation_threads: Option<f64>,
}

/// Throughput of one lock kind on one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LockPoint {
    pub threads: usize,
    /// More threads than logical CPUs.
    #[serde(default)]
    pub oversubscribed: bool,
    /// Lock operations per second, all threads together.
    pub throughput_ops: Sample,
    /// The model's throughput at this thread count, op/s.
    #[serde(default)]
    pub model_ops: Option<f64>,
    /// (measured − model) / model.
    #[serde(default)]
    pub model_error: Option<f64>,
}

impl LockSection {
    /// The results of lock kind `kind`.
    pub fn kind(&self, kind: &str) -> Option<&LockKindResult> {
        self.kinds.iter().find(|k| k.kind == kind)
    }

    /// The point of lock `kind` on `threads` threads, not oversubscribed.
    pub fn point(&self, kind: &str, threads: usize) -> Option<&LockPoint> {
        self.kind(kind)?
            .points
            .iter()
            .find(|p| p.threads == threads && !p.oversubscribed)
    }

    /// Wall time per operation of lock `kind` on `threads` threads in
    /// hand-off state `state`: the inverse of the median (§4.5: 1/t_crit
    /// once contended), the high or the low quantile of the rounds'
    /// throughput there (the median when the quantiles were not recorded);
    /// oversubscribed points are not used.
    pub fn op_s(&self, kind: &str, threads: usize, state: HandOff) -> Option<f64> {
        let t = &self.point(kind, threads)?.throughput_ops;
        let quantile = match state {
            HandOff::Typical => None,
            HandOff::Fast => t.high_quantile,
            HandOff::Slow => t.low_quantile,
        };
        Some(1.0 / quantile.map_or(t.median, |q| q.point))
    }

    /// Length of the measured critical section, critical_steps · step_s
    /// (0 when not recorded), seconds.
    pub fn measured_critical_s(&self) -> f64 {
        self.critical_steps.unwrap_or(0) as f64 * self.step_s.unwrap_or(0.0)
    }

    /// Wall time per operation of a std mutex on `threads` threads in
    /// hand-off state `state`, around a critical section of `critical_s`
    /// seconds, and the measured section's length: linear in the length
    /// through `mutex_empty` (0 s) and `mutex` (the measured length c_m),
    /// never below the smaller of the two; beyond c_m, the `mutex` time
    /// plus the section's excess, t(c) = t(c_m) + (c − c_m). The first
    /// nanoseconds of a section cost more than their length (the polling
    /// waiter slows the holder), the rest run serialized at their own
    /// length: on the Zen 4 VM two threads' contended mutex took 36–37,
    /// 39–42, 50–52 and 67–68 ns per operation around 5.4, 9.8, 19.5 and
    /// 40 ns sections, against 21–31 ns empty. `Err` names the kind that
    /// is missing.
    pub fn mutex_op_s(
        &self,
        threads: usize,
        critical_s: f64,
        state: HandOff,
    ) -> Result<(f64, f64), &'static str> {
        let measured_s = self.measured_critical_s();
        let full = self.op_s("mutex", threads, state).ok_or("mutex")?;
        if measured_s <= 0.0 {
            return Ok((full, measured_s));
        }
        let empty = self
            .op_s("mutex_empty", threads, state)
            .ok_or("mutex_empty")?;
        let t = if critical_s <= measured_s {
            empty + (full - empty) * critical_s / measured_s
        } else {
            full + (critical_s - measured_s)
        };
        Ok((t.max(empty.min(full)), measured_s))
    }

    /// Wall time per operation of the spread mutexes (one of many, at
    /// random) on `threads` threads in hand-off state `state`, around a
    /// critical section of `critical_s` seconds: linear in the length
    /// through `mutex_spread_empty` (0 s) and `mutex_spread` (the measured
    /// length c_m), held at the `mutex_spread` figure beyond c_m; the
    /// `mutex_spread` figure alone in a profile without the empty one.
    ///
    /// The line migration these figures give, m = (p/X_p − 1/X_1)·p/(p−1),
    /// depends on the section: on one thread the section's dependent work
    /// overlaps the lock's own atomic operations, after a migration it
    /// waits for the line. On the Zen 4 VM, alternated six times, the
    /// migration read 16.1–16.8 ns around an empty section and 18.0–18.8 ns
    /// around 5 ns, while the cell-lock binning, whose section is empty,
    /// paid about 16 ns. Beyond c_m the section's excess adds to the one-
    /// and the p-thread time alike and leaves the migration as it is.
    pub fn spread_op_s(&self, threads: usize, critical_s: f64, state: HandOff) -> Option<f64> {
        let full = self.op_s("mutex_spread", threads, state)?;
        let measured_s = self.measured_critical_s();
        match self.op_s("mutex_spread_empty", threads, state) {
            Some(empty) if measured_s > 0.0 && critical_s < measured_s => {
                Some(empty + (full - empty) * critical_s.max(0.0) / measured_s)
            }
            _ => Some(full),
        }
    }

    /// (t_crit, t_work) of the mutex, else of the first kind measured: the
    /// contention figures of §4.5, each `None` where not recorded.
    pub fn contention(&self) -> (Option<Estimate>, Option<f64>) {
        match self.kind("mutex").or(self.kinds.first()) {
            Some(k) => (k.t_crit_s, k.t_work_s),
            None => (None, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(threads: usize, ops: f64) -> LockPoint {
        LockPoint {
            threads,
            oversubscribed: false,
            throughput_ops: Sample::new(ops, ops, ops),
            model_ops: None,
            model_error: None,
        }
    }

    /// Lock kind `name` measured on 2 threads at `ops` op/s.
    fn kind(name: &str, ops: f64) -> LockKindResult {
        LockKindResult {
            kind: name.into(),
            points: vec![point(2, ops)],
            ..Default::default()
        }
    }

    #[test]
    fn mutex_time_is_linear_in_the_critical_length_then_grows_with_it() {
        let s = LockSection {
            critical_steps: Some(10),
            step_s: Some(1e-9),
            kinds: vec![kind("mutex", 1e7), kind("mutex_empty", 2e7)],
            ..Default::default()
        };
        assert_eq!(s.op_s("mutex", 2, HandOff::Typical), Some(1e-7));
        assert_eq!(s.op_s("mutex", 3, HandOff::Typical), None);
        let (t, m) = s.mutex_op_s(2, 5e-9, HandOff::Typical).unwrap();
        assert!((m - 1e-8).abs() < 1e-20);
        // 50 ns + (100 − 50) ns · ½ = 75 ns.
        assert!((t - 75e-9).abs() < 1e-15, "{t}");
        // Beyond the measured 10 ns, the section's own length: 100 + 10 ns.
        let (t, _) = s.mutex_op_s(2, 20e-9, HandOff::Typical).unwrap();
        assert!((t - 110e-9).abs() < 1e-15, "{t}");
        assert_eq!(s.contention(), (None, None));
        let old: LockSection = serde_json::from_str(
            r#"{"note": "textbook", "t_crit_s": {"point": 6e-7, "lo": 4e-7, "hi": 7e-7}}"#,
        )
        .unwrap();
        assert!(old.contention() == (None, None) && old.t_crit_s.is_some());
    }

    #[test]
    fn the_spread_mutexes_are_read_at_the_section_length_up_to_the_measured_one() {
        let mut s = LockSection {
            critical_steps: Some(10),
            step_s: Some(1e-9),
            kinds: vec![kind("mutex_spread", 1e8), kind("mutex_spread_empty", 2e8)],
            ..Default::default()
        };
        let at = |s: &LockSection, c: f64| s.spread_op_s(2, c, HandOff::Typical).unwrap();
        // 5 ns + (10 − 5) ns · ½ = 7.5 ns; empty: 5 ns; beyond 10 ns: 10 ns.
        assert!((at(&s, 5e-9) - 7.5e-9).abs() < 1e-18);
        assert!((at(&s, 0.0) - 5e-9).abs() < 1e-18);
        assert!((at(&s, 40e-9) - 1e-8).abs() < 1e-18);
        // A profile without the empty section's figure: the measured one.
        s.kinds.pop();
        assert!((at(&s, 0.0) - 1e-8).abs() < 1e-18);
        assert_eq!(s.spread_op_s(3, 0.0, HandOff::Typical), None);
    }

    #[test]
    fn the_hand_off_states_are_the_throughput_quantiles() {
        let states = |name: &str, slow: f64, median: f64, fast: f64| {
            let mut p = point(2, median);
            p.throughput_ops.low_quantile = Some(Estimate::exact(slow));
            p.throughput_ops.high_quantile = Some(Estimate::exact(fast));
            LockKindResult {
                kind: name.into(),
                points: vec![p],
                ..Default::default()
            }
        };
        let s = LockSection {
            critical_steps: Some(10),
            step_s: Some(1e-9),
            kinds: vec![
                states("mutex", 8e6, 1e7, 2e7),
                states("mutex_empty", 1e7, 2e7, 4e7),
            ],
            ..Default::default()
        };
        assert_eq!(s.op_s("mutex", 2, HandOff::Fast), Some(5e-8));
        assert_eq!(s.op_s("mutex", 2, HandOff::Slow), Some(1.25e-7));
        assert_eq!(
            s.op_s("mutex", 2, HandOff::Typical),
            Some(1e-7),
            "the median"
        );
        // The empty section's states interpolate with the full one's.
        let (fast, _) = s.mutex_op_s(2, 0.0, HandOff::Fast).unwrap();
        let (slow, _) = s.mutex_op_s(2, 0.0, HandOff::Slow).unwrap();
        assert_eq!((fast, slow), (2.5e-8, 1e-7));
        // Without recorded quantiles every state is the median.
        let plain = LockSection {
            kinds: vec![states("spin", 1e7, 1e7, 1e7)],
            ..Default::default()
        };
        assert_eq!(plain.op_s("spin", 2, HandOff::Fast), Some(1e-7));
    }
}
