//! The lock term: a measured lock's time per operation on one and on p
//! threads, with the migrations of the data lines written under it (§4.5),
//! and its two hand-off states when their rounds differ.

use models::contention::{critical_section_s, line_migration_s, MeasuredLock};
use models::profile::lock::{two_states, HandOff};

use super::super::work::{LockKindName, Term};
use super::{two_states_note, StatedTerm};
use crate::machine::{LockKind, Machine, Missing};

/// A lock's demand, as [`super::super::work::Demand::Lock`] declares it.
pub struct LockDemand {
    pub ops: f64,
    pub kind: LockKindName,
    pub lanes: f64,
    pub critical_s: f64,
    pub data_lines: f64,
}

/// Lock operations: the measured lock's time per operation on 1 and on
/// `threads` threads, with the line migration of its data (§4.5). The
/// data lines migrate inside the critical section, so the contended time
/// is read at the section's whole length, c + d·m: the contended mutex's
/// time grows with the section faster than the section itself (the
/// waiter's polling slows the holder, up to the measured section's
/// length). On the Zen 4 VM the global lock's binning, whose head line
/// migrates in half its sections, read −37% to +24% of the kernel (median
/// −19%, mean |error| 19%) over the twenty profiles of four accuracy runs
/// with the migration added after the hand-off, and −23% to +36% (median
/// −7%, mean |error| 13%) read at the section's length. The
/// contended time per operation and the migration (from the spread
/// mutexes) in the typical round and, for [`StatedTerm::states_s`], in the
/// fast and the slow state ([`HandOff`]): a host that slows line
/// migrations slows the contended lock and the spread mutexes alike.
///
/// One lock for all threads has a fast state of its own: a holder that
/// keeps the lock while the others wait (a mutex lets the releasing thread
/// take it again) runs the operations one at a time with no hand-off,
/// ops·t_1. On the Zen 4 VM the global-lock binning's repetitions reached
/// down to 8 ms, where its 1 Mi operations take 6 ms that way and 37 ms handed
/// off, within runs whose re-measured mutexes held steady.
pub fn lock(m: &Machine, d: &LockDemand, threads: usize) -> Result<StatedTerm, Missing> {
    let p = threads as f64;
    let critical_s = d.critical_s;
    // Uncontended (one thread) there is no hand-off: its typical time.
    let (t1, section) = match d.kind {
        LockKindName::Mutex => {
            let (t1, at) = m.mutex_op_s(1, critical_s, HandOff::Typical)?;
            let section = format!(
                "a {critical_s:.2e} s critical section, linear between the measured \
                 empty and {at:.2e} s ones, growing by its excess beyond them"
            );
            (t1, section)
        }
        LockKindName::Spin => (
            m.lock_op_s(LockKind::Spin, 1, HandOff::Typical)?,
            "the measured critical section".to_string(),
        ),
    };
    // The spread mutexes' throughput on 1 and on `threads` threads around
    // the kernel's section, and the line migration, in each state of their
    // rounds.
    let spread = |threads, state| -> Result<f64, Missing> {
        Ok(1.0 / m.spread_op_s(threads, critical_s, state)?)
    };
    let x1 = spread(1, HandOff::Typical)?;
    let migration = |state| Ok::<_, Missing>(line_migration_s(x1, spread(threads, state)?, p));
    let (ops, lanes, data_lines, kind) = (d.ops, d.lanes, d.data_lines, d.kind);
    // The contended time around the whole section, its data lines'
    // migrations included: the mutex's read at that length, as measured
    // at two lengths; the spin lock's, measured at one, plus them.
    let contended = |state| -> Result<f64, Missing> {
        let migration_s = migration(state)?;
        match kind {
            LockKindName::Mutex => {
                let section_s = critical_section_s(critical_s, data_lines, migration_s);
                Ok(m.mutex_op_s(threads, section_s, state)?.0)
            }
            LockKindName::Spin => {
                Ok(m.lock_op_s(LockKind::Spin, threads, state)? + data_lines * migration_s)
            }
        }
    };
    // The term in hand-off state `state`: the contended lock's time and the
    // line migration both in it.
    let seconds = |state| -> Result<f64, Missing> {
        let lock =
            MeasuredLock::new(t1, contended(state)?, migration(state)?).map_err(|e| Missing {
                what: format!("usable lock figures ({e})"),
                fix: "lock",
            })?;
        Ok(lock.time_s(ops, p, lanes, data_lines).unwrap_or(0.0))
    };
    let typical = seconds(HandOff::Typical)?;
    let (tp, migration) = (contended(HandOff::Typical)?, migration(HandOff::Typical)?);
    let section_s = critical_section_s(critical_s, data_lines, migration);
    let xp = spread(threads, HandOff::Typical)?;
    let rounds = (threads > 1)
        .then(|| Ok::<_, Missing>([seconds(HandOff::Fast)?, seconds(HandOff::Slow)?]))
        .transpose()?
        .filter(|&[f, s]| two_states(f, s));
    let alone = (threads > 1 && lanes <= 1.0).then_some(ops * t1);
    let states_s = match (rounds, alone) {
        (Some([f, s]), Some(a)) => Some([f.min(a), s]),
        (None, Some(a)) => Some([a, typical]),
        (rounds, None) => rounds,
    }
    .filter(|&[f, s]| two_states(f, s));
    let mut states = String::new();
    if let (Some(st), Some(_)) = (rounds, states_s) {
        states += &two_states_note(
            "its rounds",
            "the fast and the slow quantile of the contended lock's and the spread mutexes' \
             rounds",
            st,
        );
    }
    if let Some(a) = alone.filter(|_| states_s.is_some()) {
        states += &format!(
            "; with one lock for all threads, a holder that keeps it while the others \
             wait runs the operations one at a time with no hand-off: ops·t_1 = {a:.3e} s"
        );
    }
    Ok(StatedTerm {
        term: Term {
            resource: "lock",
            seconds: typical,
            explain: format!(
                "max(ops·t_p/locks, ops·(t_1 + (1+d)·(p−1)/p·m)/p) with \
                 ops = {ops:.4e}, locks = {lanes}, d = {data_lines} data line(s), \
                 t_1 = {t1:.3e} s, t_p = {tp:.3e} s ({kind:?} on 1 and {threads} thread(s), {section}; \
                 t_p around the whole section c + d·m = {section_s:.2e} s, as its data lines \
                 migrate inside it), \
                 line migration m = (p/X_p − 1/X_1)·p/(p−1) = {migration:.3e} s from mutexes \
                 spread so that threads rarely wait, around the same section (X_1 = {x1:.3e}, \
                 X_p = {xp:.3e} op/s; §4.5){states}"
            ),
        },
        states_s,
    })
}
