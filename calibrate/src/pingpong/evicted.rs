//! The ping-pong after an evicting sweep: what a message costs when
//! neither rank's private caches hold its buffers or the transport's
//! shared state, as after a rank's sweep over more than those caches
//! (a stencil's iteration: sweep, then exchange the edge rows; lecture
//! §2.2, §4.1).
//!
//! Each sample is one blocking round trip of n bytes. Before it both ranks
//! meet at a barrier and sweep a buffer of their own, twice the largest
//! cache the OS reports as private to a CPU ([`sweep_bytes`]), as a
//! stencil sweeps: half of it read, the other half written. Each then
//! writes its message, as a sweep writes the edge row it sends last. Rank
//! 1 waits in its receive; rank 0 waits as long again as its sweep took
//! (at least [`MIN_WAIT_S`]) before it sends, so that the round trip does
//! not time rank 1's sweep. The one-way time is half the round trip; the
//! first sample of each size is discarded. The Intel MPI Benchmarks'
//! `-off_cache` is the milder form: it rotates the user buffers through a
//! larger region, which leaves the transport's own state in the caches.
//!
//! On the Xeon VM (Open MPI 4.1 over shared memory, 2026-12-07), two
//! stencil ranks whose sweeps left their 2 MiB L2s exchanged their edge
//! rows, after a barrier, in 8.5–8.8 µs for rows of 4 KiB, 17 µs for
//! 8 KiB and 26–27 µs for 16 KiB, and the same exchange repeated at once
//! took 6.4, 7.6 and 11.6 µs, where two one-way times of the ping-pong
//! with its buffers in cache give 4.9, 6.1 and 8.5 µs. Rows of 2 KiB,
//! whose sweep fits in L2, took 2.2 µs either way. Two full runs of this
//! measurement there read 5.6 and 8.7 µs one way at 4 KiB, against 1.7
//! and 3.1 µs in cache in the same runs.

use std::hint::black_box;

use mpi::traits::*;

use super::measure::{point, Cmd, Mode, Pair, SizePoint, TAG_DATA};
use super::watchdog::Watchdog;
use crate::sysinfo::largest_private_cache_of_cpu0;

/// Largest message measured so: beyond it a message's transfer outweighs
/// what the caches change.
pub const MAX_BYTES: u64 = 1 << 20;

/// Shortest wait of rank 0 between its sweep and its send, seconds.
pub const MIN_WAIT_S: f64 = 20e-6;

/// Bytes a rank writes before each round trip: twice the largest cache
/// the OS reports as private to a CPU, 4 MiB when it reports none.
pub fn sweep_bytes() -> u64 {
    largest_private_cache_of_cpu0().map_or(4 << 20, |b| 2 * b)
}

/// The sizes of `sizes` measured so: those up to [`MAX_BYTES`].
pub fn sizes_of(sizes: &[u64]) -> Vec<u64> {
    sizes.iter().copied().filter(|&b| b <= MAX_BYTES).collect()
}

/// Reads the first half of `buf` and writes the second, as a sweep reads
/// its input and writes its output (every output line left modified).
fn sweep(buf: &mut [u64]) {
    let (src, dst) = buf.split_at_mut(buf.len() / 2);
    for (d, s) in dst.iter_mut().zip(src.iter()) {
        *d = s.wrapping_add(1);
    }
    black_box(buf);
}

impl Pair<'_> {
    /// Both ranks: `samples` round trips of `bytes` bytes, each after an
    /// evicting sweep; rank 0's one-way times, seconds (rank 1: none).
    pub(super) fn evicted_batch(&mut self, bytes: u64, samples: u64, wd: &Watchdog) -> Vec<f64> {
        if self.evict.is_empty() {
            self.evict = vec![1; (sweep_bytes() / 8) as usize];
        }
        let n = bytes as usize;
        let mut out = Vec::with_capacity(samples as usize);
        for _ in 0..samples {
            self.comm.barrier();
            let start = mpi::time();
            sweep(&mut self.evict);
            let swept = mpi::time() - start;
            let buf = &mut self.send[..n];
            // The message is written last, as a sweep's edge row is.
            for x in buf.iter_mut() {
                *x = x.wrapping_add(1);
            }
            black_box(&mut *buf);
            if self.leader {
                let until = mpi::time() + swept.max(MIN_WAIT_S);
                while mpi::time() < until {
                    std::hint::spin_loop();
                }
                let t = mpi::time();
                self.peer.send_with_tag(&*buf, TAG_DATA);
                self.peer.receive_into_with_tag(&mut *buf, TAG_DATA);
                out.push((mpi::time() - t) / 2.0);
            } else {
                self.peer.receive_into_with_tag(&mut *buf, TAG_DATA);
                self.peer.send_with_tag(&*buf, TAG_DATA);
            }
            wd.pet();
        }
        out
    }
}

/// Rank 0: every size of `sizes`, `samples` samples each (one more,
/// discarded, first).
pub(super) fn measure(
    pair: &mut Pair<'_>,
    sizes: &[u64],
    samples: u64,
    wd: &Watchdog,
) -> Vec<SizePoint> {
    sizes
        .iter()
        .map(|&bytes| {
            wd.step(format!(
                "waiting for rank 1 in the ping-pong of {bytes} B after an evicting sweep"
            ));
            pair.command(Cmd::Evicted {
                bytes,
                samples: samples + 1,
            });
            let mut values = pair.evicted_batch(bytes, samples + 1, wd);
            values.remove(0);
            point(Mode::Blocking, bytes, 1, values)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_stop_at_the_largest_measured_so() {
        assert_eq!(sizes_of(&[1, 4096, 1 << 20, 2 << 20]), [1, 4096, 1 << 20]);
        assert!(sweep_bytes() >= 2 * 1024);
    }
}
