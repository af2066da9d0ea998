//! How much of a message's time non-blocking posting hides behind
//! computation: the lecture's cost = communication time − overlap (§2.2).
//!
//! Ranks 0 and 1 exchange one large message each way (each posts
//! `MPI_Irecv` and `MPI_Isend`, then `MPI_Waitall`). One *triple* times, on
//! rank 0, after a barrier each:
//!
//! 1. t_comm: post, wait (communication alone);
//! 2. t_comp: a calibrated computation alone, sized to take about t_comm;
//! 3. t_total: post, compute, wait.
//!
//! The overlap fraction of the triple is f = (t_comm + t_comp − t_total) /
//! t_comm: 1 when the message hid completely behind the computation
//! (t_total = t_comp), 0 when nothing hid (t_total = t_comp + t_comm). The
//! figure is the median of f over the triples with its 95% interval; single
//! triples can fall slightly outside [0, 1] through noise and are kept.
//!
//! The computation is a dependent multiply–add chain on one register: it
//! touches no memory, so it does not compete with the message copy for
//! bandwidth, and any hiding it shows is the library progressing the
//! transfer while the CPU is busy (a NIC, a progress thread, or a
//! single-copy transfer driven by the peer). A library that moves data only
//! inside MPI calls shows an overlap near 0 for messages that go by
//! rendezvous, whatever the API promises.

use std::hint::black_box;
use std::time::Instant;

use models::stats::{median, Sample, Summary};

use super::measure::{Cmd, Pair, TAG_DATA};
use super::watchdog::Watchdog;
use mpi::traits::*;

/// Triples of the probe that sizes the computation.
const PROBE_TRIPLES: u64 = 3;

/// What the overlap measurement gives, as the profile records it.
pub use models::profile::pingpong::Overlap as OverlapResult;

/// The computation: `iters` dependent multiply–adds, about one FP latency
/// each. Returns the chain's value so it cannot be removed.
#[inline(never)]
pub fn spin(iters: u64) -> f64 {
    let mut x = 1.0f64;
    for _ in 0..black_box(iters) {
        x = x * 0.999_999_9 + 1e-9;
    }
    black_box(x)
}

/// Iterations of [`spin`] that take about `target_s` on this core (the
/// fastest of three timings of a chain of at least 100 µs, scaled).
pub fn spin_iters_for(target_s: f64) -> u64 {
    let mut iters = 1024u64;
    let per_iter = loop {
        let best = (0..3)
            .map(|_| {
                let t = Instant::now();
                spin(iters);
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        if best >= 1e-4 || iters >= 1 << 40 {
            break best / iters as f64;
        }
        iters *= 4;
    };
    ((target_s / per_iter).round() as u64).max(1)
}

impl Pair<'_> {
    /// Both ranks: `triples` triples; each entry is [t_comm, t_comp, t_total]
    /// as this rank timed it.
    pub(super) fn overlap_triples(
        &mut self,
        bytes: u64,
        spin_iters: u64,
        triples: u64,
        wd: &Watchdog,
    ) -> Vec<[f64; 3]> {
        let n = bytes as usize;
        let mut out = Vec::with_capacity(triples as usize);
        for _ in 0..triples {
            self.comm.barrier();
            let t = mpi::time();
            self.exchange(n, None);
            let comm = mpi::time() - t;

            self.comm.barrier();
            let t = mpi::time();
            black_box(spin(spin_iters));
            let comp = mpi::time() - t;

            self.comm.barrier();
            let t = mpi::time();
            self.exchange(n, Some(spin_iters));
            let total = mpi::time() - t;

            out.push([comm, comp, total]);
            wd.pet();
        }
        out
    }

    /// Posts the exchange, computes if asked, waits.
    fn exchange(&mut self, n: usize, compute: Option<u64>) {
        let peer = &self.peer;
        let (sbuf, rbuf) = (&self.send[..n], &mut self.recv[..n]);
        mpi::request::scope(|scope| {
            let r = peer.immediate_receive_into_with_tag(scope, rbuf, TAG_DATA);
            let s = peer.immediate_send_with_tag(scope, sbuf, TAG_DATA);
            if let Some(iters) = compute {
                black_box(spin(iters));
            }
            s.wait_without_status();
            r.wait_without_status();
        });
    }
}

/// Rank 0: probes the exchange time, sizes the computation to match it,
/// then runs `triples` triples with rank 1.
pub(super) fn measure(
    pair: &mut Pair<'_>,
    bytes: u64,
    triples: u64,
    wd: &Watchdog,
) -> OverlapResult {
    wd.step(format!("overlap exchange of {bytes} B with rank 1"));
    pair.command(Cmd::Overlap {
        bytes,
        spin: 0,
        triples: PROBE_TRIPLES,
    });
    let probe = pair.overlap_triples(bytes, 0, PROBE_TRIPLES, wd);
    let spin_iters = spin_iters_for(median(probe.iter().map(|t| t[0]).collect()));

    pair.command(Cmd::Overlap {
        bytes,
        spin: spin_iters,
        triples,
    });
    let v = pair.overlap_triples(bytes, spin_iters, triples, wd);
    summarize(bytes, spin_iters, &v)
}

/// The fractions and times of the triples.
pub(super) fn summarize(bytes: u64, spin_iters: u64, triples: &[[f64; 3]]) -> OverlapResult {
    let col = |k: usize| -> Summary {
        Sample::new(triples.iter().map(|t| t[k]).collect())
            .expect("at least two timed triples")
            .summary()
    };
    let fraction = Sample::new(
        triples
            .iter()
            .map(|[comm, comp, total]| (comm + comp - total) / comm)
            .collect(),
    )
    .expect("at least two finite fractions")
    .summary();
    OverlapResult {
        bytes,
        spin_iters,
        fraction,
        comm_s: col(0),
        comp_s: col(1),
        total_s: col(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fraction_is_one_when_hidden_and_zero_when_serial() {
        // Fully hidden: total = comp.
        let r = summarize(8, 1, &[[1.0, 2.0, 2.0], [1.0, 2.0, 2.0], [1.0, 2.0, 2.0]]);
        assert_eq!(r.fraction.median, 1.0);
        // Serial: total = comm + comp.
        let r = summarize(8, 1, &[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]);
        assert_eq!(r.fraction.median, 0.0);
        // Half hidden.
        let r = summarize(8, 1, &[[2.0, 2.0, 3.0], [2.0, 2.0, 3.0]]);
        assert_eq!(r.fraction.median, 0.5);
    }

    #[test]
    fn spin_scales_with_iterations() {
        let n = spin_iters_for(2e-4);
        assert!(n >= 1);
        assert!(spin(10).is_finite());
    }
}
