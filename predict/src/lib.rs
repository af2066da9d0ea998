//! `predict`: evaluates the models with the work shown, runs real kernels
//! against their predictions, draws Roofline and scaling charts and plans
//! strong scaling. The binary is glue: [`cli`] parses, [`run()`] dispatches,
//! `main` prints one error line and exits 2 for bad input ([`error`]).
//!
//! | module | job |
//! |---|---|
//! | [`profiles`] | where `--profile FILE\|NAME` is found; the built-in textbook machine |
//! | [`machine`] | the figures a prediction needs, queried from a profile |
//! | [`eval`] | `predict eval`: one formula of the lecture, the work shown |
//! | [`kernels`] | the built-in kernels behind [`kernels::Kernel`], their declared work and its prediction term by term; [`kernels::paired`] re-measures the figures a prediction leans on next to the kernel |
//! | [`kernel_cmd`] | `predict kernel`: a user's loop, described by its work, predicted by the same terms |
//! | [`run`](mod@run) | `predict run`: the thread kernels and the MPI ghost stencil ([`mpi_stencil`]) measured next to their predictions |
//! | [`record`] | the records `run` and `kernel` write, and their reader |
//! | [`roofline`], [`mountain`], [`chart`] | the charts and their data; [`chart`] knows no drawing library but through its `Plotter` |
//! | [`scaling`] | where strong scaling levels off, with error bars; fits of one's own runs |
//!
//! Kernels are timed with `calibrate`'s measurement harness
//! (`calibrate::harness`), the same timer, pinning and buffers the profile
//! was measured with, so a prediction and its measurement compare like
//! with like.

pub mod args;
pub mod chart;
pub mod cli;
pub mod error;
pub mod eval;
pub mod kernel_cmd;
pub mod kernels;
pub mod loop_figures;
pub mod machine;
pub mod mountain;
pub mod mpi_stencil;
pub mod profiles;
pub mod record;
pub mod roofline;
pub mod run;
pub mod scaling;

use cli::{Cli, Command};

pub use error::exit_code;

/// Runs a parsed command, writing its report to `out`.
pub fn run(cli: &Cli, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    match &cli.command {
        Command::Eval {
            json,
            profile,
            model,
        } => {
            if matches!(model, eval::Model::Lecture) {
                if let Some(p) = profile {
                    return Err(error::BadInput(format!(
                        "--profile {}: `eval lecture` checks the lecture's own figures, not a machine's; drop --profile",
                        p.display()
                    ))
                    .into());
                }
                if *json {
                    let j = eval::lecture::json()?;
                    writeln!(out, "{}", serde_json::to_string_pretty(&j)?)?;
                } else {
                    write!(out, "{}", eval::lecture::text()?)?;
                }
                return Ok(());
            }
            let figures = eval::Figures::load(profile.as_deref())?;
            let mut d = eval::evaluate(model, &figures)?;
            for (typed, unit) in args::take_bare() {
                d.note(format!(
                    "the bare number {typed} has no unit: read as {typed} {unit} (SI base unit)"
                ));
            }
            if *json {
                writeln!(out, "{}", serde_json::to_string_pretty(&d.to_json())?)?;
            } else {
                write!(out, "{}", d.to_text())?;
            }
        }
        Command::Run(a) => run::execute(a, out)?,
        Command::Kernel(a) => kernel_cmd::run(a, out)?,
        Command::Roofline(a) => roofline::run_roofline(a, out)?,
        Command::Mountain(a) => roofline::run_mountain(a, out)?,
        Command::Scaling(a) => scaling::run(a, out)?,
    }
    Ok(())
}
