#!/usr/bin/env bash
# Accuracy of `predict kernel` on loops the toolkit does not contain: each
# loop of scripts/loops.c (plain C, gcc -O3 -march=native -fopenmp) is
# timed, then described to `predict kernel` with its measured time, on 1
# and all threads, at a cache size (1 MiB in all, the largest private cache
# of one core on some machines, a shared one's slice on others) and a DRAM
# size, the latter twice: on the 4 KiB pages of a plain allocation (DRAM)
# and on huge pages (DRAM-huge: HUGE_PAGES=1 for the C program,
# --huge-pages for the description). Each case is measured ROUNDS times (default 3), interleaved with
# the other cases, and its error is the median round's: a shared machine can
# take a CPU from one run for seconds, and one round must not stand for the
# case. Prints one row per case and round, then each case's median error
# with its range, and the median and largest |error| over the cases; the
# same for the paired prediction (`predict kernel --paired`, run right
# after the loop: the profile's roofs scaled by the STREAM and peak figures
# re-measured then), which takes out a machine that changed since calibrate.
#
#   ROUNDS=3 bash scripts/bench_kernel.sh [--profile FILE|NAME] [--calibrate] [--save FILE]
#
# --calibrate first runs `calibrate --quick` into a fresh profile, right
# before the loops (on a shared machine the figures drift within minutes).
# --save writes the rows (every round) as CSV; the README's table of a CPU
# family reads data/measurements/kernel-accuracy/FAMILY.csv (FAMILY as
# scripts/env.sh's cpu_family names it, e.g. intel-avx512).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

profile=data/profile.json
save=""
fresh=0
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="$2"; shift 2 ;;
    --save) save="$2"; shift 2 ;;
    --calibrate) fresh=1; shift ;;
    *) echo "bench_kernel: unknown option $1" >&2; exit 2 ;;
  esac
done

cargo build --release -q -p predict -p calibrate
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Under PERFMODEL_MAX_ISA the C loops keep to the cap as calibrate does.
# shellcheck disable=SC2046
gcc -O3 -march=native $(narrow_cflags) -fopenmp scripts/loops.c -o "$work/loops"
if [ "$fresh" = 1 ]; then
  profile="$work/profile.json"
  target/release/calibrate --quick --out "$profile" >/dev/null
fi
cpus=$(nproc)
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); profile: $profile"

# A vectorised reduction keeps one vector accumulator: a loop-carried chain
# of one add per vector of f64 lanes (8 with AVX-512, 4 with AVX2, 2 with SSE2), which
# the descriptions give as --chain 1/lanes.
case "$(cpu_family)" in
  *-avx512) lanes=8 ;;
  *-avx2 | *-capped-avx2) lanes=4 ;;
  *) lanes=2 ;;  # SSE2
esac
vchain=$(python3 -c "print(1/$lanes)")
# poly16's dependent steps: 16 FMAs, or 16 multiplies and 16 adds where the
# build has no FMA.
polyspan=16
[ "${PERFMODEL_MAX_ISA:-}" = scalar ] && polyspan=32

# name | loop | n (cache) | n (DRAM) | region bytes (cache, DRAM; gather only) | description
# (tiled: rows of 8192 doubles, so its cache size has 8 rows and describes
# its runs as the C loop makes them up to 4 threads)
cases=(
  "sum-chain|sum-chain|131072|33554432|0 0|--array x:load:8 --flops 1 --chain 1"
  "sum|sum|131072|33554432|0 0|--array x:load:8 --flops 1 --chain VCHAIN"
  "axpy|axpy|65536|16777216|0 0|--array y:update:8 --array x:load:8 --flops 2"
  "stride8|stride8|16384|4194304|0 0|--array x:load:8:stride=64 --flops 1 --chain VCHAIN"
  "stride64|stride64|2048|524288|0 0|--array x:load:8:stride=512 --flops 1 --chain VCHAIN"
  "gather|gather|131072|16777216|524288 268435456|--array idx:load:4 --array x:load:8:random=REGION --flops 1 --chain VCHAIN"
  "tiled|tiled|65536|16777216|0 0|--array y:update:8 --array x:load:8 --flops 2 --segment 128 --segment-stride 8192"
  "triad|triad|32768|16777216|0 0|--array y:store:8 --array x:load:8 --array z:load:8 --flops 2"
  "poly16|poly16|65536|16777216|0 0|--array x:load:8 --array y:store:8 --flops 32 --span POLYSPAN"
)

rows="$work/rows.csv"
rounds=${ROUNDS:-3}
echo "round,loop,size,threads,n,measured_s,predicted_s,rel_error,binding,level,paired_s,paired_rel_error" > "$rows"
printf '%5s %-10s %-9s %3s %10s %12s %12s %8s %8s  %s\n' round loop size thr n measured predicted error paired binding
for round in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    IFS='|' read -r name loop n_cache n_dram regions desc <<< "$c"
    read -r r_cache r_dram <<< "$regions"
    for size in cache DRAM DRAM-huge; do
      if [ "$size" = cache ]; then n=$n_cache; region=$r_cache; else n=$n_dram; region=$r_dram; fi
      huge=0 huge_flag=""
      if [ "$size" = DRAM-huge ]; then huge=1 huge_flag=--huge-pages; fi
      for threads in 1 "$cpus"; do
        measured=$(HUGE_PAGES=$huge OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores \
          "$work/loops" "$loop" "$n" "$region" | awk '{print $4}')
        # shellcheck disable=SC2046
        json=$(target/release/predict kernel --profile "$profile" --name "$name" \
          --n "$n" --threads "$threads" $(echo "$desc" | sed "s/REGION/$region/; s/VCHAIN/$vchain/; s/POLYSPAN/$polyspan/") \
          $huge_flag --time "${measured}s" --paired --json 2>/dev/null)
        line=$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
p = d["paired"]
print("{},{},{},{},{},{}".format(d["predicted_s"], d["rel_error"], d["binding"], d["level"],
                                 p["predicted_s"], p["rel_error"]))
' "$json")
        IFS=',' read -r predicted err binding level paired perr <<< "$line"
        echo "$round,$name,$size,$threads,$n,$measured,$predicted,$err,$binding,$level,$paired,$perr" >> "$rows"
        printf '%5s %-10s %-9s %3s %10s %12.4g %12.4g %+7.1f%% %+7.1f%%  %s (%s)\n' "$round" "$name" "$size" "$threads" "$n" \
          "$measured" "$predicted" "$(python3 -c "print(100*$err)")" "$(python3 -c "print(100*$perr)")" "$binding" "$level"
      done
    done
  done
done
# The profile's warnings, once (each prediction would repeat them).
target/release/predict kernel --profile "$profile" --n "$cpus" --array x:load:8 --threads "$cpus" \
  >/dev/null 2>"$work/warnings" || true
sort -u "$work/warnings" | sed 's/^/note: /'
python3 - "$rows" <<'EOF'
import csv, statistics, sys
from collections import defaultdict
cases, paired = defaultdict(list), defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    key = (r["loop"], r["size"], r["threads"])
    cases[key].append(float(r["rel_error"]))
    paired[key].append(float(r["paired_rel_error"]))
rounds = max(len(v) for v in cases.values())
print(f"\n{'loop':10} {'size':9} {'thr':>3}  median error  [range over {rounds} rounds]   paired  [range]")
medians = {k: statistics.median(v) for k, v in cases.items()}
paired_medians = {k: statistics.median(v) for k, v in paired.items()}
for key, errs in cases.items():
    p = paired[key]
    print(f"{key[0]:10} {key[1]:9} {key[2]:>3}  {100 * medians[key]:+11.1f}%  "
          f"[{100 * min(errs):+.1f}%, {100 * max(errs):+.1f}%]   {100 * paired_medians[key]:+6.1f}%  "
          f"[{100 * min(p):+.1f}%, {100 * max(p):+.1f}%]")
for label, m in (("profile-only", medians), ("paired", paired_medians)):
    absolute = {k: abs(v) for k, v in m.items()}
    worst = max(absolute, key=absolute.get)
    print(f"{label}: {len(absolute)} cases, median |error| {100 * statistics.median(absolute.values()):.1f}% "
          f"(target <= 20%), largest {100 * absolute[worst]:.1f}% ({' '.join(worst)} thr; target <= 35%)")
EOF
if [ -n "$save" ]; then cp "$rows" "$save"; echo "rows written to $save"; fi
