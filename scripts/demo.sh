#!/usr/bin/env bash
# Sets up and runs the main job: build, then work the lecture's examples with
# `predict eval`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh

cargo build --release --workspace
bin=target/release

echo "== The lecture's worked examples (predict eval)"
$bin/predict eval alpha-beta --t0 2us --bandwidth 6.4GB/s --bytes 32KiB
$bin/predict eval assignment --n 4096 --p 64
$bin/predict eval stencil-scaling --n 4096 --p 512 --t0 2us --bandwidth 6.4GB/s \
  --update-time 2cycles --clock 3GHz --messages 1
$bin/predict eval roofline --peak-flops 768GFLOP/s --bandwidth 20GB/s --ai 0.15
$bin/predict eval binning --items 1e6 --global-lock-op 600ns --bucket-lock-op 290ns \
  --bandwidth 20GB/s --sort-op 1.1ns
