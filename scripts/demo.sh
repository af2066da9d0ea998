#!/usr/bin/env bash
# Sets up and runs the main job: calibrate this machine (node and MPI
# network), run the kernels against the model, draw the charts, and work the
# lecture's examples, then execute the notebooks. Charts and tables go to
# results/ (override with RESULTS=dir); the profile to data/profile.json,
# the kernel records to data/measurements/records.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
out=${RESULTS:-results}
mkdir -p "$out"

cargo build --release --workspace
bin=target/release

echo "== 1. Calibrate this node, then the network between two MPI ranks"
$bin/calibrate --out data/profile.json
mpirun -np 2 $bin/calibrate --only pingpong --out data/profile.json

echo "== 2. The lecture's kernels against the model"
$bin/predict run --profile data/profile.json --csv "$out/kernels.csv" | tee "$out/kernels.txt"
mpirun -np 2 $bin/predict run --kernel ghost-stencil --n 2048 --iters 100 \
  --profile data/profile.json --csv "$out/ghost-stencil.csv" | tee "$out/ghost-stencil.txt"

echo "== 3. Charts (SVG, PNG, PDF) and their data (CSV)"
for ext in svg png pdf; do
  $bin/predict roofline --profile data/profile.json --measurements data/measurements \
    --out "$out/roofline.$ext" --csv "$out/roofline.csv" > /dev/null
done
$bin/predict mountain --profile data/profile.json --out "$out/mountain.png" --csv "$out/mountain.csv" > /dev/null
$bin/predict scaling --profile data/profile.json --network-profile textbook \
  --network-profile infiniband-hdr --network-profile ethernet-10g \
  --out "$out/scaling.png" --csv "$out/scaling.csv" | tee "$out/scaling.txt"

echo "== 4. The lecture's worked examples on its textbook machine (predict eval)"
$bin/predict eval --profile textbook alpha-beta --bytes 32KiB
$bin/predict eval assignment --n 4096 --p 64
$bin/predict eval --profile textbook stencil-scaling --n 4096 --p 512 \
  --update-time 2cycles
$bin/predict eval --profile textbook roofline --ai 0.15 --precision f32
$bin/predict eval --profile textbook binning --items 1e6 --bucket-lock-op 290ns --sort-op 1.1ns

echo "== 5. The notebooks, executed (results/notebooks/)"
bash scripts/notebooks.sh
echo "Charts and tables are in $out/"
