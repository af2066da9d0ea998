//! The MPI ping-pong of `calibrate::pingpong` on its own, until
//! `calibrate --only pingpong` is wired, and for the benchmark script.
//!
//! ```text
//! mpirun -np 2 target/release/examples/pingpong [--quick] [--json] [--timeout S]
//! mpirun -np 2 target/release/examples/pingpong point --bytes 8 --reps 10000 --samples 30
//! ```
//!
//! The sweep prints the table on rank 0 (with `--json`: the profile's
//! summary figures, `network` and `sections.pingpong` on stdout, the table
//! on stderr). `point` prints one
//! JSON line in the format of `scripts/pingpong.c`.

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::process::ExitCode;
    use std::time::Duration;

    use calibrate::pingpong::{self, Mode, PingpongError, PingpongOptions, PingpongOutcome};
    use clap::{Parser, Subcommand};
    use mpi::traits::*;
    use serde_json::json;

    #[derive(Parser)]
    #[command(name = "pingpong", about = "MPI ping-pong between ranks 0 and 1")]
    struct Cli {
        #[command(subcommand)]
        command: Option<Cmd>,
        /// Fewer, shorter samples.
        #[arg(long)]
        quick: bool,
        /// JSON on stdout, the table on stderr.
        #[arg(long)]
        json: bool,
        /// Seconds without progress before the job is aborted (0: never).
        #[arg(long, default_value_t = models::profile::pingpong::DEFAULT_WATCHDOG_S)]
        timeout: f64,
        /// Largest message, bytes.
        #[arg(long, default_value_t = 16 << 20)]
        max_bytes: u64,
    }

    #[derive(Subcommand)]
    enum Cmd {
        /// One size with a fixed plan, as scripts/pingpong.c measures it.
        Point {
            #[arg(long)]
            bytes: u64,
            #[arg(long)]
            reps: u64,
            #[arg(long)]
            samples: u64,
            /// Warm-up round trips (default: max(reps, 100)).
            #[arg(long)]
            warmup: Option<u64>,
            /// Isend/Irecv instead of Send/Recv.
            #[arg(long)]
            nonblocking: bool,
        },
    }

    pub fn main() -> ExitCode {
        let cli = match Cli::try_parse() {
            Ok(c) => c,
            Err(e) => {
                let _ = e.print();
                return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
            }
        };
        if !(cli.timeout.is_finite() && cli.timeout >= 0.0) {
            eprintln!("error: --timeout must be a number of seconds >= 0");
            return ExitCode::from(2);
        }
        let timeout = Duration::from_secs_f64(cli.timeout);
        let Some(universe) = mpi::initialize() else {
            eprintln!("error: MPI could not be initialised");
            return ExitCode::from(1);
        };
        let world = universe.world();
        let rank = world.rank();
        let result = match &cli.command {
            Some(Cmd::Point {
                bytes,
                reps,
                samples,
                warmup,
                nonblocking,
            }) => point(
                &world,
                *bytes,
                *reps,
                *samples,
                *warmup,
                *nonblocking,
                timeout,
            ),
            None => sweep(&world, &cli, timeout),
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                if rank == 0 {
                    eprintln!("error: {e}");
                }
                let code = match e {
                    PingpongError::SingleRank(_) | PingpongError::Option(_) => 2,
                    _ => 1,
                };
                ExitCode::from(code)
            }
        }
    }

    fn sweep(
        world: &mpi::topology::SimpleCommunicator,
        cli: &Cli,
        timeout: Duration,
    ) -> Result<(), PingpongError> {
        let mut opts = if cli.quick {
            PingpongOptions::quick()
        } else {
            PingpongOptions::default()
        };
        opts.watchdog_timeout_s = timeout.as_secs_f64();
        opts.max_bytes = cli.max_bytes;
        opts.overlap_bytes = opts.overlap_bytes.min(cli.max_bytes);
        if let PingpongOutcome::Report(r) = pingpong::run_on(world, &opts)? {
            if cli.json {
                let doc = json!({
                    "summary": { "mpi_t0_s": r.t0_s.point, "mpi_bandwidth_Bps": r.bandwidth_Bps.point },
                    "network": r.network(),
                    "section": r.section(),
                });
                println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
                eprint!("{r}");
            } else {
                print!("{r}");
            }
        }
        Ok(())
    }

    fn point(
        world: &mpi::topology::SimpleCommunicator,
        bytes: u64,
        reps: u64,
        samples: u64,
        warmup: Option<u64>,
        nonblocking: bool,
        timeout: Duration,
    ) -> Result<(), PingpongError> {
        let mode = if nonblocking {
            Mode::Nonblocking
        } else {
            Mode::Blocking
        };
        let warmup = warmup.unwrap_or(reps.max(100));
        if let Some(v) =
            pingpong::measure_point(world, mode, bytes, reps, samples, warmup, timeout)?
        {
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let median = models::stats::median_of_sorted(&sorted);
            let doc = json!({
                "impl": "rust", "mode": mode.name(), "bytes": bytes, "reps": reps,
                "samples": samples, "one_way_median_s": median, "one_way_s": v,
            });
            println!("{doc}");
        }
        Ok(())
    }
}

#[cfg(feature = "mpi")]
fn main() -> std::process::ExitCode {
    with_mpi::main()
}

#[cfg(not(feature = "mpi"))]
fn main() -> std::process::ExitCode {
    eprintln!("error: built without MPI; rebuild with the default `mpi` feature");
    std::process::ExitCode::from(2)
}
