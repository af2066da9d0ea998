//! `calibrate`: see the library docs. This file only wires the modules:
//! parse, run, and turn any error into one line on stderr.

use std::process::ExitCode;

use calibrate::cli::{clap_error_line, Cli, Command};
use calibrate::UsageError;
use clap::Parser;

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace; a closed pipe
    // ends quietly.
    calibrate::exit::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            return match clap_error_line(&e) {
                Some(line) => fail(&line, 2),
                None => {
                    let _ = e.print();
                    ExitCode::SUCCESS
                }
            }
        }
    };
    if let Err(line) = calibrate::kernels::Isa::cap() {
        return fail(line, 2);
    }
    let result = match &cli.command {
        Some(Command::Point(args)) => calibrate::point::run(args),
        None => calibrate::run::run(&cli.run),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if calibrate::exit::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => fail(&format!("{e:#}"), if e.is::<UsageError>() { 2 } else { 1 }),
    }
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("error: {}", message.replace('\n', " "));
    ExitCode::from(code)
}
