//! `predict`: evaluates the models with the work shown, runs real kernels
//! against their predictions, draws Roofline and scaling charts and plans
//! strong scaling.

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

pub use error::{exit_code, BadInput};

/// Runs a parsed command, writing its report to `out`.
pub fn run(cli: &Cli, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    match &cli.command {
        Command::Eval {
            json,
            profile,
            model,
        } => {
            if matches!(model, eval::Model::Lecture) {
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
