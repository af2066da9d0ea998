#!/usr/bin/env bash
# Benchmark of calibrate against reference tools, side by side (not a test).
#
# Builds calibrate in release mode and a plain C pointer chase
# (scripts/chase.c), then, ALTERNATING the two tools ROUNDS times on the
# same threads, working sets and page policy, compares:
#   - STREAM triad a = b + s*c, DRAM-sized (DRAM_SIZE total) and L2-sized
#     (half the OS-reported L2 per thread), against likwid-bench stream_<isa>
#     (the same 3-stream kernel, 24 B per element, no write-allocate counted);
#     likwid-bench's triad_<isa> is a 4-stream kernel (a = b*c + d, 32 B)
#     and is shown for reference only;
#   - the update (a = s*a, 16 B) and store (a = s, 8 B) kernels, DRAM-sized,
#     against likwid-bench update_<isa> and store_<isa> (same byte counts);
#   - the read-only load kernel in L1 (16 kB, one thread and all), a sum of
#     the array into independent vector accumulators, against likwid-bench
#     sum_<isa> (the same sum, 8 B per element): the L1 read bandwidth the
#     model charges loads that hit L1 at, which loops add or multiply as
#     they load; likwid-bench's load_<isa> (the loads alone, nothing done
#     with them) is shown for reference only;
#   - peak f64 FLOP/s against likwid-bench peakflops_<isa> on 32 kB;
#   - pointer-chase latency at the DRAM size and in L1 (16 KiB) against
#     scripts/chase.c, with 4 KiB pages and with huge pages;
#   - iterations with a chain inside (Horner's scheme 16, 32 and 64 steps
#     deep, in L1) against scripts/horner.c built for this CPU (and for
#     PERFMODEL_MAX_ISA's cap, as calibrate's kernels keep to it);
# and prints calibrate / reference as the median of the per-round ratios,
# with their range. Then it times
# `calibrate --quick` and the full run with /usr/bin/time -v (wall time,
# peak RSS against the largest working set any benchmark allocated and
# against the most the run holds at once: the STREAM windows' knee keeps
# one thread's and all threads' DRAM working sets together).
# Last, the repeatability section runs REPEAT_RUNS (5) `calibrate --quick`
# back to back and prints, for each summary figure, max/min over the runs
# (targets: <= 1.10 for one-thread figures, <= 1.15 for all-thread ones),
# how many runs left it unreliable, the disturbed batches, and the wall
# time of each run (target <= 15 s). After each run likwid-bench's triad
# (one thread and all) and scripts/c2c.c measure the host again, so the
# triads and c2c show the reference's own max/min over the same minutes
# beside calibrate's. With KEEP=DIR the five profiles and the reference
# figures are copied to DIR, to read a figure that moved.
#
# Usage: scripts/bench_calibrate.sh            (ROUNDS=7 DRAM_SIZE=1GB)
#        scripts/bench_calibrate.sh repeat     (the repeatability section only)
# Needs: likwid (likwid-bench), gcc, jq, /usr/bin/time (the repeatability
# section alone needs only jq, and shows the references when likwid-bench
# and gcc are there). Run on a quiet machine: a busy host still
# moves the figures, and the repeatability section says how much.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

ROUNDS=${ROUNDS:-7}
DRAM_SIZE=${DRAM_SIZE:-1GB}
THREADS=${THREADS:-$(nproc)}
REPEAT_RUNS=${REPEAT_RUNS:-5}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CAL=target/release/calibrate

# The widest ISA likwid-bench has kernels for.
if grep -qw avx512f /proc/cpuinfo; then ISA=avx512_fma
elif grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then ISA=avx_fma
else ISA=sse; fi
STREAM_K=stream_$ISA
TRIAD4_K=triad_$ISA
PEAK_K=peakflops_$ISA
[ "$ISA" = sse ] && PEAK_K=peakflops_sse
# likwid's update and store kernels carry no _fma suffix.
UPDATE_K=update_${ISA%_fma}
STORE_K=store_${ISA%_fma}
LOAD_K=load_${ISA%_fma}
SUM_K=sum_${ISA%_fma}

likwid_bw() { likwid-bench -t "$1" -W "N:$2:$3" 2>/dev/null | awk '/^MByte\/s:/ { print $2 * 1e6 }'; }
likwid_flops() { likwid-bench -t "$1" -W "N:$2:$3" 2>/dev/null | awk '/^MFlops\/s:/ { print $2 * 1e6 }'; }

# reference_figures PROFILE: the host's own drift, measured right after a
# calibrate run by the reference tools: likwid-bench's triad at the DRAM
# size the profile used, on one thread and on all, and scripts/c2c.c's
# one-way core-to-core latency. Prints "key value" lines for what is there.
reference_figures() {
    local kb
    kb=$(jq '.sections.stream.dram_bytes // empty | . / 1000 | floor' "$1")
    if command -v likwid-bench >/dev/null && [ -n "$kb" ]; then
        echo "stream_triad_1t_Bps $(likwid_bw "$STREAM_K" "${kb}kB" 1)"
        echo "stream_triad_Bps $(likwid_bw "$STREAM_K" "${kb}kB" "$THREADS")"
    fi
    if [ -x "$OUT/c2c" ] && [ "$THREADS" -ge 2 ]; then
        echo "core_to_core_latency_s $("$OUT/c2c" | awk '{ print $1 * 1e-9 }')"
    fi
}

# repeatability: REPEAT_RUNS `calibrate --quick` back to back; per summary
# figure max/min over the runs that gave it (an unreliable figure is null,
# and counted instead), against its target. After each run the reference
# tools measure the triads and c2c again (reference_figures): their max/min
# is the host's drift over the same minutes, and the max/min of calibrate /
# reference per run says whether calibrate followed the host or moved on
# its own (near 1: it followed).
repeatability() {
    local i t0 t1 times=() load
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    command -v gcc >/dev/null && gcc -O2 -pthread -o "$OUT/c2c" scripts/c2c.c
    for i in $(seq "$REPEAT_RUNS"); do
        t0=$(date +%s.%N)
        "$CAL" --quick --out "$OUT/repeat-$i.json" >/dev/null 2>&1
        t1=$(date +%s.%N)
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')")
        reference_figures "$OUT/repeat-$i.json" >"$OUT/ref-$i.txt"
        if [ -n "${KEEP:-}" ]; then
            mkdir -p "$KEEP" && cp "$OUT/repeat-$i.json" "$OUT/ref-$i.txt" "$KEEP/"
        fi
    done
    echo "Repeatability: $REPEAT_RUNS x calibrate --quick on $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo) (load average before: $load, after: $(cut -d' ' -f1-3 /proc/loadavg))"
    echo "reference: likwid-bench $STREAM_K at the profile's DRAM size, scripts/c2c.c; cal/ref: max/min of calibrate / reference per run"
    printf '%-24s %-4s %12s %12s %8s %7s %11s %10s %9s %8s\n' figure kind min max max/min target unreliable disturbed reference cal/ref
    local key kind target vals n lo hi r unrel dist verdict refs ref_r track
    for key in stream_triad_1t_Bps peak_flops_f64_1t l1_latency_s dram_latency_s \
               stream_triad_Bps peak_flops_f64 core_to_core_latency_s t_crit_s; do
        case $key in *_1t|*_1t_*|l1_*|dram_*) kind=1t; target=1.10 ;; *) kind=all; target=1.15 ;; esac
        vals=$(for i in $(seq "$REPEAT_RUNS"); do jq -r ".summary.$key // empty" "$OUT/repeat-$i.json"; done)
        unrel=$(for i in $(seq "$REPEAT_RUNS"); do jq -r ".trust.$key.unreliable // empty | \"x\"" "$OUT/repeat-$i.json"; done | grep -c x || true)
        dist=$(for i in $(seq "$REPEAT_RUNS"); do jq -r ".trust.$key.disturbed_batches // 0" "$OUT/repeat-$i.json"; done | awk '{ s += $1 } END { print s + 0 }')
        n=$(echo "$vals" | grep -c . || true)
        if [ "$n" -lt 2 ]; then
            printf '%-24s %-4s %12s %12s %8s %7s %8s/%-2s %10s\n' "$key" "$kind" - - - "$target" "$unrel" "$REPEAT_RUNS" "$dist"
            continue
        fi
        lo=$(echo "$vals" | sort -g | head -1); hi=$(echo "$vals" | sort -g | tail -1)
        r=$(awk -v a="$hi" -v b="$lo" 'BEGIN { printf "%.3f", a / b }')
        verdict=$(awk -v r="$r" -v t="$target" 'BEGIN { print (r <= t) ? "ok" : "MISSED" }')
        # Pairs "calibrate reference" of the runs where both gave a figure.
        refs=$(for i in $(seq "$REPEAT_RUNS"); do
            paste -d' ' <(jq -r ".summary.$key // empty" "$OUT/repeat-$i.json") \
                <(awk -v k="$key" '$1 == k && $2 != "" { print $2 }' "$OUT/ref-$i.txt")
        done | awk 'NF == 2')
        ref_r=-; track=-
        if [ "$(echo "$refs" | grep -c . || true)" -ge 2 ]; then
            ref_r=$(echo "$refs" | awk 'NR == 1 || $2 < lo { lo = $2 } NR == 1 || $2 > hi { hi = $2 } END { printf "%.3f", hi / lo }')
            track=$(echo "$refs" | awk '{ q = $1 / $2 } NR == 1 || q < lo { lo = q } NR == 1 || q > hi { hi = q } END { printf "%.3f", hi / lo }')
        fi
        printf '%-24s %-4s %12.4g %12.4g %8s %7s %8s/%-2s %10s %9s %8s  %s\n' "$key" "$kind" "$lo" "$hi" "$r" "$target" "$unrel" "$REPEAT_RUNS" "$dist" "$ref_r" "$track" "$verdict"
    done
    echo "calibrate --quick wall time per run: ${times[*]} s (target <= 15 s)"
}

if [ "${1:-}" = repeat ]; then
    command -v jq >/dev/null || { echo "error: jq is needed (apt-get install jq)" >&2; exit 2; }
    cargo build --release -p calibrate >&2
    repeatability
    exit 0
fi

for tool in likwid-bench gcc jq /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed (apt-get install likwid gcc jq time)" >&2; exit 2; }
done

cargo build --release -p calibrate >&2
gcc -O2 -o "$OUT/chase" scripts/chase.c
# calibrate's span runs the widest set allowed: 512-bit vectors where that is
# AVX-512 (which gcc's tuning for some CPUs would avoid), one lane under a
# scalar cap.
narrow=$(narrow_cflags)
case "$(cpu_family)" in
  *-avx512) narrow+=" -mprefer-vector-width=512" ;;
  *-capped-scalar | *-scalar) narrow+=" -fno-tree-vectorize" ;;
esac
for depth in 16 32 64; do
    # shellcheck disable=SC2086
    gcc -O3 -march=native $narrow -DDEPTH=$depth -o "$OUT/horner-$depth" scripts/horner.c
done


# DRAM working set as calibrate sizes it (quick latency sweep), and the L2
# size the OS reports (the L2 reading of a curve is less stable on a busy
# host; any working set well inside L2 serves the comparison).
"$CAL" --only latency --quick --out "$OUT/levels.json" >/dev/null
L2=$(awk '{ s = $1 + 0; if ($1 ~ /K$/) s *= 1024; if ($1 ~ /M$/) s *= 1048576; print s }' \
    /sys/devices/system/cpu/cpu0/cache/index2/size 2>/dev/null || echo 524288)
# Half the L2 per thread, in likwid's decimal kB.
L2_KB=$(awk -v l2="$L2" -v t="$THREADS" 'BEGIN { printf "%d", l2 / 2 * t / 1000 }')

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
si() { awk -v v="$1" -v u="$2" 'BEGIN { s = ""; if (v >= 1e9) { v /= 1e9; s = "G" } else if (v >= 1e6) { v /= 1e6; s = "M" } else if (v < 1e-6) { v *= 1e9; s = "n" }; printf "%.3g %s%s", v, s, u }'; }

cal_point() { "$CAL" point "$@" --json | jq '.value'; }

# compare NAME UNIT TARGET "calibrate command" "reference command"
# Runs the two commands alternately ROUNDS times. The ratio is the median of
# the per-round ratios (each pair measured back to back, so slow drifts of a
# shared host cancel), with their range; the medians of each tool are shown.
printf '%-44s %12s %12s %7s %15s  %s\n' "figure" "calibrate" "reference" "ratio" "range" "target"
compare() {
    local name=$1 unit=$2 target=$3 a=$4 b=$5
    : >"$OUT/a"; : >"$OUT/b"; : >"$OUT/r"
    for _ in $(seq "$ROUNDS"); do
        local x y
        x=$(eval "$a"); y=$(eval "$b")
        if [ -z "$x" ] || [ -z "$y" ]; then
            printf '%-44s %s\n' "$name" "n/a (a tool gave no figure)"
            return
        fi
        echo "$x" >>"$OUT/a"; echo "$y" >>"$OUT/b"; ratio "$x" "$y" >>"$OUT/r"; echo >>"$OUT/r"
    done
    local ma mb mr lo hi
    ma=$(median <"$OUT/a"); mb=$(median <"$OUT/b"); mr=$(grep . "$OUT/r" | median)
    lo=$(grep . "$OUT/r" | sort -g | head -1); hi=$(grep . "$OUT/r" | sort -g | tail -1)
    printf '%-44s %12s %12s %7.3f %15s  %s\n' "$name" "$(si "$ma" "$unit")" "$(si "$mb" "$unit")" "$mr" "[$lo, $hi]" "$target"
}

compare "triad DRAM $DRAM_SIZE ${THREADS}t vs $STREAM_K" B/s ">= 0.95" \
    "cal_point triad --size $DRAM_SIZE --threads $THREADS --pages small" \
    "likwid_bw $STREAM_K $DRAM_SIZE $THREADS"
compare "triad DRAM $DRAM_SIZE 1t vs $STREAM_K" B/s ">= 0.95" \
    "cal_point triad --size $DRAM_SIZE --threads 1 --pages small" \
    "likwid_bw $STREAM_K $DRAM_SIZE 1"
compare "triad L2 ${L2_KB}kB ${THREADS}t vs $STREAM_K" B/s ">= 0.95" \
    "cal_point triad --size ${L2_KB}kB --threads $THREADS --pages small" \
    "likwid_bw $STREAM_K ${L2_KB}kB $THREADS"
compare "update DRAM $DRAM_SIZE ${THREADS}t vs $UPDATE_K" B/s ">= 0.95" \
    "cal_point update --size $DRAM_SIZE --threads $THREADS --pages small" \
    "likwid_bw $UPDATE_K $DRAM_SIZE $THREADS"
compare "store DRAM $DRAM_SIZE ${THREADS}t vs $STORE_K" B/s ">= 0.95" \
    "cal_point store --size $DRAM_SIZE --threads $THREADS --pages small" \
    "likwid_bw $STORE_K $DRAM_SIZE $THREADS"
for t in 1 "$THREADS"; do
    compare "load L1 16kB ${t}t vs $SUM_K" B/s ">= 0.95" \
        "cal_point load --size $((16 * 1024 * t)) --threads $t --pages small" \
        "likwid_bw $SUM_K $((16 * t))kB $t"
    compare "(info) load L1 16kB ${t}t vs loads alone $LOAD_K" B/s "-" \
        "cal_point load --size $((16 * 1024 * t)) --threads $t --pages small" \
        "likwid_bw $LOAD_K $((16 * t))kB $t"
done
compare "(info) triad DRAM ${THREADS}t vs 4-stream $TRIAD4_K" B/s "-" \
    "cal_point triad --size $DRAM_SIZE --threads $THREADS --pages small" \
    "likwid_bw $TRIAD4_K $DRAM_SIZE $THREADS"
compare "peak f64 ${THREADS}t vs $PEAK_K" FLOP/s ">= 0.95" \
    "cal_point peak-f64 --threads $THREADS" \
    "likwid_flops $PEAK_K 32kB $THREADS"
compare "peak f64 1t vs $PEAK_K" FLOP/s ">= 0.95" \
    "cal_point peak-f64 --threads 1" \
    "likwid_flops $PEAK_K 32kB 1"
DRAM_BYTES=$(jq '.sections.latency.dram_bytes' "$OUT/levels.json")
for pages in small huge; do
    compare "DRAM latency $(si "$DRAM_BYTES" B) $pages pages vs chase.c" s "0.95..1.05" \
        "cal_point chase --size $DRAM_BYTES --pages $pages" \
        "$OUT/chase $DRAM_BYTES $pages | awk '{ print \$1 * 1e-9 }'"
done
compare "L1 latency 16 KiB vs chase.c" s "0.90..1.10" \
    "cal_point chase --size 16384 --pages small" \
    "$OUT/chase 16384 small | awk '{ print \$1 * 1e-9 }'"
for depth in 16 32 64; do
    compare "span $depth steps per element vs horner.c" s "0.90..1.10" \
        "cal_point span --depth $depth" \
        "taskset -c 0 $OUT/horner-$depth | awk '{ print \$1 * 1e-9 }'"
done

echo
for mode in --quick full; do
    args=(--out "$OUT/p.json")
    [ "$mode" = --quick ] && args+=(--quick)
    /usr/bin/time -v "$CAL" "${args[@]}" >/dev/null 2>"$OUT/time"
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$OUT/time")
    rss=$(awk -F': ' '/Maximum resident set size/ { print $2 * 1024 }' "$OUT/time")
    ws=$(jq '[(.sections.latency.points[].size_bytes), .sections.stream.dram_bytes, .sections.mlp.dram_bytes] | map(select(. != null)) | max' "$OUT/p.json")
    # The STREAM windows hold one thread's and all threads' copies of the
    # DRAM working set at once, for the knee, when the budget (a quarter
    # of the RAM by default) has room for both.
    held=$(jq --argjson threads "$THREADS" --argjson ram "$(awk '/MemTotal/ { print $2 * 1024 }' /proc/meminfo)" \
        '.sections.stream.dram_bytes as $d | if $d != null and $threads > 1 and 2 * $d <= $ram / 4 then 2 * $d else 0 end' "$OUT/p.json")
    held=$(awk -v a="$ws" -v b="$held" 'BEGIN { print (a > b) ? a : b }')
    limit=$([ "$mode" = --quick ] && echo 15 || echo 90)
    printf 'calibrate %-8s wall %6.1f s (target <= %s s); peak RSS %s = %.3f x the largest working set %s, %.3f x the most held at once %s (target <= 1.10)\n' \
        "$mode" "$wall" "$limit" "$(si "$rss" B)" "$(awk -v r="$rss" -v w="$ws" 'BEGIN { print r / w }')" "$(si "$ws" B)" \
        "$(awk -v r="$rss" -v w="$held" 'BEGIN { print r / w }')" "$(si "$held" B)"
done

echo
repeatability
