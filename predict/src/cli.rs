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
        #[command(subcommand)]
        model: Model,
    },
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

/// A clap error as one line: its first paragraph with the lines joined, so
/// "required arguments were not provided:" keeps the names that follow it.
pub fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let para: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    if para.is_empty() {
        "error: invalid arguments".into()
    } else {
        para.join(" ")
    }
}
