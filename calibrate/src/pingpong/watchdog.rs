//! A watchdog that ends a stuck MPI run instead of letting it hang
//! forever.
//!
//! A blocking MPI call whose peer never answers (a rank that is alive but
//! stuck, a message that is never sent) waits forever. The watchdog is a
//! thread that wakes every `timeout / 20` (at most once a second) and checks
//! when the main thread last reported progress ([`Watchdog::pet`]). After
//! `timeout` without progress it prints one line naming the step that
//! stalled and calls `MPI_Abort(MPI_COMM_WORLD, 124)`, which ends every rank
//! of the job (124 is the exit status `timeout(1)` uses). A rank that dies
//! outright is noticed by `mpirun`, which then ends the others.
//!
//! `predict run --kernel ghost-stencil` uses it too (it pets after every
//! sweep, and `--timeout` sets the limit).
//!
//! The timeout is *without progress*, not for the whole run: the ping-pong
//! pets the watchdog after every sample, so the default of
//! [`models::profile::pingpong::DEFAULT_WATCHDOG_S`] (120 s) is far above any honest step (a 16 MiB round
//! trip over 1 GbE takes 0.3 s) yet bounds a hang. A zero timeout disables
//! the watchdog.
//!
//! `MPI_Abort` is called from the watchdog thread while the main thread may
//! be blocked inside MPI. The standard only promises that under
//! `MPI_THREAD_MULTIPLE`; Open MPI and MPICH implement `MPI_Abort` as a
//! job-level kill through their runtime that does not touch the blocked
//! communication state, and it works under the default `MPI_THREAD_SINGLE`
//! (asking for `MPI_THREAD_MULTIPLE` would put a lock on every message, which
//! the small-message latency would show). Should `MPI_Abort` not end the
//! process within 10 s, the watchdog aborts the process itself.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Exit status of a job ended by the watchdog.
pub const ABORT_CODE: i32 = 124;

struct State {
    start: Instant,
    /// Milliseconds since `start` of the last progress.
    last_ms: AtomicU64,
    step: Mutex<String>,
    stop: AtomicBool,
}

impl State {
    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }
}

/// A running watchdog; dropping it stops the thread.
pub struct Watchdog {
    state: Arc<State>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts a watchdog for `who` (for example "pingpong rank 0"), or an
    /// inert one when `timeout` is zero.
    pub fn arm(timeout: Duration, who: &str) -> Self {
        let state = Arc::new(State {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            step: Mutex::new("starting".into()),
            stop: AtomicBool::new(false),
        });
        let thread = (!timeout.is_zero()).then(|| {
            let state = Arc::clone(&state);
            let who = who.to_string();
            std::thread::Builder::new()
                .name("mpi-watchdog".into())
                .spawn(move || watch(&state, timeout, &who))
                .expect("the OS can start one more thread")
        });
        Self { state, thread }
    }

    /// Reports progress.
    pub fn pet(&self) {
        self.state
            .last_ms
            .store(self.state.now_ms(), Ordering::Relaxed);
    }

    /// Reports progress and names the step now starting, for the message
    /// printed if it stalls.
    pub fn step(&self, step: impl Into<String>) {
        if let Ok(mut s) = self.state.step.lock() {
            *s = step.into();
        }
        self.pet();
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

fn watch(state: &State, timeout: Duration, who: &str) {
    let tick = (timeout / 20).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let limit_ms = timeout.as_millis() as u64;
    loop {
        std::thread::park_timeout(tick);
        if state.stop.load(Ordering::Relaxed) {
            return;
        }
        let idle = state
            .now_ms()
            .saturating_sub(state.last_ms.load(Ordering::Relaxed));
        if idle >= limit_ms {
            let step = state
                .step
                .lock()
                .map(|s| s.clone())
                .unwrap_or_else(|_| "unknown".into());
            eprintln!(
                "error: {who}: no progress for {:.0} s while {step}; a peer rank is not answering, so the job is aborted (raise the timeout if the network is that slow)",
                timeout.as_secs_f64()
            );
            abort_job();
        }
    }
}

/// Ends the whole MPI job; falls back to aborting this process.
fn abort_job() -> ! {
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(10));
        std::process::abort();
    });
    // SAFETY: MPI_Abort takes the predefined world communicator and an
    // error code; it does not return when it succeeds.
    unsafe {
        mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, ABORT_CODE);
    }
    std::process::abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disarmed_watchdog_stops_quickly() {
        let t = Instant::now();
        {
            let w = Watchdog::arm(Duration::from_secs(60), "test");
            w.step("testing");
            w.pet();
        }
        assert!(t.elapsed() < Duration::from_secs(5));
        // A zero timeout starts no thread at all.
        let w = Watchdog::arm(Duration::ZERO, "test");
        assert!(w.thread.is_none());
    }
}
