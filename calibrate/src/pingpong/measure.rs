//! The ping-pong loops between ranks 0 and 1, and the small command protocol
//! by which rank 0 (the leader) tells rank 1 (the follower) what to do next.
//!
//! Rank 0 decides everything (sizes, repetitions, when to stop) because the
//! sizes of the second pass depend on a fit only it makes. Before each
//! batch it sends rank 1 a five-word command on its own tag; the data
//! messages use another tag, so a command can never be taken for data.
//! Commands travel outside the timed regions.
//!
//! One sample: both ranks meet at a barrier of the pair's communicator, rank
//! 0 reads `MPI_Wtime`, `reps` round trips run, rank 0 reads the clock
//! again; the sample's one-way time is elapsed / (2·reps).
//!
//! * blocking: rank 0 `MPI_Send` then `MPI_Recv` on one buffer, rank 1 the
//!   mirror image (what the C reference `scripts/pingpong.c` does);
//! * non-blocking: rank 0 posts `MPI_Irecv` for the reply, then `MPI_Isend`,
//!   and waits for both; rank 1 posts `MPI_Irecv`, waits, then `MPI_Isend`
//!   and waits. Separate send and receive buffers.

use models::stats::Sample;
use mpi::topology::{Process, SimpleCommunicator};
use mpi::traits::*;

use super::watchdog::Watchdog;
use super::PingpongOptions;

/// Tag of the data messages.
pub const TAG_DATA: mpi::Tag = 1;
/// Tag of rank 0's commands to rank 1.
const TAG_CTRL: mpi::Tag = 2;
/// Upper limit of round trips in one sample (a 1 ms sample of a 100 ns
/// round trip needs 10⁴).
const MAX_REPS: u64 = 1 << 24;

pub use models::profile::network::{Mode, SizePoint};

/// A mode on the wire of the command protocol.
fn mode_code(mode: Mode) -> u64 {
    match mode {
        Mode::Blocking => 0,
        Mode::Nonblocking => 1,
    }
}

/// The mode a command word names.
fn mode_of_code(c: u64) -> Mode {
    if c == 0 {
        Mode::Blocking
    } else {
        Mode::Nonblocking
    }
}

/// What rank 0 asks rank 1 to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cmd {
    /// The sweep is over.
    Done,
    /// `samples` samples of `reps` round trips of `bytes` bytes.
    Batch {
        mode: Mode,
        bytes: u64,
        reps: u64,
        samples: u64,
    },
    /// `triples` overlap triples of a `bytes` exchange and `spin` compute iterations.
    Overlap { bytes: u64, spin: u64, triples: u64 },
    /// `samples` round trips of `bytes` bytes, each after an evicting sweep.
    Evicted { bytes: u64, samples: u64 },
}

impl Cmd {
    fn encode(self) -> [u64; 5] {
        match self {
            Cmd::Done => [0; 5],
            Cmd::Batch {
                mode,
                bytes,
                reps,
                samples,
            } => [1, mode_code(mode), bytes, reps, samples],
            Cmd::Overlap {
                bytes,
                spin,
                triples,
            } => [2, bytes, spin, triples, 0],
            Cmd::Evicted { bytes, samples } => [3, bytes, samples, 0, 0],
        }
    }

    fn decode(w: [u64; 5]) -> Cmd {
        match w[0] {
            1 => Cmd::Batch {
                mode: mode_of_code(w[1]),
                bytes: w[2],
                reps: w[3],
                samples: w[4],
            },
            2 => Cmd::Overlap {
                bytes: w[1],
                spin: w[2],
                triples: w[3],
            },
            3 => Cmd::Evicted {
                bytes: w[1],
                samples: w[2],
            },
            _ => Cmd::Done,
        }
    }
}

/// Ranks 0 and 1 in their own communicator, with the message buffers.
pub(super) struct Pair<'a> {
    pub(super) comm: &'a SimpleCommunicator,
    pub(super) leader: bool,
    pub(super) peer: Process<'a>,
    pub(super) send: Vec<u8>,
    pub(super) recv: Vec<u8>,
    /// What [`super::evicted`] sweeps before each round trip (allocated
    /// at its first use).
    pub(super) evict: Vec<u64>,
}

impl<'a> Pair<'a> {
    /// `comm` holds exactly ranks 0 and 1; buffers of `max_bytes` are
    /// allocated and touched.
    pub(super) fn new(comm: &'a SimpleCommunicator, max_bytes: u64) -> Self {
        let leader = comm.rank() == 0;
        let peer = comm.process_at_rank(1 - comm.rank());
        let n = max_bytes.max(1) as usize;
        Self {
            comm,
            leader,
            peer,
            send: vec![1 + comm.rank() as u8; n],
            recv: vec![0; n],
            evict: Vec::new(),
        }
    }

    /// Both ranks: the two processor names, rank 0's first (as rank 0
    /// sees them; rank 1 gets an empty list).
    pub(super) fn hosts(&self) -> Vec<String> {
        let own = mpi::environment::processor_name().unwrap_or_else(|_| "unknown".into());
        if self.leader {
            let (peer, _) = self.peer.receive_vec_with_tag::<u8>(TAG_CTRL);
            vec![own, String::from_utf8_lossy(&peer).into_owned()]
        } else {
            self.peer.send_with_tag(own.as_bytes(), TAG_CTRL);
            Vec::new()
        }
    }

    /// Rank 0: sends a command.
    pub(super) fn command(&self, cmd: Cmd) {
        self.peer.send_with_tag(&cmd.encode()[..], TAG_CTRL);
    }

    /// Rank 1: waits for the next command.
    fn next_command(&self) -> Cmd {
        let mut w = [0u64; 5];
        self.peer.receive_into_with_tag(&mut w[..], TAG_CTRL);
        Cmd::decode(w)
    }

    /// Rank 0: ends rank 1's loop.
    pub(super) fn finish(&self) {
        self.command(Cmd::Done);
    }

    /// Rank 1: obeys commands until told to stop.
    pub(super) fn follow(&mut self, wd: &Watchdog) {
        loop {
            wd.step("waiting for the next command from rank 0");
            match self.next_command() {
                Cmd::Done => return,
                Cmd::Batch {
                    mode,
                    bytes,
                    reps,
                    samples,
                } => {
                    wd.step(format!(
                        "{} ping-pong of {bytes} B with rank 0",
                        mode.name()
                    ));
                    self.batch(mode, bytes, reps, samples, wd);
                }
                Cmd::Overlap {
                    bytes,
                    spin,
                    triples,
                } => {
                    wd.step(format!("overlap exchange of {bytes} B with rank 0"));
                    self.overlap_triples(bytes, spin, triples, wd);
                }
                Cmd::Evicted { bytes, samples } => {
                    wd.step(format!(
                        "ping-pong of {bytes} B after an evicting sweep with rank 0"
                    ));
                    self.evicted_batch(bytes, samples, wd);
                }
            }
        }
    }

    /// Both ranks: `samples` samples of `reps` round trips of `bytes` bytes;
    /// the one-way time of each sample, seconds.
    pub(super) fn batch(
        &mut self,
        mode: Mode,
        bytes: u64,
        reps: u64,
        samples: u64,
        wd: &Watchdog,
    ) -> Vec<f64> {
        let mut out = Vec::with_capacity(samples as usize);
        for _ in 0..samples {
            self.comm.barrier();
            let t0 = mpi::time();
            self.round_trips(mode, bytes as usize, reps);
            let t = mpi::time() - t0;
            out.push(t / (2.0 * reps as f64));
            wd.pet();
        }
        out
    }

    fn round_trips(&mut self, mode: Mode, n: usize, reps: u64) {
        let peer = &self.peer;
        match (mode, self.leader) {
            (Mode::Blocking, true) => {
                let buf = &mut self.send[..n];
                for _ in 0..reps {
                    peer.send_with_tag(&*buf, TAG_DATA);
                    peer.receive_into_with_tag(&mut *buf, TAG_DATA);
                }
            }
            (Mode::Blocking, false) => {
                let buf = &mut self.send[..n];
                for _ in 0..reps {
                    peer.receive_into_with_tag(&mut *buf, TAG_DATA);
                    peer.send_with_tag(&*buf, TAG_DATA);
                }
            }
            (Mode::Nonblocking, true) => {
                let (sbuf, rbuf) = (&self.send[..n], &mut self.recv[..n]);
                for _ in 0..reps {
                    mpi::request::scope(|scope| {
                        let r = peer.immediate_receive_into_with_tag(scope, &mut *rbuf, TAG_DATA);
                        let s = peer.immediate_send_with_tag(scope, sbuf, TAG_DATA);
                        s.wait_without_status();
                        r.wait_without_status();
                    });
                }
            }
            (Mode::Nonblocking, false) => {
                let (sbuf, rbuf) = (&self.send[..n], &mut self.recv[..n]);
                for _ in 0..reps {
                    mpi::request::scope(|scope| {
                        let r = peer.immediate_receive_into_with_tag(scope, &mut *rbuf, TAG_DATA);
                        r.wait_without_status();
                        let s = peer.immediate_send_with_tag(scope, sbuf, TAG_DATA);
                        s.wait_without_status();
                    });
                }
            }
        }
    }

    /// Rank 0: one size of one mode. A doubling warm-up (at least three
    /// steps, until one step lasts `min_sample_s`) warms the path and sizes
    /// the batch so that a sample lasts at least `min_sample_s`; then
    /// `samples` samples.
    pub(super) fn measure_size(
        &mut self,
        mode: Mode,
        bytes: u64,
        opts: &PingpongOptions,
        wd: &Watchdog,
    ) -> SizePoint {
        wd.step(format!(
            "waiting for rank 1 in the {} ping-pong of {bytes} B",
            mode.name()
        ));
        let mut reps = 1u64;
        let mut steps = 0;
        let per_round_trip = loop {
            self.command(Cmd::Batch {
                mode,
                bytes,
                reps,
                samples: 1,
            });
            let t = self.batch(mode, bytes, reps, 1, wd)[0] * 2.0 * reps as f64;
            steps += 1;
            if (steps >= 3 && t >= opts.min_sample_s) || reps >= MAX_REPS {
                break t / reps as f64;
            }
            reps *= 2;
        };
        let reps = ((opts.min_sample_s / per_round_trip).ceil() as u64).clamp(1, MAX_REPS);
        self.command(Cmd::Batch {
            mode,
            bytes,
            reps,
            samples: opts.samples as u64,
        });
        let values = self.batch(mode, bytes, reps, opts.samples as u64, wd);
        point(mode, bytes, reps, values)
    }
}

/// A [`SizePoint`] from the one-way times of its samples (at least two).
pub(super) fn point(mode: Mode, bytes: u64, reps: u64, values: Vec<f64>) -> SizePoint {
    let one_way_s = Sample::new(values)
        .expect("at least two finite samples (checked options, clock differences)")
        .summary();
    SizePoint {
        mode,
        bytes,
        reps_per_sample: reps,
        bandwidth_Bps: bytes as f64 / one_way_s.median,
        one_way_s,
    }
}

/// Both ranks of `pair`: `warmup` round trips, then `samples` samples of
/// `reps` round trips, with no commands (both sides know the plan). The
/// procedure of `scripts/pingpong.c`.
pub(super) fn fixed_plan(
    pair: &mut Pair<'_>,
    mode: Mode,
    bytes: u64,
    reps: u64,
    samples: u64,
    warmup: u64,
    wd: &Watchdog,
) -> Vec<f64> {
    pair.batch(mode, bytes, warmup.max(1), 1, wd);
    pair.batch(mode, bytes, reps, samples, wd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip() {
        for c in [
            Cmd::Done,
            Cmd::Batch {
                mode: Mode::Nonblocking,
                bytes: 4096,
                reps: 17,
                samples: 30,
            },
            Cmd::Overlap {
                bytes: 1 << 22,
                spin: 123_456,
                triples: 30,
            },
            Cmd::Evicted {
                bytes: 4096,
                samples: 31,
            },
        ] {
            assert_eq!(Cmd::decode(c.encode()), c);
        }
    }

    #[test]
    fn point_reports_bandwidth_at_the_median() {
        let p = point(Mode::Blocking, 1000, 4, vec![1e-6, 2e-6, 3e-6]);
        assert_eq!(p.one_way_s.median, 2e-6);
        assert!((p.bandwidth_Bps - 5e8).abs() < 1e-3);
    }
}
