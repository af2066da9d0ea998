"""Functions the notebooks share.

They find the repository and the ``predict`` binary, run ``predict`` and hand
back its JSON or the CSV it wrote, load machine profiles and kernel records,
and format numbers with SI prefixes. Nothing here computes a model: every
figure comes from ``predict`` or from the files under ``data/``.

Environment variables:

* ``PREDICT_BIN``: the ``predict`` binary (default:
  ``<repo>/target/release/predict``).
* ``PERFMODEL_ROOT``: the repository root (default: found by walking up from
  the working directory and from this file to the folder holding
  ``Cargo.toml`` and ``data/``).
* ``PERFMODEL_PROFILE``: the machine profile the notebooks read (default:
  ``data/profile.json``, which ``calibrate`` writes for this machine; when it
  does not exist, the sample ``data/profiles/dev-vm.json``, with a warning).
* ``NOTEBOOK_RESULTS``: where CSV files and figures go (default:
  ``<repo>/results/notebooks``; ``results/`` is not tracked by git).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
from pathlib import Path

__all__ = [
    "ROOT",
    "PredictError",
    "repo_root",
    "predict_bin",
    "results_dir",
    "rel",
    "predict",
    "predict_json",
    "predict_csv",
    "eval_model",
    "profile_path",
    "load_profile",
    "load_network",
    "load_records",
    "measured_pair",
    "latest",
    "knee_text",
    "interval",
    "si",
    "save_figure",
]


class PredictError(RuntimeError):
    """``predict`` could not be found or exited with an error."""


def _is_root(path: Path) -> bool:
    return (path / "Cargo.toml").is_file() and (path / "data").is_dir()


def repo_root() -> Path:
    """The repository root: ``PERFMODEL_ROOT``, else the first folder above
    the working directory or above this file that holds ``Cargo.toml`` and
    ``data/``."""
    env = os.environ.get("PERFMODEL_ROOT")
    if env:
        path = Path(env).expanduser().resolve()
        if not _is_root(path):
            raise FileNotFoundError(
                f"PERFMODEL_ROOT={env} does not hold Cargo.toml and data/"
            )
        return path
    for start in (Path.cwd().resolve(), Path(__file__).resolve().parent):
        for path in (start, *start.parents):
            if _is_root(path):
                return path
    raise FileNotFoundError(
        "cannot find the repository root (a folder with Cargo.toml and data/); "
        "run from inside the repository or set PERFMODEL_ROOT"
    )


ROOT = repo_root()


def rel(path) -> str:
    """``path`` relative to the repository root when it lies inside it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def predict_bin() -> Path:
    """The ``predict`` binary: ``PREDICT_BIN``, else the release build."""
    env = os.environ.get("PREDICT_BIN")
    if env:
        path = Path(env).expanduser()
        if not path.is_absolute():
            path = ROOT / path
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise PredictError(f"PREDICT_BIN={env} is not an executable file")
        return path
    path = ROOT / "target" / "release" / "predict"
    if path.is_file() and os.access(path, os.X_OK):
        return path
    raise PredictError(
        f"no predict binary at {rel(path)}: run `cargo build --release` in the "
        "repository root, or point PREDICT_BIN at the binary"
    )


def results_dir(sub: str | None = None) -> Path:
    """The folder for CSV files and figures (created on first use)."""
    env = os.environ.get("NOTEBOOK_RESULTS")
    base = Path(env).expanduser() if env else ROOT / "results" / "notebooks"
    if not base.is_absolute():
        base = ROOT / base
    path = base / sub if sub else base
    path.mkdir(parents=True, exist_ok=True)
    return path


def _args(args) -> list[str]:
    return [str(a) for a in args]


def predict(*args, check: bool = True) -> str:
    """Run ``predict ARGS...`` in the repository root and return its standard
    output. Relative paths in ARGS are relative to the repository root."""
    cmd = [str(predict_bin()), *_args(args)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if check and proc.returncode != 0:
        shown = " ".join(shlex.quote(a) for a in ["predict", *_args(args)])
        raise PredictError(
            f"`{shown}` exited with status {proc.returncode}: "
            f"{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc.stdout


def predict_json(*args):
    """Run ``predict ARGS... --json`` and return the parsed document."""
    return json.loads(predict(*args, "--json"))


def predict_csv(*args, name: str) -> Path:
    """Run ``predict ARGS... --csv FILE`` with FILE = ``<results>/csv/NAME``
    and return FILE's path."""
    path = results_dir("csv") / name
    predict(*args, "--csv", path)
    if not path.is_file():
        raise PredictError(f"predict did not write {rel(path)}")
    return path


def eval_model(model: str, **options):
    """``predict eval --json MODEL --option value ...`` as a dict.

    Keyword names turn into options (``t0="2us"`` gives ``--t0 2us``,
    ``serial_fraction=0.05`` gives ``--serial-fraction 0.05``); ``True``
    gives a bare flag, ``None`` and ``False`` leave the option out."""
    args = ["eval", "--json", model]
    for key, value in options.items():
        if value is None or value is False:
            continue
        args.append("--" + key.replace("_", "-"))
        if value is not True:
            args.append(value)
    return json.loads(predict(*args))


SAMPLE_PROFILE = "data/profiles/dev-vm.json"


def profile_path(path=None) -> Path:
    """The profile to read: PATH, else ``PERFMODEL_PROFILE``, else
    ``data/profile.json`` (relative paths are from the repository root).
    ``data/profile.json`` is not tracked by git: without it (no
    ``calibrate`` run yet) the sample profile is read instead, and a warning
    says so."""
    chosen = path or os.environ.get("PERFMODEL_PROFILE")
    path = Path(chosen or "data/profile.json")
    path = path if path.is_absolute() else ROOT / path
    if not chosen and not path.exists():
        import warnings

        warnings.warn(
            f"no data/profile.json (run `calibrate` to measure this machine): "
            f"reading the sample profile {SAMPLE_PROFILE}, measured on another machine"
        )
        path = ROOT / SAMPLE_PROFILE
    return path


def load_profile(path=None) -> dict:
    """A machine profile (``calibrate``'s JSON) as a dict."""
    with open(profile_path(path), encoding="utf-8") as f:
        return json.load(f)


def load_network(path) -> dict:
    """The ``network`` section of a profile, or a file that is only a
    network section (what-if files)."""
    path = Path(path)
    with open(path if path.is_absolute() else ROOT / path, encoding="utf-8") as f:
        doc = json.load(f)
    return doc if "regimes" in doc else doc["network"]


def load_records(path="data/measurements/records.jsonl"):
    """Kernel records of ``predict run`` as a pandas DataFrame, with the
    interval split into ``measured_lo_s`` and ``measured_hi_s``: JSON lines
    (the log ``predict run`` appends to), or a ``.json`` file holding one
    list of them (what ``predict run --json`` prints)."""
    import pandas as pd

    path = Path(path)
    path = path if path.is_absolute() else ROOT / path
    with open(path, encoding="utf-8") as f:
        if path.suffix == ".json":
            rows = json.load(f)
        else:
            rows = [json.loads(line) for line in f if line.strip()]
    df = pd.DataFrame(rows)
    ci = df["measured_ci_s"].apply(lambda v: v if isinstance(v, list) else [None, None])
    df["measured_lo_s"] = ci.str[0]
    df["measured_hi_s"] = ci.str[1]
    return df


def _same_file(named, resolved: Path) -> bool:
    """Whether the path `named` (relative to the repository root) is the
    file `resolved`, an already resolved path."""
    if not named:
        return False
    path = Path(named)
    path = path if path.is_absolute() else ROOT / path
    return path.resolve() == resolved


def _newest_round():
    """The profile and records of the newest round that
    ``scripts/bench_predict.sh --save`` stored, by calibration date."""
    rounds = []
    for prof in (ROOT / "data" / "measurements" / "accuracy").glob("*/profile-[0-9]*.json"):
        recs = prof.with_name(prof.name.replace("profile-", "records-"))
        if recs.exists():
            with open(prof, encoding="utf-8") as f:
                rounds.append((json.load(f)["provenance"]["date"], prof, recs))
    if not rounds:
        raise FileNotFoundError("no round under data/measurements/accuracy/ to read instead")
    _, prof, recs = max(rounds)
    return prof, recs


def measured_pair():
    """``(profile path, records path, records)``: a profile and the kernel
    records predicted against it, so that roofs and points, predictions
    and the figures they read come from one calibration.

    The profile of :func:`profile_path` with the records of
    ``data/measurements/records.jsonl`` that read it (that name its file
    and were made after its calibration), written to
    ``results/notebooks/records.jsonl`` for ``predict`` to read. When no
    record read it (no ``predict run`` since that calibration, or a fresh
    clone reading the sample profile), the newest round of
    ``scripts/bench_predict.sh --save`` (``data/measurements/accuracy/``),
    whose profile and records belong together, with a warning."""
    import warnings

    profile = profile_path()
    with open(profile, encoding="utf-8") as f:
        calibrated = json.load(f)["provenance"]["date"]
    log = ROOT / "data" / "measurements" / "records.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []

    resolved = Path(profile).resolve()

    def read_it(line):
        # The same file, and made after this calibration of it (RFC 3339
        # times in UTC order as text).
        p = json.loads(line).get("provenance", {})
        return _same_file(p.get("profile"), resolved) and p.get("date", "") >= calibrated

    mine = [line for line in lines if line.strip() and read_it(line)]
    if mine:
        out = results_dir() / "records.jsonl"
        out.write_text("\n".join(mine) + "\n", encoding="utf-8")
        return profile, out, load_records(out)
    prof, recs = _newest_round()
    warnings.warn(
        f"no record of {rel(log)} was predicted against {rel(profile)}: reading the newest "
        f"accuracy round instead, {rel(prof)} with {rel(recs)}")
    return prof, recs, load_records(recs)


def latest(records, kernel):
    """The most recent record of each variant of ``kernel``, indexed by
    variant. ``records.jsonl`` is append-only, so a variant measured in
    several runs (or at several thread counts) has several lines; the last
    one is the newest."""
    rows = records[records.kernel == kernel]
    return rows.groupby("variant", sort=False).tail(1).set_index("variant")


def knee_text(knee, with_range=True):
    """A knee of ``predict scaling`` as "P (lo – hi)", or "P" alone; a
    bound beyond the range considered (``None`` in the JSON) reads
    "beyond P_max"."""
    if not knee or knee.get("point") is None:
        return "beyond P_max"
    show = lambda v: "beyond P_max" if v is None else f"{v:.0f}"
    if not with_range:
        return show(knee["point"])
    return f"{show(knee['point'])} ({show(knee['lo'])} – {show(knee['hi'])})"


def interval(value):
    """(point, lo, hi) of a profile figure: ``{point, lo, hi}``, a sample
    summary ``{median, ci_lo, ci_hi}``, or a bare number."""
    if value is None:
        return (math.nan, math.nan, math.nan)
    if isinstance(value, (int, float)):
        return (float(value), float(value), float(value))
    if "point" in value:
        return (value["point"], value.get("lo", value["point"]), value.get("hi", value["point"]))
    if "median" in value:
        return (value["median"], value.get("ci_lo", value["median"]), value.get("ci_hi", value["median"]))
    raise ValueError(f"not an interval: {value!r}")


_PREFIXES = [
    (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""),
    (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"),
]


def si(value, unit: str = "", digits: int = 3) -> str:
    """``value`` with an SI prefix and DIGITS significant digits, e.g.
    ``si(7.12e-6, "s")`` gives ``'7.12 µs'``."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if value == 0:
        return f"0 {unit}".strip()
    mag = abs(value)
    for scale, prefix in _PREFIXES:
        if mag >= scale * 0.9995:
            break
    scaled = value / scale
    text = f"{scaled:.{digits}g}"
    if "e" in text:
        text = f"{scaled:.{digits - 1}f}"
    return f"{text} {prefix}{unit}".strip()


def save_figure(fig, name: str) -> Path:
    """Save FIG as ``<results>/NAME.png`` (150 dpi) and return the path."""
    path = results_dir() / f"{name}.png"
    fig.savefig(path, dpi=150, bbox_inches="tight")
    return path
