use std::process::ExitCode;

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace; a closed pipe
    // ends quietly.
    calibrate::harness::exit::install();
    let cli = match predict::cli::parse() {
        Ok(cli) => cli,
        Err(e) => {
            return match calibrate::harness::clap_error_line(&e) {
                Some(line) => {
                    eprintln!("error: {line}");
                    ExitCode::from(2)
                }
                // --help and --version succeed; a missing subcommand shows
                // the help and fails.
                None => {
                    let _ = e.print();
                    ExitCode::from(if e.use_stderr() { 2 } else { 0 })
                }
            };
        }
    };
    if let Err(line) = calibrate::harness::kernels::Isa::cap() {
        eprintln!("error: {line}");
        return ExitCode::from(2);
    }
    match predict::run(&cli, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if calibrate::harness::exit::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(predict::exit_code(&e) as u8)
        }
    }
}
