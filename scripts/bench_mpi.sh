#!/usr/bin/env bash
# Benchmark, not a test: the toolkit's MPI ping-pong against a plain C
# ping-pong (scripts/pingpong.c) built with mpicc from the same MPI, run
# side by side and alternating, then the blocking against the non-blocking
# ghost-row stencil.
#
# Both ping-pongs run the same plan: blocking MPI_Send/MPI_Recv between
# ranks 0 and 1, a warm-up batch, then SAMPLES samples of REPS round trips,
# one-way time = sample time / (2 REPS), median over the samples. Each round
# runs both programs (the order alternates from round to round, so a drift
# of the machine hits both alike); a round's ratio compares the two runs of
# that round, and the script prints the median ratio over the rounds and the
# ratio of each program's best round:
#   latency   = toolkit one-way time / C one-way time at 8 B     (target <= 1.10)
#   bandwidth = toolkit bandwidth   / C bandwidth   at 4 MiB     (target >= 0.95)
#
# Environment: ROUNDS (5), SAMPLES (30), LAT_REPS (5000), BW_REPS (20),
# MPIRUN_ARGS (extra mpirun options, e.g. "--mca btl tcp,self" or
# "--host a,b"), STENCIL_N ("64 256 1024"), STENCIL_ITERS (400), PROFILE
# (the machine profile for the stencil's model; default data/profile.json).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

ROUNDS=${ROUNDS:-5}
SAMPLES=${SAMPLES:-30}
LAT_BYTES=8
BW_BYTES=$((4 << 20))
LAT_REPS=${LAT_REPS:-5000}
BW_REPS=${BW_REPS:-20}
STENCIL_N=${STENCIL_N:-"64 256 1024"}
STENCIL_ITERS=${STENCIL_ITERS:-400}
read -r -a EXTRA <<< "${MPIRUN_ARGS:-}"
PROFILE_ARGS=()
if [[ -n "${PROFILE:-}" ]]; then PROFILE_ARGS=(--profile "$PROFILE"); fi

echo "== building (release)"
cargo build --release -p calibrate --example pingpong -p predict 2>&1 | tail -n 1
mkdir -p target/release
mpicc -O2 scripts/pingpong.c -o target/release/pingpong_c
RUST_PP=target/release/examples/pingpong
C_PP=target/release/pingpong_c
PREDICT=target/release/predict

# Median one-way time (s) printed by either program: one JSON line.
median_of() { sed -n 's/.*"one_way_median_s": *\([0-9.eE+-]*\).*/\1/p' | head -n 1; }

rust_point() { # bytes reps
  mpirun -np 2 "${EXTRA[@]}" "$RUST_PP" point --bytes "$1" --reps "$2" --samples "$SAMPLES" | median_of
}
c_point() { # bytes reps
  mpirun -np 2 "${EXTRA[@]}" "$C_PP" "$1" "$2" "$SAMPLES" | median_of
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

lat_ratios=()
bw_ratios=()
rust_lat=(); c_lat=(); rust_bw=(); c_bw=()
printf '\n== ping-pong, %s rounds, %s samples each, mpirun -np 2 %s\n' "$ROUNDS" "$SAMPLES" "${MPIRUN_ARGS:-}"
printf '%-6s %-14s %-14s %-8s %-14s %-14s %-8s\n' round "rust 8 B" "C 8 B" ratio "rust 4 MiB" "C 4 MiB" "bw ratio"
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then
    rl=$(rust_point $LAT_BYTES "$LAT_REPS"); cl=$(c_point $LAT_BYTES "$LAT_REPS")
    rb=$(rust_point $BW_BYTES "$BW_REPS"); cb=$(c_point $BW_BYTES "$BW_REPS")
  else
    cl=$(c_point $LAT_BYTES "$LAT_REPS"); rl=$(rust_point $LAT_BYTES "$LAT_REPS")
    cb=$(c_point $BW_BYTES "$BW_REPS"); rb=$(rust_point $BW_BYTES "$BW_REPS")
  fi
  lr=$(awk -v a="$rl" -v b="$cl" 'BEGIN {printf "%.4f", a / b}')
  br=$(awk -v a="$rb" -v b="$cb" 'BEGIN {printf "%.4f", b / a}')
  lat_ratios+=("$lr")
  bw_ratios+=("$br")
  rust_lat+=("$rl"); c_lat+=("$cl"); rust_bw+=("$rb"); c_bw+=("$cb")
  printf '%-6s %-14s %-14s %-8s %-14s %-14s %-8s\n' "$r" \
    "$(awk -v t="$rl" 'BEGIN {printf "%.1f ns", t * 1e9}')" \
    "$(awk -v t="$cl" 'BEGIN {printf "%.1f ns", t * 1e9}')" "$lr" \
    "$(awk -v t="$rb" -v n="$BW_BYTES" 'BEGIN {printf "%.2f GB/s", n / t / 1e9}')" \
    "$(awk -v t="$cb" -v n="$BW_BYTES" 'BEGIN {printf "%.2f GB/s", n / t / 1e9}')" "$br"
done
lat=$(printf '%s\n' "${lat_ratios[@]}" | median)
bw=$(printf '%s\n' "${bw_ratios[@]}" | median)
verdict() { awk -v x="$1" -v lim="$2" -v dir="$3" 'BEGIN {ok = (dir == "le") ? (x <= lim) : (x >= lim); print ok ? "meets" : "MISSES"}'; }
printf 'latency ratio (toolkit/C time, 8 B):          median of rounds %s  (target <= 1.10: %s)\n' "$lat" "$(verdict "$lat" 1.10 le)"
printf 'bandwidth ratio (toolkit/C bandwidth, 4 MiB): median of rounds %s  (target >= 0.95: %s)\n' "$bw" "$(verdict "$bw" 0.95 ge)"
# Best of the rounds for each program: robust to a machine that switches
# between a fast and a slow state from one run to the next.
best() { printf '%s\n' "$@" | sort -g | head -n 1; }
lat_best=$(awk -v a="$(best "${rust_lat[@]}")" -v b="$(best "${c_lat[@]}")" 'BEGIN {printf "%.4f", a / b}')
bw_best=$(awk -v a="$(best "${rust_bw[@]}")" -v b="$(best "${c_bw[@]}")" 'BEGIN {printf "%.4f", b / a}')
printf 'latency ratio, best round of each:            %s  (%s)\n' "$lat_best" "$(verdict "$lat_best" 1.10 le)"
printf 'bandwidth ratio, best round of each:          %s  (%s)\n' "$bw_best" "$(verdict "$bw_best" 0.95 ge)"

printf '\n== ghost-row stencil, blocking against non-blocking, mpirun -np 2 %s\n' "${MPIRUN_ARGS:-}"
for n in $STENCIL_N; do
  line=$(mpirun -np 2 "${EXTRA[@]}" "$PREDICT" run --kernel ghost-stencil --n "$n" \
    --iters "$STENCIL_ITERS" --variant all --no-record "${PROFILE_ARGS[@]}" \
    | grep 'speed-up nonblocking over blocking' || true)
  printf 'N = %-6s %s\n' "$n" "${line#"${line%%[![:space:]]*}"}"
done
