//! Progress bars on stderr, drawn only when stderr is a terminal (so logs,
//! pipes and tests get clean output).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Makes one bar per benchmark.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    /// Bars shown iff stderr is a terminal.
    pub fn new() -> Self {
        Self {
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// A bar of `len` steps labelled `name` (hidden when disabled).
    pub fn bar(&self, name: &str, len: u64) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(name.to_string());
        bar
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}
