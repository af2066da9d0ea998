//! The command line of `predict`.

use clap::{Parser, Subcommand};

use crate::eval::Model;

/// Predict how kernels run from a machine profile, and check the predictions.
#[derive(Debug, Parser)]
#[command(name = "predict", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate a formula of the lecture with the work shown.
    Eval {
        /// Print one JSON object instead of the worked text.
        #[arg(long, global = true)]
        json: bool,
        /// Take the machine figures left out (T0, B, bandwidth, latency,
        /// peak, t_crit, clock) from this profile: a file, or a name under
        /// data/profiles/ such as `textbook`, the lecture's machine.
        #[arg(long, global = true, value_name = "FILE|NAME")]
        profile: Option<std::path::PathBuf>,
        #[command(subcommand)]
        model: Model,
    },
    /// Run the lecture's kernels and compare them with the model's predictions.
    /// `--kernel ghost-stencil` runs the ghost-row stencil across the MPI
    /// ranks of `mpirun` instead.
    Run(crate::run::RunArgs),
    /// Your own loop, described by its work (arrays, flops, chains):
    /// its time from the profile with every term shown, checked against a
    /// time you measured.
    Kernel(crate::kernel_cmd::KernelArgs),
    /// Roofline chart of the calibrated machine with the measured kernels
    /// on it (§4.4), as SVG/PNG/PDF and CSV/JSON.
    Roofline(crate::roofline::RooflineArgs),
    /// Latency and bandwidth against the working set, with the detected
    /// memory levels marked (the memory mountain, §2.6).
    Mountain(crate::roofline::MountainArgs),
    /// Speed-up and efficiency against P for the ghost-row stencil or
    /// binning, with Monte Carlo error bars and the knees; or a fit of
    /// your own runs (--fit runs.csv).
    Scaling(Box<crate::scaling::ScalingArgs>),
}

/// Parses the process arguments. Values may start with a hyphen everywhere
/// (so `--serial-fraction -0.1` and `--t0 -2us` reach the range checks and
/// get their message instead of "unexpected argument").
pub fn parse() -> Result<Cli, clap::Error> {
    parse_from(std::env::args_os())
}

/// [`parse`] over given arguments.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    let matches = allow_negatives(Cli::command()).try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

fn allow_negatives(cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names.iter().fold(
        cmd.allow_negative_numbers(true).allow_hyphen_values(true),
        |c, name| c.mut_subcommand(name, allow_negatives),
    )
}
