//! Bursts of a measurement spread over the run, pooled.
//!
//! Where a VM's host puts its vCPUs moves within seconds: a C ping-pong
//! between the two vCPUs of the Xeon VM, sampled every 100 ms for 20 s,
//! read 54–58 ns most of the time, 49–52 ns for a second and 71–75 ns for
//! half a second, and 11–17 ns whenever they sat on one core's SMT
//! siblings. A figure that moves a cache line between the two (the
//! core-to-core latency, t_crit) then depends on the moment of its short
//! measurement. A burst of it before each benchmark that runs ahead of its
//! own samples the run's placements instead; the bursts a sanity rule
//! rejects are left out, the rest pooled, and the pool's capability
//! estimate is a low quantile over the run rather than over one moment.
//!
//! The contended locks move with it: three back-to-back `--quick` runs on
//! the Zen 4 VM read the spread mutexes' 2-thread throughput at 134, 50
//! and 143 M op/s, and a lock-only run seconds after the 50 read 146. Their
//! bursts put a slow moment in its share of the pool: the median then
//! follows the run's usual state, and the quantiles show the other one
//! (`models::profile::lock::HandOff`).
//!
//! So does the dgemm ceiling (`super::flops`): on the Xeon VM a
//! one-thread dgemm of 128² timed back to back read 60–63 or 34–43
//! GFLOP/s in states that lasted from a tenth of a second to the whole
//! FLOP/s benchmark, while the register peak held; two profiles of five
//! read the slow state with nine bursts between the benchmark's own
//! kernels. Its bursts on one thread and on all, before every benchmark
//! ahead of its own, sample the run's states, and the ceiling is the high
//! quantile of all their timings pooled, as a kernel's time is the low
//! quantile of its own: a state that lasts a tenth of a second comes and
//! goes within the half second a matmul's timings take, which then catch
//! its fast moments. (Read as a DRAM point is, the median burst, the five
//! profiles of one accuracy run took the slow state, 31–39 GFLOP/s on one
//! thread, while the matmul's timings read 49–61 GFLOP/s in four rounds
//! of five; the pooled high quantile of the same bursts read 41–60.)
//!
//! So does a falsely shared line: ten back-to-back runs of the `c2c`
//! benchmark on the Zen 4 VM read 0.96–0.99 ns per shared-line increment
//! whenever the ping-pong's line crossed chiplets (151–161 ns one way) and
//! 1.30–2.09 ns whenever it stayed on one (31–33 ns). Its bursts are
//! pooled whole, and read as the locks' are
//! (`models::profile::c2c::C2cSection::increment_s`).

use anyhow::{bail, Context as _, Result};
use models::stats::Sample;

use super::{c2c, flops, increments, lock, Context};
use crate::cli::BenchName;

/// The bursts taken so far in this run, oldest first.
#[derive(Debug, Default)]
pub struct Bursts {
    /// One-way core-to-core latency, s ([`super::c2c::probe`]).
    pub line: Vec<Sample>,
    /// Time per increment per thread with the run's most sharers'
    /// counters on one line, s ([`super::increments::probe`]).
    pub shared: Vec<Sample>,
    /// Throughput on all threads of each lock kind a prediction reads,
    /// op/s ([`super::lock::probe`]), in the order of [`lock::Kind::BURSTS`].
    pub locks: Vec<(lock::Kind, Vec<Sample>)>,
    /// The dgemm ceiling's per-timing FLOP/s on each team, by its thread
    /// count ([`super::flops::dgemm_burst`]).
    pub dgemm: Vec<(usize, Sample)>,
    /// The locks' critical section, in dependent steps, and the seconds of
    /// one step, fixed by the first burst: every burst and the benchmark's
    /// own rounds then time the same section.
    pub critical_steps: Option<(u64, f64)>,
}

/// Takes the bursts due before benchmark `next` runs: one of each figure
/// whose own benchmark comes later in this run.
pub fn take_before(ctx: &mut Context, next: BenchName) -> Result<()> {
    let later: Vec<BenchName> = ctx
        .config
        .benches
        .iter()
        .skip_while(|&&b| b != next)
        .skip(1)
        .copied()
        .collect();
    if later.contains(&BenchName::C2c) {
        let burst = c2c::probe(ctx).context("a core-to-core burst failed")?;
        ctx.bursts.line.extend(burst);
        let burst = increments::probe(ctx).context("a shared-line burst failed")?;
        ctx.bursts.shared.extend(burst);
    }
    if later.contains(&BenchName::Flops) {
        let bursts = ctx
            .teams()
            .into_iter()
            .map(|team| Ok((team.threads(), flops::dgemm_burst(ctx, team)?)))
            .collect::<Result<Vec<_>>>()
            .context("a dgemm burst failed")?;
        ctx.bursts.dgemm.extend(bursts);
    }
    if later.contains(&BenchName::Lock) {
        // The first burst fixes the section; later calls return it.
        ctx.bursts.critical_steps = Some(lock::critical_steps(ctx)?);
        for (kind, burst) in lock::probe(ctx).context("a lock burst failed")? {
            ctx.bursts.add_lock(kind, burst);
        }
    }
    Ok(())
}

impl Bursts {
    /// Adds a burst of lock `kind`.
    fn add_lock(&mut self, kind: lock::Kind, burst: Sample) {
        match self.locks.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, bursts)) => bursts.push(burst),
            None => self.locks.push((kind, vec![burst])),
        }
    }

    /// The dgemm bursts on `threads` threads taken so far, oldest first.
    pub fn dgemm(&self, threads: usize) -> Vec<Sample> {
        self.dgemm
            .iter()
            .filter(|(t, _)| *t == threads)
            .map(|(_, b)| b.clone())
            .collect()
    }

    /// The bursts of lock `kind` taken so far, oldest first.
    pub fn lock(&self, kind: lock::Kind) -> &[Sample] {
        self.locks
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(&[], |(_, b)| b)
    }
}

/// The bursts that `keep` accepts, pooled into one sample (their
/// disturbed-batch counts summed), and how many were left out. With none
/// kept the last burst, the benchmark's own, stands alone, and the rules
/// that rejected it then withdraw the figure.
pub fn pool(bursts: &[Sample], keep: impl Fn(&Sample) -> bool) -> Result<(Sample, usize)> {
    let Some(last) = bursts.last() else {
        bail!("no bursts to pool");
    };
    let kept: Vec<&Sample> = bursts
        .iter()
        .filter(|b| b.unreliable().is_none() && keep(b))
        .collect();
    if kept.is_empty() {
        return Ok((last.clone(), bursts.len() - 1));
    }
    let values = kept
        .iter()
        .flat_map(|b| b.values().iter().copied())
        .collect();
    let disturbed = kept.iter().map(|b| b.disturbed()).sum();
    let pooled = Sample::new(values)?.with_interference(disturbed, None);
    Ok((pooled, bursts.len() - kept.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_what_is_kept_and_counts_the_rest() {
        let b = |v: &[f64], disturbed| {
            Sample::new(v.to_vec())
                .unwrap()
                .with_interference(disturbed, None)
        };
        let unreliable = b(&[9.0, 9.5], 5).with_interference(5, Some("too few clean".into()));
        let bursts = [
            b(&[1.0, 2.0], 1),
            b(&[50.0, 51.0], 0),
            unreliable,
            b(&[3.0, 4.0], 2),
        ];
        let (p, left_out) = pool(&bursts, |s| s.values()[0] < 10.0).unwrap();
        assert_eq!(p.values(), &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!((p.disturbed(), left_out), (3, 2));
        let (own, left_out) = pool(&bursts, |_| false).unwrap();
        assert_eq!((own.values(), left_out), (&[3.0, 4.0][..], 3));
        assert!(pool(&[], |_| true).is_err());
    }

    #[test]
    fn lock_bursts_are_kept_per_kind() {
        let b = |v: f64| Sample::new(vec![v, v]).unwrap();
        let mut bursts = Bursts::default();
        bursts.add_lock(lock::Kind::Mutex, b(1.0));
        bursts.add_lock(lock::Kind::Ticket, b(2.0));
        bursts.add_lock(lock::Kind::Mutex, b(3.0));
        let firsts = |k| -> Vec<f64> { bursts.lock(k).iter().map(|s| s.values()[0]).collect() };
        assert_eq!(firsts(lock::Kind::Mutex), [1.0, 3.0]);
        assert_eq!(firsts(lock::Kind::Ticket), [2.0]);
        assert!(bursts.lock(lock::Kind::Spin).is_empty());
    }
}
