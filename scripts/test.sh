#!/usr/bin/env bash
# Sets up and runs every test: formatting, lints, the Rust test suites
# (release build: the microbenchmarks are exercised optimised).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release
# Two hosts in namespaces over a shaped link (root; skipped with a note elsewhere, fails under CI=true).
cargo test --release --workspace --test twohost -- --ignored --nocapture --test-threads=1
# Every notebook, top to bottom, on the release build the tests just made.
bash scripts/notebooks.sh
