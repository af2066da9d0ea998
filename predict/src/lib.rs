//! `predict`: evaluates the models with the work shown, and (in later
//! subcommands) runs real kernels against their predictions.

pub mod args;
pub mod chart;
pub mod cli;
pub mod eval;
pub mod kernel_cmd;
pub mod kernels;
pub mod loop_figures;
pub mod machine;
pub mod mountain;
pub mod mpi_stencil;
pub mod profiles;
pub mod report;
pub mod roofline;
pub mod run;
pub mod run_cmd;
pub mod scaling;

use std::fmt;

use cli::{Cli, Command};

/// An input the user must change; `main` exits with status 2 for it.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Exit status for an error: 2 when the input was at fault, 1 otherwise.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    let bad_input = e.chain().any(|c| {
        c.is::<BadInput>()
            || c.is::<models::ModelError>()
            || c.is::<models::units::UnitError>()
            || c.is::<models::profile::ProfileError>()
            || c.is::<models::kernel::DescriptionError>()
    });
    if bad_input {
        2
    } else {
        1
    }
}

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
        Command::Run(a) => run_cmd::run(a, out)?,
        Command::Kernel(a) => kernel_cmd::run(a, out)?,
        Command::RunGhostStencil(args) => run::execute(args, out)?,
        Command::Roofline(a) => roofline::run_roofline(a, out)?,
        Command::Mountain(a) => roofline::run_mountain(a, out)?,
        Command::Scaling(a) => scaling::run(a, out)?,
    }
    Ok(())
}
