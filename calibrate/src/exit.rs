//! How both binaries end when something outside their work goes wrong: a
//! bug ends in one line instead of a backtrace, and writing into a closed
//! pipe (`calibrate ... | head`) ends the process quietly, as Unix tools do.

/// Installs the panic hook, restores the default action of SIGPIPE, so
/// a write into a closed pipe ends the process without a message, and
/// makes an interrupt remove the temporary files of unfinished writes
/// ([`crate::atomic::remove_on_interrupt`]).
pub fn install() {
    // SAFETY: setting a signal's disposition to its default has no
    // preconditions; it happens before any thread is started.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::panic::set_hook(Box::new(|info| {
        if is_broken_pipe_message(&info.to_string()) {
            std::process::exit(0);
        }
        eprintln!(
            "error: internal error (please report): {}",
            info.to_string().replace('\n', " ")
        );
    }));
    crate::atomic::remove_on_interrupt();
}

/// True when `e` comes from writing into a closed pipe: the caller should
/// end quietly.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `print!` panics with "failed printing to stdout: Broken pipe" when
/// SIGPIPE is ignored (for instance under a parent that ignores it).
fn is_broken_pipe_message(msg: &str) -> bool {
    msg.contains("failed printing to stdout") && msg.contains("Broken pipe")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipes_are_recognised() {
        let e = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("writing the table");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("no such file")));
        assert!(is_broken_pipe_message(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(!is_broken_pipe_message("index out of bounds"));
    }
}
