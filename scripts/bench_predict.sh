#!/usr/bin/env bash
# Model accuracy and kernel speed of `predict run` on this machine: calibrates
# a fresh profile, runs every kernel against it, and prints
#   - the median and maximum |rel_error| over all kernel variants
#     (targets: median <= 15%, none beyond 35%);
#   - the bandwidth-bound kernels' bytes/s against the profile's STREAM
#     bandwidth for the same mix, level and threads (target >= 0.9), and the
#     matrix multiply's FLOP/s against the profile's peak (target >= 0.5);
#   - the wall time of a default `predict run` (target <= 60 s).
# Not a test: the figures depend on the machine and how busy it is.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build --release -q -p calibrate -p predict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

target/release/calibrate --out "$work/profile.json" > /dev/null
start=$(date +%s.%N)
target/release/predict run --profile "$work/profile.json" --json --no-record > "$work/records.json"
end=$(date +%s.%N)

python3 - "$work/records.json" "$start" "$end" <<'PY'
import json, statistics, sys
recs = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
main = [r for r in recs if r["rel_error"] is not None and "+" not in r["variant"]]
print(f"{'kernel':<14} {'variant':<26} {'thr':>3} {'measured':>11} {'predicted':>11} {'error':>7}  binding")
for r in main:
    print(f"{r['kernel']:<14} {r['variant']:<26} {r['threads']:>3} {r['measured_s']*1e3:>9.3f}ms "
          f"{r['predicted_s']*1e3:>9.3f}ms {100*r['rel_error']:>+6.0f}%  {r['binding']}")
errs = [abs(r["rel_error"]) for r in main]
if errs:
    print(f"\nmodel accuracy: median |rel_error| = {100*statistics.median(errs):.1f}% (target <= 15%), "
          f"max = {100*max(errs):.1f}% (target <= 35%) over {len(errs)} variants")
print("\nkernel speed against the profile (measured rate / the rate the prediction assumed):")
for r in main:
    if r["binding"] in ("memory bandwidth", "compute"):
        ratio = r["predicted_s"] / r["measured_s"]
        target = 0.9 if r["binding"] == "memory bandwidth" else 0.5
        print(f"  {r['kernel']:<14} {r['variant']:<26} {r['threads']} thr: {ratio:.2f}x of the profile's "
              f"{'bandwidth' if r['binding'] == 'memory bandwidth' else 'peak'} (target >= {target})")
print(f"\ndefault `predict run` wall time: {wall:.1f} s (target <= 60 s)")
PY
