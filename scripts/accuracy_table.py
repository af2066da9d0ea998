#!/usr/bin/env python3
"""The README's accuracy tables, rendered from the data behind them.

`scripts/bench_predict.sh --save` keeps each round's records in
data/measurements/accuracy/FAMILY/ (records-R.json for the thread kernels,
ghost-R-N.json for the MPI ghost stencil). This script renders, per family,

  - the thread kernels' table rows: per variant, the round with the median
    error, every round's error with its marks (`mark`), the paired
    prediction's median error and the binding;
  - the ghost stencil's cells: per N, the range over its three variants
    of each variant's median error, profile-only and paired;
  - the rows of `predict kernel`'s accuracy on loops the toolkit does not
    contain (`scripts/bench_kernel.sh --save`,
    data/measurements/kernel-accuracy/FAMILY.csv): per loop, each size and
    thread count's median error over the rounds, profile-only / paired.

    scripts/accuracy_table.py [FAMILY ...]       print them, to paste
    scripts/accuracy_table.py --check README.md  exit 1 unless the README
                                                 holds every family's rows

The watermark variants (`+` in their name) are left out, as in the
README. Standard library only: the test command runs it before any
virtual environment exists.
"""

import csv
import json
import os
import re
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ACCURACY = os.path.join(ROOT, "data", "measurements", "accuracy")
LOOP_ACCURACY = os.path.join(ROOT, "data", "measurements", "kernel-accuracy")
GHOST_SIZES = (256, 512, 1024, 2048, 4096, 8192)
# The stencil variants as the README names them.
NAMES = {
    "row-major@2097152": "row-major (8 MiB rows)",
    "tiled@2097152": "tiled (8 MiB rows)",
    "row-major@4096": "row-major (4096×4096)",
    "tiled@4096": "tiled (4096×4096)",
}
MARKS = {"apart": "a", "moved": "m"}
# The loops of scripts/loops.c as the README names them.
LOOP_NAMES = {
    "sum-chain": "sum with chain",
    "sum": "sum (vector accumulator)",
    "axpy": "axpy (update)",
    "stride8": "stride 64 B",
    "stride64": "stride 512 B",
    "gather": "random gather",
    "tiled": "axpy in 1 KiB tiles",
}


def pct(x):
    """A relative error as a signed whole percentage, typographic minus."""
    return f"{100 * x:+.0f}%".replace("-", "−")


def duration(seconds):
    """Three significant digits in ms, or in µs below a millisecond."""
    value, unit = (seconds * 1e3, "ms") if seconds >= 1e-3 else (seconds * 1e6, "µs")
    return f"{value:.3g} {unit}"


def moved(r):
    """The marks of a round whose machine moved against its profile: * its
    machine changed between calibrate and the kernel, a or m its threads
    ran apart from, or had moved against, the profile's DRAM bursts."""
    return ("*" if r.get("machine_changed") else "") + MARKS.get(r.get("placement"), "")


def mark(r):
    """A round's marks: `moved`, then s when its time fell within the two
    states its prediction named (a lock's hand-offs, the dgemm ceiling's
    bursts, the DRAM bursts, or all and none of the last cache)."""
    states = r.get("predicted_states_s")
    within = states is not None and min(states) <= r["measured_s"] <= max(states)
    return moved(r) + ("s" if within else "")


def median_round(rounds, key):
    """The round whose `key` is the median (the lower middle one for an
    even count), as `scripts/bench_predict.sh` picks it."""
    return sorted(rounds, key=lambda r: r[key])[(len(rounds) - 1) // 2]


def rounds_of(family, pattern):
    """The rounds' files of `family` matching `pattern` (R for the round
    number, as in "records-R.json"), in round order."""
    rx = re.compile(re.escape(pattern).replace("R", r"(\d+)"))
    folder = os.path.join(ACCURACY, family)
    found = [(rx.fullmatch(f), f) for f in os.listdir(folder)] if os.path.isdir(folder) else []
    rounds = sorted((int(m.group(1)), f) for m, f in found if m)
    return [os.path.join(folder, f) for _, f in rounds]


def kernel_rows(family):
    """The thread kernels' table rows of `family`."""
    by, order = {}, []
    for path in rounds_of(family, "records-R.json"):
        for r in json.load(open(path)):
            if r.get("rel_error") is None or "+" in r["variant"]:
                continue
            key = (r["kernel"], r["variant"], r["threads"])
            if key not in by:
                order.append(key)
            by.setdefault(key, []).append(r)
    rows = []
    for kernel, variant, threads in order:
        rs = by[(kernel, variant, threads)]
        mid = median_round(rs, "rel_error")
        each = " / ".join(pct(r["rel_error"]) + mark(r) for r in rs)
        paired = [r["paired_rel_error"] for r in rs if r.get("paired_rel_error") is not None]
        paired_cell = pct(statistics.median(paired)) if paired else "-"
        rows.append(
            f"| {kernel} | {NAMES.get(variant, variant)}, {threads} thr "
            f"| {duration(mid['measured_s'])} | {duration(mid['predicted_s'])} "
            f"| {pct(mid['rel_error'])} | {each} | {paired_cell} | {mid['binding']} |"
        )
    return rows


def ghost_cells(family):
    """The ghost stencil's cells of `family`, profile-only and paired: per
    N, "lo to hi" over the variants' median errors; `None` for a kind no
    round has."""
    out = {}
    for key in ("rel_error", "paired_rel_error"):
        cells = []
        for n in GHOST_SIZES:
            per = {}
            for path in rounds_of(family, f"ghost-R-{n}.json"):
                for x in json.load(open(path)):
                    if x.get(key) is not None:
                        per.setdefault(x["variant"], []).append(x[key])
            if not per:
                break
            meds = [statistics.median(v) for v in per.values()]
            cells.append(f"{pct(min(meds))[:-1]} to {pct(max(meds))}")
        out[key] = " | ".join(cells) if len(cells) == len(GHOST_SIZES) else None
    return out


def loop_rows(family):
    """The README's rows of `predict kernel`'s accuracy on the loops of
    scripts/loops.c for `family` (empty without its CSV)."""
    path = os.path.join(LOOP_ACCURACY, f"{family}.csv")
    if not os.path.exists(path):
        return []
    cases, loops, columns = {}, [], []
    for r in csv.DictReader(open(path, encoding="utf-8")):
        column = (r["size"], r["threads"])
        if r["loop"] not in loops:
            loops.append(r["loop"])
        if column not in columns:
            columns.append(column)
        cases.setdefault((r["loop"], column), []).append(r)
    rows = []
    for loop in loops:
        cells = []
        for column in columns:
            rs = cases.get((loop, column), [])
            if not rs:
                cells.append("-")
                continue
            own = statistics.median(float(r["rel_error"]) for r in rs)
            paired = statistics.median(float(r["paired_rel_error"]) for r in rs)
            cells.append(f"{pct(own)} / {pct(paired)}")
        rows.append(f"| {LOOP_NAMES.get(loop, loop)} | " + " | ".join(cells) + " |")
    return rows


def families():
    """Every family with saved records."""
    return sorted(
        f for f in os.listdir(ACCURACY) if rounds_of(f, "records-R.json")
    )


def loop_families():
    """Every family with a saved run of scripts/bench_kernel.sh."""
    if not os.path.isdir(LOOP_ACCURACY):
        return []
    return sorted(f[:-4] for f in os.listdir(LOOP_ACCURACY) if f.endswith(".csv"))


def check(readme):
    """The rows and cells of every family missing from the README's lines."""
    lines = open(readme, encoding="utf-8").read().splitlines()
    missing = []
    for family in families():
        missing += [(family, row) for row in kernel_rows(family) if row not in lines]
        for key, cells in ghost_cells(family).items():
            if cells and not any(l.startswith("| ") and l.endswith(f"| {cells} |") for l in lines):
                missing.append((family, f"ghost stencil, {key}: | {cells} |"))
    for family in loop_families():
        missing += [(family, row) for row in loop_rows(family) if row not in lines]
    return missing


def main(args):
    if args[:1] == ["--check"]:
        if len(args) != 2:
            sys.exit("usage: accuracy_table.py --check README.md")
        missing = check(args[1])
        for family, row in missing:
            print(f"{args[1]} lacks the {family} row rendered from its data: {row}", file=sys.stderr)
        sys.exit(1 if missing else 0)
    for family in args or families():
        if not os.path.isdir(os.path.join(ACCURACY, family)):
            sys.exit(f"no accuracy data for {family} under data/measurements/accuracy/")
        print(f"{family}:")
        print("\n".join(kernel_rows(family)))
        for key, cells in ghost_cells(family).items():
            if cells:
                print(f"ghost stencil, {key}: | {cells} |")
        rows = loop_rows(family)
        if rows:
            print("predict kernel on scripts/loops.c:")
            print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
