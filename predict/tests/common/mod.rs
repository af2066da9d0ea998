//! Helpers the integration tests share: running the binary, the reference
//! files, and the bad-input contract.
// Each test binary uses its own subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `predict` binary.
pub fn predict(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_predict"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs the `predict` binary in the crate's folder, so that relative
/// paths (`tests/reference/...`) name the same files wherever the
/// repository is checked out, and outputs that record them do not change.
pub fn predict_here(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_predict"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// A file of `tests/reference/`.
pub fn reference(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(name)
}

/// Compares `got` with the reference file, or rewrites it when
/// `PREDICT_BLESS` is set.
pub fn check_reference(name: &str, got: &[u8]) {
    let path = reference(name);
    if std::env::var_os("PREDICT_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; create it with PREDICT_BLESS=1", path.display()));
    if want != got {
        let dump = std::env::temp_dir().join(format!("got-{name}"));
        std::fs::write(&dump, got).unwrap();
        panic!(
            "{name} differs from the reference (new output in {}); if the change is intended, rerun with PREDICT_BLESS=1",
            dump.display()
        );
    }
}

/// One line on stderr naming `needle`, exit status 2.
pub fn assert_bad(args: &[&str], needle: &str) {
    let o = predict(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: '{err}' lacks '{needle}'");
}
