#!/usr/bin/env bash
# Model accuracy and kernel speed of `predict run` on this machine.
#
# Each round calibrates a fresh profile and runs every kernel against it at
# once, so that the profile and the kernels see the machine in the same
# state (on a shared VM the memory bandwidth drifts by tens of per cent over
# minutes). Over ROUNDS rounds (default 3) it prints
#   - per kernel variant, the median of its rounds' rel_error, and the median
#     and maximum of those over all variants (targets: median <= 15%, none
#     beyond 35%), the same for the paired prediction (the profile's roofs
#     scaled by the figures `predict run` re-measures beside each
#     variant's timings), the rounds whose machine changed since calibrate, and the
#     variants left unpredicted with their reason;
#   - the bandwidth-bound kernels' bytes/s against the profile's STREAM
#     bandwidth for the same mix, level and threads (target >= 0.9), and the
#     matrix multiply's FLOP/s against the profile's f64 FMA peak (target
#     >= 0.5);
#   - the data-parallel binning against the same counting sort in plain C
#     (scripts/binning.c, gcc -O3 -march=native -fopenmp), run right after
#     the kernels in each round;
#   - the MPI ghost-row stencil under `mpirun -np 2` at N = 256..8192, all
#     three variants, each for predict run's own sweep count (about a
#     second of sweeps after a warm-up), against the round's profile with the network of
#     data/profiles/dev-vm.json (a full calibrate does not measure the
#     network):
#     per N and variant the median error over the rounds, profile-only and
#     paired (the STREAM points its sweep leans on re-measured by both
#     ranks between its sweeps; target: within 15%);
#   - the wall time of a default `predict run` (target <= 60 s).
# With --save, the profiles and records of every round are kept in
# data/measurements/accuracy/FAMILY/ (FAMILY as scripts/env.sh's
# cpu_family names this CPU, e.g. intel-avx512; the data behind the
# README's accuracy table of that family)
# and the last round's profile becomes data/profile.json and
# data/profiles/dev-vm.json.
# Not a test: the figures depend on the machine and how busy it is.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
save=false
[ "${1:-}" = "--save" ] && save=true
rounds=${ROUNDS:-3}
cargo build --release -q -p calibrate -p predict
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
binning_c=$tmp/binning
gcc -O3 -march=native -fopenmp scripts/binning.c -o "$binning_c"
if $save; then
  work=data/measurements/accuracy/$(cpu_family)
  rm -rf "$work" && mkdir -p "$work"
else
  work=$tmp/work
  mkdir -p "$work"
fi

# keep_network NEW OLD OUT...: NEW with the MPI ping-pong of OLD when NEW
# has none (a full calibrate run does not measure the network), written
# atomically to every OUT.
keep_network() {
  python3 - "$@" <<'PY'
import json, os, sys
new = json.load(open(sys.argv[1]))
old = json.load(open(sys.argv[2])) if os.path.exists(sys.argv[2]) else {}
if new.get("network") is None and old.get("network") is not None:
    new["network"] = old["network"]
    for k in ("mpi_t0_s", "mpi_bandwidth_Bps"):
        new["summary"][k] = old["summary"].get(k)
    if "pingpong" in old.get("sections", {}):
        new["sections"]["pingpong"] = old["sections"]["pingpong"]
for out in sys.argv[3:]:
    with open(out + ".tmp", "w") as f:
        json.dump(new, f, indent=2)
        f.write("\n")
    os.replace(out + ".tmp", out)
PY
}

ghost_n="256 512 1024 2048 4096 8192"
walls=()
for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds: calibrate, then predict run, then the ghost stencil" >&2
  target/release/calibrate --out "$work/profile-$r.json" > /dev/null
  start=$(date +%s.%N)
  target/release/predict run --profile "$work/profile-$r.json" --json --no-record > "$work/records-$r.json"
  end=$(date +%s.%N)
  walls+=("$start:$end")
  OMP_NUM_THREADS=$(nproc) OMP_PROC_BIND=close OMP_PLACES=cores "$binning_c" $((1 << 20)) > "$work/binning-c-$r.txt"
  keep_network "$work/profile-$r.json" data/profiles/dev-vm.json "$work/profile-net-$r.json"
  for n in $ghost_n; do
    # predict run's own sweep count: about a second of sweeps per variant
    # after its warm-up, at least 100.
    mpirun -np 2 target/release/predict run --kernel ghost-stencil --n "$n" \
      --variant all --profile "$work/profile-net-$r.json" --json --no-record > "$work/ghost-$r-$n.json"
  done
done
if $save; then
  keep_network "$work/profile-$rounds.json" data/profiles/dev-vm.json data/profile.json data/profiles/dev-vm.json
fi

python3 - "$work" "$rounds" "${walls[@]}" <<'PY'
import json, statistics, sys
sys.path.insert(0, "scripts")
from accuracy_table import mark, median_round
work, rounds = sys.argv[1], int(sys.argv[2])
walls = [float(w.split(":")[1]) - float(w.split(":")[0]) for w in sys.argv[3:]]
runs = [json.load(open(f"{work}/records-{r}.json")) for r in range(1, rounds + 1)]
key = lambda r: (r["kernel"], r["variant"], r["threads"])
main = [r for r in runs[-1] if r["rel_error"] is not None and "+" not in r["variant"]]
by = {}
for i, recs in enumerate(runs):
    for r in recs:
        r["round"] = i
        if r["rel_error"] is not None:
            by.setdefault(key(r), []).append(r)
print("the round with the median error of each variant, every round's error, and the paired prediction's")
print("(the profile's roofs scaled by the figures re-measured beside the variant's timings; * = a round whose machine changed;")
print(" a = the threads ran apart, m = they had moved, against the placements of the profile's DRAM bursts;")
print(" s = its time fell within the two states its prediction named):")
print(f"{'kernel':<14} {'variant':<22} {'thr':>3} {'measured':>10} {'predicted':>10} {'error':>7}  {'rounds':<24} {'paired':>7}  {'rounds':<24} binding")
errs, paired_errs, changed = [], [], 0
def summary(rs):
    """The round whose error is the median (the lower middle one for an even
    count), every round's error with its marks (`mark`), and the paired
    median error (None without pairs) with every round's, shown."""
    mid = median_round(rs, "rel_error")
    each = " ".join(f"{100*x['rel_error']:+.0f}" + mark(x) for x in rs)
    prs = [x for x in rs if x.get("paired_rel_error") is not None]
    pe = median_round(prs, "paired_rel_error")["paired_rel_error"] if prs else None
    peach = " ".join(f"{100*x['paired_rel_error']:+.0f}" for x in prs)
    pshow = f"{100*pe:>+6.0f}%" if pe is not None else "      -"
    return mid, each, pe, peach, pshow
for r in main:
    rs = by[key(r)]
    mid, each, pe, peach, pshow = summary(rs)
    e, m, p = mid["rel_error"], mid["measured_s"], mid["predicted_s"]
    errs.append(abs(e))
    changed += sum(1 for x in rs if x.get("machine_changed"))
    if pe is not None:
        paired_errs.append(abs(pe))
    print(f"{r['kernel']:<14} {r['variant']:<22} {r['threads']:>3} {m*1e3:>8.3f}ms {p*1e3:>8.3f}ms "
          f"{100*e:>+6.0f}%  {each:<24} {pshow}  {peach:<24} {r['binding']}")
if errs:
    print(f"\nmodel accuracy over {len(errs)} variants, {rounds} rounds: median |rel_error| = "
          f"{100*statistics.median(errs):.1f}% (target <= 15%), max = {100*max(errs):.1f}% (target <= 35%)")
if paired_errs:
    print(f"paired prediction over {len(paired_errs)} variants: median |rel_error| = "
          f"{100*statistics.median(paired_errs):.1f}%, max = {100*max(paired_errs):.1f}%; "
          f"{changed} of {len(errs) * rounds} variant-rounds found the machine changed since calibrate (> 15%)")
unpredicted = sorted({(r["kernel"], r["variant"], r["no_prediction"]) for r in runs[-1] if r.get("no_prediction")})
for k, v, why in unpredicted:
    print(f"  {k} {v}: {why}")
profiles = [json.load(open(f"{work}/profile-{r}.json")) for r in range(1, rounds + 1)]
def peak(profile, threads):
    """The profile's f64 peak (register kernels, not the dgemm ceiling)."""
    return max(c["flops"]["point"] for c in profile["ceilings"]
               if c["precision"] == "f64" and c["threads"] == threads
               and c.get("kernel", "registers") == "registers")
print("\nkernel speed against the profile (median of the rounds):")
for r in main:
    rs = by[key(r)]
    if r["binding"].startswith("memory") and "memory_s" in r:
        # Bytes (with write-allocate) over the STREAM bandwidth of this mix
        # and level, against the measured time.
        ratio = statistics.median(x["memory_s"] / x["measured_s"] for x in rs)
        line = f"  {r['kernel']:<14} {r['variant']:<22} {r['threads']} thr: {ratio:.2f}x of the profile's bandwidth (target >= 0.9)"
        if r["binding"] != "memory bandwidth":
            bound = statistics.median(x["predicted_s"] / x["measured_s"] for x in rs)
            line += f"; {bound:.2f}x of the model's bound ({r['binding']})"
        print(line)
    elif r["kernel"] == "matmul":
        ratio = statistics.median(x["flops"] / x["measured_s"] / peak(profiles[x["round"]], x["threads"])
                                  for x in rs)
        print(f"  {r['kernel']:<14} {r['variant']:<22} {r['threads']} thr: {ratio:.2f}x of the profile's f64 peak (target >= 0.5)")
dp = next((r for r in main if r["kernel"] == "binning" and r["variant"] == "data-parallel"), None)
if dp:
    pairs = sorted(((x["measured_s"], float(open(f"{work}/binning-c-{x['round'] + 1}.txt").read()))
                    for x in by[key(dp)]), key=lambda p: p[1] / p[0])
    rust, c = pairs[(len(pairs) - 1) // 2]
    print(f"  binning        data-parallel vs C counting sort: {c / rust:.2f}x the C speed "
          f"({rust * 1e3:.3f} ms against {c * 1e3:.3f} ms, the round with the median ratio)")
import glob
ghost = {}
for f in sorted(glob.glob(f"{work}/ghost-*-*.json")):
    for x in json.load(open(f)):
        if x.get("rel_error") is not None:
            ghost.setdefault((x["size"], x["variant"]), []).append(x)
if ghost:
    print("\nMPI ghost-row stencil, mpirun -np 2 (median round of each, profile-only and paired; * = a round")
    print("whose machine changed; target: within 15%):")
    print(f"  {'N':>5} {'variant':<12} {'measured':>10} {'predicted':>10} {'error':>7}  {'rounds':<22} {'paired':>7}  {'rounds':<22} binding")
    gerrs, gpaired = [], []
    for (n, v), xs in sorted(ghost.items()):
        mid, each, pe, peach, pshow = summary(xs)
        gerrs.append(abs(mid["rel_error"]))
        if pe is not None:
            gpaired.append(abs(pe))
        print(f"  {n:>5} {v:<12} {mid['measured_s']*1e3:>8.3f}ms {mid['predicted_s']*1e3:>8.3f}ms "
              f"{100*mid['rel_error']:>+6.0f}%  {each:<22} {pshow}  {peach:<22} {mid['binding']}")
    print(f"  {len(gerrs)} cases: median |error| {100*statistics.median(gerrs):.1f}%, largest {100*max(gerrs):.1f}% "
          f"({sum(e > 0.15 for e in gerrs)} beyond 15%)")
    if gpaired:
        print(f"  paired: median |error| {100*statistics.median(gpaired):.1f}%, largest {100*max(gpaired):.1f}% "
              f"({sum(e > 0.15 for e in gpaired)} beyond 15%)")
print(f"\ndefault `predict run` wall time: {max(walls):.1f} s at most over {rounds} rounds (target <= 60 s)")
PY
